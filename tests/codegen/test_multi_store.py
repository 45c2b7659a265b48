"""Multi-output kernels: the scheduler's merge stage (``schedule/order.py``) puts the stores of
several outputs over one iteration space into one kernel, assigns included, and keeps apart
what one loop can't compute right (a read at another index, an intermediate, a matmul).

Each case builds tensors through the frontend, counts the kernels and STOREs of its schedule,
then realizes it on the CPU and compares every value with NumPy."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fusegrad.codegen.schedule import get_kernel_graph
from fusegrad.codegen.schedule.recompute import PAD_MIN_SIZE
from fusegrad.engine import GlobalCounters
from fusegrad.tensor import Tensor
from fusegrad.uop import Ops, UOp


@pytest.fixture(autouse=True)
def _training() -> Iterator[None]:
    Tensor.training = True
    try:
        yield
    finally:
        Tensor.training = False


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _stores(tensors: list[Tensor]) -> list[int]:
    """The number of STOREs of each kernel scheduling ``tensors`` together takes."""
    kg = get_kernel_graph(UOp.sink(*(t.uop for t in tensors)), cache=None)
    return [sum(u.op is Ops.STORE for u in k.src[0].toposort()) for k in kg.kernels]


def test_adam_like_update_is_one_kernel_with_three_stores() -> None:
    p0, m0, v0, g0 = (_rand(6, 5, seed=s) for s in range(4))
    p, m, v, g = (Tensor(a).realize() for a in (p0, m0, v0, g0))
    m.assign(0.9 * m + 0.1 * g)
    v.assign(0.99 * v + 0.01 * g * g)
    p.assign(p - 0.1 * m / (v.abs().sqrt() + 1e-3))  # reads the new m and v
    assert _stores([p, m, v]) == [3]
    GlobalCounters.reset()
    Tensor.realize(p, m, v)
    assert GlobalCounters.kernel_count == 1
    m1 = 0.9 * m0 + 0.1 * g0
    v1 = 0.99 * v0 + 0.01 * g0 * g0
    np.testing.assert_allclose(m.numpy(), m1, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), v1, rtol=1e-6)
    np.testing.assert_allclose(p.numpy(), p0 - 0.1 * m1 / (np.sqrt(np.abs(v1)) + 1e-3), rtol=1e-5)


def test_outputs_of_one_shape_share_a_kernel() -> None:
    a0, b0 = _rand(8, 3), _rand(8, 3, seed=1)
    a, b = Tensor(a0).realize(), Tensor(b0).realize()
    outs = [a + b, a * b, (a - b).exp()]
    assert _stores(outs) == [3]
    Tensor.realize(*outs)
    for got, want in zip(outs, (a0 + b0, a0 * b0, np.exp(a0 - b0)), strict=True):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_reader_of_an_assign_at_another_index_stays_apart() -> None:
    m0, p0 = _rand(7), _rand(7, seed=1)
    m, p = Tensor(m0).realize(), Tensor(p0).realize()
    m.assign(m * 2.0)
    p.assign(p + m.flip(0))  # the new m, reversed: one loop would read it before its store
    assert sorted(_stores([m, p])) == [1, 1]
    Tensor.realize(m, p)
    np.testing.assert_allclose(m.numpy(), m0 * 2, rtol=1e-6)
    np.testing.assert_allclose(p.numpy(), p0 + (m0 * 2)[::-1], rtol=1e-6)


def test_assign_reading_its_buffer_at_another_index_stays_apart() -> None:
    a0, b0 = _rand(6), _rand(6, seed=1)
    a, b = Tensor(a0).realize(), Tensor(b0).realize()
    out = a * 3.0
    b.assign(a.flip(0) + b)  # reads a reversed: fine, b is what it stores
    a.assign(a + 1.0)  # overwrites a, which out and b's update read at other indices
    Tensor.realize(out, b, a)
    np.testing.assert_allclose(out.numpy(), a0 * 3, rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), a0[::-1] + b0, rtol=1e-6)
    np.testing.assert_allclose(a.numpy(), a0 + 1, rtol=1e-6)


def test_intermediate_is_not_merged_into_its_reader() -> None:
    x0 = _rand(5)
    x = Tensor(x0).realize()
    y = ((x + 1.0).contiguous() * 2.0).contiguous() - 3.0
    assert _stores([y]) == [1, 1, 1]  # merged, each buffer would be stored and never read
    np.testing.assert_allclose(y.numpy(), (x0 + 1) * 2 - 3, rtol=1e-6)


def test_matmul_keeps_its_own_kernel() -> None:
    a0, b0 = _rand(16, 16), _rand(16, 16, seed=1)
    a, b = Tensor(a0).realize(), Tensor(b0).realize()
    outs = [a @ b, a + b]  # same shape, but the matmul keeps its one STORE for tiling
    assert sorted(_stores(outs)) == [1, 1]
    Tensor.realize(*outs)
    np.testing.assert_allclose(outs[0].numpy(), a0 @ b0, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs[1].numpy(), a0 + b0, rtol=1e-6)


def test_matmuls_of_one_input_stay_apart() -> None:
    x0, a0, b0 = _rand(8, 16), _rand(16, 16, seed=1), _rand(16, 16, seed=2)
    x, a, b = (Tensor(v).realize() for v in (x0, a0, b0))
    outs = [x @ a, x @ b, x.sum(1), x.max(1)]  # the two sums of x share a kernel
    assert sorted(_stores(outs)) == [1, 1, 2]
    Tensor.realize(*outs)
    for got, want in zip(outs, (x0 @ a0, x0 @ b0, x0.sum(1), x0.max(1)), strict=True):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


def test_concatenated_reductions_get_kernels_of_their_own() -> None:
    n = PAD_MIN_SIZE  # the concatenation is large enough
    xs = [_rand(8, n // 8, seed=s) for s in range(3)]
    ts = [Tensor(x).realize() for x in xs]
    flat = Tensor.cat(*(t.sum(0) for t in ts), (ts[0] * 2.0).flatten())
    # the three reductions (one shape, one dependency level: one kernel), then the copy
    assert _stores([flat]) == [3, 1]
    np.testing.assert_allclose(
        flat.numpy(), np.concatenate([x.sum(0) for x in xs] + [xs[0].reshape(-1) * 2]), rtol=1e-5
    )


def test_small_concatenation_of_reductions_stays_one_kernel() -> None:
    xs = [_rand(4, 4, seed=s) for s in range(2)]
    ts = [Tensor(x).realize() for x in xs]
    pair = Tensor.cat(ts[0].sum().reshape(1), ts[1].max().reshape(1))
    assert _stores([pair]) == [1]
    np.testing.assert_allclose(pair.numpy(), [xs[0].sum(), xs[1].max()], rtol=1e-5)
