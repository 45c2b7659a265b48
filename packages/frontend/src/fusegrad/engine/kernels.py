"""The kernel executor: tensor graph -> ``get_kernel_graph`` -> ``to_program`` -> device queues.

``realize`` schedules all targets into one schedule and launches it as a ``LaunchPlan``: a
schedule-cache hit launches the template's plan over the caller's buffers and fresh ones (no
kernel graph built), a miss the plan of the new kernel graph. It returns, for each target,
the buffer view the scheduler put its value in. Where that is not a whole buffer in
row-major order (an output that was already a view of a buffer, a slice written by an
assign) a second, small schedule copies it into a fresh buffer, since the Executor contract
hands out ``BUFFER.reshape(shape)``. ``read`` waits for the buffer's device and returns its
contents; it is the only place the host waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fusegrad.codegen.schedule import ScheduleTemplate, lookup_schedule, schedule_cache, target_key
from fusegrad.engine.buffers import buffer_device, known_buffer, runtime_buffer
from fusegrad.engine.host import HOST, storage_dtype
from fusegrad.engine.launch import synchronize
from fusegrad.engine.plan import (
    LaunchPlan,
    bound_values,
    calls_plan,
    named_values,
    result_buffers,
    result_views,
    run_plan,
    template_plan,
    view_recipe,
    whole_buffer,
)
from fusegrad.runtime import host_span
from fusegrad.uop import DEBUG, ContextVar, Ops, UOp, dtypes

#: the runtime's PROFILE setting (the same object by name): host spans only when it is on
HOST_SPANS = ContextVar("PROFILE", 0)


def schedule(targets: Sequence[UOp]) -> tuple[list[UOp], bool]:
    """Schedule and launch ``targets``: the views holding them once computed, and whether
    they are known to be whole buffers of the targets' shapes already (a cache hit of such
    a schedule)."""
    if len(targets) == 1 and DEBUG < 1:
        found = _hit(targets[0])
        if found is not None:
            return found
    sink = UOp(Ops.SINK, dtypes.void, tuple(targets))
    lookup = lookup_schedule(sink)
    tpl = lookup.template
    plan = None if tpl is None or DEBUG >= 1 else template_plan(tpl, sink.src)
    if tpl is not None and plan is not None:  # a hit runs without building a kernel graph
        new = _run_template(plan, tpl, lookup.inputs, lookup.var_vals)
        views = result_views(plan, tpl, new)
        return (list(lookup.views(new)) if views is None else views), plan.whole
    with host_span("schedule"):
        kg = lookup.kernel_graph()
    calls = kg.calls
    if calls:
        plan, uops = calls_plan(calls, kg.buffers)
        with host_span("launch"):
            run_plan(plan, uops, bound_values(calls))
    return [kg.becomes[t] for t in sink.src], False


def _run_template(
    plan: LaunchPlan, tpl: ScheduleTemplate, inputs: list[UOp], var_vals: dict[UOp, int]
) -> list[UOp]:
    """Launch a template's plan over the caller's ``inputs`` and result buffers for its
    ``allocate`` list (returned)."""
    new = result_buffers(plan, tpl)
    if plan.steps:
        with host_span("launch"):
            run_plan(plan, [*inputs, *new], named_values(var_vals))
    return new


def _hit(target: UOp) -> tuple[list[UOp], bool] | None:
    """``schedule`` of one target whose template (and its plan and result views) is cached:
    run without making the SINK and the lookup (None: take the general path). The dispatch
    hot path of a plain realize: ``_run_template`` and ``result_views`` written out."""
    found = target_key(target)
    if found is None:
        return None
    key, inputs, var_vals = found
    tpl = schedule_cache.peek(key)
    if tpl is None:
        return None
    plan = template_plan(tpl, (target,))
    if plan is None:
        return None
    recipe = view_recipe(plan, tpl)
    if recipe is None:
        return None
    schedule_cache.get(key)  # counted (and kept recent) as the lookup would
    new = result_buffers(plan, tpl)
    if plan.steps:
        if HOST_SPANS.value:
            with host_span("launch"):
                run_plan(plan, [*inputs, *new], named_values(var_vals) if var_vals else {})
        else:
            run_plan(plan, [*inputs, *new], named_values(var_vals) if var_vals else {})
    views = [
        new[i] if o is None else UOp(Ops.RESHAPE, o.dtype, (new[i],), o.arg, o.tag)
        for i, o in recipe
    ]
    return views, plan.whole


class KernelExecutor:
    """Runs tensor graphs through the scheduler, the lowering pipeline and the runtime."""

    name = "kernels"

    def realize(self, targets: Sequence[UOp]) -> list[UOp]:
        """Buffer views ``BUFFER.reshape(shape)`` holding the values of ``targets`` (one
        schedule for all of them; assigns performed)."""
        views, whole = schedule(targets)
        if whole:
            return views
        return self._whole(targets, views)

    def realize_one(self, target: UOp) -> UOp | None:
        """``realize([target])[0]`` where ``target``'s template, plan and result views are
        cached (a dispatch-bound loop's step); None, with nothing run, otherwise."""
        if DEBUG.value >= 1:
            return None
        found = _hit(target)
        if found is None:
            return None
        views, whole = found
        return views[0] if whole else self._whole((target,), views)[0]

    def _whole(self, targets: Sequence[UOp], views: list[UOp]) -> list[UOp]:
        """``views`` as whole buffers of the targets' shapes (copied where they aren't)."""
        shapes = [tuple(t.shape) for t in targets]
        out: list[UOp | None] = [whole_buffer(v, s) for v, s in zip(views, shapes, strict=True)]
        copy = [i for i, o in enumerate(out) if o is None]
        if copy:
            copies = [UOp(Ops.CONTIGUOUS, views[i].dtype, (views[i],)) for i in copy]
            copied, _ = schedule(copies)
            for i, view in zip(copy, copied, strict=True):
                out[i] = whole_buffer(view, shapes[i])
                if out[i] is None:
                    raise RuntimeError(f"engine: the scheduler left {targets[i]!r} in {view!r}")
        return [o for o in out if o is not None]

    def read(self, buf: UOp) -> np.ndarray[Any, Any]:
        """The flat contents of BUFFER ``buf`` in its storage dtype (waits for the device)."""
        rb = known_buffer(buf)
        if rb is None:
            host = HOST.get(buf)
            if host is not None:
                return host
            rb = runtime_buffer(buf)
        synchronize([buffer_device(buf)])
        arr: np.ndarray[Any, Any] = np.frombuffer(
            rb.as_memoryview(), dtype=storage_dtype(buf.dtype)
        )
        arr.flags.writeable = False
        return arr
