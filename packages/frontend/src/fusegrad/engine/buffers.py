"""Device memory behind BUFFER UOps: the runtime ``Buffer`` of each BUFFER the engine has
touched, created on first use.

A BUFFER's data starts either in the host table (``HOST``: arrays the user gave) or nowhere
(``Tensor.empty``, kernel outputs). The first time the engine needs it on its device, a
runtime ``Buffer`` is allocated and the host array (if any) copied in; from then on the
device buffer is the only copy, so the host entry is dropped. A ``BUFFER_VIEW`` (the memory
planner's slice of an arena) is a view of the arena's buffer. The runtime Buffer lives in
the UOp's ``__dict__`` (one attribute read per lookup, no weak reference made): the memory
goes back to the allocator with the last tensor referencing its BUFFER.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from fusegrad.engine.counters import GlobalCounters
from fusegrad.engine.host import HOST
from fusegrad.runtime import Buffer
from fusegrad.uop import Ops, UOp

_RUNTIME = "_runtime_buffer"  # the attribute of a BUFFER/BUFFER_VIEW UOp holding its Buffer


def buffer_device(buf: UOp) -> str:
    """The device name of a BUFFER or BUFFER_VIEW UOp."""
    while buf.op is Ops.BUFFER_VIEW:
        buf = buf.src[0]
    device = buf.src[1].arg
    if not isinstance(device, str):
        raise NotImplementedError(f"engine: buffers on several devices {device!r} (sharding)")
    return device


class _Counted(Buffer):
    """A base buffer the engine allocated: counted in ``GlobalCounters.mem_used`` while it
    lives (a ``__del__`` costs far less than a ``weakref.finalize`` per buffer). ``shared``:
    its memory is also reached some other way than through its BUFFER (a view, a copy to
    another device, a TinyJit capture's fixed slot), so it is never recycled."""

    _counted = 0
    shared = False

    def __del__(self) -> None:
        GlobalCounters.mem_used -= self._counted
        self._counted = 0
        super().__del__()


def _new_base(buf: UOp) -> Buffer:
    out = _Counted(buffer_device(buf), int(buf.arg), buf.dtype)
    host = HOST.get(buf)
    if host is not None:
        out.copyin(np.ascontiguousarray(host).data)
        HOST.arrays.pop(buf, None)  # the device copy is the value from now on
    else:
        out.ensure_allocated()
    out._counted = nbytes = out.nbytes
    GlobalCounters.mem_used += nbytes
    return out


def share(memory: Any) -> None:
    """Mark the engine buffer under runtime ``memory`` (a Buffer or a view of one) as reached
    other than through its BUFFER: ``recyclable`` is False for it from now on."""
    base = getattr(memory, "base", None)
    if isinstance(base, _Counted):
        base.shared = True


def _free_refs(items: tuple[Any, ...], limit: int) -> bool:
    """Whether no member of ``items`` shows more than ``limit`` references from inside this
    loop (the one loop both the calibration below and ``recyclable`` run)."""
    for item in items:  # noqa: SIM110 (a generator: another frame per call, other counts)
        if sys.getrefcount(item) > limit:
            return False
    return True


def _calibrate() -> int:
    """What a member of a tuple that nothing else holds shows in ``_free_refs`` (measured,
    not assumed: interpreters differ in the references their frames take)."""
    lone = (object(),)
    limit = 0
    while not _free_refs(lone, limit):
        limit += 1
    return limit


_FREE_REFS = _calibrate()


def recyclable(bufs: tuple[UOp, ...]) -> bool:
    """Whether BUFFERs ``bufs`` (held in the tuple only) may take a new value: nothing else
    holds any of them, and their memory is reached only through them. Their last kernels may
    still be queued: a later launch on the same device runs after them."""
    if not _free_refs(bufs, _FREE_REFS):
        return False
    for b in bufs:
        rb = b.__dict__.get(_RUNTIME)
        if type(rb) is not _Counted or rb.shared:
            return False
    return True


def runtime_buffer(buf: UOp) -> Buffer:
    """The runtime Buffer of a BUFFER or BUFFER_VIEW UOp (allocated, and filled from the
    host table, on first use)."""
    found: Buffer | None = buf.__dict__.get(_RUNTIME)
    if found is not None:
        return found
    if buf.op is Ops.BUFFER_VIEW:
        size, offset = buf.arg
        base = runtime_buffer(buf.src[0])
        share(base)
        out = base.view(int(size), buf.dtype, int(offset) * buf.dtype.itemsize)
    elif buf.op is Ops.BUFFER:
        out = _new_base(buf)
    else:
        raise TypeError(f"engine: expected a BUFFER or BUFFER_VIEW, got {buf.op!r}")
    buf.__dict__[_RUNTIME] = out
    return out


def adopt(buf: UOp, memory: Buffer) -> None:
    """Back BUFFER ``buf`` with existing runtime memory (an alias: a view of another buffer)."""
    share(memory)
    buf.__dict__[_RUNTIME] = memory


def known_buffer(buf: UOp) -> Buffer | None:
    """The runtime Buffer of ``buf`` if the engine has created it (no allocation)."""
    found: Buffer | None = buf.__dict__.get(_RUNTIME)
    return found


def opaque(buf: UOp) -> Any:
    """The device handle of ``buf``'s memory (what a kernel launch takes)."""
    return runtime_buffer(buf).opaque
