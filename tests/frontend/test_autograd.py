# ruff: noqa: E501  (parametrize tables read best one case per line)
"""Autograd vs PyTorch: every differentiable method group, ties, pow at 0, accumulation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from fusegrad import Tensor
from reference import rand_np

torch = pytest.importorskip("torch")


def check_grad(fn_fg: Callable, fn_t: Callable, *arrays: np.ndarray, atol: float = 1e-4) -> None:
    ins = [Tensor(a, requires_grad=True) for a in arrays]
    tins = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn_fg(*ins)
    tout = fn_t(*tins)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=atol, rtol=1e-4)
    seed = rand_np(tuple(tout.shape), np.float32, 0.5, 1.5)
    out.backward(Tensor(seed))
    tout.backward(torch.tensor(seed))
    for t, tt in zip(ins, tins, strict=True):
        want = tt.grad.numpy() if tt.grad is not None else np.zeros(tt.shape, np.float32)
        assert t.grad is not None
        np.testing.assert_allclose(t.grad.numpy(), want, atol=atol, rtol=1e-3)


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "reciprocal", "square",
         "exp2", "log2", "rsqrt", "atan", "asin", "erf", "softplus", "silu", "elu", "mish", "sign", "floor"]  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
def test_unary_grads(name: str) -> None:
    x = rand_np((3, 4), np.float32, 0.1, 0.9)
    tname = {
        "softplus": "nn.functional.softplus",
        "silu": "nn.functional.silu",
        "elu": "nn.functional.elu",
        "mish": "nn.functional.mish",
    }.get(name, name)
    fn = torch
    for part in tname.split("."):
        fn = getattr(fn, part)
    check_grad(lambda a: getattr(a, name)(), fn, x, atol=2e-4)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
def test_binary_grads_with_broadcast(name: str) -> None:
    a, b = rand_np((2, 3), np.float32, 0.5, 2), rand_np((3,), np.float32, 0.5, 2)
    check_grad(lambda x, y: getattr(x, name)(y), getattr(torch, name), a, b)


def test_max_ties_split_like_torch() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dtype=np.float32)
    check_grad(lambda a: a.max(), lambda a: a.max(), x)
    check_grad(lambda a: a.max(1), lambda a: a.amax(1), x)
    check_grad(lambda a: a.min(0), lambda a: a.amin(0), x)
    check_grad(lambda a, b: a.maximum(b), torch.maximum, x, x.copy())


def test_pow_at_zero_like_torch() -> None:
    base = np.array([0.0, 0.0, 2.0, 0.0], dtype=np.float32)
    exp = np.array([0.0, 2.0, 0.0, 0.5], dtype=np.float32)
    check_grad(lambda a, b: a**b, lambda a, b: a**b, base, exp)
    check_grad(lambda a: a**2, lambda a: a**2, base)
    check_grad(lambda a: a**0, lambda a: a**0, base)


RNG_PERM = np.random.default_rng(7).permutation(24)


@pytest.mark.parametrize("axis", [None, 0, (1, 2)])
def test_reduction_grads(axis) -> None:  # type: ignore[no-untyped-def]
    x = rand_np((2, 3, 4), np.float32, 0.5, 1.5)
    dims = axis if axis is not None else (0, 1, 2)
    check_grad(lambda a: a.sum(axis), lambda a: a.sum(dims), x)
    check_grad(lambda a: a.mean(axis), lambda a: a.mean(dims), x)
    check_grad(lambda a: a.var(axis), lambda a: a.var(dims), x)
    # std's gradient is (x - mean) / ((n - 1) * std): ill-conditioned where a reduced group's
    # values nearly coincide (random draws made float32 rounding differ by 1%), so std is checked
    # on values spread apart within every group
    spread = np.linspace(0.5, 1.5, 24, dtype=np.float32)[RNG_PERM].reshape(2, 3, 4)
    check_grad(lambda a: a.std(axis, keepdim=True), lambda a: a.std(dims, keepdim=True), spread)
    check_grad(lambda a: a.logsumexp(axis), lambda a: a.logsumexp(dims), x)


def test_prod_grad_with_zeros() -> None:
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 4.0]], dtype=np.float32)
    check_grad(lambda a: a.prod(1), lambda a: a.prod(1), x)


def test_softmax_family_grads() -> None:
    x = rand_np((3, 5), np.float32)
    check_grad(lambda a: a.softmax(1), lambda a: a.softmax(1), x)
    check_grad(lambda a: a.log_softmax(0), lambda a: a.log_softmax(0), x)
    check_grad(lambda a: a.cumsum(1), lambda a: a.cumsum(1), x)


def test_movement_grads() -> None:
    x = rand_np((2, 3, 4), np.float32)
    check_grad(
        lambda a: a.permute(2, 0, 1).reshape(4, 6), lambda a: a.permute(2, 0, 1).reshape(4, 6), x
    )
    check_grad(lambda a: a[:, :1].expand(2, 5, 4), lambda a: a[:, :1].expand(2, 5, 4), x)
    check_grad(lambda a: a.pad((1, 2, 0, 1)), lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1)), x)
    check_grad(
        lambda a: a.pad((1, 2), mode="reflect"),
        lambda a: torch.nn.functional.pad(a, (1, 2), mode="reflect"),
        x,
    )
    check_grad(lambda a: a.flip(1)[:, ::2, 1:3], lambda a: a.flip(1)[:, ::2, 1:3], x)
    check_grad(lambda a: a.cat(a * 2, dim=1), lambda a: torch.cat([a, a * 2], 1), x)
    check_grad(lambda a: a.transpose(0, 2).flatten(), lambda a: a.transpose(0, 2).flatten(), x)


def test_where_and_indexing_grads() -> None:
    x = rand_np((4, 3), np.float32)
    m = x > 0
    check_grad(
        lambda a: Tensor(m).where(a, a * 3), lambda a: torch.where(torch.tensor(m), a, a * 3), x
    )
    check_grad(lambda a: a[[0, 2, 2], 1:], lambda a: a[[0, 2, 2], 1:], x)
    idx = np.array([[0, 2], [1, 1], [2, 0], [1, 0]])
    check_grad(lambda a: a.gather(1, Tensor(idx)), lambda a: a.gather(1, torch.tensor(idx)), x)


def test_setitem_grad_flows_to_value_and_rest() -> None:
    x = rand_np((3, 4), np.float32)
    v = rand_np((2,), np.float32)

    def fg(a: Tensor, b: Tensor) -> Tensor:
        c = a * 1
        c[1, 1:3] = b * 2
        return c * c

    def tt(a, b):  # type: ignore[no-untyped-def]
        c = a * 1
        c[1, 1:3] = b * 2
        return c * c

    check_grad(fg, tt, x, v)


def test_matmul_and_conv_grads() -> None:
    a, b = rand_np((2, 3, 4), np.float32), rand_np((4, 5), np.float32)
    check_grad(lambda x, y: x @ y, lambda x, y: x @ y, a, b)
    x, w, bias = (
        rand_np((1, 2, 5, 5), np.float32),
        rand_np((4, 2, 3, 3), np.float32),
        rand_np((4,), np.float32),
    )
    F = torch.nn.functional
    check_grad(
        lambda i, k, c: i.conv2d(k, c, stride=2, padding=1),
        lambda i, k, c: F.conv2d(i, k, c, stride=2, padding=1),
        x,
        w,
        bias,
    )
    check_grad(lambda i: i.max_pool2d(), lambda i: F.max_pool2d(i, 2), x[:, :, :4, :4])
    check_grad(lambda i: i.avg_pool2d(), lambda i: F.avg_pool2d(i, 2), x[:, :, :4, :4])


def test_loss_grads() -> None:
    logits = rand_np((4, 5), np.float32)
    y = np.array([1, 0, 4, 2])
    F = torch.nn.functional
    check_grad(
        lambda a: a.sparse_categorical_crossentropy(Tensor(y)),
        lambda a: F.cross_entropy(a, torch.tensor(y)),
        logits,
    )
    check_grad(
        lambda a: a.cross_entropy(Tensor(y)), lambda a: F.cross_entropy(a, torch.tensor(y)), logits
    )


def test_grad_accumulates_and_detach_stops() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [5.0, 7.0]
    y = Tensor([1.0, 2.0], requires_grad=True)
    (y.detach() * y).sum().backward()
    assert y.grad is not None and y.grad.tolist() == [1.0, 2.0]


def test_gradient_of_targets_and_errors() -> None:
    x = Tensor([1.0, 2.0, 3.0])
    y = Tensor([4.0, 5.0, 6.0])
    gx, gy = (x * y).sum().gradient(x, y)
    assert gx.tolist() == [4.0, 5.0, 6.0] and gy.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="scalar outputs"):
        Tensor([1.0, 2.0], requires_grad=True).mul(2).backward()
    (z,) = (x * 2).sum().gradient(Tensor([1.0]))  # tinygrad: an unused target gets zeros
    assert z.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="not have been used"):
        (x * 2).sum().gradient(Tensor([1.0]), materialize_grads=False)


def test_backward_after_realize_keeps_graph() -> None:
    w = Tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    assert loss.item() == 5.0
    loss.backward()
    assert w.grad is not None and w.grad.tolist() == [2.0, 4.0]
