"""Linear methods: the shared mixin of ``UOp`` and ``Tensor`` (``fusegrad.uop.mixin``)."""

from __future__ import annotations

from fusegrad.uop.mixin import LinearMixin

__all__ = ["LinearMixin"]
