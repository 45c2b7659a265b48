"""Expand UPCAST/UNROLL axes into vector lanes.

A RANGE of type UPCAST or UNROLL with a constant end ``n`` becomes the lane numbers
``VCONST(0..n-1)``, wrapped in ``UNROLL(vector, arg=((axis, n), ...))`` that records which
axes the lanes stand for (row-major, axes by id). Every op with an UNROLL source becomes the
same op on vectors over the union of its sources' axes (sources are permuted or broadcast to
that lane order with GEP/VECTORIZE). A REDUCE over UNROLL axes combines their lanes with the
reduce op ("contraction") and keeps reducing over its remaining loop ranges; an END drops
the axes it closed. What comes out has no UNROLL left: loads and stores with vector indices
(gathers/scatters, grouped into real vector accesses by ``devectorize``) and vector ALU.
"""

from __future__ import annotations

import itertools

from fusegrad.codegen.lower.simplify import broadcast, gep
from fusegrad.uop import AxisType, GroupOp, Ops, PatternMatcher, UOp, UPat, dtypes, prod

Axes = tuple[tuple[int, int], ...]


def _unroll(inner: UOp, axes: Axes) -> UOp:
    return UOp(Ops.UNROLL, inner.dtype, (inner,), axes)


def _lane_of(values: dict[int, int], axes: Axes) -> int:
    """The row-major lane number of the axis values ``values`` in lane order ``axes``."""
    lane = 0
    for axis, size in axes:
        lane = lane * size + values.get(axis, 0)
    return lane


def _all_values(axes: Axes) -> list[dict[int, int]]:
    """Every combination of values of ``axes``, in lane order."""
    combos = itertools.product(*(range(size) for _, size in axes))
    return [dict(zip((a for a, _ in axes), combo, strict=True)) for combo in combos]


def _swizzle(inner: UOp, have: Axes, want: Axes) -> UOp:
    """Vector ``inner`` (lanes over ``have``) permuted/broadcast to lanes over ``want``."""
    if have == want:
        return inner
    return gep(inner, tuple(_lane_of(v, have) for v in _all_values(want)))


def _union(*axes: Axes) -> Axes:
    return tuple(sorted(set(itertools.chain(*axes))))


def _range_to_lanes(rng: UOp) -> UOp | None:
    """RANGE(n) of an UPCAST/UNROLL axis -> UNROLL(VCONST(0..n-1))."""
    if rng.arg[1] not in (AxisType.UPCAST, AxisType.UNROLL):
        return None
    end = rng.src[0]
    if end.op is not Ops.CONST or not isinstance(end.arg, int):
        raise ValueError(f"expand: {rng.arg[1]!r} axis {rng.arg[0]} needs a constant size")
    lanes = UOp.vconst(tuple(range(end.arg)), dtypes.weakint.vec(end.arg))
    return _unroll(lanes, ((rng.arg[0], end.arg),))


def _operand(s: UOp, axes: Axes, count: int) -> UOp:
    if s.op is Ops.UNROLL and s.src[0].op is Ops.INDEX:  # an address: permute its lanes
        idx = s.src[0]
        moved = (_swizzle(x, s.arg, axes) for x in idx.src[1:])
        return idx.replace(src=(idx.src[0], *moved))
    if s.op is Ops.UNROLL:
        return _swizzle(s.src[0], s.arg, axes)
    if s.op is Ops.INDEX:  # a store's address that does not vary with the lanes
        return s.replace(src=(s.src[0], *(broadcast(x, count) for x in s.src[1:])))
    return broadcast(s, count)


def _expand_op(x: UOp) -> UOp | None:
    """op(..., UNROLL(v), ...) -> UNROLL(op over lane vectors)."""
    unrolled = [s.arg for s in x.src if s.op is Ops.UNROLL]
    if not unrolled:
        return None
    axes = _union(*unrolled)
    count = prod(size for _, size in axes)
    srcs = [_operand(s, axes, count) for s in x.src]
    if x.op is Ops.INDEX:
        srcs[0] = x.src[0]  # the buffer itself stays one pointer
    dtype = x.dtype if x.op in (Ops.INDEX, Ops.STORE) else x.dtype.vec(count)
    return _unroll(UOp(x.op, dtype, tuple(srcs), x.arg), axes)


def _combine(op: Ops, parts: list[UOp]) -> UOp:
    out = parts[0]
    for p in parts[1:]:
        out = UOp(op, out.dtype, (out, p))
    return out


def _expand_reduce(red: UOp) -> UOp | None:
    """REDUCE over UNROLL axes: combine their lanes, keep reducing over the loop ranges."""
    value, ranges = red.src[0], red.src[1:]
    reduced = _union(*(r.arg for r in ranges if r.op is Ops.UNROLL))
    loops = tuple(r for r in ranges if r.op is not Ops.UNROLL)
    if not reduced and value.op is not Ops.UNROLL:
        return None
    have: Axes = value.arg if value.op is Ops.UNROLL else ()
    kept = tuple(a for a in have if a not in reduced)
    every = _union(have, reduced)
    vec = (
        _swizzle(value.src[0], have, every) if have else broadcast(value, prod(s for _, s in every))
    )
    parts = []
    for fixed in _all_values(reduced):
        lanes = tuple(_lane_of({**v, **fixed}, every) for v in _all_values(kept))
        parts.append(gep(vec, lanes))
    combined = _combine(red.arg, parts)
    out = UOp(Ops.REDUCE, combined.dtype, (combined, *loops), red.arg) if loops else combined
    return _unroll(out, kept) if kept else out


def _expand_end(e: UOp) -> UOp | None:
    """END over UNROLL axes -> END over the loop ranges only (the lanes are done)."""
    x, ranges = e.src[0], e.src[1:]
    if x.op is not Ops.UNROLL and not any(r.op is Ops.UNROLL for r in ranges):
        return None
    inner = x.src[0] if x.op is Ops.UNROLL else x
    keep = tuple(r for r in ranges if r.op is not Ops.UNROLL)
    return inner.end(*keep) if keep else inner


def _unwrap_sink(sink: UOp) -> UOp | None:
    if not any(s.op is Ops.UNROLL for s in sink.src):
        return None
    return sink.replace(src=tuple(s.src[0] if s.op is Ops.UNROLL else s for s in sink.src))


_lane_wise = GroupOp.ALU | {Ops.CAST, Ops.BITCAST, Ops.INDEX, Ops.LOAD, Ops.STORE}

pm_expand = PatternMatcher(
    [
        (UPat(Ops.RANGE, name="rng"), _range_to_lanes),  # RANGE(n) upcast -> lanes 0..n-1
        (UPat(Ops.REDUCE, name="red"), _expand_reduce),  # contract UNROLL axes
        (UPat(Ops.END, name="e"), _expand_end),  # END(x, lanes) -> x
        (UPat(_lane_wise, name="x"), _expand_op),  # op(UNROLL...) -> UNROLL(vector op)
        (UPat(Ops.SINK, name="sink"), _unwrap_sink),  # SINK(UNROLL(x)) -> SINK(x)
    ]
)
