"""Instructions as Intel-syntax assembly text, the way capstone/objdump print them (so the
encoder test can compare), for the renderer's listing and golden files."""

from __future__ import annotations

import functools

from fusegrad.renderer.x86.isa import Imm, Inst, Label, Mem, Operand, Reg, RegClass, VReg

_SIZE_NAMES = {
    1: "byte", 2: "word", 4: "dword", 8: "qword", 16: "xmmword", 32: "ymmword", 64: "zmmword",
}  # fmt: skip
#: printed mnemonic where it differs from the machine IR's
_PRINTED = {
    "store": "mov",
    "imul3": "imul",
    "vmovss_st": "vmovss",
    "vmovsd_st": "vmovsd",
    "vmovups_st": "vmovups",
    "vpextrw_st": "vpextrw",
    "vmovups_k": "vmovups",
    "vmovups_kz": "vmovups",
    "vmovups_kst": "vmovups",
}
#: AVX-512 ops whose last operand is an opmask, printed after the first: ``zmm0 {k1} {z}``
_MASKED = frozenset({"vmovups_k", "vmovups_kz", "vmovups_kst", "vblendmps", "vblendmpd"})
_SCALAR_MEM = {"ss": 4, "sd": 8}


def memory_size(inst: Inst) -> int:
    """Bytes the memory operand of ``inst`` accesses."""
    op = inst.op
    if op in ("vcvtph2ps", "vcvtps2ph"):  # 4 or 8 halves
        return inst.vlen // 2
    if op in ("vpbroadcastw", "vpextrw_st"):
        return 2
    if op in ("movsxd", "vmovd", "vcvttss2si", "vucomiss", "vcvtss2sd", "vbroadcastss"):
        return 4
    if op in ("vmovq", "vcvttsd2si", "vucomisd", "vcvtsd2ss", "vbroadcastsd"):
        return 8
    if op in ("vcvtsi2ss", "vcvtsi2sd") or not op.startswith("v"):
        return inst.width
    core = op.removesuffix("_st")
    if core[-2:] in _SCALAR_MEM and not core.startswith("vp"):  # vpmaxsd is packed
        return _SCALAR_MEM[core[-2:]]
    return inst.vlen


@functools.lru_cache(maxsize=1 << 12)
def _memory_size(name: str, width: int, vlen: int) -> int:
    return memory_size(Inst(name, (), width, vlen))


def clear_listing_caches() -> None:
    """Forget the cached operand texts and memory sizes."""
    _register_text.cache_clear()
    _memory_size.cache_clear()


def _hex(v: int) -> str:
    if v < 0:
        return f"-{_hex(-v)}"
    return str(v) if v < 10 else hex(v)


def format_memory(m: Mem, size: int | None, rip: int | None = None, lanes: int = 0) -> str:
    """``dword ptr [rdi + rax*4 + 8]``; ``rip`` replaces a pool label by its displacement."""
    if m.label is not None:
        body = f"rip + {_hex(rip)}" if rip is not None else f"rip + {m.label}"
    elif m.frame is not None:
        body = f"{m.frame[0]}{m.frame[1]}"
    else:
        parts = []
        if m.base is not None:
            parts.append(_reg(m.base, 8, 16))
        if m.idx is not None:
            scale = f"*{m.scale}" if m.scale != 1 else ""
            parts.append(f"{_reg(m.idx, 8, 16)}{scale}")
        body = " + ".join(parts)
        if m.disp or not parts:
            body += (" - " if m.disp < 0 else " + ") + _hex(abs(m.disp)) if parts else _hex(m.disp)
    prefix = f"{_SIZE_NAMES[size]} ptr " if size is not None else ""
    if m.broadcast:  # one element in every lane
        return f"{prefix}[{body}]{{1to{lanes}}}"
    return f"{prefix}[{body}]"


def _reg(r: Reg | VReg, width: int, vlen: int) -> str:
    if isinstance(r, Reg):
        return r.name(width, vlen)
    return f"%{r.cls.value}{r.id}"  # a virtual register


def _operand_width(inst: Inst, i: int, op: Operand) -> int:
    """The size a register operand is printed at."""
    if inst.op.startswith("set") or (inst.op in ("shl", "shr", "sar") and i == 1):
        return 1
    if inst.op in ("movsx", "movsxd"):
        return 8 if i == 0 else inst.width
    if inst.op == "movzx":
        return 4 if i == 0 else inst.width
    if inst.op in ("vmovd", "vcvtsi2ss", "vcvtsi2sd", "vcvttss2si", "vcvttsd2si"):
        return inst.width if inst.op != "vmovd" else 4
    if inst.op in ("lea", "vmovq"):
        return 8
    if inst.op in ("vmovmskps", "vmovmskpd"):
        return 4
    return inst.width


#: ops whose immediate is printed as the unsigned value of the operand size (as objdump and
#: capstone do); arithmetic keeps its sign
_UNSIGNED_IMM = frozenset({"and", "or", "xor", "mov", "movabs"})


def _immediate(inst: Inst, value: int) -> str:
    if value < 0 and (inst.op in _UNSIGNED_IMM or (inst.width == 4 and value == -(2**31))):
        return _hex(value & ((1 << 8 * inst.width) - 1))
    return _hex(value)


#: (op, operand number) of vector operands that are an xmm whatever the vector length: a
#: broadcast's source, the halves of a float16 conversion
_XMM_OPERANDS = frozenset(
    {("vbroadcastss", 1), ("vbroadcastsd", 1), ("vpbroadcastw", 1)}
    | {("vcvtph2ps", 1), ("vcvtps2ph", 0)}
)


def format_operand(inst: Inst, i: int, op: Operand, rip: int | None = None) -> str:
    if isinstance(op, Imm):
        return _immediate(inst, op.value)
    if isinstance(op, Label):
        return op.name
    if isinstance(op, Mem):
        if op.broadcast:
            element = 8 if inst.op.endswith(("pd", "q")) else 4
            return format_memory(op, element, rip, inst.vlen // element)
        size = None if inst.op == "lea" else _memory_size(inst.op, inst.width, inst.vlen)
        return format_memory(op, size, rip)
    if isinstance(op, VReg):  # (virtual registers of one id but two classes are equal ints)
        return _register_text.__wrapped__(inst.op, inst.width, inst.vlen, i, op)
    return _register_text(inst.op, inst.width, inst.vlen, i, op)


@functools.lru_cache(maxsize=1 << 14)
def _register_text(name: str, width: int, vlen: int, i: int, op: Reg | VReg) -> str:
    """Operand ``i`` of an instruction ``name`` as text, when it is a register (cached:
    listings print the same few registers over and over)."""
    if op.cls is RegClass.VEC:
        return _reg(op, 8, 16 if (name, i) in _XMM_OPERANDS else vlen)
    return _reg(op, _operand_width(Inst(name, (), width, vlen), i, op), vlen)


def format_inst(inst: Inst, rip: int | None = None) -> str:
    """One instruction as text (``rip``: the resolved displacement of a pool operand)."""
    if inst.op == "label":
        return f"{format_operand(inst, 0, inst.args[0])}:"
    texts = [format_operand(inst, i, a, rip) for i, a in enumerate(inst.args)]
    if inst.op in _MASKED:
        mask = texts.pop()
        texts[0] += f" {{{mask}}}" + (" {z}" if inst.op == "vmovups_kz" else "")
    ops = ", ".join(texts)
    name = _PRINTED.get(inst.op, inst.op)
    return f"{name} {ops}" if ops else name
