"""Shared code pages for loaded programs (Linux): many small programs in one memory file.

Mapping every loaded program on its own costs two or three kernel memory mappings each (code
read-execute, constants read-only, data read-write: one mmap split by mprotect), and the
kernel's limit on mappings per process (``vm.max_map_count``, 65,530 by default) is reached
after some 30,000 distinct kernels — a long BEAM search or a server compiling many shapes.

A ``Chunk`` is one anonymous memory file (``memfd_create``) of ``CHUNK_SIZE`` bytes mapped
twice, side by side: a read-execute view the programs run from and a read-write view they are
written (and their data accessed) through, so no page is ever writable and executable in the
same mapping and nothing is re-protected while other programs of the chunk run. That is two
mappings per chunk whatever the number of programs in it. A program's pieces are placed
first-fit in a chunk's free list; freeing returns them, and a chunk left empty is unmapped.
A program bigger than a quarter chunk gets a chunk of its own. Where memory files or fixed
mappings are unavailable ``allocate`` returns None and the loader maps the program alone.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
from dataclasses import dataclass, field

CHUNK_SIZE = 1 << 20
ALIGN = 64  # every piece starts on a cache line (sections need at most that, in practice)

_PROT_NONE, _PROT_R, _PROT_W, _PROT_X = 0, 1, 2, 4
_MAP_SHARED, _MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS = 0x01, 0x02, 0x10, 0x20


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def _mmap(libc: ctypes.CDLL, addr: int | None, size: int, prot: int, flags: int, fd: int) -> int:
    out = libc.mmap(addr, size, prot, flags, fd, 0)
    if out is None or out == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), f"code pages: mmap of {size} bytes failed")
    return int(out)


@dataclass
class Chunk:
    """One memory file of ``size`` bytes: executable view at ``rx``, writable view at
    ``rx + size``; ``free`` holds the free (offset, size) ranges, sorted and coalesced."""

    rx: int
    size: int
    free: list[tuple[int, int]] = field(default_factory=list)
    used: int = 0

    @property
    def rw(self) -> int:
        """Where the bytes of ``rx + offset`` are written: ``rw + offset``."""
        return self.rx + self.size

    def take(self, size: int) -> int | None:
        """The offset of ``size`` free bytes (first fit), or None."""
        for i, (offset, length) in enumerate(self.free):
            if length < size:
                continue
            rest = (offset + size, length - size)
            self.free[i : i + 1] = [rest] if rest[1] else []
            self.used += size
            return offset
        return None

    def give_back(self, offset: int, size: int) -> None:
        """Return ``[offset, offset + size)`` to the free list, merged with its neighbours."""
        self.used -= size
        ranges = sorted([*self.free, (offset, size)])
        merged: list[tuple[int, int]] = []
        for start, length in ranges:
            if merged and merged[-1][0] + merged[-1][1] == start:
                merged[-1] = (merged[-1][0], merged[-1][1] + length)
            else:
                merged.append((start, length))
        self.free = merged


class CodePages:
    """The process's shared code pages (see the module docstring)."""

    def __init__(self) -> None:
        self._chunks: list[Chunk] = []
        self._pending: list[tuple[Chunk, int, int]] = []
        self._lock = threading.Lock()
        self._libc: ctypes.CDLL | None = None
        self.unavailable = not hasattr(os, "memfd_create")

    @property
    def chunks(self) -> int:
        """How many chunks are mapped (two mappings each)."""
        return len(self._chunks)

    def allocate(self, size: int) -> tuple[Chunk, int] | None:
        """(chunk, offset) of ``size`` bytes (rounded up to ALIGN), or None where shared code
        pages are unavailable."""
        size = _round_up(max(size, 1), ALIGN)
        with self._lock:
            self._give_back_pending()
            if self.unavailable:
                return None
            if size <= CHUNK_SIZE // 4:
                for chunk in self._chunks:
                    offset = chunk.take(size)
                    if offset is not None:
                        return chunk, offset
            chunk_size = max(CHUNK_SIZE, _round_up(size, mmap.PAGESIZE))
            try:
                chunk = self._new_chunk(chunk_size)
            except OSError:
                self.unavailable = True  # a sandbox without memfd or fixed mappings
                return None
            self._chunks.append(chunk)
            offset = chunk.take(size)
            assert offset == 0
            return chunk, offset

    def release(self, chunk: Chunk, offset: int, size: int) -> None:
        """Give a program's bytes back; a chunk left empty is unmapped. Called from
        ``LoadedCode.__del__`` too, which the garbage collector may run in a thread holding
        the lock (inside ``allocate``): then the release waits in a list (an atomic append)
        for the next call, instead of deadlocking or changing the free lists mid-search."""
        self._pending.append((chunk, offset, _round_up(max(size, 1), ALIGN)))
        if not self._lock.acquire(blocking=False):
            return  # the holder, or the next allocate or release, gives it back
        try:
            self._give_back_pending()
        finally:
            self._lock.release()

    def _give_back_pending(self) -> None:
        while self._pending:
            chunk, offset, size = self._pending.pop()
            chunk.give_back(offset, size)
            if chunk.used or chunk not in self._chunks:
                continue
            self._chunks.remove(chunk)
            assert self._libc is not None
            self._libc.munmap(chunk.rx, 2 * chunk.size)

    def _new_chunk(self, size: int) -> Chunk:
        if self._libc is None:
            self._libc = _libc()
        libc = self._libc
        fd = os.memfd_create("fusegrad-code", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            # reserve both views' addresses at once, so they are adjacent (code reaches its
            # data with 32-bit displacements), then map the file over each half
            base = _mmap(libc, None, 2 * size, _PROT_NONE, _MAP_PRIVATE | _MAP_ANONYMOUS, -1)
            try:
                _mmap(libc, base, size, _PROT_R | _PROT_X, _MAP_SHARED | _MAP_FIXED, fd)
                _mmap(libc, base + size, size, _PROT_R | _PROT_W, _MAP_SHARED | _MAP_FIXED, fd)
            except OSError:
                libc.munmap(base, 2 * size)
                raise
        finally:
            os.close(fd)  # the mappings keep the file
        return Chunk(base, size, [(0, size)])


CODE_PAGES = CodePages()
