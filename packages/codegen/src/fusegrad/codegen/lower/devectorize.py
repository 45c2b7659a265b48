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
from fusegrad.codegen.lower.dtype_emulation import emulated_dtypes
from fusegrad.codegen.lower.simplify import (
    broadcast,
    gep,
    lanes,
    lanes_in_order,
    pm_index_algebra,
    pm_lanes,
    simplify,
    vectorize,
)
from fusegrad.codegen.lower.walk import nodes
from fusegrad.uop import (
    DType,
    GroupOp,
    Invalid,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    dtypes,
    graph_rewrite,
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
    """Vector widths the target has for ``dt``'s scalar type, widest first (1 always); a
    dtype ``EMULATED_DTYPES`` forces into emulation has none (the emulation is scalar)."""
    if dt.scalar() in emulated_dtypes():
        return (1,)
    have = ctx.renderer.vector_widths.get(dt.scalar(), ())
    return tuple(sorted({1, *have}, reverse=True))


_Key = tuple[UOp, UOp | None, int]


def _key(x: _Lane, offset: int) -> _Key:
    return (x.valid, x.base, offset)


def _aligned(head: _Lane, start: int, width: int, factors: dict[UOp, int]) -> bool:
    """A run of ``width`` lanes from ``head.base + start`` starts at a multiple of ``width``
    (``factors``: each base's ``const_factor``, found once per base)."""
    if start % width:
        return False
    base = head.base
    if base is None:
        return True
    if (factor := factors.get(base)) is None:
        factor = factors[base] = base.const_factor()
    return factor % width == 0


def _runs(ctx: LowerContext, dt: DType, lanes: list[_Lane]) -> list[tuple[int, tuple[int, ...]]]:
    """The accesses covering ``lanes``: (lane whose address starts it, the lane numbers at its
    consecutive addresses). Lanes are grouped by address, not by lane order, so a vector of
    lanes in any order still loads whole aligned runs; repeated addresses share one access."""
    at: dict[_Key, int] = {}
    sharing: dict[_Key, list[int]] = {}  # the lanes at each address
    for k, x in enumerate(lanes):
        if not x.masked_out:
            key = _key(x, x.offset)
            at[key] = k  # a repeated address: the last lane (the last write)
            sharing.setdefault(key, []).append(k)
    done: set[int] = set()
    out: list[tuple[int, tuple[int, ...]]] = []
    options = widths(ctx, dt)
    factors: dict[UOp, int] = {}
    for k, x in enumerate(lanes):
        if k in done:
            continue
        if x.masked_out:
            out.append((k, (k,)))
            done.add(k)
            continue
        for width in options:
            start = x.offset - x.offset % width
            keys = [_key(x, start + j) for j in range(width)]
            if _aligned(x, start, width, factors) and all(key in at for key in keys):
                run = tuple(at[key] for key in keys)
                out.append((run[0], run))
                for key in keys:
                    done.update(sharing[key])
                break
    return out


def _address(ptr: UOp, lane_expr: UOp) -> UOp:
    return ptr.index(lane_expr)


Affine = tuple[UOp | None, tuple[int, ...]]


def _affine(x: UOp, memo: dict[UOp, Affine | None]) -> Affine | None:
    """Vector index ``x`` as one scalar base (None: 0) plus a constant offset per lane, when
    it is built from broadcasts, lane constants, GEPs, sums and products by constants; None
    otherwise (masks, divisions...)."""
    if x in memo:
        return memo[x]
    n = x.dtype.count
    out: Affine | None = None
    if x.op is Ops.VCONST and all(isinstance(v, int) for v in x.arg):
        out = (None, tuple(x.arg))
    elif x.op is Ops.CONST and isinstance(x.arg, int):
        out = (None, (x.arg,) * n)
    elif n == 1 and x.dtype.scalar() is dtypes.weakint and not _has_invalid(x):
        out = (x, (0,))
    elif x.op is Ops.VECTORIZE and all(s is x.src[0] for s in x.src):
        out = _affine(x.src[0], memo) if x.src[0].dtype.count == 1 else None
        out = None if out is None else (out[0], out[1] * n)
    elif x.op is Ops.GEP and (inner := _affine(x.src[0], memo)) is not None:
        out = (inner[0], tuple(inner[1][i] for i in x.arg))
    elif x.op in (Ops.ADD, Ops.MUL) and x.dtype.scalar() is dtypes.weakint:
        out = _affine_binary(x.op, *(_affine(s, memo) for s in x.src))
    memo[x] = out
    return out


def _has_invalid(x: UOp) -> bool:
    return any(u.op is Ops.CONST and u.arg is Invalid for u in nodes(x))


def _affine_binary(op: Ops, a: Affine | None, b: Affine | None) -> Affine | None:
    if a is None or b is None:
        return None
    if op is Ops.ADD:
        base = b[0] if a[0] is None else a[0] if b[0] is None else a[0] + b[0]
        return base, tuple(p + q for p, q in zip(a[1], b[1], strict=True))
    if b[0] is not None:
        a, b = b, a
    if b[0] is not None or len(set(b[1])) != 1:
        return None  # a product of two varying terms, or lanes scaled differently
    c = b[1][0]
    return (None if a[0] is None else a[0] * c), tuple(p * c for p in a[1])


def _constant_out(base: UOp, offsets: tuple[int, ...]) -> Affine:
    """A simplified base's constant term moved into the offsets."""
    tail = base.src[1] if base.op is Ops.ADD else None
    if tail is not None and tail.op is Ops.CONST and isinstance(tail.arg, int):
        return base.src[0], tuple(o + tail.arg for o in offsets)
    if base.op is Ops.CONST and isinstance(base.arg, int):
        return None, tuple(o + base.arg for o in offsets)
    return base, offsets


def _uniform(x: UOp) -> UOp | None:
    """The scalar every lane of ``x`` is (``x`` itself when scalar), or None."""
    if x.dtype.count == 1:
        return x
    if x.op is Ops.VECTORIZE and all(s is x.src[0] for s in x.src):
        return x.src[0]
    if x.op is Ops.CONST:
        return UOp.const(x.arg, x.dtype.scalar())
    return None


def _peel_valid(vidx: UOp) -> tuple[UOp, UOp]:
    """(validity shared by all lanes, the index under it) of ``valid ? idx : Invalid``; (True,
    ``vidx``) when the lanes have no mask or masks that differ."""
    true = UOp.const(True, dtypes.bool)
    if vidx.op is not Ops.WHERE:
        return true, vidx
    cond, invalid = _uniform(vidx.src[0]), _uniform(vidx.src[2])
    if cond is None or invalid is None or invalid.op is not Ops.CONST or invalid.arg is not Invalid:
        return true, vidx
    return cond, vidx.src[1]


def _lane_masks(vidx: UOp) -> tuple[tuple[UOp, ...], UOp] | None:
    """(each lane's simplified mask, the index under them) of ``masks ? idx : Invalid`` whose
    masks differ by lane (a padded or partial tile); None for any other index."""
    if vidx.op is not Ops.WHERE:
        return None
    invalid = _uniform(vidx.src[2])
    if invalid is None or invalid.op is not Ops.CONST or invalid.arg is not Invalid:
        return None
    return lanes(vidx.src[0]), vidx.src[1]


def _masked_lane(mask: UOp, base: UOp | None, offset: int) -> _Lane:
    """Lane ``base + offset`` under its own ``mask``, as ``lanes`` would simplify it: a mask
    decided True drops out, one decided False leaves the lane nothing to access."""
    true = UOp.const(True, dtypes.bool)
    if mask.op is Ops.CONST and mask.arg is False:
        return _Lane(true, None, 0, True)
    return _Lane(true if mask.op is Ops.CONST else mask, base, offset, False)


def _lane_expr(x: _Lane) -> UOp:
    """The scalar address of lane ``x`` put back together from its split (``valid ? base +
    offset : Invalid``; a constant mask is no mask)."""
    if x.masked_out:
        return UOp.invalid(dtypes.weakint)
    base, offset = x.base, x.offset
    expr = UOp.const(offset, dtypes.weakint) if base is None else base + offset if offset else base
    return expr if x.valid.op is Ops.CONST else expr.valid(x.valid)


def _lane_addresses(idx: UOp) -> tuple[list[UOp] | None, list[_Lane]]:
    """Every lane's address split into base + offset, and as a scalar expression where the
    split does not give it back (None: ``_lane_expr`` builds those an access needs). Affine
    indices are split directly (one base for all lanes, under a mask they all share or a mask
    per lane), others simplified lane by lane (one rewrite for all)."""
    valid, vidx = _peel_valid(idx.src[1])
    masked = _lane_masks(vidx) if valid.op is Ops.CONST else None
    affine = _affine(vidx if masked is None else masked[1], {})
    if affine is None:
        exprs = list(lanes(idx.src[1]))
        return exprs, [_split_lane(x) for x in exprs]
    base, offsets = affine if affine[0] is None else _constant_out(simplify(affine[0]), affine[1])
    if masked is not None:
        return None, [_masked_lane(m, base, o) for m, o in zip(masked[0], offsets, strict=True)]
    return None, [_Lane(valid, base, o, False) for o in offsets]


def _start(exprs: list[UOp] | None, lanes: list[_Lane], first: int) -> UOp:
    """The address of lane ``first`` (the start of an access)."""
    return exprs[first] if exprs is not None else _lane_expr(lanes[first])


def _devectorize_load(ctx: LowerContext, ld: UOp) -> UOp | None:
    """LOAD(INDEX(ptr, lane addresses)) -> loads of runs of consecutive lanes."""
    idx = ld.src[0]
    if idx.op is not Ops.INDEX or idx.src[1].dtype.count == 1:
        return None
    exprs, lanes = _lane_addresses(idx)
    runs = _runs(ctx, ld.dtype, lanes)
    if (
        len(runs) == 1
        and len(runs[0][1]) == len(lanes)
        and runs[0][1] == lanes_in_order(len(lanes))
    ):
        # one access of every lane in order: the load itself (what pm_lanes folds the
        # VECTORIZE of its lanes back to)
        return _address(idx.src[0], _start(exprs, lanes, runs[0][0])).load(
            dtype=ld.dtype.scalar().vec(len(lanes))
        )
    where: dict[int, UOp] = {}
    for first, run in runs:
        piece = _address(idx.src[0], _start(exprs, lanes, first)).load(
            dtype=ld.dtype.scalar().vec(len(run))
        )
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
    exprs, lanes = _lane_addresses(idx)
    stores = [
        _address(idx.src[0], _start(exprs, lanes, first)).store(gep(value, run))
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


def _piece_width(s: UOp) -> int | None:
    """The width of the pieces a VECTORIZE of single-lane GEPs puts back together, when each
    run of its lanes is one whole vector in lane order (the chunks of a split op); else None."""
    if s.op is not Ops.VECTORIZE:
        return None
    widest, k = None, 0
    while k < len(s.src):
        g = s.src[k]
        if g.op is not Ops.GEP or len(g.arg) != 1 or g.arg[0] != 0:
            return None
        base, n = g.src[0], g.src[0].dtype.count
        run = s.src[k : k + n]
        if (
            n < 2
            or len(run) != n
            or any(
                x.op is not Ops.GEP or x.src[0] is not base or x.arg != (j,)
                for j, x in enumerate(run)
            )
        ):
            return None
        widest = n if widest is None else min(widest, n)
        k += n
    return widest


def _common_piece(a: UOp) -> int | None:
    """The narrowest piece width of ``a``'s vector sources when every one of them is put
    together from whole pieces (``_piece_width``) or is a constant; else None."""
    found: list[int] = []
    for s in a.src:
        if s.dtype.count == 1 or s.op in (Ops.VCONST, Ops.CONST):
            continue
        if (p := _piece_width(s)) is None:
            return None
        found.append(p)
    return min(found) if found else None


def _devectorize_alu(ctx: LowerContext, a: UOp) -> UOp | None:
    """A vector op of a width the target lacks -> chunks of a width it has (or scalars).
    An op on vectors put together from narrower pieces (a bool OR of two 8-lane compares
    split from 32 lanes) is split into pieces of that width: each chunk then takes whole
    pieces and ``pm_lanes`` folds the lane shuffles away, where one wide op would extract and
    re-insert every lane."""
    count = a.dtype.count
    if count == 1:
        return None
    width = _chunk(ctx, a)
    common = _common_piece(a)
    if common is not None and common < width and count % common == 0:
        width = common if common in widths(ctx, _operand_dtype(a)) else width
    if width == count:
        return None
    parts: list[UOp] = []
    for first in range(0, count, width):
        picks = tuple(range(first, first + width))
        srcs = tuple(gep(s, picks) if s.dtype.count > 1 else s for s in a.src)
        piece = UOp(a.op, a.dtype.scalar().vec(width), srcs, a.arg)
        parts.extend(gep(piece, (k,)) for k in range(width))
    return vectorize(parts)


def _lanes_affine(x: UOp) -> Affine | None:
    """A VECTORIZE of scalar index lanes ``b + c_i`` (or ``b``) of one base ``b`` as
    ``(b, (c_i...))``; None otherwise."""
    if x.op is not Ops.VECTORIZE or any(s.dtype.count != 1 for s in x.src):
        return None
    split = [
        (s.src[0], int(s.src[1].arg))
        if s.op is Ops.ADD and s.src[1].op is Ops.CONST and isinstance(s.src[1].arg, int)
        else (s, 0)
        for s in x.src
    ]
    bases = {b for b, _ in split}
    if len(bases) != 1 or _has_invalid(split[0][0]):
        return None
    return split[0][0], tuple(o for _, o in split)


def _cast_affine(ctx: LowerContext, c: UOp) -> UOp | None:
    """CAST of an index vector that is one scalar plus a constant per lane (an upcast or
    unrolled axis' lanes) to an integer vector the target has -> the cast scalar broadcast
    plus the lane constants: one vector add instead of a scalar add and an insert per lane
    (argmax's ``4096 - column``). The integer sum wraps like each lane's cast would."""
    src, n = c.src[0], c.dtype.count
    if n == 1 or src.dtype.scalar() is not dtypes.weakint or not dtypes.is_int(c.dtype):
        return None
    if widths(ctx, c.dtype) == (1,):
        return None
    if (affine := _affine(src, {}) or _lanes_affine(src)) is None:
        return None
    base, offsets = affine
    scalar = c.dtype.scalar()
    lanes_const = UOp(Ops.VCONST, c.dtype, (), tuple(offsets))
    if base is None:
        return lanes_const
    return broadcast(simplify(base).cast(scalar), n) + lanes_const


def _vector_const(c: UOp) -> UOp | None:
    """A CONST of vector dtype -> VCONST (one value per lane)."""
    if c.dtype.count == 1 or c.arg is Invalid:
        return None
    return UOp(Ops.VCONST, c.dtype, (), (c.arg,) * c.dtype.count)


pm_devectorize_memory = (
    PatternMatcher(
        [
            (UPat(Ops.LOAD, name="ld"), _devectorize_load),  # gather -> vector/scalar loads
            (UPat(Ops.STORE, name="st"), _devectorize_store),  # scatter -> vector/scalar stores
        ]
    )
    + pm_lanes
)
"""Loads and stores, applied bottom-up: an access is split before its vector index is
visited, so index math only ever becomes the per-lane addresses ``lanes`` computes."""

pm_devectorize = (
    PatternMatcher(
        [
            (UPat(Ops.LOAD, name="ld"), _devectorize_load),  # gather -> vector/scalar loads
            (UPat(Ops.STORE, name="st"), _devectorize_store),  # scatter -> vector/scalar stores
            (UPat(Ops.CAST, name="c"), _cast_affine),  # index lanes -> broadcast + lanes
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


def devectorize(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: memory accesses first (bottom-up), then ALU, constants and lanes."""
    sink = graph_rewrite(sink, pm_devectorize_memory, ctx=ctx, bottom_up=True, name="devec mem")
    return graph_rewrite(sink, pm_devectorize, ctx=ctx, name="devectorize")
