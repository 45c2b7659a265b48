"""Out-of-range indices raise IndexError like PyTorch: Python ints/lists and host-backed index
tensors at the call, computed index tensors when the result is realized; ``CHECK_INDEX=0``
turns the tensor checks off (see ``fusegrad.tensor.checks``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from fusegrad import Context, GlobalCounters, Tensor, dtypes
from fusegrad.nn import Embedding

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def lazy(values: list[int]) -> Tensor:
    """An index tensor computed by a kernel (not host data), holding ``values``."""
    return Tensor(values).contiguous() * 1


# -- Python and host indices: at the call ---------------------------------------------------------

EAGER: list[tuple[str, Callable[[], object], str]] = [
    ("int", lambda: Tensor(X)[3], "index 3 is out of bounds for dimension 0 with size 3"),
    ("neg int", lambda: Tensor(X)[:, -5], "index -5 is out of bounds for dimension 1 with size 4"),
    ("list", lambda: Tensor(X)[[0, 3]], "index 3 is out of bounds for dimension 0 with size 3"),
    ("neg list", lambda: Tensor(X)[:, [-5]], "index -5 is out of bounds for dimension 1 with size 4"),
    ("tensor", lambda: Tensor(X)[Tensor([1, 7])], "index 7 is out of bounds for dimension 0"),
    ("numpy", lambda: Tensor(X)[np.array([4])], "index 4 is out of bounds for dimension 0"),
    ("2 tensors", lambda: Tensor(X)[Tensor([0]), Tensor([4])], "index 4 is out of bounds for dimension 1"),
    ("gather", lambda: Tensor(X).gather(1, Tensor([[4]])), "gather: index 4 is out of bounds for dimension 1"),
    ("gather neg", lambda: Tensor(X).gather(0, Tensor([[-1]])), "gather: index -1 is out of bounds"),
    ("scatter", lambda: Tensor(X).scatter(0, Tensor([[3]]), 1.0), "scatter: index 3 is out of bounds"),
    ("one_hot", lambda: Tensor([0, 3]).one_hot(3), r"one_hot: class value 3 is outside \[0, 3\)"),
    ("one_hot neg", lambda: Tensor([-1]).one_hot(3), "one_hot: class value -1"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fn", "msg"), EAGER, ids=[e[0] for e in EAGER])
def test_out_of_range_index_raises_at_the_call(
    name: str, fn: Callable[[], object], msg: str
) -> None:
    with pytest.raises(IndexError, match=msg):
        fn()


def test_setitem_out_of_range_raises_at_the_call() -> None:
    t = Tensor(X.copy())
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        t[3] = 1.0
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 1"):
        t[:, Tensor([9])] = 1.0
    np.testing.assert_array_equal(t.numpy(), X)


def test_tensor_index_errors_are_also_runtime_errors() -> None:
    with pytest.raises(RuntimeError, match="gather"):
        Tensor(X).gather(0, Tensor([[5]]))


# -- computed indices: when realized --------------------------------------------------------------


def test_computed_index_raises_when_the_result_is_realized() -> None:
    idx = lazy([0, 2, 3])
    out = Tensor(X)[idx] * 2  # building the graph is fine
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        out.numpy()
    with pytest.raises(IndexError):  # still unrealized: asking again raises again
        out.tolist()
    assert not out.is_realized


@pytest.mark.parametrize(
    ("fn", "msg"),
    [
        (lambda i: Tensor(X)[:, i], "index 5 is out of bounds for dimension 1 with size 4"),
        (lambda i: Tensor(X)[i - 9], "index -8 is out of bounds for dimension 0 with size 3"),
        (lambda i: Tensor(X).gather(1, i.reshape(1, 2)), "gather: index 5 is out of bounds"),
        (lambda i: Tensor(X).scatter(1, i.reshape(1, 2), 0.0), "scatter: index 5"),
        (lambda i: Tensor(X).scatter_reduce(1, i.reshape(1, 2), Tensor([[1.0, 1.0]]), "sum"), "scatter: index 5"),
        (lambda i: i.one_hot(4), "one_hot: class value 5"),
        (lambda i: Tensor(X[:2]).cross_entropy(i), "one_hot: class value 5"),
        (lambda i: Tensor(X[:2]).sparse_categorical_crossentropy(i), "gather: index 5"),
        (lambda i: Embedding(4, 3)(i), "index 5 is out of bounds for dimension 0 with size 4"),  # noqa: PLW0108
    ],
    ids=["getitem", "negative", "gather", "scatter", "scatter_reduce", "one_hot", "cross_entropy",
         "sparse_ce", "embedding"],
)  # fmt: skip
def test_computed_index_out_of_range_raises(fn: Callable[[Tensor], Tensor], msg: str) -> None:
    with pytest.raises(IndexError, match=msg):
        fn(lazy([1, 5])).realize()


def test_check_propagates_to_tensors_computed_later_and_to_setitem() -> None:
    picked = Tensor(X)[lazy([0, 4])]
    later = (picked.sum() + 1).reshape(1)
    with pytest.raises(IndexError, match="index 4"):
        later.item()
    t = Tensor(X.copy()).realize()
    t[lazy([1, 3])] = 0.0
    with pytest.raises(IndexError, match="index 3"):
        t.numpy()


def test_realize_of_several_tensors_checks_all() -> None:
    good = Tensor(X)[lazy([0, 1])]
    bad = Tensor(X)[:, lazy([4])]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1"):
        Tensor.realize(good, bad)


def test_in_range_computed_indices_match_numpy() -> None:
    idx = lazy([2, -3, 0])
    np.testing.assert_array_equal(Tensor(X)[idx].numpy(), X[[2, -3, 0]])
    np.testing.assert_array_equal(
        Tensor(X).gather(1, lazy([3, 0, 1]).reshape(3, 1)).numpy(),
        np.take_along_axis(X, np.array([[3], [0], [1]]), 1),
    )
    assert lazy([1, 0]).one_hot(2).tolist() == [[0, 1], [1, 0]]


def test_empty_index_tensors_are_fine() -> None:
    empty = Tensor.zeros(0, dtype=dtypes.int32)
    assert Tensor(X)[empty].shape == (0, 4)
    assert Tensor(X)[empty].numpy().shape == (0, 4)


@pytest.mark.kernels
def test_check_runs_once_in_the_same_schedule() -> None:
    x = Tensor(X).realize()
    idx = lazy([1, 2]).realize()
    idx2 = idx * 1
    out = x[idx2]
    GlobalCounters.reset()
    out.realize()
    first = GlobalCounters.kernel_count
    np.testing.assert_array_equal(out.numpy(), X[[1, 2]])
    again = (out + 1).realize()
    assert first >= 1
    GlobalCounters.reset()
    (x[idx2] * 3).realize()  # a new result over the same, already checked, index
    with Context(CHECK_INDEX=0):
        GlobalCounters.reset()
        (x[idx2] * 4).realize()
        unchecked = GlobalCounters.kernel_count
    assert unchecked <= first
    np.testing.assert_array_equal(again.numpy(), X[[1, 2]] + 1)


@pytest.mark.kernels
def test_kernel_pipeline_raises_for_computed_out_of_range_index() -> None:
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        Tensor(X)[lazy([3])].numpy()


def test_check_index_0_turns_the_tensor_checks_off() -> None:
    with Context(CHECK_INDEX=0):
        np.testing.assert_array_equal(Tensor(X)[Tensor([3])].numpy(), np.zeros((1, 4)))
        np.testing.assert_array_equal(Tensor(X)[lazy([0, 3])].numpy(), [X[0], np.zeros(4)])
        assert Tensor([3]).one_hot(3).tolist() == [[0, 0, 0]]
        with pytest.raises(IndexError):  # Python ints are always checked
            Tensor(X)[3]


@pytest.mark.kernels
def test_tinyjit_replays_run_the_deferred_checks() -> None:
    from fusegrad import TinyJit

    table = Tensor(X).realize()
    step = TinyJit(lambda i: (table[i] * 2).realize())
    for k in range(4):
        idx = lazy([k % 3, 2]).realize()
        np.testing.assert_array_equal(step(idx).numpy(), X[[k % 3, 2]] * 2)
    assert step.captured
    # a replay checks its index tensor as the call without the JIT does (issue 20)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        step(lazy([5, 0]).realize())
    np.testing.assert_array_equal(step(lazy([1, 0]).realize()).numpy(), X[[1, 0]] * 2)


def test_tensor_of_a_checked_tensor_keeps_the_check() -> None:
    wrapped = Tensor(Tensor(X)[lazy([7])])
    with pytest.raises(IndexError, match="index 7"):
        wrapped.numpy()
