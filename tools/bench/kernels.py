"""Shared pieces of the kernel benchmarks (matmul.py, conv.py): hand-built kernel ASTs, a
CPU-device timer for BEAM, and a runner that prints GFLOP/s next to NumPy's."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from fusegrad.codegen import KernelInfo, ProgramSpec, beam_search, to_program
from fusegrad.codegen.opt import Opt, hand_coded_optimizations
from fusegrad.runtime import Device
from fusegrad.uop import AxisType, Ops, UOp, dtypes

#: alignment of the benchmarks' host arrays: the runtime's allocator gives 64 bytes (a cache
#: line), NumPy only 16, and a kernel reading 64-byte rows (matmul panels) from a misaligned
#: array touches two lines per row (measured 2x slower at 1024)
ALIGN = 64


def aligned(arr: np.ndarray) -> np.ndarray:
    """A copy of ``arr`` at an ``ALIGN``-byte aligned address."""
    raw = np.empty(arr.nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    out = raw[start : start + arr.nbytes].view(arr.dtype).reshape(arr.shape)
    out[...] = arr
    return out


class HostBuffer:
    """A NumPy array (``ALIGN``-byte aligned, see ``aligned``) as a CPU-device buffer."""

    def __init__(self, arr: np.ndarray) -> None:
        if arr.ctypes.data % ALIGN:
            raise ValueError(f"HostBuffer: the array is not {ALIGN}-byte aligned (use aligned())")
        self.arr = arr
        self.address = arr.ctypes.data


def matmul_ast(n: int) -> UOp:
    """C[n, n] = A[n, n] @ B[n, n] in float32."""
    return batched_matmul_ast(1, n, n, n, name=f"matmul{n}")


def batched_matmul_ast(
    batch: int, m: int, k: int, n: int, b_transposed: bool = False, name: str = ""
) -> UOp:
    """C[batch, m, n] = A[batch, m, k] @ B[batch, k, n] in float32, row-major; with
    ``b_transposed`` B is stored as [batch, n, k] (``x @ W.T`` of a Linear layer, ``q @ k.T``
    of attention)."""
    c = UOp.param(0, dtypes.float32.ptr(batch * m * n))
    a = UOp.param(1, dtypes.float32.ptr(batch * m * k))
    b = UOp.param(2, dtypes.float32.ptr(batch * k * n))
    h, i, j = UOp.range(batch, 0), UOp.range(m, 1), UOp.range(n, 2)
    r = UOp.range(k, 3, AxisType.REDUCE)
    b_at = (h * n + j) * k + r if b_transposed else (h * k + r) * n + j
    prod = a.index((h * m + i) * k + r).load() * b.index(b_at).load()
    label = name or f"bmm{batch}_{m}_{k}_{n}{'t' if b_transposed else ''}"
    out = c.index((h * m + i) * n + j).store(prod.reduce(r, arg=Ops.ADD))
    return UOp.sink(out.end(h, i, j), arg=KernelInfo(label))


def conv_ast(batch: int, cin: int, cout: int, hw: int) -> UOp:
    """A 3x3 valid convolution, NCHW, weights [cout, cin, 3, 3], float32."""
    oh = hw - 2
    out = UOp.param(0, dtypes.float32.ptr(batch * cout * oh * oh))
    x = UOp.param(1, dtypes.float32.ptr(batch * cin * hw * hw))
    w = UOp.param(2, dtypes.float32.ptr(cout * cin * 9))
    nb, co, y, xx = (UOp.range(s, a) for a, s in enumerate((batch, cout, oh, oh)))
    ci, ky, kx = (UOp.range(s, a, AxisType.REDUCE) for a, s in ((4, cin), (5, 3), (6, 3)))
    pix = x.index(((nb * cin + ci) * hw + y + ky) * hw + xx + kx).load()
    tap = w.index((co * cin + ci) * 9 + ky * 3 + kx).load()
    val = (pix * tap).reduce(ci, ky, kx, arg=Ops.ADD)
    dst = ((nb * cout + co) * oh + y) * oh + xx
    return UOp.sink(out.index(dst).store(val).end(nb, co, y, xx), arg=KernelInfo("conv3x3"))


class CPUTimer:
    """Times a ProgramSpec on the runtime's CPU device: best of ``runs`` (one run when the
    first is already ``cutoff`` x slower than the best seen)."""

    def __init__(self, runs: int = 3, cutoff: float = 2.0) -> None:
        self.dev = Device["CPU"]
        self.runs, self.cutoff = runs, cutoff
        self.best = float("inf")
        self.calls = 0

    def load(self, spec: ProgramSpec) -> Any:
        # TODO(#6): re-render under the spec's name until to_program passes it everywhere
        src = self.dev.renderer.render(list(spec.uops), spec.name)
        return self.dev.load(dataclasses.replace(spec, src=src))

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = float("inf")
    ) -> float:
        self.calls += 1
        prg = self.load(spec)
        rs = np.random.default_rng(0)
        bufs = [HostBuffer(aligned(rs.random(b.size, np.float32))) for b in spec.buffers]
        gs, ls = spec.launch_dims({})
        times = []
        for _ in range(self.runs):
            start = time.perf_counter()
            self.dev.exec(prg, bufs, [], gs, ls, wait=True)
            times.append(time.perf_counter() - start)
            if times[0] > self.cutoff * self.best:
                break
        self.best = min(self.best, *times)
        return min(times)


def run_kernel(spec: ProgramSpec, arrays: list[np.ndarray], repeats: int) -> list[float]:
    """Seconds of each of ``repeats`` runs of ``spec`` over ``arrays`` (outputs written)."""
    timer = CPUTimer(runs=1)
    prg = timer.load(spec)
    bufs = [HostBuffer(a) for a in arrays]
    gs, ls = spec.launch_dims({})
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        timer.dev.exec(prg, bufs, [], gs, ls, wait=True)
        times.append(time.perf_counter() - start)
    return times


def timings(fn: Callable[[], object], repeats: int) -> list[float]:
    """Seconds of each of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def load_average() -> str:
    """The 1/5/15-minute load averages (the machine is shared: read numbers next to it)."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def _numpy_one_thread(reference: Callable[[], object], repeats: int) -> list[float] | None:
    """``timings`` of ``reference`` with BLAS limited to one thread (None without
    threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    with threadpool_limits(limits=1):
        reference()
        return timings(reference, repeats)


def with_opts(ast: UOp, opts: list[Opt]) -> UOp:
    """``ast`` asking the pipeline for exactly ``opts``."""
    info = ast.arg
    assert isinstance(info, KernelInfo)
    return ast.replace(arg=KernelInfo(info.name, opts_to_apply=tuple(opts)))


def bench(
    label: str,
    ast: UOp,
    arrays: list[np.ndarray],
    reference: Callable[[], np.ndarray],
    flops: int,
    beam: int,
    repeats: int,
) -> None:
    """Print GFLOP/s (median of ``repeats`` runs, best in parentheses) of NumPy, the
    heuristics and (``beam`` > 0) BEAM for one kernel, as a ratio of NumPy's median, checking
    the kernel's output against NumPy's; the load average before and after."""
    renderer = Device["CPU"].renderer
    print(f"{label}: load average {load_average()}")
    want = reference()
    rows = [("numpy", timings(reference, repeats), "")]
    single = _numpy_one_thread(reference, repeats)
    if single is not None:
        rows.append(("numpy 1T", single, "(one BLAS thread: context on a loaded machine)"))
    variants = {"heuristics": hand_coded_optimizations(ast, renderer)}
    if beam > 0:
        start = time.perf_counter()
        variants[f"BEAM={beam}"] = beam_search(ast, renderer, beam, Device["CPU"].timer)
        search_s = time.perf_counter() - start
    for name, opts in variants.items():
        start = time.perf_counter()
        spec = to_program(with_opts(ast, opts), renderer)
        lower_s = time.perf_counter() - start
        arrays[0][:] = 0
        secs = run_kernel(spec, arrays, repeats)
        err = float(np.abs(arrays[0].reshape(want.shape) - want).max())
        note = f"max err {err:.1e}  lower {lower_s:.2f}s  opts {opts}"
        if name.startswith("BEAM"):
            note = f"search {search_s:.0f}s  " + note
        rows.append((name, secs, note))
    np_gflops = flops / float(np.median(rows[0][1])) / 1e9
    for name, secs, note in rows:
        gflops = flops / float(np.median(secs)) / 1e9
        best = flops / min(secs) / 1e9
        print(
            f"{label:18s} {name:11s} {gflops:8.1f} GFLOP/s ({best:6.1f} best) "
            f"{gflops / np_gflops:6.1%} of numpy  {note}"
        )
    print(f"{label}: load average {load_average()}")
