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
from fusegrad.uop.mixin import transcendental as tm
from fusegrad.uop.mixin.base import OpMixinBase, broadcast_shape
from fusegrad.uop.opcodes import Ops

_LOG2_E = 1 / math.log(2)
_LN_2 = math.log(2)
_SQRT_HALF = math.sqrt(0.5)


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
        cos x is +-cos r or +-sin r by the quadrant q, float32 with polynomials for both on
        |r| <= pi/4 (no SIN there). Beyond |x| = 12800 (where the reduction stops being
        exact) 1 - 2 sin(x/2)**2: an absolute error of a few 1e-7. float16/bfloat16 are
        computed in float32 and rounded once."""
        x = self._to_float()
        if x.dtype in tm.HALF_FLOATS:
            return x.float().cos().cast(x.dtype)
        near = x.abs() < tm.COS_REDUCE_LIMIT
        far_half = (x * 0.5).sin()
        far = 1 - 2 * (far_half * far_half)
        if x.dtype is not dtypes.float32:
            return near.where(tm.cos_reduced_with_sin(x), far)
        xn = near.where(x, 0.0)  # the near branch on finite, reducible values only
        k, q = tm.rounded_exponent(xn, xn * (2 / math.pi))
        r = (((xn - q * tm.PIO2_1) - q * tm.PIO2_2) - q * tm.PIO2_3) - q * tm.PIO2_4
        z = r * r
        sin_r = r * tm.polynomial(z, tm.SIN_POLY)
        cos_r = tm.polynomial(z, tm.COS_POLY)
        value = (k & 1).eq(1).where(sin_r, cos_r)
        # quadrants 1 and 2 are negative: (k + 1) & 2
        return near.where(((k + 1) & 2).eq(2).where(-value, value), far)

    def tan(self) -> Self:
        """Tangent."""
        return self.sin() / self.cos()

    def asin(self) -> Self:
        """Arcsine: a polynomial on |x| <= 1/2, pi/2 - 2 asin(sqrt((1 - |x|)/2)) above; odd,
        -0 kept, NaN beyond +-1."""
        x = self._to_float()
        negative, a = tm.magnitude(x)
        small, p = tm.asin_parts(a)
        value = small.where(p, math.pi / 2 - 2 * p)
        return negative.where(-value, value)

    def acos(self) -> Self:
        """Arccosine: pi/2 - asin x on |x| <= 1/2, 2 asin(sqrt((1 - x)/2)) above and
        pi - that below (no pi/2 - asin cancelling near 1)."""
        x = self._to_float()
        negative, a = tm.magnitude(x)
        small, p = tm.asin_parts(a)
        near_zero = math.pi / 2 - negative.where(-p, p)
        return small.where(near_zero, negative.where(math.pi - 2 * p, 2 * p))

    def atan(self) -> Self:
        """Arctangent: asin(b / sqrt(1 + b**2)) with b = |x| up to 1, pi/2 minus that for
        b = 1/|x| above (no x**2 overflow); odd, -0 kept."""
        x = self._to_float()
        negative, a = tm.magnitude(x)
        big = a > 1
        b = big.where(1 / big.where(a, 1.0), a)  # 1/a on a stand-in where unselected
        small, p = tm.asin_parts(b / (1 + b * b).sqrt())
        inner = small.where(p, math.pi / 2 - 2 * p)
        value = big.where(math.pi / 2 - inner, inner)
        return negative.where(-value, value)

    def sinh(self) -> Self:
        """Hyperbolic sine: (m + m/(m + 1))/2 with m = expm1(|x|) below |x| = 1 (no
        cancellation near 0), h (h/2) - e**-|x|/2 with h = e**(|x|/2) above (finite up to
        sinh's own overflow at 89.4, past exp's at 88.7); odd, -0 kept."""
        x = self._to_float()
        negative, a = tm.magnitude(x)
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
        _, a = tm.magnitude(x)
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
        negative, a = tm.magnitude(x)
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
        if x.dtype in tm.HALF_FLOATS:
            return x.float().exp().cast(x.dtype)
        return tm.exp_reduced(x, overflows=True)

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
        negative, a = tm.magnitude(x)
        near = a < 0.5
        s = near.where(x, 0.0)
        series = s * tm.polynomial(s * s, tm.ERF_TAYLOR)
        far = 1 - tm.erfc_of_magnitude(a)
        return near.where(series, negative.where(-far, far))

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
        if x.dtype in tm.HALF_FLOATS:
            return x.float().sigmoid().cast(x.dtype)
        negative = x < 0
        e = tm.exp_reduced(negative.where(x, -x), overflows=False)
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
        if x.dtype in tm.HALF_FLOATS:
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
        a = (a > tm.TANH_SATURATED).where(tm.TANH_SATURATED, a)
        m = tm.expm1_of_double(a)
        magnitude = m / (m + 2)
        return negative.where(-magnitude, magnitude)

    def gelu(self, approximate: str = "tanh") -> Self:
        """GELU: the tanh approximation (tinygrad's default) or exact with ``"none"``. The tanh
        form as x sigmoid(2z) (= x (1 + tanh z)/2, z = sqrt(2/pi) (x + 0.044715 x**3)): no
        1 + tanh cancelling to 0 for negative x. The exact form as x erfc(-x/sqrt 2)/2."""
        if approximate == "none":
            x = self._to_float()
            return x * tm.erfc(x * -_SQRT_HALF) * 0.5
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
