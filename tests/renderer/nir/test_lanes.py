"""What the NIR renderer tells the LVP compiler about a workgroup's lanes, and what the
compiler does with it: uniform control flow (``uniform_control``) lets llvmpipe read values
all lanes agree on from lane 0 (``lanes.uniform_lanes``); MULACC is one rounding
(``ffma`` -> ``llvm.fma``). Results are checked against the PYTHON emulator."""

from __future__ import annotations

import re
import struct

import pytest
from fusegrad.renderer.corpus import Builder, alu, c32, end, index, load, mulacc_case, rng, store
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.nir import LVPCompiler, NIRRenderer, mesa_unavailable
from fusegrad.renderer.nir.renderer import cpu_signature, uniform_control
from fusegrad.uop import AddrSpace, Ops, UOp, dtypes

pytestmark = pytest.mark.skipif(mesa_unavailable() is not None, reason=str(mesa_unavailable()))

GROUPS, LANES, STEPS = 3, 8, 5


@pytest.fixture(scope="module")
def renderer() -> NIRRenderer:
    return NIRRenderer()


@pytest.fixture(scope="module")
def compiler() -> LVPCompiler:
    return LVPCompiler()


def _ids() -> tuple[UOp, UOp]:
    """(gidx0, lidx0) as int32 values."""
    group = UOp(Ops.SPECIAL, dtypes.int32, (c32(GROUPS),), "gidx0")
    return group, UOp(Ops.SPECIAL, dtypes.int32, (c32(LANES),), "lidx0")


def _accumulate(gate: str | None = None) -> tuple[list[UOp], list[bytearray]]:
    """out[i] += src[r * n + i] for r < STEPS, i = 8 * gidx0 + lidx0, in a loop whose counter
    every lane shares. ``gate``: the loop sits in an IF on ``"lane"`` (lidx0 < 5, divergent)
    or ``"group"`` (gidx0 < 2, uniform)."""
    n = GROUPS * LANES
    p = Builder()
    src = p.buffer(dtypes.float32, [float(x % 7) - 2.5 for x in range(STEPS * n)])
    out = p.buffer(dtypes.float32, [0.5] * n)
    g, lid = _ids()
    i = alu(Ops.ADD, alu(Ops.MUL, g, c32(LANES)), lid)
    block = None
    if gate is not None:
        cond = alu(Ops.CMPLT, lid, c32(5)) if gate == "lane" else alu(Ops.CMPLT, g, c32(2))
        block = p.add(UOp(Ops.IF, dtypes.void, (cond,)))
    r = p.add(rng(STEPS))
    x = load(index(src, alu(Ops.ADD, alu(Ops.MUL, r, c32(n)), i)))
    p.add(store(index(out, i), alu(Ops.ADD, load(index(out, i)), x)), end(r))
    if block is not None:
        p.add(UOp(Ops.ENDIF, dtypes.void, (block,)))
    case = p.case(f"accumulate-{gate}")
    bufs = [bytearray(struct.pack(f"<{len(v)}f", *v)) for _, v in case.buffers]
    return list(case.uops), bufs


def _gated_store(gate: UOp) -> list[UOp]:
    p = Builder()
    out = p.buffer(dtypes.float32, [0.0] * GROUPS * LANES)
    g, lid = _ids()
    i = alu(Ops.ADD, alu(Ops.MUL, g, c32(LANES)), lid)
    p.add(store(index(out, i, alu(Ops.CMPLT, gate, c32(2))), UOp.const(1.0, dtypes.float32)))
    return list(p.case("gated").uops)


def _shared_condition() -> list[UOp]:
    """An IF on a value read back from shared memory (may differ between lanes)."""
    p = Builder()
    out = p.buffer(dtypes.float32, [0.0] * LANES)
    _, lid = _ids()
    tmp = UOp(Ops.DEFINE_LOCAL, dtypes.int32.ptr(LANES, AddrSpace.LOCAL), (), "tmp")
    stored = p.add(store(index(tmp, lid), lid))
    barrier = p.add(UOp(Ops.BARRIER, dtypes.void, (stored,)))
    held = load(index(tmp.after(barrier), c32(0)))
    block = p.add(UOp(Ops.IF, dtypes.void, (alu(Ops.CMPLT, held, c32(1)),)))
    p.add(store(index(out, lid), UOp.const(1.0, dtypes.float32)))
    p.add(UOp(Ops.ENDIF, dtypes.void, (block,)))
    return list(p.case("shared-condition").uops)


def test_uniform_control_is_about_branches_on_lane_values() -> None:
    g, lid = _ids()
    assert uniform_control(_accumulate()[0])  # lane ids in addresses only
    assert uniform_control(_accumulate("group")[0])
    assert not uniform_control(_accumulate("lane")[0])
    assert uniform_control(_gated_store(g))
    assert not uniform_control(_gated_store(lid))
    assert not uniform_control(_shared_condition())


def _first_active_uses(ir: str) -> int:
    """Operands that read the first active lane's index (a variable extractelement)."""
    return len(re.findall(r"i32 %first_active_or_0\w*\s*$", ir, re.MULTILINE))


@pytest.mark.parametrize("gate", [None, "group", "lane"])
def test_uniform_programs_read_shared_values_from_lane_zero(
    renderer: NIRRenderer, compiler: LVPCompiler, gate: str | None
) -> None:
    from fusegrad.runtime import run_linear

    uops, bufs = _accumulate(gate)
    text = renderer.render(uops, "accumulate")
    uniform = gate != "lane"
    assert text.splitlines()[0].endswith(f" uniform={int(uniform)}")
    uses = _first_active_uses(compiler.ir(text))
    assert uses == 0 if uniform else uses > 0
    want = [bytearray(b) for b in bufs]
    run_linear(uops, want, {}, global_size=(GROUPS, 1, 1), local_size=(LANES, 1, 1))
    CPUProgram(compiler.compile(text), cpu_signature(uops, "accumulate"))(bufs, {})
    assert bufs[1] == want[1]
    assert bufs[1] != bytearray(struct.pack(f"<{GROUPS * LANES}f", *[0.5] * GROUPS * LANES))


def test_divergent_branch_in_shared_memory_keeps_the_first_active_lane(
    renderer: NIRRenderer, compiler: LVPCompiler
) -> None:
    from fusegrad.runtime import run_linear

    uops = _shared_condition()
    text = renderer.render(uops, "shared_condition")
    assert text.splitlines()[0].endswith(" uniform=0")
    bufs = [bytearray(4 * LANES)]
    want = [bytearray(b) for b in bufs]
    run_linear(uops, want, {}, global_size=(1, 1, 1), local_size=(LANES, 1, 1))
    CPUProgram(compiler.compile(text), cpu_signature(uops, "shared_condition"))(bufs, {})
    assert bufs == want
    assert struct.unpack(f"<{LANES}f", bufs[0]) == (1.0,) * LANES  # tmp[0] is 0 for all


def test_mulacc_is_one_rounding(renderer: NIRRenderer, compiler: LVPCompiler) -> None:
    """MULACC renders as NIR's ``ffma`` and compiles to ``llvm.fma`` (gallivm's
    ``llvm.fmuladd`` may or may not fuse, as the target likes)."""
    from fusegrad.renderer.conformance import compare, fresh_buffers
    from fusegrad.runtime import run_linear

    assert Ops.MULACC in renderer.code_for_op
    case = mulacc_case(renderer, dtypes.float32)
    assert case is not None
    text = renderer.render(list(case.uops), "mulacc")
    assert "ffma!" in text
    ir = compiler.ir(text)
    assert "@llvm.fma." in ir and "fmuladd" not in ir
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, {})
    CPUProgram(compiler.compile(text), cpu_signature(list(case.uops), "mulacc"))(got, {})
    assert compare(case, want, got) == []


def _matmul_kernel(n: int) -> UOp:
    """The AST of an n x n float32 matmul's kernel."""
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.tensor import Tensor

    a, b = Tensor.empty(n, n, device="CPU"), Tensor.empty(n, n, device="CPU")
    kernels = get_kernel_graph(UOp.sink((a @ b).uop), cache=None).kernels  # type: ignore[attr-defined]
    return kernels[-1].src[0]  # type: ignore[no-any-return]


def test_heuristics_give_the_lanes_the_innermost_elements(
    renderer: NIRRenderer, compiler: LVPCompiler
) -> None:
    """A matmul for a SIMD-lane renderer: LOCAL first (neighbouring lanes on neighbouring
    columns), then the register block: every load and store of a lane-varying address is a
    whole vector, no gather or scatter left."""
    from fusegrad.codegen import hand_coded_optimizations, to_program
    from fusegrad.codegen.opt.kernel import OptOps

    ast = _matmul_kernel(256)
    opts = hand_coded_optimizations(ast, renderer)
    assert opts[0].op is OptOps.LOCAL and opts[0].amount == LANES
    assert {o.op for o in opts[1:]} >= {OptOps.UPCAST, OptOps.UNROLL}
    spec = to_program(ast, renderer, opts)
    ir = compiler.ir(str(spec.src))
    assert not re.search(r"call [^@]*@llvm\.masked\.(gather|scatter)", ir)
