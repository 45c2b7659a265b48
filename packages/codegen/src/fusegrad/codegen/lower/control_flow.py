"""Control flow: exactly one END per loop, each closing one range.

``END(x, r1, r2)`` is split into nested ENDs (outermost loop closed last, in nesting order);
effects closed by different ENDs of the same range (two outputs of one kernel) are merged
into one ``END(GROUP(x1, x2), r)``, so the loop runs once and does both.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext, end_nested
from fusegrad.codegen.lower.walk import rebuild, toposort
from fusegrad.uop import Ops, UOp, dedup, dtypes, substitute


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


# -- IF blocks ------------------------------------------------------------------------------------
#
# On the linear program: the stores of one block (loop body or top level) gated by the same
# scalar condition ``g``, with everything only they use (loads, math, whole inner loops such as
# a reduction whose result only they store), move under one ``IF(g) ... ENDIF``, so an
# iteration where ``g`` is false skips the work instead of computing it and storing nothing.
# Inside the IF, accesses gated by exactly ``g`` lose the gate. Nothing with a BARRIER goes
# inside (every thread of a workgroup must reach a barrier), and the IF is only formed when
# moving the other nodes of the block out of the way reorders no conflicting memory accesses.

_STAY = frozenset(
    {
        Ops.PARAM,
        Ops.DEFINE_REG,
        Ops.DEFINE_LOCAL,
        Ops.DEFINE_VAR,
        Ops.SPECIAL,
        Ops.CONST,
        Ops.VCONST,
    }
)
_OPENERS = {Ops.RANGE: Ops.END, Ops.IF: Ops.ENDIF}


def _base(ptr: UOp) -> UOp:
    while ptr.op is Ops.AFTER:
        ptr = ptr.src[0]
    return ptr


def _closer_of(u: UOp) -> UOp | None:
    """The RANGE/IF a closing END/ENDIF node closes."""
    if u.op in (Ops.END, Ops.ENDIF):
        return u.src[0]
    return None


class _Blocks:
    """The block structure of a linear program: which block (opener position, -1 for the
    top level) each position is in, and each block's items (a node, or a child block's
    whole span from its opener to its closer)."""

    def __init__(self, uops: list[UOp]) -> None:
        self.uops = uops
        self.pos = pos = {u: i for i, u in enumerate(uops)}
        self.owner: list[int] = []
        self.items: dict[int, list[tuple[int, int]]] = {-1: []}
        self.gates: dict[int, UOp | None] = {-1: None}  # an IF block's condition
        self.parent: dict[int, int] = {-1: -1}
        stack = [-1]
        for i, u in enumerate(uops):
            opened = _closer_of(u)
            if opened is not None:
                start = pos[opened]
                stack.pop()
                self.owner.append(stack[-1])
                self.items[stack[-1]].append((start, i))
                continue
            self.owner.append(stack[-1])
            if u.op in _OPENERS:
                self.parent[i] = stack[-1]
                self.items[i] = []
                self.gates[i] = u.src[0] if u.op is Ops.IF else None
                stack.append(i)
            else:
                self.items[stack[-1]].append((i, i))

    def span_gate(self, start: int, stop: int) -> UOp | None:
        """The condition ``g`` when the loop spanning ``[start, stop]`` does all its stores
        inside IF(g) blocks, ``g`` computed before the loop and no BARRIER in it: the whole
        loop may go under one IF(g) instead."""
        uops = self.uops
        if uops[start].op is not Ops.RANGE:
            return None
        gate: UOp | None = None
        for p in range(start + 1, stop):
            u = uops[p]
            if u.op is Ops.BARRIER:
                return None
            if u.op is not Ops.STORE:
                continue
            g = self._enclosing_if_gate(p, start)
            if g is None or (gate is not None and g is not gate):
                return None
            gate = g
        if gate is None or self.position(gate) > start:
            return None
        return gate

    def _enclosing_if_gate(self, p: int, limit: int) -> UOp | None:
        """The condition of the outermost IF around position ``p`` inside position ``limit``."""
        found: UOp | None = None
        block = self.owner[p]
        while block > limit:
            if self.gates.get(block) is not None:
                found = self.gates[block]
            block = self.parent[block]
        return found

    def position(self, u: UOp) -> int:
        """Where ``u`` is in the program (-1: not in it)."""
        return self.pos.get(u, -1)

    def under_gate(self, block: int, gate: UOp) -> bool:
        """``block`` is (inside) an IF on ``gate``."""
        while block != -1:
            if self.gates.get(block) is gate:
                return True
            block = self.parent[block]
        return False


def _gate_of_store(u: UOp) -> UOp | None:
    if u.op is not Ops.STORE or len(u.src[0].src) != 3:
        return None
    gate = u.src[0].src[2]
    return gate if gate.dtype == dtypes.bool and gate.op is not Ops.CONST else None


def _effects(nodes: list[UOp]) -> tuple[set[UOp], set[UOp], bool]:
    """(buffers read, buffers written, has a BARRIER) of ``nodes``."""
    reads: set[UOp] = set()
    writes: set[UOp] = set()
    barrier = False
    for u in nodes:
        if u.op is Ops.LOAD:
            reads.add(_base(u.src[0].src[0]))
        elif u.op is Ops.STORE:
            writes.add(_base(u.src[0].src[0]))
        barrier = barrier or u.op is Ops.BARRIER
    return reads, writes, barrier


def _conflict(a: tuple[set[UOp], set[UOp], bool], b: tuple[set[UOp], set[UOp], bool]) -> bool:
    (ra, wa, ba), (rb, wb, bb) = a, b
    if wa & (rb | wb) or wb & ra:
        return True
    local = any(x.op is Ops.DEFINE_LOCAL for x in ra | wa | rb | wb)
    return local and (ba or bb)


class _Group:
    """One candidate IF: the stores of ``block`` gated by ``gate``."""

    def __init__(self, blocks: _Blocks, users: list[list[int]], block: int, gate: UOp) -> None:
        self.blocks, self.users, self.block, self.gate = blocks, users, block, gate
        self.items = blocks.items[block]
        self.item_of: dict[int, int] = {}
        for k, (start, stop) in enumerate(self.items):
            for p in range(start, stop + 1):
                self.item_of[p] = k

    def _joins(self, k: int, inside: set[int]) -> bool:
        """Item ``k`` may move into the IF: it is one of the gated stores or is used at all
        (not an effect of its own), and every use of it is already inside."""
        start, stop = self.items[k]
        nodes = self.blocks.uops[start : stop + 1]
        if nodes[0].op in _STAY or nodes[0] is self.gate or any(u.op is Ops.BARRIER for u in nodes):
            return False
        outside = [
            q for p in range(start, stop + 1) for q in self.users[p] if not start <= q <= stop
        ]
        gated = self.gate_of(k) is self.gate
        return (gated or bool(outside)) and all(self.item_of.get(q, -1) in inside for q in outside)

    def members(self) -> set[int]:
        """The items that go under the IF: the gated stores and what only they use."""
        inside: set[int] = set()
        for k in range(len(self.items) - 1, -1, -1):
            if self._joins(k, inside):
                inside.add(k)
        if not any(self.gate_of(k) is self.gate for k in inside):
            return set()
        return inside

    def gate_of(self, k: int) -> UOp | None:
        """The condition item ``k`` is gated by as a whole (a gated store, or a loop whose
        stores are all under IF(g)), else None."""
        start, stop = self.items[k]
        if start == stop:
            return _gate_of_store(self.blocks.uops[start])
        return self.blocks.span_gate(start, stop)

    def order(self, inside: set[int]) -> list[int] | None:
        """The block's items with ``inside`` moved together (after the others of their span),
        or None when that would reorder conflicting memory accesses."""
        first, last = min(inside), max(inside)
        span = range(first, last + 1)
        uops = self.blocks.uops
        effects = {k: _effects(uops[self.items[k][0] : self.items[k][1] + 1]) for k in span}
        for b in span:
            if b in inside:
                continue
            if any(_conflict(effects[a], effects[b]) for a in inside if a < b):
                return None
        rest = [k for k in span if k not in inside]
        return [*range(first), *rest, -1, *sorted(inside), -2, *range(last + 1, len(self.items))]


def _worth_it(group: _Group, inside: set[int]) -> bool:
    """More than the stores and their indexes move: there is work to skip."""
    uops = group.blocks.uops
    stores = [k for k in inside if group.gate_of(k) is group.gate]
    work = [
        k
        for k in inside
        if uops[group.items[k][0]].op not in (Ops.STORE, Ops.INDEX)
        or group.items[k][0] != group.items[k][1]
    ]
    return bool(work) or len(stores) > 1


def _strip_gates(body: list[UOp], gate: UOp, present: set[UOp]) -> dict[UOp, UOp]:
    """Replacements for the nodes of an IF(gate) body: accesses gated by ``gate`` ungated
    (none when a rebuilt node would equal a node the program has elsewhere)."""
    new: dict[UOp, UOp] = {}
    for u in body:
        srcs = tuple(new.get(s, s) for s in u.src)
        if u.op is Ops.INDEX and len(u.src) == 3 and u.src[2] is gate:
            srcs = srcs[:2]
        if (
            u.op is Ops.LOAD
            and len(u.src) == 2
            and srcs[0] is not u.src[0]
            and len(srcs[0].src) == 2
        ):
            srcs = srcs[:1]
        if srcs != u.src:
            v = u.replace(src=srcs)
            if v in present:
                return {}
            new[u] = v
    return new


def _form_if(uops: list[UOp], group: _Group, order: list[int], serial: int) -> list[UOp]:
    """``uops`` with ``group``'s block reordered as ``order`` (-1: IF, -2: ENDIF)."""
    items = group.items
    lo, hi = items[0][0], items[-1][1]
    inside = order[order.index(-1) + 1 : order.index(-2)]
    body = [u for k in inside for u in uops[items[k][0] : items[k][1] + 1]]
    opener = UOp(Ops.IF, dtypes.void, (group.gate,), serial)
    new = _strip_gates(body, group.gate, set(uops))
    block: list[UOp] = []
    for k in order:
        if k < 0:
            block.append(opener if k == -1 else UOp(Ops.ENDIF, dtypes.void, (opener,)))
        else:
            block.extend(uops[items[k][0] : items[k][1] + 1])
    return [new.get(u, u) for u in (*uops[:lo], *block, *uops[hi + 1 :])]


def _candidates(blocks: _Blocks) -> list[tuple[int, UOp]]:
    found: dict[tuple[int, UOp], None] = {}
    for i, u in enumerate(blocks.uops):
        gate = _gate_of_store(u)
        if u.op is Ops.END:
            start = blocks.position(u.src[0])
            gate = blocks.span_gate(start, i)
        if gate is not None and not blocks.under_gate(blocks.owner[i], gate):
            found[(blocks.owner[i], gate)] = None
    return list(found)


def _drop_nested_ifs(uops: list[UOp]) -> list[UOp]:
    """IF/ENDIF pairs inside an IF on the same condition removed (the outer one decides)."""
    stack: list[UOp] = []
    dropped: set[UOp] = set()
    out = []
    for u in uops:
        if u.op is Ops.IF:
            if any(x.src[0] is u.src[0] for x in stack):
                dropped.add(u)
            stack.append(u)
        elif u.op is Ops.ENDIF:
            stack.pop()
        if u not in dropped and not (u.op is Ops.ENDIF and u.src[0] in dropped):
            out.append(u)
    return out


def add_if_blocks(uops: list[UOp]) -> list[UOp]:
    """``uops`` (a linear program) with IF blocks around gated stores and their work."""
    if all(_gate_of_store(u) is None for u in uops):
        return uops
    tried: set[tuple[UOp, UOp]] = set()
    serial = sum(u.op is Ops.IF for u in uops)
    while True:
        blocks = _Blocks(uops)
        pos = {u: i for i, u in enumerate(uops)}
        users: list[list[int]] = [[] for _ in uops]
        for i, u in enumerate(uops):
            for s in u.src:
                if s in pos:
                    users[pos[s]].append(i)
        for block, gate in _candidates(blocks):
            key = (uops[block] if block >= 0 else UOp(Ops.NOOP), gate)
            if key in tried:
                continue
            tried.add(key)
            group = _Group(blocks, users, block, gate)
            inside = group.members()
            order = group.order(inside) if inside and _worth_it(group, inside) else None
            if order is not None:
                serial += 1
                uops = _drop_nested_ifs(_form_if(uops, group, order, serial))
                break
        else:
            return uops


def if_blocks(linear: UOp, ctx: LowerContext) -> UOp:
    """The stage: ``add_if_blocks`` on the LINEAR program."""
    uops = add_if_blocks(list(linear.src))
    return linear if tuple(uops) == linear.src else UOp(Ops.LINEAR, src=tuple(uops))
