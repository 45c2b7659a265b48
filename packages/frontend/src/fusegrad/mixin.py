"""``fusegrad.mixin``: tinygrad's module path of the tensor-op mixin (``tinygrad.mixin``).

A thin re-export of ``fusegrad.uop.mixin``, where the methods ``UOp`` and ``Tensor`` share are
written once (movement, elementwise, reduce, sort, linear algebra, nn functional).

>>> from fusegrad.mixin import MovementMixin
>>> from fusegrad import Tensor, UOp
>>> issubclass(Tensor, MovementMixin) and issubclass(UOp, MovementMixin)
True
"""

from fusegrad.uop.mixin import (
    ElementwiseMixin,
    LinalgMixin,
    LinearMixin,
    MovementMixin,
    NNMixin,
    OpMixinBase,
    ReduceMixin,
    SortMixin,
)

__all__ = [
    "ElementwiseMixin",
    "LinalgMixin",
    "LinearMixin",
    "MovementMixin",
    "NNMixin",
    "OpMixinBase",
    "ReduceMixin",
    "SortMixin",
]
