"""Linalg methods: the shared mixin of ``UOp`` and ``Tensor`` (``fusegrad.uop.mixin``)."""

from __future__ import annotations

from fusegrad.uop.mixin import LinalgMixin

__all__ = ["LinalgMixin"]
