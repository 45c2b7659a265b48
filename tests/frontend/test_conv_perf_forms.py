"""Convolutions in the kernel forms of #25 against PyTorch: the GEMM kernel with its pixel
and tap ranges merged (``merge_gemm_ranges``) and the im2col copy with its taps upcast
(``SELECT_AXIS_MAX``), for each shape family: 3x3 pad 1, stride 2, 1x1, dilation, groups,
depthwise, and the backward pass (input and weight gradients)."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.codegen import Renderer
from fusegrad.codegen.opt import hand_coded_optimizations
from fusegrad.codegen.opt.kernel import OptOps
from fusegrad.runtime import Device
from fusegrad.uop import AxisType, Ops, UOp

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.kernels

#: (batch, cin, cout, hw, kernel, stride, padding, dilation, groups)
SHAPES = {
    "3x3_pad1": (2, 16, 16, 20, 3, 1, 1, 1, 1),
    "3x3_pad1_wide": (1, 64, 32, 24, 3, 1, 1, 1, 1),
    "3x3_stride2": (2, 16, 24, 21, 3, 2, 1, 1, 1),
    "1x1": (2, 32, 48, 14, 1, 1, 0, 1, 1),
    "1x1_stride2": (2, 32, 16, 14, 1, 2, 0, 1, 1),
    "5x5_valid": (1, 8, 8, 17, 5, 1, 0, 1, 1),
    "3x3_dilation2": (1, 8, 8, 19, 3, 1, 2, 2, 1),
    "groups4": (2, 16, 32, 12, 3, 1, 1, 1, 4),
    "depthwise": (2, 32, 32, 18, 3, 1, 1, 1, 32),
    "depthwise_stride2": (1, 24, 24, 17, 3, 2, 1, 1, 24),
}


def _data(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    b, cin, cout, hw, k, _, _, _, groups = shape
    rs = np.random.default_rng(sum(shape))
    x = rs.standard_normal((b, cin, hw, hw)).astype(np.float32)
    w = rs.standard_normal((cout, cin // groups, k, k)).astype(np.float32) / k
    return x, w


@pytest.mark.parametrize("name", list(SHAPES))
def test_conv2d_equals_torch(name: str) -> None:
    shape = SHAPES[name]
    _, _, _, _, _, stride, pad, dil, groups = shape
    x, w = _data(shape)
    got = Tensor(x).conv2d(Tensor(w), stride=stride, padding=pad, dilation=dil, groups=groups)
    want = torch.nn.functional.conv2d(
        torch.from_numpy(x), torch.from_numpy(w), stride=stride, padding=pad, dilation=dil,
        groups=groups,
    )  # fmt: skip
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["3x3_pad1", "3x3_stride2", "1x1", "groups4", "depthwise"])
def test_conv2d_gradients_equal_torch(name: str) -> None:
    shape = SHAPES[name]
    _, _, _, _, _, stride, pad, dil, groups = shape
    x, w = _data(shape)
    tx, tw = Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)
    out = tx.conv2d(tw, stride=stride, padding=pad, dilation=dil, groups=groups)
    g = (
        np.random.default_rng(7)
        .standard_normal(tuple(int(d) for d in out.shape))
        .astype(np.float32)
    )
    (out * Tensor(g)).sum().backward()
    px = torch.from_numpy(x).requires_grad_()
    pw = torch.from_numpy(w).requires_grad_()
    po = torch.nn.functional.conv2d(px, pw, stride=stride, padding=pad, dilation=dil, groups=groups)
    (po * torch.from_numpy(g)).sum().backward()
    assert tx.grad is not None and tw.grad is not None
    np.testing.assert_allclose(tx.grad.numpy(), px.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(tw.grad.numpy(), pw.grad.numpy(), rtol=1e-3, atol=2e-3)


def _kernels(t: Tensor) -> list[UOp]:
    return [c.src[0] for c in t.schedule_linear().src if c.src[0].op is Ops.SINK]


def _sizes(ast: UOp, kind: AxisType) -> list[int]:
    rngs = sorted({u for u in ast.toposort() if u.op is Ops.RANGE}, key=lambda r: r.arg[0])
    return [r.src[0].arg for r in rngs if r.arg[1] is kind]


def test_conv_gemm_kernel_has_one_pixel_and_one_tap_range() -> None:
    """The 3x3 pad-1 conv's GEMM kernel: out[co, p] = sum over K = cin*9 of w[co, K] *
    cols[K, p] with p = 24*24 pixels (one LOOP range each for batch, co, p; one REDUCE)."""
    x, w = Tensor.empty(2, 64, 24, 24), Tensor.empty(32, 64, 3, 3)
    gemms = [a for a in _kernels(x.conv2d(w, padding=1)) if _sizes(a, AxisType.REDUCE)]
    assert len(gemms) == 1
    assert _sizes(gemms[0], AxisType.REDUCE) == [64 * 9]
    assert _sizes(gemms[0], AxisType.LOOP) == [2, 32, 24 * 24]


def _cpu_renderer() -> Renderer:
    """``Device["CPU"].renderer``; skips the test when it is GPU-style (``has_local``, e.g.
    ``DEV=CPU:LVP``): the CPU heuristics these tests check do not run for it."""
    renderer = Device["CPU"].renderer
    if renderer.has_local:
        pytest.skip(
            f"{renderer!r} is GPU-style (has_local, e.g. DEV=CPU:LVP): the CPU heuristics "
            "that these tests check do not run for it"
        )
    return renderer


def test_im2col_copy_upcasts_its_taps() -> None:
    """The im2col copy chooses between 9 shifted reads by its tap axis: the heuristics
    upcast that axis whole (each lane then makes one load)."""
    x, w = Tensor.empty(2, 64, 24, 24), Tensor.empty(32, 64, 3, 3)
    copies = [a for a in _kernels(x.conv2d(w, padding=1)) if not _sizes(a, AxisType.REDUCE)]
    assert copies, "the scheduler no longer builds an im2col copy: revisit this test"
    renderer = _cpu_renderer()
    for ast in copies:
        taps = _sizes(ast, AxisType.LOOP).index(9)
        opts = hand_coded_optimizations(ast, renderer)
        assert any(o.op is OptOps.UPCAST and o.axis == taps and o.amount == 9 for o in opts), opts


def test_depthwise_kernel_unrolls_its_taps() -> None:
    """A depthwise conv sums its 9 taps in the kernel that reads them (one gated read per
    tap): the heuristics unroll that reduce axis whole."""
    x, w = Tensor.empty(2, 32, 24, 24), Tensor.empty(32, 1, 3, 3)
    (ast,) = _kernels(x.conv2d(w, padding=1, groups=32))
    assert _sizes(ast, AxisType.REDUCE) == [9]
    opts = hand_coded_optimizations(ast, _cpu_renderer())
    assert any(o.op is OptOps.UNROLL and o.amount == 9 for o in opts), opts
