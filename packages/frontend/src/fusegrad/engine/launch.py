"""Running a kernel graph: its CALLs encoded into the devices' HCQ queues and submitted.

Consecutive calls on one device go into one queue. When the next call is on another device
(a COPY's destination, or a kernel elsewhere), the queue so far is submitted ending in a step
of its device's signal, and the new queue starts by waiting for that step: across devices the
calls run in the scheduler's order, on one device the ring keeps it. Nothing here waits on
the host; ``synchronize`` (called where results are read) does.

A schedule-cache hit skips the kernel graph: ``run_template`` encodes the cached template's
launches from a per-template recipe (loaded kernels, buffer slots, Variables; worked out on
the first hit, dropped by ``clear_kernels``) into one queue, and hands back the output views.
Templates with copies, memory-planned arenas or several devices, and ``DEBUG>=1``, take the
kernel-graph path (``run_graph``).

Each kernel launch is bracketed by timestamps; ``GlobalCounters.time_sum_s`` adds them up
once their queue is known to be done. ``kernel_count``, ``global_ops`` and ``global_mem``
count at submission, from the ProgramSpec's estimates at the launch's Variable values.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fusegrad.codegen import KernelGraph
from fusegrad.codegen.schedule import ScheduleLookup, ScheduleTemplate
from fusegrad.engine.buffers import buffer_device, known_buffer, runtime_buffer
from fusegrad.engine.counters import GlobalCounters
from fusegrad.engine.host import HOST
from fusegrad.engine.programs import RECIPES, Kernel, get_kernel
from fusegrad.runtime import Buffer, Compiled, Device, HWQueue, Signal
from fusegrad.uop import DEBUG, Ops, UOp, prod

_BUFFER_OPS = (Ops.BUFFER, Ops.BUFFER_VIEW)


@dataclass
class _Flight:
    """A submitted queue not yet known to be finished: what it must keep alive and the
    timestamp pairs of its kernels."""

    signal: Signal
    value: int
    keep: list[Any]
    timings: list[tuple[Signal, Signal]]


@dataclass
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


@dataclass
class _Batch:
    """The queue being filled for one device."""

    name: str
    device: Compiled
    queue: HWQueue
    keep: list[Any] = field(default_factory=list)  # Buffers and host arrays in use
    timings: list[tuple[Signal, Signal]] = field(default_factory=list)


def _timeline(name: str) -> _Timeline:
    found = _STATE.timelines.get(name)
    if found is None:
        found = _STATE.timelines[name] = _Timeline(Signal(name=f"engine {name}"))
    return found


_DEVICES: dict[str, Compiled] = {}


def _device(name: str) -> Compiled:
    """``Device[name]``, remembered (the registry canonicalizes and locks on every lookup)."""
    device = _DEVICES.get(name)
    if device is None or device.closed:
        device = _DEVICES[name] = Device[name]
    return device


def _open(name: str) -> _Batch:
    device = _device(name)
    batch = _Batch(name, device, device.queue())
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


def _var_vals(call: UOp) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in call.src[1:]:
        if s.op is Ops.AFTER and s.is_bound_var:
            var, val = s.unbind()
            out[str(var.arg[0])] = int(val)
    return out


def _encode_kernel(batch: _Batch, call: UOp, bufs: Sequence[UOp]) -> None:
    kernel = get_kernel(call.src[0], batch.device)
    values = _var_vals(call) if kernel.var_names else {}
    _encode_launch(batch, kernel, [runtime_buffer(b) for b in bufs], values)


def _encode_launch(
    batch: _Batch, kernel: Kernel, runtime: list[Buffer], values: dict[str, int]
) -> None:
    """One kernel launch over ``runtime`` buffers, bracketed by timestamps, counted."""
    vals = [values[n] for n in kernel.var_names]
    global_size, local_size = kernel.launch(values)
    start, end = timestamp_pair()
    queue = batch.queue
    queue.timestamp(start)
    queue.exec(kernel.program, [b.opaque for b in runtime], vals, global_size, local_size)
    queue.timestamp(end)
    batch.keep.extend(runtime)
    batch.timings.append((start, end))
    ops, mem = kernel.work(values)
    GlobalCounters.kernel_count += 1
    GlobalCounters.global_ops += ops
    GlobalCounters.global_mem += mem


# -- cached schedules -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Step:
    """A launch of a cached template: its kernel, each buffer parameter as an index into
    the template's buffers (inputs, then allocations), its Variables in launch order."""

    kernel: Kernel
    slots: tuple[int, ...]
    variables: tuple[UOp, ...]


@dataclass(frozen=True, slots=True)
class _Recipe:
    """How a cached template launches on one device, worked out once."""

    name: str
    device: Compiled | None  # None: nothing to launch
    steps: tuple[_Step, ...]
    used: tuple[int, ...]  # the buffer indices the steps use
    whole: bool = False  # every output is a whole buffer of its source's (int) shape
    renderer: Any = None  # the device's renderer the kernels were loaded for
    #: the template's BUFFER_VIEWs into its arenas (memory-planned intermediates), each with
    #: the index of its base buffer: indices after the inputs' and the new buffers'
    views: tuple[tuple[UOp, int], ...] = ()

    def current(self) -> bool:
        """Whether the kernels are still those the device would run (not closed and
        reopened, no other compiler selected since)."""
        if not self.steps:
            return True
        return self.device is _device(self.name) and self.device.renderer is self.renderer


def _whole(view: UOp, source: UOp) -> bool:
    """Whether ``view`` is ``BUFFER`` or ``BUFFER.reshape(s)``, all of the buffer, with the
    int shape of ``source`` (then every instantiation is the executor's result form)."""
    base = view.src[0] if view.op is Ops.RESHAPE else view
    if base.op is not Ops.BUFFER or base.dtype != view.dtype:
        return False
    shape = tuple(view.shape)
    ints = all(isinstance(s, int) for s in shape)
    return ints and shape == tuple(source.shape) and prod(shape) == base.arg


def _make_recipe(tpl: ScheduleTemplate, sources: Sequence[UOp]) -> _Recipe | None:
    """The recipe of ``tpl``, or None where the general path is needed: copies, views of
    buffers the template doesn't create, several devices."""
    index = {b: i for i, b in enumerate((*tpl.inputs, *tpl.allocate))}
    views: dict[UOp, int] = {}  # views into the template's arenas: rebuilt on every run
    for _, bufs, _ in tpl.calls:
        for b in bufs:
            if b.op is Ops.BUFFER_VIEW and b not in index and b.src[0] in tpl.allocate:
                views.setdefault(b, len(index) + len(views))
    index.update(views)
    names = {buffer_device(bufs[0]) for _, bufs, _ in tpl.calls if bufs}
    if len(names) > 1 or any(
        ast.op is not Ops.SINK or not bufs or any(b not in index for b in bufs)
        for ast, bufs, _ in tpl.calls
    ):
        return None
    if not names:
        return _Recipe("", None, (), ())  # nothing to launch (outputs are views of inputs)
    name = names.pop()
    device = _device(name)
    steps = []
    for ast, bufs, variables in tpl.calls:
        kernel = get_kernel(ast, device)
        by_name = {str(v.arg[0]): v for v in variables}
        slots = tuple(index[b] for b in bufs)
        steps.append(_Step(kernel, slots, tuple(by_name[n] for n in kernel.var_names)))
    used = tuple(sorted({i for step in steps for i in step.slots}))
    whole = all(_whole(o, src) for o, src in zip(tpl.outputs, sources, strict=True))
    bases = tuple((v, index[v.src[0]]) for v in views)
    return _Recipe(name, device, tuple(steps), used, whole, device.renderer, bases)


def _recipe(tpl: ScheduleTemplate, sources: Sequence[UOp]) -> _Recipe | None:
    found = RECIPES.get(id(tpl))
    if found is not None and found[0] is tpl:
        recipe: _Recipe | None = found[1]
        if recipe is None or recipe.current():
            return recipe
    recipe = _make_recipe(tpl, sources)
    if len(RECIPES) >= _MAX_RECIPES:
        RECIPES.clear()  # templates the schedule cache evicted go with the rest
    RECIPES[id(tpl)] = (tpl, recipe)
    return recipe


_MAX_RECIPES = 1024


def run_template(lookup: ScheduleLookup) -> tuple[list[UOp], bool] | None:
    """Run a schedule-cache hit without building its kernel graph: new buffers, the cached
    launches encoded straight from the template, one submission. Returns the view of each
    sink source and whether all are whole buffers of their source's shape (``BUFFER`` or
    ``BUFFER.reshape(shape)``), or None where the general path (``run_graph``) is needed."""
    tpl = lookup.template
    if tpl is None or DEBUG >= 1:
        return None
    recipe = _recipe(tpl, lookup.sink.src)
    if recipe is None:
        return None
    new = [UOp.new_buffer(p.src[1].arg, p.arg, p.dtype) for p in tpl.allocate]
    if recipe.steps:
        bufs = [*lookup.inputs, *new]
        bufs += [v.replace(src=(bufs[base], *v.src[1:])) for v, base in recipe.views]
        runtime: list[Any] = [None] * len(bufs)
        for i in recipe.used:
            runtime[i] = runtime_buffer(bufs[i])
        var_vals = lookup.var_vals
        with _STATE.lock:
            _settle()
            batch = _open(recipe.name)
            for step in recipe.steps:
                kernel = step.kernel
                values = {
                    n: var_vals[v] for n, v in zip(kernel.var_names, step.variables, strict=True)
                }
                _encode_launch(batch, kernel, [runtime[i] for i in step.slots], values)
            _submit(batch)
    return lookup.views(new), recipe.whole


def _host_bytes(buf: Buffer, nbytes: int) -> memoryview | None:
    """The first ``nbytes`` of a host-visible buffer, without waiting for the device."""
    view: Any = buf.dev.allocator._as_buffer(buf.opaque)
    return None if view is None else memoryview(view).cast("B")[:nbytes]


def _source_bytes(buf: UOp, nbytes: int, keep: list[Any]) -> memoryview | None:
    """The bytes a copy reads: the host array of a BUFFER the engine hasn't moved to its
    device yet (user data, a DISK file window: copied from where it is, once), else the
    device buffer's host-visible memory."""
    host = HOST.get(buf) if known_buffer(buf) is None else None
    if host is not None:
        flat = np.ascontiguousarray(host)
        keep.append(flat)
        return memoryview(flat.data).cast("B")[:nbytes]
    runtime = runtime_buffer(buf)
    keep.append(runtime)
    return _host_bytes(runtime, nbytes)


def _encode_copy(batch: _Batch, call: UOp, bufs: Sequence[UOp]) -> _Batch:
    nbytes = int(call.src[0].arg)
    dst = runtime_buffer(bufs[0])
    batch.keep.append(dst)
    dst_bytes, src_bytes = _host_bytes(dst, nbytes), _source_bytes(bufs[1], nbytes, batch.keep)
    if dst_bytes is not None and src_bytes is not None:
        batch.queue.copy(dst_bytes, src_bytes)
        return batch
    # device memory the host can't see: finish everything, then copy through the host
    _submit(batch)
    synchronize()
    src = runtime_buffer(bufs[1])
    staged = src.copyout(bytearray(src.nbytes))
    dst.copyin(staged) if nbytes == dst.nbytes == src.nbytes else _partial_copy(dst, staged)
    return _open(batch.name)


def _partial_copy(dst: Buffer, staged: memoryview) -> None:
    whole = dst.copyout(bytearray(dst.nbytes))
    n = min(len(whole), len(staged))
    whole[:n] = staged[:n]
    dst.copyin(whole)


def _call_device(call: UOp, bufs: Sequence[UOp]) -> str:
    return buffer_device(bufs[0])  # a kernel's buffers, a copy's destination


def run_graph(kg: KernelGraph) -> None:
    """Encode and submit every call of ``kg`` in order (returns without waiting)."""
    with _STATE.lock:
        _settle()
        batch: _Batch | None = None
        for call in kg.calls:
            bufs = [s for s in call.src[1:] if s.op in _BUFFER_OPS]
            name = _call_device(call, bufs)
            if batch is None or batch.name != name:
                if batch is not None:
                    _submit(batch)
                batch = _open(name)
            if call.src[0].op is Ops.COPY:
                batch = _encode_copy(batch, call, bufs)
            else:
                _encode_kernel(batch, call, bufs)
        if batch is not None:
            _submit(batch)


def submit_commands(
    name: str,
    commands: Sequence[Any],
    keep: Sequence[Any] = (),
    timings: Sequence[tuple[Signal, Signal]] = (),
) -> None:
    """Submit prebuilt queue ``commands`` (a TinyJit replay) to device ``name`` as one queue
    in the engine's order: after the work already submitted to other devices, tracked by
    ``synchronize``, ``keep`` (buffers, or lists of them) held alive until it is done,
    ``timings`` added to ``GlobalCounters.time_sum_s``."""
    with _STATE.lock:
        _settle()
        batch = _open(name)
        batch.queue.commands.extend(commands)
        batch.keep.extend(keep)
        batch.timings.extend(timings)
        _submit(batch)


def synchronize(devices: Sequence[str] | None = None) -> None:
    """Wait until the work submitted to ``devices`` (None: every device) is done; raises
    the first error a kernel hit."""
    with _STATE.lock:
        names = list(_STATE.timelines) if devices is None else list(devices)
        for name in names:
            _device(name).synchronize()
        _settle(everywhere=True)
