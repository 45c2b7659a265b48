"""Sort methods: the shared mixin of ``UOp`` and ``Tensor`` (``fusegrad.uop.mixin``)."""

from __future__ import annotations

from fusegrad.uop.mixin import SortMixin

__all__ = ["SortMixin"]
