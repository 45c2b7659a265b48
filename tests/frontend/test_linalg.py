"""qr (Householder) and svd (one-sided Jacobi) vs NumPy's LAPACK (and PyTorch where installed):
factors, reconstruction, orthogonality, sign conventions; batched, tall, wide and square.
Gradients are not part of the contract (see fusegrad.tensor.linalg)."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from reference import assert_close

RNG = np.random.default_rng(7)
SHAPES = [(3, 3), (5, 3), (3, 5), (2, 4, 4), (2, 2, 3, 2), (1, 1), (6, 1), (1, 6)]


def randn(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def eye_like(shape: tuple[int, ...], n: int) -> np.ndarray:
    return np.broadcast_to(np.eye(n, dtype=np.float32), (*shape[:-2], n, n))


def diag_matrix(s: np.ndarray, m: int, n: int) -> np.ndarray:
    out = np.zeros((*s.shape[:-1], m, n), np.float32)
    k = s.shape[-1]
    out[..., np.arange(k), np.arange(k)] = s
    return out


# -- qr ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_qr_matches_numpy_complete_mode_signs_included(shape: tuple[int, ...]) -> None:
    a = randn(shape)
    q, r = Tensor(a).qr()
    want_q, want_r = np.linalg.qr(a, mode="complete")
    assert_close(q, want_q, atol=2e-5)
    assert_close(r, want_r, atol=2e-5)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_qr_reconstructs_with_orthogonal_q_and_triangular_r(shape: tuple[int, ...]) -> None:
    a = randn(shape)
    q, r = (t.numpy() for t in Tensor(a).qr())
    m = shape[-2]
    np.testing.assert_allclose(q @ r, a, atol=2e-5)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), eye_like(shape, m), atol=2e-5)
    np.testing.assert_array_equal(r, np.triu(r))  # exact zeros below the diagonal


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 2)], ids=str)
def test_qr_reduced_mode_matches_numpy(shape: tuple[int, ...]) -> None:
    a = randn(shape)
    q, r = Tensor(a).qr(mode="reduced")
    want_q, want_r = np.linalg.qr(a, mode="reduced")
    assert_close(q, want_q, atol=2e-5)
    assert_close(r, want_r, atol=2e-5)


def test_qr_reduced_mode_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    a = randn((3, 6, 4))
    q, r = Tensor(a).qr(mode="reduced")
    want_q, want_r = torch.linalg.qr(torch.from_numpy(a))
    assert_close(q, want_q, atol=2e-5)
    assert_close(r, want_r, atol=2e-5)


def test_qr_of_upper_triangular_reflects_nothing() -> None:
    # LAPACK applies no reflector where the column below the diagonal is already zero, so the
    # signs of R's diagonal are kept (a reflector there would flip them)
    a = np.array([[2.0, 1.0, 3.0], [0.0, -3.0, 1.0], [0.0, 0.0, 4.0]], np.float32)
    q, r = Tensor(a).qr()
    assert_close(q, np.eye(3, dtype=np.float32))
    assert_close(r, a)


def test_qr_diagonal_sign_is_minus_sign_of_the_pivot() -> None:
    a = np.array([[3.0, 1.0], [4.0, 2.0]], np.float32)
    _q, r = Tensor(a).qr()
    assert_close(r, np.array([[-5.0, -2.2], [0.0, 0.4]], np.float32), atol=1e-6)
    assert_close(Tensor(-a).qr()[1], np.array([[5.0, 2.2], [0.0, -0.4]], np.float32), atol=1e-6)


def test_qr_rank_deficient_still_factors() -> None:
    a = randn((4, 3))
    a[:, 1] = 0.0
    a[:, 2] = 2 * a[:, 0]
    q, r = (t.numpy() for t in Tensor(a).qr())
    np.testing.assert_allclose(q @ r, a, atol=2e-5)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=2e-5)


def test_qr_of_ints_is_float() -> None:
    a = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    q, r = Tensor(a).qr()
    assert q.dtype is dtypes.float32 and r.dtype is dtypes.float32
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-5)


@pytest.mark.parametrize(
    ("data", "error", "match"),
    [
        ([1.0, 2.0], RuntimeError, "at least 2 dimensions"),
        ([[True, False], [False, True]], RuntimeError, "floating point"),
    ],
    ids=["1-d", "bool"],
)
def test_qr_rejects_bad_input(data: list, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tensor(data).qr()


def test_qr_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        Tensor.ones(2, 2).qr(mode="r")


# -- svd --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_svd_full_matches_numpy(shape: tuple[int, ...]) -> None:
    a = randn(shape)
    u, s, v = (t.numpy() for t in Tensor(a).svd())
    m, n = shape[-2:]
    want_u, want_s, want_v = np.linalg.svd(a)
    assert (u.shape, s.shape, v.shape) == (want_u.shape, want_s.shape, want_v.shape)
    np.testing.assert_allclose(s, want_s, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(u @ diag_matrix(s, m, n) @ v, a, atol=3e-5)
    np.testing.assert_allclose(u @ np.swapaxes(u, -1, -2), eye_like(shape, m), atol=3e-5)
    np.testing.assert_allclose(v @ np.swapaxes(v, -1, -2), eye_like(shape, n), atol=3e-5)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 3, 6)], ids=str)
def test_svd_reduced_matches_numpy(shape: tuple[int, ...]) -> None:
    a = randn(shape)
    u, s, v = (t.numpy() for t in Tensor(a).svd(full_matrices=False))
    want_u, want_s, want_v = np.linalg.svd(a, full_matrices=False)
    assert (u.shape, v.shape) == (want_u.shape, want_v.shape)
    np.testing.assert_allclose(s, want_s, atol=1e-5, rtol=1e-5)
    k = s.shape[-1]
    np.testing.assert_allclose(u @ diag_matrix(s, k, k) @ v, a, atol=3e-5)
    # singular vectors are unique up to sign for distinct singular values
    np.testing.assert_allclose(np.abs(np.sum(u * want_u, axis=-2)), 1.0, atol=1e-4)
    np.testing.assert_allclose(np.abs(np.sum(v * want_v, axis=-1)), 1.0, atol=1e-4)


def test_svd_third_factor_is_transposed_v() -> None:
    # tinygrad's convention (and NumPy's ``vh``): A == U @ diag(S) @ V, rows of V are the
    # right singular vectors; here A = diag(2, 1) rotated by 90 degrees on the right
    a = np.array([[0.0, 2.0], [1.0, 0.0]], np.float32)
    u, s, v = (t.numpy() for t in Tensor(a).svd())
    np.testing.assert_allclose(s, [2.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(np.abs(v), [[0.0, 1.0], [1.0, 0.0]], atol=1e-6)
    np.testing.assert_allclose(u @ np.diag(s) @ v, a, atol=1e-6)


def test_svd_singular_values_are_sorted_descending_and_nonnegative() -> None:
    a = np.diag(np.array([-1.0, 5.0, 0.5, -3.0], np.float32))
    _, s, _ = Tensor(a).svd()
    assert_close(s, np.array([5.0, 3.0, 1.0, 0.5], np.float32), atol=1e-6)


def test_svd_rank_deficient_singular_values() -> None:
    b = randn((5, 2))
    a = b @ randn((2, 4))  # rank 2
    u, s, v = (t.numpy() for t in Tensor(a).svd())
    want = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(s, want, atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(u @ diag_matrix(s, 5, 4) @ v, a, atol=5e-5)
    np.testing.assert_allclose(u @ u.T, np.eye(5), atol=3e-5)  # completed where s == 0
    np.testing.assert_allclose(v @ v.T, np.eye(4), atol=3e-5)


def test_svd_of_zeros() -> None:
    u, s, v = (t.numpy() for t in Tensor.zeros(3, 2).svd())
    np.testing.assert_array_equal(s, np.zeros(2, np.float32))
    np.testing.assert_allclose(u @ diag_matrix(s, 3, 2) @ v, np.zeros((3, 2)), atol=0)
    np.testing.assert_allclose(u @ u.T, np.eye(3), atol=1e-6)
    np.testing.assert_allclose(v @ v.T, np.eye(2), atol=1e-6)


def test_svd_moderately_sized_matrix_converges() -> None:
    a = randn((12, 9))
    u, s, v = (t.numpy() for t in Tensor(a).svd(full_matrices=False))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(u.T @ u, np.eye(9), atol=5e-5)
    np.testing.assert_allclose(v @ v.T, np.eye(9), atol=5e-5)


def test_svd_matches_torch_singular_values() -> None:
    torch = pytest.importorskip("torch")
    a = randn((2, 5, 3))
    _, s, _ = Tensor(a).svd()
    assert_close(s, torch.linalg.svdvals(torch.from_numpy(a)), atol=2e-5)


def test_svd_rejects_1d() -> None:
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        Tensor([1.0, 2.0]).svd()


# -- the kernel pipeline ----------------------------------------------------------------------------


@pytest.mark.kernels
def test_qr_and_svd_on_kernels() -> None:
    a = randn((3, 2))
    q, r = Tensor(a).qr()
    u, s, v = Tensor(a).svd()
    Tensor.realize(q, r, u, s, v)
    want_q, want_r = np.linalg.qr(a, mode="complete")
    assert_close(q, want_q, atol=2e-5)
    assert_close(r, want_r, atol=2e-5)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), atol=2e-5)
    np.testing.assert_allclose(u.numpy() @ diag_matrix(s.numpy(), 3, 2) @ v.numpy(), a, atol=3e-5)
