"""Tensor cores: a matmul reduction tiled by the TC opt becomes WMMA nodes (``mma.sync``).

The TC opt (``opt/analysis.py``) splits a matmul ``sum_k a[m, k] * b[k, n]`` of a renderer
with a tensor core of ``dims = (8, 16, 16)`` for 32 threads into a LOCAL axis of 8 along N
(``nt``), an UPCAST axis of 16 along M (``mt``) and an UNROLL axis of 16 along K (``kt``);
for a core with ``opts`` ``m_threads=8`` (PTX's) M is a LOCAL axis of 8 (``mg``, the rows
within 8) and an UPCAST axis of 2 (the rows 8 apart, which stays ``c1`` below). This
stage, run before the upcasts are expanded, maps that tile onto one warp-wide ``m16n8k16``
matrix instruction with the register layout NVIDIA's PTX ISA gives for it (``groupID =
lane >> 2``, ``threadID_in_group = lane % 4``):

* accumulator/result D (16x8 float32, 4 per thread): element ``j`` is row ``groupID + 8 *
  (j >> 1)``, column ``2 * threadID_in_group + (j & 1)``;
* A (16x16, 8 per thread): element ``i`` is row ``groupID + 8 * ((i >> 1) & 1)``, column
  ``2 * threadID_in_group + (i & 1) + 8 * (i >> 2)``;
* B (16x8, 4 per thread): element ``i`` is row ``2 * threadID_in_group + (i & 1) + 8 *
  (i >> 1)``, column ``groupID``.

The tile's 8 threads x 16 lanes become one LOCAL axis of 32 lanes (a warp: the innermost
thread id, ``%tid.x``) and two UPCAST axes of 2 (``c1`` over rows, ``c0`` over columns):
``mt -> groupID + 8 * c1`` (or ``mg -> groupID``) and ``nt -> 2 * threadID_in_group + c0``
everywhere in the kernel;
the reduction over ``kt`` becomes ``WMMA(A, B, C)`` whose 4 result lanes are the lanes of
``(c1, c0)``. ``A``/``B`` are the factors with the tile's ranges replaced by each element's
row and column as expressions of an element number (8 and 4 lanes), expanded to vectors here,
so the devectorizer loads adjacent elements together. The remaining K loop accumulates
through the instruction's C operand (``fold_wmma_accumulate``, after reductions are lowered).

Other UPCAST output axes (opts after TC) are register blocking: one WMMA per combination of
their values, A's and B's fragments shared where they do not vary with an axis, the results
as lanes over those axes and ``(c1, c0)``. A reduce axis padded by PADTO (``WHERE(valid,
a * b, 0)``) keeps its mask on A's elements. A kernel whose tile does not have that form
(other UNROLL axes, a grouped reduce, more than one reduction, over ``MAX_MMAS`` mmas) is left
as it is: the tile then runs as ordinary lanes and threads.

``WMMA``'s arg is ``(name, dims, dtype_in, dtype_out)``; its sources are A (``dtype_in``
x 8, or x 4 for k8), B (x 4, or x 2) and C (``dtype_out`` x 4); its dtype is ``dtype_out`` x 4.
The m16n8k8 instruction (sm_75) has the same layout with K = 8: A's elements 0..3 and B's
0..1 of the formulas above.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from fusegrad.codegen.lower.context import Census, LowerContext
from fusegrad.codegen.lower.expander import pm_expand
from fusegrad.codegen.lower.walk import nodes, rebuild
from fusegrad.codegen.renderer import TensorCore
from fusegrad.uop import AxisType, Ops, UOp, graph_rewrite

#: the tensor core shapes (N, M, K) this stage knows the register layout of: m16n8k16
#: (sm_80+) and m16n8k8 (sm_75; A and B hold the first half of the k16 fragments' elements)
MMA_DIMS = ((8, 16, 16), (8, 16, 8))
WARP = 32
#: at most this many mma per thread and K step (UPCAST axes beyond the tile's multiply them)
MAX_MMAS = 32


@dataclass(frozen=True, slots=True)
class _Tile:
    red: UOp
    a: UOp
    b: UOp
    mt: UOp  # M's tile: UPCAST 16, or (the ``m_threads=8`` layout) UPCAST 2 over rows 8 apart
    mg: UOp | None  # with ``m_threads=8``: LOCAL 8, M's tile's rows within 8
    nt: UOp
    kt: UOp
    core: TensorCore
    extras: tuple[UOp, ...] = ()  # other UPCAST output axes: one mma per combination


def _uncast(x: UOp) -> UOp:
    while x.op is Ops.CAST:
        x = x.src[0]
    return x


def _size(rng: UOp) -> int | None:
    end = rng.src[0]
    return end.arg if end.op is Ops.CONST and isinstance(end.arg, int) else None


def _only(x: UOp, y: UOp) -> list[UOp]:
    """The ranges ``x`` varies with and ``y`` does not."""
    return [r for r in x.ranges if r not in y.ranges]


def _one(found: list[UOp]) -> UOp | None:
    return found[0] if len(found) == 1 else None


def _first(found: list[UOp]) -> UOp | None:
    """The lowest-numbered range of ``found`` (any of them can take a tile role: the roles
    only label the instruction's rows and columns, consistently for A, B and D)."""
    return min(found, key=lambda r: r.arg[0]) if found else None


def _tile_of(red: UOp, core: TensorCore) -> _Tile | None:
    """The TC tile of reduction ``red`` for ``core``, or None when it has not that form."""
    if red.arg is not Ops.ADD or red.dtype is not core.dtype_out:
        return None
    value, mask = red.src[0], None
    if value.op is Ops.WHERE and value.src[2].op is Ops.CONST and value.src[2].arg == 0:
        mask, value = value.src[0], value.src[1]  # a reduce axis padded by PADTO
    prod = _uncast(value)
    if prod.op is not Ops.MUL:
        return None
    a, b = (_uncast(s) for s in prod.src)
    if a.dtype is not core.dtype_in or b.dtype is not core.dtype_in:
        return None
    if mask is not None:  # zero A where the padded K is out of range
        a = UOp(Ops.WHERE, a.dtype, (mask, a, UOp.const(0.0, a.dtype)))
    n, m, k = core.dims
    unrolled = [r for r in red.src[1:] if r.arg[1] is AxisType.UNROLL]
    kt = _one([r for r in unrolled if _size(r) == k and r in a.ranges and r in b.ranges])
    if kt is None or len(unrolled) != 1:
        return None
    nt = _first([r for r in _only(b, a) if r.arg[1] is AxisType.LOCAL and _size(r) == n])
    mt = _first([r for r in _only(a, b) if r.arg[1] is AxisType.UPCAST and _size(r) == m])
    mg = None
    if mt is None:  # M as 8 threads x 2 lanes (a core with "m_threads=8")
        mt = _first([r for r in _only(a, b) if r.arg[1] is AxisType.UPCAST and _size(r) == 2])
        mg = _first([r for r in _only(a, b) if r.arg[1] is AxisType.LOCAL and _size(r) == m // 2])
        if mg is None:
            return None
    if mt is None or nt is None:
        return None
    return _Tile(red, a, b, mt, mg, nt, kt, core)


def _extra_ok(r: UOp, tile: _Tile) -> bool:
    """An UPCAST output axis besides the tile's (register blocking): one mma per value."""
    return (
        r.arg[1] is AxisType.UPCAST
        and _size(r) is not None
        and r not in tile.red.src[1:]
        and (r in tile.a.ranges or r in tile.b.ranges)
    )


def _find_tile(sink: UOp, cores: tuple[TensorCore, ...]) -> _Tile | None:
    every = nodes(sink)
    reduces = [u for u in every if u.op is Ops.REDUCE]
    kinds = {u.arg[1] for u in every if u.op is Ops.RANGE}
    if len(reduces) != 1 or AxisType.GROUP_REDUCE in kinds:
        return None
    for core in cores:
        if core.dims not in MMA_DIMS or core.threads != WARP:
            continue
        tile = _tile_of(reduces[0], core)
        if tile is None:
            continue
        lanes = {u for u in every if u.op is Ops.RANGE}
        lanes = {r for r in lanes if r.arg[1] in (AxisType.UPCAST, AxisType.UNROLL)}
        extras = lanes - {tile.mt, tile.kt}
        if {tile.mt, tile.kt} <= lanes and all(_extra_ok(r, tile) for r in extras):
            count = 1
            for r in extras:
                count *= _size(r) or 0
            if count <= MAX_MMAS:
                return replace(tile, extras=tuple(sorted(extras, key=lambda r: r.arg[0])))
    return None


def _lanes_of(x: UOp) -> UOp:
    """The vector of ``x`` over its one UPCAST range (an element number): expanded here, so
    its loads are vector loads the devectorizer can group into wide accesses."""
    return graph_rewrite(UOp.sink(x), pm_expand, name="tensor core operand").src[0]


def _fix_ends(sink: UOp, replaced: dict[UOp, tuple[UOp, ...]]) -> UOp:
    """END nodes closing a replaced range close the ranges that stand for it instead."""

    def fixed(u: UOp) -> UOp | None:
        if u.op is not Ops.END or not any(r in replaced for r in u.src[1:]):
            return None
        listed: list[UOp] = []
        for r in u.src[1:]:
            listed.extend(replaced.get(r, (r,)))
        return u.replace(src=(u.src[0], *dict.fromkeys(listed)))

    return rebuild(sink, fixed)


def use_tensor_cores(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: the TC tile of the kernel's matmul (if it has one) -> WMMA (see above)."""
    tile = _find_tile(sink, ctx.renderer.tensor_cores)
    if tile is None:
        return sink
    lane = UOp.range(WARP, ctx.fresh_axis(), AxisType.LOCAL)
    # the rows: 8 * c1 + group; c1 is the tile's own UPCAST 2 in the m_threads layout
    c1 = UOp.range(2, ctx.fresh_axis(), AxisType.UPCAST) if tile.mg is None else tile.mt
    c0 = UOp.range(2, ctx.fresh_axis(), AxisType.UPCAST)  # a higher id: lanes (c1, c0)
    group, thread = lane // 4, lane % 4
    k = tile.core.dims[2]
    fa = UOp.range(k // 2, ctx.fresh_axis(), AxisType.UPCAST)  # A's element number
    fb = UOp.range(k // 4, ctx.fresh_axis(), AxisType.UPCAST)  # B's
    k_of_a = thread * 2 + fa % 2 + 8 * (fa // 4)
    rows = (
        {tile.mt: group + 8 * (fa // 2 % 2)}
        if tile.mg is None
        else {tile.mg: group, tile.mt: fa // 2 % 2}
    )
    out = tile.core.dtype_out
    zeros = UOp.vconst((0.0,) * 4, out.vec(4))
    name = f"mma_m16n8k{k}_{tile.core.dtype_in.name}_{out.name}"
    arg = (name, tile.core.dims, tile.core.dtype_in, out)
    sizes = [_size(r) or 0 for r in tile.extras]
    mmas: dict[tuple[int, ...], UOp] = {}
    for combo in itertools.product(*(range(n) for n in sizes)):  # register blocking
        fixed = {r: UOp.const(v, r.dtype) for r, v in zip(tile.extras, combo, strict=True)}
        a_frag = _lanes_of(tile.a.substitute({**fixed, **rows, tile.kt: k_of_a}))
        b_frag = _lanes_of(
            tile.b.substitute({**fixed, tile.nt: group, tile.kt: thread * 2 + fb % 2 + 8 * (fb // 2)})
        )  # fmt: skip
        mmas[combo] = UOp(Ops.WMMA, out.vec(4), (a_frag, b_frag, zeros), arg)
    lanes = _result_lanes(mmas, tile.extras, c1, c0)
    loops = tuple(r for r in tile.red.src[1:] if r is not tile.kt)
    value = UOp(Ops.REDUCE, out, (lanes, *loops), Ops.ADD) if loops else lanes
    sink = sink.substitute({tile.red: value})
    if tile.mg is None:
        sink = _fix_ends(sink, {tile.mt: (lane, c1), tile.nt: (lane, c0)})
        return sink.substitute({tile.mt: group + 8 * c1, tile.nt: thread * 2 + c0})
    sink = _fix_ends(sink, {tile.mg: (lane,), tile.nt: (lane, c0)})
    return sink.substitute({tile.mg: group, tile.nt: thread * 2 + c0})


def _result_lanes(
    mmas: dict[tuple[int, ...], UOp], extras: tuple[UOp, ...], c1: UOp, c0: UOp
) -> UOp:
    """The results of the mmas as lanes over the UPCAST axes ``extras``, ``c1`` and ``c0``
    (an UNROLL, its lanes row-major over the axes by id, as the expander orders them)."""
    axes = sorted([*extras, c1, c0], key=lambda r: r.arg[0])
    shape = tuple((r.arg[0], _size(r) or 0) for r in axes)
    if not extras:
        return UOp(Ops.UNROLL, mmas[()].dtype, (mmas[()],), shape)  # lanes (c1, c0): as is
    parts = []
    for values in itertools.product(*(range(n) for _, n in shape)):
        at = dict(zip(axes, values, strict=True))
        mma = mmas[tuple(at[r] for r in extras)]
        parts.append(UOp(Ops.GEP, mma.dtype.scalar(), (mma,), (2 * at[c1] + at[c0],)))
    vec = UOp(Ops.VECTORIZE, parts[0].dtype.vec(len(parts)), tuple(parts))
    return UOp(Ops.UNROLL, vec.dtype, (vec,), shape)


def _is_zero(x: UOp) -> bool:
    if x.op is Ops.VECTORIZE:
        return all(_is_zero(s) for s in x.src)
    if x.op is Ops.CONST:
        return x.arg == 0 or (isinstance(x.arg, tuple) and all(v == 0 for v in x.arg))
    return x.op is Ops.VCONST and all(v == 0 for v in x.arg)


def _folded(u: UOp) -> UOp | None:
    """``acc + WMMA(a, b, 0)`` -> ``WMMA(a, b, acc)`` (either order of the ADD); for several
    mmas, ``acc + VECTORIZE(GEP(WMMA_i(a, b, 0), j)...)`` -> each WMMA_i accumulating into
    its lanes of ``acc``."""
    if u.op is not Ops.ADD:
        return None
    for x, y in (u.src, u.src[::-1]):
        if x.dtype is not y.dtype:
            continue
        if y.op is Ops.WMMA and _is_zero(y.src[2]):
            return y.replace(src=(y.src[0], y.src[1], x))
        if y.op is Ops.VECTORIZE and (fused := _folded_lanes(x, y)) is not None:
            return fused
    return None


def _folded_lanes(acc: UOp, vec: UOp) -> UOp | None:
    where: dict[UOp, list[int | None]] = {}
    for lane, s in enumerate(vec.src):
        if s.op is not Ops.GEP or s.src[0].op is not Ops.WMMA or not _is_zero(s.src[0].src[2]):
            return None
        slots = where.setdefault(s.src[0], [None] * s.src[0].dtype.count)
        if slots[s.arg[0]] is not None:
            return None  # one result lane in two accumulator lanes
        slots[s.arg[0]] = lane
    new = {}
    for mma, slots in where.items():
        if any(x is None for x in slots):
            return None
        lanes = tuple(int(x) for x in slots if x is not None)
        c = UOp(Ops.GEP, mma.dtype, (acc,), lanes)
        new[mma] = mma.replace(src=(mma.src[0], mma.src[1], c))
    parts = tuple(UOp(Ops.GEP, s.dtype, (new[s.src[0]],), s.arg) for s in vec.src)
    return UOp(Ops.VECTORIZE, vec.dtype, parts)


def fold_wmma_accumulate(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: a register accumulator updated with a WMMA's product accumulates through
    the instruction's C operand instead of a separate vector ADD."""
    return rebuild(sink, _folded)


def has_wmma_work(census: Census, ctx: LowerContext) -> bool:
    """The kernel has an UNROLL axis (a TC tile has one) and the target a tensor core this
    stage knows the layout of."""
    return AxisType.UNROLL in census.axis_types and any(
        c.dims in MMA_DIMS and c.threads == WARP for c in ctx.renderer.tensor_cores
    )
