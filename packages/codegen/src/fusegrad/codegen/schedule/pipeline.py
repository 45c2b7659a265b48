"""``get_kernel_graph``: the scheduling pipeline, one list of named stages.

Stages (``SCHEDULE_STAGES``, run in order by one loop; ``DEBUG>=3`` times each):

1. ``prepare``  — graph_rewrite ``pm_prepare``: unbind Variables, drop no-ops, give copies
   and custom kernels whole buffers
2. ``layout``   — large matmul operands read a copy laid out for the caches: B in panels,
   A with rows padded off 4 KiB aliasing (``layout.py``)
3. ``realize``  — which nodes get buffers (``realize.py``; the recompute cost model in
   ``recompute.py``: one walk users-first, one sources-first)
4. ``rangeify`` — a graph_rewrite ``pm_rangeify`` per kernel: realized nodes -> kernel ASTs
   (``kernelize.py``), adding assign-hazard and buffer-cap realizations on the way; a kernel
   of the same structure as an earlier one over other buffers reuses its AST (``reuse.py``)
5. ``merge``    — kernels sharing their loops become one multi-output kernel (outputs,
   assigns and their readers: an optimizer's update of a parameter and its state; ``order.py``)
6. ``order``    — a valid execution order (read-after-write, write-after-read)
7. ``memory``   — intermediates share per-device arenas (``memory.py``)
8. ``assemble`` — the cacheable template: CALLs over placeholder buffers

The template is instantiated over the caller's buffers and bound values, and cached by the
graph's structure (``cache.py``): the same structure schedules once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.schedule.cache import ScheduleCache, structure_key
from fusegrad.codegen.schedule.graph import (
    KernelGraph,
    ScheduleTemplate,
    fresh_buffer,
    instantiate,
    placeholder_inputs,
    rebuild,
    untag,
)
from fusegrad.codegen.schedule.kernelize import Call, Kernelizer
from fusegrad.codegen.schedule.layout import add_layout_copies
from fusegrad.codegen.schedule.memory import MemoryPlan, plan_memory
from fusegrad.codegen.schedule.order import execution_order, merge_outputs
from fusegrad.codegen.schedule.realize import (
    Kind,
    PrepareContext,
    find_realizes,
    pm_prepare,
    view_base,
)
from fusegrad.uop import DEBUG, Ops, UOp, graph_rewrite, viztrace
from fusegrad.uop.viztrace import ACTIVE as _TRACE

# Most buffers one kernel may take, by device name prefix (None: no limit). Metal's argument
# table has 31 slots; WebGPU guarantees 8 storage buffers per stage.
MAX_KERNEL_BUFFERS: dict[str, int | None] = {"METAL": 31, "WEBGPU": 8, "CUDA": None, "CPU": None}


def default_buffer_cap(device: Any) -> int | None:
    """The buffer cap of ``device`` from ``MAX_KERNEL_BUFFERS`` (None: unlimited)."""
    name = device if isinstance(device, str) else str(device)
    for prefix, cap in MAX_KERNEL_BUFFERS.items():
        if name.upper().startswith(prefix):
            return cap
    return None


@dataclass
class ScheduleState:
    """What the stages pass along."""

    sink: UOp
    inputs: list[UOp]
    cap: Callable[[Any], int | None]
    prep: PrepareContext = field(default_factory=PrepareContext)
    order: list[UOp] = field(default_factory=list)
    realizes: dict[UOp, Kind] = field(default_factory=dict)
    kz: Kernelizer | None = None
    calls: list[Call] = field(default_factory=list)
    memory: MemoryPlan = field(default_factory=MemoryPlan)
    template: ScheduleTemplate | None = None

    @property
    def kernelizer(self) -> Kernelizer:
        """The kernelizer (after the rangeify stage)."""
        assert self.kz is not None
        return self.kz


def _prepare(st: ScheduleState) -> None:
    for u in st.sink.toposort():  # warm the recursive shape/device caches sources-first
        _ = u.st_shape, u.device
    st.sink = graph_rewrite(st.sink, pm_prepare, st.prep, name="schedule: prepare")


def _layout(st: ScheduleState) -> None:
    st.sink = add_layout_copies(st.sink)


def _realize(st: ScheduleState) -> None:
    st.order = st.sink.toposort()
    for u in st.order:
        _ = u.st_shape, u.device
    st.realizes = find_realizes(st.sink.src, st.order)


def _rangeify(st: ScheduleState) -> None:
    st.kz = Kernelizer(st.realizes, st.cap)
    st.kz.run()


def _merge(st: ScheduleState) -> None:
    merge_outputs(st.kernelizer, st.sink.src)


def _order(st: ScheduleState) -> None:
    st.calls = execution_order(st.kernelizer.calls)


def _memory(st: ScheduleState) -> None:
    kz = st.kernelizer
    keep = {_output_buffer(kz, o) for o in st.sink.src}
    planned = {b for b in kz.new_buffers if b not in keep}
    st.memory = plan_memory([c.buffers for c in st.calls], planned)


def _output_buffer(kz: Kernelizer, out: UOp) -> UOp | None:
    view = kz.views.get(out)
    if view is None:
        return None
    while view.op is not Ops.BUFFER:
        view = view.src[0]
    return view.replace(tag=None)


def _output_view(kz: Kernelizer, out: UOp) -> UOp:
    if out in kz.views:
        return untag(kz.views[out])
    base = view_base(out)
    if base is None or base.op is Ops.BUFFER:
        return out
    return untag(out.substitute({base: kz.views[base]}))


def _assemble(st: ScheduleState) -> None:
    kz = st.kernelizer
    to_placeholder: dict[UOp, UOp] = dict(
        zip(st.inputs, placeholder_inputs(st.inputs), strict=True)
    )
    to_placeholder.update(st.memory.views)
    calls = []
    for c in st.calls:
        bufs = tuple(rebuild(b, to_placeholder) for b in c.buffers)
        variables = tuple(c.ast.variables()) if c.ast.op is Ops.SINK else ()
        calls.append((c.ast, bufs, variables))
    outputs = tuple(rebuild(_output_view(kz, o), to_placeholder) for o in st.sink.src)
    unplanned = [b for b in kz.new_buffers if b not in st.memory.views]
    st.template = ScheduleTemplate(
        tuple(calls),
        outputs,
        tuple(to_placeholder[b] for b in st.inputs),
        (*unplanned, *st.memory.arenas),
        st.memory.planned_bytes,
        st.memory.arena_bytes,
    )


Stage = tuple[str, Callable[[ScheduleState], None]]
SCHEDULE_STAGES: tuple[Stage, ...] = (
    ("prepare", _prepare),
    ("layout", _layout),
    ("realize", _realize),
    ("rangeify", _rangeify),
    ("merge", _merge),
    ("order", _order),
    ("memory", _memory),
    ("assemble", _assemble),
)

schedule_cache = ScheduleCache()


def build_template(
    sink: UOp, inputs: list[UOp], cap: Callable[[Any], int | None]
) -> ScheduleTemplate:
    """Run every stage on ``sink`` (no cache): the schedule over placeholder buffers."""
    st = ScheduleState(sink, inputs, cap)
    if _TRACE:  # VIZ: the schedule is a group of the trace, each stage a record
        with viztrace.group(f"schedule {len(_TRACE[0].groups)}", "schedule", key=sink):
            for name, stage in SCHEDULE_STAGES:
                rec = viztrace.begin(f"schedule: {name}", st.sink, kind="schedule")
                try:
                    stage(st)
                finally:
                    viztrace.end(rec, st.sink)
        assert st.template is not None
        return st.template
    for name, stage in SCHEDULE_STAGES:
        start = time.perf_counter()
        stage(st)
        if DEBUG >= 3:
            print(f"schedule stage {name:<9} {(time.perf_counter() - start) * 1e3:8.2f} ms")
    assert st.template is not None
    return st.template


@dataclass
class ScheduleLookup:
    """A graph's schedule-cache lookup: the template (None on a miss) and what instantiating
    it takes. ``kernel_graph()`` gives the KernelGraph (scheduling first on a miss); a
    caller that runs a cached template its own way uses ``bind``/``views``."""

    sink: UOp
    key: Hashable
    inputs: list[UOp]  # the caller's buffers, in the template's input order
    var_vals: dict[UOp, int]  # the bound Variables' values
    cap: Callable[[Any], int | None]
    cache: ScheduleCache | None
    template: ScheduleTemplate | None

    def kernel_graph(self) -> KernelGraph:
        """The kernel graph of ``sink`` (the template instantiated with fresh buffers)."""
        tpl, hit = self.template, self.template is not None
        if tpl is None:
            tpl = build_template(self.sink, self.inputs, self.cap)
            if self.cache is not None:
                self.cache.put(self.key, tpl)
        return instantiate(tpl, self.inputs, self.var_vals, self.sink.src, fresh_buffer, hit)

    def bind(self, new: Sequence[UOp]) -> dict[UOp, UOp]:
        """Placeholder -> the caller's buffers, ``new`` (one per ``template.allocate``) and
        bound Variables (a cache hit only)."""
        tpl = self.template
        assert tpl is not None, "bind: a cache miss has no template"
        mapping: dict[UOp, UOp] = dict(zip(tpl.inputs, self.inputs, strict=True))
        mapping.update(zip(tpl.allocate, new, strict=True))
        mapping.update((v, v.bind(val)) for v, val in self.var_vals.items())
        return mapping

    def views(self, new: Sequence[UOp]) -> list[UOp]:
        """The view holding each sink source once the template ran with buffers ``new``."""
        assert self.template is not None, "views: a cache miss has no template"
        mapping = self.bind(new)
        return [rebuild(v, mapping) for v in self.template.outputs]


def lookup_schedule(
    sink: UOp,
    max_buffers: Mapping[str, int | None] | None = None,
    cache: ScheduleCache | None = schedule_cache,
) -> ScheduleLookup:
    """Look ``sink`` (a SINK of tensor-level UOps) up in the schedule cache (arguments as
    ``get_kernel_graph``); nothing is scheduled yet."""
    if sink.op is not Ops.SINK:
        raise TypeError(f"get_kernel_graph: expected a SINK of tensors, got {sink.op!r}")
    key, inputs, var_vals = structure_key(sink)
    if not max_buffers:  # the common case (every realize): the structure key as it is
        tpl = cache.get(key) if cache is not None else None
        return ScheduleLookup(sink, key, inputs, var_vals, default_buffer_cap, cache, tpl)
    caps = dict(max_buffers)

    def cap(device: Any) -> int | None:
        name = str(device).upper()
        hit = [c for prefix, c in caps.items() if name.startswith(prefix.upper())]
        return hit[0] if hit else default_buffer_cap(device)

    # caps change the kernels: keyed apart (a tuple never equals a bare structure key)
    full_key = (key, tuple(sorted(caps.items())))
    tpl = cache.get(full_key) if cache is not None else None
    return ScheduleLookup(sink, full_key, inputs, var_vals, cap, cache, tpl)


def get_kernel_graph(
    sink: UOp,
    max_buffers: Mapping[str, int | None] | None = None,
    cache: ScheduleCache | None = schedule_cache,
) -> KernelGraph:
    """The kernel graph computing every source of ``sink`` (a SINK of tensor-level UOps).

    ``max_buffers``: per-device-prefix buffer caps overriding ``MAX_KERNEL_BUFFERS``;
    ``cache``: the schedule cache (None: schedule from scratch).
    """
    return lookup_schedule(sink, max_buffers, cache).kernel_graph()
