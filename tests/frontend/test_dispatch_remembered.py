"""The dispatch fast path while values are remembered for autograd (``REALIZED`` not empty, as
in a training loop): it runs for graphs with no remembered part, and leaves the graphs that
hold one to the general path (which reads the remembered value instead of computing it)."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.engine import REALIZED, realize_one
from fusegrad.engine import realize as engine_realize

pytestmark = pytest.mark.kernels


def _warm(make: object) -> None:
    assert callable(make)
    for _ in range(2):  # the miss, then the template's plan
        make().realize()


def _remembered(w: Tensor) -> Tensor:
    y = w * 2
    y.realize()  # needs grad: its graph is kept, its value remembered
    assert y.uop in REALIZED
    return y


def test_fast_path_runs_while_a_grad_value_is_remembered() -> None:
    w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = _remembered(w)
    x = Tensor(np.array([3.0], np.float32)).realize()
    _warm(lambda: x + 1)
    view = realize_one((x + 1).uop)
    assert view is not None
    z = (x + 1).realize()
    np.testing.assert_array_equal(z.numpy(), [4.0])
    y.sum().backward()  # the remembered graph still serves autograd
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])


def test_graph_over_a_remembered_value_takes_the_general_path() -> None:
    w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = _remembered(w)
    _warm(lambda: y.detach() + 1)
    assert realize_one((y.detach() + 1).uop) is None
    np.testing.assert_array_equal((y.detach() + 1).realize().numpy(), [3.0, 5.0])


def test_a_value_remembered_later_is_seen() -> None:
    w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    _remembered(w)  # the table holds something
    a = w * 3
    u = (a.detach() + 1).uop
    assert engine_realize._unremembered(u)
    a.realize()  # now a part of ``u`` is remembered
    assert not engine_realize._unremembered(u)
    np.testing.assert_array_equal((a.detach() + 1).numpy(), [4.0, 7.0])
