"""Devectorize what the target can't do natively.

After expansion, loads and stores take a vector of indices (one per lane: a gather or a
scatter) and ALU ops work on vectors of any width. Here every access is split into runs of
lanes at consecutive, aligned addresses with the same mask, each run one load/store of a
width the renderer lists in ``vector_widths`` (else one element), and every vector ALU op of
an unsupported width is split into chunks of a supported width (else scalars). Lanes are put
back together with VECTORIZE/GEP, which ``pm_lanes`` folds away wherever pieces line up.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.simplify import gep, lanes, pm_index_algebra, pm_lanes, vectorize
from fusegrad.uop import (
    DType,
    GroupOp,
    Invalid,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    symbolic_simple,
)


@dataclass(frozen=True, slots=True)
class _Lane:
    """One lane's address: ``valid ? base + offset : masked`` (``base`` None: a constant)."""

    valid: UOp
    base: UOp | None
    offset: int
    masked_out: bool


def _split_lane(x: UOp) -> _Lane:
    valid, idx = x.get_valid(), x.get_idx()
    if idx.op is Ops.CONST and idx.arg is Invalid:
        return _Lane(valid, None, 0, True)
    if idx.op is Ops.CONST:
        return _Lane(valid, None, int(idx.arg), False)
    if idx.op is Ops.ADD and idx.src[1].op is Ops.CONST:
        return _Lane(valid, idx.src[0], int(idx.src[1].arg), False)
    return _Lane(valid, idx, 0, False)


def widths(ctx: LowerContext, dt: DType) -> tuple[int, ...]:
    """Vector widths the target has for ``dt``'s scalar type, widest first (1 always)."""
    have = ctx.renderer.vector_widths.get(dt.scalar(), ())
    return tuple(sorted({1, *have}, reverse=True))


_Key = tuple[UOp, UOp | None, int]


def _key(x: _Lane, offset: int) -> _Key:
    return (x.valid, x.base, offset)


def _aligned(head: _Lane, start: int, width: int) -> bool:
    factor = head.base.const_factor() if head.base is not None else 0
    return start % width == 0 and factor % width == 0


def _runs(ctx: LowerContext, dt: DType, lanes: list[_Lane]) -> list[tuple[int, tuple[int, ...]]]:
    """The accesses covering ``lanes``: (lane whose address starts it, the lane numbers at its
    consecutive addresses). Lanes are grouped by address, not by lane order, so a vector of
    lanes in any order still loads whole aligned runs; repeated addresses share one access."""
    at: dict[_Key, int] = {}
    for k, x in enumerate(lanes):
        if not x.masked_out:
            at[_key(x, x.offset)] = k  # a repeated address: the last lane (the last write)
    done: set[int] = set()
    out: list[tuple[int, tuple[int, ...]]] = []
    for k, x in enumerate(lanes):
        if k in done:
            continue
        if x.masked_out:
            out.append((k, (k,)))
            done.add(k)
            continue
        for width in widths(ctx, dt):
            start = x.offset - x.offset % width
            keys = [_key(x, start + j) for j in range(width)]
            if _aligned(x, start, width) and all(key in at for key in keys):
                run = tuple(at[key] for key in keys)
                out.append((run[0], run))
                done.update(
                    j for j, y in enumerate(lanes) if not y.masked_out and _key(y, y.offset) in keys
                )
                break
    return out


def _address(ptr: UOp, lane_expr: UOp) -> UOp:
    return ptr.index(lane_expr)


def _lane_addresses(idx: UOp) -> list[UOp]:
    """Every lane of the vector index as a simplified scalar expression (one rewrite of all
    lanes together, so the parts they share are simplified once)."""
    vidx = idx.src[1]
    return list(lanes(vidx))


def _devectorize_load(ctx: LowerContext, ld: UOp) -> UOp | None:
    """LOAD(INDEX(ptr, lane addresses)) -> loads of runs of consecutive lanes."""
    idx = ld.src[0]
    if idx.op is not Ops.INDEX or idx.src[1].dtype.count == 1:
        return None
    exprs = _lane_addresses(idx)
    lanes = [_split_lane(x) for x in exprs]
    where: dict[int, UOp] = {}
    for first, run in _runs(ctx, ld.dtype, lanes):
        piece = _address(idx.src[0], exprs[first]).load(dtype=ld.dtype.scalar().vec(len(run)))
        for pos, k in enumerate(run):
            where[k] = gep(piece, (pos,))
    # masked-out lanes read nothing: their key must not stand in for a real lane's address
    by_address = {
        _key(x, x.offset): where[k] for k, x in enumerate(lanes) if k in where and not x.masked_out
    }
    return vectorize(
        [where[k] if k in where else by_address[_key(x, x.offset)] for k, x in enumerate(lanes)]
    )


def _devectorize_store(ctx: LowerContext, st: UOp) -> UOp | None:
    """STORE(INDEX(ptr, lane addresses), v) -> stores of runs of consecutive lanes."""
    idx, value = st.src
    if idx.op is not Ops.INDEX or idx.src[1].dtype.count == 1:
        return None
    exprs = _lane_addresses(idx)
    lanes = [_split_lane(x) for x in exprs]
    stores = [
        _address(idx.src[0], exprs[first]).store(gep(value, run))
        for first, run in _runs(ctx, value.dtype, lanes)
    ]
    return stores[0] if len(stores) == 1 else UOp(Ops.GROUP, src=tuple(stores))


def _operand_dtype(a: UOp) -> DType:
    if a.op in GroupOp.Comparison:
        return a.src[0].dtype
    if a.op is Ops.WHERE:
        return a.src[1].dtype
    return a.dtype


def _chunk(ctx: LowerContext, a: UOp) -> int:
    count = a.dtype.count
    dts = [_operand_dtype(a)] + ([a.src[0].dtype] if a.op in (Ops.CAST, Ops.BITCAST) else [])
    options = [w for w in widths(ctx, dts[0]) if count % w == 0]
    return next(w for w in options if all(w in widths(ctx, d) for d in dts))


def _devectorize_alu(ctx: LowerContext, a: UOp) -> UOp | None:
    """A vector op of a width the target lacks -> chunks of a width it has (or scalars)."""
    count = a.dtype.count
    if count == 1 or (width := _chunk(ctx, a)) == count:
        return None
    parts: list[UOp] = []
    for first in range(0, count, width):
        picks = tuple(range(first, first + width))
        srcs = tuple(gep(s, picks) if s.dtype.count > 1 else s for s in a.src)
        piece = UOp(a.op, a.dtype.scalar().vec(width), srcs, a.arg)
        parts.extend(gep(piece, (k,)) for k in range(width))
    return vectorize(parts)


def _vector_const(c: UOp) -> UOp | None:
    """A CONST of vector dtype -> VCONST (one value per lane)."""
    if c.dtype.count == 1 or c.arg is Invalid:
        return None
    return UOp(Ops.VCONST, c.dtype, (), (c.arg,) * c.dtype.count)


pm_devectorize = (
    PatternMatcher(
        [
            (UPat(Ops.LOAD, name="ld"), _devectorize_load),  # gather -> vector/scalar loads
            (UPat(Ops.STORE, name="st"), _devectorize_store),  # scatter -> vector/scalar stores
            (
                UPat(GroupOp.ALU | {Ops.CAST, Ops.BITCAST}, name="a"),
                _devectorize_alu,
            ),  # vec op -> supported chunks
            (UPat(Ops.CONST, name="c"), _vector_const),  # CONST vec -> VCONST
        ]
    )
    + pm_lanes
    + symbolic_simple
    + pm_index_algebra
)
