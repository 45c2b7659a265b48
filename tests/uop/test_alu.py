"""exec_alu, the executable definition of every ALU op, against NumPy for every op and dtype:
integer wrap-around, division and remainder by zero, IEEE floats (NaN, inf, -0.0), pow."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from fusegrad.uop import DType, Ops, dtypes, exec_alu, threefry2x32

INTS = [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64]
UINTS = [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64]
FLOATS = [dtypes.float16, dtypes.float32, dtypes.float64]
INF, NAN = math.inf, math.nan


def np_dtype(dt: DType) -> np.dtype:
    return np.dtype(dt.name)


def int_operands(dt: DType) -> np.ndarray:
    """Edge values of an int dtype and random ones, as a NumPy array of that dtype."""
    lo, hi = int(dt.min), int(dt.max)
    edges = [lo, lo + 1, -1, 0, 1, 2, 3, 7, hi - 1, hi]
    rng = np.random.default_rng(dt.bitsize + (dt in UINTS))
    random = rng.integers(lo, hi, size=12, dtype=np_dtype(dt), endpoint=True)
    return np.array([e for e in edges if lo <= e <= hi] + list(random), dtype=np_dtype(dt))


def float_operands(dt: DType) -> np.ndarray:
    tiny = float(np.finfo(np_dtype(dt)).smallest_subnormal)
    big = float(np.finfo(np_dtype(dt)).max)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.75, tiny, -tiny, big, -big, INF, -INF, NAN]
    return np.array(values, dtype=np_dtype(dt))


def pairs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.ravel(), b.ravel()


def same(got: object, want: object, dt: DType) -> bool:
    if dtypes.is_float(dt) or isinstance(want, float):
        g, w = float(got), float(want)  # type: ignore[arg-type]
        return (math.isnan(g) and math.isnan(w)) or g == w
    return got == want


def check_binary(
    op: Ops, dt: DType, reference: Callable[..., np.ndarray], a: np.ndarray, b: np.ndarray
) -> None:
    with np.errstate(all="ignore"):
        want = reference(a, b)
    out_dt = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else dt
    bad = [
        (x, y, got, w)
        for x, y, w in zip(a.tolist(), b.tolist(), want.tolist(), strict=True)
        if not same(got := exec_alu(op, out_dt, [x, y]), w, out_dt)
    ]
    assert not bad, f"{op!r} {dt!r}: (a, b, fusegrad, numpy) {bad[:5]}"


def trunc_div_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's truncating division from NumPy's C remainder: (a - fmod(a, b)) / b is exact."""
    safe_b = np.where(b == 0, 1, b)
    out = np.floor_divide(a - np.fmod(a, safe_b), safe_b)
    return np.where(b == 0, 0, out).astype(a.dtype)


INT_REFERENCES: dict[Ops, Callable[..., np.ndarray]] = {
    Ops.ADD: np.add,
    Ops.SUB: np.subtract,
    Ops.MUL: np.multiply,
    Ops.FLOORDIV: np.floor_divide,  # x // 0 is 0 in NumPy, and here
    Ops.FLOORMOD: np.remainder,
    Ops.CDIV: trunc_div_reference,
    Ops.CMOD: np.fmod,
    Ops.MAX: np.maximum,
    Ops.AND: np.bitwise_and,
    Ops.OR: np.bitwise_or,
    Ops.XOR: np.bitwise_xor,
    Ops.CMPLT: np.less,
    Ops.CMPNE: np.not_equal,
    Ops.CMPEQ: np.equal,
}


@pytest.mark.parametrize("op", list(INT_REFERENCES), ids=lambda o: o.name)
@pytest.mark.parametrize("dt", INTS + UINTS, ids=str)
def test_int_binary_ops_match_numpy(op: Ops, dt: DType) -> None:
    check_binary(op, dt, INT_REFERENCES[op], *pairs(int_operands(dt)))


@pytest.mark.parametrize("dt", INTS + UINTS, ids=str)
def test_int_shifts_match_numpy(dt: DType) -> None:
    values = int_operands(dt)
    shifts = np.array([0, 1, 3, dt.bitsize - 1, dt.bitsize, dt.bitsize + 5], dtype=np_dtype(dt))
    a, b = (x.ravel() for x in np.meshgrid(values, shifts, indexing="ij"))
    check_binary(Ops.SHL, dt, np.left_shift, a, b)
    check_binary(Ops.SHR, dt, np.right_shift, a, b)


@pytest.mark.parametrize("dt", INTS + UINTS, ids=str)
def test_int_pow_matches_numpy_for_non_negative_exponents(dt: DType) -> None:
    base = int_operands(dt)
    exps = np.array([0, 1, 2, 3, 7, 31, 64, 100], dtype=np_dtype(dt))
    a, b = (x.ravel() for x in np.meshgrid(base, exps, indexing="ij"))
    check_binary(Ops.POW, dt, np.power, a, b)


def test_int_pow_negative_exponents() -> None:
    # NumPy refuses; we give the truncated real result, and 0 for 0 ** -n (like x // 0)
    pow32 = lambda a, b: exec_alu(Ops.POW, dtypes.int32, [a, b])
    assert [pow32(2, -1), pow32(1, -5), pow32(-1, -3), pow32(-1, -4), pow32(0, -2)] == [
        0,
        1,
        -1,
        1,
        0,
    ]


@pytest.mark.parametrize("dt", INTS + UINTS, ids=str)
def test_int_unary_ops(dt: DType) -> None:
    values = int_operands(dt)
    with np.errstate(all="ignore"):
        negated = np.negative(values).tolist()
    assert [exec_alu(Ops.NEG, dt, [v]) for v in values.tolist()] == negated
    assert [exec_alu(Ops.TRUNC, dt, [v]) for v in values.tolist()] == values.tolist()


def test_int_wrap_examples() -> None:
    assert exec_alu(Ops.ADD, dtypes.int8, [127, 1]) == -128
    assert exec_alu(Ops.MUL, dtypes.uint8, [16, 16]) == 0
    assert exec_alu(Ops.SUB, dtypes.uint32, [0, 1]) == 2**32 - 1
    assert exec_alu(Ops.FLOORDIV, dtypes.int32, [-(2**31), -1]) == -(2**31)
    assert exec_alu(Ops.CMOD, dtypes.int32, [-(2**31), -1]) == 0
    assert (
        exec_alu(Ops.CDIV, dtypes.int32, [-7, 2]) == -3
        and exec_alu(Ops.FLOORDIV, dtypes.int32, [-7, 2]) == -4
    )
    assert (
        exec_alu(Ops.CMOD, dtypes.int32, [-7, 2]) == -1
        and exec_alu(Ops.FLOORMOD, dtypes.int32, [-7, 2]) == 1
    )
    for op in (Ops.CDIV, Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD):
        assert exec_alu(op, dtypes.int64, [5, 0]) == 0  # division by zero is 0
    assert exec_alu(Ops.FLOORDIV, dtypes.weakint, [2**80, 3]) == 2**80 // 3  # weakint is unbounded


# -- floats ------------------------------------------------------------------------------------------------

FLOAT_REFERENCES: dict[Ops, Callable[..., np.ndarray]] = {
    Ops.ADD: np.add,
    Ops.SUB: np.subtract,
    Ops.MUL: np.multiply,
    Ops.FDIV: np.divide,
    Ops.FLOORDIV: np.floor_divide,
    Ops.FLOORMOD: np.remainder,
    Ops.CMOD: np.fmod,
    # the truncated quotient computed exactly, then rounded once (like every op here)
    Ops.CDIV: lambda a, b: np.trunc(np.divide(a.astype(np.float64), b)).astype(a.dtype),
    Ops.MAX: np.maximum,
    Ops.CMPLT: np.less,
    Ops.CMPNE: np.not_equal,
    Ops.CMPEQ: np.equal,
}


@pytest.mark.parametrize("op", list(FLOAT_REFERENCES), ids=lambda o: o.name)
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_float_binary_ops_match_numpy(op: Ops, dt: DType) -> None:
    check_binary(op, dt, FLOAT_REFERENCES[op], *pairs(float_operands(dt)))


def test_max_propagates_nan_and_prefers_positive_zero() -> None:
    assert math.isnan(exec_alu(Ops.MAX, dtypes.float32, [NAN, 1.0]))
    assert math.isnan(exec_alu(Ops.MAX, dtypes.float32, [1.0, NAN]))
    # IEEE 754-2019 maximum: +0 > -0 in either order (np.maximum returns its first operand)
    for a, b in ((-0.0, 0.0), (0.0, -0.0)):
        assert math.copysign(1.0, exec_alu(Ops.MAX, dtypes.float32, [a, b])) == 1.0


def test_float_division_by_zero_is_ieee() -> None:
    fdiv = lambda a, b: exec_alu(Ops.FDIV, dtypes.float32, [a, b])
    assert fdiv(1.0, 0.0) == INF and fdiv(-1.0, 0.0) == -INF and fdiv(1.0, -0.0) == -INF
    assert math.isnan(fdiv(0.0, 0.0)) and math.isnan(fdiv(NAN, 0.0))
    assert exec_alu(Ops.RECIPROCAL, dtypes.float16, [-0.0]) == -INF


def test_float_results_round_to_the_dtype() -> None:
    assert exec_alu(Ops.ADD, dtypes.float16, [65504.0, 16.0]) == INF  # past max + half ulp
    assert exec_alu(Ops.ADD, dtypes.float16, [65504.0, 15.0]) == 65504.0
    assert exec_alu(Ops.ADD, dtypes.float32, [1.0, 2.0**-24]) == 1.0  # tie to even
    assert exec_alu(Ops.MUL, dtypes.float32, [3.0, 1 / 3]) == 1.0
    assert exec_alu(Ops.FDIV, dtypes.bfloat16, [1.0, 3.0]) == 0.333984375


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_float_pow_matches_numpy(dt: DType) -> None:
    values = np.array(
        [0.0, -0.0, 0.5, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.25, 10.0, INF, -INF, NAN],
        dtype=np_dtype(dt),
    )
    a, b = pairs(values)
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    for x, y, w in zip(a.tolist(), b.tolist(), want.tolist(), strict=True):
        got = exec_alu(Ops.POW, dt, [x, y])
        assert same(got, w, dt) or math.isclose(got, w, rel_tol=2.0 ** -(dtypes.finfo(dt)[1])), (
            x,
            y,
            got,
            w,
        )


def test_pow_edge_cases() -> None:
    p = lambda a, b: exec_alu(Ops.POW, dtypes.float64, [a, b])
    assert p(0.0, -1.0) == INF and p(-0.0, -1.0) == -INF and p(-0.0, -2.0) == INF
    assert p(NAN, 0.0) == 1.0 and p(1.0, NAN) == 1.0 and p(-1.0, INF) == 1.0
    assert math.isnan(p(-8.0, 1 / 3))
    assert p(10.0, 400.0) == INF and p(-10.0, 401.0) == -INF
    assert exec_alu(Ops.POW, dtypes.float32, [2.0, 200.0]) == INF  # finite in float64, not float32


def ulps_apart(a: float, b: float, dt: DType) -> float:
    if (math.isnan(a) and math.isnan(b)) or a == b:
        return 0
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return INF
    return abs(a - b) / float(np.spacing(np.array(abs(b), dtype=np_dtype(dt))))


UNARY_REFERENCES: dict[Ops, tuple[Callable[..., np.ndarray], int]] = {
    # op: (reference, ulps allowed: NumPy's own float32/float16 math is not always exact)
    Ops.NEG: (np.negative, 0),
    Ops.SQRT: (np.sqrt, 0),
    Ops.RECIPROCAL: (np.reciprocal, 0),
    Ops.TRUNC: (np.trunc, 0),
    Ops.EXP2: (np.exp2, 1),
    Ops.LOG2: (np.log2, 1),
    Ops.SIN: (np.sin, 1),
}


@pytest.mark.parametrize("op", list(UNARY_REFERENCES), ids=lambda o: o.name)
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_float_unary_ops_match_numpy(op: Ops, dt: DType) -> None:
    reference, ulps = UNARY_REFERENCES[op]
    rng = np.random.default_rng(7)
    values = np.concatenate([float_operands(dt), rng.uniform(-20, 20, 64).astype(np_dtype(dt))])
    with np.errstate(all="ignore"):
        want = reference(values)
    for v, w in zip(values.tolist(), want.tolist(), strict=True):
        got = exec_alu(op, dt, [v])
        assert ulps_apart(got, w, dt) <= ulps, (op, v, got, w)
        if w == 0 and ulps == 0:
            assert math.copysign(1.0, got) == math.copysign(1.0, w), (op, v)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_where_and_mulacc_match_numpy(dt: DType) -> None:
    a, b = pairs(float_operands(dt))
    c = b[::-1].copy()
    with np.errstate(all="ignore"):
        want = np.add(np.multiply(a, b), c)
    # float32/float64 MULACC is fused (one rounding): tests/uop/test_mulacc.py checks it
    # against an exact reference; the narrow floats round the product, then the sum
    if dt is dtypes.float16:
        for x, y, z, w in zip(a.tolist(), b.tolist(), c.tolist(), want.tolist(), strict=True):
            assert same(exec_alu(Ops.MULACC, dt, [x, y, z]), w, dt), (x, y, z)
    assert exec_alu(Ops.WHERE, dt, [True, 1.5, 2.5]) == 1.5
    assert exec_alu(Ops.WHERE, dt, [False, 1.5, 2.5]) == 2.5


def test_bool_ops_match_numpy() -> None:
    a, b = pairs(np.array([False, True]))
    for op, ref in [(Ops.ADD, np.logical_or), (Ops.MUL, np.logical_and), (Ops.AND, np.bitwise_and),
                    (Ops.OR, np.bitwise_or), (Ops.XOR, np.bitwise_xor), (Ops.MAX, np.maximum),
                    (Ops.CMPLT, np.less), (Ops.CMPNE, np.not_equal)]:  # fmt: skip
        check_binary(op, dtypes.bool, ref, a, b)
    assert exec_alu(Ops.NEG, dtypes.bool, [True]) is False


# -- threefry, cast, errors -------------------------------------------------------------------------------------

# Random123's known-answer vectors for threefry2x32 with 20 rounds: (ctr0, ctr1, key0, key1) ->
# (out0, out1)
THREEFRY_KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize(("words", "out"), THREEFRY_KAT)
def test_threefry_matches_random123_known_answers(
    words: tuple[int, ...], out: tuple[int, int]
) -> None:
    c0, c1, k0, k1 = words
    got = threefry2x32((c1 << 32) | c0, (k1 << 32) | k0)
    assert (got & 0xFFFFFFFF, got >> 32) == out
    assert exec_alu(Ops.THREEFRY, dtypes.uint64, [(c1 << 32) | c0, (k1 << 32) | k0]) == got


def test_cast_and_errors() -> None:
    assert exec_alu(Ops.CAST, dtypes.int8, [300]) == 44
    assert exec_alu(Ops.CAST, dtypes.float16, [0.1]) == 0.0999755859375
    with pytest.raises(TypeError, match="BITCAST needs the source dtype"):
        exec_alu(Ops.BITCAST, dtypes.int32, [1.0])
    with pytest.raises(NotImplementedError, match=r"Ops\.LOAD is not an ALU op"):
        exec_alu(Ops.LOAD, dtypes.int32, [1])


def test_trunc_keeps_the_sign_of_zero() -> None:
    # regression: trunc(-0.5) and trunc(-0.0) were +0.0
    for v in (-0.5, -0.0, -0.999):
        got = exec_alu(Ops.TRUNC, dtypes.float32, [v])
        assert got == 0 and math.copysign(1.0, got) == -1.0


def test_float_floor_and_c_division_by_zero_are_ieee() -> None:
    # regression: float x // 0 and x % 0 gave 0 like ints; NumPy gives inf/NaN
    assert exec_alu(Ops.FLOORDIV, dtypes.float32, [1.0, 0.0]) == INF
    assert math.isnan(exec_alu(Ops.FLOORMOD, dtypes.float32, [1.0, 0.0]))
    assert math.isnan(exec_alu(Ops.CMOD, dtypes.float32, [1.0, 0.0]))
    assert exec_alu(Ops.CDIV, dtypes.float32, [-1.0, 0.0]) == -INF
