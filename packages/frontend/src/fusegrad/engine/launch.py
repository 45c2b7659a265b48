"""Launching plans: a ``LaunchPlan``'s steps encoded into the devices' HCQ queues and
submitted.

A plan on one device without copies is one queue: its launches between two timestamps,
one submission (the exec commands of launches over fixed buffers without Variables are
built once per plan). Otherwise consecutive steps on one device go into one queue; when
the next step is on another device (a copy's destination, or a kernel elsewhere), the queue
so far is submitted ending in a step of its device's signal, and the new queue starts by
waiting for that step: across devices the steps run in the plan's order, on one device the
ring keeps it. Nothing here waits on the host; ``synchronize`` (called where results are
read) does.

Each queue is bracketed by timestamps; ``GlobalCounters.time_sum_s`` adds them up once the
queue is known to be done. ``kernel_count``, ``global_ops`` and ``global_mem`` count at
submission, from the ProgramSpec's estimates at the launch's Variable values.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fusegrad.engine.buffers import share
from fusegrad.engine.counters import GlobalCounters
from fusegrad.engine.plan import LaunchPlan, device
from fusegrad.engine.plan import Step as PlanStep
from fusegrad.engine.programs import Kernel
from fusegrad.runtime import (
    Buffer,
    Compiled,
    ExecCmd,
    HCQGraph,
    HWQueue,
    Signal,
    SignalCmd,
    TimestampCmd,
)
from fusegrad.uop import DEBUG


@dataclass(slots=True)
class _Flight:
    """A submitted queue not yet known to be finished: what it must keep alive and the
    timestamp pairs of its kernels."""

    signal: Signal
    value: int
    keep: list[Any]
    timings: list[tuple[Signal, Signal]]


@dataclass(slots=True)
class _Timeline:
    """A device's engine-side signal: the last step submitted to it."""

    signal: Signal
    value: int = 0


@dataclass
class _State:
    """Process-wide launch state (guarded by ``lock``)."""

    timelines: dict[str, _Timeline] = field(default_factory=dict)
    flights: deque[_Flight] = field(default_factory=deque)  # in submission order
    spare: list[Signal] = field(default_factory=list)  # timestamp signals of settled flights
    last: tuple[Signal, int, str] | None = None  # the last step submitted, on any device
    lock: threading.RLock = field(default_factory=threading.RLock)


_STATE = _State()


@dataclass(slots=True)
class _Batch:
    """The queue being filled for one device."""

    name: str
    device: Compiled
    queue: HWQueue
    keep: list[Any]  # Buffers and host arrays in use
    timings: list[tuple[Signal, Signal]]


def _timeline(name: str) -> _Timeline:
    found = _STATE.timelines.get(name)
    if found is None:
        found = _STATE.timelines[name] = _Timeline(Signal(name=f"engine {name}"))
    return found


def _open(name: str) -> _Batch:
    dev = device(name)
    batch = _Batch(name, dev, dev.queue(), [], [])
    last = _STATE.last
    if last is not None and last[2] != name and last[0].value < last[1]:
        batch.queue.wait(last[0], last[1])  # another device's work comes first
    return batch


def _submit(batch: _Batch) -> None:
    if not batch.queue.commands:
        return
    tl = _timeline(batch.name)
    tl.value += 1
    batch.queue.signal(tl.signal, tl.value).submit(batch.device)
    _STATE.flights.append(_Flight(tl.signal, tl.value, batch.keep, batch.timings))
    _STATE.last = (tl.signal, tl.value, batch.name)
    if DEBUG >= 2:
        batch.device.synchronize()  # the launch lines print in order with everything else


def _settle(everywhere: bool = False) -> None:
    """Retire finished flights: add their kernel times, release what they kept alive, keep
    their timestamp signals for reuse. Oldest first up to the first one still running (cheap:
    called per submission), or ``everywhere``."""
    flights = _STATE.flights
    while flights and flights[0].signal.value >= flights[0].value:
        _retire(flights.popleft())
    if everywhere:
        running = deque(f for f in flights if f.signal.value < f.value)
        for flight in flights:
            if flight.signal.value >= flight.value:
                _retire(flight)
        _STATE.flights = running


def _retire(flight: _Flight) -> None:
    spare = _STATE.spare
    for start, end in flight.timings:
        GlobalCounters.time_sum_s += max(end.timestamp - start.timestamp, 0) * 1e-9
        if len(spare) < _SPARE_SIGNALS:
            spare += (start, end)


_SPARE_SIGNALS = 256


def timestamp_pair() -> tuple[Signal, Signal]:
    """Two timestamp signals for a launch (reused from settled flights where possible; a
    flight gives them back once its times are added up)."""
    spare = _STATE.spare
    if len(spare) >= 2:
        return spare.pop(), spare.pop()
    return Signal(), Signal()


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What a plan's launches share, worked out on its first launch: per step, the exec
    command when it never changes (fixed buffers, no Variables) and the launch sizes of a
    kernel without Variables; the steps a graph launch must refresh (``dynamic``: index,
    step, whether only its buffers change); the single device of a plan without copies;
    the work of the launches without Variables."""

    static: tuple[ExecCmd | None, ...]
    sizes: tuple[tuple[tuple[int, ...], tuple[int, ...] | None] | None, ...]
    dynamic: tuple[tuple[int, PlanStep, bool], ...]
    single: str | None
    kernels: int
    work: tuple[int, int]


def _prepare(plan: LaunchPlan) -> _Prepared:
    static: list[ExecCmd | None] = []
    sizes: list[tuple[tuple[int, ...], tuple[int, ...] | None] | None] = []
    ops = mem = 0
    for step in plan.steps:
        kernel = step.kernel
        if kernel is None or kernel.var_names:
            static.append(None)
            sizes.append(None)
            continue
        gs, ls = kernel.launch({})
        size = (tuple(gs), None if ls is None else tuple(ls))
        sizes.append(size)
        o, m = kernel.work({})
        ops, mem = ops + o, mem + m
        if all(i in plan.fixed for i in step.slots):
            handles = tuple(plan.fixed[i].opaque for i in step.slots)
            static.append(ExecCmd(kernel.program, handles, (), size[0], size[1]))
        else:
            static.append(None)
    dynamic = tuple(
        (i, step, sizes[i] is not None)
        for i, step in enumerate(plan.steps)
        if static[i] is None and step.kernel is not None
    )
    copies = any(s.kernel is None for s in plan.steps)
    names = plan.devices
    single = names.pop() if len(names) == 1 and not copies else None
    return _Prepared(tuple(static), tuple(sizes), dynamic, single, plan.kernels, (ops, mem))


def _exec(step: PlanStep, size: Any, runtime: list[Any], values: dict[str, int]) -> ExecCmd:
    """The exec command of a kernel step over this launch's buffers and Variable values."""
    kernel = step.kernel
    assert kernel is not None
    handles = tuple(runtime[i].opaque for i in step.slots)
    if size is not None:
        return ExecCmd(kernel.program, handles, (), size[0], size[1])
    vals = _values(kernel, values)
    gs, ls = kernel.launch(vals)
    local = None if ls is None else tuple(ls)
    return ExecCmd(kernel.program, handles, tuple(vals.values()), tuple(gs), local)


def _values(kernel: Kernel, values: dict[str, int]) -> dict[str, int]:
    try:
        return {n: values[n] for n in kernel.var_names}
    except KeyError as e:
        raise RuntimeError(f"engine: no value bound for Variable {e.args[0]!r}") from None


def _count(plan: LaunchPlan, prep: _Prepared, values: dict[str, int]) -> None:
    ops, mem = prep.work
    for _, step, sized in prep.dynamic:
        if not sized and step.kernel is not None:  # a kernel with Variables
            o, m = step.kernel.work(_values(step.kernel, values))
            ops, mem = ops + o, mem + m
    GlobalCounters.kernel_count += prep.kernels
    GlobalCounters.global_ops += ops
    GlobalCounters.global_mem += mem


def launch_plan(plan: LaunchPlan, runtime: list[Any], values: dict[str, int]) -> None:
    """Encode ``plan``'s steps over ``runtime`` (every slot's buffer) into HCQ queues and
    submit them (one queue per run of steps on one device; returns without waiting)."""
    fast = plan.cache.get("fast")
    if fast is not None and _launch_fast(fast, runtime):
        return
    prep = plan.cache.get("prepared")
    if prep is None:
        prep = plan.cache["prepared"] = _prepare(plan)
    with _STATE.lock:
        _settle()
        if prep.single is not None:
            _launch_single(plan, prep, runtime, values)
        else:
            _launch_general(plan, prep, runtime, values)
    _count(plan, prep, values)


@dataclass(frozen=True, slots=True)
class _Fast:
    """A plan whose launches are a filled device graph over new buffers only (one device, no
    copies, no Variables): per launch, the buffers of the steps in ``dynamic`` (index, slots)
    go into the graph and it is submitted between two timestamps — the schedule-cache hit's
    and TinyJit replay's path, set up by ``_launch_single`` once the graph took a launch."""

    graph: HCQGraph
    name: str
    timeline: _Timeline
    dynamic: tuple[tuple[int, tuple[int, ...]], ...]
    kernels: int
    work: tuple[int, int]


def _fast_launch(plan: LaunchPlan, prep: _Prepared, graph: HCQGraph, name: str) -> _Fast | None:
    if any(not sized for _, _, sized in prep.dynamic):
        return None  # Variables: each launch re-encodes its commands
    dynamic = tuple((i, step.slots) for i, step, _ in prep.dynamic)
    return _Fast(graph, name, _timeline(name), dynamic, prep.kernels, prep.work)


def _launch_fast(fast: _Fast, runtime: list[Any]) -> bool:
    """``launch_plan`` of a ``_Fast`` plan (False: it needs the general path now: another
    device's work to wait for, DEBUG>=2, or the graph refused the buffers)."""
    state = _STATE
    if DEBUG.value >= 2:
        return False
    with state.lock:
        flights = state.flights
        if flights and flights[0].signal.value >= flights[0].value:
            _settle()
        last = state.last
        name = fast.name
        if last is not None and last[2] != name and last[0].value < last[1]:
            return False  # another device's work comes first: a queue with a wait
        updates = [(i, tuple([runtime[j].opaque for j in slots])) for i, slots in fast.dynamic]
        start, end = timestamp_pair()
        tl = fast.timeline
        value = tl.value + 1
        try:
            fast.graph.submit_timed(start, end, tl.signal, value, updates)
        except ValueError:
            return False  # a buffer the graph can't take: ``_update_graph`` drops the graph
        tl.value = value
        flights.append(_Flight(tl.signal, value, [runtime], [(start, end)]))
        state.last = (tl.signal, value, name)
    GlobalCounters.kernel_count += fast.kernels
    GlobalCounters.global_ops += fast.work[0]
    GlobalCounters.global_mem += fast.work[1]
    return True


def _launch_single(
    plan: LaunchPlan, prep: _Prepared, runtime: list[Any], values: dict[str, int]
) -> None:
    """One device, no copies: one queue, every launch between two timestamps. A plan
    launched again and again (a schedule-cache template's, a TinyJit capture's) goes
    through the device's graph where it has one."""
    assert prep.single is not None
    batch = _open(prep.single)
    start, end = timestamp_pair()
    batch.keep.append(runtime)  # the flight keeps the list, and so its buffers, alive
    batch.timings.append((start, end))
    graph = _graph(plan, batch.device) if plan.reused else None
    if graph is not None and _update_graph(graph, plan, prep, runtime, values):
        _submit_graph(batch, graph, start, end)
        if "fast" not in plan.cache:
            plan.cache["fast"] = _fast_launch(plan, prep, graph, batch.name)
        return
    commands: list[Any] = [TimestampCmd(start)]
    commands += _commands(plan, prep, runtime, values)
    commands.append(TimestampCmd(end))
    batch.queue.commands.extend(commands)
    _submit(batch)


def _commands(
    plan: LaunchPlan, prep: _Prepared, runtime: list[Any], values: dict[str, int]
) -> list[ExecCmd]:
    return [
        cmd if cmd is not None else _exec(step, size, runtime, values)
        for step, cmd, size in zip(plan.steps, prep.static, prep.sizes, strict=True)
    ]


def _graph(plan: LaunchPlan, dev: Compiled) -> HCQGraph | None:
    """The plan's graph on ``dev`` (made on first use; None: the device has none, or it
    can't batch these kernels)."""
    found = plan.cache.get("graph")
    if found is None:
        graph_class = dev.graph
        found = plan.cache["graph"] = False if graph_class is None else graph_class(dev, [])
    return found if isinstance(found, HCQGraph) else None


def _update_graph(
    graph: HCQGraph, plan: LaunchPlan, prep: _Prepared, runtime: list[Any], values: dict[str, int]
) -> bool:
    """Fill an empty graph with the launches; later, replace only those over per-call buffers
    (new buffer words) or with Variables (new commands). False: the graph can't take them
    (the plan is then launched without one from now on)."""
    try:
        if not len(graph):
            for cmd in _commands(plan, prep, runtime, values):
                graph.append(cmd)
            return True
        for i, step, sized in prep.dynamic:
            if sized:
                graph.set_buffers(i, tuple([runtime[j].opaque for j in step.slots]))
            else:
                graph.update(i, _exec(step, None, runtime, values))
    except ValueError:
        plan.cache["graph"] = False
        plan.cache["fast"] = None
        return False
    return True


def _submit_graph(batch: _Batch, graph: HCQGraph, start: Signal, end: Signal) -> None:
    tl = _timeline(batch.name)
    tl.value += 1
    head = batch.queue.commands
    if head:  # a wait for another device first
        head.append(TimestampCmd(start))
        graph.submit(head, (TimestampCmd(end), SignalCmd(tl.signal, tl.value)))
    else:
        graph.submit_timed(start, end, tl.signal, tl.value)
    _STATE.flights.append(_Flight(tl.signal, tl.value, batch.keep, batch.timings))
    _STATE.last = (tl.signal, tl.value, batch.name)
    if DEBUG >= 2:
        batch.device.synchronize()  # the launch lines print in order with everything else


def _launch_general(
    plan: LaunchPlan, prep: _Prepared, runtime: list[Any], values: dict[str, int]
) -> None:
    """Steps on several devices, or copies: a queue per run of steps on one device, each
    waiting for the one before. Their buffers are marked shared: another device's queue
    may still read one when its BUFFER dies, so none is recycled."""
    for rb in runtime:
        share(rb)
    batch: _Batch | None = None
    for step, cmd, size in zip(plan.steps, prep.static, prep.sizes, strict=True):
        if batch is None or batch.name != step.device:
            if batch is not None:
                _close(batch)
            batch = _open(step.device)
            batch.keep.append(runtime)
            batch.timings.append(timestamp_pair())
            batch.queue.timestamp(batch.timings[-1][0])
        if step.kernel is None:
            batch = _encode_copy(batch, step, runtime)
        else:
            batch.queue.commands.append(
                cmd if cmd is not None else _exec(step, size, runtime, values)
            )
    if batch is not None:
        _close(batch)


def _close(batch: _Batch) -> None:
    if batch.timings:
        batch.queue.timestamp(batch.timings[-1][1])
    _submit(batch)


def _host_bytes(buf: Buffer, nbytes: int) -> memoryview | None:
    """The first ``nbytes`` of a host-visible buffer, without waiting for the device."""
    view: Any = buf.dev.allocator._as_buffer(buf.opaque)
    return None if view is None else memoryview(view).cast("B")[:nbytes]


def _source_bytes(src: Any, nbytes: int, keep: list[Any]) -> memoryview | None:
    """The bytes a copy reads: a host array standing in for a buffer the engine hasn't
    moved to its device (copied from where it is), else the device buffer's host-visible
    memory."""
    if isinstance(src, np.ndarray):
        flat = np.ascontiguousarray(src)
        keep.append(flat)
        return memoryview(flat.data).cast("B")[:nbytes]
    return _host_bytes(src, nbytes)


def _encode_copy(batch: _Batch, step: PlanStep, runtime: list[Any]) -> _Batch:
    nbytes = step.nbytes
    dst, src = runtime[step.slots[0]], runtime[step.slots[1]]
    dst_bytes, src_bytes = _host_bytes(dst, nbytes), _source_bytes(src, nbytes, batch.keep)
    if dst_bytes is not None and src_bytes is not None:
        batch.queue.copy(dst_bytes, src_bytes)
        return batch
    # device memory the host can't see: finish everything, then copy through the host
    _close(batch)
    synchronize()
    if isinstance(src, np.ndarray):
        staged = memoryview(np.ascontiguousarray(src).data).cast("B")
    else:
        staged = src.copyout(bytearray(src.nbytes))
    if nbytes == dst.nbytes == len(staged):
        dst.copyin(staged)
    else:
        _partial_copy(dst, staged)
    fresh = _open(batch.name)
    fresh.keep.append(runtime)
    fresh.timings.append(timestamp_pair())
    fresh.queue.timestamp(fresh.timings[-1][0])
    return fresh


def _partial_copy(dst: Buffer, staged: memoryview) -> None:
    whole = dst.copyout(bytearray(dst.nbytes))
    n = min(len(whole), len(staged))
    whole[:n] = staged[:n]
    dst.copyin(whole)


def synchronize(devices: Sequence[str] | None = None) -> None:
    """Wait until the work submitted to ``devices`` (None: every device) is done; raises
    the first error a kernel hit."""
    with _STATE.lock:
        names = list(_STATE.timelines) if devices is None else list(devices)
        for name in names:
            device(name).synchronize()
        _settle(everywhere=True)
