"""Neural-network functionals: convolution (n-d, groups/stride/dilation/padding incl. 'same'),
transposed convolution, pooling, unpooling, interpolate, norms, attention and the losses."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Self, TypeVar

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.flags import TRAINING, WINO
from fusegrad.uop.helpers import prod
from fusegrad.uop.mixin.base import OpMixinBase


def _tuple(x: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    if isinstance(x, int):
        return (x,) * n
    out = tuple(x)
    if len(out) != n:
        raise RuntimeError(f"{name} must have {n} elements, got {out}")
    return out


def _positive(values: tuple[int, ...], name: str, op: str) -> tuple[int, ...]:
    """``values`` when every one is >= 1; ``ValueError`` naming the argument otherwise."""
    if any(not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{op}: {name} must be positive integers, got {values}")
    return values


def _padding_pairs(
    padding: Any,
    n: int,
    kernel: tuple[int, ...],
    dilation: tuple[int, ...],
    stride: tuple[int, ...],
) -> list[tuple[int, int]]:
    """Padding per spatial dim as (before, after): int, per-dim, flat 2n (last dim first, like
    F.pad), 'valid' or 'same'."""
    if padding == "valid":
        return [(0, 0)] * n
    if padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
        return [(t // 2, t - t // 2) for t in total]
    if isinstance(padding, int):
        return [(padding, padding)] * n
    items = tuple(padding)
    if len(items) == n:
        return [(p, p) for p in items]
    if len(items) == 2 * n:
        return [(items[2 * (n - 1 - i)], items[2 * (n - 1 - i) + 1]) for i in range(n)]
    raise RuntimeError(f"padding {padding!r} doesn't fit {n} spatial dims")


#: Winograd F(m x m, 3x3) matrices by output tile size m (Lavin & Gray 2015): input transform
#: B^T (t x t, t = m + 2), filter transform G (t x 3) and output transform A^T (m x t)
_WINOGRAD: dict[int, tuple[tuple[tuple[float, ...], ...], ...]] = {
    2: (
        ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1)),
        ((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1)),
        ((1, 1, 1, 0), (0, 1, -1, -1)),
    ),
    4: (
        (
            (4, 0, -5, 0, 1, 0),
            (0, -4, -4, 1, 1, 0),
            (0, 4, -4, -1, 1, 0),
            (0, -2, -1, 2, 1, 0),
            (0, 2, -1, -2, 1, 0),
            (0, 4, 0, -5, 0, 1),
        ),
        (
            (1 / 4, 0, 0),
            (-1 / 6, -1 / 6, -1 / 6),
            (-1 / 6, 1 / 6, -1 / 6),
            (1 / 24, 1 / 12, 1 / 6),
            (1 / 24, -1 / 12, 1 / 6),
            (0, 0, 1),
        ),
        ((1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0), (0, 1, 1, 4, 4, 0), (0, 1, -1, 8, -8, 1)),
    ),
}


_T = TypeVar("_T", bound=OpMixinBase)


def _linear_rows(mat: Sequence[Sequence[float]], views: Sequence[_T], dim: int) -> _T:
    """``mat @ views`` along a new axis ``dim``: output row i is the explicit sum of the views
    times their constant coefficients ``mat[i]`` (zeros skipped, +-1 as add/subtract)."""
    rows = []
    for coefficients in mat:
        terms = [(c, v) for v, c in zip(views, coefficients, strict=True) if c != 0]
        assert terms, "a Winograd matrix row is all zeros"
        (first, acc), rest = terms[0], terms[1:]
        acc = acc if first == 1 else -acc if first == -1 else acc * first
        for c, view in rest:
            acc = acc - view if c == -1 else acc + (view if c == 1 else view * c)
        rows.append(acc)
    # stack's selects, not rows padded and added: that graph builds 2.5 ms faster, but measured
    # on 32x64->64 56^2 it ran x0.92 (forward) and x1.0 (backward) of the direct form's speed
    # where stack runs x1.06 and x2.5
    return rows[0].stack(*rows[1:], dim=dim)


def _winograd_tile(
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
    sizes: tuple[int, ...],
    grad: bool = False,
) -> int:
    """The Winograd output tile (2 or 4) for this convolution, 0 for the direct form. ``sizes``:
    input channels, output channels, images, output height and width.

    Measured on 2 shared cores (x: time of the direct form / Winograd's, forward and input +
    weight gradients): 64->64 56^2 on 32 images x1.0 forward, x2.1 backward; 128->128 28^2
    x1.0-1.7 / x2.1; 256->256 14^2 x2.7-6 / x3.8-4.9 (F2 ahead on 8 images); 512->512 7^2 x3-13
    (F2 ahead); 32->32 56^2 x0.8 / x1.5 and 16->16 x0.4 (the transforms' cost grows with
    cin + cout, the saving with cin * cout); under ~2^26 multiply-adds the extra kernels and
    graph lose (x0.2-0.6 at 64 channels) except from 128 channels, where F2 still wins
    (4x128->128 14^2: x1.5 / x2.0). F(4x4) leads from 28^2 outputs, F(2x2) below (less
    padding to whole tiles).

    On a quiet machine (AMD EPYC, AVX-512, 2 cores; same run) 64->64 56^2 on 32 images ran
    x0.70 forward (115 vs 165 GFLOP/s) and x2.4 backward (170 vs 70): from 64 to 127 channels
    Winograd is chosen only when gradients are wanted (``grad``: ``TRAINING`` /
    ``Tensor.training``, or an operand with ``requires_grad=True``), where forward + backward
    is x1.7; inference keeps the direct form there."""
    if kernel != (3, 3) or stride != (1, 1) or dilation != (1, 1) or groups != 1:
        return 0
    if WINO.value >= 0:
        return {0: 0, 2: 2}.get(WINO.value, 4)
    cin, cout, images, oh, ow = sizes
    channels, macs = min(cin, cout), cin * cout * images * oh * ow
    if channels < 64 or macs < (2**23 if channels >= 128 else 2**26):
        return 0
    if channels < 128 and not grad:
        return 0
    return 4 if min(oh, ow) >= 28 else 2


class NNMixin(OpMixinBase):
    """conv/pool/interpolate/norm/attention/loss methods (mixed into UOp and Tensor)."""

    __slots__ = ()

    # -- interpolate -----------------------------------------------------------------------------
    def interpolate(
        self, size: Sequence[int], mode: str = "linear", align_corners: bool = False
    ) -> Self:
        """Resize the last len(size) dims: "linear" (n-linear), "nearest", "nearest-exact".
        The source positions are computed in the graph with exact integer arithmetic (the
        fraction of a linear weight is one rounding)."""
        if mode not in ("linear", "nearest", "nearest-exact"):
            raise ValueError(f"interpolate: unsupported mode {mode!r}")
        if align_corners and mode != "linear":
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear"
            )
        if len(size) > self.ndim:
            raise ValueError(f"interpolate: {len(size)} sizes for a tensor with {self.ndim} dims")
        x = self
        for i, out_size in enumerate(size):
            if not isinstance(out_size, int) or out_size < 0:
                raise ValueError(f"interpolate: sizes must be non-negative ints, got {size}")
            axis = self.ndim - len(size) + i
            x = x._resize_axis(axis, out_size, mode, align_corners)
        return x

    def _select_along(self, axis: int, index: Self) -> Self:
        """``self`` at the int positions ``index`` (1-d, known in range) along ``axis``."""
        n = self.shape[axis]
        mask = index.unsqueeze(-1).eq(type(self).arange(n, device=self.device))  # (out, n)
        xt = self.transpose(axis, -1).unsqueeze(-2)  # (..., 1, n)
        work = xt.cast(dtypes.uint8) if xt.dtype is dtypes.bool else xt
        picked = mask.where(work, work._const(0, shape=())).sum(-1, dtype=work.dtype)
        return picked.cast(self.dtype).transpose(axis, -1)

    def _resize_axis(self, axis: int, out: int, mode: str, align_corners: bool) -> Self:
        n = int(self.shape[axis])
        i = type(self).arange(out, device=self.device)
        if out == 0:
            return self.shrink([(0, 0) if d == axis else None for d in range(self.ndim)])
        if n == 0:
            raise ValueError(f"interpolate: dim {axis} is empty: nothing to resize to {out}")
        if mode != "linear":
            # floor(i * n / out), or floor((i + 1/2) * n / out) for nearest-exact
            src = (i * n) // out if mode == "nearest" else ((i * 2 + 1) * n) // (2 * out)
            return self._select_along(axis, src.minimum(n - 1))
        if align_corners:  # position i * (n-1) / (out-1)
            den = max(out - 1, 1)
            num = i * (n - 1) if out > 1 else i * 0
        else:  # position max((i + 1/2) * n / out - 1/2, 0)
            den = 2 * out
            num = ((i * 2 + 1) * n - out).maximum(0)
        lo = num // den
        w = (num - lo * den).cast(dtypes.float32) / den
        lo = lo.minimum(n - 1)
        hi = (lo + 1).minimum(n - 1)
        view = [out if d == axis else 1 for d in range(self.ndim)]
        wt = w.reshape(view)
        x = self._to_float()
        a, b = x._select_along(axis, lo), x._select_along(axis, hi)
        return (a * (1 - wt) + b * wt).cast(x.dtype)

    def _windows(
        self: Self,
        kernel: tuple[int, ...],
        stride: tuple[int, ...],
        dilation: tuple[int, ...],
        out: tuple[int, ...],
    ) -> Self:
        """Sliding windows over the last len(kernel) dims: (..., K, *out), K = prod(kernel)."""
        n = len(kernel)
        lead = self.ndim - n
        views = []
        for offsets in itertools.product(*(range(k) for k in kernel)):
            x = self
            for i, (o, s, d, c) in enumerate(zip(offsets, stride, dilation, out, strict=True)):
                x = x._strided(lead + i, o * d, c, s)
            views.append(x.unsqueeze(lead))
        return views[0].cat(*views[1:], dim=lead) if len(views) > 1 else views[0]

    def _out_sizes(
        self: Self,
        kernel: tuple[int, ...],
        stride: tuple[int, ...],
        dilation: tuple[int, ...],
        ceil_mode: bool = False,
    ) -> tuple[int, ...]:
        spatial = self.shape[-len(kernel) :]
        out = []
        for size, k, s, d in zip(spatial, kernel, stride, dilation, strict=True):
            span = int(size) - d * (k - 1) - 1
            o = (-(-span // s) if ceil_mode else span // s) + 1
            if o <= 0:
                raise RuntimeError(
                    f"kernel {kernel} with dilation {dilation} is larger than the (padded) input {tuple(spatial)}"
                )
            out.append(o)
        return tuple(out)

    def conv2d(
        self: Self,
        weight: Self,
        bias: Self | None = None,
        groups: int = 1,
        stride: Any = 1,
        dilation: Any = 1,
        padding: Any = 0,
        dtype: Any = None,
    ) -> Self:
        """Convolution over the last weight.ndim-2 dims (cross-correlation, like PyTorch)."""
        n = weight.ndim - 2
        if self.ndim != n + 2:
            raise RuntimeError(
                f"conv: expected a {n + 2}-d input for a {weight.ndim}-d weight, got shape {tuple(self.shape)}"
            )
        cout, cin_g = int(weight.shape[0]), int(weight.shape[1])
        cin = int(self.shape[1])
        if cin != cin_g * groups or cout % groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(self.shape)} "
                f"to have {cin_g * groups} channels, but got {cin} channels instead"
            )
        kernel = _positive(tuple(int(k) for k in weight.shape[2:]), "kernel size", "conv2d")
        st = _positive(_tuple(stride, n, "stride"), "stride", "conv2d")
        dl = _positive(_tuple(dilation, n, "dilation"), "dilation", "conv2d")
        pairs = _padding_pairs(padding, n, kernel, dl, st)
        x = self.pad([None, None, *pairs])
        out = x._out_sizes(kernel, st, dl)
        # Winograd only in float32/64: its transforms' larger rounding (~10x with F(4x4)) is
        # too much for half precision, and integers need the exact direct sum
        wide = (dtypes.float32, dtypes.float64)
        exact = dtype is None and self.dtype in wide and weight.dtype in wide
        sizes = (cin, cout, int(self.shape[0]), *out)
        grad = bool(TRAINING.value) or any(
            getattr(t, "requires_grad", None) is True for t in (self, weight)
        )
        tile = _winograd_tile(kernel, st, dl, groups, sizes, grad) if exact else 0
        if tile and all(isinstance(s, int) for s in (*self.shape, *out)):
            res = x._winograd_conv2d(weight, tile)
            return res if bias is None else res + bias.reshape(1, -1, 1, 1)
        k = prod(kernel)
        bs = int(self.shape[0])
        cols = x._windows(kernel, st, dl, out)  # (bs, cin, K, *out)
        cols = cols.reshape(bs, groups, 1, cin_g, k, *out)
        w = weight.reshape(groups, cout // groups, cin_g, k, *([1] * n)).unsqueeze(0)
        res = (cols * w).sum((3, 4), dtype=dtype).reshape(bs, cout, *out)
        if bias is not None:
            res = res + bias.reshape(1, -1, *([1] * n))
        return res

    def _winograd_rows(self: Self, axis: int, count: int, m: int) -> list[Self]:
        """The m+2 rows of every tile along ``axis``: view ``a`` holds elements a, a+m, ...
        (``count`` of them), so tile k's row a is element k of view a."""
        return [self._strided(axis, a, count, m) for a in range(m + 2)]

    def _winograd_plane(self: Self, axis: int, index: int) -> Self:
        """Element ``index`` along ``axis``, the axis dropped."""
        return self._window(axis, index, index + 1).squeeze(axis)

    def _winograd_conv2d(self, weight: Self, m: int) -> Self:
        """3x3 stride-1 convolution of the padded input ``self`` (N, C, H, W) by Winograd
        F(m x m, 3x3): input tiles (m+2 square, every m pixels) to ``B^T d B``, the weights to
        ``G g G^T``, one matmul over the input channels per tile point, and ``A^T M A`` back to
        m x m output pixels per tile. Each transform is applied one axis at a time (one
        elementwise kernel each, 6 or 4 outputs of at most 4 terms per element)."""
        bt, g, at = _WINOGRAD[m]
        t = m + 2
        bs, cin, h, w = (int(s) for s in self.shape)
        cout = int(weight.shape[0])
        oh, ow = h - 2, w - 2
        th, tw = -(-oh // m), -(-ow // m)
        n = bs * th * tw
        # channels last: the matmul per tile point reduces over a contiguous axis and writes
        # (tiles, cout) rows (measured on 32x64->64 56^2: 10 ms of CPU vs 52 ms channels first)
        x = self.pad([None, None, (0, th * m + 2 - h), (0, tw * m + 2 - w)]).permute((0, 2, 3, 1))
        z = _linear_rows(bt, x._winograd_rows(1, th, m), 0).contiguous()  # t bs th W cin
        v = _linear_rows(bt, z._winograd_rows(3, tw, m), 1).contiguous()  # t t bs th tw cin
        taps = [weight._winograd_plane(2, a) for a in range(3)]  # cout cin kw
        u = _linear_rows(g, taps, 0)
        u = _linear_rows(g, [u._winograd_plane(3, b) for b in range(3)], 1).contiguous()
        u = u.reshape(t, t, 1, cout, cin)  # t t 1 cout cin
        prods = (v.reshape(t, t, n, 1, cin) * u).sum(4).contiguous()  # t t tiles cout
        prods = prods.reshape(t, t, bs, th, tw, cout)
        y = _linear_rows(at, [prods._winograd_plane(0, i) for i in range(t)], 0).contiguous()
        y = y.permute((2, 5, 3, 0, 4, 1))  # bs cout th m tw t
        y = _linear_rows(at, [y._winograd_plane(5, j) for j in range(t)], 5)
        y = y.reshape(bs, cout, th * m, tw * m)
        return y if (oh, ow) == (th * m, tw * m) else y.shrink([None, None, (0, oh), (0, ow)])

    def conv_transpose2d(
        self: Self,
        weight: Self,
        bias: Self | None = None,
        groups: int = 1,
        stride: Any = 1,
        dilation: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
    ) -> Self:
        """Transposed convolution (the gradient of conv2d w.r.t. its input)."""
        n = weight.ndim - 2
        st = _positive(_tuple(stride, n, "stride"), "stride", "conv_transpose2d")
        dl = _positive(_tuple(dilation, n, "dilation"), "dilation", "conv_transpose2d")
        pd, op = _tuple(padding, n, "padding"), _tuple(output_padding, n, "output_padding")
        kernel = tuple(int(k) for k in weight.shape[2:])
        x = self
        lead = x.ndim - n
        for i, s in enumerate(st):
            if s > 1:
                size = int(x.shape[lead + i])
                x = x.unsqueeze(lead + i + 1).pad(
                    [(0, s - 1) if j == lead + i + 1 else None for j in range(x.ndim + 1)]
                )
                x = x.flatten(lead + i, lead + i + 1)
                x = x.shrink(
                    [(0, (size - 1) * s + 1) if j == lead + i else None for j in range(x.ndim)]
                )
        pads = [
            (d * (k - 1) - p, d * (k - 1) - p + o)
            for k, d, p, o in zip(kernel, dl, pd, op, strict=True)
        ]
        x = x.pad([*([None] * lead), *pads])
        cin, cout_g = int(weight.shape[0]), int(weight.shape[1])
        w = weight.reshape(groups, cin // groups, cout_g, *kernel).transpose(1, 2)
        w = w.reshape(groups * cout_g, cin // groups, *kernel).flip(*range(2, 2 + n))
        return x.conv2d(w, bias, groups=groups, dilation=dl)

    def _pool_prepare(
        self, kernel_size: Any, stride: Any, dilation: Any, padding: Any, ceil_mode: bool
    ) -> tuple[tuple[int, ...], ...]:
        k = _tuple(
            kernel_size,
            len(kernel_size) if isinstance(kernel_size, (tuple, list)) else 2,
            "kernel_size",
        )
        n = len(k)
        _positive(k, "kernel_size", "pool")
        st = k if stride is None or stride == () else _tuple(stride, n, "stride")
        st = _positive(st, "stride", "pool")
        dl = _positive(_tuple(dilation, n, "dilation"), "dilation", "pool")
        pd = _padding_pairs(padding, n, k, dl, st)
        extra = []
        for (b, a), size, kk, s, d in zip(pd, self.shape[-n:], k, st, dl, strict=True):
            span = int(size) + b + a - d * (kk - 1) - 1
            o = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (o - 1) * s >= int(size) + b:
                o -= 1  # the last window must start inside the input or the left padding
            extra.append(max(0, (o - 1) * s + d * (kk - 1) + 1 - (int(size) + b + a)))
        return k, st, dl, tuple(p for pair in pd for p in pair), tuple(extra)

    def _pooled(
        self: Self,
        fill: Any,
        k: tuple[int, ...],
        st: tuple[int, ...],
        dl: tuple[int, ...],
        pads: tuple[int, ...],
        extra: tuple[int, ...],
    ) -> Self:
        n = len(k)
        pairs = [(pads[2 * i], pads[2 * i + 1] + extra[i]) for i in range(n)]
        x = self.pad([*([None] * (self.ndim - n)), *pairs], value=fill)
        out = x._out_sizes(k, st, dl)
        return x._windows(k, st, dl, out)

    def avg_pool2d(
        self: Self,
        kernel_size: Any = (2, 2),
        stride: Any = None,
        dilation: Any = 1,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> Self:
        """Average over windows of the last len(kernel_size) dims."""
        k, st, dl, pads, extra = self._pool_prepare(
            kernel_size, stride, dilation, padding, ceil_mode
        )
        n = len(k)
        axis = self.ndim - n
        x = self._to_float()
        total = x._pooled(0, k, st, dl, pads, extra).sum(axis)
        ones = x._const(1.0, shape=self.shape[-n:])
        if count_include_pad:
            ones = ones.pad([(pads[2 * i], pads[2 * i + 1]) for i in range(n)], value=1.0)
            count = ones._pooled(0, k, st, dl, (0,) * 2 * n, extra).sum(0)
        else:
            count = ones._pooled(0, k, st, dl, pads, extra).sum(0)
        return total / count

    def max_pool2d(
        self: Self,
        kernel_size: Any = (2, 2),
        stride: Any = None,
        dilation: Any = 1,
        padding: Any = 0,
        ceil_mode: bool = False,
        return_indices: bool = False,
    ) -> Any:
        """Max over windows of the last len(kernel_size) dims (with flat input indices)."""
        k, st, dl, pads, extra = self._pool_prepare(
            kernel_size, stride, dilation, padding, ceil_mode
        )
        n = len(k)
        axis = self.ndim - n
        lowest = -math.inf if dtypes.is_float(self.dtype) else dtypes.min(self.dtype)
        win = self._pooled(lowest, k, st, dl, pads, extra)
        values = win.max(axis)
        if not return_indices:
            return values
        spatial = tuple(int(s) for s in self.shape[-n:])
        flat = type(self).arange(prod(spatial), device=self.device).reshape(spatial)
        iwin = flat._pooled(-1, k, st, dl, pads, extra)  # (K, *out)
        first = win.argmax(axis, keepdim=True)
        pick = iwin._broadcast_to(win.shape)._gather(axis, first, None).squeeze(axis)
        return values, pick

    def max_unpool2d(
        self: Self,
        indices: Self,
        kernel_size: Any = (2, 2),
        stride: Any = None,
        dilation: Any = 1,
        padding: Any = 0,
        output_size: Any = None,
    ) -> Self:
        """The inverse of max_pool2d: values placed at ``indices``, zeros elsewhere."""
        k = _tuple(kernel_size, 2, "kernel_size")
        n = len(k)
        st = k if stride is None else _tuple(stride, n, "stride")
        dl, pd = _tuple(dilation, n, "dilation"), _tuple(padding, n, "padding")
        if output_size is None:
            size = tuple(
                (int(i) - 1) * s - 2 * p + d * (kk - 1) + 1
                for i, s, p, d, kk in zip(self.shape[-n:], st, pd, dl, k, strict=True)
            )
        else:
            size = tuple(output_size)[-n:]
        lead = self.shape[:-n]
        vals = self.flatten(-n) if n > 1 else self
        idx = indices.flatten(-n) if n > 1 else indices
        hit = idx.unsqueeze(-1).eq(type(self).arange(prod(size), device=self.device))
        placed = hit.where(vals.unsqueeze(-1), vals._const(0, shape=())).sum(-2).cast(self.dtype)
        return placed.reshape(*lead, *size)

    def layernorm(self, axis: int | Sequence[int] = -1, eps: float = 1e-5) -> Self:
        """(x - mean) / sqrt(var + eps) over ``axis`` (biased variance)."""
        y = self - self.mean(axis, keepdim=True)
        return y * (y * y).mean(axis, keepdim=True).add(eps).rsqrt()

    def batchnorm(
        self: Self,
        weight: Self | None,
        bias: Self | None,
        mean: Self,
        invstd: Self,
        axis: int | Sequence[int] = 1,
    ) -> Self:
        """(x - mean) * invstd * weight + bias, parameters along ``axis``."""
        axes = self._axes(axis)
        shape = tuple(s if i in axes else 1 for i, s in enumerate(self.shape))
        x = self - mean.reshape(shape)
        if weight is not None:
            x = x * weight.reshape(shape)
        ret = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
        return ret + bias.reshape(shape) if bias is not None else ret

    def scaled_dot_product_attention(
        self: Self,
        key: Self,
        value: Self,
        attn_mask: Self | None = None,
        dropout_p: float = 0.0,
        is_causal: bool = False,
        enable_gqa: bool = False,
    ) -> Self:
        """softmax(q @ k^T / sqrt(d) + mask) @ v, with causal masking and grouped-query heads."""
        if enable_gqa and self.ndim >= 3 and key.shape[-3] != self.shape[-3]:
            rep = int(self.shape[-3]) // int(key.shape[-3])
            key = key.repeat_interleave(rep, dim=-3)
            value = value.repeat_interleave(rep, dim=-3)
        scores = self.matmul(key.transpose(-2, -1)) * (1 / math.sqrt(int(self.shape[-1])))
        if is_causal:
            if attn_mask is not None:
                raise RuntimeError(
                    "scaled_dot_product_attention: is_causal and attn_mask can't both be set"
                )
            L, S = int(self.shape[-2]), int(key.shape[-2])
            attn_mask = type(self).ones(L, S, dtype=dtypes.bool, device=self.device).tril()
        if attn_mask is not None:
            scores = (
                attn_mask.where(scores, -math.inf)
                if attn_mask.dtype is dtypes.bool
                else scores + attn_mask
            )
        weights = scores.softmax(-1)
        if dropout_p:
            weights = weights.dropout(dropout_p)
        return weights.matmul(value)

    # -- losses ----------------------------------------------------------------------------------
    def _reduction(self, reduction: str) -> Self:
        if reduction not in ("none", "sum", "mean"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        return self if reduction == "none" else self.sum() if reduction == "sum" else self.mean()

    def binary_crossentropy(self, Y: Self, reduction: str = "mean") -> Self:
        """-(y log p + (1-y) log(1-p)), logs clamped at -100 like PyTorch."""
        loss = -(Y * self.log().maximum(-100) + (1 - Y) * (1 - self).log().maximum(-100))
        return loss._reduction(reduction)

    def binary_crossentropy_logits(
        self, Y: Self, reduction: str = "mean", pos_weight: Self | None = None
    ) -> Self:
        """Binary cross entropy of sigmoid(self), computed stably."""
        softplus_neg = (-self.abs()).exp().log1p()
        if pos_weight is None:
            loss = self.maximum(0) - self * Y + softplus_neg
        else:
            log_weight = (pos_weight - 1) * Y + 1
            loss = (1 - Y) * self + log_weight * (softplus_neg + (-self).maximum(0))
        return loss._reduction(reduction)

    def sparse_categorical_crossentropy(
        self: Self,
        Y: Self,
        ignore_index: int = -1,
        label_smoothing: float = 0.0,
        reduction: str = "mean",
    ) -> Self:
        """Cross entropy of logits (classes last) with integer targets."""
        logp = self.log_softmax(-1)
        valid = Y.ne(ignore_index)
        target = valid.where(Y, 0)
        picked = -logp.gather(-1, target.unsqueeze(-1).cast(dtypes.int32)).squeeze(-1)
        smooth = -logp.mean(-1)
        loss = (1 - label_smoothing) * picked + label_smoothing * smooth
        loss = valid.where(loss, 0)
        if reduction == "mean":
            return loss.sum() / valid.sum()
        return loss._reduction(reduction)

    def cross_entropy(self, Y: Self, reduction: str = "mean", label_smoothing: float = 0.0) -> Self:
        """Cross entropy of logits (classes on dim 1) with class indices or probabilities."""
        axis = 1 if self.ndim > 1 else 0
        logp = self.log_softmax(axis)
        classes = int(self.shape[axis])
        if dtypes.is_int(Y.dtype):
            y = Y.one_hot(classes).cast(logp.dtype)
            if axis == 1 and y.ndim > 2:
                y = y.permute(0, y.ndim - 1, *range(1, y.ndim - 1))
        else:
            y = Y
        y = y * (1 - label_smoothing) + label_smoothing / classes
        return (-(logp * y).sum(axis))._reduction(reduction)

    def nll_loss(
        self: Self,
        Y: Self,
        weight: Self | None = None,
        ignore_index: int | None = None,
        reduction: str = "mean",
    ) -> Self:
        """Negative log likelihood of log-probabilities (classes on dim 1)."""
        axis = 1 if self.ndim > 1 else 0
        classes = int(self.shape[axis])
        valid = Y.ne(ignore_index) if ignore_index is not None else Y._const(True, dtypes.bool)
        target = valid.where(Y, 0)
        w = weight[target] if weight is not None else target._const(1.0, self.dtype)
        w = valid.where(w, 0)
        onehot = target.one_hot(classes)
        if axis == 1 and onehot.ndim > 2:
            onehot = onehot.permute(0, onehot.ndim - 1, *range(1, onehot.ndim - 1))
        picked = onehot.bool().where(self, 0).sum(axis)
        loss = -picked * w
        if reduction == "mean":
            return loss.sum() / w.sum()
        return loss._reduction(reduction)
