"""Buffers and allocators: lazy allocation, views, copies, zero-copy views, the LRU cache,
out-of-memory errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad.runtime import (
    Buffer,
    BufferSpec,
    Device,
    HostAllocator,
    LRUAllocator,
    OutOfMemoryError,
)
from fusegrad.uop import dtypes


def test_allocation_is_lazy() -> None:
    b = Buffer("PYTHON", 8, dtypes.float32)
    assert not b.is_allocated() and b.nbytes == 32
    assert b.opaque is not None and b.is_allocated()


def test_copyin_copyout_roundtrip_and_size_checks() -> None:
    a = np.arange(10, dtype=np.int16)
    b = Buffer("CPU", 10, dtypes.int16).copyin(a)
    out = np.zeros(10, np.int16)
    b.copyout(out)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(ValueError, match="copyin: 18 bytes given, <Buffer CPU 10 int16> has 20"):
        b.copyin(np.zeros(9, np.int16))
    with pytest.raises(ValueError, match="copyout: 40 bytes given"):
        b.copyout(np.zeros(10, np.float32))


def test_views_share_the_base_memory() -> None:
    base = Buffer("PYTHON", 16, dtypes.uint8).copyin(bytes(range(16)))
    v = base.view(2, dtypes.int32, offset=4)
    assert v.base is base and v.offset == 4
    assert v.numpy().tolist() == [0x07060504, 0x0B0A0908]
    v.copyin(np.array([-1, -1], np.int32))
    assert bytes(base.as_memoryview())[4:12] == b"\xff" * 8
    inner = v.view(1, dtypes.uint16, offset=2)  # a view of a view points into the base
    assert inner.base is base and inner.offset == 6


def test_view_out_of_range_is_a_clear_error() -> None:
    base = Buffer("PYTHON", 4, dtypes.float32)
    with pytest.raises(ValueError, match=r"bytes \[8, 24\) outside its base of 16 bytes"):
        base.view(4, dtypes.float32, offset=8)


def test_as_memoryview_is_zero_copy_and_numpy_reads_it() -> None:
    b = Buffer("CPU", 4, dtypes.float32).copyin(np.ones(4, np.float32))
    mv = b.as_memoryview()
    arr = np.frombuffer(mv, np.float32)
    np.asarray(mv).view(np.float32)[1] = 5.0  # write through the view
    assert b.numpy().tolist() == [1.0, 5.0, 1.0, 1.0] and arr[1] == 5.0


def test_host_memory_is_aligned_for_vector_loads() -> None:
    alloc = HostAllocator("CPU")
    for size in (1, 3, 100, 1 << 17):
        assert alloc.alloc(size).address % 64 == 0


def test_lru_cache_reuses_freed_allocations() -> None:
    alloc = HostAllocator("CPU")
    a = alloc.alloc(256)
    alloc.free(a, 256)
    assert alloc.cached_bytes == 256
    assert alloc.alloc(256) is a and alloc.cached_bytes == 0
    alloc.free(a, 256, BufferSpec(nolru=True))
    assert alloc.cached_bytes == 0


def test_buffer_deallocation_returns_memory_to_the_cache() -> None:
    dev = Device["CPU"]
    b = Buffer("CPU", 1000, dtypes.uint8).ensure_allocated()
    opaque = b.opaque
    del b
    assert Buffer("CPU", 1000, dtypes.uint8).opaque is opaque
    assert dev.allocator.cached_bytes >= 0


class _Budget(LRUAllocator[bytearray]):
    device = "TEST"

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.left = budget

    def _alloc(self, size: int, options: Any) -> bytearray:
        if size > self.left:
            raise MemoryError(f"{self.left} bytes left")
        self.left -= size
        return bytearray(size)

    def _free(self, opaque: bytearray, options: Any) -> None:
        self.left += len(opaque)


def test_oom_frees_the_cache_and_retries_then_reports_sizes() -> None:
    alloc = _Budget(1000)
    alloc.free(alloc.alloc(600), 600)  # cached, still counted against the budget
    assert len(alloc.alloc(700)) == 700  # needed the cache emptied
    with pytest.raises(
        OutOfMemoryError, match=r"TEST: out of memory allocating 2.00 KiB \(2048 bytes\)"
    ) as e:
        alloc.alloc(2048)
    assert isinstance(e.value, MemoryError) and e.value.requested == 2048


def test_impossible_host_allocation_raises_out_of_memory() -> None:
    with pytest.raises(
        OutOfMemoryError, match=r"CPU: out of memory allocating .* \(4611686018427387904 bytes\)"
    ):
        HostAllocator("CPU").alloc(1 << 62)


def test_bad_sizes_and_dtypes() -> None:
    with pytest.raises(ValueError, match="size must be an int >= 0"):
        Buffer("CPU", -1, dtypes.float32)
    with pytest.raises(TypeError, match="concrete value dtype"):
        Buffer("CPU", 1, dtypes.weakint)


def test_bfloat16_numpy_gives_raw_bits() -> None:
    b = Buffer("PYTHON", 2, dtypes.bfloat16).copyin(np.array([0x3F80, 0xC000], np.uint16))
    assert b.numpy().dtype == np.uint16 and b.numpy().tolist() == [0x3F80, 0xC000]
