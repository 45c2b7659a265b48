"""Benchmark the symbolic simplifier: expressions simplified per second on a fixed corpus.

    .venv/bin/python tools/bench/symbolic.py [--repeat 3]

The corpus is fixed: index expressions of the shapes codegen makes (views, reshapes, pads,
upcasts) plus 500 fuzzer expressions (seed 0). Every round rebuilds the expressions from
scratch with fresh Variables (renamed per round), so no cached result (bounds, sort keys,
simplified forms) from an earlier round is reused. Times are CPU time of this process
(``time.process_time``), so other load on the machine disturbs them less.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fusegrad.uop import UOp, graph_rewrite, sym

ROOT = Path(__file__).resolve().parents[2]


def _index_corpus(round_id: int) -> list[UOp]:
    """Index math: the variables are renamed every round so nothing is cached."""
    n = UOp.variable(f"n{round_id}", 1, 512)
    r = [UOp.range(s, 100 * round_id + i) for i, s in enumerate((16, 4, 8, 3, 32))]
    out = []
    for k in (1, 2, 3, 4, 8):
        flat = r[0] * 32 + r[4]
        out.append((flat // 8 * 8 + flat % 8) // k)
        out.append(((r[0] * 4 + r[1]) * k + r[2]) % (4 * k))
        out.append(((r[1] * 8 + r[2]) // 4 * 4 + r[2] % 4).valid(r[1] * 8 + r[2] < 31))
        out.append((r[0] * 3 + r[3] - k).valid((k - 1 < r[0] * 3 + r[3]) & (r[0] < 15)))
        out.append((r[4] + r[0] * n) // n + (r[4] * k) % 32)
        out.append(((r[0] << 2) + r[1]) >> 2 & 15)
        out.append((r[0] < 8).where(r[0], r[0] - 8).maximum(0) + r[1] // (k + 4))
    return out


def _fuzz_corpus(round_id: int) -> list[UOp]:
    spec = importlib.util.spec_from_file_location("fuzz_symbolic", ROOT / "tools/fuzz/symbolic.py")
    assert spec is not None and spec.loader is not None
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fuzz
    spec.loader.exec_module(fuzz)
    import random

    out = []
    for i in range(500):
        rng = random.Random(f"0:{i}")
        g = fuzz.Generator(rng, rng.randint(1, 6))
        e = g.expr(g.depth).uop
        # the same expressions every round, but over Variables no earlier round has seen
        renamed = {
            v: UOp.variable(f"{v.arg[0]}{round_id}", v.arg[1], v.arg[2], v.dtype)
            for v in e.variables()
        }
        out.append(e.substitute(renamed))
    return out


def _measure(build: Callable[[int], list[UOp]], repeat: int) -> tuple[int, float, int]:
    best = float("inf")
    count = nodes = 0
    for round_id in range(repeat):
        exprs = build(round_id + 1)
        count, nodes = len(exprs), sum(len(e.toposort()) for e in exprs)
        start = time.process_time()
        for e in exprs:
            graph_rewrite(e, sym)
        best = min(best, time.process_time() - start)
        del exprs
    return count, best, nodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best one counts")
    args = parser.parse_args(argv)
    for name, build in (("index math", _index_corpus), ("fuzz corpus", _fuzz_corpus)):
        count, took, nodes = _measure(build, args.repeat)
        print(
            f"symbolic simplify, {name}: {count / took:,.0f} expressions/s "
            f"({count} expressions, {nodes} nodes, best of {args.repeat}: {took * 1e3:.1f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
