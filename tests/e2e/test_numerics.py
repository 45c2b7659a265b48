"""Tensor programs run through real kernels on every target, checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from e2e_support import assert_close
from fusegrad import Tensor, dtypes

RNG = np.random.default_rng(7)


def rand(*shape: int, dtype: type = np.float32) -> np.ndarray:
    """Uniform data in [-2, 2)."""
    return RNG.uniform(-2, 2, shape).astype(dtype)


def test_add(target: str) -> None:
    a, b = rand(4, 4), rand(4, 4)
    assert_close(Tensor(a) + Tensor(b), a + b)


def test_broadcasting(target: str) -> None:
    a, b, c = rand(3, 1, 5), rand(4, 1), rand(5)
    assert_close(Tensor(a) * Tensor(b) - Tensor(c), a * b - c)


def test_fused_elementwise_relu(target: str) -> None:
    a, b, c = rand(6, 7), rand(6, 7), rand(7)
    got = ((Tensor(a) + Tensor(b)) * Tensor(c)).relu()
    assert_close(got, np.maximum((a + b) * c, 0))


@pytest.mark.parametrize("axis", [0, 1, 2, None, (0, 2)])
def test_sum_along_each_axis(target: str, axis: int | tuple[int, ...] | None) -> None:
    a = rand(3, 4, 5)
    assert_close(Tensor(a).sum(axis), a.sum(axis), atol=1e-5)


def test_mean_var_max(target: str) -> None:
    a = rand(5, 6)
    t = Tensor(a)
    assert_close(t.mean(1), a.mean(1))
    assert_close(t.var(0), a.var(0, ddof=1), atol=1e-5)
    assert_close(t.max(0), a.max(0))


def test_matmul(target: str) -> None:
    a, b = rand(5, 7), rand(7, 3)
    assert_close(Tensor(a) @ Tensor(b), a @ b, atol=1e-5)


def test_conv2d(target: str) -> None:
    x, w = rand(1, 2, 5, 5), rand(3, 2, 3, 3)
    out = Tensor(x).conv2d(Tensor(w), padding=1).numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 3, 5, 5), np.float32)
    for i in range(5):
        for j in range(5):
            patch = xp[:, :, i : i + 3, j : j + 3]
            want[:, :, i, j] = np.einsum("bchw,ochw->bo", patch, w)
    assert_close(out, want, atol=1e-5)


def test_softmax_and_layernorm(target: str) -> None:
    a = rand(4, 8)
    e = np.exp(a - a.max(1, keepdims=True))
    assert_close(Tensor(a).softmax(1), e / e.sum(1, keepdims=True), atol=1e-6)
    mu, var = a.mean(1, keepdims=True), a.var(1, keepdims=True)
    assert_close(Tensor(a).layernorm(), (a - mu) / np.sqrt(var + 1e-5), atol=1e-5)


def test_cat_pad(target: str) -> None:
    a, b = rand(2, 3), rand(4, 3)
    assert_close(Tensor(a).cat(Tensor(b), dim=0), np.concatenate([a, b]))
    assert_close(Tensor(a).pad((1, 2, 0, 1)), np.pad(a, ((0, 1), (1, 2))))


def test_getitem(target: str) -> None:
    a = rand(5, 6)
    t = Tensor(a)
    assert_close(t[1:4, ::-2], a[1:4, ::-2])
    assert_close(t[Tensor([0, 3, 3])], a[[0, 3, 3]])
    assert_close(t[:, 2], a[:, 2])


def test_setitem(target: str) -> None:
    a = rand(4, 5)
    t = Tensor(a.copy()).contiguous().realize()
    t[1:3, 2:] = 7.0
    want = a.copy()
    want[1:3, 2:] = 7.0
    assert_close(t, want)


def test_assign_writes_into_the_buffer(target: str) -> None:
    a = Tensor(np.arange(6, dtype=np.float32)).contiguous().realize()
    view = a.reshape(2, 3)
    a.assign(a * 2 + 1).realize()
    assert_close(a, np.arange(6, dtype=np.float32) * 2 + 1)
    a.assign(a + 1)
    assert_close(a, np.arange(6, dtype=np.float32) * 2 + 2)
    assert view.shape == (2, 3)


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (np.float32, dtypes.int32),
        (np.int32, dtypes.float32),
        (np.float32, dtypes.float16),
        (np.int32, dtypes.uint8),
        (np.float32, dtypes.bool),
        (np.int8, dtypes.int64),
    ],
)
def test_cast(target: str, src: type, dst: object) -> None:
    a = (rand(3, 4) * 50).astype(src)
    got = Tensor(a).cast(dst).numpy()
    want = Tensor(a).cast(dst)  # frontend's dtype mapping for the NumPy type
    assert got.dtype == want.numpy().dtype
    np_dst = got.dtype
    if np_dst == np.bool_:
        expect = a != 0
    elif np_dst.kind in "iu" and a.dtype.kind == "f":
        expect = np.trunc(a).astype(np.int64).astype(np_dst)
    else:
        expect = a.astype(np_dst)
    assert_close(got, expect)


def test_float16(target: str) -> None:
    a, b = rand(8).astype(np.float16), rand(8).astype(np.float16)
    t = Tensor(a) * Tensor(b) + 1.0
    assert t.dtype is dtypes.float16
    assert_close(t, (a * b + np.float16(1.0)).astype(np.float16), atol=2e-3, rtol=2e-3)
    assert_close(Tensor(a).sum(), np.float16(a.astype(np.float32).sum()), atol=1e-2, rtol=1e-2)


def test_int_ops(target: str) -> None:
    a = np.array([7, -7, 9, -9, 0, 5], dtype=np.int32)
    b = np.array([2, 2, -4, -4, 3, 0], dtype=np.int32)
    ta, tb = Tensor(a), Tensor(b)
    safe = np.where(b == 0, 1, b)
    assert_close(ta // tb, np.where(b == 0, 0, a // safe))
    assert_close(ta % tb, np.where(b == 0, 0, a % safe))
    assert_close(ta * tb - 3, a * b - 3)
    assert_close((ta << 2) ^ tb, (a << 2) ^ b)
    assert_close(ta.maximum(tb), np.maximum(a, b))


def test_arange(target: str) -> None:
    assert_close(Tensor.arange(10), np.arange(10, dtype=np.int32))
    assert_close(Tensor.arange(1, 3, 0.25), np.arange(1, 3, 0.25, dtype=np.float32))


def test_where_comparisons_and_bools(target: str) -> None:
    a, b = rand(3, 5), rand(3, 5)
    ta, tb = Tensor(a), Tensor(b)
    assert_close(ta < tb, a < b)
    assert_close((ta > 0).where(ta, tb), np.where(a > 0, a, b))
    assert_close(((ta > 0) & (tb > 0)).sum(), np.int32(((a > 0) & (b > 0)).sum()))


def test_transcendentals(target: str) -> None:
    a = np.abs(rand(16)) + 0.1
    t = Tensor(a)
    assert_close(t.exp(), np.exp(a), atol=1e-5, rtol=1e-5)
    assert_close(t.log(), np.log(a), atol=1e-5, rtol=1e-5)
    assert_close(t.sqrt(), np.sqrt(a), atol=1e-6)
    assert_close(t.sin(), np.sin(a), atol=1e-5)


def test_realize_several_in_one_schedule(target: str) -> None:
    a = rand(4, 6)
    t = Tensor(a)
    s0, s1 = t.sum(0), t.sum(1)
    Tensor.realize(s0, s1)
    assert s0.is_realized and s1.is_realized
    assert_close(s0, a.sum(0), atol=1e-5)
    assert_close(s1, a.sum(1), atol=1e-5)


def test_scalars_and_empty(target: str) -> None:
    assert Tensor(3.5).item() == 3.5
    assert (Tensor([1, 2, 3]).sum() * 2).item() == 12
    assert Tensor.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert Tensor.ones(2, 2).tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_int_pow(target: str) -> None:
    a = np.array([2, -3, 5, 1, -1, 0, 7, -1, 2], dtype=np.int32)
    b = np.array([3, 3, 0, -5, -3, 0, -2, 4, 31], dtype=np.int32)
    # NumPy semantics for y >= 0 (wrapping); exec_alu's for y < 0 (1, +-1, else 0)
    want = np.array([8, -27, 1, 1, -1, 1, 0, 1, -(2**31)], dtype=np.int32)
    assert_close(Tensor(a) ** Tensor(b), want)
    u = np.array([253, 255, 7, 2], dtype=np.uint8)
    assert_close(
        Tensor(u) ** Tensor(np.array([3, 3, 2, 9], np.uint8)), u ** np.array([3, 3, 2, 9], np.uint8)
    )


def test_bitcast_changing_the_element_size(target: str) -> None:
    x = np.arange(16, dtype=np.uint8)
    assert_close(Tensor(x).bitcast(dtypes.float16), x.view(np.float16))
    assert_close(Tensor(x)[4:12].bitcast(dtypes.uint32) + 1, x[4:12].view(np.uint32) + 1)
    assert_close((Tensor(x) * 3).bitcast(dtypes.int16), (x * 3).view(np.int16))
    f = np.array([1.5, -2.0, 3.25], np.float32)
    assert_close(Tensor(f).bitcast(dtypes.uint8), f.view(np.uint8))
