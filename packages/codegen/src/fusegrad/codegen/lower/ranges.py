"""Simplify ranges: give each axis a type the target can run, drop loops of one iteration,
simplify the index math over what remains, and merge adjacent loops that address memory
contiguously into one loop."""

from __future__ import annotations

import itertools

from fusegrad.codegen.lower.context import LowerContext, nesting_key, sorted_ranges
from fusegrad.codegen.lower.simplify import pm_simplify
from fusegrad.codegen.lower.walk import nodes, toposort
from fusegrad.uop import (
    AxisType,
    GroupOp,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    dtypes,
    graph_rewrite,
)
from fusegrad.uop.symbolic import simplify_together


def _target_axis(kind: AxisType, ctx: LowerContext) -> AxisType:
    """The axis type ``kind`` runs as on this target (GPU axes are loops on a CPU...)."""
    r = ctx.renderer
    if not r.has_local and kind in (AxisType.GLOBAL, AxisType.LOCAL):
        return AxisType.LOOP
    if not r.has_local and kind is AxisType.GROUP_REDUCE:
        return AxisType.REDUCE
    if not r.has_threads and kind is AxisType.THREAD:
        return AxisType.LOOP
    return kind


def _retype(ctx: LowerContext, rng: UOp) -> UOp | None:
    kind = _target_axis(rng.arg[1], ctx)
    return rng.replace(arg=(rng.arg[0], kind)) if kind is not rng.arg[1] else None


def _one_iteration(rng: UOp) -> UOp | None:
    end = rng.src[0]
    if end.op is not Ops.CONST or end.arg != 1:
        return None
    return UOp.const(0, dtypes.weakint)


def _drop_closed_consts(x: UOp) -> UOp | None:
    """END/REDUCE over ranges that became constants: keep only real ranges."""
    keep = tuple(s for s in x.src[1:] if s.op is Ops.RANGE)
    if len(keep) == len(x.src) - 1:
        return None
    if not keep:
        return x.src[0]
    return x.replace(src=(x.src[0], *keep))


pm_simplify_ranges = (
    PatternMatcher(
        [
            (UPat(Ops.RANGE, name="rng"), _retype),  # axis type -> what the target runs
            (UPat(Ops.RANGE, name="rng"), _one_iteration),  # RANGE(1) -> 0
            (UPat((Ops.END, Ops.REDUCE), name="x"), _drop_closed_consts),  # over no range -> x
        ]
    )
    + pm_simplify
)


# -- merging adjacent loops ---------------------------------------------------------------------
#
# Two loops that are always opened and closed together (the same ENDs/REDUCEs close both) and
# nest directly one in the other, ``a`` over [0, A) around ``b`` over [0, B), are one loop
# ``m`` over [0, A*B) with ``a = m // B`` and ``b = m % B`` — a shallower nest with longer
# runs, when every index then simplifies the division away (``a*B*s + b*s`` is ``m*s``: both
# axes are contiguous in every buffer they address). A merge that would leave any division
# or modulo the kernel did not have is not made. Only LOOP and REDUCE axes merge (hardware
# ids, vector and thread axes are the optimizer's choice); the iteration order is unchanged,
# so a reduction accumulates in the same order.

_MERGEABLE = (AxisType.LOOP, AxisType.REDUCE)
_DIVISIONS = frozenset({Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV, Ops.CMOD})


def _closers(sink: UOp) -> dict[UOp, list[UOp]]:
    """Each RANGE -> the END/REDUCE nodes that close it."""
    out: dict[UOp, list[UOp]] = {}
    for u in toposort(sink):
        if u.op in (Ops.END, Ops.REDUCE):
            for r in u.src[1:]:
                out.setdefault(r, []).append(u)
    return out


def _nest(closer: UOp) -> list[UOp]:
    return sorted_ranges([r for r in closer.src[1:] if r.op is Ops.RANGE])


def _mergeable(a: UOp, b: UOp, closers: dict[UOp, list[UOp]]) -> bool:
    """``a`` and ``b`` are constant-size loops of one mergeable kind, closed by the same
    nodes, ``b`` directly inside ``a`` in each of them."""
    if a.arg[1] is not b.arg[1] or a.arg[1] not in _MERGEABLE:
        return False
    if a.src[0].op is not Ops.CONST or b.src[0].op is not Ops.CONST:
        return False
    if set(closers[a]) != set(closers[b]):
        return False
    return all((a, b) in set(itertools.pairwise(_nest(c))) for c in closers[a])


def _pairs(sink: UOp) -> list[tuple[UOp, UOp]]:
    """(outer, inner) loops that may merge, outermost first."""
    closers = _closers(sink)
    found: dict[tuple[UOp, UOp], None] = {}
    for closer in {c for cs in closers.values() for c in cs}:
        for a, b in itertools.pairwise(_nest(closer)):
            if _mergeable(a, b, closers):
                found[(a, b)] = None
    return sorted(found, key=lambda p: nesting_key(p[0]))


def _coefficients(x: UOp, a: UOp, b: UOp) -> tuple[int, int] | None:
    """(coefficient of ``a``, of ``b``) in index sum ``x`` when both appear only as
    ``r`` or ``r * c`` terms of it (a WHERE's branches are sums of their own); None when
    either appears any other way."""
    ca = cb = 0
    for t in _terms(x):
        if not _uses(t, a, b):
            continue
        r, c = t, 1
        if t.op is Ops.MUL and t.src[1].op is Ops.CONST and type(t.src[1].arg) is int:
            r, c = t.src[0], t.src[1].arg
        if r is a:
            ca += c
        elif r is b:
            cb += c
        elif t.op is Ops.WHERE and _same_shape(t.src[1], a, b) and _same_shape(t.src[2], a, b):
            continue  # the condition is a root of its own
        else:
            return None
    return ca, cb


def _uses(x: UOp, a: UOp, b: UOp) -> bool:
    """``a`` or ``b`` is in index math ``x`` itself (not only behind a load or a condition,
    whose own index math is checked where it is used)."""
    if a not in x.ranges and b not in x.ranges:
        return False
    walk = x.toposort(gate=lambda u: u.dtype.scalar() is dtypes.weakint)
    return any(u is a or u is b for u in walk)


def _same_shape(x: UOp, a: UOp, b: UOp) -> bool:
    found = _coefficients(x, a, b)
    return found is not None and found[0] == found[1] * b.src[0].arg


def _terms(x: UOp) -> list[UOp]:
    if x.op is not Ops.ADD:
        return [x]
    return _terms(x.src[0]) + _terms(x.src[1])


def _contiguous(sink: UOp, a: UOp, b: UOp) -> bool:
    """Every index expression uses ``a`` and ``b`` only as ``(a*B + b) * s`` (B: ``b``'s
    size): the cheap test before trying a merge."""
    for u in nodes(sink):
        if u.dtype.scalar() is dtypes.weakint and u.op is not Ops.INDEX:
            continue
        srcs = u.src[:1] if u.op in (Ops.END, Ops.REDUCE) else u.src
        for s in srcs:
            weak = s.dtype.scalar() is dtypes.weakint
            if weak and _uses(s, a, b) and not _same_shape(s, a, b):
                return False
    return True


def _divisions(sink: UOp) -> int:
    return sum(u.op in _DIVISIONS for u in nodes(sink))


def _merged(sink: UOp, a: UOp, b: UOp) -> UOp:
    """``sink`` with loops ``a`` (outer) and ``b`` as one loop, index math simplified."""
    size = b.src[0].arg
    m = UOp.range(a.src[0].arg * size, a.arg[0], a.arg[1])
    order = toposort(sink.substitute({a: m // size, b: m % size}))
    # a kernel's index expressions share most of their subexpressions: one rewrite for all
    simple = simplify_together(r for u in order for r in _index_math(u, m))
    new: dict[UOp, UOp] = {}
    for u in order:
        srcs = tuple(new[s] for s in u.src)
        v = u if all(x is y for x, y in zip(srcs, u.src, strict=True)) else u.replace(src=srcs)
        new[u] = _fixed(u, v, m, simple)
    return new[order[-1]]


def _index_math(u: UOp, m: UOp) -> tuple[UOp, ...]:
    """The index math of ``u`` that is simplified once ``m`` is in it: an INDEX's address, an
    int comparison, a cast int."""
    if m not in u.ranges:
        return ()
    if u.op is Ops.INDEX:
        return (u.src[1],)
    if u.op in GroupOp.Comparison and u.src[0].dtype.scalar() is dtypes.weakint:
        return (u,)
    if u.op is Ops.CAST and u.src[0].dtype.scalar() is dtypes.weakint:
        return (u.src[0],)
    return ()


def _fixed(u: UOp, v: UOp, m: UOp, simple: dict[UOp, UOp]) -> UOp:
    """Node ``u`` of the merged graph, ``v`` it on its fixed sources: END/REDUCE close ``m``
    once (in place of the two loops), index math simplified (``simple``, see
    ``_index_math``)."""
    if u.op in (Ops.END, Ops.REDUCE):
        rs = [r for s in v.src[1:] for r in ((s,) if s.op is Ops.RANGE else (m,))]
        srcs = (v.src[0], *dict.fromkeys(rs))
        return v.replace(src=srcs) if srcs != v.src else v
    found = _index_math(u, m)
    if not found or m not in v.ranges:  # (fixed sources can drop m: the node is kept)
        return v
    if u.op is Ops.INDEX:
        return v.replace(src=(v.src[0], simple[found[0]], *v.src[2:]))
    if u.op is Ops.CAST:
        return v.replace(src=(simple[found[0]],))
    return simple[u]


def merge_ranges(sink: UOp) -> UOp:
    """``sink`` with every pair of mergeable loops merged (see above), one pair at a time."""
    tried: set[tuple[UOp, UOp]] = set()
    while True:
        before = _divisions(sink)
        for pair in _pairs(sink):
            if pair in tried:
                continue
            tried.add(pair)
            if not _contiguous(sink, *pair):
                continue
            out = _merged(sink, *pair)
            if _divisions(out) <= before:
                sink = out
                break
        else:
            return sink


def simplify_ranges(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: ``pm_simplify_ranges``, then adjacent contiguous loops merged."""
    sink = graph_rewrite(sink, pm_simplify_ranges, ctx=ctx, name="simplify ranges")
    return merge_ranges(sink)
