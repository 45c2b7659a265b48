"""Lower ``weakint`` index math to int32 where range analysis proves every intermediate value
fits, int64 otherwise (always int64 when the renderer prefers it: ``index_dtype_32=False``).

Each node decides for itself from its exact (unbounded) value range and its operands'; an
operand of another width is cast. Variables become int32 scalar parameters (the calling
convention), so their ranges must fit in int32. Uncommitted float literals (``weakfloat``)
take the default float.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import DType, GroupOp, Ops, UOp, commit_weak, dtypes

_I32 = (-(2**31), 2**31 - 1)


def _fits32(u: UOp) -> bool:
    lo, hi = u.vmin, u.vmax
    return bool(_I32[0] <= lo <= hi <= _I32[1]) or lo > hi


def _weak(u: UOp) -> bool:
    return u.dtype.scalar() is dtypes.weakint


def _width(u: UOp, ctx: LowerContext) -> DType:
    """int32 or int64 for weakint node ``u`` (and the weakint operands of a comparison)."""
    operands = [s for s in u.src if _weak(s)]
    ok = ctx.renderer.index_dtype_32 and all(_fits32(x) for x in (u, *operands) if _weak(x))
    return dtypes.int32 if ok else dtypes.int64


def _as(x: UOp, dt: DType) -> UOp:
    if x.dtype is dt:
        return x
    if x.op is Ops.CONST and not x.src:
        return UOp.const(dt, x.arg)
    return x.cast(dt)


def _variable(u: UOp) -> UOp:
    name, lo, hi = u.arg
    if not (_I32[0] <= lo <= hi <= _I32[1]):
        raise ValueError(f"lower: Variable {name!r} range [{lo}, {hi}] does not fit int32")
    return UOp(Ops.PARAM, dtypes.int32, (), u.arg)


def _lower_one(u: UOp, srcs: list[UOp], ctx: LowerContext) -> UOp:
    if u.op is Ops.DEFINE_VAR:
        return _variable(u)
    if u.dtype.scalar() is dtypes.weakfloat:  # an uncommitted float literal: the default float
        dt = commit_weak(u.dtype)
        return UOp.const(dt, u.arg) if u.op is Ops.CONST else u.replace(dtype=dt, src=tuple(srcs))
    weak_out = _weak(u)
    compare = u.op in GroupOp.Comparison and _weak(u.src[0])
    if not weak_out and not compare:
        return (
            u
            if all(a is b for a, b in zip(srcs, u.src, strict=True))
            else u.replace(src=tuple(srcs))
        )
    dt = _width(u, ctx)
    if u.op is Ops.CONST:
        return UOp.const(dt.vec(u.dtype.count), u.arg)
    if u.op is Ops.VCONST:
        return UOp.const(dt.vec(u.dtype.count), u.arg)
    out_dt = dt.vec(u.dtype.count) if weak_out else u.dtype
    if u.op is Ops.CAST and srcs[0].dtype is out_dt:
        return srcs[0]  # a fixed-width int read as index math: already of the chosen width
    cast = [
        _as(n, dt.vec(n.dtype.count)) if _weak(o) else n for o, n in zip(u.src, srcs, strict=True)
    ]
    return u.replace(dtype=out_dt, src=tuple(cast))


def lower_index_dtype(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: every weakint node rebuilt as int32/int64."""
    new: dict[UOp, UOp] = {}
    for u in toposort(sink):
        new[u] = _lower_one(u, [new[s] for s in u.src], ctx)
    return new[sink]
