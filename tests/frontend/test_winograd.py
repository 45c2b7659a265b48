"""Winograd convolution (#25): conv2d's F(2x2,3x3) and F(4x4,3x3) forms against PyTorch in
float64, forward and gradients, with the error bounds they keep in float32; the rule that
chooses them (``_winograd_tile``) and the ``WINO`` flag that forces them on or off."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.uop import Context
from fusegrad.uop.mixin.nn import _winograd_tile

torch = pytest.importorskip("torch")

#: max |error| / max |float64 result| in float32 per output tile size. F(4x4)'s transforms
#: carry coefficients up to 8 (A^T) and 5 (B^T), so it rounds about 10x coarser than the direct
#: form: measured up to 2e-7 (F2) and 2.3e-6 (F4) on these shapes, 2.4e-7 and 4e-6 on
#: 4x64->64 56^2 (the direct form: 1e-7 to 1e-6); the bounds leave 5-10x of room
BOUND = {2: 2e-6, 4: 2e-5}

#: (batch, cin, cout, height, width, padding): odd sizes that leave partial tiles, no padding,
#: asymmetric padding, batch 1
SHAPES = {
    "odd_pad1": (2, 8, 5, 11, 9, 1),
    "valid_7x13": (1, 6, 4, 7, 13, 0),
    "pad_2_0": (3, 5, 7, 10, 10, (2, 0)),
    "exact_tiles": (1, 16, 8, 8, 8, 1),
    "single_tile": (2, 4, 3, 3, 3, 0),
}


def _data(shape: tuple[object, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b, cin, cout, h, w, _ = shape
    rs = np.random.default_rng(7)
    x = rs.standard_normal((b, cin, h, w)).astype(np.float32)  # type: ignore[arg-type]
    wt = (rs.standard_normal((cout, cin, 3, 3)) / 3).astype(np.float32)  # type: ignore[arg-type]
    bias = rs.standard_normal(cout).astype(np.float32)  # type: ignore[arg-type]
    return x, wt, bias


def _relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / np.abs(want).max())


@pytest.mark.kernels
@pytest.mark.parametrize("tile", [2, 4])
@pytest.mark.parametrize("name", list(SHAPES))
def test_winograd_conv2d_equals_float64_torch(tile: int, name: str) -> None:
    shape = SHAPES[name]
    x, w, bias = _data(shape)
    pad = shape[5]
    with Context(WINO=tile):
        got = Tensor(x).conv2d(Tensor(w), Tensor(bias), padding=pad).numpy()
    want = torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(w).double(),
        torch.from_numpy(bias).double(), padding=pad,
    ).numpy()  # fmt: skip
    assert got.shape == want.shape
    assert _relative_error(got, want) < BOUND[tile]


@pytest.mark.kernels
@pytest.mark.parametrize("tile", [2, 4])
def test_winograd_gradients_equal_float64_torch(tile: int) -> None:
    x, w, bias = _data((2, 6, 5, 9, 11, 1))
    gy = np.random.default_rng(3).standard_normal((2, 5, 9, 11)).astype(np.float32)
    tx, tw, tb = (Tensor(a, requires_grad=True) for a in (x, w, bias))
    with Context(WINO=tile):
        (tx.conv2d(tw, tb, padding=1) * Tensor(gy)).sum().backward()
    px, pw, pb = (torch.from_numpy(a).double().requires_grad_() for a in (x, w, bias))
    out = torch.nn.functional.conv2d(px, pw, pb, padding=1)
    (out * torch.from_numpy(gy).double()).sum().backward()
    for ours, theirs in ((tx, px), (tw, pw), (tb, pb)):
        assert ours.grad is not None and theirs.grad is not None
        assert _relative_error(ours.grad.numpy(), theirs.grad.numpy()) < BOUND[tile]


@pytest.mark.kernels
def test_winograd_on_ints_keeps_the_direct_form() -> None:
    x = np.arange(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) % 7 - 3
    w = np.arange(4 * 3 * 9).reshape(4, 3, 3, 3) % 5 - 2
    with Context(WINO=4):
        got = Tensor(x.astype(np.int32)).conv2d(Tensor(w.astype(np.int32)), padding=1).numpy()
    want = torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(w).double(), padding=1
    ).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.kernels
def test_winograd_on_half_keeps_the_direct_form() -> None:
    x, w, _ = _data((1, 4, 3, 6, 6, 1))
    xh, wh = Tensor(x).half(), Tensor(w).half()
    with Context(WINO=4):
        forced = xh.conv2d(wh, padding=1).numpy()
    with Context(WINO=0):
        direct = xh.conv2d(wh, padding=1).numpy()
    np.testing.assert_array_equal(forced, direct)


#: the benchmark's shapes (tools/bench/conv.py --cases) and the measured ones of the rule's
#: docstring: (kernel, stride, dilation, groups, (cin, cout, images, out h, out w)) -> tile
RULE = {
    "3x3_pad1": (((3, 3), (1, 1), (1, 1), 1, (64, 64, 32, 56, 56)), 0),  # inference: direct
    "3x3_stride2": (((3, 3), (2, 2), (1, 1), 1, (64, 128, 32, 28, 28)), 0),
    "1x1": (((1, 1), (1, 1), (1, 1), 1, (64, 256, 32, 56, 56)), 0),
    "depthwise": (((3, 3), (1, 1), (1, 1), 64, (64, 64, 32, 56, 56)), 0),
    "dilation2": (((3, 3), (1, 1), (2, 2), 1, (64, 64, 32, 56, 56)), 0),
    "few_channels": (((3, 3), (1, 1), (1, 1), 1, (3, 64, 32, 56, 56)), 0),
    "32_channels": (((3, 3), (1, 1), (1, 1), 1, (32, 32, 32, 56, 56)), 0),
    "one_image_64": (((3, 3), (1, 1), (1, 1), 1, (64, 64, 1, 56, 56)), 0),
    "128_at_14": (((3, 3), (1, 1), (1, 1), 1, (128, 128, 4, 14, 14)), 2),
    "512_at_7": (((3, 3), (1, 1), (1, 1), 1, (512, 512, 1, 7, 7)), 2),
    "128_at_28": (((3, 3), (1, 1), (1, 1), 1, (128, 128, 8, 28, 28)), 4),
    "tiny": (((3, 3), (1, 1), (1, 1), 1, (16, 16, 1, 20, 20)), 0),
}


@pytest.mark.parametrize("name", list(RULE))
def test_winograd_rule_picks_the_measured_form(name: str) -> None:
    args, tile = RULE[name]
    assert _winograd_tile(*args) == tile


def test_below_128_channels_winograd_only_when_gradients_are_wanted() -> None:
    # quiet machine, 64->64 56^2: Winograd x0.70 forward, x2.4 backward (x1.7 together)
    bench = RULE["3x3_pad1"][0]
    assert _winograd_tile(*bench) == 0 and _winograd_tile(*bench, True) == 4
    assert _winograd_tile(*RULE["128_at_28"][0]) == 4  # from 128 channels forward wins too
    x = Tensor.empty(8, 64, 60, 60)  # 118M multiply-adds: over the 2^26 floor
    w = Tensor.empty(64, 64, 3, 3)
    n_plain = len(x.conv2d(w, padding=1).uop.toposort())
    with Context(TRAINING=1):
        n_training = len(x.conv2d(w, padding=1).uop.toposort())
    n_grad = len(x.conv2d(w.detach().requires_grad_(), padding=1).uop.toposort())
    assert min(n_training, n_grad) > 2 * n_plain  # the transforms' graph, not the direct sum


def test_wino_flag_forces_and_disables() -> None:
    bench = RULE["3x3_pad1"][0]
    tiny = RULE["tiny"][0]
    with Context(WINO=0):
        assert _winograd_tile(*bench) == 0
    with Context(WINO=1):
        assert _winograd_tile(*tiny) == 4
    with Context(WINO=2):
        assert _winograd_tile(*tiny) == 2
    with Context(WINO=4):
        assert _winograd_tile(*RULE["3x3_stride2"][0]) == 0  # Winograd can't do stride 2
