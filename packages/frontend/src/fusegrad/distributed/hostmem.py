"""Host memory of realized Tensors, for MPI to read and write without a NumPy round trip.

A Tensor is realized into a buffer of its own (a view or a lazy result gets a contiguous
buffer first, which the tensor holds from then on, without its autograd graph); the runtime ``Buffer`` behind it is
reached through ``fusegrad.engine.runtime_buffer`` and its memory through
``Buffer.as_memoryview``: on host-visible devices (CPU) that is the memory itself, so MPI
reads and writes the tensor in place. On other devices the bytes are copied out and, after
the collective, copied back in (``HostView.commit``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from fusegrad.engine import REALIZED, buffer_of, runtime_buffer, storage_dtype, synchronize
from fusegrad.runtime import Buffer
from fusegrad.tensor import Tensor
from fusegrad.uop import UOp, prod


@dataclass(frozen=True, slots=True)
class HostView:
    """A tensor's elements as a flat NumPy array in their storage dtype (bfloat16/fp8 as
    raw bits), over the buffer's memory when ``zero_copy``."""

    array: np.ndarray[Any, Any]
    buffer: Buffer
    zero_copy: bool

    def commit(self) -> None:
        """Make writes to ``array`` the tensor's value (a copy in, unless zero copy)."""
        if not self.zero_copy:
            self.buffer.copyin(np.ascontiguousarray(self.array).data)


def int_shape(t: Tensor) -> tuple[int, ...]:
    """``t.shape`` as ints; ValueError for a symbolic shape (MPI moves fixed sizes)."""
    out = tuple(s for s in t.shape if isinstance(s, int))
    if len(out) != len(t.shape):
        raise ValueError(f"fusegrad.distributed: symbolic shape {t.shape} is not supported")
    return out


def _own_buffer(t: Tensor) -> UOp:
    """The BUFFER holding ``t``'s value, realizing ``t``. A tensor that isn't a buffer (a
    view, a lazy result, a result autograd keeps the graph of) is made one: its value's
    buffer, or a fresh contiguous copy. Its graph is dropped: the engine recomputes a graph
    whenever an assign invalidates remembered results, which would lose what MPI wrote."""
    int_shape(t)
    t.realize()
    if buffer_of(t.uop) is None:
        view = REALIZED.get(t.uop)
        if view is not None and buffer_of(view) is not None:
            t.uop = view
        else:
            t.uop = t.detach().contiguous().realize().uop
    buf = buffer_of(t.uop)
    if buf is None:
        raise RuntimeError(f"fusegrad.distributed: no buffer behind a {t.shape} tensor")
    return buf


_ZERO_COPY: weakref.WeakKeyDictionary[UOp, HostView] = weakref.WeakKeyDictionary()
"""BUFFER -> its zero-copy view (the memory of a runtime Buffer stays where it is while the
BUFFER lives): a collective on the same tensor again skips the look-ups."""


def host_view(t: Tensor) -> HostView:
    """``t``'s elements in host memory (see the module docstring); realizes ``t``."""
    buf = buffer_of(t.uop)
    if buf is None:
        buf = _own_buffer(t)
    known = _ZERO_COPY.get(buf)
    if known is not None:
        synchronize([known.buffer.device])  # kernels still writing it finish first
        return known
    if any(not isinstance(s, int) for s in t.shape):
        raise ValueError(f"fusegrad.distributed: symbolic shape {t.shape} is not supported")
    memory = runtime_buffer(buf)
    synchronize([memory.device])
    try:
        raw, zero_copy = memory.as_memoryview(force_zero_copy=True), True
    except RuntimeError:
        raw, zero_copy = memory.as_memoryview(allow_zero_copy=False), False
    flat = np.frombuffer(raw, dtype=storage_dtype(t.dtype))[: int(prod(t.shape))]
    if not flat.flags.writeable:
        flat = flat.copy()
        zero_copy = False
    view = HostView(flat, memory, zero_copy)
    if zero_copy:
        _ZERO_COPY[buf] = view
    return view


def empty_like_host(shape: tuple[int, ...], t: Tensor) -> tuple[Tensor, HostView]:
    """A new realized tensor of ``shape`` with ``t``'s dtype and device, and its host view."""
    out = Tensor.empty(*shape, dtype=t.dtype, device=t.device).realize()
    return out, host_view(out)
