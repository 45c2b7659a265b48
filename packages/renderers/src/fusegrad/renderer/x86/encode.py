"""The x86-64 encoder: one machine instruction (physical registers) -> bytes.

Legacy instructions take a REX prefix (W for 64-bit operands, R/X/B extending the ModRM
reg, SIB index and base/rm fields; a bare REX to reach ``spl``/``bpl``/``sil``/``dil``), an
opcode, ModRM (+ SIB, displacement) and immediates. Vector instructions take a two- or
three-byte VEX prefix (inverted R/X/B, the map, W, the second source in ``vvvv``, L for ymm,
the implied 66/F3/F2 prefix in ``pp``).

Every branch is a rel32 and every constant-pool operand a rip-relative disp32, so an
instruction's size doesn't depend on where its target is: ``encode`` returns the bytes and,
for a label reference, a ``Fixup`` (where the 32-bit field is and which label it needs,
relative to the end of the instruction).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from fusegrad.renderer.x86.evex import encode_evex, kmov
from fusegrad.renderer.x86.isa import CONDITIONS, Imm, Inst, Label, Mem, Reg, RegClass


class EncodeError(ValueError):
    """An instruction the encoder has no form for (a bug in instruction selection)."""


@dataclass(frozen=True, slots=True)
class Fixup:
    """A rel32 field at byte ``offset`` of an instruction that must hold
    ``address(label) - end of the instruction``."""

    offset: int
    label: str


Encoded = tuple[bytes, Fixup | None]


# -- ModRM / SIB ---------------------------------------------------------------------------


def _regnum(op: object) -> int:
    if not isinstance(op, Reg):
        raise EncodeError(f"expected a physical register, got {op!r}")
    return op.num


_SCALE_BITS = {1: 0, 2: 1, 4: 2, 8: 3}


def _modrm(reg: int, rm: Reg | Mem, n: int = 1) -> tuple[int, int, bytes, int | None]:
    """(REX.X, REX.B, ModRM+SIB+disp bytes, offset of a rip disp32 in them or None).
    ``n``: EVEX's compressed displacement (a disp8 counts units of ``n`` bytes)."""
    if isinstance(rm, Reg):
        return 0, rm.num >> 3, bytes([0xC0 | (reg & 7) << 3 | (rm.num & 7)]), None
    if rm.label is not None:
        return 0, 0, bytes([(reg & 7) << 3 | 5]) + b"\0\0\0\0", 1
    if rm.frame is not None:
        raise EncodeError(f"frame slot {rm.frame} was not placed")
    base = rm.base
    index = rm.idx
    if (base is not None and not isinstance(base, Reg)) or (
        index is not None and not isinstance(index, Reg)
    ):
        raise EncodeError(f"memory operand with virtual registers: {rm!r}")
    scale_bits = _SCALE_BITS[rm.scale]
    disp = rm.disp
    if base is None:  # [index*scale + disp32]
        idx = index.num if index is not None else 4
        sib = bytes([scale_bits << 6 | (idx & 7) << 3 | 5])
        return idx >> 3, 0, bytes([(reg & 7) << 3 | 4]) + sib + struct.pack("<i", disp), None
    if disp == 0 and base.num & 7 != 5:
        mod, tail = 0, b""
    elif disp % n == 0 and -128 <= disp // n < 128:
        mod, tail = 1, struct.pack("<b", disp // n)
    else:
        mod, tail = 2, struct.pack("<i", disp)
    if index is None and base.num & 7 != 4:
        return 0, base.num >> 3, bytes([mod << 6 | (reg & 7) << 3 | (base.num & 7)]) + tail, None
    idx = index.num if index is not None else 4
    if idx == 4 and index is not None:
        raise EncodeError("rsp can't be an index register")
    sib = bytes([scale_bits << 6 | (idx & 7) << 3 | (base.num & 7)])
    return idx >> 3, base.num >> 3, bytes([mod << 6 | (reg & 7) << 3 | 4]) + sib + tail, None


def _legacy(
    opcode: bytes,
    reg: int,
    rm: Reg | Mem,
    width: int = 4,
    imm: bytes = b"",
    byte_regs: tuple[int, ...] = (),
) -> Encoded:
    """A legacy instruction: [66] [REX] opcode ModRM... imm. ``byte_regs``: register numbers
    used as 8-bit registers (4-7 need a REX to mean spl..dil)."""
    x, b, modrm, rip = _modrm(reg, rm)
    rex = (width == 8) << 3 | (reg >> 3 & 1) << 2 | x << 1 | b
    need_rex = rex != 0 or any(4 <= n <= 7 for n in byte_regs)
    prefix = (b"\x66" if width == 2 else b"") + (bytes([0x40 | rex]) if need_rex else b"")
    head = prefix + opcode
    out = head + modrm + imm
    fix = Fixup(len(head) + rip, _label(rm)) if rip is not None else None
    return out, fix


def _label(rm: Reg | Mem) -> str:
    assert isinstance(rm, Mem) and rm.label is not None
    return rm.label


def _vex(
    op: tuple[int, int, int, int], vlen: int, reg: int, vvvv: int, rm: Reg | Mem, imm: bytes = b""
) -> Encoded:
    """A VEX-encoded instruction, ``op`` = (pp, map, W, opcode) (two-byte VEX when it can be)."""
    pp, mmmmm, w, opcode = op
    x, b, modrm, rip = _modrm(reg, rm)
    r = reg >> 3 & 1
    length = 1 if vlen == 32 else 0
    tail = (~vvvv & 15) << 3 | length << 2 | pp
    if mmmmm == 1 and w == 0 and x == 0 and b == 0:
        head = bytes([0xC5, (1 - r) << 7 | tail, opcode])
    else:
        byte1 = (1 - r) << 7 | (1 - x) << 6 | (1 - b) << 5 | mmmmm
        head = bytes([0xC4, byte1, w << 7 | tail, opcode])
    fix = Fixup(len(head) + rip, _label(rm)) if rip is not None else None
    return head + modrm + imm, fix


# -- integer instructions ------------------------------------------------------------------

_ALU_RM = {
    "add": 0x01,
    "or": 0x09,
    "and": 0x21,
    "sub": 0x29,
    "xor": 0x31,
    "cmp": 0x39,
    "test": 0x85,
}
_ALU_DIGIT = {"add": 0, "or": 1, "and": 4, "sub": 5, "xor": 6, "cmp": 7}
_SHIFT_DIGIT = {"shl": 4, "shr": 5, "sar": 7}
_UNARY_DIGIT = {"not": 2, "neg": 3, "div": 6, "idiv": 7}


def _reg_or_mem(op: object) -> Reg | Mem:
    if not isinstance(op, (Reg, Mem)):
        raise EncodeError(f"expected a register or memory operand, got {op!r}")
    return op


def _alu(i: Inst) -> Encoded:
    dst, src = i.args
    if isinstance(src, Imm):
        if i.op == "test":
            raise EncodeError("test with an immediate is not emitted")
        digit = _ALU_DIGIT[i.op]
        if -128 <= src.value < 128:
            return _legacy(b"\x83", digit, _reg_or_mem(dst), i.width, struct.pack("<b", src.value))
        return _legacy(b"\x81", digit, _reg_or_mem(dst), i.width, struct.pack("<i", src.value))
    if isinstance(src, Mem):  # reg, [m]: the "r, r/m" opcode
        if i.op == "test":
            raise EncodeError("test with a memory operand is not emitted")
        return _legacy(bytes([_ALU_RM[i.op] + 2]), _regnum(dst), src, i.width)
    return _legacy(bytes([_ALU_RM[i.op]]), _regnum(src), _reg_or_mem(dst), i.width)


def _mov(i: Inst) -> Encoded:
    dst, src = i.args
    if isinstance(src, Imm):
        r = _regnum(dst)
        if i.width == 4:
            rex = b"\x41" if r >= 8 else b""
            return rex + bytes([0xB8 + (r & 7)]) + struct.pack("<I", src.value & 0xFFFFFFFF), None
        return _legacy(b"\xc7", 0, Reg(r, RegClass.GPR), 8, struct.pack("<i", src.value))
    if isinstance(src, Mem):
        return _legacy(b"\x8b", _regnum(dst), src, i.width)
    return _legacy(b"\x89", _regnum(src), _reg_or_mem(dst), i.width)


def _movabs(i: Inst) -> Encoded:
    dst, src = i.args
    assert isinstance(src, Imm)
    r = _regnum(dst)
    rex = bytes([0x48 | r >> 3])
    return rex + bytes([0xB8 + (r & 7)]) + struct.pack("<Q", src.value & (2**64 - 1)), None


def _store(i: Inst) -> Encoded:
    dst, src = i.args
    r = _regnum(src)
    if i.width == 1:
        return _legacy(b"\x88", r, _reg_or_mem(dst), 1, byte_regs=(r,))
    return _legacy(b"\x89", r, _reg_or_mem(dst), i.width)


def _extend(i: Inst) -> Encoded:
    """movsx r64, r/m8|16 (width = the source's size); movzx r32, r/m8|16; movsxd r64, r/m32."""
    dst, src = i.args
    rm = _reg_or_mem(src)
    byte_regs = (rm.num,) if isinstance(rm, Reg) and i.width == 1 else ()
    if i.op == "movsxd":
        return _legacy(b"\x63", _regnum(dst), rm, 8)
    second = {("movsx", 1): 0xBE, ("movsx", 2): 0xBF, ("movzx", 1): 0xB6, ("movzx", 2): 0xB7}
    opcode = bytes([0x0F, second[(i.op, i.width)]])
    return _legacy(opcode, _regnum(dst), rm, 8 if i.op == "movsx" else 4, byte_regs=byte_regs)


def _lea(i: Inst) -> Encoded:
    dst, src = i.args
    return _legacy(b"\x8d", _regnum(dst), _reg_or_mem(src), 8)


def _imul(i: Inst) -> Encoded:
    dst, src = i.args
    return _legacy(b"\x0f\xaf", _regnum(dst), _reg_or_mem(src), i.width)


def _unary(i: Inst) -> Encoded:
    return _legacy(b"\xf7", _UNARY_DIGIT[i.op], _reg_or_mem(i.args[0]), i.width)


def _shift(i: Inst) -> Encoded:
    dst, count = i.args
    digit = _SHIFT_DIGIT[i.op]
    if isinstance(count, Imm):
        return _legacy(b"\xc1", digit, _reg_or_mem(dst), i.width, bytes([count.value & 63]))
    if _regnum(count) != 1:
        raise EncodeError(f"{i.op}: a variable shift count must be in cl, got {count!r}")
    return _legacy(b"\xd3", digit, _reg_or_mem(dst), i.width)


def _cmov(i: Inst) -> Encoded:
    dst, src = i.args
    cc = CONDITIONS[i.op[4:]]
    return _legacy(bytes([0x0F, 0x40 | cc]), _regnum(dst), _reg_or_mem(src), i.width)


def _setcc(i: Inst) -> Encoded:
    r = _regnum(i.args[0])
    cc = CONDITIONS[i.op[3:]]
    return _legacy(bytes([0x0F, 0x90 | cc]), 0, Reg(r, RegClass.GPR), 1, byte_regs=(r,))


def _jump(i: Inst) -> Encoded:
    target = i.args[0]
    assert isinstance(target, Label)
    if i.op == "jmp":
        return b"\xe9\0\0\0\0", Fixup(1, target.name)
    cc = CONDITIONS[i.op[1:]]
    return bytes([0x0F, 0x80 | cc]) + b"\0\0\0\0", Fixup(2, target.name)


def _push_pop(i: Inst) -> Encoded:
    r = _regnum(i.args[0])
    base = 0x50 if i.op == "push" else 0x58
    return (b"\x41" if r >= 8 else b"") + bytes([base + (r & 7)]), None


def _fixed(code: bytes) -> Callable[[Inst], Encoded]:
    return lambda i: (code, None)


# -- vector instructions (VEX) ---------------------------------------------------------------

_PP = {"": 0, "66": 1, "F3": 2, "F2": 3}
_SUFFIX_PP = {"ss": "F3", "sd": "F2", "ps": "", "pd": "66"}
_ARITH = {
    "add": 0x58,
    "mul": 0x59,
    "sub": 0x5C,
    "min": 0x5D,
    "div": 0x5E,
    "max": 0x5F,
    "sqrt": 0x51,
}

#: mnemonic -> (prefix, map (1: 0F, 2: 0F38, 3: 0F3A), opcode, W) of three-operand forms
VEX_RVM: dict[str, tuple[str, int, int, int]] = {
    **{
        f"v{n}{s}": (pp, 1, op, 0)
        for n, op in _ARITH.items()
        for s, pp in _SUFFIX_PP.items()
        if not (n == "sqrt" and s in ("ps", "pd"))
    },
    "vandps": ("", 1, 0x54, 0),
    "vandnps": ("", 1, 0x55, 0),
    "vorps": ("", 1, 0x56, 0),
    "vxorps": ("", 1, 0x57, 0),
    "vcvtss2sd": ("F3", 1, 0x5A, 0),
    "vcvtsd2ss": ("F2", 1, 0x5A, 0),
    "vfmadd231ss": ("66", 2, 0xB9, 0),
    "vfmadd231sd": ("66", 2, 0xB9, 1),
    "vfmadd231ps": ("66", 2, 0xB8, 0),
    "vpaddd": ("66", 1, 0xFE, 0),
    "vpsubd": ("66", 1, 0xFA, 0),
    "vpand": ("66", 1, 0xDB, 0),
    "vpor": ("66", 1, 0xEB, 0),
    "vpxor": ("66", 1, 0xEF, 0),
    "vpcmpgtd": ("66", 1, 0x66, 0),
    "vpcmpeqd": ("66", 1, 0x76, 0),
    "vpmulld": ("66", 2, 0x40, 0),
    "vpmaxsd": ("66", 2, 0x3D, 0),
    "vpsllvd": ("66", 2, 0x47, 0),
    "vpsrlvd": ("66", 2, 0x45, 0),
    "vpsravd": ("66", 2, 0x46, 0),
    "vfmadd231pd": ("66", 2, 0xB8, 1),
}
#: three operands and an imm8
VEX_RVMI: dict[str, tuple[str, int, int, int]] = {
    "vroundss": ("66", 3, 0x0A, 0),
    "vroundsd": ("66", 3, 0x0B, 0),
    "vcmpss": ("F3", 1, 0xC2, 0),
    "vcmpsd": ("F2", 1, 0xC2, 0),
    "vcmpps": ("", 1, 0xC2, 0),
    "vcmppd": ("66", 1, 0xC2, 0),
}
#: two operands and an imm8
VEX_RMI: dict[str, tuple[str, int, int, int]] = {
    "vroundps": ("66", 3, 0x08, 0),
    "vroundpd": ("66", 3, 0x09, 0),
}
#: two operands, reg <- r/m
VEX_RM: dict[str, tuple[str, int, int]] = {
    "vucomiss": ("", 1, 0x2E),
    "vucomisd": ("66", 1, 0x2E),
    "vmovaps": ("", 1, 0x28),
    "vmovups": ("", 1, 0x10),
    "vsqrtps": ("", 1, 0x51),
    "vcvtdq2ps": ("", 1, 0x5B),
    "vcvttps2dq": ("F3", 1, 0x5B),
    "vsqrtpd": ("66", 1, 0x51),
    "vmovss": ("F3", 1, 0x10),
    "vmovsd": ("F2", 1, 0x10),
}
#: stores, r/m <- reg
VEX_MR: dict[str, tuple[str, int, int]] = {
    "vmovups_st": ("", 1, 0x11),
    "vmovss_st": ("F3", 1, 0x11),
    "vmovsd_st": ("F2", 1, 0x11),
}


def _vec_rvm(i: Inst) -> Encoded:
    pp, mm, opcode, w = VEX_RVM[i.op]
    dst, a, b = i.args
    return _vex((_PP[pp], mm, w, opcode), i.vlen, _regnum(dst), _regnum(a), _reg_or_mem(b))


def _vec_rvmi(i: Inst) -> Encoded:
    pp, mm, opcode, w = VEX_RVMI[i.op]
    dst, a, b, imm = i.args
    assert isinstance(imm, Imm)
    rm = _reg_or_mem(b)
    return _vex((_PP[pp], mm, w, opcode), i.vlen, _regnum(dst), _regnum(a), rm, bytes([imm.value]))


def _vec_rmi(i: Inst) -> Encoded:
    pp, mm, opcode, w = VEX_RMI[i.op]
    dst, src, imm = i.args
    assert isinstance(imm, Imm)
    rm = _reg_or_mem(src)
    return _vex((_PP[pp], mm, w, opcode), i.vlen, _regnum(dst), 0, rm, bytes([imm.value]))


def _broadcast(i: Inst) -> Encoded:
    """vbroadcastss ymm, xmm|m32 / vbroadcastsd ymm, xmm|m64 (AVX2 for a register source)."""
    dst, src = i.args
    opcode = 0x18 if i.op == "vbroadcastss" else 0x19
    return _vex((1, 2, 0, opcode), i.vlen, _regnum(dst), 0, _reg_or_mem(src))


def _imul3(i: Inst) -> Encoded:
    """imul r, r/m, imm (imm8 or imm32, sign-extended)."""
    dst, src, imm = i.args
    assert isinstance(imm, Imm)
    if -128 <= imm.value < 128:
        return _legacy(
            b"\x6b", _regnum(dst), _reg_or_mem(src), i.width, struct.pack("<b", imm.value)
        )
    return _legacy(b"\x69", _regnum(dst), _reg_or_mem(src), i.width, struct.pack("<i", imm.value))


_SHIFT_IMM = {"vpslld": 6, "vpsrld": 2, "vpsrad": 4}


def _shift_imm(i: Inst) -> Encoded:
    """vpslld/vpsrld/vpsrad dst, src, imm8: VEX.66.0F 72 /digit, dst in vvvv."""
    dst, src, imm = i.args
    assert isinstance(imm, Imm)
    rm = _reg_or_mem(src)
    return _vex((1, 1, 0, 0x72), i.vlen, _SHIFT_IMM[i.op], _regnum(dst), rm, bytes([imm.value]))


def _movmsk(i: Inst) -> Encoded:
    """vmovmskps/pd r32, xmm|ymm: the lanes' sign bits."""
    dst, src = i.args
    pp = 0 if i.op == "vmovmskps" else 1
    return _vex((pp, 1, 0, 0x50), i.vlen, _regnum(dst), 0, _reg_or_mem(src))


def _vec_rm(i: Inst) -> Encoded:
    pp, mm, opcode = VEX_RM[i.op]
    dst, src = i.args
    if i.op in ("vmovss", "vmovsd") and not isinstance(src, Mem):
        raise EncodeError(f"{i.op} between registers has three operands: copy with vmovaps")
    return _vex((_PP[pp], mm, 0, opcode), i.vlen, _regnum(dst), 0, _reg_or_mem(src))


def _vec_mr(i: Inst) -> Encoded:
    pp, mm, opcode = VEX_MR[i.op]
    dst, src = i.args
    return _vex((_PP[pp], mm, 0, opcode), i.vlen, _regnum(src), 0, _reg_or_mem(dst))


def _cvtsi2f(i: Inst) -> Encoded:
    """vcvtsi2ss/sd xmm, xmm, r/m32|64 (width: the integer's size)."""
    dst, a, src = i.args
    pp = "F3" if i.op == "vcvtsi2ss" else "F2"
    w = int(i.width == 8)
    return _vex((_PP[pp], 1, w, 0x2A), 16, _regnum(dst), _regnum(a), _reg_or_mem(src))


def _cvtf2si(i: Inst) -> Encoded:
    """vcvttss2si/vcvttsd2si r32|64, xmm/m (width: the integer's size)."""
    dst, src = i.args
    pp = "F3" if i.op == "vcvttss2si" else "F2"
    return _vex((_PP[pp], 1, int(i.width == 8), 0x2C), 16, _regnum(dst), 0, _reg_or_mem(src))


def _movdq(i: Inst) -> Encoded:
    """vmovd/vmovq between a general-purpose and a vector register."""
    dst, src = i.args
    w = int(i.op == "vmovq")
    if isinstance(dst, Reg) and dst.cls is RegClass.VEC:
        return _vex((1, 1, w, 0x6E), 16, dst.num, 0, _reg_or_mem(src))
    return _vex((1, 1, w, 0x7E), 16, _regnum(src), 0, _reg_or_mem(dst))


def _blendv(i: Inst) -> Encoded:
    dst, a, b, mask = i.args
    opcode = 0x4A if i.op == "vblendvps" else 0x4B
    imm = bytes([_regnum(mask) << 4])
    return _vex((1, 3, 0, opcode), i.vlen, _regnum(dst), _regnum(a), _reg_or_mem(b), imm)


def _maskmov(i: Inst) -> Encoded:
    """vmaskmovps/pd x|ymm, x|ymm (mask, in vvvv), m128|m256 (VEX.66.0F38 2C/2D): lanes
    whose mask sign bit is clear read nothing (no fault) and are zero."""
    dst, mask, src = i.args
    if not isinstance(src, Mem):
        raise EncodeError(f"{i.op} loads from memory, got {src!r}")
    opcode = 0x2C if i.op == "vmaskmovps" else 0x2D
    return _vex((1, 2, 0, opcode), i.vlen, _regnum(dst), _regnum(mask), src)


def _half(i: Inst) -> Encoded:
    """F16C and the word moves around it: vcvtph2ps x|ymm, xmm|m64|m128 (VEX.66.0F38 13),
    vpbroadcastw x|ymm, xmm|m16 (VEX.66.0F38 79), vcvtps2ph xmm|m, x|ymm, imm8 (VEX.66.0F3A 1D)
    and vpextrw m16, xmm, imm8 (VEX.128.66.0F3A 15): the last two write their r/m operand."""
    if i.op in ("vcvtph2ps", "vpbroadcastw"):
        dst, src = i.args
        opcode = 0x13 if i.op == "vcvtph2ps" else 0x79
        return _vex((1, 2, 0, opcode), i.vlen, _regnum(dst), 0, _reg_or_mem(src))
    dst, src, imm = i.args
    assert isinstance(imm, Imm)
    opcode = 0x1D if i.op == "vcvtps2ph" else 0x15
    return _vex((1, 3, 0, opcode), i.vlen, _regnum(src), 0, _reg_or_mem(dst), bytes([imm.value]))


ENCODERS: dict[str, Callable[[Inst], Encoded]] = {
    **dict.fromkeys(_ALU_RM, _alu),
    "mov": _mov,
    "movabs": _movabs,
    "store": _store,
    **dict.fromkeys(("movsx", "movzx", "movsxd"), _extend),
    "lea": _lea,
    "imul": _imul,
    **dict.fromkeys(_UNARY_DIGIT, _unary),
    **dict.fromkeys(_SHIFT_DIGIT, _shift),
    **{f"cmov{c}": _cmov for c in CONDITIONS},
    **{f"set{c}": _setcc for c in CONDITIONS},
    **{f"j{c}": _jump for c in CONDITIONS},
    "jmp": _jump,
    "push": _push_pop,
    "pop": _push_pop,
    "ret": _fixed(b"\xc3"),
    "cqo": _fixed(b"\x48\x99"),
    "cdq": _fixed(b"\x99"),
    "cpuid": _fixed(b"\x0f\xa2"),
    "xgetbv": _fixed(b"\x0f\x01\xd0"),
    **dict.fromkeys(VEX_RVM, _vec_rvm),
    **dict.fromkeys(VEX_RVMI, _vec_rvmi),
    **dict.fromkeys(VEX_RM, _vec_rm),
    **dict.fromkeys(VEX_RMI, _vec_rmi),
    **dict.fromkeys(("vmovmskps", "vmovmskpd"), _movmsk),
    **dict.fromkeys(("vbroadcastss", "vbroadcastsd"), _broadcast),
    "imul3": _imul3,
    **dict.fromkeys(_SHIFT_IMM, _shift_imm),
    "vzeroupper": _fixed(b"\xc5\xf8\x77"),
    **dict.fromkeys(VEX_MR, _vec_mr),
    **dict.fromkeys(("vcvtsi2ss", "vcvtsi2sd"), _cvtsi2f),
    **dict.fromkeys(("vcvttss2si", "vcvttsd2si"), _cvtf2si),
    **dict.fromkeys(("vmovd", "vmovq"), _movdq),
    **dict.fromkeys(("vblendvps", "vblendvpd"), _blendv),
    **dict.fromkeys(("vmaskmovps", "vmaskmovpd"), _maskmov),
    **dict.fromkeys(("vcvtph2ps", "vpbroadcastw", "vcvtps2ph", "vpextrw_st"), _half),
    "kmovw": kmov,
}


def _evex(inst: Inst) -> Encoded:
    raw, rip, label = encode_evex(inst)
    return raw, (Fixup(rip, label) if rip is not None and label is not None else None)


def encode(inst: Inst) -> Encoded:
    """The bytes of one instruction with physical registers (a label reference's rel32 left
    zero, described by the returned Fixup); a zmm instruction takes EVEX (``evex``)."""
    if inst.vlen == 64:
        return _evex(inst)
    fn = ENCODERS.get(inst.op)
    if fn is None:
        raise EncodeError(f"no encoding for {inst.op!r}")
    return fn(inst)
