"""sort / argsort / topk: a bitonic sorting network over (value, index) pairs.

The axis is padded to a power of two; each stage compares pairs with the same order (the
first step of a stage mirrors the second half of each block, so every comparison sorts
ascending). Ties break by index, so the sort is stable; NaN sorts last ascending and first
descending, like PyTorch; padding always sorts last."""

from __future__ import annotations

import math
from typing import Any, Self

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.mixin.base import OpMixinBase


def _before(a: Any, ia: Any, b: Any, ib: Any, n: int, descending: bool) -> Any:
    """True where (a, ia) must come before (b, ib)."""
    by_index = ia < ib
    pad = (ia >= n) | (ib >= n)
    first = a > b if descending else a < b
    same = a.eq(b)
    if dtypes.is_float(a.dtype):
        na, nb = a.isnan(), b.isnan()
        first = first | ((na & nb.logical_not()) if descending else (na.logical_not() & nb))
        same = same | (na & nb)
    return pad.where(by_index, first | (same & by_index))


def _halves(x: Any, d: int) -> tuple[Any, Any]:
    """x (..., N) as pairs of blocks of d: (..., N/(2d), d) each."""
    shape = x.shape[:-1]
    v = x.reshape((*shape, int(x.shape[-1]) // (2 * d), 2, d))
    lo = v.shrink([*([None] * (v.ndim - 2)), (0, 1), None]).squeeze(-2)
    hi = v.shrink([*([None] * (v.ndim - 2)), (1, 2), None]).squeeze(-2)
    return lo, hi


def _join(lo: Any, hi: Any) -> Any:
    joined = lo.unsqueeze(-2).cat(hi.unsqueeze(-2), dim=-2)
    return joined.reshape((*joined.shape[:-3], -1))


def _exchange(vals: Any, idx: Any, d: int, mirror: bool, n: int, desc: bool) -> tuple[Any, Any]:
    """One compare-exchange step, realized: every step reads each input element twice, so
    inlining the network into one kernel would grow the expression 2x per step."""
    a, b = _halves(vals, d)
    ia, ib = _halves(idx, d)
    if mirror:
        b, ib = b.flip(-1), ib.flip(-1)
    swap = _before(b, ib, a, ia, n, desc)
    lo, hi = swap.where(b, a), swap.where(a, b)
    ilo, ihi = swap.where(ib, ia), swap.where(ia, ib)
    if mirror:
        hi, ihi = hi.flip(-1), ihi.flip(-1)
    return _join(lo, hi).contiguous(), _join(ilo, ihi).contiguous()


class SortMixin(OpMixinBase):
    """sort, argsort, topk (mixed into UOp and Tensor)."""

    __slots__ = ()

    def sort(self, dim: int = -1, descending: bool = False) -> tuple[Self, Self]:
        """(values, indices) sorted along ``dim`` (stable)."""
        if self.ndim == 0:
            return self, self._const(0, dtypes.int32)
        axis = self._axis(dim)
        x = self.transpose(axis, -1)
        n = int(x.shape[-1])
        if n <= 1:
            idx = x._const(0, dtypes.int32)
            return self, idx.transpose(axis, -1)
        stages = math.ceil(math.log2(n))
        size = 2**stages
        vals = x.pad([*([None] * (x.ndim - 1)), (0, size - n)])
        idx = type(self).arange(size, device=self.device)._broadcast_to(vals.shape)
        for stage in range(1, stages + 1):
            block = 2**stage
            vals, idx = _exchange(vals, idx, block // 2, True, n, descending)
            d = block // 4
            while d >= 1:
                vals, idx = _exchange(vals, idx, d, False, n, descending)
                d //= 2
        crop = [*([None] * (x.ndim - 1)), (0, n)]
        return vals.shrink(crop).transpose(axis, -1), idx.shrink(crop).transpose(axis, -1)

    def argsort(self, dim: int = -1, descending: bool = False) -> Self:
        """Indices that sort along ``dim``."""
        return self.sort(dim, descending)[1]

    def topk(
        self, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True
    ) -> tuple[Self, Self]:
        """The k largest (or smallest) values along ``dim`` and their indices."""
        axis = self._axis(dim) if self.ndim else 0
        n = int(self.shape[axis]) if self.ndim else 1
        if not 0 <= k <= n:
            raise RuntimeError(f"selected index k out of range: k={k} for dim {axis} of size {n}")
        vals, idx = self.sort(dim, descending=largest)
        if self.ndim == 0:
            return vals, idx
        window = [(0, k) if d == axis else None for d in range(self.ndim)]
        return vals.shrink(window), idx.shrink(window)
