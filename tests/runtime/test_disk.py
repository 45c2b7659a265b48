"""The DISK device: files as buffers through mmap."""

from __future__ import annotations

import resource
from pathlib import Path

import numpy as np
import pytest
from fusegrad.runtime import Buffer, BufferSpec
from fusegrad.uop import dtypes


def test_read_a_slice_of_a_file(tmp_path: Path) -> None:
    f = tmp_path / "w.bin"
    data = np.arange(100, dtype=np.float32)
    f.write_bytes(data.tobytes())
    b = Buffer(f"DISK:{f}", 400, dtypes.uint8)
    v = b.view(10, dtypes.float32, offset=40)
    np.testing.assert_array_equal(v.numpy(), data[10:20])
    out = Buffer("CPU", 10, dtypes.float32)
    out.copy_from(v)
    np.testing.assert_array_equal(out.numpy(), data[10:20])


def test_a_slice_of_a_huge_sparse_file_reads_only_that_slice(tmp_path: Path) -> None:
    f = tmp_path / "huge.bin"
    size = 8 << 30  # 8 GiB, sparse: reading it whole would take seconds and the memory
    with open(f, "wb") as fh:
        fh.truncate(size)
        fh.seek(size - 8)
        fh.write(b"fusegrad")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    b = Buffer(f"DISK:{f}", size, dtypes.uint8)
    tail = b.view(8, dtypes.uint8, offset=size - 8)
    assert bytes(tail.as_memoryview()) == b"fusegrad"
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024


def test_missing_file_and_buffer_past_the_end(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        Buffer(f"DISK:{tmp_path}/nope.bin", 4, dtypes.uint8).ensure_allocated()
    f = tmp_path / "small.bin"
    f.write_bytes(b"1234")
    with pytest.raises(ValueError, match="the file has 4 bytes, a buffer of 8 bytes doesn't fit"):
        Buffer(f"DISK:{f}", 8, dtypes.uint8).ensure_allocated()
    with pytest.raises(ValueError, match="outside its base of 4 bytes"):
        Buffer(f"DISK:{f}", 4, dtypes.uint8).view(2, dtypes.uint16, offset=2)


def test_read_only_by_default_writable_on_request(tmp_path: Path) -> None:
    f = tmp_path / "out.bin"
    w = Buffer(f"DISK:{f}", 4, dtypes.int32, options=BufferSpec(writable=True))
    w.copyin(np.array([1, 2, 3, 4], np.int32))
    del w
    assert np.frombuffer(f.read_bytes(), np.int32).tolist() == [1, 2, 3, 4]
    r = Buffer(f"DISK:{f}", 4, dtypes.int32)
    assert r.numpy().tolist() == [1, 2, 3, 4]
    with pytest.raises(PermissionError, match="mapped read-only"):
        r.copyin(np.zeros(4, np.int32))


def test_disk_runs_no_programs(tmp_path: Path) -> None:
    from fusegrad.runtime import Device, Unavailable

    dev = Device[f"DISK:{tmp_path}/x"]
    assert dev.compiler_status() == []
    with pytest.raises(Unavailable, match="runs no programs"):
        dev.load(None)  # type: ignore[arg-type]
