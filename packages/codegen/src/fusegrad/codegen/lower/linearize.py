"""Linearize: the lowered graph as a list of UOps in execution order.

Loops are blocks. A node belongs to the innermost loop among the ranges it depends on and the
loops enclosing those (a loop encloses another when the inner loop's END depends on it); a
RANGE and its END belong to the enclosing block. Each block is ordered on its own, with every
child loop standing in it as one item that needs whatever its body needs from outside. So a
node never sits in a loop it doesn't depend on (loop-invariant code is hoisted as far out as
it goes), everything that depends on a RANGE comes after it and before its END, and the
order is a deterministic topological sort (ties broken by the graph's depth-first order,
parameters first by slot, then variables, then buffers defined in the kernel).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import Ops, UOp

Block = UOp | None  # a RANGE, or None for the kernel's top level


@dataclass
class _Loops:
    """The loop tree of a graph."""

    end_of: dict[UOp, UOp]
    enclosing: dict[UOp, frozenset[UOp]] = field(default_factory=dict)
    parents: dict[UOp, Block] = field(default_factory=dict)
    chains: dict[Block, tuple[UOp, ...]] = field(default_factory=dict)

    def around(self, rng: UOp) -> frozenset[UOp]:
        """Every loop enclosing ``rng``'s loop."""
        if rng not in self.enclosing:
            end = self.end_of.get(rng)
            if end is None:
                raise ValueError(f"linearize: RANGE axis {rng.arg[0]} is never closed by an END")
            direct = frozenset(end.ranges)
            out = set(direct)
            for r in direct:
                out |= self.around(r)
            self.enclosing[rng] = frozenset(out)
        return self.enclosing[rng]

    def depth(self, b: Block) -> int:
        """How many loops ``b`` is nested in, itself included (the top level: 0)."""
        return len(self.chain(b))

    def parent(self, rng: UOp) -> Block:
        """The loop directly around ``rng``'s loop (None: the top level)."""
        if rng not in self.parents:
            around = self.around(rng)
            self.parents[rng] = max(around, key=lambda r: len(self.around(r))) if around else None
        return self.parents[rng]

    def chain(self, b: Block) -> tuple[UOp, ...]:
        """The loops from the outermost down to ``b`` (empty for the top level)."""
        if b is None:
            return ()
        if (hit := self.chains.get(b)) is None:
            hit = self.chains[b] = (*self.chain(self.parent(b)), b)
        return hit


def _priority(u: UOp, pos: int) -> tuple[int, object, int]:
    if u.op is Ops.PARAM:
        return (0, (0, u.arg, "") if isinstance(u.arg, int) else (1, 0, u.arg[0]), pos)
    if u.op in (Ops.DEFINE_REG, Ops.DEFINE_LOCAL):
        return (1, 0, pos)
    return (2, 0, pos)


class _Linearizer:
    """Every node gets a *path*: the loops around it, outermost first, then itself (a RANGE's
    path ends in its own loop, an END's is its loop's). Within a block at depth ``d`` a node
    is represented by ``path[d]``, itself or the child loop holding it. An edge ``u -> s``
    becomes one dependency, between ``path(u)[d]`` and ``path(s)[d]`` at the depth ``d``
    where the two paths part (none when ``s`` is a loop around ``u``, or ``u`` the END of a
    loop that holds ``s``). One pass over the edges builds every block's item graph."""

    def __init__(self, sink: UOp) -> None:
        self.order = toposort(sink)
        self.pos = {u: i for i, u in enumerate(self.order)}
        self.loops = loops = _Loops({u.src[1]: u for u in self.order if u.op is Ops.END})
        block: dict[UOp, Block] = {}
        path: dict[UOp, tuple[UOp, ...]] = {}
        self.items: dict[Block, list[UOp]] = {None: []}
        self.deps: dict[UOp, set[UOp]] = {}
        for u in self.order:
            b = block[u] = self._block(u, block)
            if u.op is Ops.RANGE:
                p = path[u] = loops.chain(u)
            elif u.op is Ops.END:
                p = path[u] = loops.chain(u.src[1])
            else:
                p = path[u] = (*loops.chain(b), u)
            if u.op is not Ops.END:
                self.items.setdefault(b, []).append(u)
            self.deps.setdefault(p[-1], set())
            for s in u.src:
                self._edge(p, path[s])

    def _edge(self, p: tuple[UOp, ...], q: tuple[UOp, ...]) -> None:
        d = 0
        n = min(len(p), len(q))
        while d < n and p[d] is q[d]:
            d += 1
        if d < n:
            self.deps.setdefault(p[d], set()).add(q[d])

    def _block(self, u: UOp, block: dict[UOp, Block]) -> Block:
        """The innermost loop ``u`` depends on (through its sources; loops nest, so the
        deepest source block is it); a RANGE and its END live in the enclosing loop."""
        if u.op is Ops.RANGE:
            return self.loops.parent(u)
        if u.op is Ops.END:
            return self.loops.parent(u.src[1])
        best: Block = None
        deepest = 0
        for s in u.src:
            b = s if s.op is Ops.RANGE else block[s]
            if b is not None and (d := self.loops.depth(b)) > deepest:
                best, deepest = b, d
        return best

    def emit(self, block: Block, out: list[UOp]) -> None:
        """``block``'s items in a dependency order (ties: parameters by slot, then the
        graph's order), each child loop emitted in place: RANGE, body, END."""
        items = self.items.get(block, [])
        users: dict[UOp, list[UOp]] = {}
        waiting: dict[UOp, int] = {}
        for item in items:
            needs = self.deps.get(item, ())
            waiting[item] = len(needs)
            for n in needs:
                users.setdefault(n, []).append(item)
        ready = [(_priority(u, self.pos[u]), u) for u in items if not waiting[u]]
        heapq.heapify(ready)
        while ready:
            _, u = heapq.heappop(ready)
            out.append(u)
            if u.op is Ops.RANGE:
                self.emit(u, out)
                out.append(self.loops.end_of[u])
            for user in users.get(u, ()):
                waiting[user] -= 1
                if waiting[user] == 0:
                    heapq.heappush(ready, (_priority(user, self.pos[user]), user))
        if any(waiting.values()):
            raise ValueError("linearize: the graph has a cycle between loops")


def linearize(sink: UOp) -> list[UOp]:
    """The nodes of ``sink`` (an effect graph with single-range ENDs) in execution order,
    SINK and GROUP nodes left out."""
    lin = _Linearizer(sink)
    out: list[UOp] = []
    lin.emit(None, out)
    return [u for u in out if u.op not in (Ops.SINK, Ops.GROUP, Ops.NOOP)]
