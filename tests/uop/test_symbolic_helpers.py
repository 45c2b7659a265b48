"""tinygrad.uop.symbolic's helper functions on fusegrad.uop.symbolic: each result checked
against the expression it replaces at every value of its Variables."""

from __future__ import annotations

import importlib
import itertools

import pytest
from fusegrad.uop import Ops, UOp, dtypes, sym_infer

sym = importlib.import_module("fusegrad.uop.symbolic")

VI, VJ, VK = UOp.variable("i", 0, 9), UOp.variable("j", 0, 3), UOp.variable("k", -2, 2)


def _same_everywhere(a: UOp, b: UOp, *vs: UOp) -> None:
    names = [v.arg[0] for v in vs]
    for values in itertools.product(*(range(v.vmin, v.vmax + 1) for v in vs)):
        env = dict(zip(names, values, strict=True))
        assert sym_infer(a, env) == sym_infer(b, env), env


def test_can_lossless_cast() -> None:
    f = sym.can_lossless_cast
    assert (
        f(dtypes.int8, dtypes.int16)
        and f(dtypes.uint8, dtypes.int16)
        and f(dtypes.bool, dtypes.uint8)
    )
    assert not f(dtypes.int8, dtypes.uint16) and not f(dtypes.int32, dtypes.int16)
    assert f(dtypes.int16, dtypes.float32) and f(dtypes.int32, dtypes.float64)
    assert not f(dtypes.int32, dtypes.float32) and not f(dtypes.float32, dtypes.int64)
    assert f(dtypes.float16, dtypes.float32) and not f(dtypes.float16, dtypes.bfloat16)
    assert not f(dtypes.int8, dtypes.bool) and f(dtypes.int32.vec(4), dtypes.int64)


def test_const_arg_and_fold_const_alu() -> None:
    assert sym.const_arg(UOp.const(3, dtypes.int32)) == 3
    assert sym.const_arg(UOp.const(2.5, dtypes.float32).broadcast(2)) == (2.5, 2.5)
    assert sym.const_arg(VI) is None
    add = UOp(Ops.ADD, dtypes.int8, (UOp.const(100, dtypes.int8), UOp.const(100, dtypes.int8)))
    assert sym.fold_const_alu(add) is UOp.const(-56, dtypes.int8)
    assert sym.fold_const_alu(VI + 1) is None and sym.fold_const_alu(VI.cast(dtypes.int8)) is None


@pytest.mark.parametrize(
    ("x", "c", "folds"),
    [
        (VI * 4 + VJ, 8, True),
        (VI * 6 + VJ * 2, 12, True),
        (VI * 4 + VJ, 9, False),  # 9 shares no factor with 4
        (VI * 4 + VK, 8, False),  # k can be negative: the rest leaves [0, 4)
        (VI * 3, 7, False),
        (VI + VJ, 4, False),  # no scaled term
    ],
)
def test_lt_folding_is_exact_where_it_applies(x: UOp, c: int, folds: bool) -> None:
    out = sym.lt_folding(x, c)
    assert (out is not None) == folds
    if out is not None:
        assert out.op is Ops.CMPLT and out.src[1].op is Ops.CONST and out.src[1].arg < c
        _same_everywhere(out, x < c, *sorted(x.variables(), key=lambda v: v.arg[0]))


def test_simplify_pow() -> None:
    f = UOp.variable("f", 0, 1, dtypes.float32)
    assert sym.simplify_pow(f, f.const_like(0)) is f.const_like(1)
    assert sym.simplify_pow(f, f.const_like(1)) is f
    assert sym.simplify_pow(f, f.const_like(4)) is (f * f) * (f * f)
    assert sym.simplify_pow(f, f.const_like(-2)) is (f * f).reciprocal()
    assert sym.simplify_pow(f, f.const_like(0.5)) is None and sym.simplify_pow(f, f) is None
    _same_everywhere(sym.simplify_pow(VI, VI.const_like(3)), VI * VI * VI, VI)


def test_parse_valid() -> None:
    assert sym.parse_valid(VI < 5) == (VI, True, 4)
    assert sym.parse_valid((VI < 5).logical_not()) == (VI, False, 5)
    assert sym.parse_valid(VI > 3) == (VI, False, 4)
    assert sym.parse_valid((VI > 3).logical_not()) == (VI, True, 3)
    assert sym.parse_valid(VI < VJ) is None and sym.parse_valid(VI.eq(3)) is None
    for clause in (VI < 5, (VI < 5).logical_not(), VI > 3, (VI > 3).logical_not()):
        x, upper, c = sym.parse_valid(clause)
        _same_everywhere(clause, (x <= c) if upper else (x >= c), VI)
