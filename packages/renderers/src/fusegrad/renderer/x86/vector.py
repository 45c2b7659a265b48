"""Instruction selection of vector values: float vectors in xmm/ymm registers, bool vectors
as compare masks, lanes in and out through a stack slot (see ``lanes`` for which vectors
are native)."""

from __future__ import annotations

from fusegrad.renderer.x86.context import (
    GPR,
    SELECTED,
    VEC,
    Selection,
    mask_lane,
    mov_for,
    suffix,
    vlen,
)
from fusegrad.renderer.x86.isa import Imm, Mem, VReg
from fusegrad.uop import Ops, UOp, dtypes

#: vcmpps/pd predicates: LT_OS, EQ_OQ, NEQ_UQ (false on NaN but for !=)
_PREDICATES = {Ops.CMPLT: 1, Ops.CMPEQ: 0, Ops.CMPNE: 4}
_MASK_OPS = {Ops.AND: "vandps", Ops.MUL: "vandps", Ops.OR: "vorps", Ops.ADD: "vorps"}
_MASK_OPS |= {Ops.MAX: "vorps", Ops.XOR: "vxorps", Ops.SUB: "vxorps"}


def _temp(offset: int = 0) -> Mem:
    return Mem(frame=("vtemp", offset))


def compare(ctx: Selection, x: UOp) -> UOp:
    """Float vector compare -> a mask."""
    a, b = x.src
    d = ctx.new(VEC)
    op = "vcmp" + suffix(a.dtype)
    ctx.emit(op, d, ctx.vec(a), ctx.fsource(b), Imm(_PREDICATES[x.op]), vlen=vlen(a.dtype))
    ctx.values[x] = d
    return SELECTED


def where(ctx: Selection, x: UOp) -> UOp:
    """mask ? a : b -> one blend."""
    cond, a, b = x.src
    d = ctx.new(VEC)
    blend = "vblendvps" if x.dtype.scalar() is dtypes.float32 else "vblendvpd"
    ctx.emit(blend, d, ctx.vec(b), ctx.fsource(a), ctx.vec(cond), vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED


def mask_logic(ctx: Selection, x: UOp) -> UOp:
    """and/or/xor of masks (bool +, *, - and max are or, and, xor, or)."""
    a, b = x.src
    d = ctx.new(VEC)
    ctx.emit(_MASK_OPS[x.op], d, ctx.vec(a), ctx.fsource(b), vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED


def vectorize(ctx: Selection, x: UOp) -> UOp:
    """Lanes -> a vector register, through the stack slot."""
    dt = x.dtype
    d = ctx.new(VEC)
    if dt.scalar() is dtypes.bool:  # 0/1 -> all-zero/all-one lanes of a mask
        size = mask_lane(dt)
        for i, s in enumerate(x.src):
            lane = ctx.copy(s)
            ctx.emit("neg", lane)
            ctx.emit("store", _temp(i * size), lane, width=size)
        ctx.emit("vmovups", d, _temp(), vlen=vlen(dt))
    elif len(set(x.src)) == 1 and vlen(dt) == 32:  # one value in every lane
        op = "vbroadcastss" if dt.scalar() is dtypes.float32 else "vbroadcastsd"
        ctx.emit(op, d, ctx.vec(x.src[0]), vlen=32)
    else:
        size = dt.scalar().itemsize
        for i, s in enumerate(x.src):
            ctx.emit(mov_for(s.dtype) + "_st", _temp(i * size), ctx.vec(s))
        ctx.emit("vmovups", d, _temp(), vlen=vlen(dt))
    ctx.values[x] = d
    return SELECTED


def gep(ctx: Selection, x: UOp) -> UOp:
    """One lane of a vector: a float through the stack slot (lane 0 is the register's low
    lane already), a mask lane as 0/1 from its sign bit."""
    src = x.src[0]
    (lane,) = x.arg
    if src in ctx.lanes:
        ctx.values[x] = ctx.lanes[src][lane]
        return SELECTED
    if src.op in (Ops.CONST, Ops.VCONST):
        value = src.arg[lane] if isinstance(src.arg, tuple) else src.arg
        ctx.values[x] = ctx.copy(UOp.const(value, x.dtype))
        return SELECTED
    if src.dtype.count == 1:
        ctx.values[x] = ctx.values[src] if src.op not in (Ops.CONST,) else ctx.copy(src)
        return SELECTED
    v = ctx.vec(src)
    if src.dtype.scalar() is dtypes.bool:
        g = ctx.new(GPR)
        op = "vmovmskps" if mask_lane(src.dtype) == 4 else "vmovmskpd"
        ctx.emit(op, g, v, vlen=vlen(src.dtype))
        if lane:
            ctx.emit("shr", g, Imm(lane), width=4)
        ctx.emit("and", g, Imm(1), width=4)
        ctx.values[x] = g
        return SELECTED
    d: VReg
    if lane == 0:
        d = ctx.copy_reg(v)
    else:
        d = ctx.new(VEC)
        ctx.emit("vmovups_st", _temp(), v, vlen=vlen(src.dtype))
        size = x.dtype.itemsize
        ctx.emit(mov_for(x.dtype), d, _temp(lane * size))
    ctx.values[x] = d
    return SELECTED
