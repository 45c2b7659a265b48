"""The PTX renderer without a GPU: every conformance kernel renders on ``NULL:PTX:sm_80`` and
``NULL:PTX:sm_90`` and assembles with ptxas (skipped where ptxas is missing); each kernel's
``.entry`` parameters are the launch signature; lowered GPU kernels (hardware ids, shared
memory, barriers) computed with the PTX renderer's capabilities are right in the PYTHON
emulator and assemble; ``DEV=NULL:PTX:sm_90`` compiles Tensor code.
"""

from __future__ import annotations

import functools
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad.codegen import CompileError, Compiler, Renderer, to_program
from fusegrad.renderer import PTXCompiler, PTXRenderer, find_ptxas, ptx_signature
from fusegrad.renderer.corpus import Case, corpus
from fusegrad.renderer.ptx import assemble
from fusegrad.runtime import NullDevice
from fusegrad.uop import Ops, PtrDType, UOp, dtypes
from lowering_corpus import load

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas on PATH")
ARCHES = ("sm_80", "sm_90")
ROOT = Path(__file__).parents[2]


@functools.cache
def _null_pair(arch: str) -> tuple[Renderer, Compiler]:
    """NULL's renderer/compiler for ``PTX:<arch>`` (what ``DEV=NULL:PTX:<arch>`` selects)."""
    return NullDevice().select_compiler(f"PTX:{arch.upper()}")


@functools.cache
def _corpus(arch: str) -> tuple[Case, ...]:
    return tuple(corpus(_null_pair(arch)[0]))


def _case_params() -> list[Any]:
    return [pytest.param(arch, c, id=f"{arch}-{c.name}") for arch in ARCHES for c in _corpus(arch)]


def _kernel_name(case: Case) -> str:
    return re.sub(r"\W", "_", case.name)


def test_corpus_covers_the_kernel_kinds() -> None:
    kinds = {c.name.split("-")[0] for c in _corpus("sm_90")}
    assert kinds >= {"alu", "cast", "bitcast", "gated", "if", "symbolic", "multicore", "reduce"}
    assert kinds >= {"nested", "vector", "mulacc"}
    names = {c.name for c in _corpus("sm_90")}
    assert {"alu-float16", "alu-bfloat16", "alu-int64", "cast-from-float64"} <= names
    assert {"alu-fp8e4m3", "cast-from-fp8e5m2", "bitcast-from-fp8e4m3"} <= names  # sm_89+
    assert not any("fp8" in c.name for c in _corpus("sm_80"))  # emulated over uint8 there


@needs_ptxas
@pytest.mark.parametrize(("arch", "case"), _case_params())
def test_corpus_kernel_assembles_with_ptxas(arch: str, case: Case) -> None:
    renderer, compiler = _null_pair(arch)
    src = renderer.render(list(case.uops), _kernel_name(case))
    assert isinstance(src, str)
    assert f".target {arch}" in src
    cubin = compiler.compile(src)
    assert cubin[:4] == b"\x7fELF"  # NULL's compiler ran ptxas for the architecture
    if arch != "sm_90":
        assert assemble(src, "sm_90")[:4] == b"\x7fELF"  # the acceptance target: -arch=sm_90


_PARAM = re.compile(r"\.param \.(u64|u32) (\w+)")


@pytest.mark.parametrize(("arch", "case"), _case_params())
def test_entry_parameters_are_the_launch_signature(arch: str, case: Case) -> None:
    renderer = _null_pair(arch)[0]
    uops = list(case.uops)
    src = renderer.render(uops, "k")
    entry = re.search(r"\.visible \.entry k\((.*?)\)", src, re.S)
    assert entry is not None, "one .visible .entry named as asked"
    params = _PARAM.findall(entry.group(1))
    sig = ptx_signature(uops, "k")
    want = [("u64", f"buf{b.arg}") for b in sig.buffers]
    want += [("u32", f"var{i}") for i in range(len(sig.variables))]
    assert params == want
    slots = sorted(u.arg for u in uops if u.op is Ops.PARAM and isinstance(u.dtype, PtrDType))
    assert [int(b.arg) for b in sig.buffers] == slots
    for _, name in want:  # every parameter is read, pointers converted to global addresses
        assert f"[{name}]" in src
    assert src.count("cvta.to.global.u64") == len(sig.buffers)


def test_signature_orders_buffers_by_slot_then_variables() -> None:
    b2 = UOp.param(2, dtypes.float32.ptr(4))
    b0 = UOp.param(0, dtypes.int32.ptr(4))
    n = UOp(Ops.PARAM, dtypes.int32, (), ("n", 0, 8))
    m = UOp(Ops.PARAM, dtypes.int32, (), ("m", 0, 8))
    sig = ptx_signature([b2, n, b0, m], "k")
    assert sig.buffers == (b0, b2)
    assert sig.variables == (n, m)
    with pytest.raises(ValueError, match="slots repeat"):
        ptx_signature([b0, UOp.param(0, dtypes.float32.ptr(2))])


def test_unknown_architecture_is_named() -> None:
    with pytest.raises(ValueError, match="sm_12"):
        PTXRenderer("sm_12")
    with pytest.raises(ValueError, match="known"):
        PTXCompiler("compute_90")
    assert PTXRenderer("SM_80").arch == "sm_80"
    assert PTXRenderer("sm_80").target_key != PTXRenderer("sm_90").target_key


@needs_ptxas
def test_ptxas_error_names_kernel_and_line() -> None:
    src = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry broken()\n{\n"
    src += "\tadd.s32 %r1, %r2, 1;\n\tret;\n}\n"
    with pytest.raises(CompileError, match="broken") as info:
        PTXCompiler("sm_90").compile(src)
    assert "add.s32" in str(info.value)  # the offending source line is shown


def test_without_ptxas_the_binary_is_the_ptx_text() -> None:
    compiler = PTXCompiler("sm_80", use_ptxas=False)
    src = PTXRenderer("sm_80").render(list(_corpus("sm_80")[0].uops), "k")
    assert compiler.compile(src) == src.encode()
    assert compiler.disassemble(src.encode()) == src


# -- register model details that the semantics rest on -----------------------------------------


def _render_alu(op: Ops, dt: Any) -> str:
    case = next(c for c in _corpus("sm_90") if c.name == f"alu-{dt.name}")
    return PTXRenderer().render(list(case.uops), "k")


def test_float_arithmetic_is_never_contracted() -> None:
    src = _render_alu(Ops.ADD, dtypes.float32)
    for name in ("add", "sub", "mul", "div"):
        assert re.search(rf"\b{name}\.rn\.f32", src), name
        assert not re.search(rf"\b{name}\.f32", src), f"{name} without .rn may fuse"
    assert "fma.rn.f32" in src  # MULACC is the one fused op


def test_constants_are_defined_before_any_branch() -> None:
    case = next(c for c in _corpus("sm_90") if c.name == "if-endif")
    lines = PTXRenderer().render(list(case.uops), "k").splitlines()
    first_branch = next(i for i, line in enumerate(lines) if "bra " in line)
    const_lines = [i for i, line in enumerate(lines) if re.search(r"mov\.b32 %f\d+, 0f", line)]
    assert const_lines and max(const_lines) < first_branch


# -- lowered GPU kernels with the PTX renderer's capabilities -----------------------------------


_targets, _lower_corpus = load("targets"), load("corpus")


def _lowered_params() -> list[Any]:
    out = []
    for c in _lower_corpus.build():
        for variant in ("plain", "gpu") if "gpu" in c.opts else ("plain",):
            out.append(pytest.param(c, variant, id=f"{c.name}-{variant}"))
    return out


@pytest.mark.parametrize(("c", "variant"), _lowered_params())
def test_lowered_gpu_kernel_is_right_and_assembles(c: Any, variant: str) -> None:
    renderer = PTXRenderer("sm_90")
    spec = to_program(c.opts["gpu"](c.ast) if variant == "gpu" else c.ast, renderer)
    assert spec.local_size is not None  # a GPU launch
    got = _targets.run_program(spec, c.inputs, c.var_vals)
    for slot, want in c.expected.items():
        out = got[slot]
        if spec.buffers[slot].dtype is dtypes.bfloat16:
            out = _targets.bf16_values(out)
        flat = np.asarray(want).reshape(-1)
        if c.exact:
            np.testing.assert_array_equal(out, flat)
        else:
            np.testing.assert_allclose(out, flat.astype(out.dtype), rtol=c.tol, atol=c.tol)
    assert isinstance(spec.src, str)
    if find_ptxas() is not None:
        assert assemble(spec.src, "sm_90")[:4] == b"\x7fELF"


# -- the NULL device, the documented way ------------------------------------------------------------

_NULL_SCRIPT = """
from fusegrad import Tensor
from fusegrad.runtime import Device
dev = Device["NULL"]
x = Tensor.ones(64, 64).contiguous()
y = ((x @ x).relu().sum(axis=1) + Tensor.arange(64).float()).realize()
z = Tensor.ones(33).half().exp().sum().realize()
print(type(dev.renderer).__name__, dev.renderer.arch, dev.compiler.ptxas is not None)
"""


def test_dev_null_ptx_compiles_tensor_code() -> None:
    env = {**os.environ, "DEV": "NULL:PTX:sm_80", "SPEC": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _NULL_SCRIPT],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    name, arch, assembled = proc.stdout.split()
    assert (name, arch) == ("PTXRenderer", "sm_80")
    assert assembled == str(find_ptxas() is not None)


def test_null_lists_the_ptx_options() -> None:
    names = [name for name, _ in NullDevice().compiler_status()]
    assert {"PTX", "PTX:SM_80", "PTX:SM_90", "PTX:SM_75"} <= set(names)
    assert names.index("LLVM") < names.index("PTX")  # plain NULL still compiles for the CPU
    assert dtypes.float16 in PTXRenderer().supported_dtypes


# -- the GPU heuristics with the PTX renderer's capabilities ----------------------------------------


def _elementwise(*shape: int) -> UOp:
    from fusegrad.codegen import KernelInfo
    from fusegrad.uop import AxisType

    n = int(np.prod(shape))
    out, x = UOp.param(0, dtypes.float32.ptr(n)), UOp.param(1, dtypes.float32.ptr(n))
    ranges = [UOp.range(s, i, AxisType.LOOP) for i, s in enumerate(shape)]
    idx: Any = ranges[0]
    for r, s in zip(ranges[1:], shape[1:], strict=True):
        idx = idx * s + r
    store = out.index(idx).store(x.index(idx).load() * 2.0).end(*ranges)
    return UOp.sink(store, arg=KernelInfo("ew"))


def _matmul(n: int) -> UOp:
    from fusegrad.codegen import KernelInfo
    from fusegrad.uop import AxisType

    out = UOp.param(0, dtypes.float32.ptr(n * n))
    a, b = UOp.param(1, dtypes.float32.ptr(n * n)), UOp.param(2, dtypes.float32.ptr(n * n))
    i, j = UOp.range(n, 0, AxisType.LOOP), UOp.range(n, 1, AxisType.LOOP)
    k = UOp.range(n, 2, AxisType.REDUCE)
    acc = (a.index(i * n + k).load() * b.index(k * n + j).load()).reduce(k, arg=Ops.ADD)
    return UOp.sink(out.index(i * n + j).store(acc).end(i, j), arg=KernelInfo("mm"))


def test_gpu_workgroups_are_whole_warps() -> None:
    spec = to_program(_elementwise(1 << 20), PTXRenderer())
    assert spec.local_size is not None and int(np.prod(spec.local_size)) == 256
    assert ".v4.f32" in str(spec.src)  # the contiguous axis upcast by 4: vector accesses
    spec = to_program(_elementwise(64, 4096), PTXRenderer())
    assert spec.local_size == (32, 8, 1)  # threadIdx.x (lidx0) walks the contiguous axis
    lidx0 = next(u for u in spec.uops if u.op is Ops.SPECIAL and u.arg == "lidx0")
    index = next(u for u in spec.uops if u.op is Ops.INDEX)
    assert lidx0 in index.src[1].toposort() and int(lidx0.src[0].arg) == 32


def test_gpu_matmul_is_register_blocked_and_right() -> None:
    spec = to_program(_matmul(64), PTXRenderer())
    kinds = [o.op.name for o in spec.applied_opts]
    assert kinds.count("UPCAST") == 2 and "UNROLL" in kinds and "LOCAL" in kinds
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 64, 64)).astype(np.float32)
    got = _targets.run_program(spec, [np.zeros(64 * 64, np.float32), a, b])[0]
    np.testing.assert_allclose(got.reshape(64, 64), a @ b, rtol=1e-4, atol=1e-4)


def test_gpu_full_reduction_uses_a_whole_workgroup() -> None:
    from fusegrad.codegen import KernelInfo
    from fusegrad.uop import AxisType

    out, x = UOp.param(0, dtypes.float32.ptr(1)), UOp.param(1, dtypes.float32.ptr(4096))
    k = UOp.range(4096, 0, AxisType.REDUCE)
    total = x.index(k).load().reduce(k, arg=Ops.ADD)
    ast = UOp.sink(
        out.index(UOp.const(dtype=dtypes.weakint, b=0)).store(total), arg=KernelInfo("s")
    )
    spec = to_program(ast, PTXRenderer())
    assert spec.applied_opts[0].op.name == "GROUPTOP" and spec.applied_opts[0].amount == 256
    data = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    got = _targets.run_program(spec, [np.zeros(1, np.float32), data])[0]
    np.testing.assert_allclose(got[0], data.astype(np.float64).sum(), rtol=1e-4)


# -- the binary ABI: what ptxas made of the parameters ---------------------------------------------

_KPARAM_INFO = 0x17  # EIATTR_KPARAM_INFO in a cubin's .nv.info.<kernel> section


def _sections(elf: bytes) -> dict[str, bytes]:
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * entsize) for i in range(count)]
    names_at = headers[names_index][4]

    def name(at: int) -> str:
        start = names_at + at
        return elf[start : elf.index(b"\0", start)].decode()

    return {name(h[0]): elf[h[4] : h[4] + h[5]] for h in headers}


def cubin_parameters(cubin: bytes, kernel: str) -> list[tuple[int, int, int]]:
    """(ordinal, byte offset, byte size) of each parameter of ``kernel``, from the attribute
    records (format byte, attribute byte, payload) of its ``.nv.info`` section."""
    info, pos, out = _sections(cubin)[f".nv.info.{kernel}"], 0, []
    while pos < len(info):
        fmt, attr = info[pos], info[pos + 1]
        if fmt != 4:  # no payload (1, 2) or a 2-byte value (3)
            pos += 4 if fmt == 3 else 2
            continue
        size = struct.unpack_from("<H", info, pos + 2)[0]
        if attr == _KPARAM_INFO:
            _, ordinal, offset, flags = struct.unpack_from("<IHHI", info, pos + 4)
            out.append((ordinal, offset, flags >> 18))
        pos += 4 + size
    return sorted(out)


@needs_ptxas
@pytest.mark.parametrize("case", _corpus("sm_90"), ids=lambda c: c.name)
def test_cubin_parameters_are_pointers_then_int32s(case: Case) -> None:
    renderer, compiler = _null_pair("sm_90")
    uops = list(case.uops)
    cubin = compiler.compile(renderer.render(uops, "k"))
    sig = ptx_signature(uops, "k")
    sizes = [8] * len(sig.buffers) + [4] * len(sig.variables)  # what cuLaunchKernel passes
    offsets = [8 * i for i in range(len(sig.buffers))]
    offsets += [offsets[-1] + 8 + 4 * i if offsets else 4 * i for i in range(len(sig.variables))]
    assert cubin_parameters(cubin, "k") == list(zip(range(len(sizes)), offsets, sizes, strict=True))


def test_lane_by_lane_rendering_has_no_vector_accesses() -> None:
    vector_cases = [c for c in _corpus("sm_90") if c.name.startswith("vector")]
    assert vector_cases
    for case in vector_cases:
        assert ".v4." in str(PTXRenderer().render(list(case.uops), "k"))
        src = PTXRenderer(vector_memory=False).render(list(case.uops), "k")
        assert not re.search(r"\.v[24]\.", src), case.name
        if find_ptxas() is not None:
            assert assemble(src, "sm_90")[:4] == b"\x7fELF"
    assert PTXRenderer(vector_memory=False).target_key != PTXRenderer().target_key
