"""Elementwise math for ``UOp`` and ``Tensor`` alike: unary functions, binary ops with
broadcasting and promotion, comparisons, bitwise ops and ``where``. Everything lowers to the ALU
ops of the IR (see ``fusegrad.uop.mixin.base`` for the primitives). The operators themselves
(``+``, ``<``...) are defined by each class: ``Tensor``'s call these methods, ``UOp``'s call
them for tensor-level nodes and build symbolic ALU nodes otherwise.

>>> from fusegrad.uop import UOp, dtypes
>>> x = UOp.new_buffer("CPU", 4, dtypes.float32).reshape(2, 2)
>>> x.relu().shape, x.add(1).dtype, x.int().div(2).dtype
((2, 2), dtypes.float32, dtypes.float32)
"""

from __future__ import annotations

import math
from typing import Any, Self

from fusegrad.uop.dtype import DType, commit_weak, dtypes, least_upper_dtype, least_upper_float
from fusegrad.uop.mixin.base import OpMixinBase, broadcast_shape
from fusegrad.uop.opcodes import Ops

_LOG2_E = 1 / math.log(2)
_LN_2 = math.log(2)
_SQRT_HALF = math.sqrt(0.5)
# ln 2 in two parts (Cody-Waite): _LN2_HI has 16 significant bits, so k * _LN2_HI is exact
# for every exponent k a float32/float64 exp can see, and x - k ln 2 is exact to float precision
_LN2_HI = 0.693145751953125
_LN2_LO = _LN_2 - _LN2_HI
# pi/2 in four parts (Cody-Waite): the first three have 11 significant bits, so q * part is
# exact in float32 for |q| < 2**13 and x - q pi/2 keeps its accuracy near the zeros of cos for
# |x| < 2**13 * pi/2; the fourth is the float32 rest (what is left is below 1e-19)
_PIO2_1 = 1.5703125
_PIO2_2 = 0.0004837512969970703
_PIO2_3 = 7.549533620476723e-08
_PIO2_4 = 2.5633440682570896e-12
_COS_REDUCE_LIMIT = 12800.0
# exp's clamps: below the low end e**x is 0 (or rounds to 0), and so is its gradient; the high
# end caps the x that k is computed from at k = 127 (float64: 1023): above it r grows, e**r
# overflows on its own, and the gradient's ctx * 2**k never overflows before e**r does
_EXP_CLAMP = {dtypes.float32: (-104.0, 88.0), dtypes.float64: (-746.0, 709.0)}
_HALF_FLOATS = (dtypes.float16, dtypes.bfloat16)
# erf x = x * sum_n c_n x**2n below 0.5: c_n = 2/sqrt(pi) (-1)**n / (n! (2n+1)), highest first
_ERF_TAYLOR = tuple(
    2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(7, -1, -1)
)
# erfc(a) = t exp(P(t) - a**2), t = 1/(1 + a/2), highest power first (Numerical Recipes'
# erfcc, a Chebyshev fit: relative error below 1.2e-7 for every a >= 0)
_ERFC_POLY = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
              0.09678418, 0.37409196, 1.00002368, -1.26551223)  # fmt: skip
# a float's layout: (the int of its size, mantissa bits, exponent bias, the bits of the rounding
# constant 1.5 * 2**mantissa: y + that constant holds round(y) in its low mantissa bits)
_FLOAT_BITS = {
    dtypes.float32: (dtypes.int32, 23, 127, 0x4B400000),
    dtypes.float64: (dtypes.int64, 52, 1023, 0x4338 << 48),
}
# e**r, highest power first, on |r| <= ln2/2 (x <= 0): float32 a degree-6 fit of the relative
# error (below 2e-9), float64 Taylor to degree 13 (below 1e-18); and on [-ln2/2, ln2] (r of
# the capped k): degree 7 (below 1.2e-9), float64 Taylor to degree 17 (below 1e-18)
_EXP_POLY = {
    dtypes.float32: (0.0013843651296456716, 0.00837415615114374, 0.04166800212525241,
                     0.16666431250575492, 0.4999999420838057, 1.0000000321684872, 1.0),
    dtypes.float64: tuple(1 / math.factorial(k) for k in range(13, -1, -1)),
}  # fmt: skip
_EXP_POLY_WIDE = {
    dtypes.float32: (0.00023347285111730703, 0.0013838944798891945, 0.00832573376969864,
                     0.041668271369025595, 0.16666719463344448, 0.49999992562589846,
                     0.9999999894981896, 1.0),
    dtypes.float64: tuple(1 / math.factorial(k) for k in range(17, -1, -1)),
}  # fmt: skip
# (2**s - 1)/s on |s| <= 1/2, degree 5 (relative error below 1.1e-8), highest power first
_EXPM1_BASE2_POLY = (0.00015403508412756284, 0.0013390735655096284, 0.009618237508119656,
                     0.055503574333152644, 0.24022649794871848, 0.6931471879267528)  # fmt: skip
# tanh x rounds to +-1 in float32 from |x| = 9.01 on; its large-|x| branch clamps here
_TANH_SATURATED = 10.0


def _where_dtype(x: Any, y: Any, tensor: type[Any]) -> DType:
    dts: list[DType] = [
        v.dtype if isinstance(v, tensor) else dtypes.weak_from_py(v) for v in (x, y)
    ]
    return commit_weak(least_upper_dtype(*dts))


def _check_int_or_bool(t: OpMixinBase, name: str) -> None:
    if dtypes.is_float(t.dtype):
        raise RuntimeError(
            f'"{name}" not implemented for {t.dtype!r} (needs an int or bool tensor)'
        )


_MAX_MULTIPLIED_POWER = 8  # x ** n for integral 2 <= n <= this multiplies


class ElementwiseMixin(OpMixinBase):
    """Unary and binary elementwise methods (mixed into UOp and Tensor)."""

    __slots__ = ()

    # -- primitives ----------------------------------------------------------------------------
    def _unary(self, op: Ops) -> Self:
        x = self._to_float()
        return x._apply(op)

    def _binop(self, op: Ops, x: Any, reverse: bool = False) -> Self:
        a, b = self._promoted(x, reverse=reverse)
        return a._apply(op, b)

    def neg(self) -> Self:
        """-x (logical not for bool)."""
        if self.dtype is dtypes.bool:
            return self.logical_not()
        return self._apply(Ops.NEG)

    def reciprocal(self) -> Self:
        """1/x."""
        return self._unary(Ops.RECIPROCAL)

    def trunc(self) -> Self:
        """Round toward zero."""
        if not dtypes.is_float(self.dtype):
            return self
        return self._apply(Ops.TRUNC)

    def sqrt(self) -> Self:
        """Square root (NaN below 0)."""
        return self._unary(Ops.SQRT)

    def rsqrt(self) -> Self:
        """1/sqrt(x)."""
        return self.sqrt().reciprocal()

    def sin(self) -> Self:
        """Sine."""
        return self._unary(Ops.SIN)

    def cos(self) -> Self:
        """Cosine, reduced on its own: x = q pi/2 + r (Cody-Waite, pi/2 in four parts) and
        cos x is +-cos r or +-sin r by the quadrant q (cos r = 1 - 2 sin(r/2)**2). Beyond
        |x| = 12800 (where the reduction stops being exact) 1 - 2 sin(x/2)**2: an absolute
        error of a few 1e-7. float16/bfloat16 are computed in float32 and rounded once."""
        x = self._to_float()
        if x.dtype in _HALF_FLOATS:
            return x.float().cos().cast(x.dtype)
        q = (x * (2 / math.pi) + 0.5).floor()
        r = (((x - q * _PIO2_1) - q * _PIO2_2) - q * _PIO2_3) - q * _PIO2_4
        half = (r * 0.5).sin()
        cos_r, sin_r = 1 - 2 * (half * half), r.sin()
        quadrant = q - (q * 0.25).floor() * 4
        near = quadrant.eq(0).where(
            cos_r, quadrant.eq(1).where(-sin_r, quadrant.eq(2).where(-cos_r, sin_r))
        )
        far_half = (x * 0.5).sin()
        far = 1 - 2 * (far_half * far_half)
        return (x.abs() < _COS_REDUCE_LIMIT).where(near, far)

    def tan(self) -> Self:
        """Tangent."""
        return self.sin() / self.cos()

    def asin(self) -> Self:
        """Arcsine (Abramowitz-Stegun 4.4.46, |error| < 2e-8)."""
        coefficients = (
            -0.0012624911,
            0.0066700901,
            -0.0170881256,
            0.0308918810,
            -0.0501743046,
            0.0889789874,
            -0.2145988016,
            1.5707963050,
        )
        x = self._to_float()
        a = x.abs()
        poly = a * 0 + coefficients[0]
        for c in coefficients[1:]:
            poly = poly * a + c
        return x.sign() * (math.pi / 2 - (1 - a).sqrt() * poly)

    def acos(self) -> Self:
        """Arccosine."""
        return math.pi / 2 - self.asin()

    def atan(self) -> Self:
        """Arctangent."""
        x = self._to_float()
        return (x / (1 + x * x).sqrt()).asin()

    def _magnitude(self) -> tuple[Self, Self]:
        """(x < 0, |x|) with |x| from a select: its gradient at 0 is 1 (abs's is 0), so an
        odd function rebuilt as sign * f(|x|) keeps f'(0)."""
        negative = self < 0
        return negative, negative.where(-self, self)

    def sinh(self) -> Self:
        """Hyperbolic sine: (m + m/(m + 1))/2 with m = expm1(|x|) below |x| = 1 (no
        cancellation near 0), h (h/2) - e**-|x|/2 with h = e**(|x|/2) above (finite up to
        sinh's own overflow at 89.4, past exp's at 88.7); odd, -0 kept."""
        x = self._to_float()
        negative, a = x._magnitude()
        m = (a < 1).where(a, 1.0).expm1()  # the clamp keeps the unselected branch finite
        small = (m + m / (m + 1)) * 0.5
        h = (a * 0.5).exp()
        big = h * (h * 0.5) - (-a).exp() * 0.5
        magnitude = (a < 1).where(small, big)
        return negative.where(-magnitude, magnitude)

    def cosh(self) -> Self:
        """Hyperbolic cosine: h (h/2) + e**-|x|/2 with h = e**(|x|/2) (finite up to cosh's
        own overflow at 89.4, past exp's at 88.7)."""
        x = self._to_float()
        _, a = x._magnitude()
        h = (a * 0.5).exp()
        return h * (h * 0.5) + (-a).exp() * 0.5

    def atanh(self) -> Self:
        """Inverse hyperbolic tangent: (log1p(x) - log1p(-x))/2 (no cancellation: the two
        have opposite signs; near +-1 the large one is exact); +-1 give +-inf (gradient inf),
        |x| > 1 NaN, -0 stays -0."""
        x = self._to_float()
        return (x.log1p() - (-x).log1p()) * 0.5

    def asinh(self) -> Self:
        """Inverse hyperbolic sine: log1p(a (1 + a/(1 + sqrt(1 + a**2)))) for a = |x| below
        2**12 (accurate near 0), log(a) + ln 2 above (no a**2 overflow); odd, -0 kept."""
        x = self._to_float()
        negative, a = x._magnitude()
        # each branch on its own clamped argument: finite values where it is not selected
        s = (a < 4096).where(a, 4096.0)
        small = (s * (1 + s / (1 + (1 + s * s).sqrt()))).log1p()  # s * (...): -0 stays -0
        big = (a < 4096).where(4096.0, a).log() + _LN_2
        magnitude = (a < 4096).where(small, big)
        return negative.where(-magnitude, magnitude)

    def acosh(self) -> Self:
        """Inverse hyperbolic cosine: log1p(t + sqrt(t (t + 2))) with t = x - 1 (exact near
        1) below 2**12, log(x) + ln 2 above (no x**2 overflow); NaN below 1."""
        x = self._to_float()
        t = (x < 4096).where(x, 4096.0) - 1
        small = (t + (t * (t + 2)).sqrt()).log1p()
        big = (x < 4096).where(4096.0, x).log() + _LN_2
        return (x < 4096).where(small, big)

    def exp(self) -> Self:
        """e**x, reduced on its own: x = k ln 2 + r with k = round(x log2 e) (Cody-Waite, ln 2
        in two parts, so r is exact and |r| <= ln2/2), e**r a polynomial and 2**k built in the
        exponent bits, instead of 2**(x log2 e), whose rounded product is magnified by |x|.
        The gradient is e**x (inf above the overflow threshold, like PyTorch). float16/bfloat16
        are computed in float32 and rounded once."""
        x = self._to_float()
        if x.dtype in _HALF_FLOATS:
            return x.float().exp().cast(x.dtype)
        return x._exp_reduced(overflows=True)

    def _polynomial(self, coefficients: tuple[float, ...]) -> Self:
        """sum c_i x**i at x = self by Horner's rule, coefficients highest power first."""
        out = self * coefficients[0] + coefficients[1]
        for c in coefficients[2:]:
            out = out * self + c
        return out

    def _rounded_exponent(self, y: Self) -> tuple[Self, Self]:
        """(k, k as a float) for k = round(y), an int of self's float width: y plus
        1.5 * 2**mantissa holds k in its low mantissa bits (|y| < 2**22 for float32)."""
        ints, mantissa, _, magic_bits = _FLOAT_BITS.get(self.dtype, _FLOAT_BITS[dtypes.float32])
        k = (y + 1.5 * 2.0**mantissa)._apply(Ops.BITCAST, dtype=ints) - magic_bits
        # int64 -> float64 is no vector instruction on common CPUs; int32 -> float is
        return k, k.cast(dtypes.int32).cast(self.dtype)

    def _power_of_two(self, k: Self) -> Self:
        """2**k as a float of self's dtype for an int k in the normal exponent range."""
        _, mantissa, bias, _ = _FLOAT_BITS.get(self.dtype, _FLOAT_BITS[dtypes.float32])
        return (k + bias).lshift(mantissa)._apply(Ops.BITCAST, dtype=self.dtype)

    def _exp_reduced(self, overflows: bool) -> Self:
        """e**x for float32/float64 (see exp); ``overflows=False`` when x <= 0 is known.

        Only the low end clamps x (e**x is 0 there, and so is its gradient); the high end
        caps the x that k is computed from, so above it r grows, e**r overflows to inf and
        the gradient (through the polynomial) is inf too. NaN stays NaN: every step is
        arithmetic on it, the bit-built scales are finite or 0 or inf, which NaN absorbs.
        2**k is two powers of two (k = k1 + k2, both normal; for x <= 0 2**-64 and 2**(k + 64))
        so a subnormal result rounds once.
        """
        lo, hi = _EXP_CLAMP.get(self.dtype, _EXP_CLAMP[dtypes.float32])
        x = (self < lo).where(lo, self)
        reduced_from = (x > hi).where(hi, x) if overflows else x
        k, kf = self._rounded_exponent(reduced_from * _LOG2_E)
        r = (x - kf * _LN2_HI) - kf * _LN2_LO
        polynomials = _EXP_POLY_WIDE if overflows else _EXP_POLY
        out = r._polynomial(polynomials.get(self.dtype, polynomials[dtypes.float32]))
        if not overflows:
            # k <= 0: 2**(k + 64) is normal down to k = -190 (float64: -1086); 2**-64 first
            # (exact), so the product rounds once, also into the subnormals
            return out * 2.0**-64 * self._power_of_two(k + 64)
        first = k.rshift(1)
        return out * self._power_of_two(first) * self._power_of_two(k - first)

    def exp2(self) -> Self:
        """2**x."""
        return self._unary(Ops.EXP2)

    def log(self) -> Self:
        """Natural logarithm."""
        return self.log2() * _LN_2

    def log2(self) -> Self:
        """Base-2 logarithm."""
        return self._unary(Ops.LOG2)

    def log10(self) -> Self:
        """Base-10 logarithm."""
        return self.log2() * math.log10(2)

    def log1p(self) -> Self:
        """log(1 + x), accurate near 0 (Kahan: log(u) x / (u - 1) with u = 1 + x rounded,
        which cancels u's rounding error; x itself where u rounds to 1)."""
        x = self._to_float()
        u = 1 + x
        plain = u.eq(1) | u.isinf() | u.eq(0)
        # the quotient on a stand-in u where it is not selected: finite, so no 0 * inf (NaN)
        # reaches the gradient from there
        v = plain.where(2.0, u)
        kahan = v.log() * (plain.where(1.0, x) / (v - 1))
        return u.eq(1).where(x, plain.where(u.log(), kahan))

    def expm1(self) -> Self:
        """exp(x) - 1, accurate near 0 (Kahan: (u - 1) x / log(u) with u = exp(x), for
        |x| < 1; x where u rounds to 1; plain u - 1 beyond, where nothing cancels)."""
        x = self._to_float()
        near = x.abs() < 1
        s = near.where(x, 0.5)  # a stand-in beyond 1: the unselected quotient stays finite
        u = s.exp()
        one = u.eq(1)
        kahan = (u - 1) * (one.where(1.0, s) / one.where(1.0, u.log()))
        return near.where(one.where(x, kahan), x.exp() - 1)

    def square(self) -> Self:
        """x*x."""
        return self * self

    def abs(self) -> Self:
        """|x| (NaN stays NaN)."""
        if self.dtype is dtypes.bool or dtypes.is_unsigned(self.dtype):
            return self
        return self.maximum(-self)

    def sign(self) -> Self:
        """-1, 0 or 1 (0 for NaN, like PyTorch)."""
        if self.dtype is dtypes.bool:
            return self
        one, zero = self._const(1), self._const(0)
        out = (self < 0).where(-one, (self > 0).where(one, zero))
        return out

    def floor(self) -> Self:
        """Round toward -inf."""
        if not dtypes.is_float(self.dtype):
            return self
        t = self.trunc()
        return (t > self).where(t - 1, t)

    def ceil(self) -> Self:
        """Round toward +inf."""
        if not dtypes.is_float(self.dtype):
            return self
        t = self.trunc()
        return (t < self).where(t + 1, t)

    def round(self) -> Self:
        """Round half to even."""
        if not dtypes.is_float(self.dtype):
            return self
        f = self.floor()
        d = self - f
        f_even = (f - (f / 2).floor() * 2).eq(0)
        half = d.eq(0.5).where(f_even.where(f, f + 1), (d < 0.5).where(f, f + 1))
        return half

    def erf(self) -> Self:
        """The error function: its Taylor series below |x| = 0.5 (relative accuracy near 0),
        sign(x) (1 - erfc|x|) above (erfc's fit below; both branches finite everywhere, so
        the gradient has no NaN at +-inf)."""
        x = self._to_float()
        negative, a = x._magnitude()
        near = a < 0.5
        s = near.where(x, 0.0)
        series = s * (s * s)._polynomial(_ERF_TAYLOR)
        far = 1 - a._erfc_of_magnitude()
        return near.where(series, negative.where(-far, far))

    def _erfc(self) -> Self:
        """erfc x = 1 - erf x, relative-accurate for large x (no 1 - erf cancellation):
        the fit of ``_erfc_of_magnitude`` on |x|, 2 - that below 0."""
        negative, a = self._magnitude()
        e = a._erfc_of_magnitude()
        return negative.where(2 - e, e)

    def _erfc_of_magnitude(self) -> Self:
        """erfc(a) for a >= 0: t exp(P(t) - a**2) with t = 1/(1 + a/2), the Chebyshev fit of
        Numerical Recipes' erfcc (relative error below 1.2e-7); the rounding of a**2 adds a
        relative a**2 2**-24. a is clipped at 10.1, where erfc has underflowed to 0 (an inf
        there would make the gradient NaN)."""
        z = (self > 10.1).where(10.1, self)  # NaN stays NaN
        t = 1 / (1 + 0.5 * z)
        return t * (t._polynomial(_ERFC_POLY) - z * z).exp()

    def isnan(self) -> Self:
        """True where NaN."""
        return self.ne(self)

    def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Self:
        """True where +-inf."""
        if not dtypes.is_float(self.dtype):
            return self._const(False, dtypes.bool)
        out = self._const(False, dtypes.bool)
        if detect_positive:
            out = out | self.eq(math.inf)
        if detect_negative:
            out = out | self.eq(-math.inf)
        return out

    def isfinite(self) -> Self:
        """True where neither inf nor NaN."""
        return (self.isinf() | self.isnan()).logical_not()

    def logical_not(self) -> Self:
        """True where x is zero."""
        if self.dtype is dtypes.bool:
            return self._apply(Ops.CMPNE, self._const(True), dtype=dtypes.bool)
        return self.eq(0)

    def bitwise_not(self) -> Self:
        """~x for ints (logical not for bool)."""
        _check_int_or_bool(self, "bitwise_not")
        if self.dtype is dtypes.bool:
            return self.logical_not()
        return self._apply(
            Ops.XOR, self._const(-1 if not dtypes.is_unsigned(self.dtype) else self.dtype.max)
        )

    # -- activations ----------------------------------------------------------------------------
    def relu(self) -> Self:
        """max(x, 0); NaN stays NaN; gradient 0 at 0."""
        return (self <= 0).where(self._const(0), self)

    def relu6(self) -> Self:
        """min(max(x, 0), 6)."""
        return self.relu() - (self - 6).relu()

    def sigmoid(self) -> Self:
        """1 / (1 + exp(-x)), from e = exp(-|x|) (never overflows): 1/(1+e) for x >= 0,
        e/(1+e) below (no underflow to 0 while the result is representable)."""
        x = self._to_float()
        if x.dtype in _HALF_FLOATS:
            return x.float().sigmoid().cast(x.dtype)
        negative = x < 0
        e = negative.where(x, -x)._exp_reduced(overflows=False)
        inv = (1 + e).reciprocal()
        return negative.where(e * inv, inv)

    def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Self:
        """max(0, min(1, alpha*x + beta))."""
        return (alpha * self + beta).relu() - (alpha * self + beta - 1).relu()

    def hardswish(self) -> Self:
        """x * relu6(x + 3) / 6."""
        return self * (self + 3).relu6() * (1 / 6)

    def hardtanh(self, min_val: float = -1, max_val: float = 1) -> Self:
        """x clipped to [min_val, max_val]."""
        return self.clip(min_val, max_val)

    def leaky_relu(self, neg_slope: float = 0.01) -> Self:
        """x, or neg_slope * x below 0."""
        return (self < 0).where(self * neg_slope, self)

    def tanh(self) -> Self:
        """Hyperbolic tangent: m/(m + 2) with m = e**2|x| - 1 (no cancellation near 0, none in
        m + 2), |x| clipped to 10 (beyond, tanh is +-1 in float32), the sign put back last.
        float16/bfloat16 in float32, rounded once."""
        x = self._to_float()
        if x.dtype in _HALF_FLOATS:
            return x.float().tanh().cast(x.dtype)
        if x.dtype is not dtypes.float32:  # float64: its own expm1
            a = (x.abs() > 20).where(20.0, x.abs())
            t = (a * 2).expm1()
            magnitude = t / (t + 2)
            return (x < 0).where(-magnitude, magnitude)
        # a stays finite (an inf in a computed but unselected value would make the gradient
        # NaN); -0 keeps its sign (a is x there, and m is -0)
        negative = x < 0
        a = negative.where(-x, x)
        a = (a > _TANH_SATURATED).where(_TANH_SATURATED, a)
        m = a._expm1_of_double()
        magnitude = m / (m + 2)
        return negative.where(-magnitude, magnitude)

    def _expm1_of_double(self) -> Self:
        """e**(2x) - 1 for float32 |x| <= 10: y = 2x log2 e = k + s, 2**k (2**s - 1) +
        (2**k - 1) with (2**s - 1) = s P(s), which keeps its relative accuracy near 0 (k = 0
        there). Cheaper than expm1 (no clamps, one power of two, no log); the rounding of y
        costs relative |y| 2**-24, which tanh's m/(m + 2) divides down."""
        y = self * (2 * _LOG2_E)
        k, kf = self._rounded_exponent(y)
        s = y - kf
        scale = self._power_of_two(k)
        # - (1 - scale), not + (scale - 1): for k = 0 that is -0 - 0, so m(-0) is -0
        return scale * (s * s._polynomial(_EXPM1_BASE2_POLY)) - (1 - scale)

    def gelu(self, approximate: str = "tanh") -> Self:
        """GELU: the tanh approximation (tinygrad's default) or exact with ``"none"``. The tanh
        form as x sigmoid(2z) (= x (1 + tanh z)/2, z = sqrt(2/pi) (x + 0.044715 x**3)): no
        1 + tanh cancelling to 0 for negative x. The exact form as x erfc(-x/sqrt 2)/2."""
        if approximate == "none":
            x = self._to_float()
            return x * (x * -_SQRT_HALF)._erfc() * 0.5
        if approximate != "tanh":
            raise ValueError(f"gelu: approximate must be 'tanh' or 'none', got {approximate!r}")
        x = self._to_float()
        return x * ((x + 0.044715 * x * x * x) * (2 * math.sqrt(2 / math.pi))).sigmoid()

    def quick_gelu(self) -> Self:
        """x * sigmoid(1.702 x)."""
        return self * (self * 1.702).sigmoid()

    def swish(self) -> Self:
        """x * sigmoid(x)."""
        return self * self.sigmoid()

    def silu(self) -> Self:
        """x * sigmoid(x)."""
        return self.swish()

    def elu(self, alpha: float = 1.0) -> Self:
        """x above 0, alpha*expm1(x) below."""
        x = self._to_float()
        positive = x > 0  # expm1 on x <= 0 only (finite there; NaN stays NaN)
        return positive.where(x, alpha * positive.where(0.0, x).expm1())

    def celu(self, alpha: float = 1.0) -> Self:
        """max(0, x) + min(0, alpha*expm1(x/alpha))."""
        x = self._to_float()
        positive = x > 0
        return positive.where(x, alpha * (positive.where(0.0, x) / alpha).expm1())

    def selu(self, alpha: float = 1.67326, gamma: float = 1.0507) -> Self:
        """gamma * elu(x, alpha)."""
        return gamma * self.elu(alpha)

    def softplus(self, beta: float = 1.0) -> Self:
        """log(1 + exp(beta*x)) / beta, as max(y, 0) + log1p(exp(-|y|)) for y = beta*x: no
        overflow, and e**y itself (not 0) far below 0. Gradient sigmoid(y), 1/2 at 0."""
        y = self._to_float() * beta
        positive = y > 0
        return (positive.where(y, 0.0) + positive.where(-y, y).exp().log1p()) * (1 / beta)

    def mish(self) -> Self:
        """x * tanh(softplus(x))."""
        return self * self.softplus().tanh()

    def logsigmoid(self) -> Self:
        """log(sigmoid(x))."""
        return -(-self).softplus()

    def softsign(self) -> Self:
        """x / (1 + |x|)."""
        return self / (1 + self.abs())

    # -- binary ---------------------------------------------------------------------------------
    def add(self, x: Any, reverse: bool = False) -> Self:
        """self + x (logical or for two bools)."""
        a, b = self._promoted(x, reverse=reverse)
        if a.dtype is dtypes.bool:
            return a._apply(Ops.OR, b)
        return a._apply(Ops.ADD, b)

    def sub(self, x: Any, reverse: bool = False) -> Self:
        """self - x."""
        a, b = self._promoted(x, reverse=reverse)
        if a.dtype is dtypes.bool:
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported"
            )
        return a._apply(Ops.SUB, b)

    def mul(self, x: Any, reverse: bool = False) -> Self:
        """self * x (logical and for two bools)."""
        a, b = self._promoted(x, reverse=reverse)
        if a.dtype is dtypes.bool:
            return a._apply(Ops.AND, b)
        return a._apply(Ops.MUL, b)

    def div(self, x: Any, reverse: bool = False, rounding_mode: str | None = None) -> Self:
        """True division (ints give the default float), or "trunc"/"floor" rounding."""
        a, b = self._promoted(x, reverse=reverse)
        if rounding_mode is None:
            dt = least_upper_float(a.dtype)
            return a.cast(dt)._apply(Ops.FDIV, b.cast(dt))
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(
                f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}"
            )
        if dtypes.is_float(a.dtype):
            q = a._apply(Ops.FDIV, b)
            return q.trunc() if rounding_mode == "trunc" else q.floor()
        if a.dtype is dtypes.bool:
            a, b = a.int(), b.int()
        return a._apply(Ops.CDIV if rounding_mode == "trunc" else Ops.FLOORDIV, b)

    def idiv(self, x: Any, reverse: bool = False) -> Self:
        """Integer division truncating toward zero."""
        return self.div(x, reverse, rounding_mode="trunc")

    def fmod(self, x: Any, reverse: bool = False) -> Self:
        """Remainder with the sign of the dividend (C fmod)."""
        a, b = self._promoted(x, reverse=reverse)
        if dtypes.is_float(a.dtype):
            return a - (a / b).trunc() * b
        return a._apply(Ops.CMOD, b)

    def mod(self, x: Any, reverse: bool = False) -> Self:
        """Remainder with the sign of the divisor (Python %)."""
        a, b = self._promoted(x, reverse=reverse)
        if dtypes.is_float(a.dtype):
            r = a.fmod(b)
            fix = r.ne(0) & ((r < 0) ^ (b < 0))
            return fix.where(r + b, r)
        if a.dtype is dtypes.bool:
            a, b = a.int(), b.int()
        return a._apply(Ops.FLOORMOD, b)

    def pow(self, x: Any, reverse: bool = False) -> Self:
        """self ** x (ints stay ints). An integral Python exponent in 2..8 (or -1)
        multiplies instead (exact for ints, how PyTorch computes x**2 and x**3 for floats, and
        far cheaper than a general pow in a kernel). As in PyTorch, x ** 0.5 is sqrt(x) and
        x ** -0.5 is 1/sqrt(x) (so (-0) ** 0.5 is -0 and (-inf) ** 0.5 NaN), and an int tensor
        to a negative Python int raises."""
        if not reverse and isinstance(x, float) and x in (0.5, -0.5):
            root = self._to_float().sqrt()
            return root if x > 0 else root.reciprocal()
        if not reverse and type(x) is int and x < 0 and dtypes.is_int(self.dtype):
            raise RuntimeError(
                f"Integers to negative integer powers are not allowed ({self.dtype!r} ** {x})"
            )
        if not reverse and not isinstance(x, bool) and isinstance(x, (int, float)):
            keeps_dtype = isinstance(x, int) or dtypes.is_float(self.dtype)
            if keeps_dtype and float(x).is_integer() and -1 <= x <= _MAX_MULTIPLIED_POWER:
                out = self._multiplied_power(int(x))
                if out is not None:
                    return out
        a, b = self._promoted(x, reverse=reverse)
        if a.dtype is dtypes.bool:
            a, b = a.int(), b.int()
        return a._apply(Ops.POW, b)

    def _multiplied_power(self, n: int) -> Self | None:
        """self ** n by square-and-multiply; None for a bool base, an int base with n < 0, and
        n in (0, 1) (pow keeps x ** 0 in the gradient graph, x ** 1 is a new tensor)."""
        if self.dtype is dtypes.bool or n in (0, 1) or (n < 0 and not dtypes.is_float(self.dtype)):
            return None
        if n == -1:
            return self.reciprocal()
        result: Self | None = None
        square = self
        while n:
            if n & 1:
                result = square if result is None else result * square
            n >>= 1
            if n:
                square = square * square
        assert result is not None
        return result

    def maximum(self, x: Any) -> Self:
        """Elementwise max (NaN propagates)."""
        a, b = self._promoted(x)
        if a.dtype is dtypes.bool:
            return a | b
        return a._apply(Ops.MAX, b)

    def minimum(self, x: Any) -> Self:
        """Elementwise min (NaN propagates)."""
        a, b = self._promoted(x)
        if a.dtype is dtypes.bool:
            return a & b
        if dtypes.is_float(a.dtype):
            return -((-a).maximum(-b))
        return ~((~a).maximum(~b))

    def copysign(self, other: Any) -> Self:
        """|self| with the sign of ``other`` (-0.0 counts as negative)."""
        a, b = self._promoted(other)
        a, b = a._to_float(), b._to_float()
        neg = (b < 0) | (b.eq(0) & (b.reciprocal() < 0))
        mag = a.abs()
        return neg.where(-mag, mag)

    def logaddexp(self, other: Any) -> Self:
        """log(exp(self) + exp(other)) as max + log1p(exp(-|self - other|)) (equal values,
        infinities too: max + ln 2)."""
        a, b = self._promoted(other)
        a, b = a._to_float(), b._to_float()
        same = a.eq(b)
        d = same.where(0.0, a - b)
        gap = (d > 0).where(-d, d)
        return a.maximum(b) + gap.exp().log1p()

    def lerp(self, end: Any, weight: Any) -> Self:
        """self + (end - self) * weight."""
        out: Self = self + (end - self) * weight
        return out

    # -- comparisons -----------------------------------------------------------------------------
    def _cmp(self, op: Ops, x: Any, reverse: bool = False) -> Self:
        a, b = self._promoted(x, reverse=reverse)
        return a._apply(op, b, dtype=dtypes.bool)

    def eq(self, x: Any) -> Self:
        """self == x."""
        return self._cmp(Ops.CMPEQ, x)

    def ne(self, x: Any) -> Self:
        """self != x."""
        return self._cmp(Ops.CMPNE, x)

    def lt(self, x: Any) -> Self:
        """self < x."""
        return self._cmp(Ops.CMPLT, x)

    def gt(self, x: Any) -> Self:
        """self > x."""
        return self._cmp(Ops.CMPLT, x, reverse=True)

    def le(self, x: Any) -> Self:
        """self <= x (False with NaN)."""
        a, b = self._promoted(x)
        if dtypes.is_float(a.dtype):
            return a.lt(b) | a.eq(b)
        return b.lt(a).logical_not()

    def ge(self, x: Any) -> Self:
        """self >= x (False with NaN)."""
        a, b = self._promoted(x)
        return b.le(a)

    # -- bitwise ---------------------------------------------------------------------------------
    def _bitwise(self, op: Ops, x: Any, name: str, reverse: bool = False) -> Self:
        a, b = self._promoted(x, reverse=reverse)
        _check_int_or_bool(a, name)
        return a._apply(op, b)

    def bitwise_and(self, x: Any, reverse: bool = False) -> Self:
        """self & x."""
        return self._bitwise(Ops.AND, x, "bitwise_and", reverse)

    def bitwise_or(self, x: Any, reverse: bool = False) -> Self:
        """self | x."""
        return self._bitwise(Ops.OR, x, "bitwise_or", reverse)

    def bitwise_xor(self, x: Any, reverse: bool = False) -> Self:
        """self ^ x."""
        return self._bitwise(Ops.XOR, x, "bitwise_xor", reverse)

    def lshift(self, x: Any, reverse: bool = False) -> Self:
        """self << x."""
        return self._bitwise(Ops.SHL, x, "lshift", reverse)

    def rshift(self, x: Any, reverse: bool = False) -> Self:
        """self >> x."""
        return self._bitwise(Ops.SHR, x, "rshift", reverse)

    # -- selection -------------------------------------------------------------------------------
    def where(self, x: Any, y: Any) -> Self:
        """x where this condition is True, else y."""
        cond = self.cast(dtypes.bool)
        dt = _where_dtype(x, y, type(self))
        a = cond._operand(x).cast(dt) if isinstance(x, type(self)) else cond._const(x, dt, ())
        b = cond._operand(y).cast(dt) if isinstance(y, type(self)) else cond._const(y, dt, ())
        shape = broadcast_shape(cond.shape, a.shape, b.shape)
        c, a, b = (t._broadcast_to(shape) for t in (cond, a, b))
        return c._apply(Ops.WHERE, a, b, dtype=dt)

    def masked_fill(self, mask: Self, value: Any) -> Self:
        """value where mask is True (this tensor's dtype kept)."""
        fill = self._operand(value).cast(self.dtype)
        return mask.where(fill, self)

    def clamp(self, min_: Any = None, max_: Any = None, **kwargs: Any) -> Self:
        """x clipped to [min_, max_] (either may be None, not both); PyTorch's keyword names
        ``min=``/``max=`` work too."""
        unknown = set(kwargs) - {"min", "max"}
        if unknown:
            raise TypeError(f"clamp() got unexpected keyword arguments {sorted(unknown)}")
        min_ = kwargs.get("min", min_)
        max_ = kwargs.get("max", max_)
        if min_ is None and max_ is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        out = self
        if min_ is not None:
            out = out.maximum(min_)
        if max_ is not None:
            out = out.minimum(max_)
        return out

    def clip(self, min_: Any = None, max_: Any = None, **kwargs: Any) -> Self:
        """Alias of clamp."""
        return self.clamp(min_, max_, **kwargs)

    def isclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> Self:
        """|self - other| <= atol + rtol * |other| (infinities equal only to themselves)."""
        a, b = self._promoted(other)
        close = a.eq(b) | ((a - b).abs() <= atol + rtol * b.abs()) & (a - b).isfinite()
        if equal_nan:
            close = close | (a.isnan() & b.isnan())
        return close
