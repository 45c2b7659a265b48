"""Autograd through real kernels: a small MLP's loss and gradients against PyTorch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from e2e_support import assert_close
from fusegrad import Tensor


def test_mlp_backward_matches_torch(target: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x = rng.normal(size=(6, 5)).astype(np.float32)
    w1 = rng.normal(size=(5, 8)).astype(np.float32) * 0.5
    b1 = rng.normal(size=(8,)).astype(np.float32) * 0.1
    w2 = rng.normal(size=(8, 3)).astype(np.float32) * 0.5
    labels = np.array([0, 2, 1, 1, 0, 2])

    params = [Tensor(p, requires_grad=True) for p in (w1, b1, w2)]
    h = (Tensor(x) @ params[0] + params[1]).relu()
    loss = (h @ params[2]).log_softmax(1)[np.arange(6), labels].mean().neg()
    loss.backward()

    tp = [torch.tensor(p, requires_grad=True) for p in (w1, b1, w2)]
    th = torch.relu(torch.tensor(x) @ tp[0] + tp[1])
    tloss = torch.nn.functional.cross_entropy(th @ tp[2], torch.tensor(labels))
    tloss.backward()

    assert_close(loss, np.float32(tloss.item()), atol=1e-5)
    for mine, ref in zip(params, tp, strict=True):
        assert mine.grad is not None and ref.grad is not None
        assert_close(mine.grad, ref.grad.numpy(), atol=1e-5)


def test_sgd_steps_reduce_the_loss() -> None:
    rng = np.random.default_rng(5)
    x = Tensor(rng.normal(size=(16, 4)).astype(np.float32))
    y = Tensor(rng.normal(size=(16, 1)).astype(np.float32))
    w = Tensor(np.zeros((4, 1), np.float32), requires_grad=True)
    losses = []
    for _ in range(5):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        assert w.grad is not None
        w.assign((w - w.grad * 0.1).detach())
        w.grad = None
        losses.append(loss.item())
    assert all(b < a for a, b in itertools.pairwise(losses)), losses
