"""tinygrad's allocator surface: BufferSpec's fields (zero, external_ptr), Allocator and
LRUAllocator constructors."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.runtime.memory import BufferSpec, HostAllocator, LRUAllocator


def test_buffer_spec_has_tinygrads_fields_in_order() -> None:
    spec = BufferSpec(False, True, False, True, True, None)
    assert (spec.uncached, spec.cpu_access, spec.host, spec.nolru, spec.zero) == (
        False, True, False, True, True,
    )  # fmt: skip
    assert spec.external_ptr is None and spec.writable is False


def test_zero_clears_memory_from_the_reuse_cache() -> None:
    alloc = HostAllocator("CPU")
    spec = BufferSpec(zero=True)
    a = alloc.alloc(4096, spec)
    assert not any(bytes(alloc._as_buffer(a)))
    alloc._as_buffer(a)[:] = b"\xff" * 4096
    alloc.free(a, 4096, spec)
    again = alloc.alloc(4096, spec)  # the same memory back from the cache, cleared
    assert again is a and not any(bytes(alloc._as_buffer(again)))
    b = alloc.alloc(4096)
    alloc._as_buffer(b)[:] = b"\xff" * 4096
    alloc.free(b, 4096)
    assert alloc.alloc(4096) is b and bytes(alloc._as_buffer(b))[:1] == b"\xff"  # no zero: kept


def test_external_ptr_wraps_caller_memory_and_is_never_reused() -> None:
    arr = np.arange(16, dtype=np.float32)
    ptr = arr.ctypes.data
    alloc = HostAllocator("CPU")
    spec = BufferSpec(external_ptr=ptr)
    mem = alloc.alloc(arr.nbytes, spec)
    assert mem.address == ptr
    np.testing.assert_array_equal(np.frombuffer(alloc._as_buffer(mem), np.float32), arr)
    alloc._as_buffer(mem)[:4] = np.float32(42).tobytes()
    assert arr[0] == 42  # the same bytes, no copy
    alloc.free(mem, arr.nbytes, spec)
    assert alloc.cached_bytes == 0
    with pytest.raises(ValueError, match="external_ptr"):
        alloc.alloc(16, BufferSpec(external_ptr=0))


def test_allocator_constructors_take_tinygrads_parameters() -> None:
    lru: LRUAllocator[object] = LRUAllocator("CPU", supports_transfer=False)
    assert lru.dev == "CPU" and lru.device == "CPU"
    assert lru.supports_transfer is False and lru.supports_copy_from_disk is True
    assert HostAllocator("CPU").supports_transfer is True
