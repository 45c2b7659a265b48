"""Transcendentals from + - * / comparisons and bit operations, for targets without them.

Each function builds, for a float32 or float64 UOp ``x``, a UOp graph computing the function
with round-to-nearest float ops only (no fused multiply-add assumed). float16, bfloat16 and
fp8 are computed in float32 and rounded once at the end. Special values follow IEEE/C99
(and ``exec_alu``): NaN in, NaN out; ``exp2(-inf) = 0``, ``exp2(inf) = inf``; ``log2(0) =
-inf``, ``log2(x < 0) = NaN``, ``log2(inf) = inf``; ``sin(+-inf) = NaN``, ``sin(-0.0) = -0.0``;
denormal inputs and results are exact where the function is.

Accuracy (measured by tests/codegen/lower/test_transcendental.py over >= 10^6 float32 points
per function, including edge cases, against NumPy float64; "ulp" = the float32 spacing at
the true result):

* ``xexp2``: range split ``x = n + s``, ``|s| <= 1/2``, a degree-6 polynomial (float32) or
  Taylor degree 13 (float64) for ``2**s``, exact scaling by ``2**n`` in two steps so
  subnormal results round once. float32: <= 1.5 ulp.
* ``xlog2``: ``x = m * 2**e`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` (subnormals scaled up by
  ``2**64`` first), ``log2(m) = 2/ln2 * atanh(t)`` with ``t = (m-1)/(m+1)``, odd polynomial in
  ``t``. float32: <= 2 ulp.
* ``xsin``: Payne-Hanek reduction in exact integer arithmetic for ``|x| >= 1/2`` (float32:
  a 96-bit window of 2/pi from a 256-bit table, chosen by the exponent, times the 24-bit
  mantissa, so the reduced argument is exact to 2**-70 quarter turns over the whole finite
  range), polynomials for sin/cos on ``[-pi/4, pi/4]``. float32: <= 2 ulp. float64 uses a
  three-part Cody-Waite reduction, accurate for ``|x| < 2**30``.
* ``xsqrt``: reciprocal-square-root bit estimate, Newton steps, one residual correction.
  float32: <= 1 ulp.
* ``xpow``: ``exp2(y * log2|x|)`` with C99 ``pow`` special cases (negative bases with
  integral exponents, zeros, ones, infinities). Its relative error grows with
  ``|y * log2 x|`` (about ``|y log2 x| * 2**-24``), as in every exp/log pow without extra
  precision.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.simplify import gep
from fusegrad.uop import DType, Ops, PatternMatcher, UOp, UPat, dtypes

# -- building blocks ------------------------------------------------------------------------------

# per float dtype: (int of the same width, mantissa bits, exponent bias)
_LAYOUT: dict[DType, tuple[DType, int, int]] = {
    dtypes.float32: (dtypes.int32, 23, 127),
    dtypes.float64: (dtypes.int64, 52, 1023),
}


def _c(x: UOp, v: float | int) -> UOp:
    return UOp.const(x.dtype, v)


def _lt(a: UOp, b: UOp | float) -> UOp:
    return UOp(Ops.CMPLT, dtypes.bool, (a, b if isinstance(b, UOp) else _c(a, b)))


def _ne(a: UOp, b: UOp | float) -> UOp:
    return UOp(Ops.CMPNE, dtypes.bool, (a, b if isinstance(b, UOp) else _c(a, b)))


def _where(c: UOp, a: UOp, b: UOp) -> UOp:
    return UOp(Ops.WHERE, a.dtype, (c, a, b))


def _poly(x: UOp, coefficients: list[float]) -> UOp:
    """c0 + x*(c1 + x*(c2 + ...)) by Horner's rule."""
    out = _c(x, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        out = out * x + c
    return out


def _is_nan(x: UOp) -> UOp:
    return _ne(x, x)


def _pow2(n: UOp, dt: DType) -> UOp:
    """2**n as float ``dt`` for an int ``n`` in the normal exponent range."""
    _, mbits, bias = _LAYOUT[dt]
    return ((n + bias) << mbits).bitcast(dt)


def _ldexp(p: UOp, n: UOp) -> UOp:
    """p * 2**n in two exact halves, so a subnormal result rounds only once."""
    half = n >> 1
    return p * _pow2(half, p.dtype) * _pow2(n - half, p.dtype)


def _split(a: UOp) -> tuple[UOp, UOp]:
    """Veltkamp: a = hi + lo exactly, each with half the mantissa bits."""
    big = a * (4097.0 if a.dtype is dtypes.float32 else 134217729.0)
    hi = big - (big - a)
    return hi, a - hi


def _two_prod(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """Dekker: (p, e) with p = fl(a*b) and a*b = p + e exactly (no FMA needed)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _const_pair(x: UOp, v: float) -> tuple[UOp, UOp]:
    """``v`` as an unevaluated sum hi + lo of two values of ``x``'s dtype."""
    hi = _c(x, v)
    return hi, _c(x, v - float(hi.arg))


def _round_to_int(x: UOp, idt: DType) -> UOp:
    """x rounded to a nearby integer (half away from zero), as int ``idt``."""
    return (x + _where(_lt(x, 0.0), _c(x, -0.5), _c(x, 0.5))).cast(idt)


# -- exp2 ---------------------------------------------------------------------------------------

_EXP2_F32 = [
    1.0000000005920437, 0.6931472056016392, 0.2402264660866386, 0.05550328995098368,
    0.00961851953164547, 0.001339986133888929, 0.00015337579796881155,
]  # fmt: skip
_EXP2_F64 = [math.log(2) ** k / math.factorial(k) for k in range(14)]
_EXP2_CLAMP = {dtypes.float32: (-160.0, 130.0), dtypes.float64: (-1100.0, 1030.0)}


def xexp2(x: UOp) -> UOp:
    """2**x (float32/float64)."""
    idt = _LAYOUT[x.dtype][0]
    lo, hi = _EXP2_CLAMP[x.dtype]
    xc = _where(_lt(x, lo), _c(x, lo), _where(_lt(_c(x, hi), x), _c(x, hi), x))
    n = _round_to_int(xc, idt)
    s = xc - n.cast(x.dtype)
    p = _poly(s, _EXP2_F32 if x.dtype is dtypes.float32 else _EXP2_F64)
    return _where(_is_nan(x), x, _ldexp(p, n))


# -- log2 ---------------------------------------------------------------------------------------

_LN2 = math.log(2)
_LOG2_F32 = [2 / _LN2 / (2 * k + 1) for k in range(5)]
_LOG2_F64 = [2 / _LN2 / (2 * k + 1) for k in range(12)]


def _mantissa_exponent(x: UOp) -> tuple[UOp, UOp]:
    """(m, e) with x = m * 2**e, m in [sqrt(1/2), sqrt(2)) for finite x > 0."""
    idt, mbits, bias = _LAYOUT[x.dtype]
    tiny = _lt(x, 2.0 ** (1 - bias))
    xs = _where(tiny, x * 2.0**64, x)
    bits = xs.bitcast(idt)
    e = (bits >> mbits) - bias - _where(tiny, UOp.const(idt, 64), UOp.const(idt, 0))
    m = ((bits & ((1 << mbits) - 1)) | (bias << mbits)).bitcast(x.dtype)
    big = _lt(_c(x, math.sqrt(2)), m)
    return _where(big, m * 0.5, m), _where(big, e + 1, e)


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


def xlog2(x: UOp) -> UOp:
    """log2(x) (float32/float64)."""
    m, e = _mantissa_exponent(x)
    t = _atanh_ratio(m)
    coefficients = _LOG2_F32 if x.dtype is dtypes.float32 else _LOG2_F64
    c_hi, c_lo = _const_pair(x, coefficients[0])
    t2 = t * t
    rest = t * c_lo + t * t2 * _poly(t2, coefficients[1:])
    out = e.cast(x.dtype) + (t * c_hi + rest)
    inf = _c(x, math.inf)
    out = _where(_ne(x, inf), out, inf)
    out = _where(_ne(x, 0.0), out, -inf)
    return _where(_lt(x, 0.0) | _is_nan(x), _c(x, math.nan), out)


# -- sin ----------------------------------------------------------------------------------------

_SIN_F32 = [0.9999999999954468, -0.1666666663042193, 0.008333328688192393, -0.0001983917784700237,
            2.7171486706688286e-06]  # fmt: skip
_COS_F32 = [0.9999999999438662, -0.4999999957122314, 0.04166661320735704, -0.0013886528483017524,
            2.43726259782015e-05]  # fmt: skip
_SIN_F64 = [(-1) ** k / math.factorial(2 * k + 1) for k in range(9)]
_COS_F64 = [(-1) ** k / math.factorial(2 * k) for k in range(10)]
# 2/pi as 8 little-endian 32-bit words: floor(2/pi * 2**256)
_TWO_OVER_PI = (
    0xDEBBC561, 0xFE5163AB, 0x3C439041, 0xDB629599, 0xF534DDC0, 0xFC2757D1, 0x4E441529,
    0xA2F9836E, 0,
)  # fmt: skip
_M32 = 0xFFFFFFFF


def _u64(v: int) -> UOp:
    return UOp.const(dtypes.uint64, v)


def _table_word(a: UOp, offset: int) -> UOp:
    """_TWO_OVER_PI[a + offset] for a runtime word index ``a`` in 1..5."""
    out = _u64(_TWO_OVER_PI[1 + offset])
    for k in range(2, 6):
        out = _where(UOp(Ops.CMPNE, dtypes.bool, (a, _u64(k))), out, _u64(_TWO_OVER_PI[k + offset]))
    return out


def _reduce_f32(ax: UOp) -> tuple[UOp, UOp]:
    """(quadrant in 0..3, r in [-pi/4, pi/4]) with |x| = (quadrant + 4k) * pi/2 + r, for
    float32 |x| >= 1/2, by exact integer arithmetic (Payne-Hanek)."""
    bits = ax.bitcast(dtypes.uint32).cast(dtypes.uint64)
    mant = (bits & 0x7FFFFF) | 0x800000
    shift = _u64(312) - (bits >> 23)
    a, b = shift >> 5, shift & 31
    words = [_table_word(a, j) for j in range(4)]
    w = [((words[j] >> b) | (words[j + 1] << (_u64(32) - b))) & _M32 for j in range(3)]
    p_lo, p_mid, p_hi = (mant * w[0], mant * w[1], mant * w[2])
    mid_full = p_mid + (p_lo >> 32)
    hi = (p_hi + (mid_full >> 32) + 0x20000000) & _M32  # + 2**93: round to nearest quadrant
    quadrant = hi >> 30
    top = (((hi & 0x3FFFFFFF) << 32) | (mid_full & _M32)).cast(dtypes.int64) - (1 << 61)
    turns_hi = top.cast(dtypes.float32)
    rest = (top - turns_hi.cast(dtypes.int64)).cast(dtypes.float32) * 2.0**-62
    turns_lo = rest + (p_lo & _M32).cast(dtypes.float32) * 2.0**-94
    turns_hi = turns_hi * 2.0**-62
    pio2_hi, pio2_lo = _const_pair(turns_hi, math.pi / 2)
    r, r_err = _two_prod(turns_hi, pio2_hi)
    return quadrant.cast(dtypes.int32), r + (r_err + (turns_hi * pio2_lo + turns_lo * pio2_hi))


_PIO2_F64 = (1.5707963267341256, 6.077100506506192e-11, 2.0222662487959506e-21)


def _reduce_f64(ax: UOp) -> tuple[UOp, UOp]:
    """(quadrant, r) for float64 by three-part Cody-Waite (exact steps for |x| < 2**30)."""
    n = _round_to_int(ax * (2 / math.pi), dtypes.int64)
    nf = n.cast(dtypes.float64)
    r = ((ax - nf * _PIO2_F64[0]) - nf * _PIO2_F64[1]) - nf * _PIO2_F64[2]
    return (n & 3).cast(dtypes.int32), r


def _sin_kernel(r: UOp, sin_c: list[float]) -> UOp:
    return r + r * (r * r) * _poly(r * r, sin_c[1:])


def xsin(x: UOp) -> UOp:
    """sin(x) (float32/float64)."""
    f32 = x.dtype is dtypes.float32
    idt = _LAYOUT[x.dtype][0]
    top = UOp.const(idt, -(1 << (x.dtype.bitsize - 1)))  # the sign bit
    sign_bit = x.bitcast(idt) & top
    ax = (x.bitcast(idt) & UOp.const(idt, (1 << (x.dtype.bitsize - 1)) - 1)).bitcast(x.dtype)
    small = _lt(ax, 0.5)
    big = _where(_lt(ax, _c(x, math.inf)), ax, _c(x, 1.0))  # inf/NaN: any finite stand-in
    quadrant, r = (_reduce_f32 if f32 else _reduce_f64)(_where(small, _c(x, 1.0), big))
    quadrant = _where(small, UOp.const(dtypes.int32, 0), quadrant)
    r = _where(small, ax, r)
    sin_c, cos_c = (_SIN_F32, _COS_F32) if f32 else (_SIN_F64, _COS_F64)
    odd = _ne(quadrant & 1, UOp.const(dtypes.int32, 0))
    value = _where(odd, _poly(r * r, cos_c), _sin_kernel(r, sin_c))
    negate = _ne(quadrant & 2, UOp.const(dtypes.int32, 0))
    flip = _where(negate, top, UOp.const(idt, 0))
    signed = (value.bitcast(idt) ^ sign_bit ^ flip).bitcast(x.dtype)
    return _where(_is_nan(x - x), _c(x, math.nan), signed)


# -- sqrt ---------------------------------------------------------------------------------------

_RSQRT_MAGIC = {dtypes.float32: 0x5F3759DF, dtypes.float64: 0x5FE6EB50C7B537A9}


def xsqrt(x: UOp) -> UOp:
    """sqrt(x) (float32/float64)."""
    idt, _, bias = _LAYOUT[x.dtype]
    tiny = _lt(x, 2.0 ** (1 - bias))
    xs = _where(tiny, x * 2.0**64, x)
    y = (UOp.const(idt, _RSQRT_MAGIC[x.dtype]) - (xs.bitcast(idt) >> 1)).bitcast(x.dtype)
    for _ in range(3 if x.dtype is dtypes.float32 else 5):
        y = y * (1.5 - 0.5 * xs * y * y)
    s = xs * y
    s = s + 0.5 * y * (xs - s * s)
    s = _where(tiny, s * 2.0**-32, s)
    inf = _c(x, math.inf)
    s = _where(_ne(x, inf), s, inf)
    s = _where(_ne(x, 0.0), s, x)
    return _where(_lt(x, 0.0) | _is_nan(x), _c(x, math.nan), s)


# -- pow ----------------------------------------------------------------------------------------


def _is_integral(y: UOp) -> UOp:
    return UOp(Ops.CMPNE, dtypes.bool, (UOp(Ops.TRUNC, y.dtype, (y,)), y)).ne(True)


def xpow(x: UOp, y: UOp, exp2: Callable[[UOp], UOp], log2: Callable[[UOp], UOp]) -> UOp:
    """x ** y (float32/float64) from ``exp2``/``log2`` (native or approximated)."""
    one, zero = _c(x, 1.0), _c(x, 0.0)
    ax = _where(_lt(x, 0.0), -x, x)
    magnitude = exp2(y * log2(ax))
    half = y * 0.5
    odd = _is_integral(y) & _is_integral(half).ne(True)
    idt = _LAYOUT[x.dtype][0]
    negative = _lt(x.bitcast(idt), UOp.const(idt, 0))  # sign bit set: -0.0 too
    signed = _where(negative & odd, -magnitude, magnitude)
    finite_negative = _lt(x, 0.0) & _lt(_c(x, -math.inf), x)
    out = _where(finite_negative & _is_integral(y).ne(True), _c(x, math.nan), signed)
    out = _where(_ne(ax, one).ne(True) & _ne(y - y, y - y), one, out)  # |x| = 1, y = +-inf
    out = _where(_is_nan(x) | _is_nan(y), _c(x, math.nan), out)
    out = _where(_ne(x, one), out, one)
    return _where(_ne(y, zero), out, one)


# -- the pass -----------------------------------------------------------------------------------

_NARROW = (dtypes.float16, dtypes.bfloat16, *dtypes.fp8s)
_UNARY: dict[Ops, Callable[[UOp], UOp]] = {
    Ops.EXP2: xexp2,
    Ops.LOG2: xlog2,
    Ops.SIN: xsin,
    Ops.SQRT: xsqrt,
}


def _per_lane(u: UOp, fn: Callable[..., UOp]) -> UOp:
    """``fn`` on the scalar float32/float64 operands of ``u`` (lane by lane for vectors; the
    narrow floats through float32)."""
    if u.dtype.count > 1:
        lanes = [
            _per_lane(UOp(u.op, u.dtype.scalar(), tuple(gep(s, (i,)) for s in u.src)), fn)
            for i in range(u.dtype.count)
        ]
        return UOp(Ops.VECTORIZE, u.dtype, tuple(lanes))
    if u.dtype in _NARROW:
        return fn(*(s.cast(dtypes.float32) for s in u.src)).cast(u.dtype)
    return fn(*u.src)


def _approximate(ctx: LowerContext, u: UOp) -> UOp | None:
    if u.op in ctx.renderer.code_for_op or not dtypes.is_float(u.dtype):
        return None
    return _per_lane(u, _UNARY[u.op])


def _native_or_approx(ctx: LowerContext, op: Ops) -> Callable[[UOp], UOp]:
    if op in ctx.renderer.code_for_op:
        return lambda v: UOp(op, v.dtype, (v,))
    return _UNARY[op]


def _approximate_pow(ctx: LowerContext, u: UOp) -> UOp | None:
    if u.op in ctx.renderer.code_for_op or not dtypes.is_float(u.dtype):
        return None
    exp2, log2 = _native_or_approx(ctx, Ops.EXP2), _native_or_approx(ctx, Ops.LOG2)
    return _per_lane(u, lambda x, y: xpow(x, y, exp2, log2))


pm_transcendental = PatternMatcher(
    [
        (UPat(tuple(_UNARY), name="u"), _approximate),  # exp2/log2/sin/sqrt -> polynomials
        (UPat(Ops.POW, name="u"), _approximate_pow),  # pow -> exp2(y * log2|x|) + special cases
    ]
)
