"""A view of a realized buffer (slice, reshape, permute, stride, expand...) stays a view when
it is realized or read: it keeps following the buffer's in-place updates (``assign``), like a
PyTorch view, with and without TinyJit, and reading it leaves no buffer behind."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import GlobalCounters, Tensor, TinyJit
from fusegrad.engine import is_buffer_view

BOTH = pytest.mark.parametrize(
    "engine", ["reference", pytest.param("kernels", marks=pytest.mark.kernels)]
)

View = Callable[[Any], Any]
VIEWS: dict[str, tuple[View, View]] = {  # name -> (on a Tensor, on a NumPy array)
    "slice": (lambda t: t[1:3], lambda a: a[1:3]),
    "row": (lambda t: t[2], lambda a: a[2]),
    "reshape": (lambda t: t.reshape(4, 3), lambda a: a.reshape(4, 3)),
    "permute": (lambda t: t.permute(1, 0), lambda a: a.transpose(1, 0)),
    "transpose_slice": (lambda t: t.T[1:3, ::2], lambda a: a.T[1:3, ::2]),
    "strided": (lambda t: t[::2, ::2], lambda a: a[::2, ::2]),
    "flip": (lambda t: t.flip(0), lambda a: a[::-1]),
    "expand": (lambda t: t[0:1].expand(5, 4), lambda a: np.broadcast_to(a[0:1], (5, 4))),
    "view_of_view": (
        lambda t: t[1:].reshape(8)[2:6].reshape(2, 2),
        lambda a: a[1:].reshape(8)[2:6].reshape(2, 2),
    ),
}


def _base() -> tuple[Tensor, np.ndarray[Any, Any]]:
    init = np.arange(12, dtype=np.float32).reshape(3, 4)
    return Tensor(init).contiguous().realize(), init


@BOTH
@pytest.mark.parametrize("name", list(VIEWS))
def test_view_follows_assign_to_base(engine: str, name: str) -> None:
    base, init = _base()
    on_tensor, on_array = VIEWS[name]
    view = on_tensor(base)
    np.testing.assert_array_equal(view.numpy(), on_array(init))
    assert is_buffer_view(view.uop)  # still a view after the read
    view.realize()
    assert view.is_realized and is_buffer_view(view.uop)
    base.assign(base * 0.5 + 1).realize()
    np.testing.assert_array_equal(view.numpy(), on_array(init * 0.5 + 1))
    base.assign(base - 3).realize()
    np.testing.assert_array_equal(view.numpy(), on_array(init * 0.5 - 2))


@BOTH
def test_view_used_in_computation_sees_new_values(engine: str) -> None:
    base, init = _base()
    view = base[:, 1:3]
    first = (view * 2).sum().numpy()
    view.realize()
    base.assign(base + 10).realize()
    second = (view * 2).sum().numpy()
    np.testing.assert_allclose(first, (init[:, 1:3] * 2).sum())
    np.testing.assert_allclose(second, ((init + 10)[:, 1:3] * 2).sum())


@BOTH
def test_assign_through_view_keeps_view(engine: str) -> None:
    base, init = _base()
    view = base[1:3, ::2]
    view.assign(Tensor(np.full((2, 2), 7, np.float32))).realize()
    init[1:3, ::2] = 7
    np.testing.assert_array_equal(base.numpy(), init)
    np.testing.assert_array_equal(view.numpy(), init[1:3, ::2])
    base.assign(base * 2).realize()  # the view written through still follows the base
    np.testing.assert_array_equal(view.numpy(), init[1:3, ::2] * 2)


@BOTH
def test_setitem_on_realized_view_writes_base(engine: str) -> None:
    base, init = _base()
    view = base[1]
    view.realize()
    view[2] = -1.0
    view.realize()
    init[1, 2] = -1
    np.testing.assert_array_equal(base.numpy(), init)
    np.testing.assert_array_equal(view.numpy(), init[1])


@BOTH
def test_realize_many_keeps_views(engine: str) -> None:
    base, init = _base()
    a, b, c = base[0], base.T, base + 1
    Tensor.realize(a, b, c)
    assert is_buffer_view(a.uop) and is_buffer_view(b.uop)
    base.assign(base * 3).realize()
    np.testing.assert_array_equal(a.numpy(), init[0] * 3)
    np.testing.assert_array_equal(b.numpy(), (init * 3).T)
    np.testing.assert_array_equal(c.numpy(), init + 1)  # computed before: keeps its value


def _train(jit: bool) -> list[np.ndarray[Any, Any]]:
    """Ten steps updating a parameter in place; a view of it is read between steps."""
    weight = Tensor(np.linspace(1, 2, 8, dtype=np.float32).reshape(2, 4)).contiguous().realize()
    views = [weight[0:1], weight[:, ::2], weight.T, weight.reshape(8)[3:5]]

    def step(x: Tensor) -> Tensor:
        loss = (weight * x).sum()
        weight.assign(weight * 0.5 + x * 0.25)
        return loss.realize(weight)

    run = TinyJit(step) if jit else step
    seen = []
    for i in range(10):
        x = Tensor(np.full((2, 4), i, np.float32)).contiguous().realize()
        seen.append(run(x).numpy())
        seen.extend(v.numpy() for v in views)
    return seen


@pytest.mark.kernels
def test_views_of_parameter_under_jit_match_eager() -> None:
    eager, jitted = _train(False), _train(True)
    assert len(eager) == len(jitted) == 50
    for e, j in zip(eager, jitted, strict=True):
        np.testing.assert_allclose(j, e, rtol=1e-6)
    assert not np.array_equal(eager[1], eager[-4])  # the views did change


@pytest.mark.kernels
def test_jit_returning_a_view_of_its_state() -> None:
    state = Tensor.zeros(6).contiguous().realize()

    @TinyJit
    def bump(x: Tensor) -> Tensor:
        state.assign(state + x)
        return state[2:4].realize(state)

    for i in range(1, 6):
        out = bump(Tensor(np.full(6, i, np.float32)).contiguous().realize())
        total = sum(range(1, i + 1))
        np.testing.assert_array_equal(out.numpy(), [total, total])
    state.assign(state * 0).realize()
    np.testing.assert_array_equal(out.numpy(), [0, 0])


@pytest.mark.kernels
def test_reading_views_leaves_no_buffers() -> None:
    base, _ = _base()
    views = [base[1:3], base.T, base[::2, ::3]]
    for _ in range(3):  # warm-up: kernels compiled, caches filled
        for v in views:
            v.numpy()
    gc.collect()
    before = GlobalCounters.mem_used
    for _ in range(30):
        for v in views:
            v.numpy()
            v.realize()
    gc.collect()
    assert GlobalCounters.mem_used <= before
    assert all(is_buffer_view(v.uop) for v in views)
