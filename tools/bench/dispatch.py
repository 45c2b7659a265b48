"""Benchmark of the engine's dispatch path (issue 9): what one small kernel costs end to end,
what a TinyJit replay costs per kernel, and how much a large elementwise kernel gains from the
CPU device's cores.

1. **Per-kernel overhead**: ``x = (x + 1).realize()`` 1,000 times on a 1-element tensor, each
   step depending on the one before: graph build + schedule-cache hit + kernel launch, with a
   single wait at the end (``x.item()``). Also timed apart: the same loop with a wait after
   every step, the same loop while a realized tensor that needs grad is alive (autograd
   remembers its value, as in a training loop: the fast path must still run), graph build
   alone (``x + 1``), ``get_kernel_graph`` alone (a schedule-cache hit), ``lookup_schedule``
   alone (the same graph again: its key is remembered on the nodes) and with the graph
   built anew (``x + 1`` each time: a real step's lookup),
   ``run_plan`` alone (encoding and submitting the kernel graph's launch plan), and what
   ``realize`` does on a cache hit: the key (for one target, ``target_key``: no SINK and
   no ``lookup_schedule``, see ``engine.kernels._hit``) + the template's launch plan run
   over result buffers (recycled: see ``engine.plan.result_buffers``); the same for a
   schedule of 16 dependent kernels, and the cost per kernel of a hit (the slope between the
   1- and 16-kernel schedules: what a template hit adds per kernel, as the TinyJit line's
   slope is for a replay). PyTorch eager's
   ``x = x + 1`` on a 1-element tensor is timed in the same run for scale. Target (issue 20): <= 50 us per
   dependent step, <= 5 us per kernel for cache hits and JIT replay. Run in child processes
   once per ring kind: the compiled ring (``HCQ_COMPILED=1``, the default) and the Python
   ring (``HCQ_COMPILED=0``, the reference).
2. **TinyJit replay**: captures of 8 and 64 dependent 1-element kernels replayed; the slope is
   the cost per kernel (host: until the call returns; wall: waiting after every replay, minus
   the kernels' device time), the intercept the fixed cost per call. Target: a few us per
   kernel.
3. **Multi-core speed-up**: a memory-bound (``a * b + c``) and a compute-bound elementwise
   kernel over 2^24 float32 elements (inputs already realized), timed in child processes with
   ``CPU_THREADS=1`` and with every core, wall time including the wait. The kernel is the
   same in both (the optimizer's THREAD split depends on the renderer's core count, not on
   ``CPU_THREADS``), so the ratio is the runtime's parallel speed-up.

``--profile N`` runs the dependent chain and the cache-hit loop under cProfile instead and prints
the N functions with the most time of their own (profiled times are inflated: read them as
shares, not as microseconds).

Every time is a median over ``--repeats`` runs (default 5), with the best in parentheses. On a
shared machine wall time includes waiting for a core: each line also gives the CPU time of
the main thread and of the whole process (every thread), which is what wall time would be on
an idle machine. The load average is printed before and after. Run with
``tools/dev bench dispatch``; ``--size`` changes the elementwise size, ``--only`` picks parts.
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
Timing = dict[str, float]


def _timed(fn: Callable[[], None], repeats: int, steps: int) -> Timing:
    """Per-step medians and bests (us) of wall, main-thread CPU and process CPU time."""
    rows = []
    for _ in range(repeats):
        wall, thread, proc = time.perf_counter(), time.thread_time(), time.process_time()
        fn()
        rows.append(
            (
                (time.perf_counter() - wall) / steps * 1e6,
                (time.thread_time() - thread) / steps * 1e6,
                (time.process_time() - proc) / steps * 1e6,
            )
        )
    out: Timing = {}
    for name, column in zip(("wall", "thread", "process"), zip(*rows, strict=True), strict=True):
        out[name], out[f"{name}_best"] = statistics.median(column), min(column)
    return out


def _repeat(fn: Callable[[], object], end: Callable[[], None] = lambda: None) -> Callable[[], None]:
    def run() -> None:
        for _ in range(STEPS):
            fn()
        end()

    return run


def dispatch_overhead(repeats: int) -> dict[str, Timing]:
    """Per-step times of the 1-element dependent chain and of its parts."""
    from fusegrad import Tensor
    from fusegrad.codegen import get_kernel_graph
    from fusegrad.codegen.schedule import lookup_schedule
    from fusegrad.engine.kernels import schedule as realize_schedule
    from fusegrad.engine.launch import synchronize
    from fusegrad.engine.plan import bound_values, calls_plan, run_plan
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

    def chain_training() -> None:
        # a realized tensor that needs grad is alive (its value remembered for autograd, as
        # in every training loop): the fast path still runs for graphs that don't hold it
        nonlocal x
        w = Tensor([1.0, 2.0], requires_grad=True)
        kept = (w * 2).realize()
        for _ in range(STEPS):
            x = (x + 1).realize()
        x.item()
        del kept

    sink = UOp.sink((x + 1).uop)
    graph = get_kernel_graph(sink)
    plan, uops = calls_plan(graph.calls, graph.buffers)
    values = bound_values(graph.calls)
    schedule = _repeat(lambda: get_kernel_graph(sink))
    launch = _repeat(lambda: run_plan(plan, uops, values), synchronize)  # the same buffers
    hit = _repeat(lambda: realize_schedule(list(sink.src)), synchronize)
    lookup = _repeat(lambda: lookup_schedule(sink))
    fresh_lookup = _repeat(lambda: lookup_schedule(UOp.sink((x + 1).uop)))

    hits = {k: _timed(_wide_hit(x, k), repeats, STEPS) for k in HIT_KERNELS}
    lo, hi = HIT_KERNELS
    slope = {
        c: (hits[hi][c] - hits[lo][c]) / (hi - lo)
        for c in ("wall", "wall_best", "thread", "thread_best", "process", "process_best")
    }
    return {
        "chain (realize, one wait at the end)": _timed(chain, repeats, STEPS),
        "chain (wait after every step)": _timed(chain_waiting, repeats, STEPS),
        "chain, a grad value remembered": _timed(chain_training, repeats, STEPS),
        "graph build only (x + 1)": _timed(build, repeats, STEPS),
        "get_kernel_graph only (cache hit)": _timed(schedule, repeats, STEPS),
        "lookup_schedule only (cache hit)": _timed(lookup, repeats, STEPS),
        "x + 1 and its lookup (new nodes)": _timed(fresh_lookup, repeats, STEPS),
        "run_plan only (encode + submit)": _timed(launch, repeats, STEPS),
        "cache hit: lookup + template plan launch": _timed(hit, repeats, STEPS),
        f"cache hit of {hi} kernels (per call)": hits[hi],
        f"cache hit, per kernel ({lo}->{hi} slope)": slope,
    }


HIT_KERNELS = (1, 16)


def _wide_hit(x: object, kernels: int) -> Callable[[], None]:
    """STEPS cache hits of one schedule of ``kernels`` dependent 1-element kernels over ``x``
    (the same graph each time, as the one-kernel hit line: key remembered, template plan run
    over recycled result buffers)."""
    from fusegrad import Tensor
    from fusegrad.engine.kernels import schedule as realize_schedule
    from fusegrad.engine.launch import synchronize
    from fusegrad.uop import UOp

    assert isinstance(x, Tensor)
    y = x
    for _ in range(kernels):
        y = (y + 1).contiguous()
    sink = UOp.sink(y.uop)
    for _ in range(2):  # the miss (compiles), then the template's plan is built
        realize_schedule(list(sink.src))
    synchronize()
    return _repeat(lambda: realize_schedule(list(sink.src)), synchronize)


def torch_eager(repeats: int) -> dict[str, Timing]:
    """PyTorch eager on the same 1-element dependent chain (its per-op cost), for scale."""
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    x = torch.zeros(1)

    def chain() -> None:
        nonlocal x
        for _ in range(STEPS):
            x = x + 1
        x.item()

    chain()
    return {"torch eager x = x + 1 (per op)": _timed(chain, repeats, STEPS)}


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


def _child(call: str, **env: str) -> object:
    """Run ``dispatch.<call>`` in a fresh interpreter with ``env`` set; its JSON result."""
    full = dict(os.environ, DEBUG="0", **env)
    code = (
        "import json, sys; sys.path.insert(0, 'tools/bench'); import dispatch; "
        f"print(json.dumps(dispatch.{call}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


RINGS = {"compiled ring": "1", "Python ring": "0"}


def _print_overhead(repeats: int) -> None:
    print(f"dispatch overhead, 1-element tensor, {STEPS} dependent steps, us per step:")
    print(f"  {'':<40s} {'wall':>16s} {'main thread CPU':>16s} {'process CPU':>16s}")
    for ring, flag in RINGS.items():
        print(f"  [{ring}, HCQ_COMPILED={flag}]")
        result = _child(f"dispatch_overhead({repeats})", HCQ_COMPILED=flag)
        assert isinstance(result, dict)
        if flag == "1":
            torch = _child(f"torch_eager({repeats})")
            assert isinstance(torch, dict)
            result.update(torch)
        for label, t in result.items():
            cells = [f"{t[k]:8.1f} ({t[k + '_best']:5.1f})" for k in ("wall", "thread", "process")]
            print(f"  {label:<40s} {' '.join(cells)}")


def profile_dispatch(top: int) -> str:
    """cProfile of 1,000 dependent realizes and of 1,000 cache hits (lookup + template plan
    launch): the ``top`` functions by own time, as text."""
    import cProfile
    import io
    import pstats

    from fusegrad import Tensor
    from fusegrad.engine.kernels import schedule as realize_schedule
    from fusegrad.engine.launch import synchronize
    from fusegrad.uop import UOp

    x = Tensor([0.0]).realize()
    for _ in range(3):
        x = (x + 1).realize()
    x.item()
    sink = UOp.sink((x + 1).uop)
    out = io.StringIO()

    def chain() -> None:
        nonlocal x
        for _ in range(STEPS):
            x = (x + 1).realize()
        x.item()

    loops = {
        "dependent chain": chain,
        "cache hit": _repeat(lambda: realize_schedule(list(sink.src)), synchronize),
    }
    for label, loop in loops.items():
        profiler = cProfile.Profile()
        profiler.runcall(loop)
        print(f"-- {label}: {STEPS} steps, top {top} by own time", file=out)
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def _print_jit(repeats: int) -> None:
    print("TinyJit replay of dependent 1-element kernels (median, us):")
    for ring, flag in RINGS.items():
        print(f"  [{ring}, HCQ_COMPILED={flag}]")
        result = _child(f"jit_replay_overhead({repeats})", HCQ_COMPILED=flag)
        assert isinstance(result, dict)
        for label, us in result.items():
            print(f"  {label:<40s} {us:9.2f}")


def _print_multicore(repeats: int, size: int) -> None:
    for label, expr in WORKLOADS.items():
        print(f"elementwise {label} over {size:,} float32 (median of {repeats}):")
        call = f"elementwise_time({size}, {repeats}, {expr!r})"
        one, many = _child(call, CPU_THREADS="1"), _child(call, CPU_THREADS="0")
        assert isinstance(one, dict) and isinstance(many, dict)
        for cores, r in (("1 core", one), (f"{int(many['threads'])} cores", many)):
            print(f"  {cores:<10s} wall {r['wall_ms']:8.2f} ms   device {r['device_ms']:8.2f} ms")
        print(f"  multi-core speed-up (wall)   {one['wall_ms'] / many['wall_ms']:5.2f}x")
        dev = one["device_ms"] / max(many["device_ms"], 1e-9)
        print(f"  multi-core speed-up (device) {dev:5.2f}x")


def main() -> None:
    """Run the benchmarks and print labelled medians."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=1 << 24)
    parser.add_argument("--only", choices=["overhead", "jit", "multicore"], default=None)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.profile:
        text = _child(f"profile_dispatch({args.profile})")
        print(text)
        return
    print(f"host: {os.cpu_count()} cores visible, python {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    parts = {
        "overhead": lambda: _print_overhead(args.repeats),
        "jit": lambda: _print_jit(args.repeats),
        "multicore": lambda: _print_multicore(args.repeats, args.size),
    }
    for name, run in parts.items():
        if args.only in (None, name):
            run()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
