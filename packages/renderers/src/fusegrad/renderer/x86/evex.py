"""AVX-512 encodings: the EVEX prefix, for instructions on zmm registers (``vlen`` 64).

EVEX is four bytes: ``62``, then P0 (inverted R, X, B, R' and the opcode map), P1 (W, the
inverted second source ``vvvv``, pp: the implied 66/F3/F2), P2 (z: zeroing, L'L: the vector
length, b: embedded broadcast, the inverted V', aaa: the opmask register). An 8-bit
displacement is *compressed*: it counts units of the memory operand's size (the whole
vector, or one element under a broadcast), so a displacement that is not a multiple of it
takes 32 bits.

The instructions (``EVEX``): arithmetic, fused multiply-add, min/max, sqrt, bitwise (the
``d`` forms: AVX512F has no vxorps on zmm), blends under an opmask (``vblendmps``), compares
into an opmask register, rounding (``vrndscale``), broadcasts, and moves — plain, merge- or
zero-masked loads (``vmovups_k``/``vmovups_kz``: masked-off lanes keep the destination or
become 0, and never fault) and masked stores (``vmovups_kst``). The opmask is the last
operand in the machine IR. ``kmovw`` (VEX-encoded) moves a mask between a general-purpose
register and an opmask register. int32x16: add, sub, mullo, signed max, shifts (by an
immediate: the destination in ``vvvv``; per lane: ``vpsllvd``...) and the float32 <->
int32 conversions.
"""

from __future__ import annotations

from fusegrad.renderer.x86.isa import Imm, Inst, Mem, Reg, RegClass

_ARITH = {"add": 0x58, "mul": 0x59, "sub": 0x5C, "min": 0x5D, "div": 0x5E, "max": 0x5F}
#: mnemonic -> (pp, map, W, opcode)
EVEX: dict[str, tuple[int, int, int, int]] = {
    **{f"v{name}ps": (0, 1, 0, op) for name, op in _ARITH.items()},
    **{f"v{name}pd": (1, 1, 1, op) for name, op in _ARITH.items()},
    "vsqrtps": (0, 1, 0, 0x51),
    "vsqrtpd": (1, 1, 1, 0x51),
    "vfmadd231ps": (1, 2, 0, 0xB8),
    "vfmadd231pd": (1, 2, 1, 0xB8),
    "vpandd": (1, 1, 0, 0xDB),
    "vpord": (1, 1, 0, 0xEB),
    "vpxord": (1, 1, 0, 0xEF),
    "vpxorq": (1, 1, 1, 0xEF),
    "vblendmps": (1, 2, 0, 0x65),
    "vblendmpd": (1, 2, 1, 0x65),
    "vcmpps": (0, 1, 0, 0xC2),
    "vcmppd": (1, 1, 1, 0xC2),
    "vrndscaleps": (1, 3, 0, 0x08),
    "vrndscalepd": (1, 3, 1, 0x09),
    "vmovups": (0, 1, 0, 0x10),
    "vmovups_k": (0, 1, 0, 0x10),
    "vmovups_kz": (0, 1, 0, 0x10),
    "vmovaps": (0, 1, 0, 0x28),
    "vbroadcastss": (1, 2, 0, 0x18),
    "vbroadcastsd": (1, 2, 1, 0x19),
    "vmovups_st": (0, 1, 0, 0x11),
    "vmovups_kst": (0, 1, 0, 0x11),
    # int32x16
    "vpaddd": (1, 1, 0, 0xFE),
    "vpsubd": (1, 1, 0, 0xFA),
    "vpmulld": (1, 2, 0, 0x40),
    "vpmaxsd": (1, 2, 0, 0x3D),
    "vpsllvd": (1, 2, 0, 0x47),
    "vpsrlvd": (1, 2, 0, 0x45),
    "vpsravd": (1, 2, 0, 0x46),
    **dict.fromkeys(("vpslld", "vpsrld", "vpsrad"), (1, 1, 0, 0x72)),
    "vcvtdq2ps": (0, 1, 0, 0x5B),
    "vcvttps2dq": (2, 1, 0, 0x5B),
}
#: register <- r/m (``vvvv`` unused)
_RM = frozenset({"vmovups", "vmovups_k", "vmovups_kz", "vmovaps", "vsqrtps", "vsqrtpd"})
_RM |= {"vcvtdq2ps", "vcvttps2dq"}
#: shifts by an immediate (66.0F 72 /digit ib): the destination in ``vvvv``
_SHIFT_IMM = {"vpslld": 6, "vpsrld": 2, "vpsrad": 4}
_BROADCASTS = frozenset({"vbroadcastss", "vbroadcastsd"})
_STORES = frozenset({"vmovups_st", "vmovups_kst"})
_MASKED = frozenset({"vmovups_k", "vmovups_kz", "vmovups_kst", "vblendmps", "vblendmpd"})
#: the imm8 forms: vcmp (dst k, src, r/m, imm), vrndscale (dst, r/m, imm)
_IMM = frozenset({"vcmpps", "vcmppd", "vrndscaleps", "vrndscalepd", *_SHIFT_IMM})
_LENGTH = {16: 0, 32: 1, 64: 2}


class EvexError(ValueError):
    """An operand combination EVEX has no encoding for here (a selection bug)."""


def _num(op: object) -> int:
    if not isinstance(op, Reg):
        raise EvexError(f"expected a physical register, got {op!r}")
    return op.num


def _disp_unit(inst: Inst, rm: Reg | Mem, w: int) -> int:
    """N of the compressed displacement: the element under a broadcast (and for a
    broadcast instruction's scalar source), else the whole vector."""
    if (isinstance(rm, Mem) and rm.broadcast) or inst.op in _BROADCASTS:
        return 8 if w else 4
    return inst.vlen


def _operands(inst: Inst) -> tuple[int, int, Reg | Mem, int, bytes]:
    """(ModRM reg, vvvv, r/m, opmask, imm8 bytes) of ``inst``."""
    args = list(inst.args)
    mask = _num(args.pop()) if inst.op in _MASKED else 0
    imm = b""
    if inst.op in _IMM:
        last = args.pop()
        assert isinstance(last, Imm)
        imm = bytes([last.value & 0xFF])
    if inst.op in _SHIFT_IMM:
        dst, src = args
        assert isinstance(src, (Reg, Mem))
        return _SHIFT_IMM[inst.op], _num(dst), src, mask, imm
    if inst.op in _STORES:
        mem, src = args
        assert isinstance(mem, Mem)
        return _num(src), 0, mem, mask, imm
    if inst.op in _RM or inst.op in _BROADCASTS or len(args) == 2:
        dst, src = args
        assert isinstance(src, (Reg, Mem))
        return _num(dst), 0, src, mask, imm
    dst, a, b = args
    assert isinstance(b, (Reg, Mem))
    return _num(dst), _num(a), b, mask, imm


def encode_evex(inst: Inst) -> tuple[bytes, int | None, str | None]:
    """(bytes, offset of a rip-relative disp32 or None, its label) of a zmm instruction."""
    from fusegrad.renderer.x86.encode import _modrm

    pp, mmap, w, opcode = EVEX[inst.op]
    reg, vvvv, rm, mask, imm = _operands(inst)
    if isinstance(rm, Mem) and rm.broadcast and inst.op in _RM | _STORES | _BROADCASTS:
        raise EvexError(f"{inst.op} takes no embedded broadcast")
    x, b, modrm, rip = _modrm(reg, rm, _disp_unit(inst, rm, w))
    if isinstance(rm, Reg):  # a register r/m: X extends it past 15
        x, b = rm.num >> 4 & 1, rm.num >> 3 & 1
    p0 = (~reg >> 3 & 1) << 7 | (~x & 1) << 6 | (~b & 1) << 5 | (~reg >> 4 & 1) << 4 | mmap
    p1 = w << 7 | (~vvvv & 15) << 3 | 4 | pp
    zero = inst.op == "vmovups_kz"
    bcst = isinstance(rm, Mem) and rm.broadcast
    p2 = zero << 7 | _LENGTH[inst.vlen] << 5 | bcst << 4 | (~vvvv >> 4 & 1) << 3 | mask
    head = bytes([0x62, p0, p1, p2, opcode])
    label = rm.label if isinstance(rm, Mem) else None
    return head + modrm + imm, (len(head) + rip if rip is not None else None), label


def kmov(inst: Inst) -> tuple[bytes, None]:
    """kmovw k, r32 (VEX.L0.0F.W0 92 /r) or kmovw r32, k (VEX.L0.0F.W0 93 /r)."""
    from fusegrad.renderer.x86.encode import _vex

    dst, src = inst.args
    if not isinstance(dst, Reg) or not isinstance(src, Reg):
        raise EvexError("kmovw moves between registers only here")
    opcode = 0x92 if dst.cls is RegClass.MASK else 0x93
    return _vex((0, 1, 0, opcode), 16, dst.num, 0, src)[0], None
