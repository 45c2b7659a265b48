# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Indexing with NumPy semantics (``__getitem__``/``__setitem__``), gather/scatter, one_hot,
masked_select and nonzero.

Basic indices (ints, slices with any step, None, Ellipsis) become movement ops. Advanced
indices (int/bool Tensors, lists) select by comparing the index with an ``arange`` (a one-hot
mask) and reducing: everything stays one fused graph. Where the advanced result dims go follows
NumPy: in place when the advanced indices are adjacent, else first.

Out-of-range indices raise IndexError: Python ints and lists at the call, index tensors at the
call when they hold host data, else when the result is realized (``fusegrad.tensor.checks``;
``CHECK_INDEX=0`` turns the tensor checks off). A bound Variable can bound a slice (step 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fusegrad.engine import buffer_of
from fusegrad.tensor.checks import add_check
from fusegrad.tensor.convert import bound_int
from fusegrad.uop import ConstType, Ops, UOp, dtypes, prod, sint

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


@dataclass(frozen=True)
class _DimSel:
    """How one input dim is indexed: a strided window (start, count, step>0, flipped), whether
    it is dropped (an int), or an advanced index tensor."""

    size: sint
    start: sint = 0
    count: sint = 0
    step: int = 1
    flip: bool = False
    drop: bool = False
    advanced: Any = None


@dataclass
class _Plan:
    dims: list[_DimSel]
    out_shape: list[Any]  # output dims of the basic part: ("dim", i) or ("new", None)
    separators: tuple[int, ...] = ()  # out_shape positions an empty Ellipsis stood before


def _is_index_tensor(x: Any) -> bool:
    from fusegrad.tensor.core import TensorCore

    return isinstance(x, (TensorCore, list, np.ndarray)) and not isinstance(x, bool)


def _normalize(t: Tensor, indices: Any) -> list[Any]:
    items = list(indices) if isinstance(indices, tuple) else [indices]
    out: list[Any] = []
    for it in items:
        if _is_index_tensor(it):
            idx = it if hasattr(it, "uop") else type(t)(_list_index(it), device=t.device)
            if idx.dtype is dtypes.bool:
                out.append(_Mask(idx))
                continue
            if not dtypes.is_int(idx.dtype):
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors, "
                    f"got {idx.dtype!r}"
                )
            out.append(idx)
        elif it is None or it is Ellipsis or isinstance(it, slice):
            out.append(it)
        elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
            out.append(int(it))
        else:
            raise IndexError(
                f"only integers, slices, None, Ellipsis and int/bool tensors are valid indices, got {type(it).__name__}"
            )
    consumed = sum(_width(i) for i in out)
    ellipses = [i for i, x in enumerate(out) if x is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    if ellipses:
        i = ellipses[0]
        fill: list[Any] = [slice(None)] * (t.ndim - consumed)
        out[i : i + 1] = fill or [_EMPTY_ELLIPSIS]
    else:
        out.extend([slice(None)] * (t.ndim - consumed))
    return _expand_masks(out, t)


def _python_bools(t: Tensor, indices: Any) -> tuple[Any, set[int]]:
    """A Python bool index is NumPy's 0-d mask: a new axis of size 1 (True) or 0 (False).
    Returns the indices with each bool made ``None`` and the result axes that must be empty.
    Mixed with int, tensor or other bool indices NumPy broadcasts it as an advanced index,
    which is not supported (IndexError)."""
    items = list(indices) if isinstance(indices, tuple) else [indices]
    if not any(isinstance(it, bool) for it in items):
        return indices, set()
    others_basic = all(
        it is None or it is Ellipsis or isinstance(it, slice)
        for it in items
        if not isinstance(it, bool)
    )
    if not others_basic or sum(isinstance(it, bool) for it in items) > 1:
        raise IndexError(
            "a Python bool index is supported once, with slices, None and Ellipsis only "
            f"(not with int, tensor or other bool indices): {indices!r}"
        )
    ellipsis_dims = t.ndim - sum(1 for it in items if isinstance(it, slice))
    out: list[Any] = []
    empty: set[int] = set()
    axis = 0
    for it in items:
        if isinstance(it, bool) and not it:
            empty.add(axis)
        out.append(None if isinstance(it, bool) else it)
        axis += max(ellipsis_dims, 0) if it is Ellipsis else 1
    return tuple(out), empty


_EMPTY_ELLIPSIS = object()
"""An Ellipsis that stands for no dims: it still separates advanced indices (NumPy's rule)."""


def _adjacent(plan: _Plan, adv: list[int]) -> bool:
    """NumPy: advanced index dims stay in place only when nothing separates them."""
    k = len(adv)
    if adv != list(range(adv[0], adv[0] + k)):
        return False
    return not any(adv[0] < s <= adv[-1] for s in plan.separators)


@dataclass(frozen=True)
class _Mask:
    """A bool index: it covers ``mask.ndim`` dims, whose sizes it must match."""

    mask: Any


def _width(item: Any) -> int:
    if item is None or item is Ellipsis:
        return 0
    return int(item.mask.ndim) if isinstance(item, _Mask) else 1


def _expand_masks(items: list[Any], t: Tensor) -> list[Any]:
    """Each bool mask replaced by one int index per dim it covers (shapes checked)."""
    out: list[Any] = []
    d = 0
    for it in items:
        if isinstance(it, _Mask):
            k = it.mask.ndim
            if tuple(it.mask.shape) != tuple(t.shape[d : d + k]):
                raise IndexError(
                    f"The shape of the mask {list(it.mask.shape)} at index {d} does not match "
                    f"the shape of the indexed tensor {list(t.shape)}"
                )
            out.extend(_bool_to_ints(it.mask, t))
            d += k
            continue
        out.append(it)
        d += 0 if it is None or it is _EMPTY_ELLIPSIS else 1
    return out


def _list_index(it: Any) -> np.ndarray[Any, Any]:
    """A list/array index as an array (an empty one is an int index, like NumPy's)."""
    arr = np.asarray(it)
    return arr.astype(np.int32) if arr.size == 0 and arr.dtype.kind == "f" else arr


def _bool_to_ints(mask: Tensor, t: Tensor) -> list[Any]:
    """A bool index becomes one int index per dim it covers (data-dependent: realizes it)."""
    coords = np.nonzero(mask.numpy())
    return [type(t)(c.astype(np.int32), device=t.device) for c in coords]


def _plan(t: Tensor, indices: Any) -> tuple[_Plan, list[int]]:
    items = _normalize(t, indices)
    any_adv = any(hasattr(i, "uop") for i in items)
    dims: list[_DimSel] = []
    out_shape: list[Any] = []
    separators: list[int] = []
    adv_positions: list[int] = []  # position in the items list
    d = 0
    for item in items:
        it = (
            type(t)(item, device=t.device, dtype=dtypes.int32)
            if isinstance(item, int) and any_adv
            else item
        )
        if it is _EMPTY_ELLIPSIS:
            separators.append(len(out_shape))
            continue
        if it is None:
            out_shape.append(("new", None))
            continue
        size = t.shape[d]
        n = bound_int(size)  # a symbolic dim: its bound value
        if isinstance(it, int):
            if not -n <= it < n:
                raise IndexError(f"index {it} is out of bounds for dimension {d} with size {n}")
            start: Any = it % n if isinstance(size, int) or it >= 0 else size + it
            dims.append(_DimSel(size, start, 1, 1, False, drop=True))
        elif isinstance(it, slice):
            dims.append(_slice_sel(it, size))
            out_shape.append(("dim", d))
        else:
            dims.append(_DimSel(n, 0, n, 1, False, advanced=it))
            out_shape.append(("dim", d))
            adv_positions.append(len(out_shape) - 1)
        d += 1
    return _Plan(dims, out_shape, tuple(separators)), adv_positions


def _slice_sel(s: slice, n: Any) -> _DimSel:
    if s.step == 0:
        raise ValueError("slice step cannot be zero")
    if any(isinstance(v, UOp) for v in (s.start, s.stop, s.step, n)):
        return _symbolic_slice_sel(s, n)
    start, stop, step = s.indices(n)
    count = len(range(start, stop, step))
    if step > 0:
        return _DimSel(n, start, count, step)
    return _DimSel(n, n - 1 - start, count, -step, flip=True)


def _symbolic_slice_sel(s: slice, n: Any) -> _DimSel:
    """A slice with a symbolic start/stop (e.g. a bound Variable): step 1 only, and the
    window must fit the dim for every value the Variables can take (no clamping: that would
    make the shape data-dependent). A negative int start/stop counts from the end."""
    if s.step not in (None, 1):
        raise IndexError(f"slicing with a symbolic bound needs step 1, got step {s.step}")
    start: Any = 0 if s.start is None else s.start
    stop: Any = n if s.stop is None else s.stop
    start = start + n if isinstance(start, int) and start < 0 else start
    stop = stop + n if isinstance(stop, int) and stop < 0 else stop
    hi = n.vmax if isinstance(n, UOp) else n
    lo_start = start.vmin if isinstance(start, UOp) else start
    hi_stop = stop.vmax if isinstance(stop, UOp) else stop
    if lo_start < 0 or hi_stop > hi:
        raise IndexError(
            f"symbolic slice [{start}:{stop}] can reach outside the dim of size {n} "
            f"(start >= {lo_start}, stop <= {hi_stop})"
        )
    return _DimSel(n, start, stop if _is_zero(start) else stop - start, 1)


def _is_zero(x: Any) -> bool:
    return isinstance(x, int) and x == 0


def _check_python_indices(idx: Any, n: int, dim: int) -> None:
    if isinstance(idx, (list, np.ndarray)):
        arr = np.asarray(idx)
        if arr.size and (arr.max() >= n or arr.min() < -n):
            bad = arr[(arr >= n) | (arr < -n)].flat[0]
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


class IndexingMixin:
    """Indexing and gather/scatter methods (mixed into Tensor)."""

    def _apply_basic(self: Tensor, plan: _Plan) -> Tensor:
        x = self
        for axis, sel in enumerate(plan.dims):
            if sel.flip:
                x = x.flip(axis)
            if sel.advanced is None and (sel.start, sel.count, sel.step) != (0, sel.size, 1):
                x = x._strided(axis, sel.start, sel.count, sel.step)
        kept = [s for s, sel in zip(x.shape, plan.dims, strict=True) if not sel.drop]
        it = iter(kept)
        shape = [1 if kind == "new" else next(it) for kind, _ in plan.out_shape]
        return x.reshape(shape)

    def _unapply_basic(self: Tensor, plan: _Plan, v: Tensor) -> Tensor:
        """``v`` (shaped like the basic result) placed back into this tensor's shape, zeros
        elsewhere; the inverse of ``_apply_basic`` for setitem."""
        pre = [
            1 if sel.drop else (sel.size if sel.advanced is not None else sel.count)
            for sel in plan.dims
        ]
        x = v.reshape(pre)
        for axis, sel in enumerate(plan.dims):
            if sel.advanced is None:
                x = x._place(axis, sel.size, sel.start, sel.step)
            if sel.flip:
                x = x.flip(axis)
        return x

    def _place(self: Tensor, axis: int, n: sint, start: sint, step: int) -> Tensor:
        count = int(self.shape[axis])
        if (start, count, step) == (0, n, 1):
            return self
        x = self
        if step > 1 and count:
            shape = list(x.shape)
            x = x.unsqueeze(axis + 1).pad(
                [(0, step - 1) if i == axis + 1 else None for i in range(x.ndim + 1)]
            )
            x = x.reshape((*shape[:axis], count * step, *shape[axis + 1 :]))
        length = int(x.shape[axis])
        end = start + length
        pads = [(start, max(0, n - end)) if i == axis else None for i in range(x.ndim)]
        x = x.pad(pads)
        if int(x.shape[axis]) > n:
            x = x.shrink([(0, n) if i == axis else None for i in range(x.ndim)])
        return x

    def _writable(self: Tensor, plan: _Plan) -> bool:
        return all(
            sel.advanced is None and (sel.step == 1 or sel.start + sel.count * sel.step <= sel.size)
            for sel in plan.dims
        )

    def __getitem__(self: Tensor, indices: Any) -> Tensor:
        indices, empty_axes = _python_bools(self, indices)
        if empty_axes:
            x = self[indices]
            return x.shrink(tuple((0, 0) if d in empty_axes else None for d in range(x.ndim)))
        plan, adv = _plan(self, indices)
        x = self._apply_basic(plan)
        if not adv:
            return x
        return x._advanced_get(plan, adv)

    def _advanced_parts(
        self: Tensor, plan: _Plan, adv: list[int]
    ) -> tuple[list[Tensor], list[int], tuple[sint, ...]]:
        index_dims = [plan.out_shape[p][1] for p in adv]
        idx = []
        for d in index_dims:
            raw = plan.dims[d].advanced
            n = plan.dims[d].size
            i = raw.cast(dtypes.int32) if raw.dtype.itemsize < 4 else raw
            wrapped = (i < 0).where(i + n, i)
            add_check(wrapped, raw, n, d, -n, "index")
            idx.append(wrapped)
        from fusegrad.uop.mixin import broadcast_shape

        bshape = broadcast_shape(*(i.shape for i in idx))
        return [i._broadcast_to(bshape) for i in idx], adv, bshape

    def _adv_mask(
        self: Tensor, idx: list[Tensor], adv: list[int], bshape: tuple[sint, ...]
    ) -> Tensor:
        k = len(adv)
        mask: Tensor | None = None
        for j, (i, p) in enumerate(zip(idx, adv, strict=True)):
            n = self.shape[p]
            view: list[sint] = [1] * k
            view[j] = n
            ar = type(self).arange(n, device=self.device).reshape(view)
            eq = i.reshape((*bshape, *([1] * k))).eq(ar.reshape((*([1] * len(bshape)), *view)))
            mask = eq if mask is None else mask & eq
        assert mask is not None
        return mask

    def _advanced_get(self: Tensor, plan: _Plan, adv: list[int]) -> Tensor:
        idx, adv, bshape = self._advanced_parts(plan, adv)
        rest = [i for i in range(self.ndim) if i not in adv]
        x = self.permute((*rest, *adv))
        rshape = [x.shape[i] for i in range(len(rest))]
        k = len(adv)
        nb = len(bshape)
        x = x.reshape((*rshape, *([1] * nb), *x.shape[len(rest) :]))
        mask = self._adv_mask(idx, adv, bshape)
        work = x.cast(dtypes.uint8) if x.dtype is dtypes.bool else x
        picked = mask.where(work, work._const(0, shape=()))
        axes = tuple(range(picked.ndim - k, picked.ndim))
        out = picked._reduce(Ops.ADD, axes, False, "index")
        out = out.cast(dtypes.bool) if x.dtype is dtypes.bool else out
        adjacent = _adjacent(plan, adv)
        if not adjacent:
            return out.permute((*range(len(rest), len(rest) + nb), *range(len(rest))))
        first = adv[0]
        order = [*range(first), *range(len(rest), len(rest) + nb), *range(first, len(rest))]
        return out.permute(order)

    def _advanced_put(self: Tensor, plan: _Plan, adv: list[int], value: Tensor) -> Tensor:
        """This (basic-indexed) tensor with ``value`` written at the advanced positions."""
        idx, adv, bshape = self._advanced_parts(plan, adv)
        rest = [i for i in range(self.ndim) if i not in adv]
        k, nb = len(adv), len(bshape)
        adjacent = _adjacent(plan, adv)
        first = adv[0] if adjacent else 0
        vperm = (
            [*range(first), *range(first + nb, len(rest) + nb), *range(first, first + nb)]
            if adjacent
            else [*range(nb, nb + len(rest)), *range(nb)]
        )
        v = value.permute(vperm)  # (rest..., b...)
        v = v.reshape((*v.shape, *([1] * k)))
        mask = self._adv_mask(idx, adv, bshape)
        work = v.cast(dtypes.uint8) if v.dtype is dtypes.bool else v
        placed = mask.where(work, work._const(0, shape=()))._reduce(
            Ops.ADD, tuple(range(len(rest), len(rest) + nb)), False, "index_put"
        )
        hit = mask.any(tuple(range(nb)))
        placed = placed.cast(self.dtype)
        x = self.permute((*rest, *adv))
        out = hit.where(placed, x)
        inverse = [0] * self.ndim
        for i, p in enumerate((*rest, *adv)):
            inverse[p] = i
        return out.permute(inverse)

    def __setitem__(self: Tensor, indices: Any, value: Any) -> None:
        indices, empty_axes = _python_bools(self, indices)
        if empty_axes:
            self._operand(value)._broadcast_to(self[indices].shape)  # shapes still checked
            return  # x[False] selects nothing: nothing to write
        plan, adv = _plan(self, indices)
        basic = self._apply_basic(plan)
        v = self._operand(value).cast(self.dtype)
        grad = bool(self.requires_grad or v.requires_grad) and not type(self).no_grad
        base = self.uop
        while base.op is Ops.AFTER:
            base = base.src[0]
        if not adv and not grad and buffer_of(base) is not None and self._writable(plan):
            target = basic.uop
            v = v._broadcast_to(basic.shape)
            self.replace(self._wrap(_after_store(self.uop, target, v.uop)))
            return
        if adv:
            selected = basic._advanced_get(plan, adv).shape
            v = v._broadcast_to(selected)
            if 0 in selected:
                return  # an empty selection: nothing to write
            new_view = basic._advanced_put(plan, adv, v)
        else:
            new_view = v._broadcast_to(basic.shape)
        placed = self._unapply_basic(plan, new_view)
        mask = self._unapply_basic(plan, new_view._const(True, dtypes.bool))
        new = mask.where(placed, self)
        if grad or buffer_of(base) is None:
            self.replace(new)
            if grad:
                self.requires_grad_(True)
            return
        self.assign(new.detach())

    # -- gather / scatter ------------------------------------------------------------------------
    def _gather_mask(
        self: Tensor, dim: int, index: Tensor, op: str | None = "gather"
    ) -> tuple[Tensor, int]:
        """(one-hot mask of ``index`` along ``dim``, the axis); ``op`` names the range check
        (None: the caller knows the indices are in range)."""
        axis = self._axis(dim)
        if index.ndim != self.ndim:
            raise RuntimeError(f"gather: index has {index.ndim} dims but input has {self.ndim}")
        if not dtypes.is_int(index.dtype):
            raise RuntimeError(f"gather(): Expected dtype int for index, got {index.dtype!r}")
        for d, (a, b) in enumerate(zip(index.shape, self.shape, strict=True)):
            if d != axis and a > b:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {tuple(index.shape)} to be "
                    f"smaller than self {tuple(self.shape)} apart from dimension {axis}"
                )
        n = self.shape[axis]
        i = index.transpose(axis, -1)
        i = (i < 0).where(i + n, i)
        mask = i.unsqueeze(-1).eq(type(self).arange(n, device=self.device))
        if op is not None:
            add_check(mask, index, n, axis, 0, op)
        return mask, axis

    def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:
        """out[i][j] = self[i][index[i][j]] along ``dim``. Indices must lie in [0, size)
        (IndexError otherwise, see ``fusegrad.tensor.checks``)."""
        return self._gather(dim, index, "gather")

    def _gather(self: Tensor, dim: int, index: Tensor, check: str | None) -> Tensor:
        mask, axis = self._gather_mask(dim, index, check)
        x = self.shrink([None if d == axis else (0, s) for d, s in enumerate(index.shape)])
        xt = x.transpose(axis, -1).unsqueeze(-2)
        work = xt.cast(dtypes.uint8) if xt.dtype is dtypes.bool else xt
        out = mask.where(work, work._const(0, shape=()))._reduce(Ops.ADD, -1, False, "gather")
        return out.cast(self.dtype).transpose(axis, -1)

    def _scatter_parts(
        self: Tensor, dim: int, index: Tensor, src: Any
    ) -> tuple[Tensor, Tensor, int]:
        mask, axis = self._gather_mask(dim, index, "scatter")
        s = self._operand(src).cast(self.dtype)
        if s.ndim == 0:
            s = s._broadcast_to(index.shape)
        s = s.shrink([(0, d) for d in index.shape]) if s.shape != index.shape else s
        st = s.transpose(axis, -1).unsqueeze(-1)  # (O..., m, 1)
        return mask, st, axis

    def _scatter_pad(self: Tensor, x: Tensor, axis: int, index: Tensor) -> Tensor:
        # x is (O..., n) with dim moved last; pad the O dims back to self's sizes
        t = x.transpose(axis, -1)
        return t.pad(
            [None if d == axis else (0, self.shape[d] - index.shape[d]) for d in range(self.ndim)]
        )

    def scatter(
        self: Tensor, dim: int, index: Tensor, src: Any, reduce: str | None = None
    ) -> Tensor:
        """self with src written at index along ``dim`` (``reduce``: "add"/"multiply")."""
        if reduce is not None:
            mode = {"add": "sum", "multiply": "prod"}.get(reduce)
            if mode is None:
                raise RuntimeError(
                    f"reduce argument must be either add or multiply, got {reduce!r}"
                )
            return self.scatter_reduce(dim, index, src, mode)
        mask, st, axis = self._scatter_parts(dim, index, src)
        work = st.cast(dtypes.uint8) if st.dtype is dtypes.bool else st
        placed = (
            mask.where(work, work._const(0, shape=()))
            ._reduce(Ops.ADD, -2, False, "scatter")
            .cast(self.dtype)
        )
        hit = mask.any(-2)
        return self._scatter_pad(hit, axis, index).where(
            self._scatter_pad(placed, axis, index), self
        )

    def scatter_reduce(
        self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool = True
    ) -> Tensor:
        """self with src reduced in at index along ``dim``: sum, prod, mean, amax, amin."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise RuntimeError(
                f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
            )
        mask, st, axis = self._scatter_parts(dim, index, src)
        hit = self._scatter_pad(mask.any(-2), axis, index)
        fill: ConstType = {"sum": 0, "mean": 0, "prod": 1}.get(reduce, 0)
        if reduce in ("amax", "amin"):
            lo = -float("inf") if dtypes.is_float(self.dtype) else dtypes.min(self.dtype)
            hi = float("inf") if dtypes.is_float(self.dtype) else dtypes.max(self.dtype)
            fill = lo if reduce == "amax" else hi
        picked = mask.where(st, st._const(fill, shape=()))
        red = {
            "sum": picked.sum,
            "mean": picked.sum,
            "prod": picked.prod,
            "amax": picked.max,
            "amin": picked.min,
        }[reduce](-2)
        red = self._scatter_pad(red.cast(self.dtype), axis, index)
        if reduce == "mean":
            count = self._scatter_pad(mask.sum(-2), axis, index)
            total = red + self if include_self else red
            out = total / (count + (1 if include_self else 0)).maximum(1)
            out = (
                out.cast(self.dtype)
                if dtypes.is_float(self.dtype)
                else out.floor().cast(self.dtype)
            )
            return hit.where(out, self)
        if include_self:
            combine = {"sum": red.add, "prod": red.mul, "amax": red.maximum, "amin": red.minimum}[
                reduce
            ]
            return hit.where(combine(self).cast(self.dtype), self)
        return hit.where(red, self)

    def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
        """int tensor with a new last dim of ``num_classes``: 1 at the index, 0 elsewhere.
        Values outside [0, num_classes) raise IndexError (see ``fusegrad.tensor.checks``)."""
        if not dtypes.is_int(self.dtype):
            raise RuntimeError(f"one_hot is only applicable to index tensor, got {self.dtype!r}")
        if num_classes == -1:
            num_classes = int(self.max().item()) + 1 if self.numel() else 0
        ar = type(self).arange(num_classes, device=self.device)
        out = self.unsqueeze(-1).eq(ar).where(1, 0)
        add_check(out, self, num_classes, -1, 0, "one_hot")
        return out

    def masked_select(
        self: Tensor, mask: Tensor, size: int | None = None, fill_value: ConstType = 0
    ) -> Tensor:
        """The elements where ``mask`` is True, as 1-d. Without ``size`` the length depends on
        the data (the mask is realized); with ``size`` the result has that length, cut or padded
        with ``fill_value``, and stays lazy."""
        from fusegrad.uop.mixin import broadcast_shape

        if mask.dtype is not dtypes.bool:
            raise RuntimeError(f"masked_select: expected a bool mask, got {mask.dtype!r}")
        shape = broadcast_shape(self.shape, mask.shape)
        flat = self._broadcast_to(shape).flatten()
        flat_mask = mask._broadcast_to(shape).flatten()
        if size is None:
            positions = np.flatnonzero(flat_mask.numpy())
            return flat[type(self)(positions.astype(np.int32), device=self.device)]
        return _select_first(flat, flat_mask, size, fill_value)

    def nonzero(self: Tensor, size: int | None = None, fill_value: ConstType = 0) -> Tensor:
        """(count, ndim) int32 coordinates of the nonzero elements. Without ``size`` the count
        depends on the data (this tensor is realized); with ``size`` the result has ``size``
        rows, cut or padded with ``fill_value``, and stays lazy."""
        if size is None:
            coords = np.argwhere(self.numpy()).astype(np.int32)
            return type(self)(coords.reshape(-1, self.ndim), device=self.device)
        mask = self.ne(0).flatten()
        cols = [
            type(self)
            .arange(int(s), device=self.device)
            .reshape([int(s) if i == d else 1 for i in range(self.ndim)])
            ._broadcast_to(self.shape)
            .flatten()
            for d, s in enumerate(self.shape)
        ]
        picked = [_select_first(c, mask, size, fill_value) for c in cols]
        if not picked:
            return type(self).full((size, 0), 0, dtype=dtypes.int32, device=self.device)
        return picked[0].stack(*picked[1:], dim=-1)


def _select_first(flat: Tensor, mask: Tensor, size: int, fill_value: ConstType) -> Tensor:
    """The first ``size`` elements of 1-d ``flat`` where ``mask`` holds, padded with
    ``fill_value``: output j takes the element whose running count of True is j + 1."""
    if size < 0:
        raise RuntimeError(f"size must be non-negative, got {size}")
    rank = mask.cast(dtypes.int32).cumsum(0) - 1  # the output slot of each selected element
    slots = type(flat).arange(size, device=flat.device).reshape(size, 1)
    pick = mask.reshape(1, -1) & rank.reshape(1, -1).eq(slots)  # (size, n): one True per row
    if flat.dtype is dtypes.bool:
        got = (pick & flat.reshape(1, -1)).any(-1)
    else:  # a max over one picked value and the lowest value: exact, -0.0 and NaN included
        lowest = -math.inf if dtypes.is_float(flat.dtype) else dtypes.min(flat.dtype)
        got = pick.where(flat.reshape(1, -1), flat._const(lowest, shape=())).max(-1)
    filled = pick.any(-1).where(got, flat._const(fill_value, shape=()))
    return filled.cast(flat.dtype)


def _after_store(whole: Any, target: Any, value: Any) -> Any:
    from fusegrad.uop import UOp

    return UOp(Ops.AFTER, whole.dtype, (whole, target.store(value)))


_unused = prod
