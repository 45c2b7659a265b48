"""The launch plan: the one form in which the engine runs kernels.

A ``LaunchPlan`` is a list of steps (a loaded kernel, or a copy) over numbered buffer
*slots*, and the names of the Variables its kernels take. Slots are of three kinds:

* *given*: bound on every launch (the caller's buffers: a realize's inputs and outputs, a
  TinyJit replay's input tensors and fresh result buffers);
* *fixed*: bound once, held by the plan (a TinyJit capture's weights, state and
  intermediates, its memory-planned arenas);
* *views*: a window of another slot (a memory planner's arena slice).

Plans are built once: from a kernel graph (a schedule-cache miss: ``calls_plan``), from a
schedule-cache template (``template_plan``, remembered per template), or by joining the
plans a TinyJit capture ran (``PlanJoiner``). ``run_plan`` binds the given slots and
launches (``launch.launch_plan`` encodes the steps into HCQ commands). Plain realize, cache
hits and TinyJit replays all go through ``run_plan``; so does a capture, which is how
``PlanJoiner`` sees every plan that ran.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.schedule import ScheduleTemplate
from fusegrad.engine.buffers import (
    buffer_device,
    known_buffer,
    recyclable,
    runtime_buffer,
    share,
)
from fusegrad.engine.host import HOST
from fusegrad.engine.programs import (
    RECIPES,
    Kernel,
    compiling,
    get_kernel,
    preload,
    program_knobs,
    raw_knobs,
)
from fusegrad.engine.realize import symbolic_prefix
from fusegrad.runtime import Buffer, Compiled, Device
from fusegrad.uop import DType, Ops, UOp, prod

BUFFER_OPS = (Ops.BUFFER, Ops.BUFFER_VIEW)


@dataclass(frozen=True, slots=True)
class Step:
    """One launch: ``kernel`` over the buffers in ``slots`` (its parameters in order), or a
    copy (``kernel`` None) of ``nbytes`` from ``slots[1]`` into ``slots[0]``."""

    kernel: Kernel | None
    device: str
    slots: tuple[int, ...]
    nbytes: int = 0

    def access(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(slots read, slots written)."""
        if self.kernel is None:
            return (self.slots[1],), (self.slots[0],)
        spec = self.kernel.spec
        return tuple(self.slots[i] for i in spec.ins), tuple(self.slots[i] for i in spec.outs)


@dataclass(frozen=True, slots=True)
class View:
    """A slot that is ``size`` elements of ``dtype``, ``offset`` bytes into slot ``base``."""

    base: int
    size: int
    dtype: DType
    offset: int


@dataclass(eq=False)
class LaunchPlan:
    """Steps over slots (see the module docstring). ``given`` lists the slots bound per
    launch, in the order ``bind`` takes them."""

    steps: tuple[Step, ...]
    slots: int
    given: tuple[int, ...]
    views: dict[int, View] = field(default_factory=dict)
    fixed: dict[int, Buffer] = field(default_factory=dict)
    #: the given slots a launch fills with buffers it creates (their first use is a write)
    fresh: frozenset[int] = frozenset()
    #: given slots only ever read by copies: a host array may stand in for the buffer
    host_ok: frozenset[int] = frozenset()
    #: every output of a template plan is a whole buffer of its source's shape
    whole: bool = False
    #: launched again and again (a template's or a capture's plan): worth a device graph
    reused: bool = False
    #: launch state worked out on the first launch (``launch.launch_plan``)
    cache: dict[str, Any] = field(default_factory=dict)
    #: device name -> (the device, its renderer) the kernels were loaded for
    loaded: dict[str, tuple[Compiled, Any]] = field(default_factory=dict)
    #: ``program_knobs()`` when the kernels were loaded (BEAM, NOOPT, EMULATED_DTYPES)
    knobs: tuple[object, ...] = field(default_factory=program_knobs)
    #: ``raw_knobs()`` last seen with ``knobs`` (``current`` compares these first)
    raw: tuple[object, ...] = field(default_factory=raw_knobs)

    #: the given slots are all the slots, in order (``bind`` returns the given list)
    direct: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.direct = not self.fixed and not self.views and self.given == tuple(range(self.slots))
        for s in self.steps:
            if s.kernel is not None and s.device not in self.loaded:
                dev = device(s.device)
                self.loaded[s.device] = (dev, dev.renderer)

    @property
    def kernels(self) -> int:
        """Kernel launches per run (copies not counted)."""
        return sum(1 for s in self.steps if s.kernel is not None)

    @property
    def devices(self) -> set[str]:
        """The devices the steps run on."""
        return {s.device for s in self.steps}

    def current(self) -> bool:
        """Whether the kernels are still those the devices would run (no device closed and
        reopened, no other compiler selected, no BEAM/NOOPT/EMULATED_DTYPES change since the
        plan was built)."""
        raw = raw_knobs()
        if raw != self.raw:
            if self.knobs != program_knobs():
                return False
            self.raw = raw  # set differently, meaning the same (BEAM="0" and BEAM=0)
        for name, (dev, renderer) in self.loaded.items():
            now = _DEVICES.get(name)  # ``device(name)`` written out (a check per launch)
            if now is None or now.closed:
                now = device(name)
            if now is not dev or now.renderer is not renderer:
                return False
        return True

    def bind(self, given: Sequence[Any]) -> list[Any]:
        """Every slot's runtime buffer: ``given`` (runtime Buffers, or host arrays for
        copy-only sources), the fixed ones, the views over them."""
        if self.direct:
            return given if isinstance(given, list) else list(given)
        runtime: list[Any] = [None] * self.slots
        for i, b in zip(self.given, given, strict=True):
            runtime[i] = b
        for i, b in self.fixed.items():
            runtime[i] = b
        for i, v in self.views.items():
            if runtime[i] is None:
                runtime[i] = runtime[v.base].view(v.size, v.dtype, v.offset)
        return runtime


_DEVICES: dict[str, Compiled] = {}


def device(name: str) -> Compiled:
    """``Device[name]``, remembered (the registry canonicalizes and locks on every lookup)."""
    found = _DEVICES.get(name)
    if found is None or found.closed:
        found = _DEVICES[name] = Device[name]
    return found


def bound_values(calls: Sequence[UOp]) -> dict[str, int]:
    """The values of the bound Variables the CALLs take, by name."""
    out: dict[str, int] = {}
    for call in calls:
        for s in call.src[1:]:
            if s.op is Ops.AFTER and s.is_bound_var:
                var, val = s.unbind()
                out[str(var.arg[0])] = int(val)
    return out


def named_values(var_vals: dict[UOp, int]) -> dict[str, int]:
    """Variable -> value as name -> value."""
    return {str(v.arg[0]): int(val) for v, val in var_vals.items()}


def whole_buffer(view: UOp, shape: tuple[Any, ...]) -> UOp | None:
    """``view`` as ``BUFFER.reshape(shape)`` (or the BUFFER itself when that is its shape)
    when it is all of one BUFFER under reshapes in row-major order; else None."""
    if view.op is Ops.RESHAPE and view.arg == shape and view.src[0].op is Ops.BUFFER:
        return view  # the common case: the scheduler's own output view
    if view.op is Ops.BUFFER and shape == (view.arg,):
        return view  # a 1-D output: reshaping the BUFFER to its own shape is the BUFFER
    if not all(isinstance(s, int) for s in shape):
        # a symbolic shape: the leading part of a buffer sized for the Variables' max values
        return view if view.arg == shape and symbolic_prefix(view) is not None else None
    base = view
    while base.op is Ops.RESHAPE:
        base = base.src[0]
    if base.op is not Ops.BUFFER or int(base.arg) != prod(shape) or base.dtype != view.dtype:
        return None
    return base.reshape(shape)


def _step(ast: UOp, bufs: Sequence[UOp], slots: tuple[int, ...]) -> Step:
    name = buffer_device(bufs[0])  # a kernel's buffers, a copy's destination
    if ast.op is Ops.COPY:
        return Step(None, name, slots, int(ast.arg))
    return Step(get_kernel(ast, device(name)), name, slots)


def _copy_sources(steps: Sequence[Step], given: Sequence[int]) -> frozenset[int]:
    read_by_kernel = {i for s in steps if s.kernel is not None for i in s.slots}
    sources = {s.slots[1] for s in steps if s.kernel is None}
    return frozenset(sources & set(given) - read_by_kernel)


def calls_plan(calls: Sequence[UOp], fresh: Sequence[UOp] = ()) -> tuple[LaunchPlan, list[UOp]]:
    """The plan of a kernel graph's CALLs, and the buffer of each given slot (every buffer
    the calls use; ``fresh``: those the graph created)."""
    slot_of: dict[UOp, int] = {}
    steps = []
    kernels = [(c.src[0], [s for s in c.src[1:] if s.op in BUFFER_OPS]) for c in calls]
    with compiling(len(calls)):  # one progress bar over the plan's compiles
        # lowered here while the ones before compile in other threads
        preload(
            (ast, device(buffer_device(bufs[0]))) for ast, bufs in kernels if ast.op is not Ops.COPY
        )
        for ast, bufs in kernels:
            slots = tuple(slot_of.setdefault(b, len(slot_of)) for b in bufs)
            steps.append(_step(ast, bufs, slots))
    given = tuple(range(len(slot_of)))
    made = frozenset(slot_of[b] for b in fresh if b in slot_of)
    plan = LaunchPlan(tuple(steps), len(slot_of), given, fresh=made)
    plan.host_ok = _copy_sources(plan.steps, given)
    return plan, list(slot_of)


def _whole_output(view: UOp, source: UOp) -> bool:
    """Whether ``view`` is all of a BUFFER with the int shape of ``source`` (then every
    instantiation of the template is the executor's result form)."""
    shape = tuple(source.shape)
    if not all(isinstance(s, int) for s in shape):
        return False
    return whole_buffer(view, shape) is view and tuple(view.shape) == shape


def _template_plan(tpl: ScheduleTemplate, sources: Sequence[UOp]) -> LaunchPlan | None:
    slot_of = {b: i for i, b in enumerate((*tpl.inputs, *tpl.allocate))}
    given = tuple(range(len(slot_of)))
    views: dict[int, View] = {}

    def slot(b: UOp) -> int | None:
        found = slot_of.get(b)
        if found is not None or b.op is not Ops.BUFFER_VIEW:
            return found
        base = slot(b.src[0])
        if base is None:
            return None
        size, offset = b.arg
        found = slot_of[b] = len(slot_of)
        views[found] = View(base, int(size), b.dtype, int(offset) * b.dtype.itemsize)
        return found

    kernels = []
    for ast, bufs, _ in tpl.calls:
        slots = [slot(b) for b in bufs]
        if not bufs or any(s is None for s in slots):
            return None  # a view of a buffer the template doesn't know: the kernel graph
        kernels.append((ast, bufs, tuple(s for s in slots if s is not None)))
    with compiling(len(tpl.calls)):  # one progress bar over the plan's compiles
        preload(
            (ast, device(buffer_device(bufs[0])))
            for ast, bufs, _ in kernels
            if ast.op is not Ops.COPY
        )
        steps = [_step(ast, bufs, slots) for ast, bufs, slots in kernels]
    whole = all(_whole_output(o, src) for o, src in zip(tpl.outputs, sources, strict=True))
    made = frozenset(range(len(tpl.inputs), len(given)))
    plan = LaunchPlan(
        tuple(steps), len(slot_of), given, views, fresh=made, whole=whole, reused=True
    )
    plan.host_ok = _copy_sources(plan.steps, given)
    return plan


_MAX_PLANS = 1024


def template_plan(tpl: ScheduleTemplate, sources: Sequence[UOp]) -> LaunchPlan | None:
    """The plan of a schedule-cache template (built on its first hit, remembered; None where
    its launches need the kernel-graph path)."""
    found = RECIPES.get(id(tpl))
    if found is not None and found[0] is tpl:
        plan: LaunchPlan | None = found[1]
        if plan is None or plan.current():
            return plan
    plan = _template_plan(tpl, sources)
    if len(RECIPES) >= _MAX_PLANS:
        RECIPES.clear()  # templates the schedule cache evicted go with the rest
    RECIPES[id(tpl)] = (tpl, plan)
    return plan


# -- a template plan's result buffers -----------------------------------------------------------

RECYCLE_BYTES = 4096
"""Results of a template plan up to this many bytes (all its new buffers together) are
recycled: a dispatch-bound loop spends more on making and freeing small buffers than on
running their kernels; large results go back to the allocator as usual."""
SPARE_RESULTS = 4  # earlier results a plan keeps to recycle (a dependent chain needs 2)


def _can_recycle(plan: LaunchPlan, tpl: ScheduleTemplate) -> bool:
    if not tpl.allocate or len(plan.devices) != 1 or plan.fixed:
        return False
    if any(s.kernel is None for s in plan.steps):
        return False  # a copy: another device's queue may read a result
    sizes = [b.arg * b.dtype.itemsize for b in tpl.allocate]
    return all(isinstance(n, int) for n in sizes) and sum(sizes) <= RECYCLE_BYTES


def result_buffers(plan: LaunchPlan, tpl: ScheduleTemplate) -> list[UOp]:
    """BUFFERs for the template's ``allocate`` list on a launch of its plan: those of an
    earlier launch that nobody holds any more and whose memory only they reach (small
    results on one device), else new ones. The earlier launch's kernels may still be queued:
    the device runs the new launch after them. Not while a TinyJit capture records (it tells
    buffers apart by their BUFFER)."""
    found = plan.cache.get("spare")
    if found is None:
        found = plan.cache["spare"] = deque() if _can_recycle(plan, tpl) else False
    if not isinstance(found, deque) or RECORDERS:
        return [UOp.new_buffer(p.src[1].arg, p.arg, p.dtype) for p in tpl.allocate]
    spare: deque[tuple[UOp, ...]] = found
    for i, bufs in enumerate(spare):  # oldest first
        if recyclable(bufs):
            if i:
                del spare[i]
                spare.append(bufs)
            else:
                spare.rotate(-1)
            return list(bufs)
    bufs = tuple(UOp.new_buffer(p.src[1].arg, p.arg, p.dtype) for p in tpl.allocate)
    spare.append(bufs)
    if len(spare) > SPARE_RESULTS:
        spare.popleft()
    return list(bufs)


ViewRecipe = tuple[tuple[int, UOp | None], ...]


def _view_recipe(tpl: ScheduleTemplate) -> ViewRecipe | None:
    """Per template output, (its new buffer's index, the RESHAPE over it or None) when every
    output is a new buffer or an int-shaped reshape of one; else None."""
    index = {b: i for i, b in enumerate(tpl.allocate)}
    out: list[tuple[int, UOp | None]] = []
    for o in tpl.outputs:
        if o in index:
            out.append((index[o], None))
        elif o.op is Ops.RESHAPE and o.src[0] in index and all(type(s) is int for s in o.arg):
            out.append((index[o.src[0]], o))
        else:
            return None
    return tuple(out)


def view_recipe(plan: LaunchPlan, tpl: ScheduleTemplate) -> ViewRecipe | None:
    """How a template plan's result views are made from its new buffers (remembered on the
    plan); None: they need the lookup's ``views`` (outputs that aren't a new buffer or an
    int-shaped reshape of one)."""
    recipe = plan.cache.get("views", False)
    if recipe is False:
        recipe = plan.cache["views"] = _view_recipe(tpl)
    return recipe  # type: ignore[no-any-return]


def result_views(plan: LaunchPlan, tpl: ScheduleTemplate, new: Sequence[UOp]) -> list[UOp] | None:
    """The views holding a template's outputs after its plan ran with new buffers ``new``,
    made without a lookup for the common forms (the buffer, a reshape of it); None for the
    others (the lookup's ``views`` makes them)."""
    recipe = view_recipe(plan, tpl)
    if recipe is None:
        return None
    return [
        new[i] if o is None else UOp(Ops.RESHAPE, o.dtype, (new[i],), o.arg, o.tag)
        for i, o in recipe
    ]


# -- running plans ------------------------------------------------------------------------------


def bind_buffer(buf: UOp, host_ok: bool) -> Any:
    """The runtime object a slot gets for BUFFER ``buf``: its device Buffer (moving host data
    there first), or — for a buffer only copies read — its host array where the engine hasn't
    moved it yet (user data, a DISK file window: copied from where it is)."""
    if host_ok and known_buffer(buf) is None:
        host = HOST.get(buf)
        if host is not None:
            return host
    return runtime_buffer(buf)


Recorder = Callable[[LaunchPlan, Sequence[UOp], list[Any], dict[str, int]], None]
RECORDERS: list[Recorder] = []
"""Called with every plan ``run_plan`` launches (TinyJit's capture installs one)."""


def run_plan(plan: LaunchPlan, uops: Sequence[UOp], values: dict[str, int]) -> None:
    """Launch ``plan`` with its given slots bound to BUFFERs ``uops`` and Variable values."""
    host_ok = plan.host_ok
    if host_ok:
        given = [bind_buffer(b, i in host_ok) for i, b in zip(plan.given, uops, strict=True)]
    else:
        given = [runtime_buffer(b) for b in uops]
    runtime = plan.bind(given)
    for record in RECORDERS:
        record(plan, uops, runtime, values)
    _launch.launch_plan(plan, runtime, values)


# -- joining plans (a TinyJit capture) ----------------------------------------------------------


@dataclass
class JoinedSlot:
    """A slot of a joined plan: the buffer it stood for at capture (weakly: whether anything
    still holds it decides if its memory may be shared), and its runtime buffer."""

    ref: weakref.ref[UOp] | None
    runtime: Any
    fresh: bool  # created by one of the captured plans


@dataclass
class PlanJoiner:
    """Collects the plans run during a capture into one: each buffer one slot."""

    steps: list[Step] = field(default_factory=list)
    slots: list[JoinedSlot] = field(default_factory=list)
    views: dict[int, View] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)
    _by_uop: weakref.WeakKeyDictionary[UOp, int] = field(default_factory=weakref.WeakKeyDictionary)
    _by_key: dict[Any, int] = field(default_factory=dict)

    def _new(self, ref: UOp | None, runtime: Any, fresh: bool) -> int:
        self.slots.append(JoinedSlot(None if ref is None else weakref.ref(ref), runtime, fresh))
        return len(self.slots) - 1

    def _view(self, base: int, size: int, dtype: DType, offset: int, runtime: Any) -> int:
        key = ("view", base, size, dtype, offset)
        found = self._by_key.get(key)
        if found is None:
            found = self._by_key[key] = self._new(None, runtime, False)
            self.views[found] = View(base, size, dtype, offset)
        return found

    def _buffer(self, buf: UOp, runtime: Any, fresh: bool) -> int:
        if buf.op is Ops.BUFFER_VIEW:
            size, offset = buf.arg
            base = self._buffer(buf.src[0], runtime_buffer(buf.src[0]), fresh)
            return self._view(base, int(size), buf.dtype, int(offset) * buf.dtype.itemsize, runtime)
        found = self._by_uop.get(buf)
        if found is None:
            found = self._by_uop[buf] = self._new(buf, runtime, fresh)
        return found

    def add(
        self, plan: LaunchPlan, uops: Sequence[UOp], runtime: list[Any], values: dict[str, int]
    ) -> None:
        """Append a plan that ran with given buffers ``uops`` (bound to ``runtime``)."""
        remap: dict[int, int] = {}
        for i, buf in zip(plan.given, uops, strict=True):
            remap[i] = self._buffer(buf, runtime[i], i in plan.fresh)
        for i, b in plan.fixed.items():
            key = ("fixed", id(b))
            if key not in self._by_key:
                self._by_key[key] = self._new(None, b, False)
                self.slots[-1].ref = None
            remap[i] = self._by_key[key]
        for i, v in sorted(plan.views.items()):
            if i not in remap:
                remap[i] = self._view(remap[v.base], v.size, v.dtype, v.offset, runtime[i])
        for s in plan.steps:
            self.steps.append(Step(s.kernel, s.device, tuple(remap[i] for i in s.slots), s.nbytes))
        self.values.update(values)

    def roots(self) -> list[int]:
        """Each slot's root slot (a view's base, followed down)."""
        roots = list(range(len(self.slots)))
        for i, v in sorted(self.views.items()):
            roots[i] = roots[v.base]
        return roots

    def written(self) -> set[int]:
        """The root slots the steps write."""
        roots = self.roots()
        return {roots[i] for s in self.steps for i in s.access()[1]}

    def slot_of(self, buf: UOp) -> int | None:
        """The slot of BUFFER ``buf`` (None: no captured step used it)."""
        return self._by_uop.get(buf)

    def build(self, given: Sequence[int]) -> LaunchPlan:
        """The joined plan with ``given`` bound per launch; every other slot is fixed to its
        capture-time buffer (views of fixed slots are made once)."""
        given_set = set(given)
        fixed: dict[int, Buffer] = {}
        views: dict[int, View] = {}
        for i, s in enumerate(self.slots):
            if i in given_set:
                continue
            v = self.views.get(i)
            if v is not None and (v.base in given_set or v.base in views):
                views[i] = v
            else:
                fixed[i] = s.runtime
                share(s.runtime)  # the plan writes or reads it on every replay
        steps, n = tuple(self.steps), len(self.slots)
        return LaunchPlan(steps, n, tuple(given), views, fixed, reused=True)


# launch imports this module: bound once both exist (an import statement per run_plan call
# costs about a microsecond)
from fusegrad.engine import launch as _launch  # noqa: E402
