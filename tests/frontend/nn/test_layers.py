"""fusegrad.nn layers vs PyTorch with the same weights: forward values, gradients,
BatchNorm's running statistics, and PyTorch's initialization distributions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, dtypes, nn
from reference import assert_close, rand_np

torch = pytest.importorskip("torch")


def copy_params(ours: Any, theirs: Any, names: tuple[str, ...] = ("weight", "bias")) -> None:
    """Give ``ours`` the parameters of the torch module ``theirs``."""
    for name in names:
        t = getattr(theirs, name, None)
        if t is not None:
            setattr(ours, name, Tensor(t.detach().numpy().copy(), requires_grad=True))


def check_forward_backward(ours: Any, theirs: Any, x: np.ndarray, atol: float = 1e-5) -> None:
    """Outputs equal; gradients of sum(out * r) w.r.t. input and weight equal."""
    tx = torch.tensor(x, requires_grad=True)
    fx = Tensor(x, requires_grad=True)
    tout, fout = theirs(tx), ours(fx)
    assert_close(fout, tout, atol=atol, rtol=1e-4)
    r = rand_np(tuple(tout.shape))
    (tout * torch.tensor(r)).sum().backward()
    (fout * Tensor(r)).sum().backward()
    assert_close(fx.grad, tx.grad, atol=atol, rtol=1e-4)
    assert_close(ours.weight.grad, theirs.weight.grad, atol=atol * 10, rtol=1e-4)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    torch.manual_seed(0)
    Tensor.manual_seed(0)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(bias: bool) -> None:
    theirs = torch.nn.Linear(5, 3, bias=bias)
    ours = nn.Linear(5, 3, bias=bias)
    assert ours.weight.shape == (3, 5) and (ours.bias is None) == (not bias)
    copy_params(ours, theirs)
    check_forward_backward(ours, theirs, rand_np((4, 5)))
    check_forward_backward(ours, theirs, rand_np((2, 4, 5)))


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2},
                                {"padding": "same"}, {"padding": (1, 2), "bias": False}])  # fmt: skip
def test_conv2d_matches_torch(kw: dict[str, Any]) -> None:
    theirs = torch.nn.Conv2d(4, 6, 3, **kw)
    ours = nn.Conv2d(4, 6, 3, **kw)
    assert ours.weight.shape == tuple(theirs.weight.shape)
    copy_params(ours, theirs)
    check_forward_backward(ours, theirs, rand_np((2, 4, 7, 8)), atol=1e-4)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 2}, {"groups": 2, "dilation": 2}])
def test_conv1d_matches_torch(kw: dict[str, Any]) -> None:
    theirs = torch.nn.Conv1d(4, 2, 3, **kw)
    ours = nn.Conv1d(4, 2, 3, **kw)
    copy_params(ours, theirs)
    check_forward_backward(ours, theirs, rand_np((2, 4, 11)), atol=1e-4)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1},
                                {"groups": 2, "dilation": 2}, {"stride": (2, 1), "bias": False}])  # fmt: skip
def test_conv_transpose2d_matches_torch(kw: dict[str, Any]) -> None:
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, **kw)
    ours = nn.ConvTranspose2d(4, 6, 3, **kw)
    assert ours.weight.shape == tuple(theirs.weight.shape)
    copy_params(ours, theirs)
    check_forward_backward(ours, theirs, rand_np((2, 4, 5, 6)), atol=1e-4)


def test_conv_transpose1d_matches_torch() -> None:
    theirs = torch.nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1, output_padding=2)
    ours = nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1, output_padding=2)
    copy_params(ours, theirs)
    check_forward_backward(ours, theirs, rand_np((2, 3, 6)), atol=1e-4)


def test_conv_rejects_bad_groups() -> None:
    with pytest.raises(ValueError, match="divisible by groups 2"):
        nn.Conv2d(3, 4, 3, groups=2)


def _batchnorm_pair(n: int, **kw: Any) -> tuple[Any, Any]:
    cls = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}[n]
    theirs = cls(3, **kw)
    theirs.weight.data = torch.tensor(rand_np((3,)))
    theirs.bias.data = torch.tensor(rand_np((3,)))
    ours = nn.BatchNorm(3, **kw)
    copy_params(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
def test_batchnorm_train_updates_running_stats(shape: tuple[int, ...]) -> None:
    ours, theirs = _batchnorm_pair(max(len(shape) - 2, 1), momentum=0.3)
    Tensor.training = True
    try:
        for _ in range(2):
            x = rand_np(shape)
            check_forward_backward(ours, theirs, x, atol=1e-4)
            ours.weight.grad = None
            theirs.weight.grad = None
    finally:
        Tensor.training = False
    assert_close(ours.running_mean, theirs.running_mean, atol=1e-5)
    assert_close(ours.running_var, theirs.running_var, atol=1e-5)
    assert ours.num_batches_tracked.tolist() == [2]
    theirs.eval()
    x = rand_np(shape)
    assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), atol=1e-5)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval() -> None:
    ours, theirs = _batchnorm_pair(2, track_running_stats=False)
    theirs.eval()
    x = rand_np((2, 3, 4, 4))
    assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), atol=1e-5)
    assert nn.BatchNorm2d is nn.BatchNorm


def test_groupnorm_instancenorm_match_torch() -> None:
    theirs = torch.nn.GroupNorm(2, 6)
    theirs.weight.data, theirs.bias.data = torch.randn(6), torch.randn(6)
    ours = nn.GroupNorm(2, 6)
    copy_params(ours, theirs)
    check_forward_backward(ours, theirs, rand_np((3, 6, 4, 2)), atol=1e-4)
    inst = torch.nn.InstanceNorm2d(6, affine=True)
    inst.weight.data, inst.bias.data = torch.randn(6), torch.randn(6)
    ours_i = nn.InstanceNorm(6)
    copy_params(ours_i, inst)
    check_forward_backward(ours_i, inst, rand_np((3, 6, 4, 5)), atol=1e-4)


@pytest.mark.parametrize("shape", [5, (4, 5)])
def test_layernorm_matches_torch(shape: Any) -> None:
    theirs = torch.nn.LayerNorm(shape, eps=1e-6)
    n = 1 if isinstance(shape, int) else len(shape)
    theirs.weight.data = torch.randn(theirs.weight.shape)
    theirs.bias.data = torch.randn(theirs.bias.shape)
    ours = nn.LayerNorm(shape, eps=1e-6)
    copy_params(ours, theirs)
    check_forward_backward(
        ours, theirs, rand_np((2, 3, 4, 5)[: 4 - n] + (4, 5)[2 - n :]), atol=1e-4
    )
    with pytest.raises(ValueError, match="last dims"):
        ours(Tensor.ones(2, 3))


def test_layernorm2d_normalizes_channels() -> None:
    theirs = torch.nn.LayerNorm(3)
    theirs.weight.data, theirs.bias.data = torch.randn(3), torch.randn(3)
    ours = nn.LayerNorm2d(3)
    copy_params(ours, theirs)
    x = rand_np((2, 3, 4, 5))
    want = theirs(torch.tensor(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
    assert_close(ours(Tensor(x)), want, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rmsnorm_matches_torch(dtype: Any) -> None:
    theirs = torch.nn.RMSNorm(6, eps=1e-6)
    theirs.weight.data = torch.randn(6)
    ours = nn.RMSNorm(6)
    copy_params(ours, theirs, ("weight",))
    x = rand_np((3, 6)).astype(dtype)
    want = theirs(torch.tensor(x).float())
    got = ours(Tensor(x))
    assert got.dtype is dtypes.float32  # fp16 is normalized in float32, weight is float32
    assert_close(got, want, atol=1e-5 if dtype == np.float32 else 3e-3, rtol=1e-3)
    if dtype == np.float32:
        check_forward_backward(ours, theirs, x, atol=1e-4)


def test_embedding_matches_torch() -> None:
    theirs = torch.nn.Embedding(10, 4)
    ours = nn.Embedding(10, 4)
    copy_params(ours, theirs, ("weight",))
    idx = np.array([[1, 2, 9], [0, 0, 5]], dtype=np.int32)
    assert_close(ours(Tensor(idx)), theirs(torch.tensor(idx)), atol=0)
    assert ours(Tensor(3)).shape == (4,)
    out = ours(Tensor(idx))
    out.sum().backward()
    want = np.zeros((10, 4), np.float32)
    np.add.at(want, idx.reshape(-1), 1.0)
    assert_close(ours.weight.grad, want)


def test_lstmcell_matches_torch() -> None:
    theirs = torch.nn.LSTMCell(3, 5)
    ours = nn.LSTMCell(3, 5)
    copy_params(ours, theirs, ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    x1, x2 = rand_np((2, 3)), rand_np((2, 3))
    th, tc = theirs(torch.tensor(x1))
    fh, fc = ours(Tensor(x1))
    assert_close(fh, th, atol=1e-5)
    assert_close(fc, tc, atol=1e-5)
    th, tc = theirs(torch.tensor(x2), (th, tc))
    fh, fc = ours(Tensor(x2), (fh, fc))
    assert_close(fh, th, atol=1e-5)
    assert_close(fc, tc, atol=1e-5)
    assert nn.LSTMCell(3, 5, bias=False).bias_ih is None


# -- initialization: PyTorch's distributions ------------------------------------------------------


def _stats(t: Tensor) -> tuple[float, float, float]:
    v = t.numpy().astype(np.float64)
    return float(np.abs(v).max()), float(v.mean()), float(v.std())


@pytest.mark.parametrize("make,fan_in", [(lambda: nn.Linear(64, 300), 64), (lambda: nn.Conv2d(8, 64, 3), 72),
                                         (lambda: nn.ConvTranspose2d(16, 32, 3, groups=2), 144),
                                         (lambda: nn.Conv1d(6, 200, 5), 30)])  # fmt: skip
def test_weights_are_kaiming_uniform_like_torch(make: Any, fan_in: int) -> None:
    layer = make()
    bound = 1 / math.sqrt(fan_in)
    top, mean, std = _stats(layer.weight)
    assert top <= bound and top > 0.95 * bound
    assert abs(mean) < 0.05 * bound and abs(std - bound / math.sqrt(3)) < 0.05 * bound
    assert _stats(layer.bias)[0] <= bound


def test_embedding_and_norm_inits() -> None:
    top, mean, std = _stats(nn.Embedding(100, 64).weight)
    assert abs(mean) < 0.05 and abs(std - 1) < 0.05 and top > 2.5
    bn = nn.BatchNorm(4)
    assert bn.weight is not None and bn.bias is not None
    assert bn.weight.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4
    assert bn.running_var.tolist() == [1.0] * 4 and bn.running_mean.tolist() == [0.0] * 4
    assert bn.num_batches_tracked.dtype is dtypes.long
    top, _, _ = _stats(nn.LSTMCell(4, 25).weight_hh)
    assert 0.19 < top <= 0.2


def test_parameters_never_share_buffers() -> None:
    a, b = nn.LayerNorm(3), nn.LayerNorm(3)
    assert a.bias is not None and b.bias is not None
    Tensor.realize(a.bias, b.bias)
    a.bias.assign(Tensor([1.0, 2.0, 3.0])).realize()
    assert b.bias.tolist() == [0.0, 0.0, 0.0]
    assert a.bias.tolist() == [1.0, 2.0, 3.0]
    Tensor.manual_seed(1)
    w1 = nn.Linear(2, 2).weight
    Tensor.manual_seed(1)
    w2 = nn.Linear(2, 2).weight
    assert w1.uop is not w2.uop and w1.tolist() == w2.tolist()
