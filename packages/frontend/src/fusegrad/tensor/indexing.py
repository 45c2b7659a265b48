# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Indexing on Tensors: the shared mixin of ``UOp`` and ``Tensor`` (``fusegrad.uop.mixin``,
where ``__getitem__``, gather/scatter, one_hot, masked_select and nonzero are written) with
Tensor's data primitives, plus ``__setitem__``.

Out-of-range indices raise IndexError: Python ints and lists at the call, index tensors at the
call when they hold host data, else when the result is realized (``fusegrad.tensor.checks``;
``CHECK_INDEX=0`` turns the tensor checks off). A bound Variable can bound a slice (step 1).
Data-dependent shapes (a bool mask index, ``nonzero()``/``masked_select`` without ``size``)
read the data here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fusegrad.engine import buffer_of
from fusegrad.tensor.checks import add_check
from fusegrad.tensor.core import _writable_view
from fusegrad.uop import Ops, UOp, dtypes, sint
from fusegrad.uop.mixin import IndexingMixin as SharedIndexing
from fusegrad.uop.mixin import IndexPlan

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


def _list_index(it: Any) -> np.ndarray[Any, Any]:
    """A list/array index as an array (an empty one is an int index, like NumPy's)."""
    arr = np.asarray(it)
    return arr.astype(np.int32) if arr.size == 0 and arr.dtype.kind == "f" else arr


class IndexingMixin(SharedIndexing):
    """Indexing with Tensor's data primitives, and ``__setitem__`` (mixed into Tensor)."""

    # -- the data primitives of the shared mixin ---------------------------------------------------
    def _index_check(
        self: Tensor, out: Any, index: Any, size: sint, dim: int, low: int, op: str
    ) -> None:
        add_check(out, index, size, dim, low, op)

    def _is_index(self: Tensor, x: Any) -> bool:
        from fusegrad.tensor.core import TensorCore

        return isinstance(x, (TensorCore, list, np.ndarray)) and not isinstance(x, bool)

    def _index_from_list(self: Tensor, data: Any) -> Tensor:
        return type(self)(_list_index(data), device=self.device)

    def _nonzero_host(self: Tensor) -> Tensor:
        coords = np.argwhere(self.numpy()).astype(np.int32)
        return type(self)(coords.reshape(-1, self.ndim), device=self.device)

    def _data_item(self: Tensor) -> Any:
        return self.item()

    # -- writing ---------------------------------------------------------------------------------
    def _writable(self: Tensor, plan: IndexPlan) -> bool:
        return all(
            sel.advanced is None and (sel.step == 1 or sel.start + sel.count * sel.step <= sel.size)
            for sel in plan.dims
        )

    def __setitem__(self: Tensor, indices: Any, v: Any) -> None:
        indices, empty_axes = self._python_bools(indices)
        if empty_axes:
            self._operand(v)._broadcast_to(self[indices].shape)  # shapes still checked
            return  # x[False] selects nothing: nothing to write
        plan, adv = self._index_plan(indices)
        basic = self._apply_basic(plan)
        v = self._operand(v).cast(self.dtype)
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
        if grad or not _writable_view(base):  # a buffer, or a view writing through to one
            self.replace(new)
            if grad:
                self.requires_grad_(True)
            return
        self.assign(new.detach())


def _after_store(whole: UOp, target: UOp, value: UOp) -> UOp:
    return UOp(Ops.AFTER, whole.dtype, (whole, target.store(value)))
