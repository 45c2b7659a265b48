"""The dispatch fast path of ``Tensor.realize`` (one plain tensor whose schedule is a cached
template: ``engine.realize_one``) gives what the general path gives: values, the graphs of
other live tensors rewritten to the buffer, autograd's remembered values, MultiTensors, and
the general path where it must run (DEBUG, grad, index checks, several targets)."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.engine import REALIZED, buffer_of, realize_one
from fusegrad.engine import realize as engine_realize
from fusegrad.tensor.multi import shard
from fusegrad.uop import Context, Ops

pytestmark = pytest.mark.kernels


def _warm(x: Tensor) -> None:
    for _ in range(2):  # the miss, then the template's plan
        (x + 1).realize()


def test_fast_path_runs_on_a_cached_template(monkeypatch: pytest.MonkeyPatch) -> None:
    # values other tests left remembered (live grad tensors) would send it the general way
    monkeypatch.setattr(engine_realize, "_REALIZED_ENTRIES", {})
    x = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    _warm(x)
    assert realize_one((x + 1).uop) is not None
    y = x + 1
    assert y.realize() is y and buffer_of(y.uop) is not None
    np.testing.assert_array_equal(y.numpy(), [2.0, 3.0])


def test_dependent_chain_matches_numpy() -> None:
    x = Tensor(np.zeros(3, np.float32)).realize()
    for _ in range(20):
        x = (x + 1).realize()
    np.testing.assert_array_equal(x.numpy(), np.full(3, 20.0, np.float32))


def test_other_live_tensors_read_the_buffer_afterwards() -> None:
    x = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    _warm(x)
    y = x + 1
    z = y * 2  # a live lazy tensor over y's node
    y.realize()
    y_buf = buffer_of(y.uop)
    assert y_buf is not None
    assert any(n is y_buf for n in z.uop.toposort())  # z reads y's buffer now
    assert not any(n.op is Ops.ADD for n in z.uop.toposort())
    np.testing.assert_array_equal(z.numpy(), [4.0, 6.0])


def test_grad_tensors_keep_their_graph() -> None:
    w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    _warm(w.detach().realize())
    y = w + 1
    y.realize()
    assert y.uop in REALIZED  # the general path: graph kept for autograd, value remembered
    y.sum().backward()
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


def test_debug_takes_the_general_path() -> None:
    x = Tensor(np.array([5.0], np.float32)).realize()
    _warm(x)
    with Context(DEBUG=1):
        assert realize_one((x + 1).uop) is None
        y = (x + 1).realize()
    np.testing.assert_array_equal(y.numpy(), [6.0])


def test_index_checks_still_raise() -> None:
    table = Tensor(np.arange(4, dtype=np.float32)).realize()
    for _ in range(2):
        table[Tensor([1, 2])].realize()
    with pytest.raises(IndexError):
        table[Tensor([1, 9])].realize()


def test_realize_of_one_multi_tensor() -> None:
    m = shard(Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)), ("CPU:0", "CPU:1"), axis=0)
    out = Tensor.realize(m * 10)
    assert out is not None
    np.testing.assert_array_equal((m * 10).numpy(), [[10.0, 20.0], [30.0, 40.0]])
