"""Tensors over byte ranges of files, through the runtime's DISK device.

A file is a ``DISK:/abs/path`` buffer (read-only mmap); each tensor is a view of it at an
offset. Nothing is read until the tensor's values are used: the host array behind the
tensor's BUFFER is a zero-copy window on the mapping, so pages come in on first touch.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from fusegrad.engine import HOST, storage_dtype
from fusegrad.tensor import Tensor
from fusegrad.tensor.convert import canonical_device
from fusegrad.uop import DType, dtypes, prod


def disk_device(path: str | os.PathLike[str]) -> str:
    """The DISK device name of a file (absolute path)."""
    return f"DISK:{os.path.abspath(os.fspath(path))}"


class ByteSource:
    """Bytes that tensors are cut from: ``bytes_at`` and ``tensor`` check every range."""

    path: str
    device: str
    size: int

    def _raw(self, offset: int, size: int) -> memoryview:
        raise NotImplementedError

    def bytes_at(self, offset: int, size: int) -> memoryview:
        """Bytes ``[offset, offset + size)`` (zero-copy; ValueError past the end)."""
        self._check(offset, size)
        return memoryview(b"") if size == 0 else self._raw(offset, size)

    def _check(self, offset: int, size: int) -> None:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(
                f"{self.path}: bytes [{offset}, {offset + size}) are outside the file of "
                f"{self.size} bytes"
            )

    def array(self, offset: int, dtype: DType, count: int) -> np.ndarray[Any, Any]:
        """``count`` elements of ``dtype``'s storage at ``offset`` (a lazy window)."""
        raw = self.bytes_at(offset, count * dtype.itemsize)
        return np.frombuffer(raw, dtype=storage_dtype(dtype), count=count)

    def tensor(self, offset: int, dtype: DType, shape: tuple[int, ...]) -> Tensor:
        """A tensor on this file's DISK device over the bytes at ``offset``."""
        count = int(prod(shape))
        flat = self.array(offset, dtype, count)
        buf = HOST.new_buffer(flat, dtype, self.device)
        return Tensor(buf.reshape(shape), device=self.device)


class DiskFile(ByteSource):
    """A file mapped through the DISK device (``DISK:/abs/path``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from fusegrad.runtime import Buffer

        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"no such file: {self.path!r}")
        self.device = disk_device(self.path)
        self.size = os.path.getsize(self.path)
        self.base = Buffer(self.device, self.size, dtypes.uint8)

    def _raw(self, offset: int, size: int) -> memoryview:
        return self.base.view(size, dtypes.uint8, offset).as_memoryview()


class MemoryBytes(ByteSource):
    """Bytes already in memory (tensors over them live on ``device``)."""

    def __init__(self, data: bytes | memoryview, device: str | None = None) -> None:
        self.data = memoryview(data).cast("B")
        self.path = "<memory>"
        self.device = canonical_device(device)
        self.size = self.data.nbytes

    def _raw(self, offset: int, size: int) -> memoryview:
        return self.data[offset : offset + size]


def open_source(src: Any) -> ByteSource:
    """A path (mapped lazily), a uint8 Tensor (a whole-file DISK tensor maps its file, others
    are read into memory) or bytes."""
    if isinstance(src, (str, os.PathLike)):
        return DiskFile(src)
    if isinstance(src, Tensor):
        dev = src.device
        if dev.startswith("DISK:") and src.shape == (os.path.getsize(dev[5:]),):
            return DiskFile(dev[5:])
        if src.dtype is not dtypes.uint8:
            src = src.contiguous().bitcast(dtypes.uint8)
        return MemoryBytes(src.numpy().tobytes(), None if dev.startswith("DISK:") else dev)
    if isinstance(src, (bytes, bytearray, memoryview)):
        return MemoryBytes(bytes(src))
    raise TypeError(f"expected a path, a uint8 Tensor or bytes, got {type(src).__name__}")


class SourceReader(io.RawIOBase):
    """A seekable read-only file over a ByteSource (reads never allocate past its end)."""

    def __init__(self, src: ByteSource, start: int = 0) -> None:
        self.src, self.pos = src, start

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.src.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, size: int | None = -1) -> bytes:
        left = max(0, self.src.size - self.pos)
        n = left if size is None or size < 0 else min(size, left)
        out = bytes(self.src.bytes_at(self.pos, n))
        self.pos += n
        return out

    def readinto(self, b: Any) -> int:
        n = max(0, min(len(b), self.src.size - self.pos))
        b[:n] = self.src.bytes_at(self.pos, n)
        self.pos += n
        return n


def to_device(t: Tensor, device: str | None) -> Tensor:
    """``t`` on ``device``. A file-backed tensor (a DISK buffer view) moves without a copy:
    its lazy host window becomes a buffer of ``device``, read when it is used."""
    from fusegrad.engine import buffer_of

    target = canonical_device(device)
    buf = buffer_of(t.uop)
    host = HOST.get(buf) if buf is not None else None
    if buf is None or host is None or not t.device.startswith("DISK:") or target.startswith("DISK"):
        return t.to(target)
    # TODO(#11): a plain t.to(target) once uop-core gives COPY its destination's device
    moved = HOST.new_buffer(host, t.dtype, target)
    return Tensor(moved.reshape(t.shape), device=target)
