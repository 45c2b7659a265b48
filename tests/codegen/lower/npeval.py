"""A NumPy evaluator of scalar UOp graphs: every node computed for a whole array of inputs at
once, with the dtype semantics of ``exec_alu`` for the ops the approximations use. It lets
the transcendental tests evaluate the very UOp graph the pipeline emits on 10^6 points."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from fusegrad.uop import DType, Ops, UOp, dtypes

NP: dict[DType, Any] = {
    dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.uint8: np.uint8,
    dtypes.int16: np.int16, dtypes.uint16: np.uint16, dtypes.int32: np.int32,
    dtypes.uint32: np.uint32, dtypes.int64: np.int64, dtypes.uint64: np.uint64,
    dtypes.float16: np.float16, dtypes.float32: np.float32, dtypes.float64: np.float64,
}  # fmt: skip


def _shift(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda a, b: fn(a, b.astype(a.dtype))


_BINARY: dict[Ops, Callable[..., Any]] = {
    Ops.ADD: np.add, Ops.SUB: np.subtract, Ops.MUL: np.multiply, Ops.FDIV: np.divide,
    Ops.AND: np.bitwise_and, Ops.OR: np.bitwise_or, Ops.XOR: np.bitwise_xor,
    Ops.SHL: _shift(np.left_shift), Ops.SHR: _shift(np.right_shift),
    Ops.CMPLT: np.less, Ops.CMPNE: np.not_equal, Ops.CMPEQ: np.equal,
}  # fmt: skip
_UNARY: dict[Ops, Callable[..., Any]] = {
    Ops.NEG: np.negative, Ops.TRUNC: np.trunc, Ops.SQRT: np.sqrt, Ops.EXP2: np.exp2,
    Ops.LOG2: np.log2, Ops.SIN: np.sin, Ops.RECIPROCAL: np.reciprocal,
}  # fmt: skip


def _round_exact(value: Fraction, np_dt: Any) -> Any:
    """``value`` rounded once to ``np_dt`` (nearest, ties to an even last bit): the float64
    rounding then a float32 one could round twice."""
    near = np_dt(float(value))
    if not np.isfinite(near):
        return near
    picks = [np.nextafter(near, np_dt(-np.inf)), near, np.nextafter(near, np_dt(np.inf))]
    picks = [p for p in picks if np.isfinite(p)]
    dist = [abs(Fraction(float(p)) - value) for p in picks]
    best = min(dist)
    ties = [p for p, d in zip(picks, dist, strict=True) if d == best]
    bits = np.dtype(np_dt).newbyteorder("=").str.replace("f", "u")
    return next((p for p in ties if int(np.array(p).view(bits)) % 2 == 0), ties[0])


def _fma_one(a: Any, b: Any, c: Any, np_dt: Any) -> Any:
    if not all(np.isfinite(x) for x in (a, b, c)):
        return np_dt(np.float64(a) * np.float64(b) + np.float64(c))  # inf/NaN as the FPU
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:
        return np_dt(np.float64(a) * np.float64(b) + np.float64(c))  # the sign of zero
    return _round_exact(exact, np_dt)


def _mulacc32(a: Any, b: Any, c: Any) -> Any:
    """float32 a * b + c rounded once, on whole arrays: the product is exact in float64, the
    float64 sum ``s`` and its error ``e`` (two-sum) are the exact result; rounding ``s`` to
    float32 is right unless ``s`` sits exactly on a float32 midpoint with ``e`` != 0, where
    the result is the neighbour on ``e``'s side."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    e = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    back = r.astype(np.float64)
    other = np.nextafter(r, np.where(s > back, np.float32(np.inf), np.float32(-np.inf)))
    midpoint = (s != back) & (np.abs(s - back) == np.abs(other.astype(np.float64) - s))
    fix = midpoint & (e != 0) & np.isfinite(s)
    return np.where(fix, np.where(e > 0, np.maximum(r, other), np.minimum(r, other)), r)


def _mulacc(a: Any, b: Any, c: Any) -> Any:
    """a * b + c rounded once (``exec_alu``'s fma), element by element, exactly."""
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    if a.dtype == np.float32:
        return _mulacc32(a, b, c)
    np_dt = a.dtype.type
    out = [
        _fma_one(x, y, z, np_dt) for x, y, z in zip(a.ravel(), b.ravel(), c.ravel(), strict=True)
    ]
    return np.array(out, dtype=a.dtype).reshape(a.shape)


def _one(u: UOp, vals: dict[UOp, Any], leaves: dict[UOp, np.ndarray]) -> Any:
    if u in leaves:
        return leaves[u]
    if u.op is Ops.CONST:
        return np.array(u.arg, dtype=NP[u.dtype])
    srcs = [vals[s] for s in u.src]
    if u.op in _BINARY:
        out = _BINARY[u.op](*srcs)
    elif u.op in _UNARY:
        out = _UNARY[u.op](srcs[0])
    elif u.op is Ops.WHERE:
        out = np.where(srcs[0], srcs[1], srcs[2])
    elif u.op is Ops.MULACC:
        out = _mulacc(*srcs)
    elif u.op is Ops.CAST:
        out = np.asarray(srcs[0]).astype(NP[u.dtype])
    elif u.op is Ops.BITCAST:
        out = np.asarray(srcs[0]).view(NP[u.dtype])
    else:
        raise NotImplementedError(f"npeval: {u.op!r}")
    return np.asarray(out).astype(NP[u.dtype], copy=False)


def np_eval(root: UOp, leaves: dict[UOp, np.ndarray]) -> np.ndarray:
    """``root`` evaluated with each leaf UOp in ``leaves`` set to an array."""
    vals: dict[UOp, Any] = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for u in root.toposort():
            vals[u] = _one(u, vals, leaves)
    return np.broadcast_to(vals[root], next(iter(leaves.values())).shape)
