"""Normalization layers: BatchNorm, GroupNorm, InstanceNorm, LayerNorm, LayerNorm2d, RMSNorm.

Numerics follow PyTorch: biased variance for normalizing, unbiased variance in BatchNorm's
running estimate, ``momentum`` weighting the new batch statistics.
"""

from __future__ import annotations

from fusegrad.nn.layers import fresh
from fusegrad.tensor import Tensor
from fusegrad.uop import dtypes


def _channel_affine(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """x * weight + bias with the parameters along dim 1."""
    shape = (1, -1, *([1] * (x.ndim - 2)))
    if weight is not None:
        x = x * weight.reshape(shape)
    return x + bias.reshape(shape) if bias is not None else x


class BatchNorm:
    """Batch normalization over dim 1 of (N, C, ...) inputs (BatchNorm1d/2d/3d in one).

    In training (``Tensor.training``) it normalizes with the batch statistics and updates the
    running ones; in eval with ``track_running_stats`` it uses the running statistics.
    """

    def __init__(
        self,
        sz: int,
        eps: float = 1e-5,
        affine: bool = True,
        track_running_stats: bool = True,
        momentum: float = 0.1,
    ) -> None:
        self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
        self.weight: Tensor | None = fresh(Tensor.ones(sz)) if affine else None
        self.bias: Tensor | None = fresh(Tensor.zeros(sz)) if affine else None
        self.num_batches_tracked = fresh(Tensor.zeros(1, dtype=dtypes.long), False)
        if track_running_stats:
            self.running_mean = fresh(Tensor.zeros(sz), requires_grad=False)
            self.running_var = fresh(Tensor.ones(sz), requires_grad=False)

    def calc_stats(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """The mean and (biased) variance to normalize ``x`` with, per channel."""
        if self.track_running_stats and not Tensor.training:
            return self.running_mean, self.running_var
        axes = tuple(i for i in range(x.ndim) if i != 1)
        mean = x.mean(axis=axes)
        y = x - mean.detach().reshape(1, -1, *([1] * (x.ndim - 2)))
        return mean, (y * y).mean(axis=axes)

    def __call__(self, x: Tensor) -> Tensor:
        if x.ndim < 2:
            raise ValueError(f"BatchNorm: expected an (N, C, ...) input, got shape {x.shape}")
        mean, var = self.calc_stats(x)
        if self.track_running_stats and Tensor.training:
            n = int(x.numel()) // int(x.shape[1])
            unbiased = var.detach() * (n / max(n - 1, 1))
            m = self.momentum
            self.running_mean.assign((1 - m) * self.running_mean + m * mean.detach())
            self.running_var.assign((1 - m) * self.running_var + m * unbiased)
            self.num_batches_tracked.assign(self.num_batches_tracked + 1)
        return x.batchnorm(self.weight, self.bias, mean, var.add(self.eps).rsqrt())


BatchNorm2d = BatchNorm
BatchNorm1d = BatchNorm
BatchNorm3d = BatchNorm


class GroupNorm:
    """Normalize each of ``num_groups`` channel groups of (N, C, ...) inputs."""

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True
    ) -> None:
        if num_channels % num_groups:
            raise ValueError(
                f"GroupNorm: num_channels {num_channels} must be divisible by num_groups "
                f"{num_groups}"
            )
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight: Tensor | None = fresh(Tensor.ones(num_channels)) if affine else None
        self.bias: Tensor | None = fresh(Tensor.zeros(num_channels)) if affine else None

    def __call__(self, x: Tensor) -> Tensor:
        grouped = x.reshape(int(x.shape[0]), self.num_groups, -1)
        y = grouped.layernorm(eps=self.eps).reshape(x.shape)
        return _channel_affine(y, self.weight, self.bias)


class InstanceNorm:
    """Normalize each channel of each sample of (N, C, ...) inputs."""

    def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True) -> None:
        self.num_features, self.eps = num_features, eps
        self.weight: Tensor | None = fresh(Tensor.ones(num_features)) if affine else None
        self.bias: Tensor | None = fresh(Tensor.zeros(num_features)) if affine else None

    def __call__(self, x: Tensor) -> Tensor:
        flat = x.reshape(int(x.shape[0]), self.num_features, -1)
        y = flat.layernorm(eps=self.eps).reshape(x.shape)
        return _channel_affine(y, self.weight, self.bias)


class LayerNorm:
    """Normalize over the last ``len(normalized_shape)`` dims."""

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
    ) -> None:
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape: tuple[int, ...] = tuple(shape)
        self.axis = tuple(-1 - i for i in range(len(self.normalized_shape)))
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight: Tensor | None = None
        self.bias: Tensor | None = None
        if elementwise_affine:
            self.weight = fresh(Tensor.ones(*self.normalized_shape))
            self.bias = fresh(Tensor.zeros(*self.normalized_shape))

    def __call__(self, x: Tensor) -> Tensor:
        n = len(self.normalized_shape)
        if tuple(x.shape[-n:]) != self.normalized_shape:
            raise ValueError(
                f"LayerNorm: last dims of input {x.shape} must be {self.normalized_shape}"
            )
        y = x.layernorm(eps=self.eps, axis=self.axis)
        if self.weight is None or self.bias is None:
            return y
        return y * self.weight + self.bias


class LayerNorm2d(LayerNorm):
    """LayerNorm over the channels of (N, C, H, W) inputs."""

    def __call__(self, x: Tensor) -> Tensor:
        return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class RMSNorm:
    """x / sqrt(mean(x^2) + eps) * weight over the last dim (computed in float32 or wider)."""

    def __init__(self, dim: int, eps: float = 1e-6, elementwise_affine: bool = True) -> None:
        self.eps = eps
        self.weight: Tensor | None = fresh(Tensor.ones(dim)) if elementwise_affine else None

    def _norm(self, x: Tensor) -> Tensor:
        return x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()

    def __call__(self, x: Tensor) -> Tensor:
        wide = x if x.dtype.itemsize >= 4 else x.float()
        y = self._norm(wide).cast(x.dtype)
        return y if self.weight is None else y * self.weight
