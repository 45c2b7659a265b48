"""``fusegrad.device``: tinygrad's ``tinygrad.device`` module path.

The device registry, buffers, allocators, compilers and the PROFILE records are the
runtime's (``fusegrad.runtime``), codegen's (``Compiler``, ``CompileError``) and the
renderers' (``TinyELF``: a compiled CPU kernel's object), re-exported. Defined here:
tinygrad's ``Program(dev, obj)`` (a TinyELF loaded on a device, called with Buffers),
``MultiBuffer``, ``DepsTracker`` (which signal values work on a queue must wait for, per
buffer it reads and writes) and the two device-name helpers tinygrad code calls.

>>> from fusegrad.device import Device, canonicalize_device
>>> canonicalize_device("cpu"), canonicalize_device(("cpu:0", "CPU:1"))
('CPU', ('CPU', 'CPU:1'))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from fusegrad.codegen import CompileError, Compiler
from fusegrad.renderer import TinyELF
from fusegrad.runtime import (
    Allocator,
    Buffer,
    BufferSpec,
    Compiled,
    Device,
    HWQueue,
    LRUAllocator,
    ProfileDeviceEvent,
    ProfileGraphEntry,
    ProfileGraphEvent,
    ProfileProgramEvent,
    Signal,
    Unavailable,
    canonicalize,
)
from fusegrad.runtime import Program as LoadedProgram
from fusegrad.uop import DType


class Program:
    """tinygrad's ``Program(dev, obj)``: the compiled kernel ``obj`` (a ``TinyELF``) loaded
    on device ``dev``. Calling it launches the kernel over Buffers (one per buffer entry of
    the signature, checked for device, dtype and size) and Variable values ``vals``; with
    ``wait=True`` it returns the seconds the device took.

    (Backends implement ``fusegrad.runtime.Program``, the device-side loaded kernel this
    wraps: ``self.program``.)
    """

    def __init__(self, dev: str, obj: TinyELF) -> None:
        if not isinstance(obj, TinyELF):
            raise TypeError(f"Program: obj must be a TinyELF, got {type(obj).__name__}")
        self.device = Device[dev]
        if self.device.runtime is None:
            raise ValueError(f"Program: device {self.device.device} runs no programs")
        self.obj = obj
        self.program: LoadedProgram = self.device.runtime(obj.name, bytes(obj.lib), None)

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return str(self.obj.name)

    def __call__(
        self,
        *bufs: Buffer,
        global_size: Sequence[int] = (1, 1, 1),
        local_size: Sequence[int] | None = None,
        vals: Sequence[int] = (),
        wait: bool = False,
    ) -> float | None:
        """Launch over ``bufs`` and ``vals`` (asynchronous unless ``wait``)."""
        self._check(bufs, vals)
        handles = [b.ensure_allocated().opaque for b in bufs]
        if not wait:
            self.device.exec(self.program, handles, vals, global_size, local_size)
            return None
        start, end = Signal(name="program start"), Signal(name="program end")
        queue = self.device.queue().timestamp(start)
        queue.exec(self.program, handles, vals, global_size, local_size)
        queue.timestamp(end).submit(self.device)
        self.device.synchronize()
        return (end.timestamp - start.timestamp) / 1e9

    def _check(self, bufs: Sequence[Buffer], vals: Sequence[int]) -> None:
        params = [p for p in self.obj.signature if p[0] is None]
        variables = [p for p in self.obj.signature if p[0] is not None]
        if len(bufs) != len(params) or len(vals) != len(variables):
            raise ValueError(
                f"Program {self.name}: takes {len(params)} buffers and {len(variables)} values, "
                f"got {len(bufs)} and {len(vals)}"
            )
        for i, (b, (_, size, dtype, _)) in enumerate(zip(bufs, params, strict=True)):
            if canonicalize(b.device) != self.device.device or b.dtype != dtype or b.size < size:
                raise ValueError(
                    f"Program {self.name}: buffer {i} must be {size} x {dtype.name} on "
                    f"{self.device.device}, got {b.size} x {b.dtype.name} on {b.device}"
                )
        for value, (var, _, _, bounds) in zip(vals, variables, strict=True):
            if bounds and not bounds[0] <= value <= bounds[1]:
                raise ValueError(f"Program {self.name}: {var}={value} is outside {bounds}")


class MultiBuffer:
    """One ``Buffer`` of ``size`` elements of ``dtype`` on each of ``device`` (tinygrad's
    container for a sharded value's storage; fusegrad's multi-device tensors are
    ``MultiTensor``s, whose shards each hold their own buffer)."""

    def __init__(self, device: tuple[str, ...], size: int, dtype: DType) -> None:
        if not isinstance(device, tuple) or not device:
            raise ValueError(f"MultiBuffer: device must be a non-empty tuple, got {device!r}")
        self.bufs = [Buffer(d, size, dtype) for d in device]
        self.size, self.dtype = size, dtype

    @property
    def device(self) -> tuple[str, ...]:
        """The devices, one per buffer (canonical names)."""
        return tuple(b.device for b in self.bufs)

    @property
    def nbytes(self) -> int:
        """Bytes of one buffer."""
        return self.bufs[0].nbytes

    def ensure_allocated(self) -> MultiBuffer:
        """Allocate every buffer (those already allocated stay)."""
        for b in self.bufs:
            b.ensure_allocated()
        return self

    def __repr__(self) -> str:
        return f"<MultiBuffer {self.device} size={self.size} dtype={self.dtype!r}>"


class DepsTracker:
    """Per-buffer read/write dependencies of work on HCQ queues: before a kernel or copy
    that reads buffers ``reads`` and writes ``writes`` runs, it must wait for the last writer
    of each buffer it reads (read after write), and for the last writer and every reader
    since of each buffer it writes (write after write, write after read). Work is named by
    the (timeline ``Signal``, value) its queue sets when done; a signal passes its values in
    order, so per signal only the highest value is waited for, and a value already reached
    needs no wait. Buffers are runtime ``Buffer``s (a view counts as its whole base buffer)
    or any other hashable name of memory (BUFFER UOps).

    >>> from fusegrad.runtime import Signal
    >>> copy_q, compute_q = Signal(name="copy"), Signal(name="compute")
    >>> deps = DepsTracker()
    >>> deps.wait_for(reads=["host"], writes=["a"], signal=copy_q, value=1)  # nothing before
    []
    >>> [(s.name, v) for s, v in deps.wait_for(["a"], ["b"], compute_q, 1)]  # reads a
    [('copy', 1)]
    >>> [(s.name, v) for s, v in deps.wait_for([], ["a"], copy_q, 2)]  # overwrites a
    [('copy', 1), ('compute', 1)]
    """

    def __init__(self) -> None:
        #: buffer -> (signal, value) of its last writer
        self.writer: dict[Any, tuple[Signal, int]] = {}
        #: buffer -> signal -> highest value among the readers since its last write
        self.readers: dict[Any, dict[Signal, int]] = {}

    @staticmethod
    def key(buf: Any) -> Any:
        """The memory ``buf`` names (a runtime Buffer view: its base buffer)."""
        return buf.base if isinstance(buf, Buffer) else buf

    def deps(self, reads: Iterable[Any], writes: Iterable[Any]) -> list[tuple[Signal, int]]:
        """The (signal, value) pairs to wait for before work reading ``reads`` and writing
        ``writes`` (one per signal, the highest value; those already reached left out)."""
        need: dict[Signal, int] = {}

        def add(signal: Signal, value: int) -> None:
            if signal.value < value and need.get(signal, 0) < value:
                need[signal] = value

        for buf in map(self.key, reads):
            if (last := self.writer.get(buf)) is not None:
                add(*last)
        for buf in map(self.key, writes):
            if (last := self.writer.get(buf)) is not None:
                add(*last)
            for signal, value in self.readers.get(buf, {}).items():
                add(signal, value)
        return list(need.items())

    def add(self, reads: Iterable[Any], writes: Iterable[Any], signal: Signal, value: int) -> None:
        """Record work that reads ``reads`` and writes ``writes`` and is done when ``signal``
        reaches ``value``: the new last writer of ``writes`` (their readers forgotten: they
        are behind this writer now), a reader of ``reads``."""
        written = {self.key(b) for b in writes}
        for buf in written:
            self.writer[buf] = (signal, value)
            self.readers.pop(buf, None)
        for buf in map(self.key, reads):
            if buf in written:
                continue
            seen = self.readers.setdefault(buf, {})
            seen[signal] = max(seen.get(signal, 0), value)

    def wait_for(
        self, reads: Iterable[Any], writes: Iterable[Any], signal: Signal, value: int
    ) -> list[tuple[Signal, int]]:
        """``deps`` of the work, then ``add`` it: what it waits for."""
        reads, writes = list(reads), list(writes)
        out = self.deps(reads, writes)
        self.add(reads, writes, signal, value)
        return out

    def wait(
        self,
        queue: HWQueue,
        reads: Iterable[Any],
        writes: Iterable[Any],
        signal: Signal,
        value: int,
    ) -> HWQueue:
        """``queue`` with a wait for each dependency of the work it is about to hold
        (``wait_for``; the queue must set ``signal`` to ``value`` when that work is done)."""
        for dep, at in self.wait_for(reads, writes, signal, value):
            if dep is not signal:  # a queue's own ring runs its earlier work first
                queue.wait(dep, at)
        return queue


def canonicalize_device(device: str | tuple[str, ...] | list[str] | None) -> str | tuple[str, ...]:
    """A device name in canonical form (``cpu:0`` -> ``CPU``); a tuple/list of names as a
    tuple of canonical names; None as the default device."""
    if device is None:
        return Device.DEFAULT
    if isinstance(device, (tuple, list)):
        return tuple(canonicalize(d) for d in device)
    if not isinstance(device, str):
        raise TypeError(f"canonicalize_device: expected a device name, got {device!r}")
    return canonicalize(device)


def enumerate_devices_str() -> Iterator[str]:
    """One line per device kind: whether it opens here, and what it is (or why not)."""
    for kind in Device.kinds():
        if kind == "DISK":
            yield f"{kind}: available (files as buffers: DISK:/path/to/file)"
            continue
        try:
            dev = Device[kind]
        except (Unavailable, OSError, KeyError, RuntimeError) as e:
            yield f"{kind}: unavailable ({type(e).__name__}: {e})"
            continue
        yield f"{kind}: available ({type(dev).__name__}, renderer {type(dev.renderer).__name__})"


__all__ = [
    "Allocator",
    "Buffer",
    "BufferSpec",
    "CompileError",
    "Compiled",
    "Compiler",
    "DepsTracker",
    "Device",
    "LRUAllocator",
    "MultiBuffer",
    "ProfileDeviceEvent",
    "ProfileGraphEntry",
    "ProfileGraphEvent",
    "ProfileProgramEvent",
    "Program",
    "TinyELF",
    "canonicalize_device",
    "enumerate_devices_str",
]
