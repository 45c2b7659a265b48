"""``fusegrad.device``: tinygrad's ``tinygrad.device`` module path.

The device registry, buffers, allocators, compilers and the PROFILE records are the
runtime's (``fusegrad.runtime``), codegen's (``Compiler``, ``CompileError``) and the
renderers' (``TinyELF``: a compiled CPU kernel's object), re-exported. Defined here:
tinygrad's ``Program(dev, obj)`` (a TinyELF loaded on a device, called with Buffers),
``MultiBuffer`` and the two device-name helpers tinygrad code calls.

>>> from fusegrad.device import Device, canonicalize_device
>>> canonicalize_device("cpu"), canonicalize_device(("cpu:0", "CPU:1"))
('CPU', ('CPU', 'CPU:1'))
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from fusegrad.codegen import CompileError, Compiler
from fusegrad.renderer import TinyELF
from fusegrad.runtime import (
    Allocator,
    Buffer,
    BufferSpec,
    Compiled,
    Device,
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
