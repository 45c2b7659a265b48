"""What VIZ's and PROFILE's hooks cost when they are off, against the dispatch time.

The hooks on the dispatch path are ``profiler.host_span`` (returns a shared no-op object
when ``PROFILE`` is off) and the ``if _TRACE:`` tests of ``graph_rewrite``, ``walk.rebuild``,
the lowering loop, the scheduler loop and ``render`` (one falsy-list test each while no VIZ
trace is active). This benchmark

1. times one dispatch step, ``x = (x + 1).realize()`` on a 1-element tensor (a schedule-cache
   hit and one launch), median per step over 1,000 steps, and a cache miss (schedule, lower,
   compile a new kernel: ``(x * k).realize()`` with a new constant ``k`` each time);
2. counts, with ``sys.setprofile``, how often each hook site runs per step (hit and miss);
3. times each hook in its off state (a million calls, median of 5);

and prints the hooks' share of the step: ``count * cost / step``. The target is < 1%.
Run with ``.venv/bin/python tools/bench/tracing.py`` (``--steps``, ``--repeats``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

HOOKED = {
    "host_span": "host_span",
    "graph_rewrite": "if _TRACE",
    "rebuild": "if _TRACE",
    "lower": "if _TRACE",
    "build_template": "if _TRACE",
    "render": "if _TRACE",
}


def _median_step(step: Callable[[], Any], steps: int, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        runs.append((time.perf_counter() - start) / steps)
    return statistics.median(runs)


def _count_hooks(step: Callable[[], Any], steps: int) -> dict[str, float]:
    counts: Counter[str] = Counter()

    def prof(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_name in HOOKED:
            mod = frame.f_globals.get("__name__", "")
            if mod.startswith("fusegrad."):
                counts[frame.f_code.co_name] += 1

    sys.setprofile(prof)
    try:
        for _ in range(steps):
            step()
    finally:
        sys.setprofile(None)
    return {k: v / steps for k, v in counts.items()}


def _hook_costs(repeats: int) -> dict[str, float]:
    from fusegrad.runtime.profiler import host_span
    from fusegrad.uop.viztrace import ACTIVE

    assert not ACTIVE, "run without VIZ/TRACK_MATCH_STATS"
    n = 1_000_000

    def span() -> None:
        with host_span("launch"):
            pass

    trace = ACTIVE

    def check() -> None:
        if trace:
            pass

    empty = statistics.median(timeit.repeat(lambda: None, number=n, repeat=repeats)) / n
    cost = {
        "host_span": statistics.median(timeit.repeat(span, number=n, repeat=repeats)) / n,
        "if _TRACE": statistics.median(timeit.repeat(check, number=n, repeat=repeats)) / n,
    }
    return {k: max(0.0, v - empty) for k, v in cost.items()}


def main(argv: list[str] | None = None) -> int:
    """Print the hooks' share of a dispatch step (hit and miss)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000, help="dispatch steps per run")
    parser.add_argument("--repeats", type=int, default=5, help="runs (median)")
    args = parser.parse_args(argv)

    from fusegrad import Tensor

    xs, ks = [Tensor([0.0]).realize()], [1.0]

    def hit() -> None:
        xs[0] = (xs[0] + 1).realize()

    def miss() -> None:
        ks[0] += 1.0  # a new constant: a new kernel to schedule, lower and compile
        xs[0] = (xs[0] * ks[0]).realize()

    hit()
    step_hit = _median_step(hit, args.steps, args.repeats)
    step_miss = _median_step(miss, max(5, args.steps // 100), args.repeats)
    costs = _hook_costs(args.repeats)
    print(f"dispatch step: hit {step_hit * 1e6:.2f} us, miss (schedule+lower+compile) "
          f"{step_miss * 1e6:.1f} us")  # fmt: skip
    for label, step, seconds in (("hit", hit, step_hit), ("miss", miss, step_miss)):
        counts = _count_hooks(step, 20)
        total = sum(c * costs[HOOKED[name]] for name, c in counts.items())
        detail = ", ".join(f"{name} x{c:g}" for name, c in sorted(counts.items()))
        print(f"  {label}: hooks per step {detail or 'none'}; off cost {total * 1e9:.1f} ns "
              f"= {total / seconds:.4%} of the step")  # fmt: skip
    print("  hook cost when off: " + ", ".join(f"{k} {v * 1e9:.1f} ns" for k, v in costs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
