"""Instruction selection of ALU ops, CAST and BITCAST (scalar integers, bools, floats).

Integer ops run on the canonical 64-bit registers (see ``context``): 64-bit dtypes at 64
bits, narrower ones at 32 bits followed by ``normalize`` (wrap to the width, extend again).
"""

from __future__ import annotations

from fusegrad.renderer.x86.context import (
    F16,
    F32,
    F64,
    FLOAT_SET,
    GPR,
    SELECTED,
    UINTS,
    VEC,
    Op,
    Selection,
    float_bits,
    is_float,
    load_immediate,
    normalize,
    op_width,
    round_half,
    suffix,
    vlen,
)
from fusegrad.renderer.x86.isa import KMASK, RAX, RCX, RDX, Imm, Label, Mem, VReg
from fusegrad.renderer.x86.memory import destination
from fusegrad.uop import DType, UOp, dtypes

_BITWISE = {Op.AND: "and", Op.OR: "or", Op.XOR: "xor"}
_ARITH = {Op.ADD: "add", Op.SUB: "sub", Op.MUL: "imul"}
#: bool arithmetic: + saturates (or), - is xor, * is and
_BOOL_ARITH = {Op.ADD: "or", Op.SUB: "xor", Op.MUL: "and", Op.MAX: "or"}


def _binary(ctx: Selection, op: str, a: UOp, b: UOp, dt: DType) -> VReg:
    """``a op b``; and/or/xor run on all 64 bits (canonical operands give a canonical
    result, where a 32-bit op would zero the upper half of a negative int32)."""
    if op == "imul" and isinstance(imm := ctx.operand(b), Imm):  # imul d, a, imm
        d = ctx.new(GPR)
        ctx.emit("imul3", d, ctx.gpr(a), imm, width=op_width(dt))
        return d
    d = ctx.copy(a)
    src = ctx.gpr(b) if op == "imul" else ctx.operand(b)
    ctx.emit(op, d, src, width=8 if op in ("and", "or", "xor") else op_width(dt))
    return d


def _add64(ctx: Selection, a: UOp, b: UOp) -> VReg:
    d = ctx.new(GPR)
    base = ctx.gpr(a)
    other = ctx.operand(b)
    if isinstance(other, Imm):
        ctx.emit("lea", d, Mem(base=base, disp=other.value))
    else:
        ctx.emit("lea", d, Mem(base=base, idx=other))
    return d


def int_alu(ctx: Selection, x: UOp) -> UOp:
    """ADD/SUB/MUL/AND/OR/XOR/MAX on integers and bools."""
    a, b = x.src
    dt = x.dtype
    if dt is dtypes.bool:
        ctx.values[x] = _binary(ctx, {**_BITWISE, **_BOOL_ARITH}[x.op], a, b, dt)
        return SELECTED
    if x.op is Op.MAX:
        d = ctx.copy(a)
        other = ctx.gpr(b)
        ctx.emit("cmp", d, other)
        ctx.emit("cmovb" if dt in UINTS else "cmovl", d, other)
        ctx.values[x] = d
        return SELECTED
    if x.op is Op.ADD and dt.itemsize == 8:  # 64-bit: one lea, no copy first
        ctx.values[x] = _add64(ctx, a, b)
        return SELECTED
    d = _binary(ctx, {**_BITWISE, **_ARITH}[x.op], a, b, dt)
    if x.op in _ARITH:
        normalize(ctx, d, dt)
    ctx.values[x] = d
    return SELECTED


def int_mulacc(ctx: Selection, x: UOp) -> UOp:
    a, b, c = x.src
    dt = x.dtype
    if dt is dtypes.bool:  # (a & b) | c
        d = _binary(ctx, "and", a, b, dt)
        ctx.emit("or", d, ctx.operand(c))
    else:
        d = _binary(ctx, "imul", a, b, dt)
        ctx.emit("add", d, ctx.operand(c), width=op_width(dt))
        normalize(ctx, d, dt)
    ctx.values[x] = d
    return SELECTED


def int_neg(ctx: Selection, x: UOp) -> UOp:
    d = ctx.copy(x.src[0])
    if x.dtype is dtypes.bool:
        ctx.emit("xor", d, Imm(1), width=4)
    else:
        ctx.emit("neg", d)
        normalize(ctx, d, x.dtype)
    ctx.values[x] = d
    return SELECTED


def int_identity(ctx: Selection, x: UOp) -> UOp:
    """TRUNC of an integer is the integer."""
    ctx.values[x] = ctx.gpr(x.src[0])
    return SELECTED


def _zero(ctx: Selection) -> VReg:
    z = ctx.new(GPR)
    ctx.emit("mov", z, Imm(0), width=4)
    return z


def int_shift(ctx: Selection, x: UOp) -> UOp:
    """SHL/SHR; a count past the width (unsigned) gives 0, or the sign for signed SHR."""
    a, b = x.src
    dt = x.dtype
    bits = dt.itemsize * 8
    signed = dt not in UINTS
    op = "shl" if x.op is Op.SHL else "sar" if signed else "shr"
    d = ctx.copy(a)
    if b.op is Op.CONST:
        count = int(b.arg) % (1 << bits)
        if count < bits or op == "sar":
            ctx.emit(op, d, Imm(min(count, bits - 1)))
        else:
            ctx.emit("mov", d, Imm(0), width=4)
    else:
        ctx.emit("mov", RCX, ctx.gpr(b))
        limit = ctx.new(GPR)
        if op == "sar":  # shift by min(count, bits - 1)
            ctx.emit("mov", limit, Imm(bits - 1), width=4)
            ctx.emit("cmp", RCX, limit)
            ctx.emit("cmova", RCX, limit)
            ctx.emit(op, d, RCX)
        else:
            ctx.emit(op, d, RCX)
            ctx.emit("mov", limit, Imm(0), width=4)
            ctx.emit("cmp", RCX, Imm(bits))
            ctx.emit("cmovae", d, limit)
    normalize(ctx, d, dt)
    ctx.values[x] = d
    return SELECTED


def int_divide(ctx: Selection, x: UOp) -> UOp:
    """CDIV/CMOD: C's truncating division; by 0 -> 0, by -1 -> -a (CDIV) or 0 (CMOD)."""
    a, b = x.src
    dt = x.dtype
    width = op_width(dt)
    signed = dt not in UINTS
    d = ctx.new(GPR)
    divisor = ctx.gpr(b)
    zero, done = ctx.label("divzero"), ctx.label("divdone")
    ctx.emit("test", divisor, divisor, width=width)
    ctx.emit("je", Label(zero))
    negate = ctx.label("divneg")
    if signed:
        ctx.emit("cmp", divisor, Imm(-1), width=width)
        ctx.emit("je", Label(negate))
    ctx.emit("mov", RAX, ctx.gpr(a))
    if signed:
        ctx.emit("cqo" if width == 8 else "cdq")
        ctx.emit("idiv", divisor, width=width)
    else:
        ctx.emit("xor", RDX, RDX, width=4)
        ctx.emit("div", divisor, width=width)
    ctx.emit("mov", d, RAX if x.op is Op.CDIV else RDX)
    ctx.emit("jmp", Label(done))
    if signed:
        ctx.place(negate)
        if x.op is Op.CDIV:
            ctx.emit("mov", d, ctx.gpr(a))
            ctx.emit("neg", d)
            ctx.emit("jmp", Label(done))
    ctx.place(zero)
    ctx.emit("mov", d, Imm(0), width=4)
    ctx.place(done)
    normalize(ctx, d, dt)
    ctx.values[x] = d
    return SELECTED


_INT_CONDITIONS = {
    (Op.CMPLT, True): "l",
    (Op.CMPLT, False): "b",
    (Op.CMPEQ, True): "e",
    (Op.CMPEQ, False): "e",
    (Op.CMPNE, True): "ne",
    (Op.CMPNE, False): "ne",
}


def _setcc(ctx: Selection, cond: str) -> VReg:
    d = ctx.new(GPR)
    ctx.emit(f"set{cond}", d)
    ctx.emit("movzx", d, d, width=1)
    return d


def int_compare(ctx: Selection, x: UOp) -> UOp:
    a, b = x.src
    signed = a.dtype.scalar() not in (*dtypes.uints, dtypes.bool)
    ctx.emit("cmp", ctx.gpr(a), ctx.operand(b))
    ctx.values[x] = _setcc(ctx, _INT_CONDITIONS[(x.op, signed)])
    return SELECTED


def float_compare(ctx: Selection, x: UOp) -> UOp:
    """a < b is ``b > a`` (false when unordered); == and != also test the parity flag."""
    a, b = x.src
    ucomi = "vucomi" + suffix(a.dtype)
    if x.op is Op.CMPLT:
        ctx.emit(ucomi, ctx.vec(b), ctx.fsource(a))
        ctx.values[x] = _setcc(ctx, "a")
        return SELECTED
    ctx.emit(ucomi, ctx.vec(a), ctx.fsource(b))
    eq = x.op is Op.CMPEQ
    d, parity = ctx.new(GPR), ctx.new(GPR)
    ctx.emit("sete" if eq else "setne", d)
    ctx.emit("setnp" if eq else "setp", parity)
    ctx.emit("and" if eq else "or", d, parity, width=4)
    ctx.emit("movzx", d, d, width=1)
    ctx.values[x] = d
    return SELECTED


def compare(ctx: Selection, x: UOp) -> UOp:
    """CMPLT/CMPNE/CMPEQ -> a bool (0/1) register."""
    if is_float(x.src[0].dtype):
        return float_compare(ctx, x)
    return int_compare(ctx, x)


def where(ctx: Selection, x: UOp) -> UOp:
    """cond ? a : b without a branch: a cmov on integers; on floats a blend whose mask is
    the bool negated (0 -> 0, 1 -> all ones: the sign bit of the low lane)."""
    cond, a, b = x.src
    if is_float(x.dtype):
        mask, m, d = ctx.new(GPR), ctx.new(VEC), ctx.new(VEC)
        ctx.emit("mov", mask, ctx.gpr(cond))
        ctx.emit("neg", mask)
        ctx.emit("vmovq", m, mask)
        blend = "vblendvpd" if x.dtype is F64 else "vblendvps"
        ctx.emit(blend, d, ctx.vec(b), ctx.fsource(a), m)
        ctx.values[x] = d
        return SELECTED
    d = ctx.copy(b)
    c = ctx.gpr(cond)
    ctx.emit("test", c, c, width=4)
    ctx.emit("cmovne", d, ctx.gpr(a))
    ctx.values[x] = d
    return SELECTED


# -- float16 ---------------------------------------------------------------------------------


def half_alu(ctx: Selection, x: UOp) -> UOp:
    """float16 arithmetic: the float32 op, its result rounded to float16 (float32 keeps
    2*11+2 bits, so + - * / sqrt rounded twice are rounded once); MULACC rounds the product,
    then the sum (exec_alu's MULACC of the narrow floats)."""
    if x.op is Op.MULACC:
        a, b, c = x.src
        d = ctx.new(VEC)
        s, n = suffix(x.dtype), vlen(x.dtype)
        ctx.emit("vmul" + s, d, ctx.vec(a), ctx.fsource(b), vlen=n)
        round_half(ctx, d, n)
        ctx.emit("vadd" + s, d, d, ctx.fsource(c), vlen=n)
        ctx.values[x] = d
    elif x.op is Op.SQRT:
        float_unary(ctx, x)
    else:
        float_binary(ctx, x)
    round_half(ctx, ctx.values[x], vlen(x.dtype))
    return SELECTED


# -- floats -----------------------------------------------------------------------------------

_FLOAT_BINARY = {Op.ADD: "vadd", Op.SUB: "vsub", Op.MUL: "vmul", Op.FDIV: "vdiv"}


def float_binary(ctx: Selection, x: UOp) -> UOp:
    a, b = x.src
    d = destination(ctx, x)
    op = _FLOAT_BINARY[x.op] + suffix(x.dtype)
    ctx.emit(op, d, ctx.vec(a), ctx.fsource(b), vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED


def float_unary(ctx: Selection, x: UOp) -> UOp:
    """SQRT, TRUNC (round toward zero, no precision exception), NEG (flip the sign bit)."""
    a = ctx.vec(x.src[0])
    d = ctx.new(VEC)
    s, n = suffix(x.dtype), vlen(x.dtype)
    packed = x.dtype.count > 1
    if x.op is Op.SQRT:
        ctx.emit("vsqrt" + s, d, *((a,) if packed else (a, a)), vlen=n)
    elif x.op is Op.TRUNC:
        rounding = "vrndscale" if n == 64 else "vround"  # imm 11: toward zero, no #P
        ctx.emit(rounding + s, d, *((a,) if packed else (a, a)), Imm(11), vlen=n)
    elif n == 64:  # AVX512F has no vxorps on zmm: vpxord/q with the sign broadcast
        pool = ctx.constant(float_bits(x.dtype, -0.0))
        xor = "vpxorq" if x.dtype.scalar() is F64 else "vpxord"
        ctx.emit(xor, d, a, Mem(label=pool.label, broadcast=True), vlen=n)
    else:
        sign = float_bits(x.dtype, -0.0)
        ctx.emit("vxorps", d, a, ctx.constant(sign), vlen=n)
    ctx.values[x] = d
    return SELECTED


def float_mulacc(ctx: Selection, x: UOp) -> UOp:
    """a * b + c with one rounding (vfmadd231: d = a * b + d)."""
    a, b, c = x.src
    d = destination(ctx, x, avoid=(a, b))
    if ctx.values.get(c) is not d:
        ctx.move(d, ctx.fsource(c), x.dtype)
    op = "vfmadd231" + suffix(x.dtype)
    ctx.emit(op, d, ctx.vec(a), ctx.fsource(b), vlen=vlen(x.dtype))
    ctx.values[x] = d
    return SELECTED


def _wide_max(ctx: Selection, x: UOp, a: VReg, b: VReg) -> VReg:
    """``float_max`` on zmm registers: the blends under opmask k1 (compares write k1)."""
    s, k = suffix(x.dtype), KMASK[1]
    blend = "vblendm" + s
    d, both = ctx.new(VEC), ctx.new(VEC)
    ctx.emit("vmax" + s, d, b, a, vlen=64)
    ctx.emit("vcmp" + s, k, b, b, Imm(3), vlen=64)  # b unordered: b
    ctx.emit(blend, d, d, b, k, vlen=64)
    ctx.emit("vpandd", both, a, b, vlen=64)  # equal values: -0.0 only when both are
    ctx.emit("vcmp" + s, k, a, b, Imm(0), vlen=64)
    ctx.emit(blend, d, d, both, k, vlen=64)
    ctx.emit("vcmp" + s, k, a, a, Imm(3), vlen=64)  # a unordered: a
    ctx.emit(blend, d, d, a, k, vlen=64)
    return d


def float_max(ctx: Selection, x: UOp) -> UOp:
    """exec_alu's MAX: NaN wins (a's first), and max(-0.0, 0.0) is 0.0."""
    a, b = (ctx.vec(s) for s in x.src)
    s, n = suffix(x.dtype), vlen(x.dtype)
    if n == 64:
        ctx.values[x] = _wide_max(ctx, x, a, b)
        return SELECTED
    blend = "vblendvps" if s in ("ss", "ps") else "vblendvpd"
    d, mask, both = ctx.new(VEC), ctx.new(VEC), ctx.new(VEC)
    ctx.emit("vmax" + s, d, b, a, vlen=n)  # a if either is NaN or both are zero, else the larger
    ctx.emit("vcmp" + s, mask, b, b, Imm(3), vlen=n)  # b unordered
    ctx.emit(blend, d, d, b, mask, vlen=n)
    ctx.emit("vandps", both, a, b, vlen=n)  # equal values: -0.0 only when both are
    ctx.emit("vcmp" + s, mask, a, b, Imm(0), vlen=n)  # a == b (ordered)
    ctx.emit(blend, d, d, both, mask, vlen=n)
    ctx.emit("vcmp" + s, mask, a, a, Imm(3), vlen=n)  # a unordered: a
    ctx.emit(blend, d, d, a, mask, vlen=n)
    ctx.values[x] = d
    return SELECTED


# -- conversions ------------------------------------------------------------------------------


def _to_bool(ctx: Selection, src: UOp) -> VReg:
    if is_float(src.dtype):
        z = ctx.new(VEC)
        ctx.emit("vxorps", z, z, z)
        ctx.emit("vucomi" + suffix(src.dtype), ctx.vec(src), z)
        d, parity = ctx.new(GPR), ctx.new(GPR)
        ctx.emit("setne", d)
        ctx.emit("setp", parity)
        ctx.emit("or", d, parity, width=4)
        ctx.emit("movzx", d, d, width=1)
        return d
    ctx.emit("cmp", ctx.gpr(src), Imm(0))
    return _setcc(ctx, "ne")


def _int_to_float(ctx: Selection, src: UOp, dst: DType) -> VReg:
    """Through float64 (as exec_alu): exact for everything but 64-bit integers, which round
    to float64 first; uint64 with its top bit set converts (x >> 1 | x & 1) and doubles."""
    a = ctx.gpr(src)
    d = ctx.new(VEC)
    wide = src.dtype.scalar().itemsize == 8
    direct = "vcvtsi2ss" if dst is dtypes.float32 and not wide else "vcvtsi2sd"
    if src.dtype.scalar() is not dtypes.uint64:
        ctx.emit(direct, d, d, a)
    else:
        big, done = ctx.label("u64big"), ctx.label("u64done")
        ctx.emit("test", a, a)
        ctx.emit("js", Label(big))
        ctx.emit("vcvtsi2sd", d, d, a)
        ctx.emit("jmp", Label(done))
        ctx.place(big)
        half, low = ctx.new(GPR), ctx.new(GPR)
        ctx.emit("mov", half, a)
        ctx.emit("shr", half, Imm(1))
        ctx.emit("mov", low, a)
        ctx.emit("and", low, Imm(1))
        ctx.emit("or", half, low)
        ctx.emit("vcvtsi2sd", d, d, half)
        ctx.emit("vaddsd", d, d, d)
        ctx.place(done)
    if direct == "vcvtsi2sd" and dst is dtypes.float32:
        ctx.emit("vcvtsd2ss", d, d, d)
    return d


def _float_to_int(ctx: Selection, src: UOp, dst: DType) -> VReg:
    """Truncate through int32 (dtypes of 4 bytes or less but uint32) or int64; uint64 takes
    [2^63, 2^64) by subtracting 2^63 first."""
    a = ctx.vec(src)
    s = suffix(src.dtype)
    fdt = F32 if src.dtype.scalar() is F16 else src.dtype  # a float16 is a float32 here
    d = ctx.new(GPR)
    width = 4 if dst.itemsize < 4 or dst is dtypes.int32 else 8
    ctx.emit("vcvtt" + s + "2si", d, a, width=width)
    if dst is dtypes.uint64:
        done = ctx.label("f2u64")
        ctx.emit("vucomi" + s, a, ctx.constant(float_bits(fdt, 2.0**63)))
        ctx.emit("jb", Label(done))
        ctx.emit("vucomi" + s, a, ctx.constant(float_bits(fdt, 2.0**64)))
        ctx.emit("jae", Label(done))
        t, top = ctx.new(VEC), ctx.new(GPR)
        ctx.emit("vsub" + s, t, a, ctx.constant(float_bits(fdt, 2.0**63)))
        ctx.emit("vcvtt" + s + "2si", d, t, width=8)
        load_immediate(ctx, top, 1 << 63)
        ctx.emit("xor", d, top)
        ctx.place(done)
    normalize(ctx, d, dst)
    return d


def _f64_to_f32_odd(ctx: Selection, src: UOp) -> VReg:
    """float64 -> float32 rounding to odd (truncated, the last bit set when inexact): one
    more rounding, to float16, is then the correctly rounded float64 -> float16."""
    x = ctx.vec(src)
    t, back, ax, ab = ctx.new(VEC), ctx.new(VEC), ctx.new(VEC), ctx.new(VEC)
    ctx.emit("vcvtsd2ss", t, x, x)
    ctx.emit("vcvtss2sd", back, t, t)
    magnitude = ctx.constant((2**63 - 1).to_bytes(8, "little"))
    ctx.emit("vandps", ax, x, magnitude)
    ctx.emit("vandps", ab, back, magnitude)
    bits, over, inexact, unordered = (ctx.new(GPR) for _ in range(4))
    ctx.emit("vmovd", bits, t, width=4)
    ctx.emit("vucomisd", ab, ax)  # rounded away from zero: one step back
    ctx.emit("seta", over)
    ctx.emit("movzx", over, over, width=1)
    ctx.emit("sub", bits, over, width=4)
    ctx.emit("vucomisd", back, x)  # inexact (or NaN, which stays NaN): the odd bit
    ctx.emit("setne", inexact)
    ctx.emit("setp", unordered)
    ctx.emit("or", inexact, unordered, width=4)
    ctx.emit("movzx", inexact, inexact, width=1)
    ctx.emit("or", bits, inexact, width=4)
    d = ctx.new(VEC)
    ctx.emit("vmovd", d, bits, width=4)
    return d


def _to_half(ctx: Selection, src: UOp) -> VReg:
    """Any dtype -> float16 (as a float32 holding the rounded value): through float32, which
    is exact or, for integers past 2**24, already beyond float16's range; float64 rounds to
    odd first so the two roundings are one."""
    sdt = src.dtype.scalar()
    if sdt is F64:
        d = _f64_to_f32_odd(ctx, src)
    elif sdt is F32:
        d = ctx.copy_reg(ctx.vec(src))
    else:
        d = _int_to_float(ctx, src, F32)
    round_half(ctx, d)
    return d


def cast(ctx: Selection, x: UOp) -> UOp:
    src, dst = x.src[0], x.dtype.scalar()
    sdt = src.dtype.scalar()
    if dst is F16 and sdt is not F16:
        ctx.values[x] = _to_half(ctx, src)
    elif sdt is F16 and dst is F32:
        ctx.values[x] = ctx.vec(src)
    elif sdt is dst:
        ctx.values[x] = ctx.vec(src) if dst in FLOAT_SET else ctx.gpr(src)
    elif dst is dtypes.bool:
        ctx.values[x] = _to_bool(ctx, src)
    elif sdt in FLOAT_SET and dst in FLOAT_SET:
        d = ctx.new(VEC)
        a = ctx.vec(src)
        ctx.emit("vcvtss2sd" if dst is dtypes.float64 else "vcvtsd2ss", d, a, a)
        ctx.values[x] = d
    elif dst in FLOAT_SET:
        ctx.values[x] = _int_to_float(ctx, src, dst)
    elif sdt in FLOAT_SET:
        ctx.values[x] = _float_to_int(ctx, src, dst)
    else:  # integer/bool -> integer: wrap and extend
        d = ctx.copy(src)
        normalize(ctx, d, dst)
        ctx.values[x] = d
    return SELECTED


def bitcast(ctx: Selection, x: UOp) -> UOp:
    src, dst = x.src[0], x.dtype.scalar()
    sdt = src.dtype.scalar()
    move = "vmovq" if dst.itemsize == 8 else "vmovd"
    if dst is F16:  # (u)int16 bits -> the float32 of the half
        d = ctx.new(VEC)
        ctx.emit("vmovd", d, ctx.gpr(src), width=4)
        ctx.emit("vcvtph2ps", d, d)
    elif sdt is F16:
        t, d = ctx.new(VEC), ctx.new(GPR)
        ctx.emit("vcvtps2ph", t, ctx.vec(src), Imm(0))
        ctx.emit("vmovd", d, t, width=4)
        normalize(ctx, d, dst)
    elif dst in FLOAT_SET:
        d = ctx.new(VEC)
        ctx.emit(move, d, ctx.gpr(src))
    elif sdt in FLOAT_SET:
        d = ctx.new(GPR)
        ctx.emit(move, d, ctx.vec(src))
        normalize(ctx, d, dst)
    else:
        d = ctx.copy(src)
        normalize(ctx, d, dst)
    ctx.values[x] = d
    return SELECTED
