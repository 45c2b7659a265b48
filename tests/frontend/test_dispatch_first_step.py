"""A graph that performs initializers on the way (assigns of constants into buffers that hold
nothing yet: ``nn``'s fresh parameters, optimizer state) runs them first, in a schedule of
their own, so a training loop's first step schedules what every later step schedules and
the second step hits the schedule cache (issue #29)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fusegrad import Tensor, nn
from fusegrad.codegen.schedule import schedule_cache
from fusegrad.engine import REALIZED, buffer_of
from fusegrad.engine.realize import initializers
from fusegrad.nn.layers import fresh

pytestmark = pytest.mark.kernels


@pytest.fixture
def training() -> object:
    before = Tensor.training
    Tensor.training = True
    yield
    Tensor.training = before


def _misses_per_step(
    opt_name: str, steps: int, sizes: tuple[int, ...], fused: bool = False
) -> list[int]:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((8, sizes[0])).astype(np.float32)).realize()
    y = Tensor(rng.integers(0, sizes[-1], 8).astype(np.int32)).realize()
    layers = [nn.Linear(a, b) for a, b in itertools.pairwise(sizes)]
    params = [t for lin in layers for t in (lin.weight, lin.bias) if t is not None]
    opt = getattr(nn.optim, opt_name)(params, lr=1e-2, fused=fused)
    out = []
    for _ in range(steps):
        before = schedule_cache.misses
        opt.zero_grad()
        loss = layers[1](layers[0](x).relu()).sparse_categorical_crossentropy(y)
        loss.backward()
        Tensor.realize(loss, *[p.grad for p in params if p.grad is not None])
        opt.step()
        loss.item()
        out.append(schedule_cache.misses - before)
    return out


@pytest.mark.usefixtures("training")
# sizes apart per case: a graph another test scheduled would hit anyway
@pytest.mark.parametrize(
    ("opt_name", "sizes", "fused"),
    [("Adam", (12, 6, 3), False), ("SGD", (11, 5, 3), False), ("Adam", (13, 6, 3), True)],
)
def test_second_training_step_hits_the_schedule_cache(
    opt_name: str, sizes: tuple[int, ...], fused: bool
) -> None:
    misses = _misses_per_step(opt_name, 3, sizes, fused)
    assert misses[0] > 0
    assert misses[1:] == [0, 0]


def test_initializer_runs_first_and_the_reader_sees_its_value() -> None:
    p = fresh(Tensor.full((3,), 2.0))
    y = p * 5
    assert initializers([y.uop]) == [p.uop]
    np.testing.assert_array_equal(y.numpy(), [10.0, 10.0, 10.0])
    assert buffer_of(p.uop) is not None  # the parameter holds its buffer from now on
    np.testing.assert_array_equal(p.numpy(), [2.0, 2.0, 2.0])


def test_an_assign_into_a_buffer_with_data_is_no_initializer() -> None:
    a = Tensor(np.zeros(3, np.float32)).realize()
    a.assign(Tensor.ones(3))
    assert initializers([(a * 2).uop]) == []
    assert initializers([a.uop]) == []  # a target itself is never split off
    np.testing.assert_array_equal((a * 2).numpy(), [2.0, 2.0, 2.0])


def test_initializers_keep_the_values_autograd_remembers() -> None:
    w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = w * 2
    y.realize()
    assert y.uop in REALIZED
    p = fresh(Tensor.full((2,), 3.0))
    np.testing.assert_array_equal((p * y.detach()).numpy(), [6.0, 12.0])
    assert y.uop in REALIZED  # the initializer wrote a buffer nothing had read: y is kept
