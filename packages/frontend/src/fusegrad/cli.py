"""The ``fusegrad`` command: ``fusegrad devices``, ``fusegrad embed ...``, ``fusegrad bench``.

Each subcommand is a thin front for a module that also runs on its own:
``python -m fusegrad.runtime`` (devices) and ``python -m fusegrad.examples.embed`` (embed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fusegrad`` command line; returns the exit status."""
    args = _parser().parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
