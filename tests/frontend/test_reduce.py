"""Reductions, softmax family, cumulative ops and sorting vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from reference import assert_close, rand_np

torch = pytest.importorskip("torch")

AXES = [None, 0, -1, (0, 2), (-1, 0)]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "any", "all"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_match_torch(name: str, axis, keepdim: bool) -> None:  # type: ignore[no-untyped-def]
    x = rand_np((2, 3, 4), np.float32, 0.5, 1.5)
    t = torch.tensor(x)
    tname = {"max": "amax", "min": "amin"}.get(name, name)
    if axis is None:
        want = getattr(torch, tname)(t)
        if keepdim:
            want = want.reshape(1, 1, 1)
    elif name == "prod" and isinstance(axis, tuple):
        want = t
        for a in sorted((a % 3 for a in axis), reverse=True):
            want = want.prod(a, keepdim=keepdim)
    else:
        want = getattr(torch, tname)(t, axis, keepdim=keepdim)
    assert_close(getattr(Tensor(x), name)(axis, keepdim=keepdim), want, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16, np.uint8])
def test_sum_and_max_dtypes(dtype: type) -> None:
    x = rand_np((3, 5), dtype, 0, 100)
    got = Tensor(x).sum(1)
    want_dt = {np.float16: dtypes.float16, np.uint8: dtypes.uint32}.get(dtype, dtypes.int32)
    assert got.dtype is want_dt
    np.testing.assert_allclose(
        got.numpy().astype(np.float64), x.astype(np.float64).sum(1), rtol=1e-3
    )
    assert_close(Tensor(x).max(0), torch.amax(torch.tensor(x), 0))
    assert_close(Tensor(x).min(0), torch.amin(torch.tensor(x), 0))


def test_sum_with_dtype_accumulates_there() -> None:
    x = np.full((300,), 250, dtype=np.uint8)
    assert Tensor(x).sum(dtype=dtypes.int64).item() == 75000
    assert Tensor(x).sum(dtype=dtypes.uint8).item() == (75000 % 256)
    h = np.full((4096,), 1.0, dtype=np.float16)
    assert Tensor(h).sum().item() == 4096.0  # float32 accumulation


def test_int_min_max_extremes() -> None:
    x = np.array([-(2**31), 5, 2**31 - 1], dtype=np.int32)
    assert Tensor(x).min().item() == -(2**31)
    assert Tensor(x).max().item() == 2**31 - 1


def test_empty_reductions_follow_torch() -> None:
    e = np.zeros((0, 3), dtype=np.float32)
    assert_close(Tensor(e).sum(0), torch.tensor(e).sum(0))
    assert_close(Tensor(e).prod(0), torch.tensor(e).prod(0))
    assert_close(Tensor(e).sum(), torch.tensor(e).sum())
    assert_close(Tensor(e).mean(0), torch.tensor(e).mean(0))
    assert_close(Tensor(e).any(0), torch.tensor(e).any(0))
    assert_close(Tensor(e).all(0), torch.tensor(e).all(0))
    assert Tensor(e).max(1).shape == (0,)
    with pytest.raises(RuntimeError, match="max"):
        Tensor(e).max(0)
    with pytest.raises(RuntimeError, match="argmax"):
        Tensor(e).argmax(0)


def test_nan_propagates_through_max_and_argmax_picks_it() -> None:
    x = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, 5.0]], dtype=np.float32)
    assert_close(Tensor(x).max(1), torch.amax(torch.tensor(x), 1))
    assert_close(Tensor(x).argmax(1), torch.argmax(torch.tensor(x), 1).int())
    assert_close(Tensor(x).argmin(1), torch.argmin(torch.tensor(x), 1).int())


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin_first_occurrence(axis, keepdim: bool) -> None:  # type: ignore[no-untyped-def]
    x = rand_np((4, 5), np.int32, 0, 3)
    t = torch.tensor(x)
    assert_close(Tensor(x).argmax(axis, keepdim), torch.argmax(t, axis, keepdim).int())
    assert_close(Tensor(x).argmin(axis, keepdim), torch.argmin(t, axis, keepdim).int())


@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std(correction: int) -> None:
    x = rand_np((3, 6), np.float32)
    t = torch.tensor(x)
    assert_close(
        Tensor(x).var(1, correction=correction), torch.var(t, 1, correction=correction), atol=1e-5
    )
    assert_close(
        Tensor(x).std(None, correction=correction), torch.std(t, correction=correction), atol=1e-5
    )
    v, m = Tensor(x).var_mean(0)
    tv, tm = torch.var_mean(t, 0)
    assert_close(v, tv, atol=1e-5)
    assert_close(m, tm, atol=1e-6)
    s, m = Tensor(x).std_mean(0, keepdim=True)
    ts, tm = torch.std_mean(t, 0, keepdim=True)
    assert_close(s, ts, atol=1e-5)


def test_mean_of_ints_is_float() -> None:
    assert Tensor([1, 2]).mean().dtype is dtypes.float32
    assert Tensor([1, 2]).mean().item() == 1.5


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_family(axis: int) -> None:
    x = rand_np((3, 4), np.float32, -20, 20)
    t = torch.tensor(x)
    assert_close(Tensor(x).softmax(axis), torch.softmax(t, axis), atol=1e-6)
    assert_close(Tensor(x).log_softmax(axis), torch.log_softmax(t, axis), atol=1e-5)
    assert_close(Tensor(x).softmin(axis), torch.nn.functional.softmin(t, axis), atol=1e-6)
    assert_close(Tensor(x).logsumexp(axis), torch.logsumexp(t, axis), atol=1e-5)
    assert_close(
        Tensor(x).logsumexp(axis, keepdim=True), torch.logsumexp(t, axis, keepdim=True), atol=1e-5
    )


def test_logsumexp_of_infinities() -> None:
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0]], dtype=np.float32)
    assert_close(Tensor(x).logsumexp(1), torch.logsumexp(torch.tensor(x), 1))


def test_normalize() -> None:
    x = rand_np((3, 4), np.float32)
    F = torch.nn.functional
    assert_close(Tensor(x).normalize(), F.normalize(torch.tensor(x)), atol=1e-6)
    assert_close(
        Tensor(x).normalize(p=1.0, dim=0), F.normalize(torch.tensor(x), p=1.0, dim=0), atol=1e-6
    )


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_cumulative(axis: int, dtype: type) -> None:
    x = rand_np((4, 5), dtype, -3, 3)
    t = torch.tensor(x)
    assert_close(
        Tensor(x).cumsum(axis),
        torch.cumsum(t, axis).to(t.dtype if dtype == np.float32 else torch.int32),
        atol=1e-5,
    )
    assert_close(
        Tensor(x).cumprod(axis),
        torch.cumprod(t, axis).to(t.dtype if dtype == np.float32 else torch.int32),
        atol=1e-4,
    )
    pairs = [(Tensor(x).cummax(axis), torch.cummax(t, axis))]
    pairs.append((Tensor(x).cummin(axis), torch.cummin(t, axis)))
    for got, want in pairs:
        assert_close(got[0], want.values)
        assert_close(got[1], want.indices.to(torch.int32))
    if dtype == np.float32:
        assert_close(Tensor(x).logcumsumexp(axis), torch.logcumsumexp(t, axis), atol=1e-5)


def test_cumsum_empty_and_scalar() -> None:
    assert Tensor(np.zeros((0,), np.float32)).cumsum().shape == (0,)
    assert Tensor(3.0).cumsum().item() == 3.0


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_like_numpy(n: int, descending: bool) -> None:
    x = rand_np((3, n), np.int32, 0, 4)
    vals, idx = Tensor(x).sort(-1, descending)
    order = np.argsort(-x if descending else x, axis=-1, kind="stable")
    np.testing.assert_array_equal(idx.numpy(), order)
    np.testing.assert_array_equal(vals.numpy(), np.take_along_axis(x, order, -1))
    np.testing.assert_array_equal(Tensor(x).argsort(-1, descending).numpy(), order)


def test_sort_nan_and_dim0() -> None:
    x = np.array([[3.0, np.nan], [1.0, 2.0], [np.nan, -1.0]], dtype=np.float32)
    tv, ti = torch.sort(torch.tensor(x), dim=0, stable=True)
    v, i = Tensor(x).sort(0)
    assert_close(v, tv)
    assert_close(i, ti.int())
    tv, ti = torch.sort(torch.tensor(x), dim=0, descending=True, stable=True)
    v, i = Tensor(x).sort(0, descending=True)
    assert_close(v, tv)
    assert_close(i, ti.int())


@pytest.mark.parametrize("largest", [True, False])
def test_topk(largest: bool) -> None:
    x = rand_np((4, 9), np.float32)
    tv, ti = torch.topk(torch.tensor(x), 3, dim=1, largest=largest)
    v, i = Tensor(x).topk(3, dim=1, largest=largest)
    assert_close(v, tv)
    assert_close(i, ti.int())
    with pytest.raises(RuntimeError, match="k out of range"):
        Tensor(x).topk(10)
