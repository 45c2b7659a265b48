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
from collections.abc import Collection
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
    """The call graph (``_edges``) as it is while calls are merged."""

    preds: dict[int, set[int]]
    succs: dict[int, set[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.succs = {cid: set() for cid in self.preds}
        for cid, before in self.preds.items():
            for b in before:
                self.succs[b].add(cid)

    def copy(self) -> _Graph:
        """An independent copy (to plan merges on)."""
        return _Graph({cid: set(before) for cid, before in self.preds.items()})

    def acyclic_as_one(self, members: list[int]) -> bool:
        """True when ``members`` as one call leave the graph acyclic: no path leaves them and
        comes back."""
        inside = set(members)
        todo = [s for m in members for s in self.succs[m] if s not in inside]
        seen = set(todo)
        while todo:
            for s in self.succs[todo.pop()]:
                if s in inside:
                    return False
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return True

    def merge(self, keep: int, gone: int) -> None:
        """``gone`` becomes part of ``keep``."""
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


def _merge_related(
    kz: Kernelizer, graph: _Graph, members: list[int], level: dict[int, int], outputs: set[UOp]
) -> None:
    """Plan clusters with the checks that need no lowering (on a copy of the graph), then
    lower each cluster once; a cluster whose kernel isn't allowed merges one call at a time."""
    plan = graph.copy()
    clusters: list[_Cluster] = []
    for cid in members:
        call = kz.calls[cid]
        bufs, writes = _buffers(call), {b for b, _ in call.writes}
        read = {b for b, _ in call.reads}
        tries = 0
        for cl in reversed(clusters):
            related = (
                any(m in call.deps for m in cl.members)
                or bufs & cl.buffers
                or level[cid] in cl.levels
            )
            if not related or writes & cl.writes:
                continue
            if tries == MAX_TRIES:
                break
            tries += 1
            if not plan.acyclic_as_one([cl.members[0], cid]):
                continue
            if _reads_dead_end(kz, cl.members, cid, read, outputs):
                continue  # merged, an intermediate's buffer would be stored and never read
            plan.merge(cl.members[0], cid)
            cl.members.append(cid)
            cl.buffers |= bufs
            cl.writes |= writes
            cl.levels.add(level[cid])
            break
        else:
            clusters.append(_Cluster([cid], bufs, writes, {level[cid]}))
    for cl in clusters:
        if len(cl.members) > 1:
            _merge_cluster(kz, graph, cl.members)


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
    kz: Kernelizer, cluster: list[int], cid: int, read: set[UOp], outputs: set[UOp]
) -> bool:
    """True when call ``cid`` reads an intermediate root of the ``cluster``'s calls (computed
    into a buffer of its own, not an output) that no call outside them reads: merged, ``cid``
    would compute it inline and its buffer would be stored and never read."""
    inside = {*cluster, cid}
    for r in (r for m in cluster for r in kz.calls[m].roots):
        if kz.kinds[r] is not Kind.COMPUTE or r in outputs:
            continue
        buf = base_buffer(kz.views[r])
        if buf in read and not any(
            other not in inside and any(b is buf for b, _ in c.reads)
            for other, c in kz.calls.items()
        ):
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


def _toposort(edges: dict[int, set[int]]) -> list[int]:
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
    if len(out) != len(edges):
        raise ScheduleError(
            "order: a call reads both the old and the new value of an assigned buffer"
        )
    return out
