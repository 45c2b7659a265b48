"""Graph walks for the lowering pipeline, lean versions of ``UOp.toposort``.

Lowering walks every kernel graph a dozen times (censuses, index widths, linearization), so
the walk itself is a cost: ``nodes`` is a plain set walk for when order does not matter, and
``toposort`` a depth-first post-order with the same order as ``UOp.toposort`` (sources
before users, ``src[0]``'s subgraph first) at about a third of its cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fusegrad.uop import UOp
from fusegrad.uop.viztrace import ACTIVE as _TRACE
from fusegrad.uop.viztrace import Step, source_of


def nodes(root: UOp) -> set[UOp]:
    """Every node reachable from ``root`` (``root`` included), in no particular order."""
    seen = {root}
    stack = [root]
    push, add = stack.append, seen.add
    while stack:
        for s in stack.pop().src:
            if s not in seen:
                add(s)
                push(s)
    return seen


def toposort(root: UOp) -> list[UOp]:
    """Every node reachable from ``root``, sources before users: ``UOp.toposort``'s order."""
    seen = {root}
    order: list[UOp] = []
    stack: list[tuple[UOp, Iterator[UOp]]] = [(root, iter(root.src))]
    push, add = stack.append, seen.add
    while stack:
        node, rest = stack[-1]
        for s in rest:
            if s not in seen:
                add(s)
                push((s, iter(s.src)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def rebuild(root: UOp, fn: Callable[[UOp], UOp | None]) -> UOp:
    """``root``'s graph rebuilt in one pass: each node on its rebuilt sources, then replaced
    by ``fn(node)`` unless that is None. No pattern matching and no fixed point: the cheap
    form of a rewrite whose rules each fire once on a node and make nothing they apply to."""
    if _TRACE:  # VIZ: the walk is a stage of the trace, each replacement a step
        return _traced_rebuild(root, fn)
    new: dict[UOp, UOp] = {}
    for u in toposort(root):
        srcs = tuple(new[s] for s in u.src)
        same = all(a is b for a, b in zip(srcs, u.src, strict=True))
        v = u if same else u.replace(src=srcs)
        out = fn(v)
        new[u] = v if out is None else out
    return new[root]


def _traced_rebuild(root: UOp, fn: Callable[[UOp], UOp | None]) -> UOp:
    trace = _TRACE[0]
    name = getattr(fn, "__qualname__", repr(fn))
    source = source_of(fn)
    stage = trace.begin(name, root, kind="walk")
    new: dict[UOp, UOp] = {}
    try:
        for u in toposort(root):
            srcs = tuple(new[s] for s in u.src)
            same = all(a is b for a, b in zip(srcs, u.src, strict=True))
            v = u if same else u.replace(src=srcs)
            out = fn(v)
            if out is not None and out is not v:
                trace.step(Step(name, source, v, out, name))
            new[u] = v if out is None else out
    finally:
        trace.end(stage, new.get(root, root))
    return new[root]
