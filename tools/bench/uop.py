"""Benchmark of uop-core's hot paths: building UOps, matching patterns, rewriting graphs.

Every line is the median of several repeats of a fixed workload, timed in CPU time of this
process (the machine is shared and noisy: wall time would count other processes' turns too).
Run it with ``tools/dev bench uop``; ``--repeats N`` changes the repeat count.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable

from fusegrad.uop import GroupOp, Ops, PatternMatcher, UOp, UPat, dtypes, graph_rewrite

CHAIN_NODES = 100_000
INDEX_EXPRESSIONS = 10_000


def median_seconds(run: Callable[[], object], repeats: int, setup: Callable[[], object]) -> float:
    """Median CPU time of ``run()`` over ``repeats`` runs, each after a fresh ``setup()``."""
    times: list[float] = []
    for _ in range(repeats):
        setup()
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def no_setup() -> None:
    return None


def report(label: str, seconds: float, count: int, unit: str) -> None:
    per = seconds / count * 1e6
    rate = count / seconds
    print(f"{label:<48} {per:9.3f} us/{unit:<8} {rate:14,.0f} {unit}/s  ({seconds:.3f} s)")


# -- UOp creation -------------------------------------------------------------------------------


def bench_creation(repeats: int) -> None:
    x = UOp.variable("x", 0, 100)
    three = UOp.const(3, dtypes.weakint)
    held = UOp(Ops.ADD, dtypes.weakint, (x, three))
    n = 200_000

    def hit() -> None:
        for _ in range(n):
            UOp(Ops.ADD, dtypes.weakint, (x, three))

    report(
        "UOp creation, hit (node exists, held)", median_seconds(hit, repeats, no_setup), n, "node"
    )

    chain: list[UOp] = []

    def miss() -> None:
        u = UOp.variable(f"m{len(chain)}", 0, 100)
        for _ in range(CHAIN_NODES):
            u = UOp(Ops.NEG, dtypes.weakint, (u,))
        chain.append(u)

    report(
        "UOp creation, miss (new node, 100k chain)",
        median_seconds(miss, repeats, chain.clear),
        CHAIN_NODES,
        "node",
    )
    chain.clear()

    def add_literal() -> None:
        for _ in range(n // 4):
            x + 3

    exists = x + 3
    report("x + 3, the sum exists", median_seconds(add_literal, repeats, no_setup), n // 4, "op")
    del exists  # now each x + 3 builds the sum (and the 3) and frees them again
    report(
        "x + 3, a new sum each time", median_seconds(add_literal, repeats, no_setup), n // 4, "op"
    )
    del held


# -- pattern matching ------------------------------------------------------------------------------


def _fold(a: UOp) -> UOp | None:
    if not all(s.op is Ops.CONST for s in a.src):
        return None
    values = [s.arg for s in a.src]
    folders: dict[Ops, Callable[[int, int], int]] = {
        Ops.ADD: lambda p, q: p + q,
        Ops.MUL: lambda p, q: p * q,
        Ops.FLOORDIV: lambda p, q: p // q if q else 0,
        Ops.FLOORMOD: lambda p, q: p % q if q else 0,
        Ops.MAX: max,
        Ops.SUB: lambda p, q: p - q,
    }
    fold = folders.get(a.op)
    return None if fold is None else UOp.const(fold(*values), a.dtype)


def _lt_range(x: UOp, c: UOp) -> UOp | None:
    if x.vmax < c.arg:
        return UOp.const(True, dtypes.bool)
    if x.vmin >= c.arg:
        return UOp.const(False, dtypes.bool)
    return None


def _mod_small(x: UOp, c: UOp) -> UOp | None:
    return x if x.vmin >= 0 and x.vmax < c.arg else None


def _div_small(x: UOp, c: UOp) -> UOp | None:
    return x.const_like(0) if x.vmin >= 0 and x.vmax < c.arg else None


x_, y_, c1, c2 = UPat.var("x"), UPat.var("y"), UPat.cvar("c1"), UPat.cvar("c2")
c_ = UPat.cvar("c")
THIRTY_RULES: list[tuple[UPat, Callable[..., UOp | None]]] = [
    (UPat(GroupOp.Binary, name="a"), _fold),
    (x_ + 0, lambda x: x),
    (x_ * 1, lambda x: x),
    (x_ * 0, lambda x: x.const_like(0)),
    (x_ // 1, lambda x: x),
    (x_ % 1, lambda x: x.const_like(0)),
    (x_ - 0, lambda x: x),
    (x_ - x_, lambda x: x.const_like(0)),
    (x_.maximum(x_), lambda x: x),
    ((x_ + c1) + c2, lambda x, c1, c2: x + (c1.arg + c2.arg)),
    ((x_ * c1) * c2, lambda x, c1, c2: x * (c1.arg * c2.arg)),
    ((x_ * c1) + (x_ * c2), lambda x, c1, c2: x * (c1.arg + c2.arg)),
    ((x_ * c1) + x_, lambda x, c1: x * (c1.arg + 1)),
    (x_ + x_, lambda x: x * 2),
    ((x_ * c1) // c2, lambda x, c1, c2: x * (c1.arg // c2.arg) if c1.arg % c2.arg == 0 else None),
    ((x_ * c1) % c2, lambda x, c1, c2: x.const_like(0) if c1.arg % c2.arg == 0 else None),
    ((x_ // c1) // c2, lambda x, c1, c2: x // (c1.arg * c2.arg) if c1.arg > 0 < c2.arg else None),
    ((x_ % c1) % c1, lambda x, c1: x % c1),
    (x_ % c_, _mod_small),
    (x_ // c_, _div_small),
    (x_ < c_, _lt_range),
    ((x_ + y_) - y_, lambda x, y: x),
    (x_.maximum(c_), lambda x, c: x if x.vmin >= c.arg else None),
    (UPat(Ops.NEG, src=(UPat(Ops.NEG, src=(x_,)),)), lambda x: x),
    (x_.eq(x_), lambda x: UOp.const(True, dtypes.bool)),
    (x_.ne(x_), lambda x: UOp.const(False, dtypes.bool)),
    ((x_ * c1) + (y_ * c1), lambda x, y, c1: (x + y) * c1),
    (x_.where(y_, y_), lambda x, y: y),
    (UPat.var("b", dtypes.bool).where(x_, UPat.var("z")), lambda b, x, z: None),
    (UPat(Ops.SINK, name="s"), lambda s: None),
]


def random_index(rng: random.Random, leaves: list[UOp], depth: int) -> UOp:
    """A random expression of +, *, //, % over ``leaves`` and small constants."""
    if depth == 0 or rng.random() < 0.2:
        return (
            rng.choice(leaves)
            if rng.random() < 0.7
            else UOp.const(rng.randint(0, 8), dtypes.weakint)
        )
    a = random_index(rng, leaves, depth - 1)
    pick = rng.randrange(5)
    if pick == 0:
        return a + random_index(rng, leaves, depth - 1)
    if pick == 1:
        return a * rng.randint(0, 6)
    if pick == 2:
        return a // rng.randint(1, 8)
    if pick == 3:
        return a % rng.randint(1, 8)
    return a + rng.randint(0, 4)


def index_workload() -> UOp:
    rng = random.Random(1234)
    leaves = [UOp.variable(n, 0, 15) for n in "abcd"]
    leaves += [UOp.range(16, axis) for axis in range(3)]
    return UOp.sink(*(random_index(rng, leaves, 5) for _ in range(INDEX_EXPRESSIONS)))


def repeated(rewrite: Callable[[UOp], object], nodes: list[UOp]) -> Callable[[], object]:
    """A workload: ``rewrite`` on each of ``nodes``."""
    return lambda: [rewrite(u) for u in nodes]


def bench_hit_miss(repeats: int) -> None:
    """One rule, ``(x*c1)+(x*c2)``, on a node it matches and on nodes it rejects, through the
    compiled matcher (``rewrite``) and the interpreted reference (``rewrite_interpreted``)."""
    v, w = UOp.variable("v", 0, 9), UOp.variable("w", 0, 9)
    found = UOp.const(0, dtypes.weakint)  # the rule returns a node that exists: no creation
    pm = PatternMatcher([((x_ * c1) + (x_ * c2), lambda x, c1, c2: found)])
    cases = [
        ("hit", v * 2 + v * 3),
        ("miss inside (v*2+w*3)", v * 2 + w * 3),
        ("miss at the sources (v+w)", v + w),
    ]
    n = 20_000
    for label, node in cases:
        for how, rewrite in (("compiled", pm.rewrite), ("interpreted", pm.rewrite_interpreted)):
            seconds = median_seconds(repeated(rewrite, [node] * n), repeats, no_setup)
            report(f"match {label}, {how}", seconds, n, "match")


def bench_matching(repeats: int) -> None:
    bench_hit_miss(repeats)
    pm = PatternMatcher(THIRTY_RULES)
    sink = index_workload()
    nodes = sink.toposort()
    for how, rewrite in (("", pm.rewrite), (" interpreted", pm.rewrite_interpreted)):
        report(
            f"PatternMatcher.rewrite{how}, 30 rules (per node)",
            median_seconds(repeated(rewrite, nodes), repeats, no_setup),
            len(nodes),
            "node",
        )
    out: list[UOp] = []
    report(
        f"graph_rewrite {INDEX_EXPRESSIONS // 1000}k index exprs, 30 rules ({len(nodes)} nodes)",
        median_seconds(lambda: out.append(graph_rewrite(sink, pm)), repeats, out.clear),
        len(nodes),
        "node",
    )


# -- graph_rewrite ------------------------------------------------------------------------------------


def elementwise_chain(n: int) -> UOp:
    """``n`` alternating ADD/MUL nodes: ((x+1)*2+1)*2... on float32."""
    u = UOp.variable("x", 0.0, 1.0, dtypes.float32)
    one, two = UOp.const(1.0, dtypes.float32), UOp.const(2.0, dtypes.float32)
    for i in range(n):
        u = (
            UOp(Ops.ADD, dtypes.float32, (u, one))
            if i % 2
            else UOp(Ops.MUL, dtypes.float32, (u, two))
        )
    return u


def bench_rewrite(repeats: int) -> None:
    chain = elementwise_chain(CHAIN_NODES)
    # rules on ops the chain has, that never fire: dispatch and matching are exercised
    noop = PatternMatcher(
        [
            (UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("c"))), lambda x, c: None),
            (UPat(Ops.NOOP, src=(UPat.var("x"),)), lambda x: x),
        ]
    )
    report(
        "graph_rewrite 100k chain, no-op matcher",
        median_seconds(lambda: graph_rewrite(chain, noop), repeats, no_setup),
        CHAIN_NODES,
        "node",
    )
    report(
        "graph_rewrite 100k chain, empty matcher",
        median_seconds(lambda: graph_rewrite(chain, PatternMatcher([])), repeats, no_setup),
        CHAIN_NODES,
        "node",
    )
    to_sub = PatternMatcher([(UPat(Ops.ADD, name="a"), lambda a: a.replace(op=Ops.SUB))])
    out: list[UOp] = []
    report(
        "graph_rewrite 100k chain, every ADD -> SUB",
        median_seconds(lambda: out.append(graph_rewrite(chain, to_sub)), repeats, out.clear),
        CHAIN_NODES,
        "node",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="runs per workload (median)")
    args = parser.parse_args()
    print(f"uop-core benchmark: median of {args.repeats} runs per line")
    for bench in (bench_creation, bench_matching, bench_rewrite):
        bench(args.repeats)
        gc.collect()


if __name__ == "__main__":
    main()
