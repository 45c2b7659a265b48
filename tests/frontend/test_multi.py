"""Multi-device tensors (fusegrad.tensor.multi) across CPU:0 and CPU:1 against NumPy: shard
layouts, elementwise ops with cut operands, reductions with allreduce, matmul layouts,
gathering with to(), and a data-parallel training step equal to the single-device one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.nn.optim import SGD
from fusegrad.tensor.multi import MultiTensor, allreduce, shard, shard_, split_bounds

pytestmark = pytest.mark.kernels
DEVS = ("CPU:0", "CPU:1")
RNG = np.random.default_rng(11)


def _arr(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.normal(size=shape).astype(np.float32)


def _close(got: MultiTensor | Tensor, want: np.ndarray[Any, Any]) -> None:
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_shard_places_pieces_on_each_device() -> None:
    x = _arr(5, 3)
    m = shard(Tensor(x), DEVS, axis=0)
    assert m.device == ("CPU", "CPU:1") and m.axis == 0 and m.shape == (5, 3)
    assert [s.device for s in m.shards] == ["CPU", "CPU:1"]
    np.testing.assert_array_equal(m.shards[0].numpy(), x[:3])  # ceil split: 3 + 2
    np.testing.assert_array_equal(m.shards[1].numpy(), x[3:])
    r = shard(Tensor(x), DEVS)
    assert r.axis is None and all(s.shape == (5, 3) for s in r.shards)
    _close(m, x)
    _close(shard(Tensor(x), DEVS, axis=-1), x)
    assert split_bounds(5, 2) == [(0, 3), (3, 5)]


def test_bad_shards_raise() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        shard(Tensor(_arr(1, 4)), DEVS, axis=0)
    with pytest.raises(ValueError, match="out of range"):
        shard(Tensor(_arr(2, 4)), DEVS, axis=2)
    with pytest.raises(ValueError, match="distinct"):
        shard(Tensor(_arr(2, 4)), ("CPU", "CPU:0"))


@pytest.mark.parametrize("axis", [0, 1, None])
def test_elementwise_with_scalars_tensors_and_multis(axis: int | None) -> None:
    x, y, bias, col = _arr(4, 6), _arr(4, 6), _arr(6), _arr(4, 1)
    mx, my = shard(Tensor(x), DEVS, axis), shard(Tensor(y), DEVS, axis)
    _close((mx * 2 + 1).relu(), np.maximum(x * 2 + 1, 0))
    _close(1 - mx, 1 - x)
    _close(mx + Tensor(bias), x + bias)  # a plain Tensor is cut (or copied) per shard
    _close(mx * Tensor(col), x * col)
    _close(mx * my - shard(Tensor(y), DEVS, 0 if axis is None else None), x * y - y)
    _close(mx.exp().maximum(my), np.maximum(np.exp(x), y))
    _close(shard(Tensor(bias), DEVS) + mx, bias + x)  # replicated + split
    _close(shard(Tensor(bias), DEVS).maximum(mx), np.maximum(bias, x))


@pytest.mark.parametrize("axis", [0, 1])
def test_reductions_allreduce_over_the_split_axis(axis: int) -> None:
    x = _arr(4, 6)
    m = shard(Tensor(x), DEVS, axis)
    total = m.sum()
    assert total.axis is None and len(total.shards) == 2
    np.testing.assert_allclose([s.item() for s in total.shards], [x.sum()] * 2, rtol=1e-5)
    assert total.shards[0].item() == total.shards[1].item()  # replicas bitwise equal
    _close(m.sum(axis=axis), x.sum(axis=axis))
    _close(m.sum(axis=1 - axis), x.sum(axis=1 - axis))
    _close(m.mean(axis=axis, keepdim=True), x.mean(axis=axis, keepdims=True))
    _close(m.max(axis=axis), x.max(axis=axis))
    _close(m.min(), np.array(x.min()))
    _close(m.mean(), np.array(x.mean()))
    assert m.sum(axis=1 - axis).axis == 0  # the split dimension survives, renumbered
    assert m.sum(axis=1 - axis, keepdim=True).axis == axis


def test_matmul_layouts() -> None:
    a, b = _arr(6, 8), _arr(8, 4)
    rows = shard(Tensor(a), DEVS, axis=0) @ Tensor(b)
    assert rows.axis == 0
    _close(rows, a @ b)
    cols = shard(Tensor(a), DEVS) @ shard(Tensor(b), DEVS, axis=1)
    assert cols.axis == 1
    _close(cols, a @ b)
    inner = shard(Tensor(a), DEVS, axis=1) @ shard(Tensor(b), DEVS, axis=0)
    assert inner.axis is None  # partial products, allreduced
    _close(inner, a @ b)
    _close(shard(Tensor(a), DEVS, axis=0) @ shard(Tensor(b), DEVS, axis=1), a @ b)
    _close(shard(Tensor(a), DEVS, axis=1) @ Tensor(b), a @ b)
    batched = _arr(4, 3, 8)
    _close(shard(Tensor(batched), DEVS, axis=0).linear(Tensor(b), Tensor(b[0])), batched @ b + b[0])


def test_movement_keeps_or_moves_the_split() -> None:
    x = _arr(4, 6)
    m = shard(Tensor(x), DEVS, axis=0)
    assert m.T.axis == 1
    _close(m.T, x.T)
    _close(m.reshape(4, 2, 3), x.reshape(4, 2, 3))
    assert m.reshape(4, 2, 3).axis == 0
    assert m.reshape(1, 4, 6).axis == 1
    _close(m.reshape(24), x.reshape(24))  # the split can't survive: gathered, replicated
    _close(m.permute(1, 0).sum(axis=1), x.sum(axis=0))


def test_to_gathers_and_reshards() -> None:
    x = _arr(6, 2)
    m = shard(Tensor(x), DEVS, axis=0)
    one = m.to("CPU:1")
    assert isinstance(one, Tensor) and one.device == "CPU:1"
    np.testing.assert_array_equal(one.numpy(), x)
    again = m.to(("CPU:1", "CPU:0"))
    assert isinstance(again, MultiTensor) and again.device == ("CPU:1", "CPU")
    _close(again, x)
    moved = shard(m, DEVS, axis=1)
    assert moved.axis == 1 and moved.shards[0].shape == (6, 1)
    _close(moved, x)


def test_allreduce_ops_and_errors() -> None:
    parts = [Tensor(_arr(3), device=d) for d in DEVS]
    want = [p.numpy() for p in parts]
    for op, fold in (("sum", np.add), ("max", np.maximum), ("prod", np.multiply)):
        out = allreduce(parts, op)
        assert [o.device for o in out] == ["CPU", "CPU:1"]
        for o in out:
            np.testing.assert_allclose(o.numpy(), fold(*want), rtol=1e-6)
    with pytest.raises(ValueError, match="op must be"):
        allreduce(parts, "mean")
    with pytest.raises(ValueError, match="differ in shape"):
        allreduce([parts[0], Tensor(_arr(4), device="CPU:1")], "sum")


def _step(w0: np.ndarray[Any, Any], x: np.ndarray[Any, Any], y: np.ndarray[Any, Any],
          devices: tuple[str, ...] | None) -> tuple[float, np.ndarray[Any, Any]]:  # fmt: skip
    w = Tensor(w0, requires_grad=True)
    opt = SGD([w], lr=0.1)
    Tensor.training = True
    try:
        if devices is None:
            loss: Tensor | MultiTensor = ((Tensor(x) @ w).tanh() - Tensor(y)).square().mean()
        else:  # data parallel: batch split, weights replicated, loss allreduced
            xs, ys = shard(Tensor(x), devices, axis=0), shard(Tensor(y), devices, axis=0)
            loss = ((xs @ shard(w, devices)).tanh() - ys).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    finally:
        Tensor.training = False
    return float(loss.item()), w.numpy()


def test_data_parallel_step_equals_single_device() -> None:
    w0, x, y = _arr(5, 2), _arr(8, 5), _arr(8, 2)
    single = _step(w0, x, y, None)
    parallel = _step(w0, x, y, DEVS)
    np.testing.assert_allclose(parallel[0], single[0], rtol=1e-5)
    np.testing.assert_allclose(parallel[1], single[1], rtol=1e-5, atol=1e-6)
    assert not np.allclose(single[1], w0)


def test_shard_underscore_realizes_each_piece() -> None:
    x = _arr(4, 4)
    m = shard_(Tensor(x), DEVS, axis=1)
    assert all(s.uop.op.name in ("RESHAPE", "BUFFER") for s in m.shards)
    _close(m, x)


def test_tensor_methods_and_operators_reach_multitensor() -> None:
    x, y = _arr(4, 3), _arr(4, 3)
    m = Tensor(x).shard(DEVS, axis=0)
    assert isinstance(m, MultiTensor) and m.axis == 0
    assert isinstance(Tensor(x).shard_(DEVS), MultiTensor)
    # Tensor on the left defers to MultiTensor's reflected operators
    _close(Tensor(y) + m, y + x)
    _close(Tensor(y) - m, y - x)
    _close(Tensor(y) * m, y * x)
    _close(Tensor(y) / m, y / x)
    replicated = Tensor(x).to(DEVS)
    assert isinstance(replicated, MultiTensor) and replicated.axis is None
    _close(replicated, x)
    with pytest.raises(TypeError):
        _ = Tensor(y) < m  # no reflected comparison on MultiTensor: a clean TypeError
    a, b = Tensor(x) * 2, m * 3
    Tensor.realize(a, b)
    assert a.is_realized and all(s.is_realized for s in b.shards)
    np.testing.assert_allclose(b.numpy(), x * 3, rtol=1e-6)
