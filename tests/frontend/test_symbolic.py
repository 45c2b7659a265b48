"""Symbolic shapes: Tensor ops over a dimension given by a bound Variable (slicing, shrink,
reshape, elementwise, reductions, matmul), against NumPy at the bound value. The reference
interpreter evaluates any symbolic graph; the kernel pipeline runs the ones whose results
have concrete shapes (one compiled kernel for every bound value)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import GlobalCounters, Tensor, Variable
from fusegrad.codegen.schedule import schedule_cache
from fusegrad.engine import buffer_of, clear_kernels, programs
from fusegrad.uop import UOp

BASE = np.arange(40, dtype=np.float32).reshape(10, 4) / 7
VAR = Variable("n", 1, 10)


def base() -> Tensor:
    return Tensor(BASE).realize()


OPS: list[tuple[str, Callable[[Tensor, UOp], Tensor], Callable[[np.ndarray, int], np.ndarray]]] = [
    ("slice", lambda t, n: t[:n], lambda a, k: a[:k]),
    ("slice from 1", lambda t, n: t[1:n], lambda a, k: a[1:k]),
    ("slice from n", lambda t, n: t[n:], lambda a, k: a[k:]),
    ("slice both dims", lambda t, n: t[:n, 1:3], lambda a, k: a[:k, 1:3]),
    ("shrink", lambda t, n: t.shrink(((0, n), None)), lambda a, k: a[:k]),
    ("elementwise", lambda t, n: t[:n] * 2 + 1, lambda a, k: a[:k] * 2 + 1),
    ("with a concrete tensor", lambda t, n: t[:n] - Tensor([1.0, 2, 3, 4]), lambda a, k: a[:k] - [1, 2, 3, 4]),
    ("sum over n", lambda t, n: t[:n].sum(0), lambda a, k: a[:k].sum(0)),
    ("sum keeps n", lambda t, n: t[:n].sum(1), lambda a, k: a[:k].sum(1)),
    ("sum all", lambda t, n: t[:n].sum(), lambda a, k: a[:k].sum()),
    ("mean", lambda t, n: t[:n].mean(0), lambda a, k: a[:k].mean(0)),
    ("var", lambda t, n: t[:n].var(0), lambda a, k: a[:k].var(0, ddof=1) if k > 1 else np.full(4, np.nan)),
    ("max", lambda t, n: t[:n].max(0), lambda a, k: a[:k].max(0)),
    ("softmax over n", lambda t, n: t[:n].softmax(0), lambda a, k: np.exp(a[:k]) / np.exp(a[:k]).sum(0)),
    ("matmul inner n", lambda t, n: t[:n].T @ t[:n], lambda a, k: a[:k].T @ a[:k]),
    ("matmul outer n", lambda t, n: t[:n] @ Tensor(BASE[:4, :2]), lambda a, k: a[:k] @ BASE[:4, :2]),
    ("reshape", lambda t, n: t[:n].reshape(n, 2, 2), lambda a, k: a[:k].reshape(k, 2, 2)),
    ("reshape -1", lambda t, n: t[:n].reshape(-1), lambda a, k: a[:k].reshape(-1)),
    ("permute", lambda t, n: t[:n].permute(1, 0), lambda a, k: a[:k].T),
    ("flip", lambda t, n: t[:n].flip(0), lambda a, k: a[:k][::-1]),
    ("unsqueeze", lambda t, n: t[:n].unsqueeze(0), lambda a, k: a[None, :k]),
    ("pad", lambda t, n: t[:n].pad(((1, 2), None)), lambda a, k: np.pad(a[:k], ((1, 2), (0, 0)))),
    ("int index", lambda t, n: t[:n][0], lambda a, k: a[:k][0]),
    ("negative int index", lambda t, n: t[:n][-1], lambda a, k: a[:k][-1]),
    ("expand", lambda t, n: t[:1].expand(n, 4), lambda a, k: np.broadcast_to(a[:1], (k, 4))),
    ("zeros", lambda t, n: Tensor.zeros(n, 4) + t[:n], lambda a, k: a[:k]),
    ("scalar from n", lambda t, n: t[:n].sum(0) / Tensor(n), lambda a, k: a[:k].sum(0) / k),
]  # fmt: skip


@pytest.mark.parametrize("value", [1, 3, 10])
@pytest.mark.parametrize(("name", "fn", "want"), OPS, ids=[o[0] for o in OPS])
def test_symbolic_op_matches_numpy_at_the_bound_value(name, fn, want, value: int) -> None:  # type: ignore[no-untyped-def]
    out = fn(base(), VAR.bind(value))
    expected = want(BASE, value)
    assert tuple(out.shape) == expected.shape or any(isinstance(s, UOp) for s in out.shape)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_symbolic_shapes_stay_symbolic() -> None:
    n = VAR.bind(3)
    x = base()[:n]
    assert x.shape[0] is n and x.shape[1] == 4
    assert x.reshape(n, 2, 2).shape == (n, 2, 2)
    assert x.sum(1).shape == (n,)
    assert x.sum(0).shape == (4,)
    assert (x.T @ x).shape == (4, 4)


def test_symbolic_slice_errors() -> None:
    t = base()
    with pytest.raises(IndexError, match="step 1"):
        t[: VAR.bind(3) : 2]
    big = Variable("m", 1, 20).bind(4)
    with pytest.raises(IndexError, match="outside the dim of size 10"):
        t[:big]


@pytest.mark.kernels
@pytest.mark.parametrize("name", ["sum over n", "mean", "max", "matmul inner n", "sum all"])
def test_kernels_reduce_over_a_symbolic_dim(name: str) -> None:
    fn, want = next((f, w) for o, f, w in OPS if o == name)
    t = base()
    for value in (2, 7):
        np.testing.assert_allclose(fn(t, VAR.bind(value)).numpy(), want(BASE, value), rtol=1e-5)


@pytest.mark.kernels
def test_kernels_realize_a_symbolic_shaped_result() -> None:
    out = base()[: VAR.bind(3)] * 2
    np.testing.assert_allclose(out.numpy(), BASE[:3] * 2)


@pytest.mark.kernels
def test_kernels_symbolic_result_is_a_view_of_a_max_size_buffer() -> None:
    t = base()
    out = (t[: VAR.bind(4)] + 1).realize()
    buf = buffer_of(out.uop)
    assert buf is not None and buf.arg == 40  # sized for n's max value (10 rows of 4)
    assert out.shape[0].is_bound_var and out.shape[0].unbind()[1] == 4
    np.testing.assert_allclose(out.numpy(), BASE[:4] + 1, rtol=1e-6)
    # the realized view feeds later kernels like any tensor
    np.testing.assert_allclose((out * 2).sum(0).numpy(), ((BASE[:4] + 1) * 2).sum(0), rtol=1e-5)
    np.testing.assert_allclose(t[: VAR.bind(4)].sum(1).numpy(), BASE[:4].sum(1), rtol=1e-5)


@pytest.mark.kernels
def test_kernels_symbolic_results_share_one_schedule_and_one_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[UOp] = []
    real = programs.to_program

    def counting(ast: UOp, renderer: Any) -> Any:
        compiled.append(ast)
        return real(ast, renderer)

    monkeypatch.setattr(programs, "to_program", counting)
    clear_kernels()
    t, var = base(), Variable("rows", 1, 10)
    hits = schedule_cache.hits
    ops = []
    for value in (2, 9, 5):
        GlobalCounters.reset()
        out = (t[: var.bind(value)] * 3 - 1).realize()
        assert GlobalCounters.kernel_count == 1
        ops.append(GlobalCounters.global_ops)
        np.testing.assert_allclose(out.numpy(), BASE[:value] * 3 - 1, rtol=1e-6)
    assert len(compiled) == 1  # one compiled kernel serves every bound value
    assert schedule_cache.hits - hits >= 2
    assert ops[0] < ops[2] < ops[1]  # the kernel runs over the bound rows, not the max


@pytest.mark.kernels
@pytest.mark.parametrize("value", [1, 4, 10])
def test_kernels_pad_by_a_symbolic_amount(value: int) -> None:
    t, n = base(), VAR.bind(value)
    np.testing.assert_allclose(
        t[:2].pad(((n, 0), None)).numpy(), np.pad(BASE[:2], ((value, 0), (0, 0)))
    )
    got = t[:3].pad(((0, n), (n, 1))) + 1
    np.testing.assert_allclose(got.numpy(), np.pad(BASE[:3], ((0, value), (value, 1))) + 1)
