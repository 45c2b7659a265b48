"""``fusegrad.uop.mixin``: the tensor-level op methods, written once for ``UOp`` and ``Tensor``.

As in tinygrad, the methods a ``Tensor`` has (movement, elementwise, reduce, nn functional)
build UOp graphs, so they are a mixin over a few primitives both classes provide (see
``base``): ``UOp`` has them, and a ``Tensor`` op is the same method applied to its UOp, so both
spell the same graph. What needs the scheduler, a device or autograd stays in the frontend.

>>> from fusegrad.uop import UOp, dtypes
>>> x = UOp.new_buffer("CPU", 12, dtypes.float32).reshape(3, 4)
>>> x.permute(1, 0).flatten().shape, x.cat(x, dim=1).shape
((12,), (3, 8))
"""

from __future__ import annotations

from fusegrad.uop.mixin.base import OpMixinBase, broadcast_shape
from fusegrad.uop.mixin.create import DefaultDevice, arange_uop, index_uop
from fusegrad.uop.mixin.elementwise import ElementwiseMixin
from fusegrad.uop.mixin.indexing import IndexingMixin, IndexPlan
from fusegrad.uop.mixin.linalg import LinalgMixin
from fusegrad.uop.mixin.linear import LinearMixin
from fusegrad.uop.mixin.movement import MovementMixin
from fusegrad.uop.mixin.nn import NNMixin
from fusegrad.uop.mixin.random import RandomMixin, RngState, shape_arg
from fusegrad.uop.mixin.reduce import ReduceMixin
from fusegrad.uop.mixin.sort import SortMixin

__all__ = [
    "DefaultDevice",
    "ElementwiseMixin",
    "IndexPlan",
    "IndexingMixin",
    "LinalgMixin",
    "LinearMixin",
    "MovementMixin",
    "NNMixin",
    "OpMixinBase",
    "RandomMixin",
    "ReduceMixin",
    "RngState",
    "SortMixin",
    "arange_uop",
    "broadcast_shape",
    "index_uop",
    "shape_arg",
]


class OpMixin(
    RandomMixin,
    ElementwiseMixin,
    ReduceMixin,
    SortMixin,
    MovementMixin,
    IndexingMixin,
    LinearMixin,
    LinalgMixin,
    NNMixin,
):
    """Every shared op group, in ``Tensor``'s order (what ``UOp`` mixes in)."""

    __slots__ = ()


__all__ += ["OpMixin"]
