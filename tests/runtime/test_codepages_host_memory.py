"""Host memory for big buffers is a private anonymous mapping advised to use transparent huge
pages (MAP_SHARED anonymous memory is shmem and gets none): checked in /proc/self/smaps."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from fusegrad.runtime.memory import host_alloc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps")


def _mapping_of(address: int) -> list[str]:
    """The smaps block (header and fields) of the mapping holding ``address``."""
    with open("/proc/self/smaps") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        head = line.split()
        if "-" not in head[0] or len(head) < 5:
            continue
        lo, hi = (int(v, 16) for v in head[0].split("-"))
        if lo <= address < hi:
            end = i + 1
            while end < len(lines) and ":" in lines[end].split()[0]:
                end += 1
            return lines[i:end]
    raise AssertionError(f"no mapping holds {address:#x}")


def test_big_host_memory_is_private_zeroed_and_advised_huge() -> None:
    mem = host_alloc(8 << 20)
    block = _mapping_of(mem.address)
    assert block[0].split()[1] == "rw-p", block[0]  # p: private (s: shared)
    flags = next(line for line in block if line.startswith("VmFlags:")).split()[1:]
    assert "hg" in flags, flags  # MADV_HUGEPAGE
    data = np.frombuffer(mem.view, np.uint8)
    assert not data.any()
    data[:] = 7
    assert mem.view[-1] == 7 and len(mem.view) == 8 << 20


def test_small_host_memory_is_aligned_and_zeroed() -> None:
    mem = host_alloc(1000)
    assert mem.address % 64 == 0
    assert bytes(mem.view) == bytes(1000)
