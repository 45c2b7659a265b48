"""Device memory: allocators (with an LRU cache of freed allocations) and host memory.

An allocator hands out *opaque* handles; what a handle is belongs to the device (host bytes
for CPU and PYTHON, a file mapping for DISK, nothing for NULL). The runtime only moves
handles around and asks the allocator to copy in and out or to expose host-visible memory as
a ``memoryview``.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Opaque = TypeVar("Opaque")


class OutOfMemoryError(MemoryError):
    """An allocation failed: says which device, how many bytes, and what is cached."""

    def __init__(self, device: str, requested: int, detail: str = "") -> None:
        self.device = device
        self.requested = requested
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"{device}: out of memory allocating {_human(requested)} ({requested} bytes){extra}"
        )


def _human(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


@dataclass(frozen=True, slots=True)
class BufferSpec:
    """Allocation options, tinygrad's fields first: ``uncached``, ``cpu_access`` and ``host``
    are placement hints (nothing to choose on host memory); ``nolru`` bypasses the cache of
    freed allocations; ``zero`` gives zero-filled memory (also when it comes from that
    cache); ``external_ptr`` wraps existing host memory at that address (host allocators:
    never freed nor reused by fusegrad, the caller keeps it alive); ``writable`` (DISK)
    creates or extends the file and maps it read-write."""

    uncached: bool = False
    cpu_access: bool = False
    host: bool = False
    nolru: bool = False
    zero: bool = False
    external_ptr: int | None = None
    writable: bool = False


DEFAULT_SPEC = BufferSpec()


class Allocator(Generic[Opaque]):
    """Allocates device memory. Subclasses implement ``_alloc``/``_free`` and the copies;
    host-visible memory also implements ``_as_buffer`` (zero-copy ``memoryview``)."""

    #: the device name, for error messages
    device: str = ""
    #: tinygrad's attributes (class defaults for subclasses that set only ``device``)
    dev: Any = None
    supports_copy_from_disk: bool = True
    supports_transfer: bool = True

    def __init__(
        self, dev: Any = None, supports_copy_from_disk: bool = True, supports_transfer: bool = True
    ) -> None:
        """``dev``: the device object or name this allocator serves (tinygrad's signature);
        the two ``supports_*`` flags say whether DISK reads and device-to-device transfers
        may target this memory directly."""
        self.dev = dev
        if isinstance(dev, str):
            self.device = dev
        self.supports_copy_from_disk = supports_copy_from_disk
        self.supports_transfer = supports_transfer

    def alloc(self, size: int, options: BufferSpec | None = None) -> Opaque:
        """``size`` bytes of device memory (raises OutOfMemoryError with the sizes)."""
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"{self.device}: allocation size must be an int >= 0, got {size!r}")
        if size > sys.maxsize:
            raise OverflowError(
                f"{self.device}: allocation size {size} bytes overflows the address space"
                f" (at most {sys.maxsize} bytes)"
            )
        try:
            return self._alloc(size, options or DEFAULT_SPEC)
        except (MemoryError, OverflowError) as e:
            if isinstance(e, OutOfMemoryError):
                raise
            raise OutOfMemoryError(self.device, size, str(e)) from e

    def free(self, opaque: Opaque, size: int, options: BufferSpec | None = None) -> None:
        """Give the memory back."""
        self._free(opaque, options or DEFAULT_SPEC)

    def _alloc(self, size: int, options: BufferSpec) -> Opaque:
        raise NotImplementedError(f"{type(self).__name__} must implement _alloc")

    def _free(self, opaque: Opaque, options: BufferSpec) -> None:
        pass

    def _copyin(self, dest: Opaque, src: memoryview) -> None:
        raise NotImplementedError(f"{type(self).__name__} can't copy in")

    def _copyout(self, dest: memoryview, src: Opaque) -> None:
        raise NotImplementedError(f"{type(self).__name__} can't copy out")

    def _offset(self, opaque: Opaque, size: int, offset: int) -> Opaque:
        raise NotImplementedError(f"{type(self).__name__} has no views")

    def _as_buffer(self, opaque: Opaque) -> memoryview | None:
        """The memory as a zero-copy byte view, or None when it isn't host-visible."""
        return None


def _key(options: BufferSpec) -> BufferSpec | None:
    return None if options is DEFAULT_SPEC else options


class LRUAllocator(Allocator[Opaque]):
    """An allocator that keeps freed allocations by (size, options) and hands them out again;
    when an allocation fails it empties the cache and tries once more."""

    def __init__(self, dev: Any = None, **kwargs: Any) -> None:
        super().__init__(dev, **kwargs)
        # keyed by (size, options), the default options as None (hashing the dataclass on
        # every allocation and free costs more than the rest of the lookup)
        self.cache: defaultdict[tuple[int, BufferSpec | None], list[Opaque]] = defaultdict(list)

    def alloc(self, size: int, options: BufferSpec | None = None) -> Opaque:
        """A cached allocation of exactly this size and options, else a new one."""
        opts = options or DEFAULT_SPEC
        cached = self.cache.get((size, _key(opts)))
        if cached and opts.external_ptr is None:
            found = cached.pop()
            if opts.zero:
                view = self._as_buffer(found)
                if view is None:  # can't clear it from here: give it back, allocate anew
                    super().free(found, size, opts)
                    return super().alloc(size, opts)
                view[:] = bytes(len(view))
            return found
        try:
            return super().alloc(size, opts)
        except OutOfMemoryError:
            freed = self.free_cache()
            if not freed:
                raise
            return super().alloc(size, opts)

    def free(self, opaque: Opaque, size: int, options: BufferSpec | None = None) -> None:
        """Keep the allocation for reuse (``nolru``: free it now)."""
        opts = options or DEFAULT_SPEC
        if opts.nolru or opts.external_ptr is not None:  # wrapped memory is not ours to reuse
            super().free(opaque, size, opts)
            return
        self.cache[(size, _key(opts))].append(opaque)

    def free_cache(self) -> int:
        """Really free every cached allocation; returns the bytes freed."""
        total = 0
        for (size, key), opaques in self.cache.items():
            for opaque in opaques:
                super().free(opaque, size, key or DEFAULT_SPEC)
                total += size
        self.cache.clear()
        return total

    @property
    def cached_bytes(self) -> int:
        """Bytes held by the cache of freed allocations."""
        return sum(size * len(v) for (size, _), v in self.cache.items())


# -- host memory ----------------------------------------------------------------------------------

#: alignment of host allocations, enough for any vector load (AVX-512: 64 bytes)
HOST_ALIGN = 64
_MMAP_FROM = 1 << 16
_HUGE_PAGE = 1 << 21


class HostMemory:
    """Host bytes: ``address`` is the first byte, ``view`` the same bytes as a memoryview.
    ``owner`` keeps the storage alive; views of a base share its owner."""

    __slots__ = ("address", "owner", "size", "view")

    def __init__(self, owner: Any, address: int, size: int, view: memoryview) -> None:
        self.owner = owner
        self.address = address
        self.size = size
        self.view = view

    def sub(self, offset: int, size: int) -> HostMemory:
        """The bytes ``[offset, offset + size)`` of this memory."""
        if offset < 0 or offset + size > self.size:
            raise ValueError(f"view [{offset}, {offset + size}) outside {self.size} bytes")
        return HostMemory(
            self.owner, self.address + offset, size, self.view[offset : offset + size]
        )

    def __repr__(self) -> str:
        return f"HostMemory({self.address:#x}, {self.size} bytes)"


def _anonymous_mapping(size: int) -> mmap.mmap:
    """A private anonymous mapping (MAP_SHARED's default for mmap(-1) is shmem, which gets no
    transparent huge pages), advised to use huge pages from 2 MiB: a 64 MiB copy ~20% faster,
    first touch ~4x. Private is safe here: nothing forks a process that would have to see the
    parent's writes (BEAM's workers are fresh processes fed over pipes; MPI reads the memory
    of this process)."""
    owner = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    if size >= _HUGE_PAGE and hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # a kernel without THP: plain pages
            owner.madvise(mmap.MADV_HUGEPAGE)
    return owner


def host_alloc(size: int) -> HostMemory:
    """Fresh zeroed host memory aligned to HOST_ALIGN (a private anonymous mmap for big
    sizes, with transparent huge pages where the kernel has them)."""
    if size >= _MMAP_FROM:
        try:
            owner: Any = _anonymous_mapping(size)
        except OSError as e:  # ENOMEM, or a size mmap can't express
            raise MemoryError(str(e)) from e
        base = ctypes.addressof(ctypes.c_char.from_buffer(owner))
        return HostMemory(owner, base, size, memoryview(owner).cast("B")[:size])
    owner = (ctypes.c_uint8 * (size + HOST_ALIGN))()
    start = ctypes.addressof(owner)
    pad = -start % HOST_ALIGN
    view = memoryview(owner).cast("B")[pad : pad + size]
    return HostMemory(owner, start + pad, size, view)


class HostAllocator(LRUAllocator[HostMemory]):
    """Host memory for the CPU and PYTHON devices: zero-copy ``memoryview``s and addresses
    that compiled kernels take as pointers."""

    def __init__(self, device: str) -> None:
        super().__init__(device)
        self.device = device

    def _alloc(self, size: int, options: BufferSpec) -> HostMemory:
        if options.external_ptr is not None:  # the caller's memory, kept alive by the caller
            ptr = options.external_ptr
            if not isinstance(ptr, int) or ptr <= 0:
                raise ValueError(f"{self.device}: external_ptr must be a host address, got {ptr!r}")
            storage = (ctypes.c_uint8 * size).from_address(ptr)
            if options.zero:
                ctypes.memset(ptr, 0, size)
            return HostMemory(storage, ptr, size, memoryview(storage).cast("B"))
        return host_alloc(size)  # fresh memory is zero-filled

    def _copyin(self, dest: HostMemory, src: memoryview) -> None:
        dest.view[:] = src.cast("B") if src.format != "B" or src.ndim != 1 else src

    def _copyout(self, dest: memoryview, src: HostMemory) -> None:
        (dest.cast("B") if dest.format != "B" or dest.ndim != 1 else dest)[:] = src.view

    def _offset(self, opaque: HostMemory, size: int, offset: int) -> HostMemory:
        return opaque.sub(offset, size)

    def _as_buffer(self, opaque: HostMemory) -> memoryview:
        return opaque.view
