"""The encoder against an independent disassembler (capstone): every instruction form the
encoder can emit, over every register of each class and every addressing form, decodes to
the same mnemonic and operands as our listing prints, and to exactly the bytes encoded."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from fusegrad.renderer.x86.encode import (
    ENCODERS,
    VEX_MR,
    VEX_RM,
    VEX_RMI,
    VEX_RVM,
    VEX_RVMI,
    encode,
)
from fusegrad.renderer.x86.evex import EVEX
from fusegrad.renderer.x86.isa import (
    CONDITIONS,
    XMM,
    Imm,
    Inst,
    Label,
    Mem,
    Reg,
    RegClass,
)
from fusegrad.renderer.x86.listing import format_inst

capstone = pytest.importorskip("capstone")

GPRS = tuple(Reg(i, RegClass.GPR) for i in range(16))
RSP, RBP, R12, R13 = GPRS[4], GPRS[5], GPRS[12], GPRS[13]


def _memories() -> list[Mem]:
    """Every base register, every index register with every scale, displacement sizes, the
    bases that need a SIB (rsp, r12) or a displacement (rbp, r13), no base, rip."""
    out = [Mem(base=b) for b in GPRS]
    out += [
        Mem(base=b, disp=d)
        for b in (GPRS[0], RSP, RBP, R12, R13)
        for d in (8, -128, 127, 128, -4096, 0x12345)
    ]
    out += [
        Mem(base=GPRS[b], idx=GPRS[i], scale=s)
        for b, i, s in zip(
            range(16), [x for x in range(16) if x != 4] * 2, (1, 2, 4, 8) * 8, strict=False
        )
    ]
    out += [
        Mem(base=b, idx=GPRS[9], scale=4, disp=d) for b in (RBP, R13, RSP) for d in (0, 16, -300)
    ]
    out += [Mem(idx=GPRS[3], scale=8, disp=64), Mem(label="pool")]
    return out  # fmt: skip


MEMS = _memories()


def _disassemble(code: bytes) -> list[tuple[str, str, int]]:
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    return [(i.mnemonic, i.op_str, i.size) for i in md.disasm(code, 0x1000)]


_VCMP = {0: "eq", 3: "unord", 1: "lt", 2: "le", 4: "neq"}


def _expected(inst: Inst, code: bytes, rip: int | None) -> str:
    text = format_inst(inst, rip)
    if inst.op.startswith("vcmp"):  # capstone prints the predicate in the mnemonic
        name, ops = text.split(" ", 1)
        *regs, pred = ops.split(", ")
        text = f"vcmp{_VCMP[int(pred, 0)]}{name[4:]} {', '.join(regs)}"
    return text


def _check(inst: Inst) -> None:
    code, fix = encode(inst)
    rip = None
    if fix is not None:  # place the label 0x40 past the end of the instruction
        rip = 0x40
        code = code[: fix.offset] + rip.to_bytes(4, "little", signed=True) + code[fix.offset + 4 :]
    decoded = _disassemble(code)
    assert len(decoded) == 1 and decoded[0][2] == len(code), f"{inst}: {code.hex()} -> {decoded}"
    mnemonic, ops, _ = decoded[0]
    got = f"{mnemonic} {ops}".strip()
    if isinstance(inst.args[0] if inst.args else None, Label):
        assert got == f"{inst.op} {hex(0x1000 + len(code) + 0x40)}", (
            f"{inst}: {code.hex()} -> {got}"
        )
        return
    want = _expected(inst, code, rip)
    assert got == want, f"{code.hex()}: capstone {got!r}, listing {want!r}"


def _gpr_forms() -> Iterator[Inst]:
    for op, w in itertools.product(("add", "sub", "and", "or", "xor", "cmp"), (4, 8)):
        yield from (Inst(op, (a, b), w) for a, b in itertools.product(GPRS, GPRS))
        yield from (
            Inst(op, (a, Imm(v)), w)
            for a in GPRS
            for v in (1, -1, 127, -128, 128, 0x12345, -(2**31))
        )
        yield from (Inst(op, (GPRS[i % 16], m), w) for i, m in enumerate(MEMS))
    for w in (4, 8):
        yield from (Inst("test", (a, b), w) for a, b in itertools.product(GPRS, GPRS))
        yield from (Inst("imul", (a, b), w) for a, b in itertools.product(GPRS, GPRS))
        yield from (Inst("imul", (GPRS[i % 16], m), w) for i, m in enumerate(MEMS))
        yield from (Inst(op, (a,), w) for op in ("neg", "not", "div", "idiv") for a in GPRS)
        yield from (
            Inst(op, (a, Imm(s)), w)
            for op in ("shl", "shr", "sar")
            for a in GPRS
            for s in (1, 5, 31)
        )
        yield from (Inst(op, (a, GPRS[1]), w) for op in ("shl", "shr", "sar") for a in GPRS)
        yield from (
            Inst(f"cmov{c}", (a, b), w)
            for c in CONDITIONS
            for a, b in zip(GPRS, GPRS[::-1], strict=True)
        )
    yield from (Inst("mov", (a, b), w) for a, b in itertools.product(GPRS, GPRS) for w in (4, 8))
    yield from (Inst("mov", (a, Imm(v)), 8) for a in GPRS for v in (0, -1, 2**31 - 1, -(2**31)))
    yield from (Inst("mov", (a, Imm(v)), 4) for a in GPRS for v in (0, 7, 2**32 - 1))
    yield from (Inst("movabs", (a, Imm(v)), 8) for a in GPRS for v in (2**40, -(2**60)))
    yield from (Inst("mov", (GPRS[i % 16], m), w) for i, m in enumerate(MEMS) for w in (4, 8))
    yield from (
        Inst("store", (m, GPRS[i % 16]), w) for i, m in enumerate(MEMS) for w in (1, 2, 4, 8)
    )
    yield from (Inst("store", (MEMS[0], r), 1) for r in GPRS)  # spl..dil need a bare REX
    yield from (Inst("lea", (GPRS[i % 16], m)) for i, m in enumerate(MEMS))
    for op, w in (("movsx", 1), ("movsx", 2), ("movzx", 1), ("movzx", 2), ("movsxd", 4)):
        yield from (Inst(op, (a, b), w) for a, b in itertools.product(GPRS, GPRS))
        yield from (Inst(op, (GPRS[i % 16], m), w) for i, m in enumerate(MEMS))
    yield from (Inst(f"set{c}", (a,), 1) for c in CONDITIONS for a in GPRS)
    yield from (Inst(op, (a,)) for op in ("push", "pop") for a in GPRS)
    yield from (Inst(op) for op in ("ret", "cqo", "cdq", "vzeroupper", "cpuid", "xgetbv"))
    for w, v in itertools.product((4, 8), (3, -7, 127, -128, 128, 0x12345)):
        yield from (
            Inst("imul3", (a, b, Imm(v)), w) for a, b in zip(GPRS, GPRS[3:] + GPRS[:3], strict=True)
        )
        yield from (Inst("imul3", (GPRS[i % 16], m, Imm(v)), w) for i, m in enumerate(MEMS[::5]))
    yield from (Inst(f"j{c}", (Label("t"),)) for c in [*CONDITIONS, "mp"])


def _vector_forms() -> Iterator[Inst]:
    triples = list(zip(XMM, XMM[5:] + XMM[:5], XMM[11:] + XMM[:11], strict=True))
    for op in VEX_RVM:
        lens = (16, 32) if op[-2:] in ("ps", "pd") or op.startswith("vp") else (16,)
        for vlen in lens:
            yield from (Inst(op, (a, b, c), vlen=vlen) for a, b, c in triples)
            yield from (
                Inst(op, (XMM[i % 16], XMM[(i + 3) % 16], m), vlen=vlen) for i, m in enumerate(MEMS)
            )
    for op in VEX_RVMI:
        yield from (
            Inst(op, (a, b, c, Imm(k)))
            for (a, b, c), k in zip(triples, (0, 3, 1) * 6, strict=False)
        )
        yield from (Inst(op, (XMM[i % 16], XMM[2], m, Imm(3))) for i, m in enumerate(MEMS))
    for op in VEX_RM:
        lens = (16, 32) if op not in ("vucomiss", "vucomisd", "vmovss", "vmovsd") else (16,)
        for vlen in lens:
            if op not in ("vmovss", "vmovsd"):  # between registers they take three operands
                yield from (Inst(op, (a, b), vlen=vlen) for a, b, _ in triples)
            yield from (Inst(op, (XMM[i % 16], m), vlen=vlen) for i, m in enumerate(MEMS))
    for op in VEX_MR:
        lens = (16, 32) if op == "vmovups_st" else (16,)
        yield from (Inst(op, (m, XMM[i % 16]), vlen=v) for i, m in enumerate(MEMS) for v in lens)


def _packed_forms() -> Iterator[Inst]:
    """Packed-only forms, at both vector lengths."""
    for op, vlen in itertools.product(VEX_RMI, (16, 32)):
        yield from (
            Inst(op, (a, b, Imm(k)), vlen=vlen)
            for a, b, k in zip(XMM, XMM[::-1], (1, 3, 11) * 6, strict=False)
        )
        yield from (Inst(op, (XMM[i % 16], m, Imm(11)), vlen=vlen) for i, m in enumerate(MEMS))
    for op, vlen in itertools.product(("vpslld", "vpsrld", "vpsrad"), (16, 32)):
        yield from (
            Inst(op, (a, b, Imm(k)), vlen=vlen)
            for a, b, k in zip(XMM, XMM[::-1], (1, 9, 31) * 6, strict=False)
        )
    for op, vlen in itertools.product(("vmovmskps", "vmovmskpd"), (16, 32)):
        yield from (Inst(op, (g, x), vlen=vlen) for g, x in zip(GPRS, XMM, strict=True))
    for op in ("vbroadcastss", "vbroadcastsd"):
        yield from (Inst(op, (a, b), vlen=32) for a, b in zip(XMM, XMM[::-1], strict=True))
        yield from (Inst(op, (XMM[i % 16], m), vlen=32) for i, m in enumerate(MEMS))
    for op, vlen in itertools.product(("vmaskmovps", "vmaskmovpd"), (16, 32)):
        yield from (
            Inst(op, (XMM[i % 16], XMM[(i + 5) % 16], m), vlen=vlen) for i, m in enumerate(MEMS)
        )
    for op, vlen in itertools.product(("vcmpps", "vcmppd"), (16, 32)):
        yield from (
            Inst(op, (a, b, c, Imm(k)), vlen=vlen)
            for a, b, c, k in zip(XMM, XMM[3:], XMM[7:], (0, 1, 3) * 6, strict=False)
        )


def _conversion_forms() -> Iterator[Inst]:
    triples = list(zip(XMM, XMM[5:] + XMM[:5], XMM[11:] + XMM[:11], strict=True))
    for op, w in itertools.product(("vcvtsi2ss", "vcvtsi2sd"), (4, 8)):
        yield from (Inst(op, (a, b, g), w) for (a, b, _), g in zip(triples, GPRS, strict=False))
        yield from (Inst(op, (XMM[i % 16], XMM[1], m), w) for i, m in enumerate(MEMS))
    for op, w in itertools.product(("vcvttss2si", "vcvttsd2si"), (4, 8)):
        yield from (Inst(op, (g, x), w) for g, x in zip(GPRS, XMM, strict=True))
        yield from (Inst(op, (GPRS[i % 16], m), w) for i, m in enumerate(MEMS))
    for op in ("vmovd", "vmovq"):
        yield from (Inst(op, (x, g)) for x, g in zip(XMM, GPRS[::-1], strict=True))
        yield from (Inst(op, (g, x)) for x, g in zip(XMM, GPRS, strict=True))
    for op in ("vblendvps", "vblendvpd"):
        for vlen in (16, 32):
            yield from (
                Inst(op, (a, b, c, XMM[(a.num + 7) % 16]), vlen=vlen) for a, b, c in triples
            )
            yield from (
                Inst(op, (XMM[i % 16], XMM[4], m, XMM[9]), vlen=vlen) for i, m in enumerate(MEMS)
            )


def _half_forms() -> Iterator[Inst]:
    """F16C conversions and the word moves around them, both lengths where they have two."""
    for vlen in (16, 32):
        for op in ("vcvtph2ps", "vpbroadcastw"):
            yield from (Inst(op, (a, b), vlen=vlen) for a, b in zip(XMM, XMM[::-1], strict=True))
            yield from (Inst(op, (XMM[i % 16], m), vlen=vlen) for i, m in enumerate(MEMS))
        yield from (
            Inst("vcvtps2ph", (a, b, Imm(k)), vlen=vlen)
            for a, b, k in zip(XMM, XMM[3:] + XMM[:3], (0, 4, 3) * 6, strict=False)
        )
        yield from (
            Inst("vcvtps2ph", (m, XMM[i % 16], Imm(0)), vlen=vlen) for i, m in enumerate(MEMS)
        )
    yield from (Inst("vpextrw_st", (m, XMM[i % 16], Imm(i % 8))) for i, m in enumerate(MEMS))


ZMM = tuple(Reg(i, RegClass.VEC) for i in range(32))  # EVEX reaches zmm16-31 too
KS = tuple(Reg(i, RegClass.MASK) for i in range(1, 8))
#: compressed displacements: multiples of the vector (disp8) and not (disp32)
EVEX_MEMS = [
    *MEMS,
    *(Mem(base=GPRS[b], disp=d) for b in (0, 4, 5, 13) for d in (64, -128, 8128, -8192, 8192, 72)),
    Mem(base=GPRS[2], idx=GPRS[11], scale=8, disp=-64),
]
_BCST = [
    Mem(label="pool", broadcast=True),
    Mem(base=GPRS[3], disp=8, broadcast=True),
    Mem(base=GPRS[12], idx=GPRS[1], scale=4, disp=-512, broadcast=True),
    Mem(base=GPRS[5], disp=4, broadcast=True),
]


def _evex_forms() -> Iterator[Inst]:
    """Every EVEX instruction at 512 bits: registers 0-31, every addressing form (compressed
    and full displacements), embedded broadcasts, opmasks k1-k7 and zeroing."""
    triples = list(zip(ZMM, ZMM[7:] + ZMM[:7], ZMM[19:] + ZMM[:19], strict=True))
    vector_ops = ("vsqrtps", "vsqrtpd", "vcvtdq2ps", "vcvttps2dq")
    shifts = ("vpslld", "vpsrld", "vpsrad")
    binary = [op for op in EVEX if op not in (*vector_ops, *shifts, "vblendmps", "vblendmpd")]
    binary = [op for op in binary if not op.startswith(("vmov", "vbroadcast", "vcmp", "vrnd"))]
    for op in binary:
        yield from (Inst(op, (a, b, c), vlen=64) for a, b, c in triples)
        yield from (
            Inst(op, (ZMM[i % 32], ZMM[(i + 9) % 32], m), vlen=64) for i, m in enumerate(EVEX_MEMS)
        )
        yield from (Inst(op, (ZMM[i], ZMM[i + 1], m), vlen=64) for i, m in enumerate(_BCST))
    for op in ("vblendmps", "vblendmpd"):
        yield from (Inst(op, (a, b, c, KS[a.num % 7]), vlen=64) for a, b, c in triples)
        yield from (
            Inst(op, (ZMM[3], ZMM[30], m, KS[2]), vlen=64) for m in [*EVEX_MEMS[::7], *_BCST]
        )
    for op in ("vcmpps", "vcmppd"):
        yield from (Inst(op, (KS[a.num % 7], b, c, Imm(a.num % 5)), vlen=64) for a, b, c in triples)
        yield from (
            Inst(op, (KS[1], ZMM[17], m, Imm(3)), vlen=64) for m in [*EVEX_MEMS[::5], *_BCST]
        )
    for op in shifts:  # the destination in vvvv
        yield from (Inst(op, (a, b, Imm(a.num)), vlen=64) for a, b, _ in triples)
        yield from (Inst(op, (ZMM[27], m, Imm(5)), vlen=64) for m in [*EVEX_MEMS[::5], *_BCST])
    for op in ("vrndscaleps", "vrndscalepd"):
        yield from (Inst(op, (a, b, Imm(11)), vlen=64) for a, b, _ in triples)
        yield from (Inst(op, (ZMM[20], m, Imm(11)), vlen=64) for m in [*EVEX_MEMS[::5], *_BCST])
    for op in ("vmovups", "vmovaps", *vector_ops):
        yield from (Inst(op, (a, b), vlen=64) for a, b, _ in triples)
        yield from (Inst(op, (ZMM[i % 32], m), vlen=64) for i, m in enumerate(EVEX_MEMS))
    for op in ("vmovups_k", "vmovups_kz"):
        yield from (Inst(op, (ZMM[i % 32], m, KS[i % 7]), vlen=64) for i, m in enumerate(EVEX_MEMS))
    yield from (Inst("vmovups_st", (m, ZMM[i % 32]), vlen=64) for i, m in enumerate(EVEX_MEMS))
    yield from (
        Inst("vmovups_kst", (m, ZMM[i % 32], KS[i % 7]), vlen=64) for i, m in enumerate(EVEX_MEMS)
    )
    for op in ("vbroadcastss", "vbroadcastsd"):
        yield from (Inst(op, (a, b), vlen=64) for a, b, _ in triples)
        yield from (Inst(op, (ZMM[i % 32], m), vlen=64) for i, m in enumerate(EVEX_MEMS))
    yield from (Inst("kmovw", (k, g), width=4) for k, g in zip(KS * 3, GPRS, strict=False))
    yield from (Inst("kmovw", (g, k), width=4) for k, g in zip(KS * 3, GPRS[::-1], strict=False))


FORMS = [*_gpr_forms(), *_vector_forms(), *_packed_forms(), *_conversion_forms(), *_half_forms()]


def test_every_encoder_is_exercised() -> None:
    assert {i.op for i in FORMS if i.vlen != 64} | {"kmovw"} == set(ENCODERS)
    assert {i.op for i in _evex_forms() if i.op != "kmovw"} == set(EVEX)


def test_capstone_decodes_every_evex_form() -> None:
    forms = list(_evex_forms())
    failures = []
    for inst in forms:
        try:
            _check(inst)
        except (AssertionError, ValueError) as exc:
            failures.append(f"{inst}: {str(exc).splitlines()[0]}")
    assert not failures, f"{len(failures)} of {len(forms)} forms differ:\n" + "\n".join(
        failures[:40]
    )


@pytest.mark.parametrize("kind", ["gpr", "vector"])
def test_capstone_decodes_what_the_listing_says(kind: str) -> None:
    forms = list(
        _gpr_forms()
        if kind == "gpr"
        else [*_vector_forms(), *_packed_forms(), *_conversion_forms(), *_half_forms()]
    )
    failures = []
    for inst in forms:
        try:
            _check(inst)
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0])
    assert not failures, f"{len(failures)} of {len(forms)} forms differ:\n" + "\n".join(
        failures[:40]
    )
