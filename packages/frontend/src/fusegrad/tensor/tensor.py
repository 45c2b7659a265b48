# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""``Tensor``: the core plus every method group, assembled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fusegrad.tensor.autograd import AutogradMixin
from fusegrad.tensor.core import TensorCore
from fusegrad.tensor.create import CreateMixin
from fusegrad.tensor.elementwise import ElementwiseMixin
from fusegrad.tensor.extra import ExtraMixin
from fusegrad.tensor.indexing import IndexingMixin
from fusegrad.tensor.linalg import LinalgMixin
from fusegrad.tensor.linear import LinearMixin
from fusegrad.tensor.movement import MovementMixin
from fusegrad.tensor.nn import NNMixin
from fusegrad.tensor.random import RandomMixin
from fusegrad.tensor.reduce import ReduceMixin
from fusegrad.tensor.schedule import ScheduleMixin
from fusegrad.tensor.sort import SortMixin

if TYPE_CHECKING:
    from fusegrad.tensor.multi import MultiTensor


class Tensor(
    AutogradMixin,
    CreateMixin,
    RandomMixin,
    ElementwiseMixin,
    ReduceMixin,
    SortMixin,
    MovementMixin,
    IndexingMixin,
    LinearMixin,
    LinalgMixin,
    NNMixin,
    ScheduleMixin,
    ExtraMixin,
    TensorCore,
):
    """A lazy n-d array on a device. Operations build a UOp graph; ``realize()``, ``numpy()``
    and friends compute it.

    >>> Tensor([[1, 2], [3, 4]]).sum(axis=0).shape
    (2,)
    """

    __hash__ = TensorCore.__hash__

    def shard(self, devices: Sequence[str] | str, axis: int | None = None) -> MultiTensor:
        """This tensor split along ``axis`` across ``devices`` (``axis=None``: a whole copy on
        each); see ``fusegrad.tensor.multi``."""
        from fusegrad.tensor.multi import shard

        return shard(self, devices, axis)

    def shard_(self, devices: Sequence[str] | str, axis: int | None = None) -> MultiTensor:
        """``shard`` with every piece realized now. A Tensor cannot become multi-device, so
        unlike tinygrad this returns the MultiTensor; ``self`` stays the gradient leaf."""
        from fusegrad.tensor.multi import shard_

        return shard_(self, devices, axis)
