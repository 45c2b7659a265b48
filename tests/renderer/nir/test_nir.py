"""The NIR renderer and the LVP compiler on small programs: what the printed shader contains,
the compiler's input checks, clear errors for what is not mapped, and results on the CPU."""

from __future__ import annotations

import re
import struct

import pytest
from fusegrad.codegen import CompileError
from fusegrad.renderer.corpus import Builder, end, if_case, index, load, multicore_case, rng, store
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.nir import LVPCompiler, NIRRenderer, mesa_unavailable
from fusegrad.renderer.nir.lvp import parse_rendered
from fusegrad.renderer.nir.renderer import cpu_signature
from fusegrad.renderer.signature import kernel_signature
from fusegrad.uop import AddrSpace, Ops, UOp, dtypes

pytestmark = pytest.mark.skipif(mesa_unavailable() is not None, reason=str(mesa_unavailable()))


@pytest.fixture(scope="module")
def renderer() -> NIRRenderer:
    return NIRRenderer()


@pytest.fixture(scope="module")
def compiler() -> LVPCompiler:
    return LVPCompiler()


def _double_plus_one() -> tuple[list[UOp], list[bytearray]]:
    p = Builder()
    src = p.buffer(dtypes.float32, [1.5, -2.0, 3.25, 0.0])
    out = p.output(dtypes.float32, 4, "out")
    i = p.add(rng(4))
    x = p.add(load(index(src, i)))
    y = UOp(
        Ops.ADD,
        dtypes.float32,
        (UOp(Ops.MUL, dtypes.float32, (x, x.const_like(2.0))), x.const_like(1.0)),
    )
    p.add(store(index(out, i), y), end(i))
    case = p.case("double-plus-one")
    bufs = [bytearray(struct.pack("<4f", 1.5, -2.0, 3.25, 0.0)), bytearray(16)]
    return list(case.uops), bufs


def test_render_is_the_printed_shader_then_its_serialized_form(renderer: NIRRenderer) -> None:
    uops, _ = _double_plus_one()
    text = renderer.render(uops, "double_plus_one")
    assert text.startswith(
        "; fusegrad NIR kernel double_plus_one buffers=2 variables=0 core=0 local=1,1,1 shared=0 uniform=1\n"
    )
    assert "shader: MESA_SHADER_COMPUTE" in text
    for instr in (
        "@load_ubo",
        "@load_global",
        "fmul!",
        "fadd!",
        "@store_global",
        "loop {",
        "break",
    ):
        assert instr in text, instr
    k = parse_rendered(text)
    assert (k.name, k.buffers, k.variables, k.core) == ("double_plus_one", 2, 0, False)
    assert (k.local, k.shared) == ((1, 1, 1), 0)
    assert len(k.blob) > 100


def test_compiled_kernel_computes_on_the_cpu(renderer: NIRRenderer, compiler: LVPCompiler) -> None:
    uops, bufs = _double_plus_one()
    obj = compiler.compile(renderer.render(uops))
    assert obj[:4] == b"\x7fELF"
    CPUProgram(obj, kernel_signature(uops))(bufs, {})
    assert struct.unpack("<4f", bufs[1]) == (4.0, -3.0, 7.5, 1.0)


def test_if_block_and_core_id_shape_the_shader(renderer: NIRRenderer) -> None:
    assert "if " in renderer.render(list(if_case().uops))
    split = renderer.render(list(multicore_case().uops))
    assert "@load_workgroup_id" in split and " core=1" in split.splitlines()[0]


def test_lvp_compiler_rejects_other_sources(compiler: LVPCompiler) -> None:
    with pytest.raises(CompileError, match="not the NIR renderer's output"):
        compiler.compile("define void @k() { ret void }")


def _reverse_in_workgroups(
    groups: int = 3, size: int = 8
) -> tuple[list[UOp], list[bytearray], tuple[int, ...]]:
    """Each workgroup of ``size`` invocations reverses its slice of the input through shared
    memory: invocation i stores element i, a barrier, then reads element size-1-i (written by
    another invocation)."""
    p = Builder()
    n = groups * size
    src = p.buffer(dtypes.float32, [float(3 * i + 1) for i in range(n)])
    out = p.output(dtypes.float32, n, "out")
    g = UOp.special(groups, "gidx0")
    lid = UOp.special(size, "lidx0")
    tmp = UOp(Ops.DEFINE_LOCAL, dtypes.float32.ptr(size, AddrSpace.LOCAL), (), "tmp")
    i = g * size + lid
    stored = p.add(store(index(tmp, lid), load(index(src, i))))
    barrier = p.add(UOp(Ops.BARRIER, dtypes.void, (stored,)))
    mirrored = load(index(tmp.after(barrier), (size - 1) - lid))
    p.add(store(index(out, i), mirrored))
    case = p.case("reverse")
    bufs = [bytearray(struct.pack(f"<{n}f", *values)) for _, values in case.buffers]
    return list(case.uops), bufs, (groups, 1, 1, size, 1, 1)


def test_workgroups_shared_memory_and_barrier(renderer: NIRRenderer, compiler: LVPCompiler) -> None:
    from fusegrad.runtime import run_linear

    uops, bufs, dims = _reverse_in_workgroups()
    text = renderer.render(uops, "reverse")
    assert text.startswith("; fusegrad NIR kernel reverse buffers=2 variables=0 core=0 local=8,1,1")
    for instr in ("@load_local_invocation_id", "@store_shared", "@barrier", "@load_shared"):
        assert instr in text, instr
    assert "workgroup_size: 8, 1, 1" in text and "shared_size: 32" in text
    want = [bytearray(b) for b in bufs]
    run_linear(uops, want, {}, global_size=dims[:3], local_size=dims[3:])
    CPUProgram(compiler.compile(text), cpu_signature(uops, "reverse"))(bufs, {})
    assert bufs[1] == want[1]
    got = struct.unpack("<24f", bufs[1])
    assert got[:8] == tuple(float(3 * i + 1) for i in range(7, -1, -1))


def test_consecutive_lanes_load_and_store_whole_vectors(
    renderer: NIRRenderer, compiler: LVPCompiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the reverse kernel, invocation i reads src[8g + i] and writes tmp[i] and
    out[8g + i]: consecutive lanes, so vector loads/stores; its read of tmp[7 - i] runs
    backwards and stays a gather. Its control flow is uniform, so they are plain vector
    accesses (at a stack slot where lane 0 is masked off); masked ones where it is not.
    Without the rewrite every access is a gather/scatter."""
    from fusegrad.renderer.nir import lvp
    from fusegrad.renderer.nir import renderer as nir_renderer

    uops, _, _ = _reverse_in_workgroups()
    text = renderer.render(uops, "reverse")

    def calls(ir: str) -> dict[str, int]:
        found = re.findall(r"call [^@]*@llvm\.masked\.(\w+)\.", ir)
        return {name: found.count(name) for name in sorted(set(found))}

    ir = compiler.ir(text)
    assert calls(ir) == {"gather": 1}
    assert len(re.findall(r"= select i1 %\w+, ptr %\w+, ptr %masked_off", ir)) == 3
    monkeypatch.setattr(nir_renderer, "uniform_control", lambda uops: False)
    divergent = renderer.render(uops, "reverse")
    assert calls(compiler.ir(divergent)) == {"gather": 1, "load": 1, "store": 2}
    monkeypatch.setattr(lvp, "CONTIGUOUS", False)
    assert calls(compiler.ir(text)) == {"gather": 2, "scatter": 2}


def test_workgroup_wider_than_a_vector_is_refused(renderer: NIRRenderer) -> None:
    uops, _, _ = _reverse_in_workgroups(groups=1, size=32)
    with pytest.raises(NotImplementedError, match="a workgroup of 32 invocations"):
        renderer.render(uops)


def test_optimized_shader_has_no_registers_left(renderer: NIRRenderer) -> None:
    from fusegrad.renderer.corpus import reduce_case

    text = renderer.render(list(reduce_case(dtypes.float32, Ops.ADD).uops))
    assert "deref_var" not in text and "phi" in text  # the accumulator became an SSA phi


def test_serialized_shader_prints_like_the_built_one(renderer: NIRRenderer) -> None:
    from fusegrad.renderer.nir.builder import deserialize, print_shader, serialize

    lib = renderer.mesa.lib
    shader, _ = renderer.build(_double_plus_one()[0])
    copy = deserialize(lib, serialize(lib, shader))
    try:
        assert "impl main" in print_shader(lib, shader)
        assert print_shader(lib, copy) == print_shader(lib, shader)
    finally:
        lib.ralloc_free(shader)
        lib.ralloc_free(copy)


def test_llvmpipe_ir_has_the_cpu_calling_convention(
    renderer: NIRRenderer, compiler: LVPCompiler
) -> None:
    uops = list(multicore_case().uops)
    ir = compiler.ir(renderer.render(uops, "split"))
    buffers = len(kernel_signature(uops).buffers)
    params = ", ".join(["ptr %\\w+"] * buffers + ["i32 %\\w+"])  # buffers, then the core id
    assert re.search(rf"^define void @split\({params}\)", ir, re.MULTILINE)


def test_float_zero_constants_follow_ieee(renderer: NIRRenderer, compiler: LVPCompiler) -> None:
    # gallivm folds x / 0.0, 0.0 / x, x * 0.0 and 0.0 + x by identity with its zero constant
    # (undef, 0, 0, x): the renderer hides +0.0 from it
    from fusegrad.renderer.conformance import compare, fresh_buffers
    from fusegrad.runtime import run_linear

    p = Builder()
    src = p.buffer(dtypes.float32, [1.0, -2.0, 0.0, -0.0, float("inf"), float("nan")])
    x = None
    i = p.add(rng(6))
    x = p.add(load(index(src, i)))
    zero = x.const_like(0.0)
    for name, op, a, b in (
        ("x/0", Ops.FDIV, x, zero),
        ("0/x", Ops.FDIV, zero, x),
        ("x*0", Ops.MUL, x, zero),
        ("0+x", Ops.ADD, zero, x),
    ):
        out = p.output(dtypes.float32, 6, name)
        p.add(store(index(out, i), UOp(op, dtypes.float32, (a, b))))
    p.add(end(i))
    case = p.case("zero-constants")
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, {})
    CPUProgram(
        compiler.compile(renderer.render(list(case.uops))), kernel_signature(list(case.uops))
    )(got, {})
    assert compare(case, want, got) == []


def _count_visits(groups: int, cores: int, size: int = 8) -> tuple[list[UOp], list[bytearray]]:
    """Each invocation adds 1 to its element: a workgroup run twice (or never) shows."""
    p = Builder()
    n = groups * size
    out = p.buffer(dtypes.float32, [0.0] * n)
    p.add(UOp(Ops.SPECIAL, dtypes.int32, (UOp(Ops.CONST, dtypes.int32, arg=cores),), "core"))
    i = UOp.special(groups, "gidx0") * size + UOp.special(size, "lidx0")
    x = load(index(out, i))
    p.add(store(index(out, i), UOp(Ops.ADD, dtypes.float32, (x, x.const_like(1.0)))))
    case = p.case("visits")
    return list(case.uops), [bytearray(struct.pack(f"<{n}f", *case.buffers[0][1]))]


@pytest.mark.parametrize("blocks", [True, False])
@pytest.mark.parametrize(("groups", "cores"), [(5, 3), (2, 2), (7, 1), (3, 4), (10, 4)])
def test_core_slices_share_the_workgroups(
    compiler: LVPCompiler, groups: int, cores: int, blocks: bool
) -> None:
    renderer = NIRRenderer()
    renderer.core_blocks = blocks  # blocks of consecutive workgroups, or every n-th
    uops, bufs = _count_visits(groups, cores)
    text = renderer.render(uops, "visits")
    assert " core=1 local=8,1,1" in text.splitlines()[0]
    CPUProgram(compiler.compile(text), cpu_signature(uops, "visits"))(bufs, {})  # every core id
    assert struct.unpack(f"<{8 * groups}f", bufs[0]) == (1.0,) * (8 * groups)
