"""The LLVM renderer and compiler beyond the conformance corpus: capabilities, the calling
convention, fast-math, errors, the compile cache across processes, masked memory."""

from __future__ import annotations

import ctypes
import mmap
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from fusegrad.codegen import CompileError, DiskCache, KernelInfo, host_cpu_count
from fusegrad.renderer import CPUProgram, LLVMCompiler, LLVMRenderer, kernel_signature
from fusegrad.renderer.corpus import Builder, alu, c32, end, index, load, rng, store
from fusegrad.renderer.host import simd_bytes
from fusegrad.uop import Context, Ops, UOp, dtypes


def _saxpy(dt=dtypes.float32, n: int = 16) -> list[UOp]:  # type: ignore[no-untyped-def]
    p = Builder()
    out, x = p.buffer(dt, [0] * n), p.buffer(dt, range(n))
    i = p.add(rng(n))
    value = alu(Ops.ADD, alu(Ops.MUL, load(index(x, i)), UOp.const(2, dt)), UOp.const(1, dt))
    p.add(store(index(out, i), value), end(i))
    return p.uops


def test_capabilities_come_from_the_host() -> None:
    r = LLVMRenderer()
    assert r.has_threads and not r.has_local
    assert r.max_threads == host_cpu_count()
    assert max(r.vector_widths[dtypes.float32]) == simd_bytes() // 4
    assert max(r.vector_widths[dtypes.int8]) == simd_bytes()
    assert dtypes.fp8e4m3 not in r.supported_dtypes
    assert dtypes.bfloat16 in r.supported_dtypes
    assert Ops.THREEFRY not in r.code_for_op and Ops.MAX in r.code_for_op


def test_ir_is_host_independent() -> None:
    src = LLVMRenderer().render(_saxpy())
    for host_specific in ("target triple", "target datalayout", "target-cpu", "target-features"):
        assert host_specific not in src


def test_calling_convention_orders_buffers_by_slot_then_variables_then_core() -> None:
    b1, b0 = UOp.param(1, dtypes.int32.ptr(4)), UOp.param(0, dtypes.int32.ptr(8))
    n = UOp(Ops.PARAM, dtypes.int32, (), ("n", 0, 4))
    m = UOp(Ops.PARAM, dtypes.int64, (), ("m", 0, 100))
    core = UOp(Ops.SPECIAL, dtypes.int32, (c32(2),), "core")
    p = Builder()
    p.add(b1, b0, n, m, core)  # slot 1 appears first: the parameters still go by slot
    i = p.add(rng(n))
    at = alu(Ops.ADD, alu(Ops.MUL, core, c32(4)), i)
    value = alu(Ops.ADD, alu(Ops.ADD, load(index(b1, i)), m.cast(dtypes.int32)), core)
    p.add(store(index(b0, at), value), end(i))
    sig = kernel_signature(p.uops, "conv")
    assert [b.arg for b in sig.buffers] == [0, 1]
    assert [v.arg[0] for v in sig.variables] == ["n", "m"]
    src = LLVMRenderer().render(p.uops, "conv")
    params = "ptr noalias %buf0, ptr noalias %buf1, i32 %var0, i32 %var1, i32 %core"
    assert f"define void @conv({params})" in src
    out, inp = np.full(8, -1, np.int32), np.array([10, 20, 30, 40], np.int32)
    CPUProgram(LLVMCompiler().compile(src), sig)([out, inp], {"n": 3, "m": 5})
    np.testing.assert_array_equal(out, [15, 25, 35, -1, 16, 26, 36, -1])


def test_kernel_name_from_argument_or_trailing_sink() -> None:
    uops = _saxpy()
    assert "@kernel(" in LLVMRenderer().render(uops)
    assert "@E_16(" in LLVMRenderer().render(uops, "E_16")
    sink = UOp.sink(arg=KernelInfo(name="r_4_4"))
    assert "@r_4_4(" in LLVMRenderer().render([*uops, sink])
    with pytest.raises(ValueError, match="not a valid identifier"):
        LLVMRenderer().render(uops, "bad name")


def test_gpu_indexes_are_rejected_with_a_reason() -> None:
    p = Builder()
    out = p.buffer(dtypes.int32, [0] * 4)
    g = UOp(Ops.SPECIAL, dtypes.int32, (c32(4),), "gidx0")
    p.add(store(index(out, g), g))
    with pytest.raises(ValueError, match="gidx0"):
        LLVMRenderer().render(p.uops)


def test_fp8_is_declared_unsupported_and_refused() -> None:
    p = Builder()
    buf = UOp.param(0, dtypes.fp8e4m3.ptr(4))
    p.add(store(index(buf, c32(0)), load(index(buf, c32(1)))))
    with pytest.raises(NotImplementedError, match="fp8e4m3"):
        LLVMRenderer().render(p.uops)


def test_fast_math_is_opt_in() -> None:
    uops = _saxpy()
    assert " fast " not in LLVMRenderer().render(uops)
    assert "fmul fast float" in LLVMRenderer(fast_math=True).render(uops)
    with Context(LLVM_FASTMATH=1):
        assert LLVMRenderer().fast_math
    assert LLVMRenderer().target_key != LLVMRenderer(fast_math=True).target_key


def test_fast_math_kernel_still_computes() -> None:
    uops = _saxpy()
    lib = LLVMCompiler().compile(LLVMRenderer(fast_math=True).render(uops))
    out, x = np.zeros(16, np.float32), np.arange(16, dtype=np.float32)
    CPUProgram(lib, kernel_signature(uops))([out, x])
    np.testing.assert_array_equal(out, x * 2 + 1)


def test_compile_error_carries_kernel_message_and_lines() -> None:
    src = LLVMRenderer().render(_saxpy(), "broken")
    bad = src.replace("fadd float", "fadd i32", 1)
    with pytest.raises(CompileError) as info:
        LLVMCompiler().compile(bad)
    err = info.value
    assert err.kernel == "broken"
    assert "error" in err.compiler_message
    line = next(n for n, x in enumerate(bad.splitlines(), 1) if "fadd i32" in x)
    assert f"{line:5d} | " in str(err)


def test_verifier_errors_point_at_the_instruction() -> None:
    src = LLVMRenderer().render(_saxpy(), "k")
    # use a value before it is defined: the verifier (not the parser) rejects it
    lines = src.splitlines()
    at = next(i for i, x in enumerate(lines) if x.strip().startswith("store"))
    lines.insert(at - 3, lines.pop(at))
    with pytest.raises(CompileError) as info:
        LLVMCompiler().compile("\n".join(lines))
    assert info.value.kernel == "k"
    assert "dominate" in str(info.value) or "store" in str(info.value)


def test_disk_cache_means_a_second_process_compiles_nothing(
    private_cache: Callable[[], DiskCache], tmp_path: Path
) -> None:
    src = LLVMRenderer().render(_saxpy(), "cached_kernel")
    first = LLVMCompiler()
    first.disk = private_cache()
    lib = first.compile_cached(src)
    (tmp_path / "src.ll").write_text(src)
    script = f"""
import warnings; warnings.simplefilter("ignore")
from pathlib import Path
from fusegrad.codegen import DiskCache
from fusegrad.renderer import LLVMCompiler
c = LLVMCompiler()
c.disk = DiskCache("compile", Path({str(tmp_path / "cache.db")!r}))
def refuse(src): raise SystemExit("compiled although cached")
c.compile = refuse
Path({str(tmp_path / "out.o")!r}).write_bytes(c.compile_cached(Path({str(tmp_path / "src.ll")!r}).read_text()))
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    assert (tmp_path / "out.o").read_bytes() == lib


def test_cache_key_names_llvm_version_target_and_level() -> None:
    key = LLVMCompiler(opt_level=3).cache_key
    assert key.startswith("llvm") and ":O3" in key
    assert LLVMCompiler(opt_level=2).cache_key != key
    assert LLVMCompiler(cpu="x86-64", features="").cache_key != LLVMCompiler().cache_key


def _guarded_buffer(nbytes: int) -> tuple[int, Callable[[], None]]:
    """An address with ``nbytes`` readable before an inaccessible page."""
    libc = ctypes.CDLL(None)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    page = mmap.PAGESIZE
    base = libc.mmap(None, 2 * page, 3, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    assert libc.mprotect(base + page, page, 0) == 0
    return base + page - nbytes, lambda: libc.munmap(base, 2 * page)


@pytest.mark.parametrize("width", [1, 4])
def test_masked_loads_never_touch_memory(width: int) -> None:
    # a reads up to 12 elements past its end where the gate is false: with an inaccessible
    # page right after the buffer, any such read would crash
    p = Builder()
    out = p.buffer(dtypes.float32, [0.0] * 16 * width)
    a = UOp.param(1, dtypes.float32.ptr(4 * width))
    i = p.add(rng(16))
    at = alu(Ops.MUL, i, c32(width))
    ok = alu(Ops.CMPLT, i, c32(4))
    vdt = dtypes.float32.vec(width)
    alt = UOp.vconst((-1.0,) * width, vdt) if width > 1 else UOp.const(-1.0, vdt)
    p.add(store(index(out, at), load(index(a, at, ok), vdt, alt)), end(i))
    lib = LLVMCompiler().compile(LLVMRenderer().render(p.uops))
    addr, release = _guarded_buffer(4 * 4 * width)
    try:
        ctypes.memmove(addr, np.arange(4 * width, dtype=np.float32).tobytes(), 16 * width)
        res = np.zeros(16 * width, np.float32)
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(
            (prog := CPUProgram(lib, kernel_signature(p.uops))).code.address
        )
        fn(res.ctypes.data, addr)
        del prog
    finally:
        release()
    want = np.concatenate([np.arange(4 * width), -np.ones(12 * width)]).astype(np.float32)
    np.testing.assert_array_equal(res, want)
