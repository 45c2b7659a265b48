"""Tensors as files and files as tensors: ``TensorIO`` (a file object over a tensor's bytes),
``accept_filename`` (a reader taking a path as well as a tensor), and a content-addressed
store (``fs_store`` / ``fs_load``): a tensor's bytes filed under their SHA3-256 hash, computed
on the tensor's device by ``Tensor.keccak``.

>>> from fusegrad import Tensor
>>> f = TensorIO(Tensor(b"hello world"))
>>> f.read(5), f.seek(6), f.read()
(b'hello', 6, b'world')
"""

from __future__ import annotations

import functools
import io
import os
import pathlib
from collections.abc import Callable
from typing import Any, TypeVar

from fusegrad.codegen import cache_dir
from fusegrad.nn.disk import disk_device
from fusegrad.tensor import Tensor
from fusegrad.uop import dtypes

T = TypeVar("T")


class TensorIO(io.RawIOBase):
    """A seekable, read-only binary file over a 1-d uint8 tensor (a DISK tensor reads only
    the ranges asked for)."""

    def __init__(self, t: Tensor) -> None:
        if t.ndim != 1 or t.dtype is not dtypes.uint8:
            raise ValueError(
                f"TensorIO: expected a 1-d uint8 tensor, got shape {t.shape} dtype {t.dtype!r}"
            )
        self._tensor, self._pos = t, 0
        self._size = int(t.shape[0])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = max(0, min(len(view), self._size - self._pos))
        if n:
            chunk = self._tensor[self._pos : self._pos + n].to("CPU").numpy().tobytes()
            view[:n] = chunk
        self._pos += n
        return n


def accept_filename(func: Callable[[Tensor], T]) -> Callable[[Tensor | str | pathlib.Path], T]:
    """``func`` taking a path too: a ``str``/``Path`` becomes the file's DISK tensor."""

    @functools.wraps(func)
    def wrapper(fn: Tensor | str | pathlib.Path) -> T:
        if isinstance(fn, (str, os.PathLike)):
            size = os.path.getsize(fn)
            fn = Tensor.empty(size, dtype=dtypes.uint8, device=disk_device(fn))
        return func(fn)

    return wrapper


def _store_path(digest: bytes) -> pathlib.Path:
    return cache_dir() / "fs" / digest.hex()


def fs_store(t: Tensor) -> Tensor:
    """File the bytes of ``t`` under their SHA3-256 hash in fusegrad's cache folder; returns
    the hash as a 32-byte uint8 tensor (what ``fs_load`` takes)."""
    data = t.contiguous().bitcast(dtypes.uint8) if t.dtype is not dtypes.uint8 else t
    data = data.flatten().to("CPU")
    digest = data.keccak("sha3_256").realize()
    path = _store_path(bytes(digest.numpy().tobytes()))
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_bytes(data.numpy().tobytes())
        os.replace(tmp, path)
    return digest


def fs_load(t: Tensor, size: int) -> Tensor:
    """The ``size`` bytes ``fs_store`` filed under hash ``t`` (a 32-byte uint8 tensor), as a
    uint8 tensor; FileNotFoundError when nothing is stored under it, ValueError when the
    stored bytes are fewer than ``size``."""
    if t.shape != (32,) or t.dtype is not dtypes.uint8:
        raise ValueError(f"fs_load: expected a 32-byte uint8 hash, got {t.shape} {t.dtype!r}")
    path = _store_path(bytes(t.numpy().tobytes()))
    if not path.exists():
        raise FileNotFoundError(f"fs_load: nothing stored under {path.name}")
    stored = path.stat().st_size
    if size > stored:
        raise ValueError(f"fs_load: {size} bytes asked, {stored} stored under {path.name}")
    return Tensor(path.read_bytes()[:size])
