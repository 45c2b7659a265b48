"""The machine IR of the x86-64 renderer: registers, operands and instructions.

An instruction is a mnemonic with operands; its *form* (``FORMS``) says which operands it
reads and writes, which the register allocator needs and nothing else. Operands are physical
registers (``Reg``), virtual registers of a class (``VReg``, before allocation), memory
(``Mem``: base + idx * scale + displacement, or a label of the constant pool, addressed
rip-relative), immediates (``Imm``) and jump targets (``Label``); AVX-512 opmask registers
(``KMASK``) appear only as fixed registers.

``width`` is the operand size in bytes of the instruction's integer registers (1, 2, 4, 8)
and of its memory access; vector instructions use ``vlen`` (16: xmm, 32: ymm, 64: zmm,
encoded with EVEX: ``evex``).
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class RegClass(Enum):
    """General-purpose registers, vector registers, or AVX-512 opmask registers (``k1``..:
    only ever fixed scratch registers within one node's instructions, never allocated)."""

    GPR = "gpr"
    VEC = "vec"
    MASK = "mask"

    __hash__ = object.__hash__  # members are singletons: hash by identity (hot in allocation)


class Reg(NamedTuple):
    """A physical register: its number and class. A named tuple: registers are hashed and
    compared constantly (allocation, encoding caches), at C speed this way."""

    num: int
    cls: RegClass

    def name(self, width: int = 8, vlen: int = 16) -> str:
        """The assembler name at an operand size (``eax``, ``r9b``, ``ymm3``, ``zmm0``,
        ``k1``...)."""
        if self.cls is RegClass.VEC:
            return f"{_VECTOR_PREFIX[vlen]}mm{self.num}"
        if self.cls is RegClass.MASK:
            return f"k{self.num}"
        return GPR_NAMES[width][self.num]


_VECTOR_PREFIX = {16: "x", 32: "y", 64: "z"}


class VReg(int):
    """A virtual register (before allocation): an int (its id, unique within a function,
    so hashing and comparing are the int's: allocation looks them up constantly) with a
    register class."""

    cls: RegClass

    def __new__(cls, id: int, reg_class: RegClass) -> VReg:
        v = super().__new__(cls, id)
        v.cls = reg_class
        return v

    @property
    def id(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"VReg({int(self)}, {self.cls.name})"


class Mem(NamedTuple):
    """A memory operand: ``[base + idx*scale + disp]``, or ``[rip + label]`` of the
    constant pool (``label``), or a frame slot (``frame``: ``"spill"``/``"arg"`` and a number,
    placed once the frame is laid out). ``broadcast``: an AVX-512 embedded broadcast (one
    element read and repeated in every lane: ``dword ptr [m]{1to16}``)."""

    base: Reg | VReg | None = None
    idx: Reg | VReg | None = None
    scale: int = 1
    disp: int = 0
    label: str | None = None
    frame: tuple[str, int] | None = None
    broadcast: bool = False


class Imm(NamedTuple):
    """An immediate operand."""

    value: int


class Label(NamedTuple):
    """A jump target."""

    name: str


Operand = Reg | VReg | Mem | Imm | Label


class Inst(NamedTuple):
    """One machine instruction (or a ``label`` pseudo-instruction marking a position).
    Named tuples (this, ``Reg``, ``Imm``, ``Label``): built, hashed and compared by the
    thousand per kernel, at C speed."""

    op: str
    args: tuple[Operand, ...] = ()
    width: int = 8
    vlen: int = 16


GPR_NAMES: dict[int, tuple[str, ...]] = {
    8: ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        *(f"r{i}" for i in range(8, 16))),
    4: ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
        *(f"r{i}d" for i in range(8, 16))),
    2: ("ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
        *(f"r{i}w" for i in range(8, 16))),
    1: ("al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
        *(f"r{i}b" for i in range(8, 16))),
}  # fmt: skip

RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI = (Reg(i, RegClass.GPR) for i in range(8))
R8, R9, R10, R11, R12, R13, R14, R15 = (Reg(i, RegClass.GPR) for i in range(8, 16))
XMM = tuple(Reg(i, RegClass.VEC) for i in range(16))
#: opmask registers (k0 means "no mask" as a write mask)
KMASK = tuple(Reg(i, RegClass.MASK) for i in range(8))

#: System V AMD64: the first six integer arguments
ARG_REGS = (RDI, RSI, RDX, RCX, R8, R9)
#: registers a function must restore before returning
CALLEE_SAVED = frozenset({RBX, RBP, R12, R13, R14, R15})
#: rax/rdx (division), rcx (shift counts) are used by fixed-register instructions; r10/r11
#: and the last two vector registers load and store spilled values (an instruction with more
#: spilled operands borrows registers it doesn't use, see ``regalloc.rewrite``)
ALLOCATABLE = {
    RegClass.GPR: (RSI, RDI, R8, R9, RBX, RBP, R12, R13, R14, R15),
    RegClass.VEC: XMM[:14],
}
SCRATCH = {RegClass.GPR: (R10, R11), RegClass.VEC: XMM[14:]}

# -- forms: which operands an instruction reads (R), writes (W) or both (X) -------------------

_R, _W, _X = "R", "W", "X"

#: condition codes (the low nibble of jcc/setcc/cmovcc opcodes)
CONDITIONS = {
    "o": 0, "no": 1, "b": 2, "ae": 3, "e": 4, "ne": 5, "be": 6, "a": 7,
    "s": 8, "ns": 9, "p": 10, "np": 11, "l": 12, "ge": 13, "le": 14, "g": 15,
}  # fmt: skip

FORMS: dict[str, tuple[str, ...]] = {
    "mov": (_W, _R),
    "movabs": (_W, _R),
    "movsx": (_W, _R),
    "movsxd": (_W, _R),
    "movzx": (_W, _R),
    "store": (_R, _R),  # mov [m], r (printed as mov)
    "lea": (_W, _R),
    **dict.fromkeys(("add", "sub", "and", "or", "xor", "imul"), (_X, _R)),
    **dict.fromkeys(("cmp", "test"), (_R, _R)),
    **dict.fromkeys(("neg", "not"), (_X,)),
    **dict.fromkeys(("shl", "shr", "sar"), (_X, _R)),
    **dict.fromkeys(("idiv", "div"), (_R,)),
    "cqo": (),
    "cdq": (),
    "cpuid": (),
    "xgetbv": (),
    **{f"cmov{c}": (_X, _R) for c in CONDITIONS},
    **{f"set{c}": (_W,) for c in CONDITIONS},
    **{f"j{c}": (_R,) for c in CONDITIONS},
    "jmp": (_R,),
    "label": (_R,),
    "push": (_R,),
    "pop": (_W,),
    "ret": (),
    # vector (VEX) forms
    **dict.fromkeys(
        ("vmovss", "vmovsd", "vmovups", "vmovaps", "vmovd", "vmovq", "vsqrtps", "vsqrtpd"), (_W, _R)
    ),
    **dict.fromkeys(("vmovss_st", "vmovsd_st", "vmovups_st"), (_R, _R)),
    **dict.fromkeys(
        (
            *(
                f"v{o}{t}"
                for o in ("add", "sub", "mul", "div", "sqrt", "max", "min")
                for t in ("ss", "sd", "ps", "pd")
                if not (o == "sqrt" and t in ("ps", "pd"))
            ),
            "vxorps",
            "vandps",
            *("vpaddd", "vpsubd", "vpand", "vpor", "vpxor", "vpcmpgtd", "vpcmpeqd"),
            *("vpmulld", "vpmaxsd", "vpsllvd", "vpsrlvd", "vpsravd"),
            "vandnps",
            "vorps",
            "vcvtss2sd",
            "vcvtsd2ss",
            "vcvtsi2ss",
            "vcvtsi2sd",
        ),
        (_W, _R, _R),
    ),
    **dict.fromkeys(
        ("vroundss", "vroundsd", "vcmpss", "vcmpsd", "vcmpps", "vcmppd"), (_W, _R, _R, _R)
    ),
    **dict.fromkeys(("vroundps", "vroundpd"), (_W, _R, _R)),
    **dict.fromkeys(("vmovmskps", "vmovmskpd", "vbroadcastss", "vbroadcastsd"), (_W, _R)),
    "imul3": (_W, _R, _R),
    **dict.fromkeys(("vpslld", "vpsrld", "vpsrad"), (_W, _R, _R)),
    **dict.fromkeys(("vcvtdq2ps", "vcvttps2dq"), (_W, _R)),
    "vzeroupper": (),
    **dict.fromkeys(("vfmadd231ss", "vfmadd231sd", "vfmadd231ps", "vfmadd231pd"), (_X, _R, _R)),
    **dict.fromkeys(("vucomiss", "vucomisd"), (_R, _R)),
    **dict.fromkeys(("vcvttss2si", "vcvttsd2si"), (_W, _R)),
    **dict.fromkeys(("vcvtph2ps", "vpbroadcastw"), (_W, _R)),
    "vcvtps2ph": (_W, _R, _R),
    "vpextrw_st": (_R, _R, _R),
    # AVX-512 (EVEX) forms; an opmask operand comes last
    "vmovups_k": (_X, _R, _R),  # merge-masked load: masked-off lanes keep the destination
    "vmovups_kz": (_W, _R, _R),
    "vmovups_kst": (_R, _R, _R),
    **dict.fromkeys(("vblendmps", "vblendmpd"), (_W, _R, _R, _R)),
    **dict.fromkeys(("vpxord", "vpxorq", "vpandd", "vpord"), (_W, _R, _R)),
    **dict.fromkeys(("vrndscaleps", "vrndscalepd"), (_W, _R, _R)),
    "kmovw": (_W, _R),
    "vblendvps": (_W, _R, _R, _R),
    **dict.fromkeys(("vmaskmovps", "vmaskmovpd"), (_W, _R, _R)),  # dst, mask, memory
    "vblendvpd": (_W, _R, _R, _R),
}


def roles(inst: Inst) -> tuple[str, ...]:
    """What ``inst`` does with each operand (R read, W write, X both)."""
    return FORMS[inst.op]
