# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""``Tensor``: the core plus every method group, assembled."""

from __future__ import annotations

from fusegrad.tensor.autograd import AutogradMixin
from fusegrad.tensor.core import TensorCore
from fusegrad.tensor.create import CreateMixin
from fusegrad.tensor.elementwise import ElementwiseMixin
from fusegrad.tensor.indexing import IndexingMixin
from fusegrad.tensor.linalg import LinalgMixin
from fusegrad.tensor.linear import LinearMixin
from fusegrad.tensor.movement import MovementMixin
from fusegrad.tensor.nn import NNMixin
from fusegrad.tensor.random import RandomMixin
from fusegrad.tensor.reduce import ReduceMixin
from fusegrad.tensor.schedule import ScheduleMixin
from fusegrad.tensor.sort import SortMixin


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
    TensorCore,
):
    """A lazy n-d array on a device. Operations build a UOp graph; ``realize()``, ``numpy()``
    and friends compute it.

    >>> Tensor([[1, 2], [3, 4]]).sum(axis=0).shape
    (2,)
    """

    __hash__ = TensorCore.__hash__
