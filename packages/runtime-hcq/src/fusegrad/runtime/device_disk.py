"""The DISK device: a file as a buffer, through mmap.

``Buffer("DISK:/path/model.bin", n, dtypes.uint8)`` maps the file read-only (weights are
never copied whole: a view reads only the pages of its slice, when it is read). With
``BufferSpec(writable=True)`` the file is created or extended and mapped read-write (for
saving). Missing files and buffers past the end of the file are clear errors.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from fusegrad.runtime.device import Compiled
from fusegrad.runtime.memory import Allocator, BufferSpec


class DiskMemory:
    """``size`` bytes of a mapped file from ``offset``; ``view`` reads them lazily."""

    __slots__ = ("mapping", "offset", "path", "size", "view", "writable")

    def __init__(
        self, path: str, mapping: Any, offset: int, size: int, view: memoryview, writable: bool
    ) -> None:
        self.path, self.mapping, self.offset, self.size = path, mapping, offset, size
        self.view, self.writable = view, writable

    def sub(self, offset: int, size: int) -> DiskMemory:
        """Bytes ``[offset, offset + size)`` of this mapping."""
        if offset < 0 or offset + size > self.size:
            raise ValueError(
                f"DISK:{self.path}: bytes [{self.offset + offset}, {self.offset + offset + size})"
                f" outside the mapped {self.size} bytes"
            )
        view = self.view[offset : offset + size]
        return DiskMemory(self.path, self.mapping, self.offset + offset, size, view, self.writable)


class DiskAllocator(Allocator[DiskMemory]):
    """Maps the device's file."""

    def __init__(self, device: str, path: str) -> None:
        self.device = device
        self.path = path

    def _alloc(self, size: int, options: BufferSpec) -> DiskMemory:
        if options.writable:
            return self._map_writable(size)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.device}: no such file {self.path!r}")
        have = os.path.getsize(self.path)
        if size > have:
            raise ValueError(
                f"{self.device}: the file has {have} bytes, a buffer of {size} bytes doesn't fit"
            )
        if size == 0:
            return DiskMemory(self.path, None, 0, 0, memoryview(b""), False)
        with open(self.path, "rb") as f:
            mapping = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
        return DiskMemory(self.path, mapping, 0, size, memoryview(mapping), False)

    def _map_writable(self, size: int) -> DiskMemory:
        with open(self.path, "a+b") as f:
            if os.path.getsize(self.path) < size:
                f.truncate(size)
            if size == 0:
                return DiskMemory(self.path, None, 0, 0, memoryview(bytearray()), True)
            mapping = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_WRITE)
        return DiskMemory(self.path, mapping, 0, size, memoryview(mapping), True)

    def _offset(self, opaque: DiskMemory, size: int, offset: int) -> DiskMemory:
        return opaque.sub(offset, size)

    def _as_buffer(self, opaque: DiskMemory) -> memoryview:
        self._check_extent(opaque)
        return opaque.view

    def _check_extent(self, opaque: DiskMemory) -> None:
        # a file truncated after it was mapped: touching the lost pages is SIGBUS, so check
        # its size now (the mapping's own fd: the same file even if the path was replaced)
        if opaque.mapping is None or opaque.writable:
            return
        have = opaque.mapping.size()
        if opaque.offset + opaque.size > have:
            raise OSError(
                f"{self.device}: bytes [{opaque.offset}, {opaque.offset + opaque.size}) are past"
                f" the end of the file ({have} bytes; truncated after it was opened?)"
            )

    def _copyin(self, dest: DiskMemory, src: memoryview) -> None:
        if not dest.writable:
            raise PermissionError(
                f"{self.device}: mapped read-only; allocate with BufferSpec(writable=True) "
                "to write the file"
            )
        dest.view[:] = src

    def _copyout(self, dest: memoryview, src: DiskMemory) -> None:
        self._check_extent(src)
        dest[:] = src.view


class DiskDevice(Compiled):
    """A file as device memory; runs no programs."""

    def __init__(self, device: str) -> None:
        path = device.partition(":")[2]
        if not path:
            raise ValueError(f"{device!r}: a DISK device needs a path, DISK:/path/to/file")
        super().__init__(device, DiskAllocator(device, path), [], None)
