"""LINEARs of CALLs as data: graph calls, their splitting, pruning, and running them.

A schedule (``Tensor.linear_with_vars``, ``schedule_linear``) is a LINEAR of CALLs:
``CALL(kernel AST, *buffers, *bound Variables)`` and ``CALL(COPY(nbytes), dst, src)``. A
*graph call* is one more form: ``CALL(LINEAR(*kernel CALLs), *buffers, *bound Variables)``,
the kernels of one device run as one device-graph submission (one ring write, one signal,
one ``ProfileGraphEvent`` under ``PROFILE=1``). Its buffers are those of its kernels in the
order they are first used, and its Variables those they take, so every walk that reads a
CALL's sources (buffers, ``bound_values``) reads a graph call the same way.

``create_graph_call`` makes one; ``graph_split_rewrite`` turns runs of a LINEAR's kernels
into them; ``prune_linear`` splits a LINEAR into the CALLs to run every time and those to
run once; ``LinearLaunch`` compiles a LINEAR with graph calls and launches it (the plain
CALLs as the engine's plans, each graph call as a plan of its own launched through the
device's graph).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fusegrad.engine.buffers import buffer_device, runtime_buffer, share
from fusegrad.engine.plan import BUFFER_OPS, LaunchPlan, bound_values, calls_plan, run_plan
from fusegrad.runtime import Device
from fusegrad.uop import Ops, UOp, dtypes
from fusegrad.uop.ops import CallInfo

GRAPH = CallInfo(name="graph")
"""The arg of a graph call (``CallInfo.of(call).name == "graph"``)."""


def is_graph_call(call: UOp) -> bool:
    """Whether ``call`` is a graph call (a CALL of a LINEAR of kernel CALLs)."""
    return call.op is Ops.CALL and call.src[0].op is Ops.LINEAR


def is_kernel_call(call: UOp) -> bool:
    """Whether ``call`` runs one kernel AST (not a copy, not a graph call)."""
    return call.op is Ops.CALL and call.src[0].op is Ops.SINK


def call_buffers(call: UOp) -> list[UOp]:
    """The BUFFER/BUFFER_VIEW sources of a CALL, in order."""
    return [s for s in call.src[1:] if s.op in BUFFER_OPS]


def call_device(call: UOp) -> str:
    """The device a CALL runs on (a copy's: its destination's)."""
    bufs = call_buffers(call)
    if not bufs:
        raise ValueError(f"call_device: the CALL of {call.src[0].op!r} has no buffer")
    return buffer_device(bufs[0])


def _bound_variables(call: UOp) -> list[UOp]:
    return [s for s in call.src[1:] if s.op is Ops.AFTER and s.is_bound_var]


def create_graph_call(batch: list[UOp]) -> UOp:
    """One CALL running the kernel CALLs of ``batch`` (all on one device, in order) as one
    device-graph submission: ``CALL(LINEAR(*batch), *buffers, *bound Variables)``.

    >>> from fusegrad import Tensor
    >>> linear = ((Tensor([1.0, 2.0]) * 2).contiguous() + 1).schedule_linear()
    >>> call = create_graph_call(list(linear.src))
    >>> call.src[0].src == linear.src, len(call_buffers(call))
    (True, 3)
    """
    if not batch:
        raise ValueError("create_graph_call: the batch is empty")
    for c in batch:
        if not is_kernel_call(c):
            what = c.src[0].op if c.op is Ops.CALL else c.op
            raise ValueError(f"create_graph_call: a batch holds kernel CALLs only, got {what!r}")
    devices = sorted({call_device(c) for c in batch})
    if len(devices) != 1:
        raise ValueError(f"create_graph_call: the batch's kernels run on {devices}, not one device")
    bufs = dict.fromkeys(b for c in batch for b in call_buffers(c))
    variables = dict.fromkeys(v for c in batch for v in _bound_variables(c))
    body = UOp(Ops.LINEAR, dtypes.void, tuple(batch))
    return UOp(Ops.CALL, dtypes.void, (body, *bufs, *variables), GRAPH)


def _graphable(device: str) -> bool:
    return Device[device].graph is not None


def graph_split_rewrite(linear: UOp, max_batch_size: int = 0) -> UOp:
    """``linear`` with each run of consecutive kernel CALLs on one device replaced by a
    graph call of at most ``max_batch_size`` kernels (0: no limit). A copy, a graph call, a
    kernel on another device or the size limit ends a run; a run of one kernel, or on a
    device that offers no graph, stays as it is.

    >>> from fusegrad import Tensor
    >>> linear = ((Tensor([1.0, 2.0]) * 2).contiguous() + 1).schedule_linear()
    >>> [c.src[0].op for c in graph_split_rewrite(linear).src]
    [Ops.LINEAR]
    """
    if linear.op is not Ops.LINEAR:
        raise TypeError(f"graph_split_rewrite: expected a LINEAR of CALLs, got {linear.op!r}")
    if max_batch_size < 0:
        raise ValueError(f"graph_split_rewrite: max_batch_size must be >= 0, got {max_batch_size}")
    out: list[UOp] = []
    run: list[UOp] = []

    def flush() -> None:
        if len(run) > 1 and _graphable(call_device(run[0])):
            out.append(create_graph_call(run))
        else:
            out.extend(run)
        run.clear()

    for call in linear.src:
        if not is_kernel_call(call):
            flush()
            out.append(call)
            continue
        full = max_batch_size and len(run) == max_batch_size
        if run and (full or call_device(call) != call_device(run[0])):
            flush()
        run.append(call)
    flush()
    return linear.replace(src=tuple(out))


def flatten_graph_calls(calls: Iterable[UOp]) -> list[UOp]:
    """The CALLs with every graph call replaced by its batch."""
    out: list[UOp] = []
    for c in calls:
        out.extend(c.src[0].src if is_graph_call(c) else (c,))
    return out


# -- pruning --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Access:
    reads: frozenset[UOp]
    writes: frozenset[UOp]
    variables: bool


def _base(buf: UOp) -> UOp:
    while buf.op is Ops.BUFFER_VIEW:
        buf = buf.src[0]
    return buf


def plan_access(plan: LaunchPlan, bufs: Sequence[UOp]) -> tuple[frozenset[UOp], frozenset[UOp]]:
    """The base BUFFERs (views count as their whole base) ``plan``'s steps read and write,
    ``bufs`` being its slots' BUFFERs."""
    reads: set[UOp] = set()
    writes: set[UOp] = set()
    for step in plan.steps:
        r, w = step.access()
        reads.update(_base(bufs[i]) for i in r)
        writes.update(_base(bufs[i]) for i in w)
    return frozenset(reads), frozenset(writes)


def _access(call: UOp) -> _Access:
    """The base BUFFERs a CALL reads and writes (its kernels compiled: their programs say)."""
    calls = flatten_graph_calls([call])
    reads, writes = plan_access(*calls_plan(calls))
    return _Access(reads, writes, any(_bound_variables(c) for c in calls))


def _kept(access: Sequence[_Access], needed: frozenset[UOp]) -> set[int]:
    keep: set[int] = set()
    while True:
        written = set(needed).union(*(access[i].writes for i in keep))
        grown: set[int] = set()
        read_before: set[UOp] = set()  # what the kept CALLs before this one read
        for i, a in enumerate(access):
            if a.variables or a.reads & written or a.writes & (written | read_before):
                grown.add(i)
            if i in keep:
                read_before |= a.reads
        if grown == keep:
            return keep
        keep = grown


def prune_linear(linear: UOp, needed: set[UOp]) -> tuple[UOp, UOp]:
    """Split ``linear`` into ``(pruned, onetime)``: the CALLs to run on every run and those
    whose effect a second run would only repeat. ``needed``: the BUFFERs whose contents may
    change between runs (the inputs a caller refills).

    A CALL is in ``pruned`` when it takes bound Variables, reads a ``needed`` buffer or one a
    ``pruned`` CALL writes, or writes a buffer that is ``needed``, that a ``pruned`` CALL
    writes, or that a ``pruned`` CALL before it reads (so ``onetime`` neither depends on what
    changes nor changes what ``pruned`` read before it). Both keep ``linear``'s order and its graph calls whole. Running
    ``onetime`` then ``pruned`` is running ``linear``; after that, running ``pruned`` alone
    (with new contents in the ``needed`` buffers) gives what running all of ``linear``
    again would. The kernels are compiled to learn what each one reads and writes."""
    if linear.op is not Ops.LINEAR:
        raise TypeError(f"prune_linear: expected a LINEAR of CALLs, got {linear.op!r}")
    bases = frozenset(_base(b) for b in needed)
    keep = _kept([_access(c) for c in linear.src], bases)
    pruned = tuple(c for i, c in enumerate(linear.src) if i in keep)
    onetime = tuple(c for i, c in enumerate(linear.src) if i not in keep)
    return linear.replace(src=pruned), linear.replace(src=onetime)


# -- running ----------------------------------------------------------------------------------------

_GRAPH_PLANS: weakref.WeakKeyDictionary[UOp, tuple[LaunchPlan, list[UOp]]] = (
    weakref.WeakKeyDictionary()
)


def graph_call_plan(call: UOp) -> tuple[LaunchPlan, list[UOp]]:
    """The launch plan of a graph call's batch (compiled once per graph call) and the buffer
    of each slot: a plan on one device, launched through the device's graph."""
    found = _GRAPH_PLANS.get(call)
    if found is not None and found[0].current():
        return found
    plan, bufs = calls_plan(call.src[0].src)
    plan.reused = True  # through the device graph: one submission for the batch
    _GRAPH_PLANS[call] = (plan, bufs)
    return plan, bufs


@dataclass
class LinearLaunch:
    """A LINEAR compiled into launches: one plan per run of plain CALLs and one per graph
    call, launched in order (the engine orders work across devices; a device's ring keeps
    its own order)."""

    segments: list[tuple[LaunchPlan, list[UOp]]]

    @staticmethod
    def of(linear: UOp, reused: bool = False) -> LinearLaunch:
        """Compile ``linear`` (``reused``: its plain runs are launched again and again)."""
        if linear.op is not Ops.LINEAR:
            raise TypeError(f"LinearLaunch: expected a LINEAR of CALLs, got {linear.op!r}")
        segments: list[tuple[LaunchPlan, list[UOp]]] = []
        run: list[UOp] = []
        for call in (*linear.src, None):
            if call is not None and not is_graph_call(call):
                run.append(call)
                continue
            if run:
                plan, bufs = calls_plan(run)
                plan.reused = reused
                segments.append((plan, bufs))
                run = []
            if call is not None:
                segments.append(graph_call_plan(call))
        return LinearLaunch(segments)

    @property
    def plans(self) -> list[LaunchPlan]:
        """The plans, in launch order."""
        return [p for p, _ in self.segments]

    def __call__(self, values: dict[str, int], swap: dict[UOp, UOp] | None = None) -> None:
        """Launch every plan over its buffers (``swap``: BUFFERs replaced by others)."""
        for plan, bufs in self.segments:
            given = [swap.get(b, b) for b in bufs] if swap else bufs
            run_plan(plan, given, values)


def first_written(plan: LaunchPlan, bufs: Sequence[UOp]) -> set[UOp]:
    """The buffers (of ``plan``'s slots ``bufs``) whose first use in it is a write (by a
    step that doesn't also read them): buffers the plan makes."""
    seen: set[int] = set()
    out: set[int] = set()
    for step in plan.steps:
        reads, writes = step.access()
        out.update(set(writes) - set(reads) - seen)
        seen.update(reads, writes)
    return {bufs[i] for i in out}


def bound_plan(
    plan: LaunchPlan, bufs: Sequence[UOp], given: Sequence[UOp]
) -> tuple[LaunchPlan, weakref.WeakSet[UOp]]:
    """``plan`` (over slots ``bufs``) launched again and again with the ``given`` BUFFERs
    bound per launch, in order, and every other slot fixed to its runtime buffer; and the
    fixed BUFFERs its kernels write."""
    slot_of = {b: i for i, b in enumerate(bufs)}
    slots = tuple(slot_of[b] for b in given)
    fixed = {i: runtime_buffer(b) for i, b in enumerate(bufs) if i not in slots}
    for rb in fixed.values():
        share(rb)  # the plan reads or writes it on every launch
    written: weakref.WeakSet[UOp] = weakref.WeakSet()
    for step in plan.steps:
        written.update(bufs[i] for i in step.access()[1] if i in fixed)
    out = LaunchPlan(tuple(plan.steps), len(bufs), slots, {}, fixed, reused=True)
    return out, written


def run_graph_linear(linear: UOp, var_vals: dict[str, int] | None = None) -> None:
    """``engine.realize.run_linear`` of a LINEAR holding graph calls: each graph call one
    device-graph submission, the other CALLs as ``run_linear`` runs them."""
    LinearLaunch.of(linear)({**bound_values(linear.src), **(var_vals or {})})


def has_graph_calls(linear: UOp) -> bool:
    """Whether a LINEAR holds graph calls (``run_linear`` hands it to ``run_graph_linear``)."""
    return any(is_graph_call(c) for c in linear.src)


__all__ = [
    "GRAPH",
    "LinearLaunch",
    "bound_plan",
    "call_buffers",
    "call_device",
    "create_graph_call",
    "first_written",
    "flatten_graph_calls",
    "graph_call_plan",
    "graph_split_rewrite",
    "has_graph_calls",
    "is_graph_call",
    "is_kernel_call",
    "prune_linear",
    "run_graph_linear",
]
