"""Reductions (sum/prod/max/min/mean/var/std/any/all/argmax...), softmax family and the
cumulative ops. Empty reductions follow PyTorch: identities for sum/prod/any/all, NaN for
mean/var, an error for max/min/argmax."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from fusegrad.uop.dtype import DType, dtypes, sum_acc_dtype, to_dtype
from fusegrad.uop.mixin.base import OpMixinBase
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.uop import sint


Axis = int | Sequence[int] | None
_IDENTITY = {Ops.ADD: 0, Ops.MUL: 1}


class ReduceMixin(OpMixinBase):
    """Reductions and cumulative ops (mixed into UOp and Tensor)."""

    __slots__ = ()

    def _reduce(self, op: Ops, axis: Axis, keepdim: bool, name: str) -> Self:
        axes = self._axes(axis)
        kept = tuple(1 if i in axes else s for i, s in enumerate(self.shape))
        if any(self.shape[a] == 0 for a in axes):
            if op not in _IDENTITY:
                raise RuntimeError(
                    f"{name}(): cannot perform a reduction on dim(s) {axes} of size 0 of a tensor "
                    f"of shape {tuple(self.shape)}: the operation has no identity"
                )
            out = self._const(_IDENTITY[op], shape=kept)
        else:
            out = self._wrap(self.uop.r(op, axes))
        if keepdim:
            return out
        return out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))

    def sum(self, axis: Axis = None, keepdim: bool = False, dtype: Any = None) -> Self:
        """Sum over ``axis`` (accumulating in ``dtype``, or int32+/float32+ by default)."""
        acc = to_dtype(dtype) if dtype is not None else sum_acc_dtype(self.dtype)
        out = self.cast(acc)._reduce(Ops.ADD, axis, keepdim, "sum")
        if dtype is None and dtypes.is_float(self.dtype):
            return out.cast(self.dtype)
        return out

    def prod(self, axis: Axis = None, keepdim: bool = False, dtype: Any = None) -> Self:
        """Product over ``axis``."""
        acc = to_dtype(dtype) if dtype is not None else sum_acc_dtype(self.dtype)
        out = self.cast(acc)._reduce(Ops.MUL, axis, keepdim, "prod")
        if dtype is None and dtypes.is_float(self.dtype):
            return out.cast(self.dtype)
        return out

    def max(self, axis: Axis = None, keepdim: bool = False) -> Self:
        """Maximum over ``axis`` (NaN propagates)."""
        if self.dtype is dtypes.bool:
            return self.cast(dtypes.uint8)._reduce(Ops.MAX, axis, keepdim, "max").cast(dtypes.bool)
        return self._reduce(Ops.MAX, axis, keepdim, "max")

    def min(self, axis: Axis = None, keepdim: bool = False) -> Self:
        """Minimum over ``axis`` (NaN propagates)."""
        if dtypes.is_float(self.dtype):
            return -((-self).max(axis, keepdim))
        return ~((~self).max(axis, keepdim))

    def mean(self, axis: Axis = None, keepdim: bool = False) -> Self:
        """Mean over ``axis`` (ints give the default float; empty gives NaN)."""
        x = self._to_float()
        total = x.sum(axis, keepdim, dtype=sum_acc_dtype(x.dtype))
        n = self._count(axis)
        out: Self = (total / n).cast(x.dtype)
        return out

    def _count(self, axis: Axis) -> Any:
        count: Any = 1
        for a in self._axes(axis):
            count = count * self.shape[a]
        return count

    def var(self, axis: Axis = None, keepdim: bool = False, correction: int = 1) -> Self:
        """Variance with Bessel's ``correction``."""
        x = self._to_float()
        dev = x - x.mean(axis, keepdim=True)
        n = self._count(axis)
        denom = n - correction
        if isinstance(denom, int):
            denom = max(0, denom)
        out: Self = (dev * dev).sum(axis, keepdim) / denom
        return out

    def std(self, axis: Axis = None, keepdim: bool = False, correction: int = 1) -> Self:
        """Standard deviation."""
        return self.var(axis, keepdim, correction).sqrt()

    def var_mean(
        self, axis: Axis = None, keepdim: bool = False, correction: int = 1
    ) -> tuple[Self, Self]:
        """(var, mean)."""
        return self.var(axis, keepdim, correction), self.mean(axis, keepdim)

    def std_mean(
        self, axis: Axis = None, keepdim: bool = False, correction: int = 1
    ) -> tuple[Self, Self]:
        """(std, mean)."""
        return self.std(axis, keepdim, correction), self.mean(axis, keepdim)

    def any(self, axis: Axis = None, keepdim: bool = False) -> Self:
        """True where any element along ``axis`` is nonzero (False when empty)."""
        x = self.bool().cast(dtypes.uint8)
        axes = self._axes(axis)
        if any(self.shape[a] == 0 for a in axes):
            return x._reduce(Ops.ADD, axis, keepdim, "any").bool()
        return x._reduce(Ops.MAX, axis, keepdim, "any").bool()

    def all(self, axis: Axis = None, keepdim: bool = False) -> Self:
        """True where every element along ``axis`` is nonzero (True when empty)."""
        return self.logical_not().any(axis, keepdim).logical_not()

    def _arg_extreme(self, axis: int | None, keepdim: bool, largest: bool) -> Self:
        if axis is None:
            out = self.flatten()._arg_extreme(0, False, largest)
            return out.reshape((1,) * self.ndim) if keepdim else out
        name = "argmax" if largest else "argmin"
        ax = self._axis(axis) if self.ndim else 0
        x = self if self.ndim else self.reshape(1)
        n = x.shape[ax]
        if n == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim {ax} to have non-zero size")
        best = x.max(ax, keepdim=True) if largest else x.min(ax, keepdim=True)
        hit = x.eq(best)
        if dtypes.is_float(x.dtype):
            hit = hit | x.isnan()
        shape: list[sint] = [1] * x.ndim
        shape[ax] = n
        rev = type(self).arange(n, 0, -1, device=self.device).reshape(shape)
        idx = n - hit.where(rev, rev._const(0, shape=())).max(ax, keepdim=True)
        idx = idx.cast(dtypes.int32)
        if not self.ndim:
            return idx.reshape(())
        return idx if keepdim else idx.squeeze(ax)

    def argmax(self, axis: int | None = None, keepdim: bool = False) -> Self:
        """Index of the first maximum (NaN counts as the maximum)."""
        return self._arg_extreme(axis, keepdim, True)

    def argmin(self, axis: int | None = None, keepdim: bool = False) -> Self:
        """Index of the first minimum."""
        return self._arg_extreme(axis, keepdim, False)

    def logsumexp(self, axis: Axis = None, keepdim: bool = False) -> Self:
        """log(sum(exp(x))) computed stably."""
        x = self._to_float()
        m: Self = _shift(x, axis)
        m = m.isinf().where(m._const(0), m)
        out = (x - m).exp().sum(axis, keepdim=True).log() + m
        return out if keepdim else out.squeeze(self._axes(axis))

    def softmax(self, axis: int = -1, dtype: Any = None) -> Self:
        """exp(x) / sum(exp(x)) along ``axis``."""
        x = self.cast(to_dtype(dtype)) if dtype is not None else self._to_float()
        peak: Self = _shift(x, axis)
        # 2**(x log2 e), not the range-reduced exp: its last ulps wash out in the normalized
        # sum, and two ops keep softmax fused in three kernels
        e = ((x - peak) * (1 / math.log(2))).exp2()
        return e / e.sum(axis, keepdim=True)

    def log_softmax(self, axis: int = -1, dtype: Any = None) -> Self:
        """log(softmax(x)) computed stably."""
        x = self.cast(to_dtype(dtype)) if dtype is not None else self._to_float()
        peak: Self = _shift(x, axis)
        shifted = x - peak
        return shifted - shifted.exp().sum(axis, keepdim=True).log()

    def softmin(self, axis: int = -1, dtype: Any = None) -> Self:
        """softmax(-x)."""
        return (-self._to_float()).softmax(axis, dtype)

    def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Self:
        """x / max(||x||_p, eps) along ``dim`` (torch.nn.functional.normalize)."""
        norm = (self.abs() ** p).sum(dim, keepdim=True) ** (1 / p)
        return self / norm.maximum(eps)

    # -- cumulative ---------------------------------------------------------------------------------
    def _cumulative(self, axis: int, op: Ops, fill: Any) -> Self:
        if self.ndim == 0:
            return self
        ax = self._axis(axis)
        x = self.transpose(ax, -1)
        n = x.shape[-1]
        rows = type(self).arange(n, device=self.device).reshape(n, 1)
        cols = type(self).arange(n, device=self.device).reshape(1, n)
        window = x.unsqueeze(-2).expand((*x.shape[:-1], n, n))
        masked = (cols <= rows).where(window, window._const(fill, shape=()))
        out = masked.max(-1) if op is Ops.MAX else masked._reduce(op, -1, False, "cumulative")
        return out.transpose(ax, -1)

    def cumsum(self, axis: int = 0) -> Self:
        """Running sum along ``axis``."""
        acc = sum_acc_dtype(self.dtype)
        out = self.cast(acc)._cumulative(axis, Ops.ADD, 0)
        return out.cast(self.dtype) if dtypes.is_float(self.dtype) else out

    def cumprod(self, axis: int = 0) -> Self:
        """Running product along ``axis``."""
        acc = sum_acc_dtype(self.dtype)
        out = self.cast(acc)._cumulative(axis, Ops.MUL, 1)
        return out.cast(self.dtype) if dtypes.is_float(self.dtype) else out

    def cummax(self, axis: int = 0) -> tuple[Self, Self]:
        """(running maximum along ``axis``, int32 index where it was last reached), like
        ``torch.cummax``."""
        values = self._cumulative(axis, Ops.MAX, _lowest(self.dtype))
        return values, _running_index(self, values, axis)

    def cummin(self, axis: int = 0) -> tuple[Self, Self]:
        """(running minimum along ``axis``, int32 index where it was last reached), like
        ``torch.cummin``."""
        flipped = -self if dtypes.is_float(self.dtype) else ~self
        top = flipped._cumulative(axis, Ops.MAX, _lowest(self.dtype))
        values = -top if dtypes.is_float(self.dtype) else ~top
        return values, _running_index(self, values, axis)

    def logcumsumexp(self, axis: int = 0) -> Self:
        """log(cumsum(exp(x))) computed stably."""
        x = self._to_float()
        if x.ndim == 0:
            return x
        m: Self = _shift(x, axis)
        m = m.isinf().where(m._const(0), m)
        return (x - m).exp().cumsum(axis).log() + m


def _shift(x: Any, axis: Axis) -> Any:
    """The max along ``axis`` (kept) that exp-sums subtract for stability; zeros when the axis
    is empty (nothing to shift, and a max over nothing is an error): an empty softmax is
    empty and an empty logsumexp is -inf, like PyTorch."""
    axes = x._axes(axis)
    if any(isinstance(x.shape[a], int) and x.shape[a] == 0 for a in axes):
        return x._const(0, shape=[1 if i in axes else s for i, s in enumerate(x.shape)])
    return x.max(axis, keepdim=True)


def _running_index(x: Any, values: Any, axis: int) -> Any:
    """For each position i along ``axis``: the last j <= i with x[j] equal to values[i] (NaN
    matching NaN), the index PyTorch's cummax/cummin report."""
    if x.ndim == 0:
        return x._const(0, dtypes.int32, ())
    ax = x._axis(axis)
    xt, vt = x.transpose(ax, -1), values.transpose(ax, -1)
    n = xt.shape[-1]
    pos = type(x).arange(n, device=x.device)
    seen = xt.unsqueeze(-2)  # [..., i, j] = x[j]
    best = vt.unsqueeze(-1)  # [..., i, j] = values[i]
    same = seen.eq(best) | (seen.ne(seen) & best.ne(best))  # x != x only for NaN
    match = same & (pos.reshape(1, n) <= pos.reshape(n, 1))
    return match.where(pos, -1).max(-1).cast(dtypes.int32).transpose(ax, -1)


def _lowest(dt: DType) -> Any:
    return -math.inf if dtypes.is_float(dt) else dtypes.min(dt)
