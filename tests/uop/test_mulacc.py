"""MULACC is a fused multiply-add on float32/float64: ``a * b + c`` computed exactly and
rounded once (C's ``fma``), checked against an exact Fraction reference; narrow floats round
the product then the sum; integers wrap."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from fusegrad.uop import DType, Ops, dtypes, exec_alu

INF, NAN = math.inf, math.nan
NP = {dtypes.float32: np.float32, dtypes.float64: np.float64}


def _nearest(exact: Fraction, dt: DType) -> float:
    """``exact`` rounded to nearest even in ``dt`` (overflow to inf), from first principles:
    the best of the neighbours of a close candidate."""
    t = NP[dt]
    info = np.finfo(t)
    # past max + half an ulp of max: inf (IEEE round to nearest)
    limit = Fraction(2) ** info.maxexp - Fraction(2) ** (info.maxexp - info.nmant - 2)
    if abs(exact) >= limit:
        return INF if exact > 0 else -INF
    guess = t(exact.numerator / exact.denominator)  # int/int: correctly rounded to double
    with np.errstate(over="ignore"):
        cands = [np.nextafter(guess, t(-INF)), guess, np.nextafter(guess, t(INF))]

    def key(c: np.floating) -> tuple[Fraction, int]:
        bits = int(np.array(c, t).view(np.uint64 if t is np.float64 else np.uint32))
        return abs(Fraction(float(c)) - exact), bits & 1

    return float(min((c for c in cands if np.isfinite(c)), key=key))


def fma_reference(x: float, y: float, z: float, dt: DType) -> float:
    """IEEE fusedMultiplyAdd of ``dt`` values, through exact rationals."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y + z  # inf/NaN operands: no rounding involved
    if not math.isfinite(z):
        return z  # the exact (finite) product plus inf/NaN, even if the product is huge
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        negative = math.copysign(1, x) * math.copysign(1, y) < 0 and math.copysign(1, z) < 0
        return -0.0 if negative else 0.0
    return _nearest(exact, dt)


def same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def as_dt(v: float, dt: DType) -> float:
    return float(NP[dt](v))


def edge_values(dt: DType) -> list[float]:
    info = np.finfo(NP[dt])
    tiny, big, eps = float(info.smallest_subnormal), float(info.max), float(info.eps)
    return [0.0, -0.0, 1.0, -1.0, 1 + eps, 1 - eps / 2, -3.0, 0.1, tiny, -tiny, 2 * tiny,
            float(info.tiny), big, -big, INF, -INF, NAN]  # fmt: skip


@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float64], ids=str)
def test_edge_values_exact(dt: DType) -> None:
    vals = [as_dt(v, dt) for v in edge_values(dt)]
    for x in vals:
        for y in vals:
            for z in vals:
                got, want = exec_alu(Ops.MULACC, dt, [x, y, z]), fma_reference(x, y, z, dt)
                assert same(got, want), (x, y, z, got, want)


def _cancelling(rs: random.Random, dt: DType) -> tuple[float, float, float]:
    """a * b + c with c close to -(a * b): the rounding of the product decides the result."""
    lo = -40 if dt is dtypes.float32 else -300
    x = as_dt(rs.uniform(1, 2) * 2.0 ** rs.randint(lo, 40) * rs.choice((1, -1)), dt)
    y = as_dt(rs.uniform(1, 2) * 2.0 ** rs.randint(-40, 40), dt)
    return x, y, as_dt(-(x * y), dt)


def _random(rs: random.Random, dt: DType) -> tuple[float, float, float]:
    lo = -80 if dt is dtypes.float32 else -540
    x, y = (as_dt(rs.uniform(-2, 2) * 2.0 ** rs.randint(lo, 60), dt) for _ in range(2))
    z = as_dt(rs.uniform(-2, 2) * 2.0 ** rs.randint(2 * lo, 120), dt)
    return x, y, z


@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float64], ids=str)
def test_random_and_cancelling_exact(dt: DType) -> None:
    rs = random.Random(7)
    fused_differs = 0
    for i in range(3000):
        x, y, z = (_cancelling if i % 2 else _random)(rs, dt)
        got, want = exec_alu(Ops.MULACC, dt, [x, y, z]), fma_reference(x, y, z, dt)
        assert same(got, want), (x, y, z, got, want)
        unfused = as_dt(as_dt(x * y, dt) + z, dt) if dt is dtypes.float32 else x * y + z
        fused_differs += got != unfused
    assert fused_differs > 1000  # the cancelling half: the fused result is the product's error


def test_known_fma_results() -> None:
    # (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly; unfused, the product rounds to 1 + 2^-11
    a = 1 + 2.0**-12
    assert exec_alu(Ops.MULACC, dtypes.float32, [a, a, -(1 + 2.0**-11)]) == 2.0**-24
    assert exec_alu(Ops.MUL, dtypes.float32, [a, a]) == 1 + 2.0**-11
    a = 1 + 2.0**-27
    assert exec_alu(Ops.MULACC, dtypes.float64, [a, a, -(1 + 2.0**-26)]) == 2.0**-54
    # a product past float32's range brought back by c: no intermediate overflow
    big = float(np.finfo(np.float32).max)  # 2^128 - 2^104
    assert exec_alu(Ops.MULACC, dtypes.float32, [2.0**64, 2.0**64, -big]) == 2.0**104
    assert exec_alu(Ops.MULACC, dtypes.float32, [2.0**64, 2.0**64, 0.0]) == INF
    # float32 result in the subnormal range, rounded once
    tiny = 2.0**-149
    # (unfused: 2^-150 rounds to 0 (a tie, to even), then 0 + tiny = tiny)
    assert exec_alu(Ops.MULACC, dtypes.float32, [2.0**-75, 2.0**-75, tiny]) == 2 * tiny
    assert exec_alu(Ops.MULACC, dtypes.float32, [2.0**-75, 2.0**-76, tiny]) == tiny
    assert exec_alu(Ops.MULACC, dtypes.float32, [1.5 * 2.0**-75, 2.0**-75, 0.0]) == tiny
    # signed zeros: -0 only when both the product and c are -0
    assert math.copysign(1, exec_alu(Ops.MULACC, dtypes.float64, [-0.0, 1.0, -0.0])) == -1
    assert math.copysign(1, exec_alu(Ops.MULACC, dtypes.float64, [-0.0, -1.0, -0.0])) == 1
    assert math.copysign(1, exec_alu(Ops.MULACC, dtypes.float32, [2.0, 3.0, -6.0])) == 1
    assert math.isnan(exec_alu(Ops.MULACC, dtypes.float64, [INF, 0.0, 1.0]))
    assert math.isnan(exec_alu(Ops.MULACC, dtypes.float64, [INF, 1.0, -INF]))
    assert exec_alu(Ops.MULACC, dtypes.float64, [1e300, 1e300, -INF]) == -INF


def test_narrow_floats_round_twice() -> None:
    # float16: 1.0009765625 = 1 + 2^-10; (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 -> product rounds
    a = 1 + 2.0**-10
    assert exec_alu(Ops.MULACC, dtypes.float16, [a, a, -1.0]) == 2.0**-9
    assert exec_alu(Ops.MULACC, dtypes.bfloat16, [1 + 2.0**-7, 1 + 2.0**-7, -1.0]) == 2.0**-6


def test_integers_wrap() -> None:
    assert exec_alu(Ops.MULACC, dtypes.int8, [100, 3, 1]) == 45
    assert exec_alu(Ops.MULACC, dtypes.uint32, [2**31, 2, 7]) == 7
    assert exec_alu(Ops.MULACC, dtypes.int64, [-3, 4, 5]) == -7
