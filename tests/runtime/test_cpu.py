"""The CPU device: ctypes-called kernels (gcc-built libraries until the renderers' loader
lands), THREAD-split kernels on every core, errors, buffers as kernel pointers."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest
from fusegrad.runtime import Buffer, CPUDevice, CPUProgram, Device, Unavailable
from fusegrad.uop import dtypes

SAXPY = """
void saxpy(float* out, const float* x, const float* y, int n) {
  for (int i = 0; i < n; i++) out[i] = 2.5f * x[i] + y[i];
}
"""

# a THREAD-split kernel: core c of 4 handles its quarter of n elements
SPLIT = """
void split(float* out, const float* x, int n, int core) {
  int per = (n + 3) / 4, lo = core * per, hi = lo + per < n ? lo + per : n;
  for (int i = lo; i < hi; i++) out[i] = x[i] * x[i] + (float)core;
}
"""


@pytest.fixture
def cpu() -> Any:
    dev = CPUDevice("CPU")
    yield dev
    dev.close()


def _split_program(rt: Any, lb: Any) -> CPUProgram:
    core = lb.special("core", 4)
    spec = rt.spec_for("split", [core.src[0], core], device="CPU")
    return CPUProgram("split", rt.gcc_shared(SPLIT), spec)


def test_kernel_from_a_shared_library_runs_on_buffers(rt: Any) -> None:
    n = 1000
    x, y = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    bx, by = (Buffer("CPU", n, dtypes.float32).copyin(a) for a in (x, y))
    out = Buffer("CPU", n, dtypes.float32)
    prg = CPUProgram("saxpy", rt.gcc_shared(SAXPY))
    Device["CPU"].exec(prg, [out.opaque, bx.opaque, by.opaque], [n], wait=True)
    np.testing.assert_array_equal(out.numpy(), np.float32(2.5) * x + y)


def test_thread_split_kernel_matches_single_threaded(rt: Any, lb: Any) -> None:
    n = 100_003
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    results = []
    for threads in (1, 4):
        dev = CPUDevice("CPU")
        dev.threads = threads
        try:
            bx = dev.allocator.alloc(4 * n)
            out = dev.allocator.alloc(4 * n)
            bx.view[:] = x.tobytes()
            dev.exec(_split_program(rt, lb), [out, bx], [n], wait=True)
            results.append(np.frombuffer(out.view, np.float32).copy())
        finally:
            dev.close()
    np.testing.assert_array_equal(results[0], results[1])
    core_of = np.minimum(np.arange(n) // ((n + 3) // 4), 3).astype(np.float32)
    np.testing.assert_array_equal(results[1], x * x + core_of)


def test_split_slices_run_on_several_threads_at_once(rt: Any) -> None:
    dev = CPUDevice("CPU")
    dev.threads = 4
    seen: dict[int, int] = {}
    inside, peak = [0], [0]
    lock = threading.Lock()

    def slice_fn(b: Any, v: Any, core: int) -> None:
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
            seen[core] = threading.get_ident()
        time.sleep(0.05)  # sleeping releases the GIL like a ctypes call does
        with lock:
            inside[0] -= 1

    try:
        dev.exec(rt.FnProgram("sl", slice_fn, cores=8), [], wait=True)
    finally:
        dev.close()
    assert sorted(seen) == list(range(8))
    assert peak[0] == 4 and len(set(seen.values())) == 4


def test_error_in_one_slice_surfaces(cpu: Any, rt: Any) -> None:
    def slice_fn(b: Any, v: Any, core: int) -> None:
        if core == 2:
            raise ArithmeticError(f"slice {core} failed")

    cpu.threads = 3
    cpu.exec(rt.FnProgram("bad", slice_fn, cores=4), [])
    with pytest.raises(ArithmeticError, match="slice 2 failed"):
        cpu.synchronize()


def test_wrong_argument_count_is_an_exception_not_a_crash(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("saxpy", rt.gcc_shared(SAXPY))
    cpu.exec(prg, [cpu.allocator.alloc(16)], ["not an int"])
    with pytest.raises(Exception, match="argument"):
        cpu.synchronize()


def test_missing_symbol_and_non_elf_code_are_clear_errors(rt: Any) -> None:
    with pytest.raises(Unavailable, match="no function 'nope'"):
        CPUProgram("nope", rt.gcc_shared(SAXPY))
    with pytest.raises(ValueError, match="not an ELF file"):
        CPUProgram("saxpy", b"garbage")


def test_cpu_renderer_is_reported_when_unavailable(cpu: Any) -> None:
    status = dict(cpu.compiler_status())
    assert set(status) == {"LLVM", "C", "X86", "LVP"}
    if all(s != "ok" for s in status.values()):
        with pytest.raises(Unavailable, match="no renderer available"):
            _ = cpu.renderer


def test_relocatable_object_loads_through_the_renderers_loader(tmp_path: Any) -> None:
    import subprocess

    import fusegrad.renderer

    if not hasattr(fusegrad.renderer, "load_elf"):
        pytest.skip("fusegrad.renderer exports no load_elf yet")
    obj = tmp_path / "k.o"
    subprocess.run(
        ["gcc", "-c", "-fPIC", "-O2", "-x", "c", "-", "-o", str(obj)],
        input=SAXPY.encode(), check=True, capture_output=True,
    )  # fmt: skip
    n = 64
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    bx, by = (Buffer("CPU", n, dtypes.float32).copyin(a) for a in (x, y))
    out = Buffer("CPU", n, dtypes.float32)
    prg = CPUProgram("saxpy", obj.read_bytes())
    Device["CPU"].exec(prg, [out.opaque, bx.opaque, by.opaque], [n], wait=True)
    np.testing.assert_array_equal(out.numpy(), np.float32(2.5) * x + y)


@pytest.mark.parametrize("option", ["LLVM", "C"])
def test_renderers_kernels_run_on_the_cpu_device_like_the_emulator(
    option: str, rt: Any, lb: Any
) -> None:
    from fusegrad.runtime import run_linear

    dev = CPUDevice("CPU")
    if dict(dev.compiler_status())[option] != "ok":
        pytest.skip(f"{option} unavailable: {dict(dev.compiler_status())[option]}")
    renderer, _ = dev.select_compiler(option)
    cores, per = 4, 1000
    core, n = lb.special("core", cores), lb.var("n", 1, per)
    pa, po = lb.buf(0, dtypes.float32, cores * per), lb.buf(1, dtypes.float32, cores * per)
    r = lb.rng(n, 0)
    i = core * per + r
    x = lb.load(pa.index(i))
    prog = lb.linear(core, r, lb.store(po.index(i), x * x + core.cast(dtypes.float32)), lb.end(r))
    spec = rt.spec_for("sq_split", prog, src=renderer.render(prog, "sq_split"), device="CPU")
    a = np.random.default_rng(3).standard_normal(cores * per).astype(np.float32)
    try:
        prg = dev.load(spec)
        ba, bo = dev.allocator.alloc(a.nbytes), dev.allocator.alloc(a.nbytes)
        ba.view[:] = a.tobytes()
        dev.exec(prg, [ba, bo], [700], wait=True)
        got = np.frombuffer(bo.view, np.float32).copy()
    finally:
        dev.close()
    want = np.zeros_like(a)
    run_linear(prog, [a, want], {"n": 700})
    np.testing.assert_array_equal(got, want)
