"""Opts that split a loop for caches and vectors: TILE (cache blocking) and PARTIALS (vector
partial sums).

**TILE**: a reduction split into tiles, the loop over tiles around the output loops.

``Opt(TILE, axis, n)`` on a reduce axis ``k`` of size ``K`` (a multiple of ``n``) turns::

    for outputs o:                          for t in [0, K/n):          (AxisType.OUTER)
        out[o] = f(sum_k x(o, k))    ->         for outputs o:
                                                    acc = (t == 0 ? 0 : out[o]) + sum_{k<n} x(o, t*n+k)
                                                    out[o] = t == K/n - 1 ? f(acc) : acc

so the inner loops over the outputs reuse one tile of the operands (``n`` rows of a matmul's
B, ``n`` columns of A) from cache instead of streaming whole rows of K for every block of
outputs; the partial sums go through the output buffer once per tile. It is the K-blocking
of a CPU GEMM, for caches (registers are UPCAST/UNROLL's job).

It applies to a kernel with one STORE whose value reaches the tiled ADD (or MAX) reduce through
elementwise ops only (``f``: a bias, an activation; computed on the last tile), whose output
buffer is not read elsewhere in the kernel, with the reduce's dtype stored as is (partial
sums are kept in the output exactly; a MAX reduce keeps running maxima the same way).
Targets with workgroups don't take it (their output threads own no loop to put around).

TILE on an output (LOOP) axis ``i`` (a multiple of ``n``) only reorders loops: ``i -> t * n + i'``
with the loop over ``t`` (OUTER) around all the others and ``i'`` in ``i``'s place, so the
loops inside work on ``n`` values of ``i`` at a time. A matmul reading B in panels loops
over the panels outside its row blocks; tiling the row blocks keeps ``n`` of them (a block
of A) in L2 while every panel streams past them, where A would otherwise stream from L3 once
per panel (BLAS's ``mc`` blocking).

**PARTIALS**: ``Opt(PARTIALS, axis, n)`` on a reduce axis ``k`` (a multiple of ``n``)::

    red(x(k) for k)  ->  red(red(x(t*n + u) for t) for u in lanes)     u: an UNROLL axis

The inner reduction keeps ``n`` partial results (one per lane ``u``: a vector accumulator);
the outer one combines the lanes once, after the loop. When the operands are contiguous
along ``k`` (``x @ W.T``, ``q @ k.T``), every step is whole-vector loads and lane-wise
multiply-adds. UNROLL instead combines its lanes on every iteration (horizontal adds in the
loop). Apply it after the UPCASTs, so its lanes are the innermost (the contiguous ones).
"""

from __future__ import annotations

from fusegrad.codegen.opt.kernel import (
    MAX_LANES,
    MAX_UPCAST,
    Opt,
    _amount,
    _axis,
    _check,
    _fix_range_lists,
    _masked,
    _next_axis_id,
    _quotient,
    axes_of,
    lane_count,
    nodes_of,
)
from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import AxisType, GroupOp, Ops, UOp

#: ops a store's value may apply to the tiled reduce's result (recomputed on every tile)
_ELEMENTWISE = GroupOp.ALU | {Ops.CAST}


def _depends_on(value: UOp, red: UOp) -> list[UOp]:
    """The nodes of ``value`` that ``red`` feeds (``red`` itself included)."""
    feeds: set[UOp] = set()
    for u in value.toposort(gate=lambda x: x is not red):
        if u is red or any(s in feeds for s in u.src):
            feeds.add(u)
    return [u for u in feeds if u is not red]


def _the_store(ast: UOp, opt: Opt) -> UOp:
    stores = nodes_of(ast, Ops.STORE)
    _check(len(stores) == 1, opt, f"TILE needs a kernel with one STORE, it has {len(stores)}")
    store = stores[0]
    buf = store.src[0].src[0]
    _check(buf.op is Ops.PARAM, opt, "TILE needs a store to a kernel buffer (PARAM)")
    reads = [ld for ld in nodes_of(ast, Ops.LOAD) if ld.src[0].src[0] is buf]
    _check(not reads, opt, "TILE: the kernel reads its output buffer")
    ends = [e for e in ast.src if e.op is Ops.END]
    _check(len(ends) == len(ast.src) == 1, opt, "TILE needs the kernel's one END around its STORE")
    return store


def _the_reduce(ast: UOp, opt: Opt, rng: UOp, store: UOp) -> UOp:
    reds = [r for r in nodes_of(ast, Ops.REDUCE) if rng in r.src[1:]]
    _check(
        len(reds) == 1 and reds[0].arg in (Ops.ADD, Ops.MAX),
        opt,
        "TILE needs one ADD or MAX reduce over the axis",
    )
    red, value = reds[0], store.src[1]
    _check(value.dtype is red.dtype, opt, f"TILE: the reduce's {red.dtype!r} is stored as "
          f"{value.dtype!r} (partial sums must be stored exactly)")  # fmt: skip
    path = _depends_on(value, red)
    bad = [u.op.name for u in path if u.op not in _ELEMENTWISE]
    _check(not bad, opt, f"TILE: the reduce reaches the store through {bad[:3]}")
    others = [u for u in value.toposort(gate=lambda x: x is not red) if u.op is Ops.REDUCE]
    _check(others == [red], opt, "TILE: the store's value has another reduce")
    return red


def _tile_loop(ast: UOp, rng: UOp, amount: int, tiles: UOp) -> UOp:
    """TILE on an output axis: ``rng`` -> ``tile * amount + inner``, the tile loop outermost
    (OUTER), ``inner`` keeping ``rng``'s id and type (its place in the loop nest)."""
    tile = UOp.range(tiles, _next_axis_id(ast), AxisType.OUTER)
    inner = UOp.range(amount, rng.arg[0], rng.arg[1])
    return _fix_range_lists(ast.substitute({rng: tile * amount + inner}))


def tile_reduce(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    """The TILE opt (see the module docstring)."""
    rng = _axis(ast, opt)
    _check(
        rng.arg[1] in (AxisType.REDUCE, AxisType.LOOP),
        opt,
        f"TILE needs a reduce or LOOP axis, axis {rng.arg[0]} ({rng.arg[1].name})",
    )
    _check(not renderer.has_local, opt, f"{renderer!r} has workgroups: TILE is for CPUs")
    _check(not axes_of(ast, AxisType.GROUP_REDUCE, AxisType.LOCAL), opt, "TILE: LOCAL/GROUP axes")
    amount = _amount(opt, rng)
    tiles = _quotient(opt, rng, amount)
    _check(not (tiles.op is Ops.CONST and tiles.arg == 1), opt, "TILE: the axis is one tile")
    if rng.arg[1] is AxisType.LOOP:
        return _tile_loop(ast, rng, amount, tiles)
    store = _the_store(ast, opt)
    red = _the_reduce(ast, opt, rng, store)
    tile = UOp.range(tiles, _next_axis_id(ast), AxisType.OUTER)
    inner = UOp.range(amount, rng.arg[0], AxisType.REDUCE)
    src = red.src[0].substitute({rng: tile * amount + inner})
    ranges = [inner if r is rng else r for r in red.src[1:]]
    partial = UOp(Ops.REDUCE, red.dtype, (src, *ranges), red.arg)
    # the read-back is masked by the tile (not a WHERE around an unmasked load): the mask
    # makes it depend on the tile loop, so it is never hoisted above the previous tile's store
    idx = store.src[0]
    later = idx.replace(src=(idx.src[0], _masked(idx.src[1], tile.ne(0)), *idx.src[2:]))
    # the first tile's masked read-back is 0: no identity of MAX, so the first tile stores its own
    maxed = tile.ne(0).where(later.load().maximum(partial), partial)
    acc = maxed if red.arg is Ops.MAX else later.load() + partial
    value = store.src[1]
    if value is not red:
        last = tile.eq(tiles - 1)
        acc = last.where(value.substitute({red: acc}), acc)
    end = ast.src[0]
    new_end = UOp(Ops.END, end.dtype, (idx.store(acc), *end.src[1:], tile), end.arg)
    return ast.replace(src=(new_end,))


def partial_sums(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    """The PARTIALS opt (see the module docstring)."""
    rng = _axis(ast, opt)
    _check(rng.arg[1] is AxisType.REDUCE, opt, f"PARTIALS needs a reduce axis, axis {rng.arg[0]}")
    reds = [r for r in nodes_of(ast, Ops.REDUCE) if rng in r.src[1:]]
    _check(len(reds) == 1, opt, f"PARTIALS needs one reduce over the axis, found {len(reds)}")
    red = reds[0]
    amount = _amount(opt, rng)
    _check(amount <= MAX_UPCAST, opt, f"amount {amount} is more than {MAX_UPCAST} lanes")
    lanes = lane_count(ast, rng) * amount
    _check(lanes <= MAX_LANES, opt, f"the kernel would have {lanes} lanes (at most {MAX_LANES})")
    steps = _quotient(opt, rng, amount)
    lane = UOp.range(amount, _next_axis_id(ast), AxisType.UNROLL)
    rest = UOp.range(steps, rng.arg[0], AxisType.REDUCE)
    src = red.src[0].substitute({rng: rest * amount + lane})
    ranges = [rest if r is rng else r for r in red.src[1:]]
    inner = UOp(Ops.REDUCE, red.dtype, (src, *ranges), red.arg)
    return ast.substitute({red: UOp(Ops.REDUCE, red.dtype, (inner, lane), red.arg)})
