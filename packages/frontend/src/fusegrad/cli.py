"""The ``fusegrad`` command: ``fusegrad devices``, ``fusegrad embed ...``, ``fusegrad bench``,
``fusegrad profile script.py ...`` (runs the script with ``PROFILE=1``, then prints its top
kernels by device time from the trace).

Each subcommand is a thin front for a module that also runs on its own:
``python -m fusegrad.runtime`` (devices) and ``python -m fusegrad.examples.embed`` (embed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _devices(args: argparse.Namespace) -> int:
    from fusegrad.runtime import device_report

    print("\n".join(device_report()))
    return 0


def _embed(args: argparse.Namespace) -> int:
    from fusegrad.examples.embed import main as embed_main

    return embed_main(args.sentences)


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    fn()  # the first call compiles; it is not timed
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _bench(args: argparse.Namespace) -> int:
    import numpy as np

    from fusegrad.tensor import Tensor

    n = args.size
    a_np = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b_np = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    a, b = Tensor(a_np).realize(), Tensor(b_np).realize()
    flops = 2 * n**3
    ours = _median_seconds(lambda: (a @ b).realize().numpy(), args.repeats)
    ref = _median_seconds(lambda: a_np @ b_np, args.repeats)
    print(f"matmul {n}x{n} fp32: fusegrad {flops / ours * 1e-9:8.1f} GFLOP/s   "
          f"numpy {flops / ref * 1e-9:8.1f} GFLOP/s   ratio {ref / ours:.2f}")  # fmt: skip
    return 0


def kernel_table(trace: dict[str, Any], top: int = 20) -> list[str]:
    """The top-kernels table of a PROFILE trace: per kernel name its launches, total device
    time, GFLOP/s and GB/s (over its total time) and share of all kernel time."""
    totals: dict[str, list[float]] = {}  # name -> [launches, us, ops, bytes]
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            row = totals.setdefault(e["name"], [0, 0.0, 0.0, 0.0])
            args = e.get("args", {})
            row[0] += 1
            row[1] += float(e["dur"])
            row[2] += float(args.get("ops", 0))
            row[3] += float(args.get("mem", 0))
    if not totals:
        return ["no kernel launches in the trace"]
    every = sum(r[1] for r in totals.values())
    lines = [
        f"{'kernel':<32s} {'launches':>8s} {'time':>12s} {'GFLOP/s':>9s} {'GB/s':>8s} {'share':>6s}"
    ]
    for name, (n, us, ops, mem) in sorted(totals.items(), key=lambda kv: -kv[1][1])[:top]:
        sec = us * 1e-6
        gflops, gbs = (ops / sec * 1e-9, mem / sec * 1e-9) if sec > 0 else (0.0, 0.0)
        lines.append(
            f"{name:<32s} {int(n):8d} {us:10.1f}us {gflops:9.2f} {gbs:8.2f} {us / every:6.1%}"
        )
    lines.append(f"{len(totals)} kernels, {every:.1f} us of device time")
    return lines


def _profile(args: argparse.Namespace) -> int:
    script = Path(args.script)
    if not script.is_file():
        print(f"fusegrad profile: no script {script}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(tempfile.gettempdir()) / "fusegrad_trace.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "PROFILE": "1", "PROFILE_PATH": str(out)}
    status = subprocess.run([sys.executable, str(script), *args.args], env=env, check=False)
    if not out.is_file():
        print(f"fusegrad profile: {script} wrote no trace (status {status.returncode})")
        return status.returncode or 1
    print("\n".join(kernel_table(json.loads(out.read_text()), args.top)))
    print(f"trace: {out} (open in https://ui.perfetto.dev)")
    return status.returncode


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fusegrad", description="fusegrad command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("devices", help="list devices and renderers").set_defaults(run=_devices)
    embed = sub.add_parser("embed", help="sentence embeddings with MiniLM")
    embed.add_argument("sentences", nargs="+", help="sentences to embed")
    embed.set_defaults(run=_embed)
    bench = sub.add_parser("bench", help="matmul GFLOP/s next to NumPy in the same run")
    bench.add_argument("--size", type=int, default=512, help="matrix size (default 512)")
    bench.add_argument("--repeats", type=int, default=5, help="timed runs (default 5)")
    bench.set_defaults(run=_bench)
    profile = sub.add_parser("profile", help="run a script with PROFILE=1, print top kernels")
    profile.add_argument("script", help="the Python script to run")
    profile.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    profile.add_argument("--top", type=int, default=20, help="kernels listed (default 20)")
    profile.add_argument("--out", help="where the trace goes (default: the temp folder)")
    profile.set_defaults(run=_profile)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fusegrad`` command line; returns the exit status."""
    args = _parser().parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
