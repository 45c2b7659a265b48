"""Float identities in symbolic_simple keep IEEE semantics: checked by evaluating both sides
on the special values (NaN, +-inf, +-0.0) and ordinary ones. z3 doesn't model these floats,
so evaluation is the proof here: each identity is exact, value by value."""

from __future__ import annotations

import math

import pytest
from fusegrad.uop import UOp, dtypes, sym_infer

# values of float32 (a Variable holds values of its dtype)
SPECIAL = [
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    1.5,
    -2.25,
    3.4028234663852886e38,
    1.401298464324817e-45,
]
f = UOp.variable("f", -math.inf, math.inf, dtypes.float32)


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _agree(e: UOp, s: UOp) -> None:
    for v in SPECIAL:
        assert _same(sym_infer(e, {"f": v}), sym_infer(s, {"f": v})), (e.render(False), v)


@pytest.mark.parametrize(
    ("build", "folds_to_f"),
    [
        (lambda: f * 1.0, True),  # x*1 is exact
        (lambda: f + (-0.0), True),  # x + -0.0 is x, even for -0.0
        (lambda: f - 0.0, True),  # x - 0.0 is x, even for -0.0
        (lambda: f / 1.0, True),
        (lambda: f.__neg__().__neg__(), True),  # -(-f)
        (lambda: f.maximum(f), True),
        (lambda: (f < 1.0).where(f, f), True),
        (lambda: f * 0.0, False),  # NaN*0 and inf*0 are NaN, -1*0 is -0.0
        (lambda: f + 0.0, False),  # -0.0 + 0.0 is +0.0
        (lambda: f - (-0.0), False),
        (lambda: f - f, False),  # inf - inf is NaN
        (lambda: f + f, False),  # stays a sum: no term collection for floats
    ],
    ids=["mul1", "add-neg0", "sub0", "div1", "negneg", "max-self", "where-same", "mul0",
         "add0", "sub-neg0", "sub-self", "add-self"],
)  # fmt: skip
def test_float_identity_keeps_ieee_semantics(build: object, folds_to_f: bool) -> None:
    e = build()  # type: ignore[operator]
    s = e.simplify()
    assert (s is f) == folds_to_f
    _agree(e, s)


def test_float_comparisons_are_not_folded_when_nan_is_possible() -> None:
    # f's bounds say nothing about NaN: f != f is True for NaN, f == f False
    assert f.ne(f).simplify() is not UOp.const(False, dtypes.bool)
    assert f.eq(f).simplify() is not UOp.const(True, dtypes.bool)
    assert f.__lt__(f).simplify() is UOp.const(False, dtypes.bool)  # NaN < NaN is False too


def test_float_constants_fold_with_the_dtype_rounding() -> None:
    third = UOp.const(1.0, dtypes.float32) / UOp.const(3.0, dtypes.float32)
    assert third.simplify().arg == 0.3333333432674408  # float32, not float64
    big = UOp.const(60000.0, dtypes.float16) * UOp.const(2.0, dtypes.float16)
    assert big.simplify().arg == math.inf
    nan = UOp.const(math.inf, dtypes.float32) - UOp.const(math.inf, dtypes.float32)
    assert math.isnan(nan.simplify().arg)


def test_float_max_chain_folds_constants() -> None:
    e = f.maximum(1.0).maximum(2.0)
    assert e.simplify() is f.maximum(2.0)
    _agree(e, e.simplify())
