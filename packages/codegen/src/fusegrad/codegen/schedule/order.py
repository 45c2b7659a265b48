"""Multi-output merging and execution order of the calls.

* **Merge**: kernels that loop over the same iteration space (one device, one stored shape)
  become one kernel with a STORE per output (``merge_outputs``):

  - elementwise kernels (no reduction), computes and assigns alike, when they are related
    (one reads another's result, they share a buffer, or they sit at the same dependency
    level). A kernel reading another member's result computes it inline, which is allowed
    only at the index that member stores (so each value is computed once, and an assign's
    value is read before its own store overwrites it), and only for results whose buffers
    outlive the kernel anyway (assigns, the schedule's outputs, intermediates a third kernel
    reads): an intermediate merged into its only reader would be stored and never read.
    Every load of a buffer the merged kernel stores to must read the index stored and feed
    that store (it then runs before the store), no buffer is stored twice, and merging must
    not close a cycle in the call graph (read-after-write, write-after-read and
    write-after-write edges). An optimizer step's ``param``, ``m`` and ``v`` updates become
    one kernel this way.
  - kernels with reductions at the same dependency level that read no buffer a call
    writes in place (two sums of one input). Matmuls stay alone, and reductions stay apart
    from elementwise kernels: a matmul's kernel keeps its one STORE, which the tiling
    optimizer needs (three projections of one input merged ran at half the speed).
* **Order**: a topological order of the calls (stable: creation order breaks ties) over two
  kinds of edges: read-after-write (a call reads another's result) and write-after-read
  (every reader of a buffer version runs before the call overwriting that version).
"""

from __future__ import annotations

import heapq
import itertools
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.opt.analysis import matmul_shape
from fusegrad.codegen.schedule.indexing import TRUE
from fusegrad.codegen.schedule.kernelize import (
    Call,
    Kernelizer,
    Version,
    base_buffer,
    output_ranges,
)
from fusegrad.codegen.schedule.rangeify import ScheduleError
from fusegrad.codegen.schedule.realize import Kind
from fusegrad.uop import Ops, UOp

MAX_TRIES = 4  # merge attempts (each lowers a kernel) per call before it stays alone


def _levels(calls: dict[int, Call]) -> dict[int, int]:
    level: dict[int, int] = {}
    for cid in sorted(calls):
        level[cid] = 1 + max((level[d] for d in calls[cid].deps), default=-1)
    return level


def _edges(calls: dict[int, Call]) -> dict[int, set[int]]:
    """call id -> the ids of the calls that must run before it."""
    edges: dict[int, set[int]] = {cid: set(c.deps) for cid, c in calls.items()}
    writers: dict[tuple[UOp, Version], list[int]] = defaultdict(list)
    for cid in sorted(calls):
        for w in calls[cid].writes:
            writers[w].append(cid)
    for ids in writers.values():
        for first, second in itertools.pairwise(ids):
            edges[second].add(first)  # two writes of one version: in program order
    for cid, c in calls.items():
        for r in c.reads:
            for writer in writers.get(r, ()):
                if writer != cid:
                    edges[writer].add(cid)  # the overwrite waits for this read
    return edges


def _has_reduce(call: Call) -> bool:
    return any(u.op is Ops.REDUCE for u in call.ast.toposort())


def _buffers(call: Call) -> set[UOp]:
    return {b for b, _ in call.reads} | {b for b, _ in call.writes}


@dataclass
class _Graph:
    """The call graph (``_edges``) as it is while calls are merged, with a topological order
    kept through the merges: a path only climbs in ``pos``, so the cycle check of a merge
    walks no further than its members' positions (a chain of n kernels would make merging
    quadratic otherwise). ``pos`` is empty where the graph has a cycle: no pruning then."""

    preds: dict[int, set[int]]
    succs: dict[int, set[int]] = field(default_factory=dict)
    order: list[int | None] = field(default_factory=list)  # None: a merged call's old slot
    pos: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.succs = {cid: set() for cid in self.preds}
        for cid, before in self.preds.items():
            for b in before:
                self.succs[b].add(cid)
        if not self.order:
            self._sort()

    def _sort(self) -> None:
        """A topological order from scratch (none where the graph has a cycle)."""
        found = _toposort(self.preds, strict=False)
        if len(found) == len(self.preds):
            self.order = list(found)
            self.pos = {cid: i for i, cid in enumerate(found)}

    def copy(self) -> _Graph:
        """An independent copy (to plan merges on)."""
        preds = {cid: set(before) for cid, before in self.preds.items()}
        return _Graph(preds, order=list(self.order), pos=dict(self.pos))

    def acyclic_as_one(self, members: list[int]) -> bool:
        """True when ``members`` as one call leave the graph acyclic: no path leaves them and
        comes back."""
        if not self.pos:
            self._sort()  # after a merge whose parts alone closed a cycle (see ``_reorder``)
        inside = set(members)
        limit = max(self.pos[m] for m in members) if self.pos else len(self.preds)
        todo = [s for m in members for s in self.succs[m] if s not in inside]
        seen = set(todo)
        while todo:
            node = todo.pop()
            if self.pos and self.pos[node] > limit:
                continue  # after every member: no path from it reaches one
            for s in self.succs[node]:
                if s in inside:
                    return False
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return True

    def merge(self, keep: int, gone: int) -> None:
        """``gone`` becomes part of ``keep`` (the two as one call leave the graph acyclic)."""
        for p in self.preds.pop(gone):
            self.succs[p].discard(gone)
            if p != keep:
                self.succs[p].add(keep)
                self.preds[keep].add(p)
        for s in self.succs.pop(gone):
            self.preds[s].discard(gone)
            if s != keep:
                self.preds[s].add(keep)
                self.succs[keep].add(s)
        self.preds[keep].discard(gone)
        self.succs[keep].discard(gone)
        if self.pos:
            self._reorder(keep, gone)

    def _reorder(self, keep: int, gone: int) -> None:
        """A topological order again after merging: only the calls between the two merged
        ones move (edges to calls outside that window already point the right way). A cluster
        merges one call at a time, and two of its calls may close a cycle the rest of it
        opens again: then the order is dropped, and sorted again when next needed."""
        a, b = sorted((self.pos.pop(gone), self.pos[keep]))
        window = [c for c in self.order[a : b + 1] if c is not None and c != gone]
        inside = set(window)
        waiting = {c: len(self.preds[c] & inside) for c in window}
        ready = [(self.pos[c], c) for c in window if waiting[c] == 0]
        heapq.heapify(ready)
        out: list[int] = []
        while ready:
            _, c = heapq.heappop(ready)
            out.append(c)
            for s in self.succs[c] & inside:
                waiting[s] -= 1
                if waiting[s] == 0:
                    heapq.heappush(ready, (self.pos[s], s))
        if len(out) != len(window):
            self.order, self.pos = [], {}
            return
        self.order[a : b + 1] = [*out, *([None] * (b + 1 - a - len(out)))]
        self.pos.update((c, a + i) for i, c in enumerate(out))


def merge_outputs(kz: Kernelizer, outputs: Collection[UOp] = ()) -> None:
    """Merge kernels that can share loops (see the module docstring); ``outputs``: the
    schedule's outputs (their buffers are kept, so a kernel may compute them inline)."""
    level = _levels(kz.calls)
    written = {buf for c in kz.calls.values() for buf, _ in c.writes}
    graph = _Graph(_edges(kz.calls))
    by_level: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    elementwise: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for cid, c in sorted(kz.calls.items()):
        if c.kind not in (Kind.COMPUTE, Kind.ASSIGN):
            continue
        target = kz.stored(c.roots[0])[0]
        space = (target.device, target.shape)
        if not _has_reduce(c):
            elementwise[space].append(cid)
        elif (
            c.kind is Kind.COMPUTE
            and not any(buf in written for buf, _ in c.reads)
            and matmul_shape(c.ast) is None
        ):
            by_level[(level[cid], *space)].append(cid)
    for members in by_level.values():
        if len(members) > 1:
            _merge_level(kz, graph, members)
    for members in elementwise.values():
        if len(members) > 1:
            _merge_related(kz, graph, members, level, set(outputs))


def _merge_level(kz: Kernelizer, graph: _Graph, members: list[int]) -> None:
    roots = [r for cid in members for r in kz.calls[cid].roots]
    ast, ctx = kz.rangeify(roots)
    cap = kz.cap(roots[0].device)
    if (cap is not None and len(ctx.params) > cap) or kz.stale_reads(roots, ctx):
        return
    _commit(kz, graph, members, kz.make_call(ast, ctx, roots, Kind.COMPUTE))


@dataclass
class _Cluster:
    """Calls planned to become one (the first id is the merged call's)."""

    members: list[int]
    buffers: set[UOp]  # read or written
    writes: set[UOp]  # written in place
    levels: set[int]


@dataclass
class _Plan:
    """The clusters planned so far, indexed by member, buffer and level, so a call's related
    clusters are found without a look at every other cluster (a chain of n kernels would
    make the planning quadratic)."""

    clusters: list[_Cluster] = field(default_factory=list)
    of_call: dict[int, int] = field(default_factory=dict)
    of_buffer: dict[UOp, set[int]] = field(default_factory=lambda: defaultdict(set))
    of_level: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))

    def related(self, call: Call, bufs: set[UOp], level: int) -> list[int]:
        """Indices of the clusters holding a call ``call`` reads from, sharing a buffer with
        it or at its level: newest first."""
        found = {self.of_call[d] for d in call.deps if d in self.of_call}
        found.update(self.of_level.get(level, ()))
        for b in bufs:
            found.update(self.of_buffer.get(b, ()))
        return sorted(found, reverse=True)

    def add(self, i: int, cid: int, bufs: set[UOp], writes: set[UOp], level: int) -> None:
        """Call ``cid`` joins cluster ``i`` (a new one when ``i`` is the cluster count)."""
        if i == len(self.clusters):
            self.clusters.append(_Cluster([], set(), set(), set()))
        cl = self.clusters[i]
        cl.members.append(cid)
        cl.buffers |= bufs
        cl.writes |= writes
        cl.levels.add(level)
        self.of_call[cid] = i
        self.of_level[level].add(i)
        for b in bufs:
            self.of_buffer[b].add(i)


def _merge_related(
    kz: Kernelizer, graph: _Graph, members: list[int], level: dict[int, int], outputs: set[UOp]
) -> None:
    """Plan clusters with the checks that need no lowering (on a copy of the graph), then
    lower each cluster once; a cluster whose kernel isn't allowed merges one call at a time."""
    graph_plan, plan = graph.copy(), _Plan()
    readers: dict[UOp, set[int]] = defaultdict(set)
    for other, c in kz.calls.items():
        for b, _ in c.reads:
            readers[b].add(other)
    for cid in members:
        call = kz.calls[cid]
        bufs, writes = _buffers(call), {b for b, _ in call.writes}
        related = plan.related(call, bufs, level[cid])
        chosen = len(plan.clusters)
        for i in _candidates(plan, related, writes):
            cl = plan.clusters[i]
            if not graph_plan.acyclic_as_one([cl.members[0], cid]):
                continue
            if _reads_dead_end(kz, cl.members, cid, outputs, readers):
                continue  # merged, an intermediate's buffer would be stored and never read
            graph_plan.merge(cl.members[0], cid)
            chosen = i
            break
        plan.add(chosen, cid, bufs, writes, level[cid])
    for cl in plan.clusters:
        if len(cl.members) > 1:
            _merge_cluster(kz, graph, cl.members)


def _candidates(plan: _Plan, related: list[int], writes: set[UOp]) -> list[int]:
    """The first ``MAX_TRIES`` of the ``related`` clusters that write none of ``writes``."""
    return [i for i in related if not writes & plan.clusters[i].writes][:MAX_TRIES]


def _merge_cluster(kz: Kernelizer, graph: _Graph, members: list[int]) -> None:
    if graph.acyclic_as_one(members):
        merged = _try_lower(kz, [kz.calls[m] for m in members])
        if merged is not None:
            _commit(kz, graph, members, merged)
            return
    keep = members[0]
    for cid in members[1:]:
        if graph.acyclic_as_one([keep, cid]):
            merged = _try_lower(kz, [kz.calls[keep], kz.calls[cid]])
            if merged is not None:
                _commit(kz, graph, [keep, cid], merged)


def _reads_dead_end(
    kz: Kernelizer,
    cluster: list[int],
    cid: int,
    outputs: set[UOp],
    readers: Mapping[UOp, set[int]],
) -> bool:
    """True when call ``cid`` reads an intermediate root of the ``cluster``'s calls (computed
    into a buffer of its own, not an output) that no call outside them reads (``readers``:
    buffer -> the calls reading it): merged, ``cid`` would compute it inline and its buffer
    would be stored and never read."""
    inside = {*cluster, cid}
    for r in (r for m in cluster for r in kz.calls[m].roots):
        if kz.kinds[r] is not Kind.COMPUTE or r in outputs:
            continue
        buf = base_buffer(kz.views[r])
        if cid in readers.get(buf, ()) and readers[buf] <= inside:
            return True
    return False


def _try_lower(kz: Kernelizer, calls: list[Call]) -> Call | None:
    """The kernel computing the roots of ``calls`` together, or None where it is not allowed
    (see the module docstring)."""
    roots = [r for c in calls for r in c.roots]
    ast, ctx = kz.rangeify(roots)
    if ctx.inline_failed:
        return None
    idx, _ = output_ranges(kz.stored(roots[0])[0].shape)
    if any(i != idx or gate is not TRUE for _, i, gate in ctx.root_reads):
        return None  # a root read at another index: computed twice, or after its store
    cap = kz.cap(roots[0].device)
    if (cap is not None and len(ctx.params) > cap) or kz.stale_reads(roots, ctx):
        return None
    if not _stores_safe(ast, ctx.params):
        return None
    kind = Kind.ASSIGN if any(c.kind is Kind.ASSIGN for c in calls) else Kind.COMPUTE
    merged = kz.make_call(ast, ctx, roots, kind)
    ids = {c.id for c in calls}
    for c in calls:
        merged.writes |= c.writes
        merged.deps |= c.deps
    merged.deps -= ids
    return merged


def _stores_safe(ast: UOp, params: dict[UOp, UOp]) -> bool:
    """True when every buffer the kernel stores to is stored once, read only at the stored
    index and only by that store's value (so the load runs first), and not read through a
    view of another dtype."""
    stores: dict[UOp, UOp] = {}
    for u in ast.toposort():
        if u.op is Ops.STORE:
            buf = u.src[0].src[0]
            if buf in stores:
                return False
            stores[buf] = u
    stored_params = set(stores)
    stored = {buf for buf, param in params.items() if param in stored_params}
    if any(b.op is Ops.BUFFER_VIEW and b.src[0] in stored for b in params):
        return False  # a view of another dtype aliases a stored buffer
    fed: dict[UOp, set[UOp]] = {}
    for u in ast.toposort():
        if u.op is not Ops.LOAD or u.src[0].src[0] not in stored_params:
            continue
        store = stores[u.src[0].src[0]]
        if u.src[0] is not store.src[0]:
            return False
        if store not in fed:
            fed[store] = set(store.src[1].toposort())
        if u not in fed[store]:
            return False
    return True


def _commit(kz: Kernelizer, graph: _Graph, members: list[int], merged: Call) -> None:
    keep = members[0]
    merged.id = keep
    for cid in members:
        del kz.calls[cid]
    kz.add_call(merged)
    gone = set(members[1:])
    for cid in gone:
        graph.merge(keep, cid)
    for c in kz.calls.values():
        if c.deps & gone:
            c.deps = (c.deps - gone) | {keep}
    merged.deps.discard(keep)


def execution_order(calls: dict[int, Call]) -> list[Call]:
    """The calls in an order that respects read-after-write and write-after-read."""
    return [calls[cid] for cid in _toposort(_edges(calls))]


def _toposort(edges: dict[int, set[int]], strict: bool = True) -> list[int]:
    """The ids of ``edges`` (id -> ids before it) in a topological order, the lowest ready id
    first; ``strict``: a cycle raises (else the ids outside cycles come back)."""
    users: dict[int, list[int]] = defaultdict(list)
    waiting = {cid: len(before) for cid, before in edges.items()}
    for cid, before in edges.items():
        for b in before:
            users[b].append(cid)
    ready = [cid for cid, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out: list[int] = []
    while ready:
        cid = heapq.heappop(ready)
        out.append(cid)
        for u in users[cid]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    if strict and len(out) != len(edges):
        raise ScheduleError(
            "order: a call reads both the old and the new value of an assigned buffer"
        )
    return out
