"""A NumPy evaluator of scalar UOp graphs: every node computed for a whole array of inputs at
once, with the dtype semantics of ``exec_alu`` for the ops the approximations use. It lets
the transcendental tests evaluate the very UOp graph the pipeline emits on 10^6 points."""

from __future__ import annotations

import warnings
from collections.abc import Callable
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
