"""Which vector values the x86 renderer computes natively, and the selection of every
other vector value as one scalar register per lane.

Native vectors: float32 x8/x4 and float64 x4/x2 in xmm/ymm registers (loads, stores, register
accumulators, arithmetic, fused multiply-add, max, sqrt, trunc, neg, compares, where), and
bool vectors as compare *masks* (all-ones lanes) with ``mask_lane`` bytes per lane, combined
with and/or/xor (AVX-512: float32x16 and float64x8 too, and 16-lane masks of float32x16
compares). Lanes are built (VECTORIZE) and read (single-lane GEP) through a stack
slot. Everything else that is a vector — integer vectors, casts, bool vectors in memory —
is held as a list of scalar registers, one per lane (``Selection.lanes``), and each op on it
is selected once per lane, on that lane's operands. The lowering keeps any vector of a width
``vector_widths`` lists, and hand-built linear programs (the conformance corpus) skip the
lowering altogether, so the split happens here, at selection.
"""

from __future__ import annotations

from fusegrad.renderer.x86.context import (
    CONSTS,
    F16,
    FLOAT_SET,
    GPR,
    SELECTED,
    VEC,
    Op,
    Selection,
    frame_slot,
    mask_lane,
    mov_for,
    register_lane,
)
from fusegrad.renderer.x86.isa import Mem, VReg
from fusegrad.renderer.x86.memory import (
    SAFE_BYTES,
    address,
    load_into,
    memory_bytes,
    register_array,
    safe_address,
    store_half,
)
from fusegrad.uop import DType, GroupOp, PtrDType, UOp, dtypes

F32, F64 = dtypes.float32, dtypes.float64
#: float16 vectors are held as float32 lanes (F16C converts at loads, stores and roundings)
_FLOAT_VECTORS = {(F32, 8), (F32, 4), (F64, 4), (F64, 2), (F16, 8), (F16, 4)}
#: zmm vectors (AVX-512): arithmetic, FMA, max, sqrt, neg, trunc, loads and (masked) stores
_WIDE_VECTORS = {(F32, 16), (F64, 8)}
_FLOAT_NATIVE = frozenset(
    {Op.ADD, Op.SUB, Op.MUL, Op.FDIV, Op.MAX, Op.SQRT, Op.NEG, Op.TRUNC, Op.MULACC}
)
_MASK_NATIVE = frozenset({Op.AND, Op.OR, Op.XOR, Op.ADD, Op.MUL, Op.SUB, Op.MAX})
_COMPARES = frozenset({Op.CMPLT, Op.CMPNE, Op.CMPEQ})
_CONVERSIONS = frozenset({Op.CAST, Op.BITCAST})
_BUILT = frozenset({Op.VECTORIZE, Op.CONST, Op.VCONST})
I32X8, I32X16 = dtypes.int32.vec(8), dtypes.int32.vec(16)
_INT_NATIVE = frozenset(
    {Op.ADD, Op.SUB, Op.MUL, Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.MAX}
    | {Op.NEG, Op.TRUNC, Op.MULACC}
)


def float_vector(dt: DType, wide: bool = False) -> bool:
    """A float vector held whole in one xmm/ymm register (or zmm: ``wide``, AVX-512)."""
    key = (dt.scalar(), dt.count)
    return key in _FLOAT_VECTORS or (wide and key in _WIDE_VECTORS)


def int_vector(dt: DType, wide: bool = False) -> bool:
    """An int32x8 vector held whole in one ymm register (AVX2), or int32x16 in a zmm one
    (``wide``, AVX-512)."""
    return dt is I32X8 or (wide and dt is I32X16)  # (dtypes are interned)


def reg_vector(dt: DType, wide: bool = False) -> bool:
    """A vector held whole in one register."""
    return float_vector(dt, wide) or int_vector(dt, wide)


def _conversion(x: UOp, wide: bool) -> bool:
    """float32x8 <-> int32x8 CAST (vcvtdq2ps / vcvttps2dq) or BITCAST (the same register),
    and float32x16 <-> int32x16 (``wide``); float16 <-> float32 CAST of 8 or 4 lanes (the
    same register, or rounded by F16C)."""
    pair = {x.dtype, x.src[0].dtype}
    if x.op is Op.CAST and pair in _HALF_CASTS:
        return True
    return pair == {I32X8, F32.vec(8)} or (wide and pair == {I32X16, F32.vec(16)})


_HALF_CASTS = [{F16.vec(n), F32.vec(n)} for n in (8, 4)]


def mask_for(mask: DType, floats: DType) -> bool:
    """Whether a bool vector's mask lanes match float vector ``floats``'s lanes."""
    return mask.count == floats.count and mask_lane(mask) == register_lane(floats)


def mask_vector(dt: DType, wide: bool = False) -> bool:
    """A bool vector held as a compare mask in one register: 8 or 4 lanes (ymm), 16 lanes
    (zmm, ``wide``: float32x16 compares)."""
    return dt.scalar() is dtypes.bool and dt.count in ((16, 8, 4) if wide else (8, 4))


def native(x: UOp, wide: bool = False) -> bool:
    """Whether the renderer selects vector ALU op ``x`` as vector instructions (zmm ones
    too: ``wide``; float64x8 compares and wheres are selected per lane: their masks would
    need 8-byte lanes)."""
    dt = x.dtype
    if x.op in _COMPARES and reg_vector(x.src[0].dtype, wide):  # (int32x16 ones: per lane)
        return x.src[0].dtype is not I32X16 and mask_for(dt, x.src[0].dtype)
    if x.op is Op.WHERE and reg_vector(dt, wide):
        return x.src[0].dtype.scalar() is dtypes.bool and mask_for(x.src[0].dtype, dt)
    if x.op in _COMPARES or x.op is Op.WHERE:
        return False
    if float_vector(dt, wide):
        return x.op in _FLOAT_NATIVE
    if int_vector(dt, wide):
        return x.op in _INT_NATIVE
    if mask_vector(dt, wide):
        return x.op in _MASK_NATIVE and all(s.dtype.count == dt.count for s in x.src)
    return False


def native_node(x: UOp, wide: bool = False) -> bool:
    """Whether vector node ``x`` is held in one register (else in lanes); ``wide``: zmm
    registers too (AVX-512)."""
    dt = x.dtype
    mask = mask_vector(dt, wide)
    if x.op in GroupOp.ALU:
        return native(x, wide)
    if x.op in _CONVERSIONS:
        return _conversion(x, wide)
    if x.op is Op.LOAD:
        return reg_vector(dt, wide)
    if x.op in _BUILT:
        return reg_vector(dt, wide) or mask
    return False  # multi-lane GEP


def lane_source(ctx: Selection, s: UOp, i: int) -> UOp:
    """Lane ``i`` of operand ``s`` as a scalar node whose value is ready in ``ctx``."""
    if s.dtype.count == 1:
        return s
    if s.op in CONSTS:
        value = s.arg[i] if isinstance(s.arg, tuple) else s.arg
        return UOp.const(value, s.dtype.scalar())
    node = UOp(Op.GEP, s.dtype.scalar(), (s,), (i,))
    if s in ctx.lanes:
        ctx.values[node] = ctx.lanes[s][i]
    else:
        from fusegrad.renderer.x86.vector import gep

        gep(ctx, node)
    return node


def _value(ctx: Selection, u: UOp) -> VReg:
    if u.op is Op.CONST:
        return ctx.copy(u)
    return ctx.values[u]


def split(ctx: Selection, x: UOp, select_one: object) -> UOp:
    """Select vector node ``x`` lane by lane (``select_one(node)`` selects a scalar node)."""
    n = x.dtype.count
    if x.op is Op.LOAD:
        ctx.lanes[x] = _load_lanes(ctx, x)
    elif x.op is Op.VECTORIZE:
        ctx.lanes[x] = [_value(ctx, s) for s in x.src]
    elif x.op in CONSTS:
        pass  # each lane is an immediate where it is used (``lane_source``)
    elif x.op is Op.GEP:
        src = x.src[0]
        ctx.lanes[x] = [_value(ctx, lane_source(ctx, src, i)) for i in x.arg]
    else:
        lanes = []
        for i in range(n):
            srcs = tuple(lane_source(ctx, s, i) for s in x.src)
            node = UOp(x.op, x.dtype.scalar(), srcs, x.arg)
            select_one(node)  # type: ignore[operator]
            lanes.append(ctx.values[node])
        ctx.lanes[x] = lanes
    return SELECTED


def _element_memory(ctx: Selection, idx: UOp) -> tuple[Mem, int]:
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    return address(ctx, idx), ptr.base.scalar().itemsize


def _at(m: Mem, offset: int) -> Mem:
    return Mem(m.base, m.idx, m.scale, m.disp + offset, m.label, m.frame, m.broadcast)


def _load_lanes(ctx: Selection, x: UOp) -> list[VReg]:

    idx = x.src[0]
    if register_array(idx) is not None:
        raise NotImplementedError(f"x86 renderer: a register array of {x.dtype!r}")
    mem, size = _element_memory(ctx, idx)
    dt = x.dtype.scalar()
    n = x.dtype.count
    if len(idx.src) < 3:
        out = [ctx.new(VEC if dt in FLOAT_SET else GPR) for _ in range(n)]
        for i, v in enumerate(out):
            load_into(ctx, v, dt, _at(mem, i * size))
        return out
    alt = x.src[1]
    if n * size > SAFE_BYTES:
        raise NotImplementedError(f"x86 renderer: a gated load of {x.dtype!r} (over 32 bytes)")
    if alt.op in CONSTS:
        safe = ctx.constant(memory_bytes(alt))
    else:  # the alternative's lanes stored where the masked-off loads read them
        safe = frame_slot("vtemp", 0)
        for i in range(n):
            _store_lane(ctx, _at(safe, i * size), dt, lane_source(ctx, alt, i))
    base = safe_address(ctx, mem, idx.src[2], safe)
    out = [ctx.new(VEC if dt in FLOAT_SET else GPR) for _ in range(n)]
    for i, v in enumerate(out):
        load_into(ctx, v, dt, _at(base, i * size))
    return out


def _store_lane(ctx: Selection, mem: Mem, dt: DType, lane: UOp) -> None:
    if dt is F16:
        store_half(ctx, mem, ctx.vec(lane))
    elif dt in FLOAT_SET:
        ctx.emit(mov_for(dt) + "_st", mem, ctx.vec(lane))
    else:
        ctx.emit("store", mem, ctx.gpr(lane), width=dt.itemsize)


def store_lanes(ctx: Selection, x: UOp) -> UOp:
    """A vector held in lanes stored element by element (a masked-off one into the vtemp
    slot: no branch)."""
    idx, val = x.src[0], x.src[1]
    mem, size = _element_memory(ctx, idx)
    dt = val.dtype.scalar()
    if len(idx.src) > 2:
        if val.dtype.count * size > SAFE_BYTES:
            raise NotImplementedError(f"x86 renderer: a gated store of {val.dtype!r}")
        mem = safe_address(ctx, mem, idx.src[2], frame_slot("vtemp", 0))
    for i in range(val.dtype.count):
        _store_lane(ctx, _at(mem, i * size), dt, lane_source(ctx, val, i))
    return SELECTED
