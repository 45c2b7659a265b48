"""``fusegrad.uop.weak``: weak-dtype commitment as a rewrite table.

Python literals stay ``weakint``/``weakfloat`` until something with a concrete dtype meets
them (see ``fusegrad.uop.dtype``). ``pm_cast_weak`` commits what is left: every weak node
becomes the default dtype it stands for (``weakint`` -> ``dtypes.default_int``, ``weakfloat`` ->
``dtypes.default_float``, vectors lane for lane), constants converted exactly as that dtype
stores them.

>>> from fusegrad.uop import UOp, dtypes, graph_rewrite
>>> x = UOp.variable("x", 0, 9)
>>> graph_rewrite(x * 2, pm_cast_weak).dtype
dtypes.int32
"""

from __future__ import annotations

from fusegrad.uop.dtype import Invalid, commit_weak, dtypes
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.uop import UOp

WEAK = (dtypes.weakint, dtypes.weakfloat)


def _commit(x: UOp) -> UOp | None:
    """A weak node in its committed dtype (a constant's value converted to it)."""
    dt = commit_weak(x.dtype)
    if dt is x.dtype:
        return None
    if x.op is Ops.CONST and x.arg is not Invalid:
        return x.replace(dtype=dt, arg=dtypes.as_const(x.arg, dt.scalar()))
    if x.op is Ops.VCONST:
        return x.replace(dtype=dt, arg=tuple(dtypes.as_const(v, dt.scalar()) for v in x.arg))
    return x.replace(dtype=dt)


pm_cast_weak = PatternMatcher(
    [
        (UPat(dtype=WEAK, name="x"), _commit),  # weak dtype -> the default it stands for
    ]
)

__all__ = ["pm_cast_weak"]
