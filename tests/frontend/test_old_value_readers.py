"""A realize that assigns into buffers first computes the live lazy tensors built on their old
values, so ``loss.backward(); opt.step(); loss.item()`` is the loss before the step (PyTorch's
eager order), plain and under TinyJit; checked against PyTorch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from fusegrad import Context, Tensor, TinyJit, nn

X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
Y = np.array([1, 3])


def _torch_losses(w0: np.ndarray, b0: np.ndarray, opt_name: str, steps: int) -> list[float]:
    lin = torch.nn.Linear(3, 4)
    lin.weight.data, lin.bias.data = torch.tensor(w0), torch.tensor(b0)
    opt: torch.optim.Optimizer = (
        torch.optim.SGD(lin.parameters(), lr=0.5)
        if opt_name == "SGD"
        else torch.optim.Adam(lin.parameters(), lr=0.1)
    )
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(lin(torch.tensor(X)), torch.tensor(Y))
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def _run(opt_name: str, how: str, steps: int = 4) -> tuple[list[float], list[float]]:
    Tensor.manual_seed(3)
    lin = nn.Linear(3, 4)
    w0, b0 = lin.weight.numpy().copy(), lin.bias.numpy().copy()
    params = [lin.weight, lin.bias]
    opt = nn.optim.SGD(params, lr=0.5) if opt_name == "SGD" else nn.optim.Adam(params, lr=0.1)
    x, y = Tensor(X).realize(), Tensor(Y).realize()

    def step() -> Tensor:
        opt.zero_grad()
        loss = lin(x).sparse_categorical_crossentropy(y)
        loss.backward()
        if how == "together":
            Tensor.realize(loss, *opt.schedule_step())
        else:
            opt.step()  # the loss is still lazy here
        return loss

    run: Callable[[], Tensor] = TinyJit(step) if how == "jit" else step
    got = []
    for _ in range(steps):
        got.append(run().item())
    return got, _torch_losses(w0, b0, opt_name, steps)


@pytest.mark.parametrize("how", ["after_step", "together", "jit"])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_loss_read_after_the_step_is_the_loss_before_it(opt_name: str, how: str) -> None:
    with Context(TRAINING=1):
        got, want = _run(opt_name, how)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_a_lazy_reader_of_the_old_value_is_realized_with_the_assign() -> None:
    w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True).realize()
    old = w * 10.0  # a result of the differentiated graph, built on the old value
    new = w.assign(w + 1.0) * 10.0  # reads through the assign: the new value
    w.realize()
    np.testing.assert_array_equal(old.numpy(), [10.0, 20.0])
    np.testing.assert_array_equal(new.numpy(), [20.0, 30.0])
    np.testing.assert_array_equal(w.numpy(), [2.0, 3.0])
