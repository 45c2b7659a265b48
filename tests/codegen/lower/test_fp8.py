"""fp8 (e4m3fn, e5m2) emulated in float32 for a target without them, bit-exact against
``fusegrad.uop.truncate`` and the PYTHON emulator's native fp8.

Each kernel is lowered twice: for the scalar test target (no fp8: the lowering emulates it)
and for the CPU-like test target (fp8 native, so the emulator executes the fp8 ops itself);
both programs run in the PYTHON emulator over the same bytes and must agree bit for bit. The
codecs themselves are also evaluated by NumPy over a dense sweep of float32 values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import targets as T
from fusegrad.codegen.lower import to_program
from fusegrad.codegen.lower.dtype_emulation import (
    FP8E4M3,
    FP8E4M3FNUZ,
    FP8E5M2,
    FP8E5M2FNUZ,
    Fp8Format,
)
from fusegrad.runtime import run_linear
from fusegrad.uop import DType, Ops, UOp, bitcast, dtypes, truncate
from npeval import np_eval

FP8 = {
    dtypes.fp8e4m3: FP8E4M3,
    dtypes.fp8e5m2: FP8E5M2,
    dtypes.fp8e4m3fnuz: FP8E4M3FNUZ,
    dtypes.fp8e5m2fnuz: FP8E5M2FNUZ,
}
IDS = [dt.name for dt in FP8]
STORE_NP: dict[DType, Any] = {**T._NP, **dict.fromkeys(dtypes.fp8s, np.uint8)}


def _ld(b: UOp, i: UOp) -> UOp:
    return b.index(i).load()


def _run(ast: UOp, arrays: list[np.ndarray], renderer: str) -> list[np.ndarray]:
    spec = to_program(ast, T.RENDERERS[renderer])
    pairs = zip(spec.buffers, arrays, strict=True)
    bufs = [np.array(a, dtype=STORE_NP[b.dtype]).reshape(-1) for b, a in pairs]
    run_linear(list(spec.uops), bufs)
    return bufs


def both(ast: UOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``ast`` emulated (scalar target) and native (CPU-like target); assert they agree
    bit for bit; the emulated run's arrays."""
    spec = to_program(ast, T.RENDERERS["scalar"])
    assert not any(dt in (u.dtype.scalar() for u in spec.uops) for dt in dtypes.fp8s)
    emulated = _run(ast, arrays, "scalar")
    native = _run(ast, arrays, "cpu")
    for e, n in zip(emulated, native, strict=True):
        np.testing.assert_array_equal(e.view(f"u{e.itemsize}"), n.view(f"u{n.itemsize}"))
    return emulated


def cast_kernel(src: DType, dst: DType, n: int) -> UOp:
    """``out[i] = CAST(x[i])`` over ``n`` elements."""
    i = T.rng(n, 0)
    out, x = T.buf(0, dst, n), T.buf(1, src, n)
    return T.kernel(out.index(i).store(_ld(x, i).cast(dst)).end(i))


def f32_bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def ref_codes(dt: DType, values: np.ndarray) -> np.ndarray:
    """``truncate(dt)`` applied value by value, as fp8 codes."""
    return np.array([bitcast(float(v), dt, dtypes.uint8) for v in values], np.uint8)


def ref_decode(dt: DType) -> np.ndarray:
    """Every code's value by ``truncate``'s definition, as float32 (NaN canonical)."""
    vals = [bitcast(c, dtypes.uint8, dt) for c in range(256)]
    return np.array([math.nan if math.isnan(v) else v for v in vals], np.float32)


def np_codes(fmt: Fp8Format, dt: DType, values: np.ndarray) -> np.ndarray:
    """A vectorized copy of ``truncate``'s saturating round-to-nearest-even, for sweeps too
    large to convert value by value (checked against ``ref_codes`` on a sample)."""
    table = ref_decode(dt)[:0x80].astype(np.float64)
    codes = np.arange(0x80)
    finite = ~np.isnan(table) & ~np.isinf(table)
    table, codes = table[finite], codes[finite]
    with np.errstate(invalid="ignore"):  # signalling NaNs in the sweep
        mag = np.minimum(np.abs(values.astype(np.float64)), table[-1])
    hi = np.clip(np.searchsorted(table, mag), 1, len(table) - 1)
    lo = hi - 1
    dlo, dhi = mag - table[lo], table[hi] - mag
    pick = np.where((dlo < dhi) | ((dlo == dhi) & (codes[lo] % 2 == 0)), codes[lo], codes[hi])
    pick = np.where(mag == table[hi], codes[hi], pick)
    negative = np.signbit(values) & ~(fmt.fnuz & (pick == 0))  # fnuz has no -0
    sign = np.where(negative, 0x80, 0)
    return np.where(np.isnan(values), fmt.nan_code, pick | sign).astype(np.uint8)


def interesting_f32(dt: DType) -> np.ndarray:
    """Every fp8 value and every midpoint between neighbours, each with its float32
    neighbours 1 and 2 ulps away, both signs; zeros, infinities, NaN, the overflow
    boundary and float32 extremes."""
    vals = ref_decode(dt)[:0x80].astype(np.float64)
    vals = vals[np.isfinite(vals)]
    vals.sort()
    points = np.concatenate(
        [vals, (vals[1:] + vals[:-1]) / 2, [vals[-1] * 1.0625, vals[-1] * 1.125]]
    )
    bits = f32_bits(points.astype(np.float32)).astype(np.int64)
    near = np.concatenate([bits + d for d in (-2, -1, 0, 1, 2)])
    near = near[(near >= 0) & (near < 0x7F800000)].astype(np.uint32).view(np.float32)
    extra = np.array([0.0, np.inf, np.nan, 3.4028235e38, 1e-45, 1e-30, 1e30], np.float32)
    both_signs = np.concatenate([near, extra])
    return np.concatenate([both_signs, -both_signs])


# -- codecs through the pipeline and the emulator ----------------------------------------------


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_every_code_decodes_exactly(dt: DType) -> None:
    codes = np.arange(256, dtype=np.uint8)
    out = both(cast_kernel(dt, dtypes.float32, 256), [np.zeros(256, np.float32), codes])[0]
    np.testing.assert_array_equal(f32_bits(out), f32_bits(ref_decode(dt)))


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_float32_encodes_as_truncate(dt: DType) -> None:
    src = interesting_f32(dt)
    out = both(cast_kernel(dtypes.float32, dt, len(src)), [np.zeros(len(src), np.uint8), src])[0]
    np.testing.assert_array_equal(out, ref_codes(dt, src))


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_float64_rounds_once(dt: DType) -> None:
    """A float64 just off a midpoint (by far less than a float32 ulp) rounds to its side;
    through float32 with round-to-nearest it would land on the midpoint and round to even."""
    vals = ref_decode(dt)[:0x7B].astype(np.float64)
    mids = (vals[1:] + vals[:-1]) / 2
    src = np.concatenate(
        [mids * (1 + 2.0**-40), mids * (1 - 2.0**-40), mids, -mids * (1 + 2.0**-40)]
    )
    src = np.concatenate([src, [1e300, -1e300, 1e-300, -1e-300, np.inf, np.nan]])
    out = both(cast_kernel(dtypes.float64, dt, len(src)), [np.zeros(len(src), np.uint8), src])[0]
    np.testing.assert_array_equal(out, ref_codes(dt, src))


def test_float64_to_float16_rounds_once() -> None:
    """The same single rounding for float16 (emulated on the scalar target)."""
    mids = np.array([1 + 2.0**-11, 2049.0, 3 * 2.0**-25, 65520.0, 1 / 3], np.float64)
    src = np.concatenate([mids * (1 + 2.0**-40), mids * (1 - 2.0**-40), mids, -mids])
    i, n = T.rng(len(src), 0), len(src)
    out, x = T.buf(0, dtypes.float16, n), T.buf(1, dtypes.float64, n)
    ast = T.kernel(out.index(i).store(_ld(x, i).cast(dtypes.float16)).end(i))
    got = _run(ast, [np.zeros(n, np.float16), src], "scalar")[0]
    want = np.array([truncate(dtypes.float16)(float(v)) for v in src], np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


# -- the codecs over dense sweeps (NumPy evaluation of the very UOp graphs) ----------------------


def _sweep() -> np.ndarray:
    """Every 257th float32 bit pattern below 0x47800000 (|x| < 65536, past both formats'
    overflow boundary) and a coarser stride above, both signs: about 9 * 10^6 values."""
    low = np.arange(0, 0x47800000, 257, dtype=np.uint32)
    high = np.arange(0x47800000, 0x80000000, 65537, dtype=np.uint32)
    bits = np.concatenate([low, high])
    return np.concatenate([bits, bits | 0x80000000]).view(np.float32)


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_encode_dense_sweep(dt: DType) -> None:
    fmt = FP8[dt]
    x = UOp(Ops.DEFINE_VAR, dtypes.float32, arg=("x", 0, 1))  # a leaf
    values = _sweep()
    got = np_eval(fmt.encode(x), {x: values})
    want = np_codes(fmt, dt, values)
    sample = values[:: len(values) // 4000]
    np.testing.assert_array_equal(np_codes(fmt, dt, sample), ref_codes(dt, sample))
    mismatch = np.flatnonzero(got != want)
    assert mismatch.size == 0, (values[mismatch[:5]], got[mismatch[:5]], want[mismatch[:5]])


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_encode_decode_round_trip_every_code(dt: DType) -> None:
    fmt = FP8[dt]
    x = UOp(Ops.DEFINE_VAR, dtypes.uint8, arg=("x", 0, 1))
    codes = np.arange(256, dtype=np.uint8)
    again = np_eval(fmt.encode(fmt.decode(x)), {x: codes})
    decoded = ref_decode(dt)
    canonical = np.where(np.isnan(decoded), fmt.nan_code, codes)
    # e5m2 infinities saturate to +-max on the way back, as truncate does
    want = ref_codes(dt, decoded)
    np.testing.assert_array_equal(again, want)
    assert (want == canonical).sum() >= 250


# -- conversions and arithmetic ----------------------------------------------------------------

_OTHERS = [
    dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.int32, dtypes.uint32, dtypes.int64,
    dtypes.uint64, dtypes.bool, dtypes.float16, dtypes.bfloat16, dtypes.float64,
]  # fmt: skip
_INT_SRC = np.array([0, 1, -1, 7, 15, 17, 100, 127, -128, 255, 447, 449, 464, 465, 1000, 57344,
                     61439, 61440, 65535, 1 << 20, (1 << 31) - 1, -(1 << 31)], np.int64)  # fmt: skip


def _source(dt: DType) -> np.ndarray:
    if dt is dtypes.bool:
        return np.array([0, 1] * 4, np.bool_)
    if dtypes.is_int(dt):
        lo, hi = dtypes.min(dt), dtypes.max(dt)
        return np.array([v for v in _INT_SRC if lo <= v <= hi] + [lo, hi], STORE_NP[dt])
    vals = np.array([0.0, -0.0, 0.3, -1.7, 2.5, 448.0, 465.0, 6e4, 1e5, np.inf, -np.inf, np.nan,
                     2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-16, 2.0**-17], np.float64)  # fmt: skip
    if dt is dtypes.bfloat16:
        return T.bf16_bits(vals.astype(np.float32))
    with np.errstate(over="ignore"):  # 1e5 is float16 inf
        return vals.astype(STORE_NP[dt])


@pytest.mark.parametrize("other", _OTHERS, ids=[d.name for d in _OTHERS])
@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_cast_from_other_dtype(dt: DType, other: DType) -> None:
    src = _source(other)
    n = len(src)
    out = both(cast_kernel(other, dt, n), [np.zeros(n, np.uint8), src])[0]
    assert out.any() or not src.any()


@pytest.mark.parametrize(
    "other", [*_OTHERS, *dtypes.fp8s], ids=[d.name for d in [*_OTHERS, *dtypes.fp8s]]
)
@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_cast_to_other_dtype(dt: DType, other: DType) -> None:
    codes = np.arange(256, dtype=np.uint8)
    both(cast_kernel(dt, other, 256), [np.zeros(256, STORE_NP[other]), codes])


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_bitcast_through_uint8(dt: DType) -> None:
    n = 256
    i = T.rng(n, 0)
    out, back, x = T.buf(0, dtypes.uint8, n), T.buf(1, dt, n), T.buf(2, dt, n)
    v = _ld(x, i)
    ast = T.kernel(
        out.index(i).store(v.bitcast(dtypes.uint8)).end(i),
        back.index(i).store((v.bitcast(dtypes.int8) + 0).bitcast(dt)).end(i),
    )
    codes = np.arange(256, dtype=np.uint8)
    got = both(ast, [np.zeros(n, np.uint8), np.zeros(n, np.uint8), codes])
    # NaN codes come back canonical; e5m2's infinities come back as +-max: truncate's fp8 is
    # saturating, and uop-core's bitcast of an fp8 value encodes it with truncate
    want = ref_codes(dt, ref_decode(dt))
    # fnuz: the one NaN code (0x80) is canonical, every other code finite
    non_canonical = {dtypes.fp8e4m3: 1, dtypes.fp8e5m2: 7}.get(dt, 0)
    assert (want != codes).sum() == non_canonical  # NaNs, infinities
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)


def _pairs(dt: DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rs = np.random.default_rng(3)
    codes = np.arange(256, dtype=np.uint8)
    a = np.repeat(codes, 4)
    return a, rs.permutation(a), rs.integers(0, 256, len(a)).astype(np.uint8)


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_arithmetic_rounds_every_op(dt: DType) -> None:
    """(a + b) * c - a / c and max(a, -b) in fp8: every op rounds, as ``exec_alu`` does."""
    a, b, c = _pairs(dt)
    n = len(a)
    i = T.rng(n, 0)
    out, mx, xa, xb, xc = (T.buf(k, dt, n) for k in range(5))
    va, vb, vc = _ld(xa, i), _ld(xb, i), _ld(xc, i)
    expr = (va + vb) * vc - va / vc
    ast = T.kernel(
        out.index(i).store(expr).end(i),
        mx.index(i).store(UOp(Ops.MAX, dt, (va, -vb))).end(i),
    )
    got = both(ast, [np.zeros(n, np.uint8), np.zeros(n, np.uint8), a, b, c])
    # the native run is the reference: the emulator executes each fp8 op with exec_alu
    assert (got[0] != 0).sum() > n // 4
