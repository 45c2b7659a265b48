"""Value conversion (``truncate``/``dtypes.as_const``) and ``bitcast``, checked against NumPy,
PyTorch (when installed) and bit-level references written here from the IEEE formats."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from fusegrad.uop import DType, Invalid, bitcast, dtypes, truncate
from hypothesis import example, given, settings
from hypothesis import strategies as st

INTS = [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64]
UINTS = [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64]
INF, NAN = math.inf, math.nan


def same_float(a: float, b: float) -> bool:
    """Equal as IEEE values, telling -0.0 from 0.0 and NaN equal to NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def numpy_cast(x: float | int, dt: DType) -> float | int:
    with np.errstate(all="ignore"):
        src = np.array([x], dtype=np.float64 if isinstance(x, float) else np.int64)
        return src.astype(np.dtype(dt.name))[0].item()


# -- integers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", INTS + UINTS, ids=str)
@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(x=st.integers(-(2**63), 2**63 - 1))
@example(x=0)
@example(x=-1)
@example(x=2**63 - 1)
@example(x=-(2**63))
def test_int_conversion_wraps_like_numpy(dt: DType, x: int) -> None:
    assert truncate(dt)(x) == numpy_cast(x, dt)


def test_int_wrap_examples() -> None:
    assert truncate(dtypes.int8)(128) == -128
    assert truncate(dtypes.int8)(-129) == 127
    assert truncate(dtypes.uint8)(256 + 7) == 7
    assert truncate(dtypes.uint16)(-1) == 65535
    assert truncate(dtypes.int64)(2**64 + 5) == 5  # Python ints past 64 bits wrap too
    assert truncate(dtypes.uint64)(-(2**64) - 1) == 2**64 - 1


# NumPy converts through a 32-bit register for int8..int32, uint8 and uint16 (as C compilers
# on x86 do), so out-of-range values match there too; uint32 and the 64-bit types are compared
# where C defines the result (NumPy's SIMD loops differ from scalar x86 outside it)
FLOAT_TO_INT_RANGE = {
    dtypes.uint32: (-(2.0**31), 2.0**32),
    dtypes.uint64: (-(2.0**62), 2.0**64),
}


@pytest.mark.parametrize("dt", INTS + UINTS, ids=str)
@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(x=st.floats(-(2.0**62), 2.0**64, allow_nan=False))
@example(x=-0.5)
@example(x=0.999)
@example(x=-1.999)
@example(x=300.0)
@example(x=2147483649.0)  # past int32: the indefinite value, low byte 0
@example(x=-70000.5)
def test_float_to_int_truncates_toward_zero_like_numpy(dt: DType, x: float) -> None:
    lo, hi = FLOAT_TO_INT_RANGE.get(dt, (-(2.0**62), 2.0**62))
    if lo <= x < hi:
        assert truncate(dt)(x) == numpy_cast(x, dt)


def test_float_to_uint64_takes_the_upper_half_exactly() -> None:
    # regression: values in [2**63, 2**64) became 2**63 (int64's overflow value)
    for x in (2.0**63, 1e19, 2.0**64 - 2048):
        assert truncate(dtypes.uint64)(x) == int(x) == numpy_cast(x, dtypes.uint64)


@pytest.mark.parametrize("x", [NAN, INF, -INF, 1e30, -1e30])
def test_unrepresentable_float_to_int_is_the_x86_indefinite_value(x: float) -> None:
    # C leaves these undefined; we pick x86's cvttsd2si result (the register's min), wrapped
    assert truncate(dtypes.int64)(x) == -(2**63)
    assert truncate(dtypes.uint64)(x) == 2**63
    assert truncate(dtypes.uint32)(x) == 0
    assert truncate(dtypes.int32)(x) == -(2**31)
    assert truncate(dtypes.int8)(x) == 0


def test_bool_conversion() -> None:
    to_bool = truncate(dtypes.bool)
    assert [to_bool(v) for v in (0, 3, -1, 0.0, -0.0, 0.5, NAN, INF)] == [
        False,
        True,
        True,
        False,
        False,
        True,
        True,
        True,
    ]
    assert truncate(dtypes.int32)(True) == 1
    assert same_float(truncate(dtypes.float16)(True), 1.0)


def test_weakint_is_unbounded() -> None:
    assert truncate(dtypes.weakint)(2**70) == 2**70
    assert truncate(dtypes.weakint)(-3.7) == -3


# -- float32 and float16 against NumPy ---------------------------------------------------------------------

finite_and_special = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e-30, 1e-30),  # around the denormals of every width
    st.floats(-70000.0, 70000.0),  # float16's range and its overflow
)


@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(x=finite_and_special)
@example(x=-0.0)
@example(x=3.4028235677973366e38)  # float32 max + half an ulp: ties to even, i.e. to inf
@example(x=3.4028235677973362e38)  # just below it: rounds down to max
@example(x=2.0**-149)  # smallest float32 denormal
@example(x=2.0**-150)  # half of it: ties to even, i.e. to 0
@example(x=1.5 * 2.0**-149)  # ties to even: up to 2**-148
def test_float32_rounding_matches_numpy(x: float) -> None:
    with np.errstate(over="ignore"):
        want = float(np.float32(x))
    assert same_float(truncate(dtypes.float32)(x), want)


@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(x=finite_and_special)
@example(x=65504.0)
@example(x=65519.99)
@example(x=65520.0)  # float16 max + half an ulp: ties to even, i.e. to inf
@example(x=-65520.0)
@example(x=2.0**-24)  # smallest float16 denormal
@example(x=2.0**-25)  # half of it: to 0
@example(x=3 * 2.0**-25)  # 1.5 denormal ulps: ties to even, i.e. to 2 ulps
@example(x=1.0 + 2.0**-11)  # half an ulp above 1: to 1.0
@example(x=1.0 + 3 * 2.0**-11)  # 1.5 ulps above 1: ties to even, i.e. up
def test_float16_rounding_matches_numpy(x: float) -> None:
    with np.errstate(over="ignore"):
        want = float(np.float16(x))
    assert same_float(truncate(dtypes.float16)(x), want)


def test_float16_every_midpoint_rounds_to_even() -> None:
    codes = np.arange(0, 0x7C00, dtype=np.uint16)  # every finite non-negative float16
    values = codes.view(np.float16).astype(np.float64)
    mids = (values[:-1] + values[1:]) / 2  # exact in float64
    to_f16 = truncate(dtypes.float16)
    got = np.array([to_f16(float(m)) for m in mids])
    even = np.where(codes[:-1] % 2 == 0, values[:-1], values[1:])
    assert np.array_equal(got, even)


def test_special_values_survive_every_float_width() -> None:
    for dt in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        conv = truncate(dt)
        assert same_float(conv(-0.0), -0.0)
        assert same_float(conv(INF), INF) and same_float(conv(-INF), -INF)
        assert math.isnan(conv(NAN))
        assert same_float(conv(1e-300), 0.0) or dt is dtypes.float64
        assert same_float(conv(-1e-300), -0.0) or dt is dtypes.float64


# -- bfloat16 against a bit-level reference -----------------------------------------------------------------


def bfloat16_reference_bits(x: float) -> int:
    """float64 -> float32 (NumPy) -> bfloat16 bits, rounding the dropped 16 bits to nearest
    even by comparing them with the halfway pattern 0x8000."""
    with np.errstate(over="ignore"):
        bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    upper, dropped = bits >> 16, bits & 0xFFFF
    if math.isnan(x):
        return (upper & 0x8000) | 0x7FC0  # the quiet NaN, sign kept
    if dropped > 0x8000 or (dropped == 0x8000 and upper & 1):
        upper += 1  # may carry into the exponent: the largest finite values round to inf
    return upper


def bfloat16_value(bits: int) -> float:
    return float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])


@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(x=finite_and_special)
@example(x=1.0 + 2.0**-8)  # halfway between 1 and the next bfloat16: ties to even (down)
@example(x=1.0 + 3 * 2.0**-8)  # ties to even (up)
@example(x=3.3895313892515355e38)  # bfloat16 max
@example(x=3.3961776e38)  # past bfloat16 max + half an ulp: inf
@example(x=2.0**-133)  # smallest bfloat16 denormal
def test_bfloat16_rounding_matches_bit_reference(x: float) -> None:
    want = bfloat16_value(bfloat16_reference_bits(x))
    assert same_float(truncate(dtypes.bfloat16)(x), want)
    if not math.isnan(x):
        assert bitcast(x, dtypes.bfloat16, dtypes.uint16) == bfloat16_reference_bits(x)


def test_bfloat16_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 39, 2000), [0.0, -0.0, 1e39]]
    )
    with np.errstate(over="ignore"):
        as_f32 = values.astype(np.float32)
    want = torch.from_numpy(as_f32).to(torch.bfloat16).float().tolist()
    to_bf16 = truncate(dtypes.bfloat16)
    got = [to_bf16(float(v)) for v in as_f32]
    assert all(same_float(a, b) for a, b in zip(got, want, strict=True))


# -- fp8 ---------------------------------------------------------------------------------------------------------

FP8 = {
    # dtype: (exponent bits, mantissa bits, bias, largest finite, smallest denormal)
    dtypes.fp8e4m3: (4, 3, 7, 448.0, 2.0**-9),
    dtypes.fp8e5m2: (5, 2, 15, 57344.0, 2.0**-16),
}


def fp8_reference_decode(code: int, dt: DType) -> float:
    """The value of an fp8 code from its fields, the way the OCP FP8 spec tables it."""
    ebits, mbits, bias, _, _ = FP8[dt]
    sign = -1.0 if code >> 7 else 1.0
    exp, man = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if dt is dtypes.fp8e4m3 and exp == 15 and man == 7:
        return NAN  # e4m3fn: no infinities, one NaN pattern per sign
    if dt is dtypes.fp8e5m2 and exp == 31:
        return sign * INF if man == 0 else NAN
    if exp == 0:
        return sign * math.ldexp(man, 1 - bias - mbits)
    return sign * math.ldexp((1 << mbits) + man, exp - bias - mbits)


@pytest.mark.parametrize("dt", list(FP8), ids=str)
def test_fp8_every_code_decodes_per_spec_and_round_trips(dt: DType) -> None:
    for code in range(256):
        value = bitcast(code, dtypes.uint8, dt)
        assert same_float(value, fp8_reference_decode(code, dt)), hex(code)
        if math.isnan(value) or math.isinf(value):
            continue
        assert bitcast(value, dt, dtypes.uint8) == code, hex(code)
        assert same_float(truncate(dt)(value), value)


@pytest.mark.parametrize("dt", list(FP8), ids=str)
def test_fp8_saturates_instead_of_overflowing(dt: DType) -> None:
    _, _, _, largest, _ = FP8[dt]
    conv = truncate(dt)
    for x in (largest * 1.01, largest * 1000, 1e300, INF):
        assert conv(x) == largest
        assert conv(-x) == -largest
    assert math.isnan(conv(NAN))


def test_fp8_nan_codes() -> None:
    assert bitcast(NAN, dtypes.fp8e4m3, dtypes.uint8) == 0x7F
    assert bitcast(0xFF, dtypes.uint8, dtypes.fp8e4m3) != bitcast(
        0xFF, dtypes.uint8, dtypes.fp8e4m3
    )
    assert math.isnan(bitcast(NAN, dtypes.fp8e5m2, dtypes.uint8) and NAN)
    assert bitcast(0x7C, dtypes.uint8, dtypes.fp8e5m2) == INF


def fp8_reference_round(x: float, dt: DType) -> float:
    """Round to the nearest finite fp8 value, ties to the even code, saturating."""
    finite = sorted(
        {fp8_reference_decode(c, dt) for c in range(128)} - {NAN, INF},
        key=float,
    )
    finite = [v for v in finite if math.isfinite(v)]
    mag = min(abs(x), finite[-1])
    best = min(finite, key=lambda v: (abs(v - mag), _odd_code(v, dt)))
    return math.copysign(best, x)


def _odd_code(value: float, dt: DType) -> int:
    return int(bitcast(value, dt, dtypes.uint8)) & 1


@pytest.mark.parametrize("dt", list(FP8), ids=str)
@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(x=st.floats(-1e5, 1e5))
@example(x=1.0625)  # e4m3: halfway between 1 and 1.125, ties to even (1.0)
@example(x=1.1875)  # e4m3: halfway between 1.125 and 1.25, ties to even (1.25)
@example(x=2.0**-10)  # half the smallest e4m3 denormal: to 0
@example(x=3 * 2.0**-10)  # 1.5 e4m3 denormals: to 2
@example(x=-0.0)
def test_fp8_rounding_is_nearest_even(dt: DType, x: float) -> None:
    assert same_float(truncate(dt)(x), fp8_reference_round(x, dt))


@pytest.mark.parametrize(
    ("dt", "name"), [(dtypes.fp8e4m3, "float8_e4m3fn"), (dtypes.fp8e5m2, "float8_e5m2")]
)
def test_fp8_matches_torch_in_range(dt: DType, name: str) -> None:
    torch = pytest.importorskip("torch")
    _, _, _, largest, _ = FP8[dt]
    values = np.linspace(-largest, largest, 4001)
    want = torch.tensor(values, dtype=torch.float32).to(getattr(torch, name)).float().tolist()
    conv = truncate(dt)
    assert all(same_float(conv(float(v)), w) for v, w in zip(values, want, strict=True))


# -- as_const, bitcast ------------------------------------------------------------------------------------------


def test_as_const_converts_scalars_vectors_and_keeps_invalid() -> None:
    assert dtypes.as_const(300, dtypes.uint8) == 44
    assert dtypes.as_const((1.5, -1.5), dtypes.int32.vec(2)) == (1, -1)
    assert dtypes.as_const(Invalid, dtypes.int32) is Invalid


@pytest.mark.parametrize(
    ("src", "dst", "npsrc", "npdst"),
    [
        (dtypes.float32, dtypes.uint32, np.float32, np.uint32),
        (dtypes.float32, dtypes.int32, np.float32, np.int32),
        (dtypes.float64, dtypes.int64, np.float64, np.int64),
        (dtypes.float16, dtypes.int16, np.float16, np.int16),
        (dtypes.int8, dtypes.uint8, np.int8, np.uint8),
        (dtypes.uint64, dtypes.float64, np.uint64, np.float64),
        (dtypes.int16, dtypes.float16, np.int16, np.float16),
    ],
    ids=lambda v: getattr(v, "name", None) or getattr(v, "__name__", ""),
)
def test_bitcast_matches_numpy_view(src: DType, dst: DType, npsrc: type, npdst: type) -> None:
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, size=(64, src.itemsize), dtype=np.uint8)
    values = raw.view(npsrc).ravel()
    for v, w in zip(values.tolist(), values.view(npdst).tolist(), strict=True):
        if isinstance(v, float) and math.isnan(v):
            continue  # a Python float can't carry a signaling NaN's payload through .tolist()
        got = bitcast(v, src, dst)
        assert same_float(float(got), float(w)) if dtypes.is_float(dst) else got == w


def test_bitcast_examples_and_errors() -> None:
    assert bitcast(1.0, dtypes.float32, dtypes.uint32) == 0x3F800000
    assert bitcast(-0.0, dtypes.float64, dtypes.uint64) == 1 << 63
    assert bitcast(0x7FC00000, dtypes.uint32, dtypes.float32) != bitcast(  # NaN
        0x7FC00000, dtypes.uint32, dtypes.float32
    )
    assert bitcast(-1, dtypes.int8, dtypes.uint8) == 255
    assert bitcast(1.0, dtypes.bfloat16, dtypes.int16) == 0x3F80
    assert bitcast(0x3C00, dtypes.uint16, dtypes.float16) == 1.0
    with pytest.raises(ValueError, match="sizes differ"):
        bitcast(1.0, dtypes.float32, dtypes.int16)
    # bitcasting reads the bits of the value as stored: 1/3 is rounded to float32 first
    third = struct.unpack("<I", struct.pack("<f", 1 / 3))[0]
    assert bitcast(1 / 3, dtypes.float32, dtypes.uint32) == third


def test_bitcast_of_vector_dtypes_uses_the_scalar() -> None:
    assert bitcast(1.0, dtypes.float32.vec(4), dtypes.uint32.vec(4)) == 0x3F800000
