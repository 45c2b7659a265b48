"""Transcendentals from + - * / comparisons and bit operations, for targets without them.

Each function builds, for a float32 or float64 UOp ``x`` — a scalar or a vector, all lanes at
once — a UOp graph computing the function with round-to-nearest float ops only (no fused
multiply-add assumed). The graphs are branch-free and vectorize: special cases are WHERE
selects, range reduction rounds with a magic constant (``x + 1.5 * 2**23`` leaves round(x)
in the low mantissa bits) or exact integer arithmetic, scaling by 2**n is built in the
exponent bits, polynomials are Horner's rule; every integer -> float conversion goes
through int32, and integer products are 32 x 32 -> 64 bits (vector instructions on common
CPUs). float16, bfloat16 and fp8 are computed in float32 and rounded once at the end.
Where the renderer has MULACC natively, exp2's polynomial is fused multiply-adds instead
(fewer instructions, one rounding per step; the same bound).
A renderer chooses per op (``code_for_op``) and, for libm-backed ops it prints natively on
scalars, whether vectors are approximated here instead (``vector_approximated``).
Special values follow IEEE/C99 (and ``exec_alu``): NaN in, NaN out; ``exp2(-inf) = 0``,
``exp2(inf) = inf``; ``log2(+-0) = -inf``, ``log2(x < 0) = NaN``, ``log2(inf) = inf``;
``sin(+-inf) = NaN``, ``sin(-0.0) = -0.0``; denormal inputs and results are exact where
the function is. The error-free transformations (Dekker, two-sum) need IEEE evaluation: with
fast-math reassociation the results lose their extra accuracy (not their special values'
selects or the magic-constant rounding, which reads bits).

Accuracy (float32 measured by tests/codegen/lower/test_transcendental.py over >= 10^6
points per function — random bit patterns over every finite float32, dense sweeps, edge
cases — against NumPy float64; float64 against NumPy long double; "ulp" = the spacing of
the dtype at the true result):

* ``xexp2``: ``x = n + s`` with ``n`` = round(x), ``|s| <= 1/2``, a degree-6 minimax
  polynomial (float32) or Taylor degree 13 (float64) for ``2**s``, exact scaling by
  ``2**n`` in two steps so subnormal results round once. Bound: float32 <= 1.5 ulp,
  float64 <= 1.5 ulp.
* ``xlog2``: ``x = m * 2**e`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` (subnormals scaled up
  by ``2**64`` first), ``log2(m) = 2/ln2 * atanh(t)`` with ``t = (m-1)/(m+1)``, odd
  polynomial in ``t``. float32 evaluates ``t`` and the polynomial in float64 and rounds
  once: <= 0.51 ulp. float64 (and float32 on a target without float64) corrects ``t`` to
  twice the precision (Dekker): <= 2 ulp.
* ``xsin``: float32: Payne-Hanek reduction in exact integer arithmetic for ``|x| >= 1/2``
  (the 24-bit mantissa times a 96-bit window of 2/pi chosen by the exponent, from a 256-bit
  table: quarter turns exact to 2**-70 over the whole finite range; the fraction converted
  to float64 and scaled by pi/2), Taylor polynomials for sin/cos on ``[-pi/4, pi/4]`` in
  float64, one rounding to float32. Bound: <= 0.51 ulp over every finite float32. On a
  target without float64 the fraction becomes a float32 pair (exact pieces, two-sums,
  Dekker product with pi/2) and minimax polynomials run in float32: <= 2 ulp.
  float64: Cody-Waite with pi/2 in four parts (three of 23 bits) and ``n`` split into
  28 + 22 bits, so every product is exact, summed with exact two-sums: <= 2 ulp for
  ``|x| < 2**50``. For ``|x| >= 2**50`` float64 has no exact reduction here: the result is
  ``+-0`` or ``+-1`` (bounded, not sin(x)); a target that needs that range keeps a native
  SIN, and a native float64 SIN is never replaced on vectors (``is_native``).
* ``xsqrt``: reciprocal-square-root bit estimate, Newton steps, one residual correction.
  float32: <= 1 ulp.
* ``xpow``: ``exp2(y * log2|x|)`` with C99 ``pow`` special cases (negative bases with
  integral exponents, zeros, ones, infinities). float32 computes the magnitude in float64
  where the target has it and rounds once: <= 1 ulp. Without a wider type the relative error
  grows with ``|y * log2 x|`` (about ``|y log2 x| * 2**-24``), as in every exp/log pow
  without extra precision.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from fusegrad.codegen.lower.context import Census, LowerContext
from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import DType, Ops, PatternMatcher, UOp, UPat, dtypes

# -- building blocks ------------------------------------------------------------------------------
# Every helper works on scalars and on vectors alike: constants take the operand's dtype
# (a vector CONST is a splat), so a float32.vec(8) input gives one vector graph.

# per float dtype: (int of the same width, mantissa bits, exponent bias)
_LAYOUT: dict[DType, tuple[DType, int, int]] = {
    dtypes.float32: (dtypes.int32, 23, 127),
    dtypes.float64: (dtypes.int64, 52, 1023),
}


def _like(x: UOp, scalar: DType) -> DType:
    """``scalar`` with as many lanes as ``x``."""
    return scalar.vec(x.dtype.count)


def _int_of(x: UOp) -> DType:
    """The integer dtype of ``x``'s float width, with ``x``'s lanes."""
    return _like(x, _LAYOUT[x.dtype.scalar()][0])


def _c(x: UOp, v: float | int) -> UOp:
    return UOp.const(v, x.dtype)


def _where(c: UOp, a: UOp, b: UOp | float | int) -> UOp:
    return UOp(Ops.WHERE, a.dtype, (c, a, b if isinstance(b, UOp) else _c(a, b)))


def _poly(x: UOp, coefficients: list[float], fused: bool = False) -> UOp:
    """c0 + x*(c1 + x*(c2 + ...)) by Horner's rule; ``fused``: each step one fused
    multiply-add (MULACC, one rounding) instead of a multiply and an add."""
    out = _c(x, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        out = UOp(Ops.MULACC, x.dtype, (out, x, _c(x, c))) if fused else out * x + c
    return out


def _is_nan(x: UOp) -> UOp:
    return x.ne(x)


def _abs_bits(x: UOp) -> tuple[UOp, UOp]:
    """(|x|, the sign bit of x as an int of x's width) by masking the sign bit."""
    bits = x.bitcast(_int_of(x))
    top = -(1 << (x.dtype.scalar().bitsize - 1))
    return (bits & ~top).bitcast(x.dtype), bits & top


def _pow2(n: UOp, dt: DType) -> UOp:
    """2**n as float ``dt`` for an int ``n`` in the normal exponent range."""
    _, mbits, bias = _LAYOUT[dt.scalar()]
    return ((n + bias) << mbits).bitcast(dt)


def _ldexp(p: UOp, n: UOp) -> UOp:
    """p * 2**n in two exact halves, so a subnormal result rounds only once."""
    half = n >> 1
    return p * _pow2(half, p.dtype) * _pow2(n - half, p.dtype)


_MAGIC = {
    dtypes.float32: (1.5 * 2.0**23, 0x4B400000),
    dtypes.float64: (1.5 * 2.0**52, 0x4338 << 48),
}


def _round_magic(x: UOp) -> UOp:
    """x rounded to the nearest integer (half to even) as an int of x's width, for |x| <
    2**22 (float32) / 2**51 (float64): adding 1.5 * 2**mantissa_bits leaves the integer in
    the low mantissa bits. (Not ``(x + magic) - magic`` as a float: fast-math would fold it.)"""
    magic, bits = _MAGIC[x.dtype.scalar()]
    return (x + magic).bitcast(_int_of(x)) - bits


def _small_int_float(n: UOp, dt: DType) -> UOp:
    """int ``n`` with |n| < 2**31 as float ``dt``, converted through int32 (int64 -> float64
    is no vector instruction on most CPUs; int32 -> float is)."""
    return n.cast(_like(n, dtypes.int32)).cast(dt)


def _split(a: UOp) -> tuple[UOp, UOp]:
    """Veltkamp: a = hi + lo exactly, each with half the mantissa bits."""
    big = a * (4097.0 if a.dtype.scalar() is dtypes.float32 else 134217729.0)
    hi = big - (big - a)
    return hi, a - hi


def _two_prod(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """Dekker: (p, e) with p = fl(a*b) and a*b = p + e exactly (no FMA needed)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sum(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """Knuth: (s, e) with s = fl(a+b) and a+b = s + e exactly, for any a, b."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _const_pair(x: UOp, v: float) -> tuple[UOp, UOp]:
    """``v`` as an unevaluated sum hi + lo of two values of ``x``'s dtype."""
    hi = _c(x, v)
    return hi, _c(x, v - float(hi.arg))


# -- exp2 ---------------------------------------------------------------------------------------

_EXP2_F32 = [
    1.0000000005920437, 0.6931472056016392, 0.2402264660866386, 0.05550328995098368,
    0.00961851953164547, 0.001339986133888929, 0.00015337579796881155,
]  # fmt: skip
_EXP2_F64 = [math.log(2) ** k / math.factorial(k) for k in range(14)]
_EXP2_CLAMP = {dtypes.float32: (-160.0, 130.0), dtypes.float64: (-1100.0, 1030.0)}


def xexp2(x: UOp, fused: bool = False) -> UOp:
    """2**x (float32/float64); ``fused``: the polynomial in fused multiply-adds (a target
    with MULACC: 6 of about 30 instructions per float32 vector fewer; softmax's exp-and-sum
    kernel over 4096x4096 on one AVX2 core 14.1 -> 11.4 ms)."""
    lo, hi = _EXP2_CLAMP[x.dtype.scalar()]
    xc = _where(x < lo, _c(x, lo), _where(_c(x, hi) < x, _c(x, hi), x))
    n = _round_magic(xc)
    p = _poly(
        xc - _small_int_float(n, x.dtype),
        _EXP2_F32 if x.dtype.scalar() is dtypes.float32 else _EXP2_F64,
        fused,
    )
    return _where(_is_nan(x), x, _ldexp(p, n))


# -- log2 ---------------------------------------------------------------------------------------

_LN2 = math.log(2)
_LOG2_F32 = [2 / _LN2 / (2 * k + 1) for k in range(7)]  # evaluated in float64
_LOG2_F32_NARROW = [2 / _LN2 / (2 * k + 1) for k in range(5)]  # evaluated in float32
_LOG2_F64 = [2 / _LN2 / (2 * k + 1) for k in range(12)]


def _mantissa_exponent(x: UOp) -> tuple[UOp, UOp]:
    """(m, e) with x = m * 2**e, m in [sqrt(1/2), sqrt(2)) for finite x > 0; e as a float."""
    idt = _int_of(x)
    _, mbits, bias = _LAYOUT[x.dtype.scalar()]
    tiny = x < 2.0 ** (1 - bias)
    bits = _where(tiny, x * 2.0**64, x).bitcast(idt)
    m = ((bits & ((1 << mbits) - 1)) | (bias << mbits)).bitcast(x.dtype)
    field = _small_int_float(bits >> mbits, x.dtype)
    big = _c(x, math.sqrt(2)) < m
    e = field - _where(tiny, _c(x, bias + 64), _c(x, bias)) + _where(big, _c(x, 1.0), 0.0)
    return _where(big, m * 0.5, m), e


def _atanh_ratio(m: UOp) -> UOp:
    """t = (m-1)/(m+1) to about twice the working precision's accuracy: m-1 is exact, the
    rounding of m+1 and of the quotient are corrected with an exact (Dekker) product."""
    f = m - 1.0
    d = m + 1.0
    d_err = m - (d - 1.0)  # m + 1 = d + d_err exactly
    t = f / d
    p, e = _two_prod(t, d)
    residual = ((f - p) - e) - t * d_err
    return t + residual / d


def _log2_f32(m: UOp, e: UOp) -> UOp:
    """e + log2(m) for float32 m, e, evaluated in float64 and rounded once."""
    f64 = _like(m, dtypes.float64)
    md = m.cast(f64)
    t = (md - 1.0) / (md + 1.0)  # m - 1 exact: relative error 2**-52
    out = e.cast(f64) + t * _poly(t * t, _LOG2_F32)
    return out.cast(m.dtype)


def _log2_same_width(m: UOp, e: UOp) -> UOp:
    """e + log2(m) in m's own dtype, ``t`` corrected to twice the precision (Dekker)."""
    coefficients = _LOG2_F64 if m.dtype.scalar() is dtypes.float64 else _LOG2_F32_NARROW
    t = _atanh_ratio(m)
    c_hi, c_lo = _const_pair(m, coefficients[0])
    t2 = t * t
    rest = t * c_lo + t * t2 * _poly(t2, coefficients[1:])
    return e + (t * c_hi + rest)


def xlog2(x: UOp, wide: bool = True) -> UOp:
    """log2(x) (float32/float64); ``wide=False``: float32 without float64 steps."""
    m, e = _mantissa_exponent(x)
    f32 = x.dtype.scalar() is dtypes.float32
    out = (_log2_f32 if f32 and wide else _log2_same_width)(m, e)
    out = _where(x.ne(math.inf), out, math.inf)
    out = _where(x.ne(0.0), out, -math.inf)
    return _where((x < 0.0) | _is_nan(x), _c(x, math.nan), out)


# -- sin ----------------------------------------------------------------------------------------

# float32 sin/cos: Taylor polynomials on [-pi/4, pi/4] evaluated in float64 (truncation
# below 2**-36 relative)
_SIN_F32 = [(-1) ** k / math.factorial(2 * k + 1) for k in range(6)]
_COS_F32 = [(-1) ** k / math.factorial(2 * k) for k in range(7)]
# float32 without float64: minimax polynomials evaluated in float32
_SIN_F32_NARROW = [0.9999999999954468, -0.1666666663042193, 0.008333328688192393,
                   -0.0001983917784700237, 2.7171486706688286e-06]  # fmt: skip
_COS_F32_NARROW = [0.9999999999438662, -0.4999999957122314, 0.04166661320735704,
                   -0.0013886528483017524, 2.43726259782015e-05]  # fmt: skip
_SIN_F64 = [(-1) ** k / math.factorial(2 * k + 1) for k in range(9)]
_COS_F64 = [(-1) ** k / math.factorial(2 * k) for k in range(10)]
# 2/pi as 8 little-endian 32-bit words: floor(2/pi * 2**256)
_TWO_OVER_PI = (
    0xDEBBC561, 0xFE5163AB, 0x3C439041, 0xDB629599, 0xF534DDC0, 0xFC2757D1, 0x4E441529,
    0xA2F9836E, 0,
)  # fmt: skip
_M32 = 0xFFFFFFFF


def _table_word(a: UOp, offset: int) -> UOp:
    """_TWO_OVER_PI[a + offset] as uint32 for an int32 word index ``a`` in 1..5."""
    u32 = _like(a, dtypes.uint32)
    out = UOp.const(_TWO_OVER_PI[1 + offset], u32)
    for k in range(2, 6):
        out = _where(a.ne(k), out, UOp.const(_TWO_OVER_PI[k + offset], u32))
    return out


def _window(ax: UOp) -> tuple[UOp, list[UOp]]:
    """(the 24-bit mantissa of float32 ``ax``, the three 32-bit words of 2/pi that multiply
    it into the quarter turns around the binary point), as uint64 for the products."""
    bits = ax.bitcast(_like(ax, dtypes.int32))
    u32, u64 = _like(ax, dtypes.uint32), _like(ax, dtypes.uint64)
    shift = 312 - (bits >> 23)  # |x| >= 1/2: 58..186 bits below the top of the table
    a, b = shift >> 5, (shift & 31).cast(u32)
    words = [_table_word(a, j) for j in range(4)]
    # funnel shifts; (w << 1) << (31 - b) is w << (32 - b) without a shift by 32
    w = [(words[j] >> b) | ((words[j + 1] << 1) << (31 - b)) for j in range(3)]
    mant = ((bits & 0x7FFFFF) | 0x800000).cast(u64)
    return mant, [v.cast(u64) for v in w]


def _quarter_turns(ax: UOp) -> tuple[UOp, UOp, UOp]:
    """Payne-Hanek for float32 |x| >= 1/2 in exact integer arithmetic: the 24-bit mantissa
    times a 96-bit window of 2/pi chosen by the exponent gives the quarter turns to 2**-70.
    (quadrant in 0..3 as int32, the fraction of a quarter turn as uint64 in units of 2**-62
    offset by 2**61, the next 32 bits as uint64.) Only 32x32->64-bit products and 64-bit
    adds/shifts: vector instructions on common CPUs."""
    mant, (w_lo, w_mid, w_hi) = _window(ax)
    p_lo, p_mid, p_hi = mant * w_lo, mant * w_mid, mant * w_hi
    mid_full = p_mid + (p_lo >> 32)
    hi = (p_hi + (mid_full >> 32) + 0x20000000) & _M32  # + 2**93: round to nearest quadrant
    quadrant = (hi >> 30).cast(_like(ax, dtypes.int32))
    return quadrant, ((hi & 0x3FFFFFFF) << 32) | (mid_full & _M32), p_lo & _M32


def _reduce_f32(ax: UOp) -> tuple[UOp, UOp]:
    """(quadrant, r in [-pi/4, pi/4] as float64) with |x| = (quadrant + 4k) * pi/2 + r, for
    float32 |x| >= 1/2: ``_quarter_turns``, the fraction converted to float64 through int32
    pieces (vector conversions) and scaled by pi/2."""
    quadrant, frac, p_lo = _quarter_turns(ax)
    f64 = _like(ax, dtypes.float64)
    top = (_small_int_float(frac >> 31, f64) - 2.0**30) * 2.0**31
    low = _small_int_float(frac & 0x7FFFFFFF, f64)
    lowest = _small_int_float(p_lo >> 1, f64) * 2.0**-31
    turns = top + (low + lowest)  # exact but for the last two adds: relative error 2**-52
    return quadrant, turns * (math.pi / 2 * 2.0**-62)


def _reduce_f32_narrow(ax: UOp) -> tuple[UOp, UOp]:
    """``_reduce_f32`` without float64: the fraction as a float32 pair (exact pieces of at
    most 24 bits, two-sums), times pi/2 as a pair (Dekker); r as float32."""
    quadrant, frac, p_lo = _quarter_turns(ax)
    i32, f32 = _like(ax, dtypes.int32), ax.dtype
    pieces = [
        ((frac >> 38).cast(i32) - (1 << 23)).cast(f32) * 2.0**-24,  # offset removed
        ((frac >> 14) & 0xFFFFFF).cast(i32).cast(f32) * 2.0**-48,
        (frac & 0x3FFF).cast(i32).cast(f32) * 2.0**-62 + (p_lo >> 8).cast(i32).cast(f32) * 2.0**-86,
    ]  # fmt: skip
    turns, err = _two_sum(pieces[0], pieces[1])
    err = err + pieces[2]
    pio2_hi, pio2_lo = _const_pair(turns, math.pi / 2)
    r, r_err = _two_prod(turns, pio2_hi)
    return quadrant, r + (r_err + (turns * pio2_lo + err * pio2_hi))


# pi/2 in four parts, the first three of 23 significant bits: a part times an integer of at
# most 30 bits is exact
_PIO2_F64 = (
    1.570796251296997,
    7.549789415861596e-08,
    5.390302529957765e-15,
    3.2820035428735005e-22,
)
_F64_EXACT = 2.0**50  # |x| below this: exact reduction (n < 2**50, split 28 + 22 bits)


def _reduce_f64(ax: UOp) -> tuple[UOp, UOp, UOp]:
    """(quadrant, r_hi, r_lo) for float64 |x| < 2**50 by Cody-Waite: n = round(x * 2/pi) is
    split into n_hi (multiple of 2**22, <= 28 bits) + n_lo (< 2**22), so each n_* * part is
    an exact product; their sum with x is accumulated with exact two-sums (the reduced
    argument is exact to about 2**-72 absolute at |x| = 2**50, 2**-100 at 2**30)."""
    ni = _round_magic(ax * (2 / math.pi))
    n_lo = _small_int_float(ni & ((1 << 22) - 1), ax.dtype)
    n_hi = _small_int_float(ni >> 22, ax.dtype) * 2.0**22
    n = n_hi + n_lo
    r = ax - n_hi * _PIO2_F64[0]  # exact: within a factor 2 of ax (or n_hi = 0)
    err = _c(ax, 0.0)
    for term in (n_lo * _PIO2_F64[0], n_hi * _PIO2_F64[1], n_lo * _PIO2_F64[1],
                 n_hi * _PIO2_F64[2], n_lo * _PIO2_F64[2]):  # fmt: skip
        r, e = _two_sum(r, -term)
        err = err + e
    err = err - n * _PIO2_F64[3]
    hi = r + err
    return (ni & 3).cast(_like(ax, dtypes.int32)), hi, err - (hi - r)


def _sin_kernel(r: UOp, sin_c: list[float]) -> UOp:
    return r + r * (r * r) * _poly(r * r, sin_c[1:])


def _sign_flip(value: UOp, quadrant: UOp, sign_bit: UOp) -> UOp:
    """``value`` negated for quadrants 2 and 3, then given the sign of x (bit operations)."""
    idt = _int_of(value)
    top = -(1 << (value.dtype.scalar().bitsize - 1))
    flip = _where((quadrant & 2).ne(0), UOp.const(top, idt), 0)
    return (value.bitcast(idt) ^ sign_bit ^ flip).bitcast(value.dtype)


def _sin_f32(ax: UOp, wide: bool) -> tuple[UOp, UOp]:
    """(|sin| or |cos| of the reduced argument, quadrant). ``wide``: the polynomials run in
    float64 on the float64 reduced argument, so the float32 result rounds once; else all in
    float32."""
    small = ax < 0.5
    big = _where(ax < math.inf, ax, 1.0)  # inf/NaN: any finite stand-in
    reduce = _reduce_f32 if wide else _reduce_f32_narrow
    quadrant, r = reduce(_where(small, _c(ax, 1.0), big))
    quadrant = _where(small, UOp.const(0, quadrant.dtype), quadrant)
    r = _where(small, ax.cast(r.dtype), r)
    sin_c, cos_c = (_SIN_F32, _COS_F32) if wide else (_SIN_F32_NARROW, _COS_F32_NARROW)
    value = _where((quadrant & 1).ne(0), _poly(r * r, cos_c), _sin_kernel(r, sin_c))
    return value.cast(ax.dtype), quadrant


def _sin_f64(ax: UOp, wide: bool) -> tuple[UOp, UOp]:
    exact = ax < _F64_EXACT
    quadrant, r, r_lo = _reduce_f64(_where(exact, ax, 1.0))
    # |x| >= 2**50 (and inf/NaN): no exact reduction here; r = 0 keeps the result in [-1, 1]
    r, r_lo = _where(exact, r, 0.0), _where(exact, r_lo, 0.0)
    r2 = r * r
    # sin(r + lo) = sin r + lo cos r, cos(r + lo) = cos r - lo sin r, to first order in lo
    sin_v = r + (r * r2 * _poly(r2, _SIN_F64[1:]) + r_lo * (1.0 - 0.5 * r2))
    cos_v = _poly(r2, _COS_F64) - r_lo * r
    return _where((quadrant & 1).ne(0), cos_v, sin_v), quadrant


def xsin(x: UOp, wide: bool = True) -> UOp:
    """sin(x) (float32/float64); ``wide=False``: float32 without float64 steps."""
    ax, sign_bit = _abs_bits(x)
    value, quadrant = (_sin_f32 if x.dtype.scalar() is dtypes.float32 else _sin_f64)(ax, wide)
    return _where(_is_nan(x - x), _c(x, math.nan), _sign_flip(value, quadrant, sign_bit))


# -- sqrt ---------------------------------------------------------------------------------------

_RSQRT_MAGIC = {dtypes.float32: 0x5F3759DF, dtypes.float64: 0x5FE6EB50C7B537A9}


def xsqrt(x: UOp) -> UOp:
    """sqrt(x) (float32/float64)."""
    _, _, bias = _LAYOUT[x.dtype.scalar()]
    tiny = x < 2.0 ** (1 - bias)
    xs = _where(tiny, x * 2.0**64, x)
    y = UOp.const(_RSQRT_MAGIC[x.dtype.scalar()], _int_of(x)) - (xs.bitcast(_int_of(x)) >> 1)
    y = y.bitcast(x.dtype)
    for _ in range(3 if x.dtype.scalar() is dtypes.float32 else 5):
        y = y * (1.5 - 0.5 * xs * y * y)
    s = xs * y
    s = s + 0.5 * y * (xs - s * s)
    s = _where(tiny, s * 2.0**-32, s)
    s = _where(x.ne(math.inf), s, math.inf)
    s = _where(x.ne(0.0), s, x)
    return _where((x < 0.0) | _is_nan(x), _c(x, math.nan), s)


# -- pow ----------------------------------------------------------------------------------------


def _is_integral(y: UOp) -> UOp:
    return UOp(Ops.TRUNC, y.dtype, (y,)).ne(y).ne(True)


def xpow(
    x: UOp,
    y: UOp,
    exp2: Callable[[UOp], UOp],
    log2: Callable[[UOp], UOp],
    wide: DType | None = None,
) -> UOp:
    """x ** y (float32/float64) from ``exp2``/``log2`` (native or approximated); with
    ``wide`` (float64 for a float32 pow) the magnitude 2**(y log2|x|) is computed in that
    dtype (``exp2``/``log2`` work on it) and rounded once."""
    ax = _where(x < 0.0, -x, x)
    if wide is None:
        magnitude = exp2(y * log2(ax))
    else:
        wide_dt = _like(x, wide)
        magnitude = exp2(y.cast(wide_dt) * log2(ax.cast(wide_dt))).cast(x.dtype)
    odd = _is_integral(y) & _is_integral(y * 0.5).ne(True)
    negative = x.bitcast(_int_of(x)) < 0  # sign bit set: -0.0 too
    signed = _where(negative & odd, -magnitude, magnitude)
    finite_negative = (x < 0.0) & (_c(x, -math.inf) < x)
    out = _where(finite_negative & _is_integral(y).ne(True), _c(x, math.nan), signed)
    out = _where(ax.ne(1.0).ne(True) & (y - y).ne(y - y), _c(x, 1.0), out)  # |x| = 1, y = +-inf
    out = _where(_is_nan(x) | _is_nan(y), _c(x, math.nan), out)
    out = _where(x.ne(1.0), out, 1.0)
    return _where(y.ne(0.0), out, 1.0)


# -- the pass -----------------------------------------------------------------------------------

_NARROW = (dtypes.float16, dtypes.bfloat16, *dtypes.fp8s)
_UNARY: dict[Ops, Callable[[UOp], UOp]] = {
    Ops.EXP2: xexp2,
    Ops.LOG2: xlog2,
    Ops.SIN: xsin,
    Ops.SQRT: xsqrt,
}


def _as_vconst(graph: UOp) -> UOp:
    """``graph`` with its vector-typed CONSTs (splats) as VCONSTs, the vector constant form
    every renderer prints (a C renderer works on single lanes of a vector operand)."""
    splats = {
        c: UOp.vconst((c.arg,) * c.dtype.count, c.dtype)
        for c in graph.toposort()
        if c.op is Ops.CONST and c.dtype.count > 1 and not c.src
    }
    return graph.substitute(splats) if splats else graph


def _on_operands(u: UOp, fn: Callable[..., UOp]) -> UOp:
    """``fn`` on the operands of ``u`` — a whole vector at once (every helper is lane-wise), the
    narrow floats through float32."""
    if u.dtype.scalar() in _NARROW:
        wide = _like(u, dtypes.float32)
        return _as_vconst(fn(*(s.cast(wide) for s in u.src)).cast(u.dtype))
    return _as_vconst(fn(*u.src))


def is_native(renderer: Renderer, op: Ops, dt: DType) -> bool:
    """The renderer prints ``op`` on values of ``dt`` itself (else: approximate it here).
    ``vector_approximated`` never applies to float64 SIN: its approximation is exact only for
    ``|x| < 2**50``, a native (libm) sin is right everywhere."""
    if op not in renderer.code_for_op:
        return False
    full_range = not (op is Ops.SIN and dt.scalar() is dtypes.float64)
    return not (dt.count > 1 and op in renderer.vector_approximated and full_range)


def needs_approximation(census: Census, ctx: LowerContext) -> bool:
    """The stage's skip test: the graph has a transcendental the target won't print itself
    (lacking the op, or a vector of an op in ``vector_approximated``)."""
    present = census.ops & {*_UNARY, Ops.POW}
    table, vectors = ctx.renderer.code_for_op, ctx.renderer.vector_approximated
    return any(op not in table or (census.vectors and op in vectors) for op in present)


def _approximation(ctx: LowerContext, op: Ops) -> Callable[[UOp], UOp]:
    """The approximation of ``op`` for the target: float32 sin/log2 take float64 steps only
    where the target has float64."""
    if op in (Ops.SIN, Ops.LOG2) and dtypes.float64 not in ctx.renderer.supported_dtypes:
        return functools.partial(xsin if op is Ops.SIN else xlog2, wide=False)
    if op is Ops.EXP2 and Ops.MULACC in ctx.renderer.code_for_op:
        return functools.partial(xexp2, fused=True)
    return _UNARY[op]


def _approximate(ctx: LowerContext, u: UOp) -> UOp | None:
    if is_native(ctx.renderer, u.op, u.dtype) or not dtypes.is_float(u.dtype.scalar()):
        return None
    return _on_operands(u, _approximation(ctx, u.op))


def _native_or_approx(ctx: LowerContext, op: Ops, dt: DType) -> Callable[[UOp], UOp]:
    if is_native(ctx.renderer, op, dt):
        return lambda v: UOp(op, v.dtype, (v,))
    return _approximation(ctx, op)


def _approximate_pow(ctx: LowerContext, u: UOp) -> UOp | None:
    """float32 (and narrower) pow computes its magnitude in float64 where the target has it
    (and a 64-bit integer ALU):
    in float32 the error of y log2|x| is magnified by |y log2 x| (~100 ulps for 1e15**2.5)."""
    if is_native(ctx.renderer, u.op, u.dtype) or not dtypes.is_float(u.dtype.scalar()):
        return None
    wide = None
    # float64 exp2/log2 approximations read int64 bits: a 64-bit integer ALU too
    has_float64 = dtypes.float64 in ctx.renderer.supported_dtypes
    if u.dtype.scalar() is not dtypes.float64 and has_float64 and not ctx.renderer.no_int64_alu:
        wide = dtypes.float64
    inner = _like(u, wide) if wide is not None else u.dtype
    exp2 = _native_or_approx(ctx, Ops.EXP2, inner)
    log2 = _native_or_approx(ctx, Ops.LOG2, inner)
    return _on_operands(u, lambda x, y: xpow(x, y, exp2, log2, wide))


pm_transcendental = PatternMatcher(
    [
        (UPat(tuple(_UNARY), name="u"), _approximate),  # exp2/log2/sin/sqrt -> polynomials
        (UPat(Ops.POW, name="u"), _approximate_pow),  # pow -> exp2(y * log2|x|) + special cases
    ]
)
