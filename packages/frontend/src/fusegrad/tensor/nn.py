"""nn functional methods: the shared mixin of ``UOp`` and ``Tensor`` (``fusegrad.uop.mixin``),
``interpolate`` included."""

from __future__ import annotations

from fusegrad.uop.mixin import NNMixin

__all__ = ["NNMixin"]
