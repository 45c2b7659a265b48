"""The kernel executor: tensor graph -> ``get_kernel_graph`` -> ``to_program`` -> device queues.

``realize`` schedules all targets into one kernel graph, submits it (``launch.run_graph``)
and returns, for each target, the buffer view the scheduler put its value in. Where that is
not a whole buffer in row-major order (an output that was already a view of a buffer, a
slice written by an assign) a second, small schedule copies it into a fresh buffer, since
the Executor contract hands out ``BUFFER.reshape(shape)``. ``read`` waits for the buffer's
device and returns its contents; it is the only place the host waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fusegrad.codegen.schedule import lookup_schedule
from fusegrad.engine.buffers import buffer_device, known_buffer, runtime_buffer
from fusegrad.engine.host import HOST, storage_dtype
from fusegrad.engine.launch import run_graph, run_template, synchronize
from fusegrad.engine.realize import symbolic_prefix
from fusegrad.uop import Ops, UOp


def _whole_buffer(view: UOp, shape: tuple[Any, ...]) -> UOp | None:
    """``BUFFER.reshape(shape)`` when ``view`` is a whole BUFFER under reshapes only."""
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
    size = 1
    for s in shape:
        size *= s
    if base.op is not Ops.BUFFER or int(base.arg) != size or base.dtype != view.dtype:
        return None
    return base.reshape(shape)


def _schedule(targets: Sequence[UOp]) -> tuple[list[UOp], bool]:
    """The views holding ``targets`` once computed, and whether they are known to be whole
    buffers of the targets' shapes already (a cache hit of such a schedule)."""
    sink = UOp.sink(*targets)
    lookup = lookup_schedule(sink)
    hit = run_template(lookup)  # a cache hit runs without building a kernel graph
    if hit is not None:
        return hit
    kg = lookup.kernel_graph()
    run_graph(kg)
    return [kg.becomes[t] for t in sink.src], False


class KernelExecutor:
    """Runs tensor graphs through the scheduler, the lowering pipeline and the runtime."""

    name = "kernels"

    def realize(self, targets: Sequence[UOp]) -> list[UOp]:
        """Buffer views ``BUFFER.reshape(shape)`` holding the values of ``targets`` (one
        schedule for all of them; assigns performed)."""
        views, whole = _schedule(targets)
        if whole:
            return views
        shapes = [tuple(t.shape) for t in targets]
        out: list[UOp | None] = [_whole_buffer(v, s) for v, s in zip(views, shapes, strict=True)]
        copy = [i for i, o in enumerate(out) if o is None]
        if copy:
            copies = [UOp(Ops.CONTIGUOUS, views[i].dtype, (views[i],)) for i in copy]
            copied, _ = _schedule(copies)
            for i, view in zip(copy, copied, strict=True):
                out[i] = _whole_buffer(view, shapes[i])
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
