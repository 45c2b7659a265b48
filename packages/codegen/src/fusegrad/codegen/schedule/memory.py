"""The memory planner: intermediate buffers whose lifetimes don't overlap share an arena.

A buffer's lifetime is the span of calls from the first to the last that use it. Buffers
are placed, in order of first use, at the lowest offset of their device's arena that no
live buffer occupies (first fit); a buffer is free again after its last use. Each placed
buffer becomes ``BUFFER_VIEW(arena, dtype=T, arg=(size, offset))`` — ``size`` in elements of
``T``, ``offset`` in elements of ``T`` from the arena's start (byte offset ``offset *
T.itemsize``, a multiple of ``ALIGN``). The arena is a ``uint8`` BUFFER of the plan's peak
bytes. Only buffers the schedule itself created for intermediates are planned: outputs,
assign targets and the caller's buffers never are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.uop import Ops, UOp, dtypes, round_up

ALIGN = 256  # bytes: every placed buffer starts at a multiple of this


@dataclass
class MemoryPlan:
    """Where each planned buffer lives: ``views`` maps the logical BUFFER to its
    BUFFER_VIEW into ``arenas`` (one uint8 BUFFER per device)."""

    views: dict[UOp, UOp] = field(default_factory=dict)
    arenas: list[UOp] = field(default_factory=list)
    planned_bytes: int = 0  # what the planned buffers would take unshared
    arena_bytes: int = 0  # what they take in the arenas


def _nbytes(buf: UOp) -> int:
    return int(buf.arg) * buf.dtype.itemsize


def _lifetimes(uses: Sequence[Iterable[UOp]], planned: set[UOp]) -> dict[UOp, list[int]]:
    span: dict[UOp, list[int]] = {}
    for step, bufs in enumerate(uses):
        for used in bufs:
            b = used.src[0] if used.op is Ops.BUFFER_VIEW else used  # a bitcast's view: its buffer
            if b in planned:
                span.setdefault(b, [step, step])[1] = step
    return span


def _first_fit(live: list[tuple[int, int, int]], nbytes: int) -> int:
    """The lowest offset where ``nbytes`` fit between the live (offset, end, last) blocks."""
    offset = 0
    for start, end, _ in sorted(live):
        if offset + nbytes <= start:
            return offset
        offset = max(offset, end)
    return offset


def plan_memory(uses: Sequence[Iterable[UOp]], planned: set[UOp]) -> MemoryPlan:
    """Place ``planned`` buffers into per-device arenas; ``uses[i]``: the buffers call ``i``
    (in execution order) reads or writes."""
    span = _lifetimes(uses, planned)
    by_device: dict[Any, list[UOp]] = defaultdict(list)
    for b in sorted(span, key=lambda b: span[b][0]):
        by_device[b.src[1].arg].append(b)
    plan = MemoryPlan()
    for device, bufs in by_device.items():
        offsets: dict[UOp, int] = {}
        live: list[tuple[int, int, int]] = []  # (offset, end, last use)
        peak = 0
        for b in bufs:
            first, last = span[b]
            live = [blk for blk in live if blk[2] >= first]
            size = round_up(max(_nbytes(b), 1), ALIGN)
            offsets[b] = _first_fit(live, size)
            live.append((offsets[b], offsets[b] + size, last))
            peak = max(peak, offsets[b] + size)
        unique = UOp(Ops.UNIQUE, arg=("arena", len(plan.arenas)))
        arena = UOp(Ops.BUFFER, dtypes.uint8, (unique, UOp(Ops.DEVICE, arg=device)), peak)
        plan.arenas.append(arena)
        plan.arena_bytes += peak
        for b, off in offsets.items():
            plan.planned_bytes += _nbytes(b)
            view_arg = (b.arg, off // b.dtype.itemsize)
            plan.views[b] = UOp(Ops.BUFFER_VIEW, b.dtype, (arena,), view_arg)
    return plan
