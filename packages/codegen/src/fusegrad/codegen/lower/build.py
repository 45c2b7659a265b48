"""Node builders for the lowering's decompositions: the exact node asked for, with no
constant folding or dtype promotion (what ``UOp``'s operators would add). Comparisons of
vectors give bool vectors of the same width."""

from __future__ import annotations

from fusegrad.uop import Ops, UOp, dtypes


def where(c: UOp, a: UOp, b: UOp) -> UOp:
    """``c ? a : b`` in ``a``'s dtype."""
    return UOp(Ops.WHERE, a.dtype, (c, a, b))


def lt(a: UOp, b: UOp) -> UOp:
    """``a < b``."""
    return UOp(Ops.CMPLT, dtypes.bool.vec(a.dtype.count), (a, b))


def ne(a: UOp, b: UOp) -> UOp:
    """``a != b``."""
    return UOp(Ops.CMPNE, dtypes.bool.vec(a.dtype.count), (a, b))
