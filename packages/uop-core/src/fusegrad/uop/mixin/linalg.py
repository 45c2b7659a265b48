"""Matrix factorizations as tensor compositions: ``qr`` (Householder) and ``svd`` (one-sided
Jacobi). Both are batched over leading dims and unrolled at trace time, so the graph (and the
kernels) depend only on the static matrix sizes.

Conventions (tinygrad's, which fusegrad's API follows):

* ``qr()`` returns the *complete* factorization: ``Q`` is (m, m), ``R`` is (m, n), like
  ``numpy.linalg.qr(a, mode="complete")``. ``mode="reduced"`` (our extension, the default of
  ``torch.linalg.qr``) returns ``Q`` (m, k) and ``R`` (k, n), k = min(m, n). The reflectors
  are LAPACK's (``geqrf``): ``R[i, i] = -sign(x0) * norm`` and no reflection where the column
  below the diagonal is already zero, so ``Q`` and ``R`` match NumPy/PyTorch, signs included.
* ``svd()`` returns ``(U, S, V)`` with ``A == U @ diag(S) @ V``: the third factor is the
  transposed right-singular-vector matrix (``Vh`` in NumPy/PyTorch), as tinygrad returns it.
  ``S`` is sorted descending. ``full_matrices=False`` gives the reduced (m, k) / (k, n) forms.
  The Jacobi iteration runs a fixed number of sweeps (``jacobi_sweeps``): enough for float32
  on well-conditioned matrices up to a few hundred columns; there is no convergence test.

Gradients flow through the compositions (every op used is differentiable) but are not
checked against reference derivatives; don't rely on them.
"""

from __future__ import annotations

import math
from typing import Any, Self

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.mixin.base import OpMixinBase

QR_MODES = ("complete", "reduced")


def jacobi_sweeps(k: int) -> int:
    """Sweeps of the cyclic Jacobi iteration for a matrix with ``k`` columns (convergence is
    quadratic once rotations are small; larger matrices need a few more sweeps to get there)."""
    return 4 + max(0, math.ceil(math.log2(max(k, 1))))


def _matrix_dims(t: Any, name: str) -> tuple[int, int]:
    """(m, n) of a batch of matrices; errors name the shape."""
    if t.ndim < 2:
        raise RuntimeError(
            f"linalg.{name}: The input tensor A must have at least 2 dimensions, got {t.shape}"
        )
    m, n = t.shape[-2], t.shape[-1]
    if not isinstance(m, int) or not isinstance(n, int):
        raise TypeError(f"linalg.{name}: symbolic matrix sizes are unsupported, got {t.shape}")
    return int(m), int(n)


def _float_input(t: Any, name: str) -> Any:
    if dtypes.is_float(t.dtype):
        return t
    if t.dtype is dtypes.bool:
        raise RuntimeError(f"linalg.{name}: expected a floating point tensor, got {t.dtype!r}")
    return t.cast(dtypes.default_float)


def _batch_eye(like: Any, n: int) -> Any:
    """The (n, n) identity broadcast over ``like``'s batch dims."""
    eye = type(like).eye(n, device=like.device, dtype=like.dtype)
    return eye.reshape((1,) * (like.ndim - 2) + (n, n)).expand((*like.shape[:-2], n, n))


def _householder(r: Any, q: Any, i: int, rows: Any) -> tuple[Any, Any]:
    """Apply the reflector zeroing ``r[..., i+1:, i]`` to ``r`` (from the left) and accumulate it
    into ``q`` (from the right). LAPACK's dlarfg: beta = -sign(x0) * |x|, v = x - beta e_i,
    H = I - 2 v v^T / (v^T v); H = I when the part below the diagonal is already zero."""
    col = r[..., :, i]  # (..., m)
    x0 = r[..., i : i + 1, i]  # (..., 1)
    tail = (rows > i).where(col, 0.0)
    tail_sq = tail.square().sum(-1, keepdim=True)
    norm = (x0.square() + tail_sq).sqrt()
    beta = (x0 >= 0).where(-norm, norm)
    head = x0 - beta
    v = tail + rows.eq(i).where(head, 0.0)
    active = tail_sq > 0
    tau = active.where(2.0 / active.where(head.square() + tail_sq, 1.0), 0.0)
    v_col = v.unsqueeze(-1)  # (..., m, 1)
    w_col = (tau * v).unsqueeze(-1)
    r = r - w_col @ (v_col.transpose(-1, -2) @ r)
    q = q - (q @ v_col) @ w_col.transpose(-1, -2)
    return r.contiguous(), q.contiguous()


def _rotate_pairs(state: Any, k: int, h: int) -> Any:
    """One parallel Jacobi round: rotate column j with column h + j (j < h) so each pair is
    orthogonal over the first ``k`` rows (the matrix; the rows below accumulate V)."""
    left, right = state[..., :h], state[..., h:]
    lm, rm = left[..., :k, :], right[..., :k, :]
    alpha = lm.square().sum(-2, keepdim=True)
    beta = rm.square().sum(-2, keepdim=True)
    gamma = (lm * rm).sum(-2, keepdim=True)
    rot = gamma.ne(0)
    zeta = (beta - alpha) / (2.0 * rot.where(gamma, 1.0))
    sign = (zeta >= 0).where(1.0, -1.0)
    t = rot.where(sign / (zeta.abs() + (zeta.square() + 1.0).sqrt()), 0.0)
    c = (t.square() + 1.0).rsqrt()
    s = c * t
    return (c * left - s * right).cat(s * left + c * right, dim=-1)


def _next_pairing(state: Any, h: int) -> Any:
    """The round-robin (circle method) step: column 0 stays, the others move one place around
    the circle top[1..h-1] -> bottom[h-1..0] -> top[1]; after 2h - 1 steps the order is back."""
    top, bottom = state[..., :h], state[..., h:]
    new_top = top[..., :1].cat(bottom[..., :1], top[..., 1 : h - 1], dim=-1)
    new_bottom = bottom[..., 1:].cat(top[..., h - 1 :], dim=-1)
    return new_top.cat(new_bottom, dim=-1)


def _jacobi(a: Any) -> tuple[Any, Any]:
    """(W, V) with ``a @ V == W``, V orthogonal and the columns of W mutually orthogonal: the
    one-sided (Hestenes) Jacobi iteration on the (..., k, k) matrices ``a``, all disjoint
    column pairs rotated at once, a fixed number of sweeps."""
    k = int(a.shape[-1])
    state = a.cat(_batch_eye(a, k), dim=-2)  # (..., 2k, k): the matrix over V
    if k % 2:
        state = state.pad((None,) * (state.ndim - 1) + ((0, 1),))  # a zero column never rotates
    h = int(state.shape[-1]) // 2
    for _ in range(jacobi_sweeps(k)):
        for _ in range(2 * h - 1):
            state = _rotate_pairs(state, k, h)
            if h > 1:
                state = _next_pairing(state, h)
            state = state.contiguous()
    return state[..., :k, :k], state[..., k:, :k]


def _orthonormal_columns(w: Any) -> Any:
    """The columns of ``w`` (mutually orthogonal, some maybe zero) normalized: the Q of its QR
    with R's diagonal made positive. Zero columns (zero singular values) get an orthonormal
    completion instead of staying zero, so U is orthogonal for rank-deficient input too."""
    q, r = w.qr()
    k = int(w.shape[-1])
    diag = (r * _batch_eye(r, k)).sum(-1)
    return q * (diag >= 0).where(1.0, -1.0).unsqueeze(-2)


class LinalgMixin(OpMixinBase):
    """qr and svd (mixed into UOp and Tensor)."""

    __slots__ = ()

    def qr(self, mode: str = "complete") -> tuple[Self, Self]:
        """Householder QR of the last two dims: ``(Q, R)`` with ``self == Q @ R``, ``Q``
        orthogonal, ``R`` upper triangular (see the module docstring for shapes and signs).

        >>> from fusegrad.uop import UOp, dtypes
        >>> q, r = UOp.new_buffer("CPU", 6, dtypes.float32).reshape(3, 2).qr()
        >>> q.shape, r.shape
        ((3, 3), (3, 2))
        """
        if mode not in QR_MODES:
            raise ValueError(f"qr: mode must be one of {QR_MODES}, got {mode!r}")
        m, n = _matrix_dims(self, "qr")
        r = _float_input(self, "qr")
        q = _batch_eye(r, m)
        rows = type(self).arange(m, device=self.device)
        for i in range(min(m - 1, n)):
            r, q = _householder(r, q, i, rows)
        r = r.triu()  # exact zeros below the diagonal (rounding leaves ~eps there)
        if mode == "reduced":
            k = min(m, n)
            return q[..., :k], r[..., :k, :]
        return q, r

    def svd(self, full_matrices: bool = True) -> tuple[Self, Self, Self]:
        """Singular value decomposition of the last two dims: ``(U, S, V)`` with
        ``self == U @ diag(S) @ V`` (V is NumPy's ``vh``; see the module docstring).

        >>> from fusegrad.uop import UOp, dtypes
        >>> u, s, v = UOp.new_buffer("CPU", 4, dtypes.float32).reshape(2, 2).svd()
        >>> u.shape, s.shape, v.shape
        ((2, 2), (2,), (2, 2))
        """
        m, n = _matrix_dims(self, "svd")
        a = _float_input(self, "svd")
        tall = m >= n
        work = a if tall else a.transpose(-1, -2)  # (..., p, k) with p >= k
        k = min(m, n)
        q, r = work.qr()
        w, v = _jacobi(r[..., :k, :])
        s, order = w.square().sum(-2).sqrt().sort(dim=-1, descending=True)
        cols = order.unsqueeze(-2).expand(w.shape)
        u_small = _orthonormal_columns(w._gather(-1, cols, None))
        v = v._gather(-1, cols, None)
        u = q[..., :k] @ u_small
        if full_matrices and q.shape[-1] > k:
            u = u.cat(q[..., k:], dim=-1)
        return (u, s, v.transpose(-1, -2)) if tall else (v, s, u.transpose(-1, -2))
