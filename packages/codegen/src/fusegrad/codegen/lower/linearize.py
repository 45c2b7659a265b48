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

from fusegrad.uop import Ops, UOp

Block = UOp | None  # a RANGE, or None for the kernel's top level


@dataclass
class _Loops:
    """The loop tree of a graph."""

    end_of: dict[UOp, UOp]
    enclosing: dict[UOp, frozenset[UOp]] = field(default_factory=dict)
    parents: dict[UOp, Block] = field(default_factory=dict)

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

    def innermost(self, ranges: frozenset[UOp]) -> Block:
        """The innermost of a chain of nested loops."""
        if not ranges:
            return None
        return max(ranges, key=lambda r: len(self.around(r)))

    def parent(self, rng: UOp) -> Block:
        if rng not in self.parents:
            self.parents[rng] = self.innermost(self.around(rng))
        return self.parents[rng]

    def block_of(self, u: UOp) -> Block:
        if u.op is Ops.RANGE:
            return self.parent(u)
        if u.op is Ops.END:
            return self.parent(u.src[1])
        own = frozenset(u.ranges)
        every = set(own)
        for r in own:
            every |= self.around(r)
        return self.innermost(frozenset(every))


def _priority(u: UOp, pos: int) -> tuple[int, object, int]:
    if u.op is Ops.PARAM:
        return (0, (0, u.arg, "") if isinstance(u.arg, int) else (1, 0, u.arg[0]), pos)
    if u.op in (Ops.DEFINE_REG, Ops.DEFINE_LOCAL):
        return (1, 0, pos)
    return (2, 0, pos)


class _Linearizer:
    def __init__(self, sink: UOp) -> None:
        self.order = sink.toposort()
        self.pos = {u: i for i, u in enumerate(self.order)}
        self.loops = _Loops({u.src[1]: u for u in self.order if u.op is Ops.END})
        self.block = {u: self.loops.block_of(u) for u in self.order}
        self.chains: dict[Block, list[Block]] = {}
        self.members: dict[Block, list[UOp]] = {}
        for u in self.order:
            for b in self._chain(self.block[u]):
                self.members.setdefault(b, []).append(u)
            if u.op is Ops.RANGE:
                self.members.setdefault(u, []).append(u)

    def _chain(self, b: Block) -> list[Block]:
        """``b`` and every loop enclosing it, innermost first, then None."""
        if (hit := self.chains.get(b)) is not None:
            return hit
        out: list[Block] = []
        cur = b
        while cur is not None:
            out.append(cur)
            cur = self.loops.parent(cur)
        self.chains[b] = [*out, None]
        return self.chains[b]

    def _item(self, u: UOp, block: Block) -> UOp | None:
        """What stands for ``u`` in ``block``: itself, the child loop holding it, or None
        when it lives outside ``block`` (already emitted)."""
        b = self.block[u]
        if u.op is Ops.RANGE and self.loops.parent(u) == block:
            return u
        if u.op is Ops.END and self.block[u] == block:
            return u.src[1]
        prev = None
        for c in self._chain(b):
            if c == block:
                return u if prev is None else prev
            prev = c
        return None

    def emit(self, block: Block, out: list[UOp]) -> None:
        if block is not None:
            out.append(block)
        items = [u for u in self.members.get(block, []) if self._item(u, block) is u]
        if block is not None:
            items = [u for u in items if u is not block]
        deps: dict[UOp, set[UOp]] = {}
        for item in items:
            inside = self.members.get(item, []) if item.op is Ops.RANGE else [item]
            needs = {self._item(s, block) for u in inside for s in u.src}
            if item.op is Ops.RANGE:
                needs |= {self._item(s, block) for s in self.loops.end_of[item].src}
            deps[item] = {n for n in needs if n is not None and n is not item}
        self._toposort(block, items, deps, out)
        if block is not None:
            out.append(self.loops.end_of[block])

    def _toposort(
        self, block: Block, items: list[UOp], deps: dict[UOp, set[UOp]], out: list[UOp]
    ) -> None:
        users: dict[UOp, list[UOp]] = {}
        for item, needs in deps.items():
            for n in needs:
                users.setdefault(n, []).append(item)
        waiting = {item: len(needs) for item, needs in deps.items()}
        ready = [(_priority(u, self._first(u)), i, u) for i, u in enumerate(items) if not deps[u]]
        heapq.heapify(ready)
        index = {u: i for i, u in enumerate(items)}
        while ready:
            _, _, u = heapq.heappop(ready)
            if u.op is Ops.RANGE and u is not block:
                self.emit(u, out)
            else:
                out.append(u)
            for user in users.get(u, []):
                waiting[user] -= 1
                if waiting[user] == 0:
                    heapq.heappush(ready, (_priority(user, self._first(user)), index[user], user))
        if any(waiting.values()):
            raise ValueError("linearize: the graph has a cycle between loops")

    def _first(self, u: UOp) -> int:
        if u.op is not Ops.RANGE:
            return self.pos[u]
        return min(self.pos[m] for m in self.members.get(u, [u]))


def linearize(sink: UOp) -> list[UOp]:
    """The nodes of ``sink`` (an effect graph with single-range ENDs) in execution order,
    SINK and GROUP nodes left out."""
    lin = _Linearizer(sink)
    out: list[UOp] = []
    lin.emit(None, out)
    return [u for u in out if u.op not in (Ops.SINK, Ops.GROUP, Ops.NOOP)]
