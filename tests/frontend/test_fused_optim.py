"""Optimizer updates as few kernels: with ``fused=True`` the whole update (parameters and their
state) is one kernel, plus one for Adam's bias-correction scalars; without it, one kernel per
parameter shape. The parameters after several steps equal PyTorch's, plain and under TinyJit."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fusegrad import TinyJit, nn
from fusegrad.engine import GlobalCounters
from fusegrad.tensor import Tensor

pytestmark = pytest.mark.kernels

SIZES = (4, 8, 8, 3)  # two hidden layers of one width: the biases share a shape
STEPS = 4
LR = 0.01


@pytest.fixture(autouse=True)
def _training() -> Iterator[None]:
    Tensor.training = True
    try:
        yield
    finally:
        Tensor.training = False


def _init() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    out = []
    for a, b in itertools.pairwise(SIZES):
        out += [
            rng.standard_normal((b, a)).astype(np.float32) * 0.5,
            rng.standard_normal(b).astype(np.float32) * 0.1,
        ]
    return out


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(6)
    return rng.standard_normal((16, SIZES[0])).astype(np.float32), rng.integers(0, 3, 16)


def _torch_params(opt_name: str) -> list[np.ndarray]:
    torch = pytest.importorskip("torch")
    params = [torch.tensor(a, requires_grad=True) for a in _init()]
    xs, ys = _data()
    x, y = torch.from_numpy(xs), torch.from_numpy(ys.astype(np.int64))
    opts: dict[str, Any] = {
        "SGD": lambda: torch.optim.SGD(params, lr=LR, momentum=0.9),
        "Adam": lambda: torch.optim.Adam(params, lr=LR),
        "AdamW": lambda: torch.optim.AdamW(params, lr=LR, weight_decay=0.1),
    }
    opt = opts[opt_name]()
    for _ in range(STEPS):
        opt.zero_grad()
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i].T + params[i + 1]
            h = h.relu() if i + 2 < len(params) else h
        torch.nn.functional.cross_entropy(h, y).backward()
        opt.step()
    return [p.detach().numpy() for p in params]


def _optimizer(opt_name: str, params: list[Tensor], fused: bool) -> nn.optim.Optimizer:
    if opt_name == "SGD":
        return nn.optim.SGD(params, lr=LR, momentum=0.9, fused=fused)
    if opt_name == "AdamW":
        return nn.optim.AdamW(params, lr=LR, weight_decay=0.1, fused=fused)
    return nn.optim.Adam(params, lr=LR, fused=fused)


def _fusegrad_run(opt_name: str, fused: bool, jit: bool) -> tuple[list[np.ndarray], int]:
    """The parameters after STEPS steps, and the kernels of the last step's update alone."""
    params = [Tensor(a, requires_grad=True) for a in _init()]
    opt = _optimizer(opt_name, params, fused)
    xs, ys = _data()
    x, y = Tensor(xs), Tensor(ys.astype(np.int32))

    def loss() -> Tensor:
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i].T + params[i + 1]
            h = h.relu() if i + 2 < len(params) else h
        return h.sparse_categorical_crossentropy(y)

    def step() -> Tensor:
        opt.zero_grad()
        out = loss()
        out.backward()
        Tensor.realize(out, *[p.grad for p in params if p.grad is not None])
        opt.step()
        return out

    run = TinyJit(step) if jit else step
    for _ in range(STEPS - 1):
        run()
    # the last step by hand: the gradients first, then the update's kernels alone
    opt.zero_grad()
    loss().backward()
    Tensor.realize(*[p.grad for p in params if p.grad is not None])
    GlobalCounters.reset()
    opt.step()
    kernels = GlobalCounters.kernel_count
    return [p.numpy() for p in params], kernels


# shapes: (8, 4), (8,) twice, (8, 8), (3, 8), (3,): five update loops
UPDATE_KERNELS = {
    ("SGD", True): 1,
    ("Adam", True): 2,  # + the two bias-correction scalars, one kernel
    ("AdamW", True): 2,
    ("SGD", False): 5,
    ("Adam", False): 6,
    ("AdamW", False): 6,
}


@pytest.mark.parametrize("jit", [False, True], ids=["plain", "jit"])
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW"])
def test_update_kernels_and_values_equal_pytorch(opt_name: str, fused: bool, jit: bool) -> None:
    want = _torch_params(opt_name)
    got, kernels = _fusegrad_run(opt_name, fused, jit)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    assert kernels == UPDATE_KERNELS[(opt_name, fused)]


def test_fused_update_is_one_kernel_however_many_parameters() -> None:
    rng = np.random.default_rng(0)
    params = [
        Tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
        for n in (3, 5, 7, 9, 11, 13)
    ]
    opt = nn.optim.Adam(params, lr=LR, fused=True)
    for _ in range(2):
        opt.zero_grad()
        sum(((p * p).sum() for p in params), Tensor(0.0)).backward()
        Tensor.realize(*[p.grad for p in params if p.grad is not None])
        GlobalCounters.reset()
        opt.step()
    assert GlobalCounters.kernel_count == 2
