# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""nn functional methods: the shared mixin of ``UOp`` and ``Tensor`` (``fusegrad.uop.mixin``)
plus ``interpolate``, which stays with Tensor (it indexes with host-computed positions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fusegrad.uop.mixin import NNMixin as SharedNN

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


class NNMixin(SharedNN):
    """nn functional methods (mixed into Tensor)."""

    def interpolate(
        self: Tensor, size: Sequence[int], mode: str = "linear", align_corners: bool = False
    ) -> Tensor:
        """Resize the last len(size) dims: "linear" (n-linear), "nearest", "nearest-exact"."""
        if mode not in ("linear", "nearest", "nearest-exact"):
            raise ValueError(f"interpolate: unsupported mode {mode!r}")
        if align_corners and mode != "linear":
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear"
            )
        x = self
        for i, out_size in enumerate(size):
            axis = self.ndim - len(size) + i
            x = x._resize_axis(axis, int(out_size), mode, align_corners)
        return x

    def _resize_axis(self: Tensor, axis: int, out: int, mode: str, align_corners: bool) -> Tensor:
        n = int(self.shape[axis])
        i = np.arange(out, dtype=np.float64)
        lead = (slice(None),) * axis
        if mode != "linear":
            offset = 0.5 if mode == "nearest-exact" else 0.0
            src = np.minimum(np.floor((i + offset) * (n / out)), n - 1).astype(np.int32)
            return self[(*lead, src.tolist())]
        if align_corners:
            pos = i * ((n - 1) / (out - 1)) if out > 1 else np.zeros_like(i)
        else:
            pos = np.maximum((i + 0.5) * (n / out) - 0.5, 0)
        lo = np.minimum(np.floor(pos), n - 1).astype(np.int32)
        hi = np.minimum(lo + 1, n - 1)
        w = (pos - lo).astype(np.float32)
        shape = [1] * self.ndim
        shape[axis] = out
        wt = type(self)(w.reshape(shape), device=self.device)
        x = self._to_float()
        a, b = x[(*lead, lo.tolist())], x[(*lead, hi.tolist())]
        return (a * (1 - wt) + b * wt).cast(x.dtype)
