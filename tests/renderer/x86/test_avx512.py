"""The AVX-512 path of the x86 renderer, forced with ``X86Renderer(features=...)``: Tensor
kernels and the conformance corpus rendered with zmm registers (float32x16 / float64x8,
opmask-masked loads and stores, embedded broadcasts), and every instruction of each
kernel decoded by capstone to exactly the listing's text. The kernels run and are compared
with NumPy only where this CPU has AVX-512F (CPUID); elsewhere that part is skipped. The
renderer picks the path from CPUID by default: AVX2 on a CPU without AVX-512F."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from fusegrad.renderer.corpus import corpus
from fusegrad.renderer.x86 import X86Renderer, x86_unavailable
from fusegrad.renderer.x86.cpuid import cpu_features
from fusegrad.uop import UOp, dtypes

capstone = pytest.importorskip("capstone")

AVX512 = ("osxsave", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f")
NO_AVX512 = "this CPU has no AVX-512F (CPUID): the zmm kernels are rendered and decoded, not run"
_LINE = re.compile(r"^\s*([0-9a-f]+): ([0-9a-f]+)\s+(.*)$")
_PREDICATES = {0: "eq", 1: "lt", 2: "le", 3: "unord", 4: "neq"}


def _labels(listing: str) -> dict[str, int]:
    """Label -> offset (a label line names the offset of the code line after it)."""
    out, pending = {}, []
    for line in listing.splitlines():
        if re.fullmatch(r"\.L\w+:", line):
            pending.append(line[:-1])
        elif (m := _LINE.match(line)) is not None:
            out.update(dict.fromkeys(pending, int(m.group(1), 16)))
            pending = []
    return out


def _expected(text: str, at: int, size: int, labels: dict[str, int]) -> str:
    """The listing's text as capstone prints it: labels resolved (rip-relative operands to
    their displacement, jumps to their address), vcmp's predicate in the mnemonic."""
    text = re.sub(
        r"rip \+ (\.L\w+)", lambda m: f"rip + {hex(labels[m.group(1)] - at - size)}", text
    )
    jump = re.fullmatch(r"(j[a-z]+) (\.L\w+)", text)
    if jump:
        return f"{jump.group(1)} {hex(labels[jump.group(2)])}"
    cmp = re.fullmatch(r"vcmp([ps][sd]) (.*), (\d+)", text)
    if cmp:
        return f"vcmp{_PREDICATES[int(cmp.group(3))]}{cmp.group(1)} {cmp.group(2)}"
    return text


def decode_mismatches(listing: str) -> list[str]:
    """Lines of ``listing`` whose bytes capstone decodes differently from their text."""
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    labels = _labels(listing)
    bad = []
    for line in listing.splitlines():
        m = _LINE.match(line)
        if m is None or m.group(3).startswith(";"):
            continue
        at, raw = int(m.group(1), 16), bytes.fromhex(m.group(2))
        decoded = list(md.disasm(raw, at))
        if len(decoded) != 1 or decoded[0].size != len(raw):
            bad.append(f"{line}: decodes as {[(i.mnemonic, i.op_str) for i in decoded]}")
            continue
        got = f"{decoded[0].mnemonic} {decoded[0].op_str}".strip()
        want = _expected(m.group(3).strip(), at, len(raw), labels)
        if got != want:
            bad.append(f"{line}: capstone {got!r}")
    return bad


def width_mismatches(code: list[Any]) -> list[str]:
    """Instructions of selected ``code`` (virtual registers, in program order) that read a
    vector register at more bytes than its last write: a VEX (xmm/ymm) or scalar write zeroes
    the register above its length, so the wider read sees zeros there (capstone decodes such
    code fine; only running it shows the missing lanes)."""
    from fusegrad.renderer.x86.isa import RegClass, VReg, roles
    from fusegrad.renderer.x86.listing import _XMM_OPERANDS

    written: dict[VReg, int] = {}
    bad = []
    for inst in code:
        ops = [
            (role, op, 16 if (inst.op, i) in _XMM_OPERANDS else inst.vlen)
            for i, (role, op) in enumerate(zip(roles(inst), inst.args, strict=True))
            if isinstance(op, VReg) and op.cls is RegClass.VEC
        ]
        for role, op, size in ops:
            if role in "RX" and size > written.get(op, size):
                bad.append(f"{inst}: reads {size} bytes of a {written[op]}-byte value")
        for role, op, size in ops:
            if role in "WX":
                written[op] = size
    return bad


def _workloads() -> dict[str, Any]:
    from fusegrad.tensor import Tensor

    rs = np.random.default_rng(0)
    a = rs.standard_normal((64, 96)).astype(np.float32)
    b = rs.standard_normal((96, 48)).astype(np.float32)
    d = rs.standard_normal((32, 40))
    ta, tb, td = Tensor(a, device="CPU"), Tensor(b, device="CPU"), Tensor(d, device="CPU")
    return {
        "elementwise": ((ta * 2 - 1).relu(), np.maximum(a * 2 - 1, 0)),
        "matmul": (ta @ tb, a @ b),
        "softmax": (ta.softmax(-1), np.exp(a) / np.exp(a).sum(-1, keepdims=True)),
        "sum": (ta.sum(0), a.sum(0)),
        "max": (ta.max(1), a.max(1)),
        "neg-trunc": (-ta.trunc(), -np.trunc(a)),
        "float64": ((td * td + 1).sqrt(), np.sqrt(d * d + 1)),
        "float64-max": (td.max(0), d.max(0)),
        "pad": (ta.pad(((1, 2), (3, 13))) * 2, np.pad(a, ((1, 2), (3, 13))) * 2),
        "where": ((ta > 0.5).where(ta, ta * 3), np.where(a > 0.5, a, a * 3)),
        "mask-store": ((ta < 0) | (ta > 1), (a < 0) | (a > 1)),
        "float64-where": ((td > 0).where(td, -1.0), np.where(d > 0, d, -1.0)),
    }


def _listings(renderer: X86Renderer, t: Any) -> list[str]:
    from fusegrad.codegen import to_program
    from fusegrad.codegen.schedule import get_kernel_graph

    graph = get_kernel_graph(UOp.sink(t.uop), cache=None)
    return [str(to_program(k.src[0], renderer).src) for k in graph.kernels]


def test_avx512_widths_only_when_asked() -> None:
    wide = X86Renderer(features=AVX512)
    assert wide.vector_widths[dtypes.float32] == (16, 8)
    assert X86Renderer(features=AVX512[:-1]).vector_widths[dtypes.float32] == (8,)
    assert wide.target_key != X86Renderer(features=AVX512[:-1]).target_key
    if not cpu_features().get("avx512f"):  # the default follows CPUID: AVX2 here
        assert X86Renderer().vector_widths[dtypes.float32] == (8,)


def test_every_avx512_kernel_decodes_as_listed() -> None:
    r = X86Renderer(features=AVX512, listing=True)
    masked = broadcast = 0
    for name, (t, _) in _workloads().items():
        listings = _listings(r, t)
        assert any("zmm" in s for s in listings), name
        for src in listings:
            assert decode_mismatches(src) == [], name
            masked += src.count("{k1}")
            broadcast += src.count("{1to")
    assert masked and broadcast  # opmask blends/loads and embedded broadcasts were emitted


@pytest.mark.parametrize("features", [AVX512, AVX512[:-1]], ids=["avx512", "avx2"])
def test_no_vector_is_read_wider_than_it_was_written(features: tuple[str, ...]) -> None:
    """Every vector value is written at the width it is read at (a ymm broadcast into a
    zmm value left lanes 8..15 zero: half a matmul's outputs were 0.0 on an AVX-512 CPU)."""
    from fusegrad.codegen import to_program
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.renderer.signature import kernel_signature
    from fusegrad.renderer.x86.select import select

    r = X86Renderer(features=features)
    programs = {c.name: list(c.uops) for c in corpus(r)}
    for name, (t, _) in _workloads().items():
        graph = get_kernel_graph(UOp.sink(t.uop), cache=None)
        for k, call in enumerate(graph.kernels):
            programs[f"{name}:{k}"] = list(to_program(call.src[0], r).uops)
    wide = "avx512f" in features
    bad = {
        name: found
        for name, uops in programs.items()
        if (found := width_mismatches(select(uops, kernel_signature(uops), wide).code))
    }
    assert bad == {}


def test_zmm_compares_and_wheres_stay_whole_vectors() -> None:
    """relu and where over float32x16 are compares into an opmask and one blend, not 16
    scalar compares (vucomiss, setcc) or lanes read out of a mask (kmovw)."""
    r = X86Renderer(features=AVX512, listing=True)
    workloads = _workloads()
    for name in ("elementwise", "where"):
        (listing,) = _listings(r, workloads[name][0])
        assert "vcmpps k1, zmm" in listing and "vblendmps zmm" in listing, name
        assert not re.search(r"vucomiss|set[a-z]+ |kmovw e", listing), name  # no lane of it


def test_exp2_int_bits_stay_in_zmm_registers() -> None:
    """softmax's exp2 builds its float32x16 power of two as int32x16 (shift, add, bitcast):
    zmm integer instructions, not 16 lanes through the stack (movsxd)."""
    r = X86Renderer(features=AVX512, listing=True)
    listings = _listings(r, _workloads()["softmax"][0])
    assert any("vpslld zmm" in s and "vcvtdq2ps zmm" in s for s in listings)
    assert not any("movsxd" in s.split(".Lloop", 1)[-1] for s in listings)


def test_masked_zmm_loads_and_stores_decode() -> None:
    from fusegrad.renderer.corpus import vector_gated_case

    r = X86Renderer(features=AVX512, listing=True)
    listing = r.render(list(vector_gated_case(16).uops))
    assert "vmovups zmm" in listing and "{k1}" in listing
    assert "kmovw k1" in listing
    assert decode_mismatches(listing) == []


def test_conformance_corpus_renders_and_decodes_on_avx512() -> None:
    r = X86Renderer(features=AVX512, listing=True)
    cases = corpus(r)
    wide = 0
    for case in cases:
        listing = r.render(list(case.uops), "kernel")
        assert decode_mismatches(listing) == [], case.name
        wide += "zmm" in listing
    assert wide  # the corpus' vector cases took the renderer's 16-lane width


@pytest.mark.skipif(not cpu_features().get("avx512f"), reason=NO_AVX512)
@pytest.mark.skipif(x86_unavailable() is not None, reason=str(x86_unavailable()))
def test_avx512_kernels_run_and_match_numpy(x86_cpu: None) -> None:
    from fusegrad.runtime import Device

    assert Device["CPU"].renderer.vector_widths[dtypes.float32] == (16, 8)  # CPUID chose it
    for name, (t, want) in _workloads().items():
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.skipif(not cpu_features().get("avx512f"), reason=NO_AVX512)
@pytest.mark.skipif(x86_unavailable() is not None, reason=str(x86_unavailable()))
def test_avx512_conformance_corpus_matches_the_emulator() -> None:
    from fusegrad.renderer.conformance import check_case
    from fusegrad.renderer.launch import CPUProgram
    from fusegrad.renderer.signature import kernel_signature
    from fusegrad.renderer.x86 import X86Compiler
    from fusegrad.runtime import run_linear

    r = X86Renderer(features=AVX512)

    def run(uops: Any, bufs: list[bytearray], var_vals: Any) -> None:
        linear = list(uops)
        program = X86Compiler().compile(r.render(linear))
        CPUProgram(program, kernel_signature(linear))(bufs, var_vals)

    failures = {c.name: bad for c in corpus(r) if (bad := check_case(c, run, run_linear))}
    assert failures == {}
