"""Multi-output merging and execution order of the calls.

* **Merge**: compute kernels of one device and output shape at the same dependency level
  (so neither reads the other) share their loops: one kernel with a STORE per output. Kernels
  that read a buffer some call of the schedule writes in place stay alone, so merging never
  has to reason about write-after-read order.
* **Order**: a topological order of the calls (stable: creation order breaks ties) over two
  kinds of edges: read-after-write (a call reads another's result) and write-after-read
  (every reader of a buffer version runs before the call overwriting that version).
"""

from __future__ import annotations

import heapq
import itertools
from collections import defaultdict
from typing import Any

from fusegrad.codegen.schedule.kernelize import Call, Kernelizer, Version
from fusegrad.codegen.schedule.rangeify import ScheduleError
from fusegrad.codegen.schedule.realize import Kind
from fusegrad.uop import UOp


def _levels(calls: dict[int, Call]) -> dict[int, int]:
    level: dict[int, int] = {}
    for cid in sorted(calls):
        level[cid] = 1 + max((level[d] for d in calls[cid].deps), default=-1)
    return level


def merge_outputs(kz: Kernelizer) -> None:
    """Merge compute kernels that can share loops (see the module docstring)."""
    written = {buf for c in kz.calls.values() for buf, _ in c.writes}
    level = _levels(kz.calls)
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for cid, c in kz.calls.items():
        if c.kind is not Kind.COMPUTE or any(buf in written for buf, _ in c.reads):
            continue
        root = c.roots[0]
        groups[(level[cid], root.device, root.shape)].append(cid)
    for members in groups.values():
        if len(members) > 1:
            _merge(kz, members)


def _merge(kz: Kernelizer, members: list[int]) -> None:
    roots = [r for cid in members for r in kz.calls[cid].roots]
    merged = kz.lower(roots, Kind.COMPUTE, split=False)
    cap = kz.cap(roots[0].device)
    if cap is not None and len(merged.buffers) > cap:
        return
    merged.id = members[0]
    for cid in members:
        del kz.calls[cid]
    kz.add_call(merged)
    gone = set(members[1:])
    for c in kz.calls.values():
        if c.deps & gone:
            c.deps = (c.deps - gone) | {merged.id}


def execution_order(calls: dict[int, Call]) -> list[Call]:
    """The calls in an order that respects read-after-write and write-after-read."""
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
    return [calls[cid] for cid in _toposort(edges)]


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
