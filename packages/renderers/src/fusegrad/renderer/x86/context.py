"""The context of instruction selection (``select.py``): the machine code being built,
virtual registers, the constant pool, and operand helpers.

 Values live in virtual registers: integers and bools in general-purpose
registers, *canonical* — sign-extended (signed dtypes) or zero-extended (unsigned, bool) to
64 bits, so comparisons and address arithmetic use the whole register whatever the dtype —
and float32/float64 as scalars in vector registers.

Semantics are ``exec_alu``'s (the C renderer's ``c_ops`` spells the same rules): integers
wrap, division by zero gives 0 (and by -1 the negation, never a trap), shifts past the width
give 0 (arithmetic right shifts the sign), float -> int truncates through a 32- or 64-bit
register with x86's "integer indefinite" for NaN and overflow, MULACC on floats is one fused
multiply-add, and comparisons with NaN are false except ``!=``.
"""

from __future__ import annotations

import functools
import struct
from typing import Final

from fusegrad.renderer.signature import KernelSignature
from fusegrad.renderer.x86.isa import Imm, Inst, Label, Mem, Operand, RegClass, VReg
from fusegrad.uop import DType, Ops, UOp, dtypes


class Op:
    """The ``Ops`` members selection tests for, as plain class attributes: on Python 3.11
    ``Ops.X`` is an attribute lookup through the enum class (~215 ns here, timeit), ``Op.X``
    an ordinary class attribute (~45 ns), and selection asks "is it this op" tens of
    thousands of times per kernel."""

    ADD: Final = Ops.ADD
    AFTER: Final = Ops.AFTER
    AND: Final = Ops.AND
    BARRIER: Final = Ops.BARRIER
    BITCAST: Final = Ops.BITCAST
    CAST: Final = Ops.CAST
    CDIV: Final = Ops.CDIV
    CMOD: Final = Ops.CMOD
    CMPEQ: Final = Ops.CMPEQ
    CMPLT: Final = Ops.CMPLT
    CMPNE: Final = Ops.CMPNE
    CONST: Final = Ops.CONST
    DEFINE_REG: Final = Ops.DEFINE_REG
    END: Final = Ops.END
    ENDIF: Final = Ops.ENDIF
    FDIV: Final = Ops.FDIV
    GEP: Final = Ops.GEP
    GROUP: Final = Ops.GROUP
    IF: Final = Ops.IF
    INDEX: Final = Ops.INDEX
    LOAD: Final = Ops.LOAD
    MAX: Final = Ops.MAX
    MUL: Final = Ops.MUL
    MULACC: Final = Ops.MULACC
    NEG: Final = Ops.NEG
    NOOP: Final = Ops.NOOP
    OR: Final = Ops.OR
    PARAM: Final = Ops.PARAM
    RANGE: Final = Ops.RANGE
    SHL: Final = Ops.SHL
    SHR: Final = Ops.SHR
    SINK: Final = Ops.SINK
    SPECIAL: Final = Ops.SPECIAL
    SQRT: Final = Ops.SQRT
    STORE: Final = Ops.STORE
    SUB: Final = Ops.SUB
    TRUNC: Final = Ops.TRUNC
    VCONST: Final = Ops.VCONST
    VECTORIZE: Final = Ops.VECTORIZE
    WHERE: Final = Ops.WHERE
    XOR: Final = Ops.XOR


GPR, VEC = RegClass.GPR, RegClass.VEC
F16, F32, F64 = dtypes.float16, dtypes.float32, dtypes.float64
#: floats held in vector registers; a float16 is held as the float32 of its value (F16C
#: converts at loads and stores, and every rounding op rounds its float32 result to float16)
FLOATS = (F32, F64, F16)
INTS = tuple(d for d in dtypes.ints if d is not dtypes.weakint)
# Sets, not tuples, wherever selection asks "is it one of these": ``x in tuple`` compares
# DTypes and Ops with ==, several hundred nanoseconds each here, a set hashes once.
FLOAT_SET = frozenset(FLOATS)
UINTS = frozenset(dtypes.uints)
CONSTS = frozenset({Op.CONST, Op.VCONST})


@functools.cache
def frame_slot(kind: str, n: int) -> Mem:
    """The (unplaced) frame slot operand ``kind`` ``n``: ``"vtemp"`` and a byte offset,
    ``"arg"`` and an argument number (built once: operands are immutable)."""
    return Mem(frame=(kind, n))


@functools.cache
def is_float(dt: DType) -> bool:
    """``dtypes.is_float``, cached per dtype (selection asks it constantly)."""
    return dtypes.is_float(dt)


@functools.cache
def is_int(dt: DType) -> bool:
    """``dtypes.is_int``, cached per dtype."""
    return dtypes.is_int(dt)


SELECTED = UOp(Op.NOOP, dtypes.void, (), "x86-selected")
_new_tuple = tuple.__new__
_new_int = int.__new__


class Selection:
    """The machine code of one function being selected: instructions, the virtual register
    of every value, the constant pool, and the kernel's parameters."""

    def __init__(
        self, sig: KernelSignature, uops: list[UOp] | None = None, wide: bool = False
    ) -> None:
        #: AVX-512: float32x16 / float64x8 values in zmm registers
        self.wide = wide
        self.code: list[Inst] = []
        program = uops or []
        self.position: dict[UOp, int] = {u: i for i, u in enumerate(program)}
        self.users: dict[UOp, list[UOp]] = {}
        users = self.users
        for u in program:
            for s in u.src:
                seen = users.get(s)
                if seen is None:
                    users[s] = [u]
                else:
                    seen.append(u)
        #: per accumulator slot: positions of its loads and stores, and the last position an
        #: aliased load's value is read at (see ``memory.load``)
        self.slot_loads: dict[tuple[UOp, int], list[int]] = {}
        self.slot_stores: dict[tuple[UOp, int], list[int]] = {}
        self.alias_reads: dict[tuple[UOp, int], int] = {}
        self.values: dict[UOp, VReg] = {}
        self.lanes: dict[UOp, list[VReg]] = {}
        self.accumulators: dict[tuple[UOp, int], VReg] = {}
        self.loops: dict[UOp, tuple[str, str]] = {}
        self.pool: dict[bytes, str] = {}
        #: the memory operand of each pool entry (built once per entry)
        self.pool_operands: dict[bytes, Mem] = {}
        self.vregs = 0
        self.labels = 0
        #: the vector register whose lanes the vtemp slot holds (``gep`` stored it there and
        #: nothing since wrote the slot or the register, or is a jump target)
        self.in_vtemp: VReg | None = None
        params = [*sig.buffers, *sig.variables] + ([sig.core] if sig.core is not None else [])
        self.arg_index = {p: i for i, p in enumerate(params)}

    # -- building blocks ------------------------------------------------------------------
    def new(self, cls: RegClass) -> VReg:
        self.vregs += 1
        v = _new_int(VReg, self.vregs)  # VReg(id, cls) without its __new__'s frame (hot)
        v.cls = cls
        return v

    def label(self, hint: str) -> str:
        self.labels += 1
        return f".L{hint}{self.labels}"

    def emit(self, op: str, *args: Operand, width: int = 8, vlen: int = 16) -> None:
        self.code.append(_new_tuple(Inst, (op, args, width, vlen)))  # Inst(...), minus a frame
        if self.in_vtemp is not None and _may_change_vtemp(self.in_vtemp, op, args):
            self.in_vtemp = None

    def place(self, name: str) -> None:
        self.emit("label", Label(name))

    def constant(self, raw: bytes) -> Mem:
        """A rip-relative pool entry holding ``raw`` repeated over 32 bytes (a scalar
        constant is broadcast, so vector ops can read it too)."""
        entry = raw * (32 // len(raw)) if len(raw) <= 32 else raw
        mem = self.pool_operands.get(entry)
        if mem is None:
            label = self.pool[entry] = f".LC{len(self.pool)}"
            mem = self.pool_operands[entry] = Mem(label=label)
        return mem

    # -- operands ---------------------------------------------------------------------------
    def gpr(self, u: UOp) -> VReg:
        """The general-purpose register holding integer/bool ``u`` (constants materialized
        where they are used: no register is held for them across the kernel)."""
        if u.op is Op.CONST:
            v = self.new(GPR)
            load_immediate(self, v, int(u.arg))
            return v
        return self.values[u]

    def vec(self, u: UOp) -> VReg:
        """The vector register holding float (or mask, or int32x8) ``u``, scalar or vector
        (a vector held in lanes is put together through the stack slot)."""
        if u in self.lanes:
            return self.assemble_lanes(u)
        if u.op in CONSTS:
            v = self.new(VEC)
            self.move(v, self.fsource(u), u.dtype)
            return v
        return self.values[u]

    def move(self, v: VReg, src: VReg | Mem, dt: DType) -> None:
        """``v = src`` for a float (or vector) value: a register copy, a load, or a
        broadcast of one pool element (a uniform zmm constant)."""
        if isinstance(src, VReg):
            self.emit("vmovaps", v, src, vlen=vlen(dt))
        elif src.broadcast:
            op = "vbroadcastsd" if dt.scalar() is F64 else "vbroadcastss"
            self.emit(op, v, Mem(label=src.label), vlen=vlen(dt))
        else:
            self.emit(mov_for(dt), v, src, vlen=vlen(dt))

    def assemble_lanes(self, u: UOp) -> VReg:
        """One register holding the lanes of ``u`` (floats as they are, bools as a mask)."""
        dt = u.dtype
        mask = dt.scalar() is dtypes.bool
        size = mask_lane(dt) if mask else register_lane(dt)
        for i, lane in enumerate(self.lanes[u]):
            slot = frame_slot("vtemp", i * size)
            if mask:
                t = self.copy_reg(lane)
                self.emit("neg", t)
                self.emit("store", slot, t, width=size)
            elif lane.cls is GPR:
                self.emit("store", slot, lane, width=size)
            else:
                self.emit(mov_for(dt.scalar()) + "_st", slot, lane)
        d = self.new(VEC)
        self.emit("vmovups", d, frame_slot("vtemp", 0), vlen=vlen(dt))
        return d

    def operand(self, u: UOp) -> VReg | Imm:
        """An integer operand: an immediate when it fits a sign-extended imm32."""
        if u.op is Op.CONST and -(2**31) <= int(u.arg) < 2**31:
            return Imm(int(u.arg))
        return self.gpr(u)

    def fsource(self, u: UOp) -> VReg | Mem:
        """A float second source: a pool constant is read from memory directly (one
        element broadcast to every lane for a uniform zmm constant: a 64-byte read of a
        32-byte pool entry would run past it)."""
        if u.op in CONSTS:
            if vlen(u.dtype) == 64 and (u.op is Op.CONST or len(set(u.arg)) == 1):
                raw = const_bytes(u)
                element = raw[: len(raw) // u.dtype.count]  # (a mask lane is all ones or 0)
                return Mem(label=self.constant(element).label, broadcast=True)
            return self.constant(const_bytes(u))
        if u in self.lanes:
            return self.assemble_lanes(u)
        return self.values[u]

    def copy_reg(self, src: VReg, width: int = 16) -> VReg:
        """A fresh register holding a copy of register ``src`` (``width``: vector bytes)."""
        v = self.new(src.cls)
        if src.cls is VEC:
            self.emit("vmovaps", v, src, vlen=width)
        else:
            self.emit("mov", v, src)
        return v

    def copy(self, u: UOp) -> VReg:
        """A fresh register holding a copy of ``u`` (the destination of a two-address op)."""
        if is_float(u.dtype) or u.dtype.count > 1:
            v = self.new(VEC)
            self.move(v, self.fsource(u), u.dtype)
            return v
        v = self.new(GPR)
        value = self.operand(u)
        if isinstance(value, Imm):
            load_immediate(self, v, value.value)
        else:
            self.emit("mov", v, value)
        return v


def _may_change_vtemp(held: VReg, op: str, args: tuple[Operand, ...]) -> bool:
    """Whether an instruction may leave the vtemp slot not holding ``held``'s lanes: a jump
    target, one mentioning ``held`` (it may write it) or a frame slot (it may be vtemp)."""
    if op == "label" or held in args:
        return True
    return any(type(a) is Mem and a.frame is not None for a in args)


@functools.cache
def vlen(dt: DType) -> int:
    """Bytes of the vector register a value of ``dt`` takes (16: xmm, 32: ymm); a bool
    vector is a mask with lanes of ``mask_lane`` bytes."""
    lane = mask_lane(dt) if dt.scalar() is dtypes.bool else register_lane(dt)
    size = dt.count * lane
    return 64 if size > 32 else 32 if size > 16 else 16


@functools.cache
def register_lane(dt: DType) -> int:
    """Bytes per lane of a value of ``dt`` in a register (a float16 is held as float32)."""
    return 4 if dt.scalar() is F16 else dt.scalar().itemsize


def round_half(ctx: Selection, v: VReg, width: int = 16) -> None:
    """Round the float32 lanes of ``v`` to float16 values in place (F16C, nearest even)."""
    t = ctx.new(VEC)
    ctx.emit("vcvtps2ph", t, v, Imm(0), vlen=width)
    ctx.emit("vcvtph2ps", v, t, vlen=width)


@functools.cache
def mask_lane(dt: DType) -> int:
    """Bytes per lane of a bool vector held as a compare mask: 8 and 16 lanes are float32
    compares (4 bytes; 16 in a zmm register), 4 lanes float64 ones (8 bytes)."""
    return 4 if dt.count in (8, 16) else 8


@functools.lru_cache(maxsize=1 << 12)  # (UOps are interned: -0.0 and 0.0 are two nodes)
def const_bytes(u: UOp) -> bytes:
    """The raw bytes of a (vector) float constant, or of a bool vector as a mask."""
    dt = u.dtype
    values = u.arg if isinstance(u.arg, tuple) else (u.arg,) * dt.count
    if dt.scalar() is dtypes.bool:
        size = mask_lane(dt)
        return b"".join((-1 if v else 0).to_bytes(size, "little", signed=True) for v in values)
    if is_int(dt):
        size = dt.scalar().itemsize
        return b"".join((int(v) % (1 << 8 * size)).to_bytes(size, "little") for v in values)
    return b"".join(float_bits(dt, v) for v in values)


def float_bits(dt: DType, x: float) -> bytes:
    """The register bits of float ``x`` of ``dt`` (a float16 as the float32 of its value)."""
    if dt.scalar() is F16:
        return struct.pack("<f", struct.unpack("<e", struct.pack("<e", float(x)))[0])
    return struct.pack("<d" if dt.scalar() is F64 else "<f", float(x))


@functools.cache
def mov_for(dt: DType) -> str:
    if dt.count > 1:
        return "vmovups"
    return "vmovsd" if dt.scalar() is F64 else "vmovss"


@functools.cache
def suffix(dt: DType) -> str:
    """The instruction suffix of a float dtype: scalar ss/sd, packed ps/pd."""
    if dt.count > 1:
        return "pd" if dt.scalar() is F64 else "ps"
    return "sd" if dt.scalar() is F64 else "ss"


def load_immediate(ctx: Selection, v: VReg, value: int) -> None:
    """``v = value`` as the 64-bit canonical register (the shortest encoding)."""
    value = value - 2**64 if value >= 2**63 else value
    if -(2**31) <= value < 2**31:
        ctx.emit("mov", v, Imm(value))
    elif 0 <= value < 2**32:
        ctx.emit("mov", v, Imm(value), width=4)
    else:
        ctx.emit("movabs", v, Imm(value))


_NORMALIZE: dict[DType, tuple[str, int]] = {
    dtypes.int8: ("movsx", 1),
    dtypes.int16: ("movsx", 2),
    dtypes.int32: ("movsxd", 4),
    dtypes.uint8: ("movzx", 1),
    dtypes.uint16: ("movzx", 2),
    dtypes.uint32: ("mov", 4),
}


def normalize(ctx: Selection, v: VReg, dt: DType) -> None:
    """Make ``v`` canonical for ``dt`` again: wrap to its width and extend to 64 bits."""
    how = _NORMALIZE.get(dt.scalar())
    if how is not None:
        ctx.emit(how[0], v, v, width=how[1])


def op_width(dt: DType) -> int:
    """The operand size integer ALU ops of ``dt`` run at (narrow types compute in 32 bits,
    then ``normalize``)."""
    return 8 if dt.itemsize == 8 else 4
