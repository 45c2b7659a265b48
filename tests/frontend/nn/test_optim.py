"""fusegrad.nn.optim: a few steps on one model equal torch.optim (SGD, Adam, AdamW) and NumPy
references written from the papers (LARS, LAMB, Muon); the Optimizer API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, nn
from fusegrad.nn import optim
from reference import assert_close, rand_np

STEPS = 3


@pytest.fixture(autouse=True)
def _training() -> Iterator[None]:
    Tensor.training = True
    yield
    Tensor.training = False


def make_data() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    weights = {
        "w1": rng.normal(0, 0.5, (6, 4)).astype(np.float32),
        "b1": rng.normal(0, 0.1, (6,)).astype(np.float32),
        "w2": rng.normal(0, 0.5, (3, 6)).astype(np.float32),
        "b2": rng.normal(0, 0.1, (3,)).astype(np.float32),
    }
    return (
        weights,
        rng.normal(size=(8, 4)).astype(np.float32),
        rng.normal(size=(8, 3)).astype(np.float32),
    )


class Model:
    """Linear-tanh-Linear with given weights."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.l1, self.l2 = nn.Linear(4, 6), nn.Linear(6, 3)
        self.l1.weight, self.l1.bias = Tensor(weights["w1"]), Tensor(weights["b1"])
        self.l2.weight, self.l2.bias = Tensor(weights["w2"]), Tensor(weights["b2"])

    def params(self) -> list[Tensor]:
        return [self.l1.weight, self.l1.bias, self.l2.weight, self.l2.bias]

    def loss(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.l2(self.l1(x).tanh()) - y).square().mean()


def run_fusegrad(
    make_opt: Callable[[list[Tensor]], optim.Optimizer], only_matrices: bool = False
) -> list[np.ndarray]:
    weights, x, y = make_data()
    model = Model(weights)
    params = model.params()
    opt = make_opt([params[0], params[2]] if only_matrices else params)
    for _ in range(STEPS):
        opt.zero_grad()
        model.loss(Tensor(x), Tensor(y)).backward()
        opt.step()
    return [p.numpy() for p in params]


def run_torch(make_opt: Callable[[list[Any]], Any]) -> list[np.ndarray]:
    torch = pytest.importorskip("torch")
    weights, x, y = make_data()
    params = [torch.tensor(weights[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")]
    opt = make_opt(params)
    for _ in range(STEPS):
        opt.zero_grad()
        h = torch.tanh(torch.tensor(x) @ params[0].T + params[1])
        ((h @ params[2].T + params[3] - torch.tensor(y)) ** 2).mean().backward()
        opt.step()
    return [p.detach().numpy() for p in params]


CASES = {
    "sgd": (lambda p: optim.SGD(p, lr=0.1), "SGD", {"lr": 0.1}),
    "sgd_momentum_wd": (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01), "SGD",
                        {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    "sgd_nesterov": (lambda p: optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True), "SGD",
                     {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    "adam": (lambda p: optim.Adam(p, lr=0.01), "Adam", {"lr": 0.01}),
    "adam_betas": (lambda p: optim.Adam(p, lr=0.02, b1=0.8, b2=0.99, eps=1e-6), "Adam",
                   {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6}),
    "adamw": (lambda p: optim.AdamW(p, lr=0.01, weight_decay=0.1), "AdamW", {"lr": 0.01, "weight_decay": 0.1}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch_optim(case: str) -> None:
    torch = pytest.importorskip("torch")
    ours, name, kw = CASES[case]
    got = run_fusegrad(ours)
    want = run_torch(lambda p: getattr(torch.optim, name)(p, **kw))
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, atol=2e-6, rtol=1e-5)


# -- NumPy references from the papers' definitions ------------------------------------------------


def numpy_grads(w: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Gradients of mean((tanh(x W1^T + b1) W2^T + b2 - y)^2)."""
    h = np.tanh(x @ w[0].T + w[1])
    out = h @ w[2].T + w[3]
    d_out = 2 * (out - y) / out.size
    d_h = (d_out @ w[2]) * (1 - h * h)
    return [d_h.T @ x, d_h.sum(0), d_out.T @ h, d_out.sum(0)]


def run_numpy(
    update: Callable[[int, int, np.ndarray, np.ndarray], np.ndarray], only_matrices: bool = False
) -> list[np.ndarray]:
    weights, x, y = make_data()
    w = [weights[k].astype(np.float64) for k in ("w1", "b1", "w2", "b2")]
    for step in range(1, STEPS + 1):
        grads = numpy_grads(w, x.astype(np.float64), y.astype(np.float64))
        for i in range(4):
            if not only_matrices or i in (0, 2):
                w[i] = update(step, i, w[i], grads[i])
    return w


def lars_reference(lr: float, momentum: float, wd: float, eta: float) -> Callable[..., np.ndarray]:
    """LARS (You, Gitman, Ginsburg 2017, Alg. 1): local lr = eta ||w|| / (||g|| + wd ||w||),
    v = m v + lr * local_lr * (g + wd w), w = w - v."""
    v: dict[int, np.ndarray] = {}

    def update(step: int, i: int, w: np.ndarray, g: np.ndarray) -> np.ndarray:
        wn, gn = np.linalg.norm(w), np.linalg.norm(g)
        local = eta * wn / (gn + wd * wn) if wn > 0 and gn > 0 else 1.0
        v[i] = momentum * v.get(i, 0) + lr * local * (g + wd * w)
        return w - v[i]

    return update


def lamb_reference(
    lr: float, b1: float, b2: float, eps: float, wd: float
) -> Callable[..., np.ndarray]:
    """LAMB (You et al. 2019, Alg. 2): Adam's bias-corrected ratio r = m^ / (sqrt(v^) + eps),
    update u = r + wd w, w = w - lr * ||w|| / ||u|| * u (ratio 1 when a norm is 0)."""
    m: dict[int, np.ndarray] = {}
    v: dict[int, np.ndarray] = {}

    def update(step: int, i: int, w: np.ndarray, g: np.ndarray) -> np.ndarray:
        m[i] = b1 * m.get(i, 0) + (1 - b1) * g
        v[i] = b2 * v.get(i, 0) + (1 - b2) * g * g
        u = (m[i] / (1 - b1**step)) / (np.sqrt(v[i] / (1 - b2**step)) + eps) + wd * w
        wn, un = np.linalg.norm(w), np.linalg.norm(u)
        ratio = wn / un if wn > 0 and un > 0 else 1.0
        return w - lr * ratio * u

    return update


def muon_reference(
    lr: float, momentum: float, wd: float, steps: int = 5
) -> Callable[..., np.ndarray]:
    """Muon (Jordan et al. 2024): b = m b + g, Nesterov g + m b, orthogonalized by the quintic
    Newton-Schulz iteration X <- aX + (bA + cA^2) X, A = X X^T, from X = G / ||G||_F (on the
    wide orientation); decoupled decay w (1 - lr wd); w = w - lr X."""
    a, b, c = 3.4445, -4.775, 2.0315
    buf: dict[int, np.ndarray] = {}

    def orthogonalize(gm: np.ndarray) -> np.ndarray:
        tall = gm.shape[0] > gm.shape[1]
        xm = gm.T if tall else gm
        xm = xm / (np.linalg.norm(xm) + 1e-7)
        for _ in range(steps):
            am = xm @ xm.T
            xm = a * xm + (b * am + c * am @ am) @ xm
        return xm.T if tall else xm

    def update(step: int, i: int, w: np.ndarray, g: np.ndarray) -> np.ndarray:
        buf[i] = momentum * buf.get(i, 0) + g
        return w * (1 - lr * wd) - lr * orthogonalize(g + momentum * buf[i])

    return update


def test_lars_matches_paper() -> None:
    got = run_fusegrad(lambda p: optim.LARS(p, lr=0.5, momentum=0.9, weight_decay=0.01, tcoef=0.02))
    want = run_numpy(lars_reference(0.5, 0.9, 0.01, 0.02))
    for g, w in zip(got, want, strict=True):
        assert_close(g, w.astype(np.float32), atol=2e-6, rtol=1e-5)


def test_lamb_matches_paper() -> None:
    got = run_fusegrad(lambda p: optim.LAMB(p, lr=0.05, weight_decay=0.01))
    want = run_numpy(lamb_reference(0.05, 0.9, 0.999, 1e-6, 0.01))
    for g, w in zip(got, want, strict=True):
        assert_close(g, w.astype(np.float32), atol=2e-6, rtol=1e-5)


def test_muon_matches_reference() -> None:
    got = run_fusegrad(lambda p: optim.Muon(p, lr=0.02, weight_decay=0.1), only_matrices=True)
    want = run_numpy(muon_reference(0.02, 0.95, 0.1), only_matrices=True)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w.astype(np.float32), atol=2e-5, rtol=1e-4)


def test_newton_schulz_orthogonalizes() -> None:
    g = Tensor(rand_np((4, 7)))
    x = optim.newton_schulz(g, 10, (3.4445, -4.775, 2.0315)).numpy()
    s = np.linalg.svd(x, compute_uv=False)
    assert np.all((s > 0.6) & (s < 1.25)), s  # the quintic converges to singular values ~0.7..1.2
    assert optim.newton_schulz(Tensor(rand_np((7, 4))), 2, (1.0,)).shape == (7, 4)


# -- the Optimizer API -----------------------------------------------------------------------------


def test_requires_training_and_params() -> None:
    w = Tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    w.sum().backward()
    Tensor.training = False
    with pytest.raises(RuntimeError, match=r"Tensor\.training"):
        opt.step()
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=1.0)


def test_step_updates_in_place_and_zero_grad() -> None:
    layer = nn.Linear(3, 2)
    opt = optim.SGD([layer.weight, layer.bias], lr=0.5)
    assert layer.weight.requires_grad and len(opt.params) == 2
    x = Tensor(rand_np((4, 3)))
    layer(x).sum().backward()
    assert layer.weight.grad is not None
    before, grad = layer.weight.numpy(), layer.weight.grad.numpy()
    opt.step()
    assert_close(layer.weight, before - 0.5 * grad, atol=1e-6)
    opt.zero_grad()
    assert layer.weight.grad is None
    layer(x).sum().backward()  # the updated weight is still the leaf autograd reaches
    assert layer.weight.grad is not None
    assert_close(layer.weight.grad, grad, atol=1e-6)


def test_lr_tensor_can_be_scheduled_and_grads_missing_are_skipped() -> None:
    a, b = Tensor([1.0], requires_grad=True), Tensor([5.0], requires_grad=True)
    opt = optim.SGD([a, b], lr=1.0)
    (a * 3).sum().backward()
    opt.lr.assign(Tensor([0.1])).realize()
    opt.step()
    assert_close(a, np.array([0.7], np.float32), atol=1e-6)
    assert b.tolist() == [5.0]


def test_buffers_are_realized_with_the_step() -> None:
    bn = nn.BatchNorm(2)
    w = Tensor([1.0, 1.0], requires_grad=True)
    opt = optim.Adam([w, bn.running_mean], lr=0.1)
    assert opt.buffers == [bn.running_mean]
    out = bn(Tensor(rand_np((4, 2))) * w)
    out.sum().backward()
    sched = opt.schedule_step()
    assert any(t is bn.running_mean for t in sched) and any(t is w for t in sched)
    Tensor.realize(*sched)
    assert bn.running_mean.is_realized and not np.allclose(bn.running_mean.numpy(), 0)


def test_optimizer_group_steps_all() -> None:
    a, b = (
        Tensor([1.0, 2.0], requires_grad=True),
        Tensor([[3.0, 1.0], [0.0, 2.0]], requires_grad=True),
    )
    group = optim.OptimizerGroup(optim.SGD([a], lr=0.1), optim.Muon([b], lr=0.1))
    assert group[0].params == [a] and group.params == [a, b]
    ((a * a).sum() + (b * b).sum()).backward()
    b_want = run_muon_once(b.numpy(), b.grad.numpy() if b.grad is not None else None)
    group.step()
    assert_close(a, np.array([0.8, 1.6], np.float32), atol=1e-6)
    assert_close(b, b_want, atol=1e-5)
    group.zero_grad()
    assert a.grad is None and b.grad is None


def run_muon_once(w: np.ndarray, g: Any) -> np.ndarray:
    update = muon_reference(0.1, 0.95, 0.0)
    return update(1, 0, w.astype(np.float64), g.astype(np.float64)).astype(np.float32)
