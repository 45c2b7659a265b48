"""``fusegrad.device``: tinygrad's ``tinygrad.device`` module path.

The device registry, buffers, allocators, compilers and programs are the runtime's
(``fusegrad.runtime``) and codegen's (``Compiler``, ``CompileError``), re-exported; the two
device-name helpers tinygrad code calls are defined here.

>>> from fusegrad.device import Device, canonicalize_device
>>> canonicalize_device("cpu"), canonicalize_device(("cpu:0", "CPU:1"))
('CPU', ('CPU', 'CPU:1'))
"""

from __future__ import annotations

from collections.abc import Iterator

from fusegrad.codegen import CompileError, Compiler
from fusegrad.runtime import (
    Allocator,
    Buffer,
    BufferSpec,
    Compiled,
    Device,
    LRUAllocator,
    Program,
    Unavailable,
    canonicalize,
)
from fusegrad.uop import DType


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
    "Program",
    "canonicalize_device",
    "enumerate_devices_str",
]
