"""Indexing with NumPy semantics (``__getitem__``), gather/scatter, one_hot, masked_select and
nonzero, for ``UOp`` and ``Tensor`` alike.

Basic indices (ints, slices with any step, None, Ellipsis) become movement ops. Advanced
indices (int/bool index values, lists) select by comparing the index with an ``arange`` (a
one-hot mask) and reducing: everything stays one graph. Where the advanced result dims go
follows NumPy: in place when the advanced indices are adjacent, else first.

What needs data stays behind primitives a class may provide (``OpMixinBase`` has the UOp
defaults): ``_index_check`` (Tensor: the deferred range checks of ``fusegrad.tensor.checks``;
a UOp checks Python indices only), ``_index_from_list`` (Tensor: a host buffer; a UOp: a
graph of constants), ``_nonzero_host`` (Tensor: realizes; a UOp: ValueError, use ``size=``).

>>> from fusegrad.uop import UOp, dtypes
>>> x = UOp.new_buffer("CPU", 12, dtypes.float32).reshape(3, 4)
>>> x[1:, ::2].shape, x[[0, 2], None].shape, x[..., 1].shape
((2, 2), (2, 1, 4), (3,))
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.mixin.base import OpMixinBase, broadcast_shape
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.dtype import ConstType
    from fusegrad.uop.uop import sint


@dataclass(frozen=True)
class DimSel:
    """How one input dim is indexed: a strided window (start, count, step>0, flipped), whether
    it is dropped (an int), or an advanced index value."""

    size: sint
    start: sint = 0
    count: sint = 0
    step: int = 1
    flip: bool = False
    drop: bool = False
    advanced: Any = None


@dataclass
class IndexPlan:
    """The basic part of an index: one ``DimSel`` per input dim, the output dims of the basic
    part (("dim", i) or ("new", None)), and where an empty Ellipsis stood."""

    dims: list[DimSel]
    out_shape: list[Any]
    separators: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Mask:
    """A bool index: it covers ``mask.ndim`` dims, whose sizes it must match."""

    mask: Any


_EMPTY_ELLIPSIS = object()
"""An Ellipsis that stands for no dims: it still separates advanced indices (NumPy's rule)."""


def bound_int(x: Any) -> int:
    """The value of a size: an int, or a symbolic size at its bound Variables' values."""
    from fusegrad.uop.uop import UOp, sym_infer

    if not isinstance(x, UOp):
        return int(x)
    values = {}
    for u in x.toposort():
        if u.is_bound_var:
            var, value = u.unbind()
            values[var.arg[0]] = value
    return int(sym_infer(x, values))


def nested_shape(data: Any) -> tuple[tuple[int, ...], list[Any]]:
    """(shape, flat values) of a nested list/tuple of scalars; ValueError when ragged."""
    if not isinstance(data, (list, tuple)):
        return (), [data]
    if not data:
        return (0,), []
    parts = [nested_shape(d) for d in data]
    inner = parts[0][0]
    if any(p[0] != inner for p in parts):
        raise ValueError(f"an index list must be rectangular, got {data!r}")
    return (len(data), *inner), [v for p in parts for v in p[1]]


def _is_zero(x: Any) -> bool:
    return isinstance(x, int) and x == 0


def slice_sel(s: slice, n: Any) -> DimSel:
    """The window a slice selects from a dim of size ``n``."""
    from fusegrad.uop.uop import UOp

    if s.step == 0:
        raise ValueError("slice step cannot be zero")
    if any(isinstance(v, UOp) for v in (s.start, s.stop, s.step, n)):
        return _symbolic_slice_sel(s, n)
    start, stop, step = s.indices(n)
    count = len(range(start, stop, step))
    if step > 0:
        return DimSel(n, start, count, step)
    return DimSel(n, n - 1 - start, count, -step, flip=True)


def _symbolic_slice_sel(s: slice, n: Any) -> DimSel:
    """A slice with a symbolic start/stop (e.g. a bound Variable): step 1 only, and the
    window must fit the dim for every value the Variables can take (no clamping: that would
    make the shape data-dependent). A negative int start/stop counts from the end."""
    from fusegrad.uop.uop import UOp

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
    return DimSel(n, start, stop if _is_zero(start) else stop - start, 1)


def _adjacent(plan: IndexPlan, adv: list[int]) -> bool:
    """NumPy: advanced index dims stay in place only when nothing separates them."""
    k = len(adv)
    if adv != list(range(adv[0], adv[0] + k)):
        return False
    return not any(adv[0] < s <= adv[-1] for s in plan.separators)


def _width(item: Any) -> int:
    if item is None or item is Ellipsis:
        return 0
    return int(item.mask.ndim) if isinstance(item, _Mask) else 1


def _is_int(x: Any) -> bool:
    """A Python int or an integer-like value (``operator.index`` takes it: NumPy's ints), not
    a bool."""
    if isinstance(x, (bool, OpMixinBase)):
        return False
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _python_bool_coords(data: Any) -> list[list[int]] | None:
    """The coordinates of the True entries of a nested list of bools (one list per dim), or
    None when ``data`` is not all bools."""
    shape, flat = nested_shape(data)
    if not flat or not all(isinstance(v, bool) for v in flat):
        return None
    coords: list[list[int]] = [[] for _ in shape]
    for i, v in enumerate(flat):
        if v:
            rem = i
            for d in range(len(shape) - 1, -1, -1):
                coords[d].append(rem % shape[d])
                rem //= shape[d]
    return coords


class IndexingMixin(OpMixinBase):
    """``x[...]``, gather/scatter/scatter_reduce, one_hot, masked_select, nonzero."""

    __slots__ = ()

    # -- primitives a class may override (the defaults are UOp's) --------------------------------
    def _index_check(self, out: Any, index: Any, size: sint, dim: int, low: int, op: str) -> None:
        """Attach the check that ``index``'s values lie in [low, size) to ``out`` (a UOp has no
        place to keep it: index values in a graph are not checked)."""

    def _is_index(self, x: Any) -> bool:
        """Whether ``x`` is an advanced index (an index value of this class, or a list)."""
        return isinstance(x, (list, OpMixinBase))

    def _index_from_list(self, data: Any) -> Self:
        """A nested list of ints/bools as an index value on this device: a graph of constants
        (each value placed by a pad; pieces joined pairwise)."""
        shape, flat = nested_shape(data)
        if any(isinstance(v, float) for v in flat):
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors, got float"
            )
        dt = dtypes.bool if flat and all(isinstance(v, bool) for v in flat) else dtypes.int32
        pieces = [self._const(v, dt, (1,)) for v in flat]
        if not pieces:
            return self._const(0, dt, shape)
        while len(pieces) > 1:
            pieces = [
                pieces[i].cat(pieces[i + 1]) if i + 1 < len(pieces) else pieces[i]
                for i in range(0, len(pieces), 2)
            ]
        return pieces[0].reshape(shape)

    def _nonzero_host(self) -> Self:
        """The (count, ndim) int32 coordinates of the nonzero elements, read from the data."""
        raise ValueError(
            "this needs the values (the count of nonzero elements sets the shape), which a UOp "
            "graph doesn't have: pass size= for a fixed-size result"
        )

    def _data_item(self) -> Any:
        """This 0-d value as a Python number (needs the data)."""
        raise ValueError("this needs the value, which a UOp graph doesn't have")

    # -- the index plan --------------------------------------------------------------------------
    def _normalize_index(self, indices: Any) -> list[Any]:
        items = list(indices) if isinstance(indices, tuple) else [indices]
        out: list[Any] = []
        for it in items:
            if isinstance(it, bool):
                raise IndexError(f"unexpected bool index {it!r}")
            if self._is_index(it):
                out.append(self._advanced_item(it))
            elif it is None or it is Ellipsis or isinstance(it, slice):
                out.append(it)
            elif _is_int(it):
                out.append(operator.index(it))
            else:
                raise IndexError(
                    "only integers, slices, None, Ellipsis and int/bool tensors are valid "
                    f"indices, got {type(it).__name__}"
                )
        consumed = sum(_width(i) for i in out)
        ellipses = [i for i, x in enumerate(out) if x is Ellipsis]
        if len(ellipses) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if consumed > self.ndim:
            raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
        if ellipses:
            i = ellipses[0]
            fill: list[Any] = [slice(None)] * (self.ndim - consumed)
            out[i : i + 1] = fill or [_EMPTY_ELLIPSIS]
        else:
            out.extend([slice(None)] * (self.ndim - consumed))
        return self._expand_masks(out)

    def _advanced_item(self, it: Any) -> Any:
        """An advanced index as an int index value, or a ``_Mask`` for a bool one."""
        coords = _python_bool_coords(it) if isinstance(it, list) else None
        if coords is not None:  # a list of bools: a mask whose positions are known
            shape, _ = nested_shape(it)
            return _Mask(_ListMask(shape, coords))
        idx = it if isinstance(it, OpMixinBase) else self._index_from_list(it)
        if idx.dtype is dtypes.bool:
            return _Mask(idx)
        if not dtypes.is_int(idx.dtype):
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors, "
                f"got {idx.dtype!r}"
            )
        return idx

    def _expand_masks(self, items: list[Any]) -> list[Any]:
        """Each bool mask replaced by one int index per dim it covers (shapes checked)."""
        out: list[Any] = []
        d = 0
        for it in items:
            if isinstance(it, _Mask):
                k = it.mask.ndim
                if tuple(it.mask.shape) != tuple(self.shape[d : d + k]):
                    raise IndexError(
                        f"The shape of the mask {list(it.mask.shape)} at index {d} does not "
                        f"match the shape of the indexed tensor {list(self.shape)}"
                    )
                if isinstance(it.mask, _ListMask):
                    out.extend(self._index_from_list(c) for c in it.mask.coords)
                else:
                    coords = it.mask._nonzero_host()
                    out.extend(
                        coords.shrink(((0, coords.shape[0]), (j, j + 1))).reshape(-1)
                        for j in range(k)
                    )
                d += k
                continue
            out.append(it)
            d += 0 if it is None or it is _EMPTY_ELLIPSIS else 1
        return out

    def _python_bools(self, indices: Any) -> tuple[Any, set[int]]:
        """A Python bool index is NumPy's 0-d mask: a new axis of size 1 (True) or 0 (False).
        Returns the indices with each bool made ``None`` and the result axes that must be
        empty. Mixed with int, tensor or other bool indices NumPy broadcasts it as an advanced
        index, which is not supported (IndexError)."""
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
        ellipsis_dims = self.ndim - sum(1 for it in items if isinstance(it, slice))
        out: list[Any] = []
        empty: set[int] = set()
        axis = 0
        for it in items:
            if isinstance(it, bool) and not it:
                empty.add(axis)
            out.append(None if isinstance(it, bool) else it)
            axis += max(ellipsis_dims, 0) if it is Ellipsis else 1
        return tuple(out), empty

    def _index_plan(self, indices: Any) -> tuple[IndexPlan, list[int]]:
        """The basic part of ``indices`` and the output positions of the advanced ones."""
        items = self._normalize_index(indices)
        any_adv = any(isinstance(i, OpMixinBase) for i in items)
        dims: list[DimSel] = []
        out_shape: list[Any] = []
        separators: list[int] = []
        adv_positions: list[int] = []
        d = 0
        for item in items:
            it = self._const(item, dtypes.int32, ()) if isinstance(item, int) and any_adv else item
            if it is _EMPTY_ELLIPSIS:
                separators.append(len(out_shape))
                continue
            if it is None:
                out_shape.append(("new", None))
                continue
            size = self.shape[d]
            n = bound_int(size)  # a symbolic dim: its bound value
            if isinstance(it, int):
                if not -n <= it < n:
                    raise IndexError(f"index {it} is out of bounds for dimension {d} with size {n}")
                start: Any = it % n if isinstance(size, int) or it >= 0 else size + it
                dims.append(DimSel(size, start, 1, 1, False, drop=True))
            elif isinstance(it, slice):
                dims.append(slice_sel(it, size))
                out_shape.append(("dim", d))
            else:
                dims.append(DimSel(n, 0, n, 1, False, advanced=it))
                out_shape.append(("dim", d))
                adv_positions.append(len(out_shape) - 1)
            d += 1
        return IndexPlan(dims, out_shape, tuple(separators)), adv_positions

    def _apply_basic(self, plan: IndexPlan) -> Self:
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

    def __getitem__(self, indices: Any) -> Self:
        """NumPy indexing: ints, slices (any step), None, Ellipsis, int/bool index values and
        lists (advanced indexing)."""
        indices, empty_axes = self._python_bools(indices)
        if empty_axes:
            x = self[indices]
            return x.shrink(tuple((0, 0) if d in empty_axes else None for d in range(x.ndim)))
        plan, adv = self._index_plan(indices)
        x = self._apply_basic(plan)
        if not adv:
            return x
        return x._advanced_get(plan, adv)

    def __iter__(self) -> Iterator[Self]:
        """The slices along dim 0 (a 0-d value is not iterable: TypeError, as in PyTorch)."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(bound_int(self.shape[0])))

    def _advanced_parts(
        self, plan: IndexPlan, adv: list[int]
    ) -> tuple[list[Self], list[int], tuple[sint, ...]]:
        index_dims = [plan.out_shape[p][1] for p in adv]
        idx = []
        for d in index_dims:
            raw = plan.dims[d].advanced
            n = plan.dims[d].size
            i = raw.cast(dtypes.int32) if raw.dtype.itemsize < 4 else raw
            wrapped = (i < 0).where(i + n, i)
            self._index_check(wrapped, raw, n, d, -n, "index")
            idx.append(wrapped)
        bshape = broadcast_shape(*(i.shape for i in idx))
        return [i._broadcast_to(bshape) for i in idx], adv, bshape

    def _adv_mask(self, idx: list[Self], adv: list[int], bshape: tuple[sint, ...]) -> Self:
        k = len(adv)
        mask: Self | None = None
        for j, (i, p) in enumerate(zip(idx, adv, strict=True)):
            n = self.shape[p]
            view: list[sint] = [1] * k
            view[j] = n
            ar = type(self).arange(n, device=self.device).reshape(view)
            eq = i.reshape((*bshape, *([1] * k))).eq(ar.reshape((*([1] * len(bshape)), *view)))
            mask = eq if mask is None else mask & eq
        assert mask is not None
        return mask

    def _advanced_get(self, plan: IndexPlan, adv: list[int]) -> Self:
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
        if not _adjacent(plan, adv):
            return out.permute((*range(len(rest), len(rest) + nb), *range(len(rest))))
        first = adv[0]
        order = [*range(first), *range(len(rest), len(rest) + nb), *range(first, len(rest))]
        return out.permute(order)

    def _advanced_put(self, plan: IndexPlan, adv: list[int], value: Self) -> Self:
        """This (basic-indexed) value with ``value`` written at the advanced positions."""
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

    def _unapply_basic(self, plan: IndexPlan, v: Self) -> Self:
        """``v`` (shaped like the basic result) placed back into this value's shape, zeros
        elsewhere; the inverse of ``_apply_basic`` (for setitem)."""
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

    def _place(self, axis: int, n: sint, start: sint, step: int) -> Self:
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

    # -- gather / scatter ------------------------------------------------------------------------
    def _gather_mask(self, dim: int, index: Self, op: str | None = "gather") -> tuple[Self, int]:
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
                    f"Size does not match at dimension {d} expected index "
                    f"{tuple(index.shape)} to be smaller than self {tuple(self.shape)} apart "
                    f"from dimension {axis}"
                )
        n = self.shape[axis]
        i = index.transpose(axis, -1)
        i = (i < 0).where(i + n, i)
        mask = i.unsqueeze(-1).eq(type(self).arange(n, device=self.device))
        if op is not None:
            self._index_check(mask, index, n, axis, 0, op)
        return mask, axis

    def gather(self, dim: int, index: Self) -> Self:
        """out[i][j] = self[i][index[i][j]] along ``dim``; indices must lie in [0, size)."""
        return self._gather(dim, index, "gather")

    def _gather(self, dim: int, index: Self, check: str | None) -> Self:
        mask, axis = self._gather_mask(dim, index, check)
        x = self.shrink([None if d == axis else (0, s) for d, s in enumerate(index.shape)])
        xt = x.transpose(axis, -1).unsqueeze(-2)
        work = xt.cast(dtypes.uint8) if xt.dtype is dtypes.bool else xt
        out = mask.where(work, work._const(0, shape=()))._reduce(Ops.ADD, -1, False, "gather")
        return out.cast(self.dtype).transpose(axis, -1)

    def _scatter_parts(self, dim: int, index: Self, src: Any) -> tuple[Self, Self, int]:
        mask, axis = self._gather_mask(dim, index, "scatter")
        s = self._operand(src).cast(self.dtype)
        if s.ndim == 0:
            s = s._broadcast_to(index.shape)
        s = s.shrink([(0, d) for d in index.shape]) if s.shape != index.shape else s
        st = s.transpose(axis, -1).unsqueeze(-1)  # (O..., m, 1)
        return mask, st, axis

    def _scatter_pad(self, x: Self, axis: int, index: Self) -> Self:
        # x is (O..., n) with dim moved last; pad the O dims back to self's sizes
        t = x.transpose(axis, -1)
        return t.pad(
            [None if d == axis else (0, self.shape[d] - index.shape[d]) for d in range(self.ndim)]
        )

    def scatter(self, dim: int, index: Self, src: Any, reduce: str | None = None) -> Self:
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
        self, dim: int, index: Self, src: Any, reduce: str, include_self: bool = True
    ) -> Self:
        """self with src reduced in at index along ``dim``: sum, prod, mean, amax, amin."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise RuntimeError(
                f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
            )
        mask, st, axis = self._scatter_parts(dim, index, src)
        hit = self._scatter_pad(mask.any(-2), axis, index)
        fill: ConstType = {"sum": 0, "mean": 0, "prod": 1}.get(reduce, 0)
        if reduce in ("amax", "amin"):
            lo = -math.inf if dtypes.is_float(self.dtype) else dtypes.min(self.dtype)
            hi = math.inf if dtypes.is_float(self.dtype) else dtypes.max(self.dtype)
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
            combine = {"sum": red.add, "prod": red.mul, "amax": red.maximum, "amin": red.minimum}
            return hit.where(combine[reduce](self).cast(self.dtype), self)
        return hit.where(red, self)

    def one_hot(self, num_classes: int = -1) -> Self:
        """int values with a new last dim of ``num_classes``: 1 at the index, 0 elsewhere
        (``num_classes=-1``: the largest value + 1, which needs the data)."""
        if not dtypes.is_int(self.dtype):
            raise RuntimeError(f"one_hot is only applicable to index tensor, got {self.dtype!r}")
        if num_classes == -1:
            num_classes = int(self.max()._data_item()) + 1 if self.numel() else 0
        ar = type(self).arange(num_classes, device=self.device)
        out = self.unsqueeze(-1).eq(ar).where(1, 0)
        self._index_check(out, self, num_classes, -1, 0, "one_hot")
        return out

    def masked_select(self, mask: Self, size: int | None = None, fill_value: ConstType = 0) -> Self:
        """The elements where ``mask`` is True, as 1-d. Without ``size`` the length depends on
        the data (the mask is read); with ``size`` the result has that length, cut or padded
        with ``fill_value``, and stays a graph."""
        if mask.dtype is not dtypes.bool:
            raise RuntimeError(f"masked_select: expected a bool mask, got {mask.dtype!r}")
        shape = broadcast_shape(self.shape, mask.shape)
        flat = self._broadcast_to(shape).flatten()
        flat_mask = mask._broadcast_to(shape).flatten()
        if size is None:
            return flat[flat_mask._nonzero_host().reshape(-1)]
        out: Self = _select_first(flat, flat_mask, size, fill_value)
        return out

    def nonzero(self, size: int | None = None, fill_value: ConstType = 0) -> Self:
        """(count, ndim) int32 coordinates of the nonzero elements. Without ``size`` the count
        depends on the data (read here); with ``size`` the result has ``size`` rows, cut or
        padded with ``fill_value``, and stays a graph."""
        if size is None:
            return self._nonzero_host()
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
            return self._const(0, dtypes.int32, (size, 0))
        out: Self = picked[0].stack(*picked[1:], dim=-1)
        return out


@dataclass(frozen=True)
class _ListMask:
    """A bool index given as a Python list: its shape and the coordinates of its Trues."""

    shape: tuple[int, ...]
    coords: list[list[int]]

    @property
    def ndim(self) -> int:
        return len(self.shape)


def _select_first(flat: Any, mask: Any, size: int, fill_value: ConstType) -> Any:
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
