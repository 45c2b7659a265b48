"""Benchmark of the engine's dispatch path (issue 9): what one small kernel costs end to end,
and how much a large elementwise kernel gains from the CPU device's cores.

1. **Per-kernel overhead**: ``x = (x + 1).realize()`` 1,000 times on a 1-element tensor, each
   step depending on the one before: graph build + schedule-cache hit + kernel launch, with a
   single wait at the end (``x.item()``). Also timed apart: graph build alone (``x + 1``),
   ``get_kernel_graph`` alone (a schedule-cache hit), and the same loop with a wait after every
   step. Target: <= 300 us per step.
2. **Multi-core speed-up**: a memory-bound (``a * b + c``) and a compute-bound elementwise
   kernel over 2^24 float32 elements (inputs already realized), timed in child processes with
   ``CPU_THREADS=1`` and with every core, wall time including the wait.
   The kernel is the same in both (the optimizer's THREAD split depends on the renderer's
   core count, not on ``CPU_THREADS``), so the ratio is the runtime's parallel speed-up.

Every number is the median over ``--repeats`` runs (default 5). ``--size`` changes the
elementwise size. Run with ``tools/dev bench dispatch``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

STEPS = 1000


def _median_per_step(fn: Callable[[], None], repeats: int, steps: int = STEPS) -> float:
    """Median over ``repeats`` of the time of ``fn()`` divided by ``steps``, in us."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) / steps * 1e6)
    return statistics.median(times)


def dispatch_overhead(repeats: int) -> dict[str, float]:
    """Per-step medians (us) of the 1-element dependent chain and of its parts."""
    from fusegrad import Tensor
    from fusegrad.codegen import get_kernel_graph
    from fusegrad.uop import UOp

    x = Tensor([0.0]).realize()
    for _ in range(3):  # compile the kernel, warm the schedule cache
        x = (x + 1).realize()
    x.item()

    def chain() -> None:
        nonlocal x
        for _ in range(STEPS):
            x = (x + 1).realize()
        x.item()

    def chain_waiting() -> None:
        nonlocal x
        for _ in range(STEPS):
            x = (x + 1).realize()
            x.item()

    def build() -> None:
        for _ in range(STEPS):
            _ = x + 1

    def schedule() -> None:
        sink = UOp.sink((x + 1).uop)
        for _ in range(STEPS):
            get_kernel_graph(sink)

    return {
        "chain (realize, one wait at the end)": _median_per_step(chain, repeats),
        "chain (wait after every step)": _median_per_step(chain_waiting, repeats),
        "graph build only (x + 1)": _median_per_step(build, repeats),
        "get_kernel_graph only (cache hit)": _median_per_step(schedule, repeats),
    }


WORKLOADS = {
    "a*b+c (memory-bound)": "a * b + c",
    "(a.sin()*b.exp()+c).sqrt() (compute-bound)": "(a.sin() * b.exp() + c).sqrt()",
}


def elementwise_time(size: int, repeats: int, expr: str = "a * b + c") -> dict[str, float]:
    """Median wall and device time (ms) of one elementwise kernel ``expr`` (over tensors
    ``a``, ``b``, ``c`` of ``size`` floats)."""
    import numpy as np
    from fusegrad import GlobalCounters, Tensor
    from fusegrad.engine import synchronize
    from fusegrad.runtime import Device

    rng = np.random.default_rng(0)
    a, b, c = (Tensor(rng.random(size, dtype=np.float32)).realize() for _ in range(3))
    run = eval(f"lambda a, b, c: ({expr}).realize()")  # the workload is this module's constant
    run(a, b, c)  # compile
    synchronize()
    walls, device = [], []
    for _ in range(repeats):
        GlobalCounters.reset()
        start = time.perf_counter()
        run(a, b, c)
        synchronize()
        walls.append((time.perf_counter() - start) * 1e3)
        device.append(GlobalCounters.time_sum_s * 1e3)
    threads = getattr(Device["CPU"], "threads", 1)
    return {"wall_ms": statistics.median(walls), "device_ms": statistics.median(device),
            "threads": threads}  # fmt: skip


def _child(threads: int, size: int, repeats: int, expr: str) -> dict[str, float]:
    env = dict(os.environ, CPU_THREADS=str(threads), DEBUG="0")
    code = (
        "import json, sys; sys.path.insert(0, 'tools/bench'); import dispatch; "
        f"print(json.dumps(dispatch.elementwise_time({size}, {repeats}, {expr!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Run both benchmarks and print labelled medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=1 << 24)
    args = parser.parse_args()

    print(f"dispatch overhead, 1-element tensor, {STEPS} dependent steps (median per step):")
    for label, us in dispatch_overhead(args.repeats).items():
        print(f"  {label:<40s} {us:9.1f} us")
    launch = dispatch_overhead_note()
    if launch:
        print(launch)

    for label, expr in WORKLOADS.items():
        print(f"elementwise {label} over {args.size:,} float32 (median of {args.repeats}):")
        one = _child(1, args.size, args.repeats, expr)
        many = _child(0, args.size, args.repeats, expr)
        for cores, r in (("1 core", one), (f"{int(many['threads'])} cores", many)):
            print(f"  {cores:<10s} wall {r['wall_ms']:8.2f} ms   device {r['device_ms']:8.2f} ms")
        print(f"  multi-core speed-up (wall)   {one['wall_ms'] / many['wall_ms']:5.2f}x")
        dev = one["device_ms"] / max(many["device_ms"], 1e-9)
        print(f"  multi-core speed-up (device) {dev:5.2f}x")


def dispatch_overhead_note() -> str:
    """A line about the machine the numbers come from."""
    return f"  (host: {os.cpu_count()} cores visible, python {sys.version.split()[0]})"


if __name__ == "__main__":
    main()


# -- TinyJit replay overhead (issue 11; appended by the TinyJit owner) ----------------------------

JIT_KERNELS = (8, 64)


def _jit_replay_us(kernels: int, repeats: int, steps: int) -> tuple[float, float]:
    """(host us per replay call, wall us per replay minus the kernels' device time, with a
    wait after every replay) for a capture of ``kernels`` dependent 1-element kernels."""
    import numpy as np
    from fusegrad import GlobalCounters, Tensor, TinyJit
    from fusegrad.engine import synchronize

    def chain(x: Tensor) -> Tensor:
        for _ in range(kernels):
            x = (x + 1).contiguous()
        return x.realize()

    jit = TinyJit(chain)
    x = Tensor(np.zeros(1, np.float32)).realize()
    for _ in range(3):
        jit(x)
    synchronize()
    assert jit.kernel_count == kernels, jit.kernel_count
    host, wall = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            jit(x)
        host.append((time.perf_counter() - start) / steps * 1e6)
        synchronize()
        GlobalCounters.reset()
        start = time.perf_counter()
        for _ in range(steps):
            jit(x)
            synchronize()
        elapsed = time.perf_counter() - start - GlobalCounters.time_sum_s
        wall.append(elapsed / steps * 1e6)
    return statistics.median(host), statistics.median(wall)


def jit_replay_overhead(repeats: int, steps: int = 200) -> dict[str, float]:
    """TinyJit replay cost split into a per-kernel part (the slope between captures of 8 and
    64 kernels) and a per-call part (argument checks, output buffers, the one submission),
    in us; the wall numbers wait after every replay and leave out the kernels' device time."""
    (h_lo, w_lo), (h_hi, w_hi) = (_jit_replay_us(k, repeats, steps) for k in JIT_KERNELS)
    span = JIT_KERNELS[1] - JIT_KERNELS[0]
    per_kernel_host, per_kernel_wall = (h_hi - h_lo) / span, (w_hi - w_lo) / span
    return {
        "per kernel, host (call returns)": per_kernel_host,
        "per kernel, wall minus device time": per_kernel_wall,
        "per call, host": h_lo - JIT_KERNELS[0] * per_kernel_host,
        "per call, wall minus device time": w_lo - JIT_KERNELS[0] * per_kernel_wall,
        "per kernel at 32 kernels/call, wall": per_kernel_wall + (w_lo - 8 * per_kernel_wall) / 32,
    }


if __name__ == "__main__":
    print("TinyJit replay of dependent 1-element kernels (median):")
    for _label, _us in jit_replay_overhead(5).items():
        print(f"  {_label:<40s} {_us:9.2f} us")
