"""Control flow: exactly one END per loop, each closing one range.

``END(x, r1, r2)`` is split into nested ENDs (outermost loop closed last, in nesting order);
effects closed by different ENDs of the same range (two outputs of one kernel) are merged
into one ``END(GROUP(x1, x2), r)``, so the loop runs once and does both.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext, end_nested
from fusegrad.codegen.lower.walk import rebuild, toposort
from fusegrad.uop import Ops, UOp, dedup, substitute


def _split_end(e: UOp) -> UOp | None:
    if len(e.src) <= 2:
        return None
    return end_nested(e.src[0], e.src[1:])


def _flatten_group(g: UOp) -> UOp | None:
    if not any(s.op is Ops.GROUP for s in g.src) and len(set(g.src)) == len(g.src):
        return None
    flat: list[UOp] = []
    for s in g.src:
        flat.extend(s.src if s.op is Ops.GROUP else (s,))
    return UOp(Ops.GROUP, src=tuple(dedup(flat)))


_SPLIT = {
    Ops.END: _split_end,  # END(x, r1, r2) -> END(END(x, r2), r1)
    Ops.GROUP: _flatten_group,  # GROUP(GROUP(a), b) -> GROUP(a, b)
}


def split_ends(sink: UOp) -> UOp:
    """Every END closing one range, groups flat (one pass: sources are done first)."""

    def split(u: UOp) -> UOp | None:
        rule = _SPLIT.get(u.op)
        return None if rule is None else rule(u)

    return rebuild(sink, split)


def _merge_once(sink: UOp) -> UOp | None:
    """Merge the innermost ENDs that close the same range; None when every range has one."""
    closers: dict[UOp, list[UOp]] = {}
    for u in toposort(sink):
        if u.op is Ops.END:
            closers.setdefault(u.src[1], []).append(u)
    for rng, ends in closers.items():
        if len(ends) < 2:
            continue
        merged = UOp(Ops.GROUP, src=tuple(e.src[0] for e in ends)).end(rng)
        return substitute(sink, {e: merged for e in ends})
    return None


def add_control_flow(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: single-range ENDs, one per loop."""
    sink = split_ends(sink)
    while (merged := _merge_once(sink)) is not None:
        sink = split_ends(merged)
    return sink
