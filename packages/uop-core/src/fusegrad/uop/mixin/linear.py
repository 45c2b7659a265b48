"""Linear algebra on tensors: dot/matmul (batched, broadcast), einsum, linear, sequential."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Self

from fusegrad.uop.dtype import dtypes, least_upper_dtype, sum_acc_dtype, to_dtype
from fusegrad.uop.mixin.base import OpMixinBase


def _mm_error(a: Any, b: Any) -> RuntimeError:
    sa = "x".join(str(s) for s in a.shape)
    sb = "x".join(str(s) for s in b.shape)
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})")


class LinearMixin(OpMixinBase):
    """matmul, dot, einsum, linear, sequential (mixed into UOp and Tensor)."""

    __slots__ = ()

    def dot(self, w: Self, dtype: Any = None) -> Self:
        """Matrix product with PyTorch's rules for 1-d operands and batch broadcasting."""
        w = self._operand(w)
        if self.ndim == 0 or w.ndim == 0:
            raise RuntimeError(
                f"both arguments to matmul need to be at least 1D, but they are {self.ndim}D and {w.ndim}D"
            )
        k_self = self.shape[-1]
        k_w = w.shape[-2] if w.ndim > 1 else w.shape[0]
        if k_self != k_w:
            if self.ndim == 1 and w.ndim == 1:
                raise RuntimeError(
                    f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src "
                    f"[{w.shape[0]}] to have the same number of elements"
                )
            raise _mm_error(self, w)
        dt = least_upper_dtype(self.dtype, w.dtype)
        x = self.cast(dt)
        y = w.cast(dt)
        x2 = x.reshape(1, -1) if x.ndim == 1 else x
        y2 = y.reshape(-1, 1) if y.ndim == 1 else y
        prod = x2.unsqueeze(-2) * y2.transpose(-1, -2).unsqueeze(-3)
        acc = to_dtype(dtype) if dtype is not None else sum_acc_dtype(dt)
        out = prod.sum(-1, dtype=acc)
        if dtype is None:
            out = out.cast(dt) if dtypes.is_float(dt) else out
        if self.ndim == 1:
            out = out.squeeze(-2)
        if w.ndim == 1:
            out = out.squeeze(-1)
        return out

    def matmul(self, x: Self, reverse: bool = False, dtype: Any = None) -> Self:
        """self @ x (x @ self when ``reverse``)."""
        return self._operand(x).dot(self, dtype) if reverse else self.dot(x, dtype)

    def einsum(self: Any, formula: Any = None, *operands: Any, dtype: Any = None) -> Any:
        """Einstein summation: ``Tensor.einsum("ij,jk->ik", a, b)`` or ``a.einsum(formula, b)``."""
        if isinstance(self, str):
            return _einsum(self, [formula, *operands], dtype)
        return _einsum(formula, [self, *operands], dtype)

    def linear(self, weight: Self, bias: Self | None = None, dtype: Any = None) -> Self:
        """self @ weight + bias (weight is (in, out); a 1-d weight scales)."""
        x = self.mul(weight) if weight.ndim == 1 else self.dot(weight, dtype)
        return x.add(bias) if bias is not None else x

    def sequential(self, ll: Sequence[Callable[[Self], Self]]) -> Self:
        """Apply each callable in turn."""
        return functools.reduce(lambda x, f: f(x), ll, self)


def _einsum(formula: str, tensors: list[Any], dtype: Any) -> Any:
    lhs, arrow, rhs_text = formula.replace(" ", "").partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(tensors):
        raise ValueError(
            f"einsum: {len(inputs)} operand specs in {formula!r} for {len(tensors)} tensors"
        )
    inputs, rhs = _expand_ellipsis(inputs, rhs_text if arrow else None, tensors)
    letters = sorted(set("".join(inputs)))
    if rhs is None:
        counts = "".join(inputs)
        rhs = "".join(c for c in letters if counts.count(c) == 1)
    sizes: dict[str, Any] = {}
    aligned = []
    for raw_spec, raw_t in zip(inputs, tensors, strict=True):
        if len(raw_spec) != raw_t.ndim:
            raise ValueError(
                f"einsum: {raw_spec!r} has {len(raw_spec)} letters for a tensor of {raw_t.ndim} dims"
            )
        t, spec = _take_diagonals(raw_t, raw_spec)
        for c, s in zip(spec, t.shape, strict=True):
            if c in sizes and s not in (sizes[c], 1) and sizes[c] != 1:
                raise RuntimeError(f"einsum: size of {c!r} differs: {sizes[c]} vs {s}")
            sizes[c] = s if c not in sizes or sizes[c] == 1 else sizes[c]
        order = sorted(range(len(spec)), key=lambda i: letters.index(spec[i]))
        t = t.permute(order) if order else t
        present = [spec[i] for i in order]
        aligned.append((t, present))
    full = [sizes[c] for c in letters]
    out: Any | None = None
    for t, present in aligned:
        view = [t.shape[present.index(c)] if c in present else 1 for c in letters]
        term = t.reshape(view).expand(full) if view else t
        out = term if out is None else out * term
    assert out is not None
    reduce_axes = tuple(i for i, c in enumerate(letters) if c not in rhs)
    if reduce_axes:
        out = out.sum(reduce_axes, dtype=dtype)
    kept = [c for c in letters if c in rhs]
    return out.permute([kept.index(c) for c in rhs]) if rhs else out


def _expand_ellipsis(
    inputs: list[str], rhs: str | None, tensors: list[Any]
) -> tuple[list[str], str | None]:
    if not any("..." in s for s in inputs):
        return inputs, rhs
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in "".join(inputs)]
    most = 0
    out = []
    for spec, t in zip(inputs, tensors, strict=True):
        if "..." in spec:
            k = t.ndim - (len(spec) - 3)
            most = max(most, k)
            out.append(spec.replace("...", "".join(spare[most - k : most]) if k else ""))
        else:
            out.append(spec)
    ell = "".join(spare[:most])
    if rhs is None:
        counts = "".join(out)
        rhs = ell + "".join(c for c in sorted(set(counts)) if counts.count(c) == 1 and c not in ell)
    else:
        rhs = rhs.replace("...", ell)
    return out, rhs


def _take_diagonals(t: Any, spec: str) -> tuple[Any, str]:
    while len(set(spec)) < len(spec):
        c = next(ch for ch in spec if spec.count(ch) > 1)
        i = spec.index(c)
        j = spec.index(c, i + 1)
        t = t.diagonal(0, i, j)
        spec = "".join(ch for k, ch in enumerate(spec) if k not in (i, j)) + c
    return t, spec
