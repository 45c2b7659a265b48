"""The building blocks of the accurate elementwise math in ``elementwise`` (exp, tanh,
sigmoid, cos, erf...): constants, polynomials and range-reduction steps, as functions over
any ``ElementwiseMixin`` (``UOp`` or ``Tensor``) so the methods there stay short. Every step
is an ALU op of the IR; the bit-level ones (the rounding to an integer, the powers of two
built in the exponent field) carry no gradient, the arithmetic ones do.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeVar

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.mixin.elementwise import ElementwiseMixin

T = TypeVar("T", bound="ElementwiseMixin")

LOG2_E = 1 / math.log(2)
LN_2 = math.log(2)
# ln 2 in two parts (Cody-Waite): LN2_HI has 16 significant bits, so k * LN2_HI is exact
# for every exponent k a float32/float64 exp can see, and x - k ln 2 is exact to float precision
LN2_HI = 0.693145751953125
LN2_LO = 1.4286068203094173e-06  # ln 2 - LN2_HI from ln 2's digits, not from LN_2: float64
# pi/2 in four parts (Cody-Waite): the first three have 11 significant bits, so q * part is
# exact in float32 for |q| < 2**13 and x - q pi/2 keeps its accuracy near the zeros of cos for
# |x| < 2**13 * pi/2; the fourth is the float32 rest (what is left is below 1e-19)
PIO2_1 = 1.5703125
PIO2_2 = 0.0004837512969970703
PIO2_3 = 7.549533620476723e-08
PIO2_4 = 2.5633440682570896e-12
COS_REDUCE_LIMIT = 12800.0
# float64: pi/2 in three parts, the first two of 40 bits (from pi's digits)
PIO2_F64 = (1.5707963267941523, 7.443547480488527e-13, -1.9034889620193266e-25)
# float32 on |r| <= pi/4, highest power first: sin r = r (1 + z S(z)), cos r = 1 - z/2 +
# z**2 C(z), z = r**2 (fits of the relative error: 3.8e-9 and 1.2e-10)
SIN_POLY = (-0.0001951528155209421, 0.00833216074785046, -0.16666654609272052, 1.0)
COS_POLY = (2.4433154635375496e-05, -0.0013887316230715673, 0.04166664568241761, -0.5, 1.0)
# exp's clamps: below the low end e**x is 0 (or rounds to 0), and so is its gradient; the high
# end caps the x that k is computed from at k = 127 (float64: 1023): above it r grows, e**r
# overflows on its own, and the gradient's ctx * 2**k never overflows before e**r does
EXP_CLAMP = {dtypes.float32: (-104.0, 88.0), dtypes.float64: (-746.0, 709.0)}
HALF_FLOATS = (dtypes.float16, dtypes.bfloat16)
# erf x = x * sum_n c_n x**2n below 0.5: c_n = 2/sqrt(pi) (-1)**n / (n! (2n+1)), highest first
ERF_TAYLOR = tuple(
    2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(7, -1, -1)
)
# erfc(a) = t exp(P(t) - a**2), t = 1/(1 + a/2), highest power first (Numerical Recipes'
# erfcc, a Chebyshev fit: relative error below 1.2e-7 for every a >= 0)
ERFC_POLY = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
              0.09678418, 0.37409196, 1.00002368, -1.26551223)  # fmt: skip
# a float's layout: (the int of its size, mantissa bits, exponent bias, the bits of the rounding
# constant 1.5 * 2**mantissa: y + that constant holds round(y) in its low mantissa bits)
FLOAT_BITS = {
    dtypes.float32: (dtypes.int32, 23, 127, 0x4B400000),
    dtypes.float64: (dtypes.int64, 52, 1023, 0x4338 << 48),
}
# e**r, highest power first, on |r| <= ln2/2 (x <= 0): float32 a degree-6 fit of the relative
# error (below 2e-9), float64 Taylor to degree 13 (below 1e-18); and on [-ln2/2, ln2] (r of
# the capped k): degree 7 (below 1.2e-9), float64 Taylor to degree 17 (below 1e-18)
EXP_POLY = {
    dtypes.float32: (0.0013843651296456716, 0.00837415615114374, 0.04166800212525241,
                     0.16666431250575492, 0.4999999420838057, 1.0000000321684872, 1.0),
    dtypes.float64: tuple(1 / math.factorial(k) for k in range(13, -1, -1)),
}  # fmt: skip
EXP_POLY_WIDE = {
    dtypes.float32: (0.00023347285111730703, 0.0013838944798891945, 0.00832573376969864,
                     0.041668271369025595, 0.16666719463344448, 0.49999992562589846,
                     0.9999999894981896, 1.0),
    dtypes.float64: tuple(1 / math.factorial(k) for k in range(17, -1, -1)),
}  # fmt: skip
# (2**s - 1)/s on |s| <= 1/2, degree 5 (relative error below 1.1e-8), highest power first
EXPM1_BASE2_POLY = (0.00015403508412756284, 0.0013390735655096284, 0.009618237508119656,
                     0.055503574333152644, 0.24022649794871848, 0.6931471879267528)  # fmt: skip
# asin t = t + t**3 P(t**2) on [0, 1/2], highest power first (a fit of the relative error:
# 4.8e-9)
ASIN_POLY = (0.04216631769156852, 0.024179509312772563, 0.04547037712883045,
             0.07495297631522359, 0.16666752482448585, 1.0)  # fmt: skip
# tanh x rounds to +-1 in float32 from |x| = 9.01 on; its large-|x| branch clamps here
TANH_SATURATED = 10.0


def cos_reduced_with_sin(x: T) -> T:
    """cos x for |x| < 12800 through SIN (the float64 path): cos r = 1 - 2 sin(r/2)**2,
    pi/2 in three parts of 40 bits (q * part exact for |q| < 2**13)."""
    q = (x * (2 / math.pi) + 0.5).floor()
    r = x
    for part in PIO2_F64 if x.dtype is dtypes.float64 else (PIO2_1, PIO2_2, PIO2_3, PIO2_4):
        r = r - q * part
    half = (r * 0.5).sin()
    cos_r, sin_r = 1 - 2 * (half * half), r.sin()
    quadrant = q - (q * 0.25).floor() * 4
    return quadrant.eq(0).where(
        cos_r, quadrant.eq(1).where(-sin_r, quadrant.eq(2).where(-cos_r, sin_r))
    )


def magnitude(x: T) -> tuple[T, T]:
    """(x < 0, |x|) with |x| from a select: its gradient at 0 is 1 (abs's is 0), so an
    odd function rebuilt as sign * f(|x|) keeps f'(0)."""
    negative = x < 0
    return negative, negative.where(-x, x)


def polynomial(x: T, coefficients: tuple[float, ...]) -> T:
    """sum c_i x**i by Horner's rule, coefficients highest power first."""
    out = x * coefficients[0] + coefficients[1]
    for c in coefficients[2:]:
        out = out * x + c
    return out


def rounded_exponent(x: T, y: T) -> tuple[T, T]:
    """(k, k as a float) for k = round(y), an int of x's float width: y plus
    1.5 * 2**mantissa holds k in its low mantissa bits (|y| < 2**22 for float32)."""
    ints, mantissa, _, magic_bits = FLOAT_BITS.get(x.dtype, FLOAT_BITS[dtypes.float32])
    k = (y + 1.5 * 2.0**mantissa)._apply(Ops.BITCAST, dtype=ints) - magic_bits
    # int64 -> float64 is no vector instruction on common CPUs; int32 -> float is
    return k, k.cast(dtypes.int32).cast(x.dtype)


def power_of_two(x: T, k: T) -> T:
    """2**k as a float of x's dtype for an int k in the normal exponent range."""
    _, mantissa, bias, _ = FLOAT_BITS.get(x.dtype, FLOAT_BITS[dtypes.float32])
    return (k + bias).lshift(mantissa)._apply(Ops.BITCAST, dtype=x.dtype)


def exp_reduced(value: T, overflows: bool) -> T:
    """e**x for float32/float64 (see exp); ``overflows=False`` when x <= 0 is known.

    Only the low end clamps x (e**x is 0 there, and so is its gradient); the high end
    caps the x that k is computed from, so above it r grows, e**r overflows to inf and
    the gradient (through the polynomial) is inf too. NaN stays NaN: every step is
    arithmetic on it, the bit-built scales are finite or 0 or inf, which NaN absorbs.
    2**k is two powers of two (k = k1 + k2, both normal; for x <= 0 2**-64 and 2**(k + 64))
    so a subnormal result rounds once.
    """
    lo, hi = EXP_CLAMP.get(value.dtype, EXP_CLAMP[dtypes.float32])
    x = (value < lo).where(lo, value)
    reduced_from = (x > hi).where(hi, x) if overflows else x
    k, kf = rounded_exponent(value, reduced_from * LOG2_E)
    r = (x - kf * LN2_HI) - kf * LN2_LO
    polynomials = EXP_POLY_WIDE if overflows else EXP_POLY
    out = polynomial(r, polynomials.get(value.dtype, polynomials[dtypes.float32]))
    if not overflows:
        # k <= 0: 2**(k + 64) is normal down to k = -190 (float64: -1086); 2**-64 first
        # (exact), so the product rounds once, also into the subnormals
        return out * 2.0**-64 * power_of_two(value, k + 64)
    first = k.rshift(1)
    return out * power_of_two(value, first) * power_of_two(value, k - first)


def erfc(x: T) -> T:
    """erfc x = 1 - erf x, relative-accurate for large x (no 1 - erf cancellation):
    the fit of ``erfc_of_magnitude`` on |x|, 2 - that below 0."""
    negative, a = magnitude(x)
    e = erfc_of_magnitude(a)
    return negative.where(2 - e, e)


def erfc_of_magnitude(a: T) -> T:
    """erfc(a) for a >= 0: t exp(P(t) - a**2) with t = 1/(1 + a/2), the Chebyshev fit of
    Numerical Recipes' erfcc (relative error below 1.2e-7); the rounding of a**2 adds a
    relative a**2 2**-24. a is clipped at 10.1, where erfc has underflowed to 0 (an inf
    there would make the gradient NaN)."""
    z = (a > 10.1).where(10.1, a)  # NaN stays NaN
    t = 1 / (1 + 0.5 * z)
    return t * (polynomial(t, ERFC_POLY) - z * z).exp()


def expm1_of_double(x: T) -> T:
    """e**(2x) - 1 for float32 |x| <= 10: y = 2x log2 e = k + s, 2**k (2**s - 1) +
    (2**k - 1) with (2**s - 1) = s P(s), which keeps its relative accuracy near 0 (k = 0
    there). Cheaper than expm1 (no clamps, one power of two, no log); the rounding of y
    costs relative |y| 2**-24, which tanh's m/(m + 2) divides down."""
    y = x * (2 * LOG2_E)
    k, kf = rounded_exponent(x, y)
    s = y - kf
    scale = power_of_two(x, k)
    # - (1 - scale), not + (scale - 1): for k = 0 that is -0 - 0, so m(-0) is -0
    return scale * (s * polynomial(s, EXPM1_BASE2_POLY)) - (1 - scale)


def asin_parts(a: T) -> tuple[T, T]:
    """(a <= 1/2, p) for 0 <= a <= 1: asin a = p there, else pi/2 - 2p (p = asin of
    sqrt((1 - a)/2), 1 - a exact above 1/2): one polynomial on [0, 1/2], relative accuracy
    near 0 and near 1. NaN above 1."""
    small = a <= 0.5
    half_rest = (1 - a) * 0.5
    z = small.where(a * a, half_rest)
    # the root of (1 - a)/2, not of z: 1/2 or more where unselected, so its gradient is finite
    t = small.where(a, half_rest.sqrt())
    return small, t * polynomial(z, ASIN_POLY)
