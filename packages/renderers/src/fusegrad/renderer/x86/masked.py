"""Gated loads of consecutive elements, each lane with its own gate, put together as one
vector (what the lowering leaves of a padded convolution's window loads): selected as one
``vmaskmovps``/``vmaskmovpd`` (masked-off lanes read nothing, so they can't fault) and a blend
with the alternative value, where lane by lane each would take a gate extraction, a safe
address and a load.

``fused_loads`` finds them before selection (the scalar loads come first in the program and
must not be selected on their own); ``masked_load`` selects one at its VECTORIZE.
"""

from __future__ import annotations

from fusegrad.renderer.x86.context import (
    F32,
    F64,
    SELECTED,
    VEC,
    Op,
    Selection,
    float_bits,
    mask_lane,
    mov_for,
    vlen,
)
from fusegrad.renderer.x86.isa import Mem
from fusegrad.renderer.x86.memory import register_array
from fusegrad.uop import UOp

_MASKED_LOADS = {F32: "vmaskmovps", F64: "vmaskmovpd"}
_LANE_NODES = frozenset({Op.GEP, Op.ADD})
_WIDTHS = {(F32, 8), (F64, 4), (F64, 2)}  # (float32x4 masks have 8-byte lanes)


def _lane_offset(u: UOp) -> tuple[UOp, int]:
    """``u`` as (node, constant): ``x + c`` -> (x, c), else (u, 0)."""
    if u.op is Op.ADD:
        a, b = u.src
        if b.op is Op.CONST:
            return a, int(b.arg)
        if a.op is Op.CONST:
            return b, int(a.arg)
    return u, 0


def _lanes_match(x: UOp, users: dict[UOp, list[UOp]]) -> UOp | None:
    """The mask of VECTORIZE ``x`` if its lanes are gated loads of consecutive elements of
    one buffer with one constant alternative, lane k gated by lane k of one mask, each
    load and index used only there."""
    first = x.src[0]
    if first.op is not Op.LOAD or len(first.src) != 2 or len(first.src[0].src) != 3:
        return None
    idx = first.src[0]
    alt, gate = first.src[1], idx.src[2]
    if alt.op is not Op.CONST or gate.op is not Op.GEP or register_array(idx) is not None:
        return None
    base, offset = _lane_offset(idx.src[1])
    if not -(2**28) <= offset < 2**28:  # (a displacement of offset * itemsize bytes)
        return None
    want = (idx.src[0], alt, gate.src[0], base)
    lanes = enumerate(x.src)
    ok = all(_lane_matches(x, k, lane, want, offset + k, users) for k, lane in lanes)
    return gate.src[0] if ok else None


def _lane_matches(
    x: UOp,
    k: int,
    lane: UOp,
    want: tuple[UOp, UOp, UOp, UOp],
    offset: int,
    users: dict[UOp, list[UOp]],
) -> bool:
    """Lane ``k`` loads element ``base + offset`` of ``buf`` (``want``: buf, alternative,
    mask, base), gated by lane k of the mask, and only ``x`` uses it."""
    buf, alt, mask, base = want
    if lane.op is not Op.LOAD or lane.src[1] is not alt or users.get(lane) != [x]:
        return False
    idx = lane.src[0]
    if len(idx.src) != 3 or idx.src[0] is not buf or users.get(idx) != [lane]:
        return False
    gate = idx.src[2]
    if gate.op is not Op.GEP or gate.src[0] is not mask or gate.arg != (k,):
        return False
    return _lane_offset(idx.src[1]) == (base, offset)


def fused_loads(uops: list[UOp], users: dict[UOp, list[UOp]]) -> tuple[set[UOp], set[UOp]]:
    """(the VECTORIZEs selected as masked loads, the nodes they take over: their loads and
    indexes, and the lane gates and lane addresses nothing else uses — not the base address
    or the mask, which the masked load reads)."""
    vectors: set[UOp] = set()
    taken: set[UOp] = set()
    lane_nodes: set[UOp] = set()
    kept: set[UOp] = set()
    vectorize = Op.VECTORIZE
    for u in uops:
        if u.op is not vectorize:
            continue
        dt = u.dtype
        if (dt.scalar(), dt.count) not in _WIDTHS:
            continue
        mask = _lanes_match(u, users)
        if mask is None or mask.dtype.count != dt.count:
            continue
        if mask_lane(mask.dtype) != dt.scalar().itemsize:
            continue
        vectors.add(u)
        first = u.src[0].src[0]
        kept |= {mask, _lane_offset(first.src[1])[0]}
        for lane in u.src:
            idx = lane.src[0]
            taken.add(lane)
            taken.add(idx)
            lane_nodes.add(idx.src[1])
            lane_nodes.add(idx.src[2])
    for u in lane_nodes - kept:
        if u.op in _LANE_NODES and all(v in taken for v in users[u]):
            taken.add(u)
    return vectors, taken


def masked_load(ctx: Selection, x: UOp) -> UOp:
    """VECTORIZE ``x`` of gated consecutive loads (``fused_loads``): one masked load, and
    a blend with the alternative where it isn't +0.0 (what masked-off lanes read)."""
    dt = x.dtype
    first = x.src[0]
    idx = first.src[0]
    size = dt.scalar().itemsize
    base, offset = _lane_offset(idx.src[1])
    mem = Mem(base=ctx.values[idx.src[0]], idx=ctx.gpr(base), scale=size, disp=offset * size)
    mask = ctx.vec(idx.src[2].src[0])
    d = ctx.new(VEC)
    ctx.emit(_MASKED_LOADS[dt.scalar()], d, mask, mem, vlen=vlen(dt))
    alt = float_bits(dt, first.src[1].arg)
    if any(alt):
        other, blended = ctx.new(VEC), ctx.new(VEC)
        ctx.emit(mov_for(dt), other, ctx.constant(alt), vlen=vlen(dt))
        blend = "vblendvps" if dt.scalar() is F32 else "vblendvpd"
        ctx.emit(blend, blended, other, d, mask, vlen=vlen(dt))
        d = blended
    ctx.values[x] = d
    return SELECTED
