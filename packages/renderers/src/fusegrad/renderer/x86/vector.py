"""Instruction selection of vector values: float vectors in xmm/ymm registers, bool vectors
as compare masks, lanes in and out through a stack slot (see ``lanes`` for which vectors
are native)."""

from __future__ import annotations

from fusegrad.renderer.x86.context import (
    CONSTS,
    F16,
    GPR,
    SELECTED,
    VEC,
    Op,
    Selection,
    frame_slot,
    is_int,
    mask_lane,
    mov_for,
    register_lane,
    round_half,
    suffix,
    vlen,
)
from fusegrad.renderer.x86.isa import KMASK, Imm, Mem, VReg
from fusegrad.uop import UOp, dtypes

#: vcmpps/pd predicates: LT_OS, EQ_OQ, NEQ_UQ (false on NaN but for !=)
_PREDICATES = {Op.CMPLT: 1, Op.CMPEQ: 0, Op.CMPNE: 4}
_ONES = b"\xff" * 32
_SHIFTS = frozenset({Op.SHL, Op.SHR})
_MASK_OPS = {Op.AND: "vandps", Op.MUL: "vandps", Op.OR: "vorps", Op.ADD: "vorps"}
_MASK_OPS |= {Op.MAX: "vorps", Op.XOR: "vxorps", Op.SUB: "vxorps"}
#: zmm masks: AVX512F has the bitwise ops as vpandd/vpord/vpxord only
_WIDE_MASK_OPS = {Op.AND: "vpandd", Op.MUL: "vpandd", Op.OR: "vpord", Op.ADD: "vpord"}
_WIDE_MASK_OPS |= {Op.MAX: "vpord", Op.XOR: "vpxord", Op.SUB: "vpxord"}
#: vcmpps predicate NEQ_UQ: a mask's all-ones lane is a NaN (unordered: true), 0 is not
_NONZERO = 4
_ALL_ONES = b"\xff" * 64


def _temp(offset: int = 0) -> Mem:
    return frame_slot("vtemp", offset)


def compare(ctx: Selection, x: UOp) -> UOp:
    """Vector compare -> a mask (int32x8: greater-than / equal, then flipped for !=)."""
    a, b = x.src
    d = ctx.new(VEC)
    if is_int(a.dtype):
        if x.op is Op.CMPLT:  # a < b is b > a
            ctx.emit("vpcmpgtd", d, ctx.vec(b), ctx.fsource(a), vlen=32)
        else:
            ctx.emit("vpcmpeqd", d, ctx.vec(a), ctx.fsource(b), vlen=32)
        if x.op is Op.CMPNE:
            ctx.emit("vpxor", d, d, ctx.constant(_ONES), vlen=32)
        ctx.values[x] = d
        return SELECTED
    op = "vcmp" + suffix(a.dtype)
    if vlen(a.dtype) == 64:  # AVX-512 compares write an opmask: its lanes -> all ones / 0
        ctx.emit(op, KMASK[1], ctx.vec(a), ctx.fsource(b), Imm(_PREDICATES[x.op]), vlen=64)
        ctx.emit("vmovups_kz", d, ctx.constant(_ALL_ONES), KMASK[1], vlen=64)
    else:
        ctx.emit(op, d, ctx.vec(a), ctx.fsource(b), Imm(_PREDICATES[x.op]), vlen=vlen(a.dtype))
    ctx.values[x] = d
    return SELECTED


def _wide_mask(ctx: Selection, mask: VReg, f64: bool) -> None:
    """Opmask k1 of a zmm mask: the lanes that are all ones."""
    ctx.emit("vcmppd" if f64 else "vcmpps", KMASK[1], mask, mask, Imm(_NONZERO), vlen=64)


def where(ctx: Selection, x: UOp) -> UOp:
    """mask ? a : b -> one blend."""
    cond, a, b = x.src
    d = ctx.new(VEC)
    f64 = x.dtype.scalar() is dtypes.float64
    if vlen(x.dtype) == 64:  # d = k1 ? a : b
        _wide_mask(ctx, ctx.vec(cond), f64)
        blend = "vblendmpd" if f64 else "vblendmps"
        ctx.emit(blend, d, ctx.vec(b), ctx.fsource(a), KMASK[1], vlen=64)
    else:
        blend = "vblendvpd" if f64 else "vblendvps"
        ctx.emit(blend, d, ctx.vec(b), ctx.fsource(a), ctx.vec(cond), vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED


def mask_logic(ctx: Selection, x: UOp) -> UOp:
    """and/or/xor of masks (bool +, *, - and max are or, and, xor, or)."""
    a, b = x.src
    d = ctx.new(VEC)
    ops = _WIDE_MASK_OPS if vlen(x.dtype) == 64 else _MASK_OPS
    ctx.emit(ops[x.op], d, ctx.vec(a), ctx.fsource(b), vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED


def _mask_lanes(ctx: Selection, x: UOp, d: VReg) -> None:
    """Bool lanes (0/1) -> a mask (all-zero/all-one lanes): constant lanes from the pool, one
    repeated lane negated once and broadcast, else each distinct lane negated once and
    stored to its slots."""
    dt = x.dtype
    size = mask_lane(dt)
    if all(s.op is Op.CONST for s in x.src):
        raw = b"".join((-1 if s.arg else 0).to_bytes(size, "little", signed=True) for s in x.src)
        ctx.emit("vmovups", d, ctx.constant(raw), vlen=vlen(dt))
        return
    negated: dict[UOp, VReg] = {}
    uniform = len(set(x.src)) == 1 and vlen(dt) == 32
    for i, s in enumerate(x.src[:1] if uniform else x.src):
        if s not in negated:
            negated[s] = ctx.copy(s)
            ctx.emit("neg", negated[s])
        ctx.emit("store", _temp(i * size), negated[s], width=size)
    if uniform:
        ctx.emit("vbroadcastss" if size == 4 else "vbroadcastsd", d, _temp(), vlen=32)
        return
    ctx.emit("vmovups", d, _temp(), vlen=vlen(dt))


def vectorize(ctx: Selection, x: UOp) -> UOp:
    """Lanes -> a vector register, through the stack slot (one repeated lane: a broadcast)."""
    dt = x.dtype
    d = ctx.new(VEC)
    uniform = len(set(x.src)) == 1 and vlen(dt) >= 32
    if dt.scalar() is dtypes.bool:  # 0/1 -> all-zero/all-one lanes of a mask
        _mask_lanes(ctx, x, d)
    elif is_int(dt) and uniform:  # (a dword broadcast moves the bits as they are)
        ctx.emit("store", _temp(), ctx.gpr(x.src[0]), width=4)
        ctx.emit("vbroadcastss", d, _temp(), vlen=vlen(dt))
    elif is_int(dt):
        for i, s in enumerate(x.src):
            ctx.emit("store", _temp(4 * i), ctx.gpr(s), width=4)
        ctx.emit("vmovups", d, _temp(), vlen=vlen(dt))
    elif uniform:  # one value in every lane
        op = "vbroadcastss" if register_lane(dt) == 4 else "vbroadcastsd"
        ctx.emit(op, d, ctx.vec(x.src[0]), vlen=vlen(dt))  # (a ymm one would zero a zmm's top)
    else:
        size = register_lane(dt)
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
    if src.op in CONSTS:
        value = src.arg[lane] if isinstance(src.arg, tuple) else src.arg
        ctx.values[x] = ctx.copy(UOp.const(value, x.dtype))
        return SELECTED
    if src.dtype.count == 1:
        ctx.values[x] = ctx.values[src] if src.op is not Op.CONST else ctx.copy(src)
        return SELECTED
    v = ctx.vec(src)
    if src.dtype.scalar() is dtypes.bool:
        g = ctx.new(GPR)
        if vlen(src.dtype) == 64:  # (no vmovmskps on zmm: through an opmask)
            _wide_mask(ctx, v, mask_lane(src.dtype) == 8)
            ctx.emit("kmovw", g, KMASK[1], width=4)
        else:
            op = "vmovmskps" if mask_lane(src.dtype) == 4 else "vmovmskpd"
            ctx.emit(op, g, v, vlen=vlen(src.dtype))
        if lane:
            ctx.emit("shr", g, Imm(lane), width=4)
        ctx.emit("and", g, Imm(1), width=4)
        ctx.values[x] = g
        return SELECTED
    if is_int(x.dtype):
        g = ctx.new(GPR)
        ctx.emit("vmovups_st", _temp(), v, vlen=vlen(src.dtype))
        ctx.emit("movsxd", g, _temp(4 * lane), width=4)
        ctx.values[x] = g
        return SELECTED
    d: VReg
    if lane == 0:
        d = ctx.copy_reg(v)
    else:
        d = ctx.new(VEC)
        if ctx.in_vtemp is not v:  # (the lanes of the vector a GEP just read stay there)
            ctx.emit("vmovups_st", _temp(), v, vlen=vlen(src.dtype))
        ctx.emit(mov_for(x.dtype), d, _temp(lane * register_lane(x.dtype)))
        ctx.in_vtemp = v
    ctx.values[x] = d
    return SELECTED


# -- int32x8 (AVX2), int32x16 (AVX-512) -------------------------------------------------------

_INT_BINARY = {
    Op.ADD: "vpaddd", Op.SUB: "vpsubd", Op.MUL: "vpmulld", Op.AND: "vpand",
    Op.OR: "vpor", Op.XOR: "vpxor", Op.MAX: "vpmaxsd",
}  # fmt: skip
#: the zmm forms of the bitwise ones (AVX512F names them by element size)
_WIDE_INT = {"vpand": "vpandd", "vpor": "vpord", "vpxor": "vpxord"}


def _int_name(op: str, size: int) -> str:
    return _WIDE_INT.get(op, op) if size == 64 else op


def _shift(ctx: Selection, x: UOp, d: VReg) -> None:
    """Per-lane shifts: a count past 31 (unsigned) gives 0, or the sign for SHR (what
    vpsllvd/vpsravd do); a constant count is an immediate."""
    a, b = x.src
    n = vlen(x.dtype)
    op = "vpslld" if x.op is Op.SHL else "vpsrad"
    if b.op in CONSTS and len(set(b.arg if isinstance(b.arg, tuple) else (b.arg,))) == 1:
        count = (b.arg[0] if isinstance(b.arg, tuple) else b.arg) % (1 << 32)
        if count < 32 or x.op is Op.SHR:
            ctx.emit(op, d, ctx.vec(a), Imm(min(count, 31)), vlen=n)
        else:
            ctx.emit(_int_name("vpxor", n), d, d, d, vlen=n)
        return
    ctx.emit(op[:-1] + "vd", d, ctx.vec(a), ctx.fsource(b), vlen=n)


def int_op(ctx: Selection, x: UOp) -> UOp:
    """int32x8/x16 arithmetic (wrapping, as the scalar ops)."""
    d = ctx.new(VEC)
    n = vlen(x.dtype)
    if x.op in _INT_BINARY:
        a, b = x.src
        ctx.emit(_int_name(_INT_BINARY[x.op], n), d, ctx.vec(a), ctx.fsource(b), vlen=n)
    elif x.op in _SHIFTS:
        _shift(ctx, x, d)
    elif x.op is Op.NEG:
        ctx.emit(_int_name("vpxor", n), d, d, d, vlen=n)
        ctx.emit("vpsubd", d, d, ctx.fsource(x.src[0]), vlen=n)
    elif x.op is Op.TRUNC:
        d = ctx.vec(x.src[0])
    else:  # MULACC: a * b + c
        a, b, c = x.src
        ctx.emit("vpmulld", d, ctx.vec(a), ctx.fsource(b), vlen=n)
        ctx.emit("vpaddd", d, d, ctx.fsource(c), vlen=n)
    ctx.values[x] = d
    return SELECTED


def conversion(ctx: Selection, x: UOp) -> UOp:
    """float32x8 <-> int32x8: CAST converts (truncating, x86's indefinite for NaN and
    overflow, as the scalar path), BITCAST is the same register; float16 <-> float32."""
    src = ctx.vec(x.src[0])
    if x.op is Op.BITCAST or x.src[0].dtype.scalar() is F16:  # (a float16 is a float32)
        ctx.values[x] = src
        return SELECTED
    d = ctx.new(VEC)
    if x.dtype.scalar() is F16:  # float32 -> float16: rounded by F16C
        ctx.values[x] = ctx.copy_reg(src, vlen(x.dtype))
        round_half(ctx, ctx.values[x], vlen(x.dtype))
        return SELECTED
    op = "vcvtdq2ps" if x.dtype.scalar() is dtypes.float32 else "vcvttps2dq"
    ctx.emit(op, d, src, vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED
