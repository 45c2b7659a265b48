# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Random numbers on Tensors: the shared mixin of ``UOp`` and ``Tensor``
(``fusegrad.uop.mixin.random``: counter-based threefry-2x32, so a seed gives the same numbers
on every device and renderer) with Tensor's own generator state and its creation primitives
(canonical device names, results as autograd leaves)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from fusegrad.tensor.convert import canonical_device
from fusegrad.tensor.create import as_leaf
from fusegrad.uop import UOp
from fusegrad.uop.mixin import RandomMixin as SharedRandom
from fusegrad.uop.mixin import RngState

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


class RandomMixin(SharedRandom):
    """RNG methods (mixed into Tensor)."""

    _rng: ClassVar[RngState] = RngState()
    """Tensor's seed and call counter (``Tensor.manual_seed``), apart from ``UOp``'s."""

    @classmethod
    def _from_uop(cls: type[Tensor], uop: UOp) -> Tensor:
        return cls(uop)

    @classmethod
    def _canonical_device(cls: type[Tensor], device: Any) -> str:
        return canonical_device(device)

    def _as_leaf(self: Tensor, requires_grad: bool | None) -> Tensor:
        return as_leaf(self, requires_grad)
