"""x < x, x != x and x == x fold to constants with x's lanes (a vector compare folded to a
scalar constant left an OR of a scalar and a vector that LLVM rejected: svd, scatter)."""

from __future__ import annotations

import pytest
from fusegrad.uop import Ops, UOp, dtypes


@pytest.mark.parametrize(
    ("op", "value"), [(Ops.CMPLT, False), (Ops.CMPNE, False), (Ops.CMPEQ, True)]
)
def test_self_compare_of_a_vector_folds_to_a_vector(op: Ops, value: bool) -> None:
    x = UOp.variable("x", 0, 9).broadcast(4)
    out = UOp(op, dtypes.bool.vec(4), (x, x)).simplify()
    assert out.dtype == dtypes.bool.vec(4)
    assert out.op in (Ops.CONST, Ops.VCONST, Ops.VECTORIZE)
    lanes = out.src if out.op is Ops.VECTORIZE else None
    if lanes is not None:
        assert all(s.op is Ops.CONST and s.arg is value for s in lanes)
    else:
        assert out.arg in (value, (value,) * 4)


def test_self_compare_of_a_scalar_stays_scalar() -> None:
    x = UOp.variable("x", 0, 9)
    out = UOp(Ops.CMPLT, dtypes.bool, (x, x)).simplify()
    assert out.op is Ops.CONST and out.dtype is dtypes.bool and out.arg is False
