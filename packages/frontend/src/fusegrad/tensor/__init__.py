"""The Tensor and its method groups (one module per group)."""

from fusegrad.tensor.tensor import Tensor

__all__ = ["Tensor"]
