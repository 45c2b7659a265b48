"""Instruction selection of parameters, loops, IF blocks, loads and stores."""

from __future__ import annotations

import bisect
import struct

from fusegrad.renderer.x86.context import (
    CONSTS,
    F16,
    FLOAT_SET,
    GPR,
    SELECTED,
    UINTS,
    VEC,
    Op,
    Selection,
    frame_slot,
    is_float,
    load_immediate,
    mov_for,
    vlen,
)
from fusegrad.renderer.x86.isa import KMASK, Imm, Label, Mem, Reg, VReg
from fusegrad.uop import DType, PtrDType, UOp, dtypes

# -- parameters, loops, control flow -------------------------------------------------------


def param(ctx: Selection, x: UOp) -> UOp:
    v = ctx.values[x] = ctx.new(GPR)
    slot = frame_slot("arg", ctx.arg_index[x])
    if isinstance(x.dtype, PtrDType):
        ctx.emit("mov", v, slot)
    elif x.dtype.scalar() in UINTS:
        ctx.emit("mov", v, slot, width=4)  # an int32 argument, zero-extended
    else:
        ctx.emit("movsxd", v, slot, width=4)
    return SELECTED


def range_start(ctx: Selection, x: UOp) -> UOp:
    counter = ctx.values[x] = ctx.new(GPR)
    top, out = ctx.label("loop"), ctx.label("exit")
    ctx.loops[x] = (top, out)
    ctx.emit("mov", counter, Imm(0), width=4)
    ctx.place(top)
    ctx.emit("cmp", counter, ctx.operand(x.src[0]))
    ctx.emit("jge", Label(out))
    return SELECTED


def range_end(ctx: Selection, x: UOp) -> UOp:
    for rng in (s for s in x.src if s.op is Op.RANGE):
        top, out = ctx.loops[rng]
        ctx.emit("add", ctx.values[rng], Imm(1))
        ctx.emit("jmp", Label(top))
        ctx.place(out)
    return SELECTED


def if_start(ctx: Selection, x: UOp) -> UOp:
    out = ctx.label("endif")
    ctx.loops[x] = (out, out)
    cond = ctx.gpr(x.src[0])
    ctx.emit("test", cond, cond, width=4)
    ctx.emit("je", Label(out))
    return SELECTED


def if_end(ctx: Selection, x: UOp) -> UOp:
    ctx.place(ctx.loops[x.src[0]][0])
    return SELECTED


def nothing(ctx: Selection, x: UOp) -> UOp:
    return SELECTED


def after(ctx: Selection, x: UOp) -> UOp:
    if x.src[0] in ctx.values:
        ctx.values[x] = ctx.values[x.src[0]]
    return SELECTED


# -- memory ------------------------------------------------------------------------------------


def register_array(x: UOp) -> UOp | None:
    """The DEFINE_REG an INDEX addresses (through AFTERs), if it is one."""
    buf = x.src[0]
    while buf.op is Op.AFTER:
        buf = buf.src[0]
    return buf if buf.op is Op.DEFINE_REG else None


def slot_key(idx: UOp) -> tuple[UOp, int] | None:
    """(DEFINE_REG, element) an INDEX addresses, if it is an accumulator slot."""
    reg = register_array(idx)
    if reg is None or idx.src[1].op is not Op.CONST:
        return None
    return (reg, int(idx.src[1].arg))


_MEMORY_OPS = frozenset({Op.LOAD, Op.STORE})


def index_slots(ctx: Selection, uops: list[UOp]) -> None:
    """Where each accumulator slot is loaded and stored (for in-place accumulation)."""
    for i, u in enumerate(uops):
        if u.op in _MEMORY_OPS and (key := slot_key(u.src[0])) is not None:
            table = ctx.slot_loads if u.op is Op.LOAD else ctx.slot_stores
            table.setdefault(key, []).append(i)


def _after(positions: list[int], at: int, default: int) -> int:
    k = bisect.bisect_right(positions, at)
    return positions[k] if k < len(positions) else default


def destination(ctx: Selection, x: UOp, avoid: tuple[UOp, ...] = ()) -> VReg:
    """Where float/mask op ``x`` writes: straight into an accumulator slot when its only
    use is storing it there and nothing reads the slot's old value after ``x`` (so
    ``acc = acc + v`` is one instruction, no copies); else a fresh register. ``avoid``:
    operands the instruction reads after writing its destination."""
    users = ctx.users.get(x, [])
    fresh = ctx.new(VEC)
    if len(users) != 1 or users[0].op is not Op.STORE or users[0].src[1] is not x:
        return fresh
    key = slot_key(users[0].src[0])
    if key is None or key not in ctx.accumulators:
        return fresh
    at, store = ctx.position[x], ctx.position[users[0]]
    slot = ctx.accumulators[key]
    if ctx.alias_reads.get(key, -1) > at or _after(ctx.slot_loads.get(key, []), at, store) < store:
        return fresh
    if any(ctx.values.get(a) is slot for a in avoid):
        return fresh
    return slot


def _element(ctx: Selection, idx: UOp, value: DType) -> VReg:
    """The register holding element ``idx.src[1]`` of an accumulator array (DEFINE_REG
    arrays live in registers, one per element or per vector accessed at an element:
    loop-carried accumulators never touch memory unless the allocator spills them)."""
    reg = register_array(idx)
    assert reg is not None
    if idx.src[1].op is not Op.CONST:
        raise NotImplementedError("x86 renderer: a register array indexed by a variable")
    key = (reg, int(idx.src[1].arg))
    if key not in ctx.accumulators:
        cls = VEC if is_float(value) or value.count > 1 else GPR
        ctx.accumulators[key] = ctx.new(cls)
    return ctx.accumulators[key]


def address(ctx: Selection, idx: UOp) -> Mem:
    """``[base + index*itemsize]`` of a global INDEX."""
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    size = ptr.base.scalar().itemsize
    base = ctx.values[idx.src[0]]
    at = idx.src[1]
    if at.op is Op.CONST and -(2**31) <= int(at.arg) * size < 2**31:
        return Mem(base=base, disp=int(at.arg) * size)
    return Mem(base=base, idx=ctx.gpr(at), scale=size)


_LOADS: dict[DType, tuple[str, int]] = {
    dtypes.bool: ("movzx", 1),
    dtypes.int8: ("movsx", 1),
    dtypes.uint8: ("movzx", 1),
    dtypes.int16: ("movsx", 2),
    dtypes.uint16: ("movzx", 2),
    dtypes.int32: ("movsxd", 4),
    dtypes.uint32: ("mov", 4),
    dtypes.int64: ("mov", 8),
    dtypes.uint64: ("mov", 8),
}


def load_into(ctx: Selection, v: VReg, dt: DType, mem: Mem) -> None:
    if dt is F16:  # the half in every word lane, the low one converted to float32
        ctx.emit("vpbroadcastw", v, mem)
        ctx.emit("vcvtph2ps", v, v)
        return
    if dt.scalar() is F16:  # 8 or 4 halves, converted to float32 lanes
        ctx.emit("vcvtph2ps", v, mem, vlen=vlen(dt))
        return
    if dt.scalar() in FLOAT_SET or dt.count > 1:
        ctx.emit(mov_for(dt), v, mem, vlen=vlen(dt))
        return
    how, width = _LOADS[dt]
    ctx.emit(how, v, mem, width=width)


#: bytes a gated access may touch at its safe address (the 32-byte ``vtemp`` slot, or a
#: 32-byte pool entry)
SAFE_BYTES = 32


def memory_bytes(u: UOp) -> bytes:
    """The bytes constant ``u`` has in memory (as its dtype stores it), padded to
    ``SAFE_BYTES``."""
    dt = u.dtype
    values = u.arg if isinstance(u.arg, tuple) else (u.arg,) * dt.count
    fmt = dt.scalar().fmt
    assert fmt is not None
    raw = struct.pack(f"<{len(values)}{fmt}", *values)
    return raw + b"\0" * (SAFE_BYTES - len(raw))


def safe_address(ctx: Selection, mem: Mem, gate: UOp, safe: Mem) -> Mem:
    """``[mem]`` where ``gate`` holds, else ``[safe]``, chosen without a branch: the
    address is picked by a cmov, so a masked-off access reads or writes ``safe``, never
    ``mem`` (which may be past the end of its buffer)."""
    real, other = ctx.new(GPR), ctx.new(GPR)
    ctx.emit("lea", real, mem)
    ctx.emit("lea", other, safe)
    cond = ctx.gpr(gate)
    ctx.emit("test", cond, cond, width=4)
    ctx.emit("cmove", real, other)
    return Mem(base=real)


def stash(ctx: Selection, alt: UOp) -> Mem:
    """Memory holding ``alt`` as a load of its dtype reads it: a pool constant, or the
    ``vtemp`` slot it is stored to."""
    if alt.op in CONSTS:
        return ctx.constant(memory_bytes(alt))
    slot = frame_slot("vtemp", 0)
    _store_value(ctx, slot, alt)
    return slot


def load(ctx: Selection, x: UOp) -> UOp:
    idx = x.src[0]
    if register_array(idx) is not None:
        slot = _element(ctx, idx, x.dtype)
        key = slot_key(idx)
        at = ctx.position.get(x, -1)
        last_read = max((ctx.position[u] for u in ctx.users.get(x, [])), default=at)
        if (
            key is not None
            and at >= 0
            and last_read <= _after(ctx.slot_stores.get(key, []), at, last_read)
        ):
            ctx.values[x] = slot  # read in place: every use comes before the slot changes
            ctx.alias_reads[key] = max(ctx.alias_reads.get(key, -1), last_read)
        else:
            ctx.values[x] = ctx.copy_reg(slot, vlen(x.dtype))
        return SELECTED
    dt = x.dtype
    mem = address(ctx, idx)
    if len(idx.src) < 3:
        v = ctx.values[x] = ctx.new(VEC if dt.scalar() in FLOAT_SET or dt.count > 1 else GPR)
        load_into(ctx, v, dt, mem)
        return SELECTED
    if vlen(dt) == 64:  # AVX-512: a masked load (masked-off lanes never fault)
        alt = x.src[1]
        zero = alt.op in CONSTS and not any(memory_bytes(alt))
        v = ctx.values[x] = ctx.new(VEC) if zero else ctx.copy(alt)
        k = _opmask(ctx, idx.src[2])
        ctx.emit("vmovups_kz" if zero else "vmovups_k", v, mem, k, vlen=64)
        return SELECTED
    v = ctx.values[x] = ctx.new(VEC if dt.scalar() in FLOAT_SET or dt.count > 1 else GPR)
    load_into(ctx, v, dt, safe_address(ctx, mem, idx.src[2], stash(ctx, x.src[1])))
    return SELECTED


def _opmask(ctx: Selection, gate: UOp) -> Reg:
    """Opmask k1 with every lane set where ``gate`` holds, none where not (``-gate``)."""
    g = ctx.new(GPR)
    ctx.emit("mov", g, ctx.gpr(gate))
    ctx.emit("neg", g)
    ctx.emit("kmovw", KMASK[1], g, width=4)
    return KMASK[1]


def store_half(ctx: Selection, mem: Mem, v: VReg) -> None:
    """Store the float32 in ``v``'s low lane (a float16 value: exact) as float16 bits."""
    t = ctx.new(VEC)
    ctx.emit("vcvtps2ph", t, v, Imm(0))
    ctx.emit("vpextrw_st", mem, t, Imm(0))


def _store_value(ctx: Selection, mem: Mem, val: UOp) -> None:
    dt = val.dtype
    if dt is F16:
        store_half(ctx, mem, ctx.vec(val))
        return
    if dt.scalar() is F16:  # float32 lanes (float16 values: exact) -> 8 or 4 halves
        ctx.emit("vcvtps2ph", mem, ctx.vec(val), Imm(0), vlen=vlen(dt))
        return
    if dt.scalar() in FLOAT_SET or dt.count > 1:
        ctx.emit(mov_for(dt) + "_st", mem, ctx.vec(val), vlen=vlen(dt))
        return
    ctx.emit("store", mem, ctx.gpr(val), width=dt.itemsize)


def store(ctx: Selection, x: UOp) -> UOp:
    idx, val = x.src[0], x.src[1]
    if register_array(idx) is not None:
        slot = _element(ctx, idx, val.dtype)
        if ctx.values.get(val) is slot:
            return SELECTED  # computed in place (``destination``)
        if slot.cls is VEC:
            ctx.move(slot, ctx.fsource(val), val.dtype)
        elif isinstance(src_i := ctx.operand(val), Imm):
            load_immediate(ctx, slot, src_i.value)
        else:
            ctx.emit("mov", slot, src_i)
        return SELECTED
    mem = address(ctx, idx)
    if len(idx.src) > 2 and vlen(val.dtype) == 64:  # AVX-512: a masked store
        v = ctx.vec(val)
        ctx.emit("vmovups_kst", mem, v, _opmask(ctx, idx.src[2]), vlen=64)
        return SELECTED
    if len(idx.src) > 2:  # masked off: the store goes to the vtemp slot
        mem = safe_address(ctx, mem, idx.src[2], frame_slot("vtemp", 0))
    _store_value(ctx, mem, val)
    return SELECTED
