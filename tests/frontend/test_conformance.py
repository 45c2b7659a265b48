"""Edge cases of the API surface found by comparing with PyTorch: empty tensors, 0-d tensors
with dim 0/-1, keyword spellings PyTorch code uses, and promotion corners. NumPy is the
reference; PyTorch cross-checks where installed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, dtypes

E = np.zeros((0, 3), np.float32)
X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
S = np.float32(2.5)
U64 = dtypes.uint64

CASES: list[tuple[str, Callable[[], Tensor], Any]] = [
    ("cat empty first", lambda: Tensor(E).cat(Tensor(X)), X),
    ("cat empty middle", lambda: Tensor(X).cat(Tensor(E), Tensor(X)), np.concatenate([X, X])),
    ("cat all empty", lambda: Tensor(E).cat(Tensor(E)), np.zeros((0, 3), np.float32)),
    ("cat keeps -0.0 alone", lambda: Tensor(E).cat(Tensor([[-0.0, 1, 2]])), np.array([[-0.0, 1, 2]], np.float32)),
    ("cat keeps -0.0 and NaN", lambda: Tensor([-0.0, np.nan]).cat(Tensor([-0.0, 1.0])), [-0.0, np.nan, -0.0, 1.0]),
    ("pad empty", lambda: Tensor(E).pad(((1, 1), None)), np.zeros((2, 3), np.float32)),
    ("softmax over empty dim", lambda: Tensor(E).softmax(0), E),
    ("log_softmax over empty dim", lambda: Tensor(E).log_softmax(0), E),
    ("logsumexp over empty dim", lambda: Tensor(E).logsumexp(0), np.full(3, -np.inf, np.float32)),
    ("softmax of empty rows", lambda: Tensor(E).softmax(1), E),
    ("0-d sum dim 0", lambda: Tensor(S).sum(0), S),
    ("0-d sum dim -1", lambda: Tensor(S).sum(-1, keepdim=True), S),
    ("0-d max dim 0", lambda: Tensor(S).max(0), S),
    ("0-d mean dim 0", lambda: Tensor(S).mean(0), S),
    ("0-d softmax", lambda: Tensor(S).softmax(0), np.float32(1.0)),
    ("0-d argmax dim 0", lambda: Tensor(S).argmax(0), np.int32(0)),
    ("0-d T", lambda: Tensor(S).T, S),
    ("1-d T", lambda: Tensor(X[0]).T, X[0]),
    ("clamp min=", lambda: Tensor(X).clamp(min=0), np.clip(X, 0, None)),
    ("clamp max=", lambda: Tensor(X).clamp(max=0.5), np.clip(X, None, 0.5)),
    ("clip min= max=", lambda: Tensor(X).clip(min=-1, max=1), np.clip(X, -1, 1)),
    ("int64 + uint64", lambda: Tensor([1], dtype=dtypes.int64) + Tensor([2], dtype=U64), np.array([3.0], np.float32)),
    ("empty list index", lambda: Tensor(X)[[]], X[[]]),
    ("empty list index dim 1", lambda: Tensor(X)[:, []], X[:, []]),
    ("empty Ellipsis separates", lambda: Tensor(X)[[0], ..., [1]], X[[0], ..., [1]]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fn", "want"), CASES, ids=[c[0] for c in CASES])
def test_edge_case_matches_numpy(name: str, fn: Callable[[], Tensor], want: Any) -> None:
    got = fn()
    want = np.asarray(want, dtype=np.float32 if isinstance(want, list) else None)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    if want.size and want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))


def test_clamp_rejects_unknown_keywords() -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        Tensor(X).clamp(low=0)


def test_bool_mask_of_the_wrong_shape_raises_index_error() -> None:
    with pytest.raises(IndexError, match=r"shape of the mask \[2\] at index 0 does not match"):
        Tensor(np.zeros((3, 2)))[np.array([True, False])]
    with pytest.raises(IndexError, match=r"mask \[3\] at index 1"):
        Tensor(np.zeros((3, 2)))[:, np.array([True, False, True])]


def test_edge_cases_agree_with_torch() -> None:
    torch = pytest.importorskip("torch")
    e, x = torch.tensor(E), torch.tensor(X)
    np.testing.assert_array_equal(Tensor(E).logsumexp(0).numpy(), e.logsumexp(0).numpy())
    assert Tensor(E).softmax(0).shape == tuple(e.softmax(0).shape)
    np.testing.assert_array_equal(Tensor(E).cat(Tensor(X)).numpy(), torch.cat([e, x]).numpy())
    np.testing.assert_array_equal(Tensor(X).clamp(min=0).numpy(), x.clamp(min=0).numpy())
    s = torch.tensor(S)
    assert Tensor(S).sum(0).item() == s.sum(0).item()
    assert Tensor(S).argmax(0).item() == s.argmax(0).item()
    with pytest.raises(IndexError):
        x[torch.tensor([True, False, True])]


@pytest.mark.kernels
def test_kernels_pad_of_an_empty_buffer_plus_a_tensor() -> None:
    empty = Tensor(np.zeros((0, 3), np.float32)).realize()
    padded = Tensor(empty.uop.pad(((0, 2), (0, 0))))
    np.testing.assert_array_equal((padded + Tensor(X)).numpy(), X)
    front = Tensor(empty.uop.pad(((1, 1), (0, 0))))
    np.testing.assert_array_equal((front * Tensor(X) - 1).numpy(), np.full((2, 3), -1, np.float32))
