"""Lower ``weakint`` index math to int32 where range analysis proves every intermediate value
fits, int64 otherwise (always int64 when the renderer prefers it: ``index_dtype_32=False``).

Each node decides for itself from its exact (unbounded) value range and its operands'; an
operand of another width is cast. A node used only in the addresses of gated accesses needs
only its range where those gates hold (``validity.gate_bounds``): a gathered row ``e`` with
the gate ``0 <= e < 10`` has address ``e * 4`` in [0, 36], int32, although ``e`` is any
int32 (where the gate is false the address may wrap: it is never dereferenced). Variables
become int32 scalar parameters (the calling convention), so their ranges must fit in int32.
Uncommitted float literals (``weakfloat``) take the default float.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.validity import Bounds, gate_bounds, given
from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import DType, GroupOp, Ops, UOp, commit_weak, dtypes

_I32 = (-(2**31), 2**31 - 1)
Ranges = dict[UOp, tuple[int, int]]


def _fits32(u: UOp, ranges: Ranges) -> bool:
    lo, hi = ranges.get(u, (u.vmin, u.vmax))
    return bool(_I32[0] <= lo <= hi <= _I32[1]) or lo > hi


def _weak(u: UOp) -> bool:
    return u.dtype.scalar() is dtypes.weakint


def _width(u: UOp, ctx: LowerContext, ranges: Ranges) -> DType:
    """int32 or int64 for weakint node ``u`` (and the weakint operands of a comparison)."""
    operands = [s for s in u.src if _weak(s)]
    ok = ctx.renderer.index_dtype_32 and all(_fits32(x, ranges) for x in (u, *operands) if _weak(x))
    return dtypes.int32 if ok else dtypes.int64


def _gated_address_of(v: UOp, u: UOp) -> bool:
    return v.op is Ops.INDEX and len(v.src) == 3 and v.src[1] is u and v.src[2] is not u


def _gated_uses(order: list[UOp]) -> dict[UOp, set[UOp] | None]:
    """For each weakint node, the gated INDEXes whose address alone uses it, or None when
    some use is not such an address (a gate, a cast to a value, an ungated address...)."""
    users: dict[UOp, list[UOp]] = {}
    for u in order:
        for s in u.src:
            users.setdefault(s, []).append(u)
    uses: dict[UOp, set[UOp] | None] = {}
    for u in reversed(order):  # users first
        if not _weak(u):
            continue
        found: set[UOp] = set()
        for v in users.get(u, ()):
            inner = {v} if _gated_address_of(v, u) else uses.get(v) if _weak(v) else None
            if inner is None:
                break
            found |= inner
        else:
            uses[u] = found or None
            continue
        uses[u] = None
    return uses


def _gated_ranges(order: list[UOp]) -> Ranges:
    """The value range of each weakint node whose every use is a gated address, where those
    gates hold (only nodes whose own range does not fit int32 are looked at)."""
    uses = _gated_uses(order)
    bounds: dict[UOp, Bounds] = {}
    memos: dict[UOp, dict[UOp, UOp]] = {}
    out: Ranges = {}
    for u, gated in uses.items():
        if gated is None or _fits32(u, out):
            continue
        lows, highs = [], []
        for index in gated:
            if index not in bounds:
                bounds[index] = gate_bounds(index.src[2])
            narrowed = given(u, bounds[index], memos.setdefault(index, {}))
            lows.append(int(narrowed.vmin))
            highs.append(int(narrowed.vmax))
        out[u] = (min(lows), max(highs))
    return out


def _as(x: UOp, dt: DType) -> UOp:
    if x.dtype is dt:
        return x
    if x.op is Ops.CONST and not x.src:
        return UOp.const(x.arg, dt)
    return x.cast(dt)


def _variable(u: UOp) -> UOp:
    name, lo, hi = u.arg[:3]  # a 4th item is multiple_of
    if not (_I32[0] <= lo <= hi <= _I32[1]):
        raise ValueError(f"lower: Variable {name!r} range [{lo}, {hi}] does not fit int32")
    return UOp(Ops.PARAM, dtypes.int32, (), u.arg)


def _lower_one(u: UOp, srcs: list[UOp], ctx: LowerContext, ranges: Ranges) -> UOp:
    if u.op is Ops.DEFINE_VAR:
        return _variable(u)
    if u.dtype.scalar() is dtypes.weakfloat:  # an uncommitted float literal: the default float
        dt = commit_weak(u.dtype)
        return UOp.const(u.arg, dt) if u.op is Ops.CONST else u.replace(dtype=dt, src=tuple(srcs))
    weak_out = _weak(u)
    compare = u.op in GroupOp.Comparison and _weak(u.src[0])
    if not weak_out and not compare:
        return (
            u
            if all(a is b for a, b in zip(srcs, u.src, strict=True))
            else u.replace(src=tuple(srcs))
        )
    dt = _width(u, ctx, ranges)
    if u.op is Ops.CONST:
        return UOp.const(u.arg, dt.vec(u.dtype.count))
    if u.op is Ops.VCONST:
        return UOp.vconst(u.arg, dt.vec(u.dtype.count))
    out_dt = dt.vec(u.dtype.count) if weak_out else u.dtype
    if u.op is Ops.CAST and srcs[0].dtype is out_dt:
        return srcs[0]  # a fixed-width int read as index math: already of the chosen width
    cast = [
        _as(n, dt.vec(n.dtype.count)) if _weak(o) else n for o, n in zip(u.src, srcs, strict=True)
    ]
    return u.replace(dtype=out_dt, src=tuple(cast))


def lower_index_dtype(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: every weakint node rebuilt as int32/int64."""
    order = toposort(sink)
    ranges = _gated_ranges(order) if ctx.renderer.index_dtype_32 else {}
    new: dict[UOp, UOp] = {}
    for u in order:
        new[u] = _lower_one(u, [new[s] for s in u.src], ctx, ranges)
    return new[sink]
