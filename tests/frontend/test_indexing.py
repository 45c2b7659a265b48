"""__getitem__/__setitem__ with NumPy semantics (incl. hypothesis vs NumPy), gather/scatter,
one_hot, masked_select, nonzero."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import assert_close, rand_np

X = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)

CASES = [
    (1,), (-1,), (slice(None, None, -1),), (slice(None), slice(1, None, 2)), (Ellipsis, -2),
    (None, 0, Ellipsis, None), (slice(5, 1, -2),), (0, 2, 3), (slice(None), [2, 0, 0]),
    ([1, 0],), ([[0], [1]], [1, 2]), ([1, 0], slice(None), [3, -1]), (slice(None), [0, 2], [1, 1]),
    (0, [0, 2], slice(1, 3)), ([True, False],), (slice(0, 0),), (Ellipsis,), (1, slice(None, None, -1), None),
    ([0, 1], None, [2, 0]), (np.array([[1, 0], [0, 1]]),),
]  # fmt: skip


@pytest.mark.parametrize("idx", CASES, ids=str)
def test_getitem_matches_numpy(idx: tuple) -> None:
    got = Tensor(X)[idx]
    want = X[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_getitem_with_tensor_indices_and_bool_mask() -> None:
    t = Tensor(X)
    np.testing.assert_array_equal(t[Tensor([1, 0, 1])].numpy(), X[[1, 0, 1]])
    mask = X % 3 == 0
    np.testing.assert_array_equal(t[Tensor(mask)].numpy(), X[mask])
    np.testing.assert_array_equal(t[:, Tensor([-1, 0])].numpy(), X[:, [-1, 0]])


def test_getitem_other_dtypes() -> None:
    b = rand_np((4, 3), np.bool_)
    np.testing.assert_array_equal(Tensor(b)[[0, 3], 1:].numpy(), b[[0, 3], 1:])
    h = rand_np((4, 3), np.float16)
    np.testing.assert_array_equal(Tensor(h)[::-2, [2, 0]].numpy(), h[::-2, [2, 0]])


def test_getitem_errors() -> None:
    t = Tensor(X)
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        t[2]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match="tensors used as indices"):
        t[Tensor([0.5])]
    with pytest.raises(ValueError, match="step cannot be zero"):
        t[::0]


@st.composite
def index_exprs(draw: st.DrawFn) -> tuple:
    shape = X.shape
    items: list = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "list", "none", "skip"]))
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0)))
            items.append(slice(start, stop, step))
        elif kind == "list":
            items.append(draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=3)))
        elif kind == "none":
            items.extend([None, slice(None)])
        else:
            break
    return tuple(items)


@settings(max_examples=60, deadline=None)
@given(index_exprs())
def test_getitem_property_vs_numpy(idx: tuple) -> None:
    lists = [i for i in idx if isinstance(i, list)]
    if len(lists) > 1 and len({len(v) for v in lists} - {1}) > 1:
        with pytest.raises((IndexError, ValueError, RuntimeError)):
            Tensor(X)[idx]
        return
    want = X[idx]
    got = Tensor(X)[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@settings(max_examples=40, deadline=None)
@given(index_exprs(), st.integers(-50, 50))
def test_setitem_property_vs_numpy(idx: tuple, value: int) -> None:
    lists = [i for i in idx if isinstance(i, list)]
    if len(lists) > 1 and len({len(v) for v in lists} - {1}) > 1:
        return
    if any(len(v) != len(set(np.array(v) % n)) for v in lists for n in (2, 3, 4)):
        return  # duplicate targets: NumPy's last-write-wins isn't specified by PyTorch
    want = X.copy()
    want[idx] = value
    t = Tensor(X.copy())
    t[idx] = value
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize(
    "idx",
    [(0,), (slice(None), 1), (Ellipsis, slice(1, 3)), (slice(None, None, -1), 0, slice(None, None, 2)),
     ([1, 0], 2), (slice(None), [0, 2], [1, 3]), (X % 2 == 0,)],
    ids=str,
)  # fmt: skip
def test_setitem_with_tensor_value(idx: tuple) -> None:
    want = X.copy()
    sub = want[idx]
    value = np.arange(sub.size, dtype=np.int32).reshape(sub.shape) + 100
    want[idx] = value
    t = Tensor(X.copy())
    t[tuple(Tensor(i) if isinstance(i, np.ndarray) else i for i in idx)] = Tensor(value)
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_casts_and_broadcasts_and_chains() -> None:
    t = Tensor.zeros(3, 4).contiguous().realize()
    t[1] = Tensor([1, 2, 3, 4])
    t[:, 0] = 9.5
    t[2, 1:3] += 1
    got = t.numpy()
    want = np.zeros((3, 4), np.float32)
    want[1] = [1, 2, 3, 4]
    want[:, 0] = 9.5
    want[2, 1:3] += 1
    np.testing.assert_array_equal(got, want)
    lazy = Tensor.arange(6).reshape(2, 3)
    lazy[0, 0] = 100
    assert lazy.tolist() == [[100, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_and_scatter_vs_torch(dim: int) -> None:
    torch = pytest.importorskip("torch")
    x = rand_np((3, 4), np.float32)
    idx = np.random.default_rng(dim + 5).integers(0, x.shape[dim], (2, 3)).astype(np.int64)
    assert_close(
        Tensor(x).gather(dim, Tensor(idx)), torch.gather(torch.tensor(x), dim, torch.tensor(idx))
    )
    uniq = np.stack(
        [np.random.default_rng(i).permutation(x.shape[dim])[:2] for i in range(3)],
        1 if dim == 0 else 0,
    )
    uniq = uniq[:2, :3] if dim == 0 else uniq[:2, :2]
    src = rand_np(uniq.shape, np.float32)
    want = torch.tensor(x).scatter(dim, torch.tensor(uniq), torch.tensor(src))
    assert_close(Tensor(x).scatter(dim, Tensor(uniq), Tensor(src)), want)
    assert_close(
        Tensor(x).scatter(dim, Tensor(uniq), 2.0),
        torch.tensor(x).scatter(dim, torch.tensor(uniq), 2.0),
    )


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_vs_torch(reduce: str, include_self: bool) -> None:
    torch = pytest.importorskip("torch")
    x = rand_np((4,), np.float32, 1, 2)
    idx = np.array([0, 1, 0, 3, 0], dtype=np.int64)
    src = rand_np((5,), np.float32, 1, 2)
    want = torch.tensor(x).scatter_reduce(
        0, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self
    )
    got = Tensor(x).scatter_reduce(0, Tensor(idx), Tensor(src), reduce, include_self=include_self)
    assert_close(got, want, atol=1e-5)


def test_one_hot_masked_select_nonzero() -> None:
    assert Tensor([2, 0, 1]).one_hot(4).tolist() == [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    assert Tensor([[1], [0]]).one_hot().shape == (2, 1, 2)
    x = rand_np((3, 4), np.float32)
    m = x > 0
    np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(m)).numpy(), x[m])
    np.testing.assert_array_equal(Tensor(m).nonzero().numpy(), np.argwhere(m))
    with pytest.raises(RuntimeError, match="one_hot"):
        Tensor([1.0]).one_hot(2)
    assert Tensor([1, 2]).one_hot(3).dtype is dtypes.int32


@pytest.mark.parametrize(
    "idx",
    [True, False, (True,), (slice(None), True), (Ellipsis, False), (None, True, slice(1, 3)),
     (slice(None), False, slice(None)), (slice(2, None), Ellipsis, True)],
)  # fmt: skip
def test_python_bool_index_is_a_new_axis(idx: Any) -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = Tensor(a)[idx]
    assert got.shape == a[idx].shape
    np.testing.assert_array_equal(got.numpy(), a[idx])


def test_python_bool_setitem_and_unsupported_mixes() -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = Tensor(a.copy())
    x[False] = 5
    np.testing.assert_array_equal(x.numpy(), a)
    x[True] = Tensor([1, 2, 3, 4])
    np.testing.assert_array_equal(x.numpy(), np.broadcast_to([1, 2, 3, 4], (3, 4)))
    for bad in ((True, 0), (True, Ellipsis, False), ([0, 1], True)):
        with pytest.raises(IndexError, match="Python bool index"):
            _ = Tensor(a)[bad]
