"""Range merging simplifies a merged kernel's index math in one rewrite over all of it (shared
subexpressions once): the result is node for node what simplifying each address, comparison
and cast on its own gives (the per-node form it replaced, kept here as the reference)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import targets as T
from fusegrad.codegen.lower import ranges
from fusegrad.codegen.lower.walk import rebuild
from fusegrad.uop import GroupOp, Ops, UOp, dtypes


def _merged_node_by_node(sink: UOp, a: UOp, b: UOp) -> UOp:
    """The reference: each node's index math simplified alone (``UOp.simplify``)."""
    size = b.src[0].arg
    m = UOp.range(a.src[0].arg * size, a.arg[0], a.arg[1])

    def fix(u: UOp) -> UOp | None:
        if u.op in (Ops.END, Ops.REDUCE):
            rs = [r for s in u.src[1:] for r in ((s,) if s.op is Ops.RANGE else (m,))]
            srcs = (u.src[0], *dict.fromkeys(rs))
            return u.replace(src=srcs) if srcs != u.src else None
        if m not in u.ranges:
            return None
        if u.op is Ops.INDEX:
            return u.replace(src=(u.src[0], u.src[1].simplify(), *u.src[2:]))
        if u.op in GroupOp.Comparison and u.src[0].dtype.scalar() is dtypes.weakint:
            return u.simplify()
        if u.op is Ops.CAST and u.src[0].dtype.scalar() is dtypes.weakint:
            return u.replace(src=(u.src[0].simplify(),))
        return None

    return rebuild(sink.substitute({a: m // size, b: m % size}), fix)


def _shifted_masked_cast() -> UOp:
    """out[n] = x[n+2] (0 for n >= 10) + y[n] * float(n) for n = i*4 + j over 3x4: the mask,
    the two loads and the cast share ``i*4 + j``, and all of it merges into one loop."""
    out, x, y = (T.buf(n, dtypes.float32, 12) for n in range(3))
    i, j = T.rng(3, 0), T.rng(4, 1)
    flat = i * 4 + j
    shifted = x.index((flat + 2).valid(flat < 10)).load()
    val = shifted + y.index(flat).load() * flat.cast(dtypes.float32)
    return T.kernel(out.index(flat).store(val).end(i, j))


def _three_contiguous_axes() -> UOp:
    out, x = T.buf(0, dtypes.float32, 30), T.buf(1, dtypes.float32, 30)
    rs = [T.rng(n, a) for a, n in enumerate((2, 3, 5))]
    flat = rs[0] * 15 + rs[1] * 5 + rs[2]
    return T.kernel(out.index(flat).store(x.index(flat).load() * 2.0).end(*rs))


@pytest.mark.parametrize("make", [_shifted_masked_cast, _three_contiguous_axes])
def test_one_rewrite_gives_what_simplifying_each_node_gives(
    make: Callable[[], UOp], monkeypatch: pytest.MonkeyPatch
) -> None:
    sink = make()
    shared = ranges.merge_ranges(sink)
    assert sum(u.op is Ops.RANGE for u in shared.toposort()) == 1  # everything merged
    monkeypatch.setattr(ranges, "_merged", _merged_node_by_node)
    assert ranges.merge_ranges(sink) is shared
