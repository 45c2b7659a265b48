"""The CPU renderers side by side on Tensor code: throughput per renderer next to NumPy, in
the same run, and the cold compile time of each workload's kernels.

    .venv/bin/python tools/bench/renderers.py [--repeats 10] [--only elementwise reduction]

Workloads (float32): ``elementwise`` relu(a * b + c) over 4M elements (GB/s of the bytes read
and written), ``reduction`` a sum over 16M elements (GB/s read), ``softmax`` over the rows of
a (2048, 1024) matrix (GB/s read + written), ``matmul`` 1024 x 1024 x 1024 (GFLOP/s).

Each workload runs once untimed on every renderer (compiling its kernels), then the
renderers take turns, ``--repeats`` rounds, each timing one ``realize`` (the kernels only:
inputs are realized before) — interleaved, so a slow phase of this shared machine hits every
column alike; the median is printed. ``compile`` is the mean over the workload's kernels
of the CPU time to render and compile one (no compile cache, the x86 renderer's encoding
caches cleared before each; median of 3; lowered once, outside the timing).

``COLUMNS`` is the table of renderers: a column is a device and its compiler option (the
``DEV=CPU:X86`` spelling); another renderer joins with one line.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Column:
    """A renderer to benchmark: ``device`` with compiler option ``compiler``."""

    device: str
    compiler: str


COLUMNS: dict[str, Column] = {
    "LLVM": Column("CPU", "LLVM"),
    "C": Column("CPU", "C"),
    "X86": Column("CPU", "X86"),
    "LVP": Column("CPU", "LVP"),  # Mesa NIR run by llvmpipe (fusegrad-renderers[nir])
}


@dataclass(frozen=True)
class Workload:
    """Inputs (NumPy), the computation (for Tensors and for NumPy), and the work done:
    ``amount`` bytes or flops per run, in ``unit``."""

    inputs: Callable[[np.random.Generator], list[np.ndarray]]
    tensor: Callable[..., object]
    numpy: Callable[..., object]
    amount: float
    unit: str


def _softmax_np(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)  # type: ignore[no-any-return]


N_EW, N_RED, SM, MM = 4 << 20, 16 << 20, (2048, 1024), 1024
WORKLOADS: dict[str, Workload] = {
    "elementwise": Workload(
        lambda rs: [rs.standard_normal(N_EW, dtype=np.float32) for _ in range(3)],
        lambda a, b, c: (a * b + c).relu(),
        lambda a, b, c: np.maximum(a * b + c, 0),
        16.0 * N_EW,
        "GB/s",
    ),
    "reduction": Workload(
        lambda rs: [rs.standard_normal(N_RED, dtype=np.float32)],
        lambda a: a.sum(),
        lambda a: a.sum(),
        4.0 * N_RED,
        "GB/s",
    ),
    "softmax": Workload(
        lambda rs: [rs.standard_normal(SM, dtype=np.float32)],
        lambda a: a.softmax(-1),
        _softmax_np,
        8.0 * SM[0] * SM[1],
        "GB/s",
    ),
    "matmul": Workload(
        lambda rs: [rs.standard_normal((MM, MM), dtype=np.float32) for _ in range(2)],
        lambda a, b: a @ b,
        lambda a, b: a @ b,
        2.0 * MM**3,
        "GFLOP/s",
    ),
}


def _select(column: Column) -> str | None:
    """Make ``column``'s renderer the current one; None, or why it can't run here."""
    from fusegrad.runtime import Device

    dev = Device[column.device]
    status = dict(dev.compiler_status()).get(column.compiler)
    if status != "ok":
        return status or f"{column.device} has no compiler {column.compiler}"
    dev.select_compiler(column.compiler)
    return None


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the C compiler)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _cpu_timed(fn: Callable[[], object]) -> float:
    """CPU seconds spent in ``fn``, the C compiler's process included (on a shared machine
    wall time also counts waiting for a core)."""
    start = _cpu_seconds()
    fn()
    return _cpu_seconds() - start


def _cold_start(column: Column) -> Callable[[], None]:
    """What makes the next compile cold: the x86 renderer caches instruction encodings
    across kernels (the other compilers' caches are off: ``compile``, not
    ``compile_cached``)."""
    if column.compiler != "X86":
        return lambda: None
    from fusegrad.renderer.x86 import clear_caches

    return clear_caches


def compile_ms(column: Column, build: Callable[[], object], repeats: int = 3) -> tuple[int, float]:
    """(kernels, mean over the workload's kernels of the median CPU ms to render + compile
    one with no cache). The lowering runs once, outside the timing; the median of
    ``repeats`` drops a first run's one-time setup."""
    from fusegrad.codegen import to_program
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.runtime import Device
    from fusegrad.uop import UOp

    dev = Device[column.device]
    cold = _cold_start(column)
    out = build()
    graph = get_kernel_graph(UOp.sink(out.uop), cache=None)  # type: ignore[attr-defined]
    specs = [to_program(k.src[0], dev.renderer) for k in graph.kernels]
    times = []
    for spec in specs:
        uops = list(spec.uops)

        def once(u: list[UOp] = uops, name: str = spec.name) -> None:
            cold()
            dev.compiler.compile(dev.renderer.render(u, name))

        times.append(statistics.median(_cpu_timed(once) for _ in range(repeats)))
    return len(specs), 1000 * statistics.mean(times)


def bench(name: str, work: Workload, repeats: int) -> None:
    """Print one line per column and one for NumPy."""
    from fusegrad.runtime import Device
    from fusegrad.tensor import Tensor

    arrays = work.inputs(np.random.default_rng(0))
    runnable: dict[str, Callable[[], object]] = {}
    notes: dict[str, str] = {}
    for label, column in COLUMNS.items():
        reason = _select(column)
        if reason is not None:
            notes[label] = f"skipped: {reason}"
            continue
        tensors = [Tensor(a, device=column.device).realize() for a in arrays]
        dev = Device[column.device]

        def run(t: list[Tensor] = tensors, d: object = dev, c: Column = column) -> None:
            _select(c)
            work.tensor(*t).realize()  # type: ignore[attr-defined]
            d.synchronize()  # type: ignore[attr-defined]

        first = _timed(run)
        kernels, cold = compile_ms(column, lambda t=tensors: work.tensor(*t))
        notes[label] = (
            f"first call {first * 1000:8.1f} ms, {kernels} kernels, compile {cold:7.2f} ms/kernel"
        )
        runnable[label] = run
    runnable["NumPy"] = lambda: work.numpy(*arrays)
    runnable["NumPy"]()
    samples: dict[str, list[float]] = {k: [] for k in runnable}
    for _ in range(repeats):
        for label, fn in runnable.items():
            samples[label].append(_timed(fn))
    scale = 1e9
    base = statistics.median(samples["LLVM"]) if "LLVM" in samples else None
    for label in [*COLUMNS, "NumPy"]:
        if label not in samples:
            print(f"{name:12s} {label:6s} {notes.get(label, '')}")
            continue
        t = statistics.median(samples[label])
        rate = work.amount / t / scale
        vs = f"  {base / t:5.2f}x LLVM" if base else ""
        print(
            f"{name:12s} {label:6s} {t * 1000:9.3f} ms {rate:8.2f} {work.unit}{vs}  {notes.get(label, '')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    args = parser.parse_args()
    for name in args.only:
        bench(name, WORKLOADS[name], args.repeats)


if __name__ == "__main__":
    main()
