"""Layers with weights: Linear, convolutions, Embedding, LSTMCell.

Constructor signatures follow tinygrad's; initializations follow PyTorch's (kaiming-uniform
weights with ``a=sqrt(5)``, biases uniform in ±1/sqrt(fan_in), embeddings standard normal).
Every parameter is a fresh buffer (see ``fresh``), so two layers never share storage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fusegrad.tensor import Tensor
from fusegrad.uop import prod


def fresh(init: Tensor, requires_grad: bool | None = None) -> Tensor:
    """A tensor with its own new buffer, lazily filled with ``init``.

    Constants are hash-consed (two ``Tensor.zeros(3)`` are one graph and would realize into
    one buffer); writing ``init`` into an empty buffer keeps every parameter distinct.
    """
    out = Tensor.empty(*init.shape, dtype=init.dtype, device=init.device)
    out.assign(init)
    out.requires_grad = requires_grad
    return out


def _uniform(shape: tuple[int, ...], bound: float) -> Tensor:
    return fresh(Tensor.uniform(*shape, low=-bound, high=bound))


def _ntuple(x: int | Sequence[int], n: int) -> tuple[int, ...]:
    if isinstance(x, int):
        return (x,) * n
    out = tuple(x)
    if len(out) != n:
        raise ValueError(f"expected an int or {n} ints, got {x!r}")
    return out


class Linear:
    """y = x @ W.T + b, W of shape (out_features, in_features) like PyTorch.

    >>> Linear(3, 2)(Tensor.ones(4, 3)).shape
    (4, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        bound = 1 / math.sqrt(in_features) if in_features else 0.0
        self.weight = _uniform((out_features, in_features), bound)
        self.bias = _uniform((out_features,), bound) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        return x.linear(self.weight.transpose(), self.bias)


class Conv2d:
    """n-d convolution over the last ``len(kernel_size)`` dims (2 for an int kernel_size)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] | str = 0,
        dilation: int | tuple[int, ...] = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        self.kernel_size = _ntuple(kernel_size, 2) if isinstance(kernel_size, int) else kernel_size
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"Conv: in_channels {in_channels} and out_channels {out_channels} must be "
                f"divisible by groups {groups}"
            )
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        bound = 1 / math.sqrt(prod(shape[1:]))
        self.weight = _uniform(shape, bound)
        self.bias = _uniform((out_channels,), bound) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        return x.conv2d(
            self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding
        )


class Conv1d(Conv2d):
    """Convolution over the last dim of (N, C, L) inputs."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] = 1,
        padding: int | tuple[int] | str = 0,
        dilation: int | tuple[int] = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        ks = _ntuple(kernel_size, 1)
        super().__init__(
            in_channels, out_channels, ks, stride, padding, dilation, groups, bias
        )  # fmt: skip


class ConvTranspose2d(Conv2d):
    """Transposed convolution; weight (in_channels, out_channels // groups, *kernel)."""

    def __init__(  # noqa: PLR0917 (tinygrad's positional signature)
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] = 0,
        output_padding: int | tuple[int, ...] = 0,
        dilation: int | tuple[int, ...] = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        ks = _ntuple(kernel_size, 2) if isinstance(kernel_size, int) else tuple(kernel_size)
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"ConvTranspose: in_channels {in_channels} and out_channels {out_channels} "
                f"must be divisible by groups {groups}"
            )
        self.kernel_size = ks
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.output_padding = output_padding
        shape = (in_channels, out_channels // groups, *ks)
        bound = 1 / math.sqrt(prod(shape[1:]))  # PyTorch's fan_in is weight.size(1) * kernel
        self.weight = _uniform(shape, bound)
        self.bias = _uniform((out_channels,), bound) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        return x.conv_transpose2d(
            self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding,
            self.output_padding,
        )  # fmt: skip


class ConvTranspose1d(ConvTranspose2d):
    """Transposed convolution over the last dim of (N, C, L) inputs."""

    def __init__(  # noqa: PLR0917 (tinygrad's positional signature)
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] = 1,
        padding: int | tuple[int] = 0,
        output_padding: int | tuple[int] = 0,
        dilation: int | tuple[int] = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        ks = _ntuple(kernel_size, 1)
        super().__init__(
            in_channels, out_channels, ks, stride, padding, output_padding, dilation, groups, bias
        )  # fmt: skip


class Embedding:
    """A lookup table: ``Embedding(vocab_size, embed_size)(idx)`` is ``weight[idx]``."""

    def __init__(self, vocab_size: int, embed_size: int) -> None:
        self.vocab_sz, self.embed_sz = vocab_size, embed_size
        self.weight = fresh(Tensor.randn(vocab_size, embed_size))

    def __call__(self, idx: Tensor) -> Tensor:
        if idx.ndim == 0:
            return self.weight[idx.reshape(1)].reshape(self.embed_sz)
        return self.weight[idx]


class LSTMCell:
    """One LSTM step; ``__call__(x, (h, c))`` returns the new ``(h, c)`` (zeros if None)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        bound = 1 / math.sqrt(hidden_size)
        self.weight_ih = _uniform((hidden_size * 4, input_size), bound)
        self.weight_hh = _uniform((hidden_size * 4, hidden_size), bound)
        self.bias_ih = _uniform((hidden_size * 4,), bound) if bias else None
        self.bias_hh = _uniform((hidden_size * 4,), bound) if bias else None

    def __call__(self, x: Tensor, hc: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        if hc is None:
            zeros = Tensor.zeros(
                *x.shape[:-1], int(self.weight_hh.shape[1]), dtype=x.dtype, device=x.device
            )
            hc = (zeros, zeros)
        gates = x.linear(self.weight_ih.transpose(), self.bias_ih) + hc[0].linear(
            self.weight_hh.transpose(), self.bias_hh
        )
        i, f, g, o = gates.chunk(4, dim=-1)
        new_c = f.sigmoid() * hc[1] + i.sigmoid() * g.tanh()
        new_h = o.sigmoid() * new_c.tanh()
        return new_h.contiguous(), new_c.contiguous()
