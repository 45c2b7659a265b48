"""assign on a tensor that needs grad writes its buffer (as in tinygrad and PyTorch's no_grad
update), so a hand-written SGD step works eagerly and under TinyJit; gradients flow through
an assign to the assigned value."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor, TinyJit


def _manual_sgd(jit: bool) -> list[float]:
    w = Tensor(np.ones(4, np.float32), requires_grad=True)

    def step(x: Tensor) -> Tensor:
        loss = (w * x).sum()
        loss.backward()
        assert w.grad is not None
        w.assign(w - 0.1 * w.grad).realize()
        w.grad = None
        return loss

    fn = TinyJit(step) if jit else step
    seen = []
    for _ in range(5):
        fn(Tensor(np.full(4, 1.0, np.float32)))
        seen.append(float(w.numpy()[0]))
    return seen


@pytest.mark.parametrize("jit", [False, True])
def test_manual_sgd_step_writes_the_parameter(jit: bool) -> None:
    np.testing.assert_allclose(_manual_sgd(jit), [0.9, 0.8, 0.7, 0.6, 0.5], rtol=1e-5)


def test_assign_keeps_the_buffer_of_a_tensor_that_needs_grad() -> None:
    w = Tensor(np.ones(3, np.float32), requires_grad=True).realize()
    buffer = w.uop
    w.assign(w * 3).realize()
    np.testing.assert_array_equal(w.numpy(), [3, 3, 3])
    assert w.requires_grad is True and w.uop is buffer  # written in place, not rebound


def test_gradient_flows_through_an_assign_to_the_value() -> None:
    x = Tensor(np.arange(4, dtype=np.float32), requires_grad=True)
    h = Tensor.zeros(4).contiguous().realize()
    h.assign(x * x + 1.0)
    (h * 2.0).sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), 4.0 * np.arange(4, dtype=np.float32))
    np.testing.assert_allclose(h.numpy(), np.arange(4) ** 2 + 1.0)


def test_assign_into_an_expanded_view_that_needs_grad_raises() -> None:
    w = Tensor(np.ones((1, 3), np.float32), requires_grad=True).realize()
    with pytest.raises(RuntimeError, match="expanded or padded"):
        w.expand(2, 3).assign(Tensor.ones(2, 3))
