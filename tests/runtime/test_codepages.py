"""Loaded CPU programs share code pages (issue #24): many distinct kernels add a handful of
memory mappings, not two or three each, and freeing them unmaps the pages again."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps")


def _mappings() -> int:
    return len(Path("/proc/self/maps").read_text().splitlines())


def _kernel_object(i: int) -> bytes:
    from fusegrad.renderer.llvm import LLVMCompiler

    src = (
        "define float @k(float %x) {\n"
        f"  %y = fmul float %x, {float(i + 2)!r}\n"
        "  ret float %y\n}\n"
    )
    return LLVMCompiler(opt_level=1).compile(src)


def test_distinct_programs_share_pages_and_unmap_when_freed() -> None:
    from fusegrad.renderer import load_elf
    from fusegrad.renderer.codepages import CODE_PAGES

    if CODE_PAGES.unavailable:
        pytest.skip("no memfd_create here: programs are mapped one by one")
    objects = [_kernel_object(i) for i in range(300)]
    chunks, before = CODE_PAGES.chunks, _mappings()
    codes = [load_elf(obj, "k") for obj in objects]
    grown = _mappings() - before
    assert grown <= 4, f"300 programs added {grown} mappings"  # was about 2 per program
    fn = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)
    assert [fn(c.address)(1.5) for c in codes[:3]] == [3.0, 4.5, 6.0]
    assert fn(codes[-1].address)(1.0) == 301.0
    for code in codes:
        code.free()
    assert all(c.freed for c in codes)
    assert CODE_PAGES.chunks <= chunks  # chunks left empty are unmapped
    assert _mappings() <= before


def test_freed_space_is_reused_and_data_is_zeroed() -> None:
    from fusegrad.renderer import load_elf
    from fusegrad.renderer.codepages import CODE_PAGES

    if CODE_PAGES.unavailable:
        pytest.skip("no memfd_create here")
    first = load_elf(_kernel_object(1000), "k")
    keep = load_elf(_kernel_object(1001), "k")  # keeps the chunk mapped
    place = first.base
    first.free()
    again = load_elf(_kernel_object(1002), "k")
    assert again.base == place  # first fit: the freed piece
    fn = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)
    assert fn(again.address)(1.0) == 1004.0
    again.free()
    keep.free()


def test_many_tensor_kernels_add_few_mappings() -> None:
    from fusegrad import Tensor

    x = Tensor(np.arange(16, dtype=np.float32)).realize()
    (x * 1.25).realize()  # the device and its first chunk
    before = _mappings()
    for i in range(60):
        got = (x * float(i + 3) + 0.5).numpy()
        assert got[2] == 2 * (i + 3) + 0.5
    grown = _mappings() - before
    assert grown <= 10, f"60 distinct kernels added {grown} mappings"


def test_a_release_inside_allocate_waits_instead_of_deadlocking() -> None:
    """The garbage collector may free a program while this thread is inside ``allocate``
    (holding the lock): the release is kept and done by the next call."""
    from fusegrad.renderer import load_elf
    from fusegrad.renderer.codepages import CODE_PAGES

    if CODE_PAGES.unavailable:
        pytest.skip("no memfd_create here")
    keep = load_elf(_kernel_object(2000), "k")
    code = load_elf(_kernel_object(2001), "k")
    place = code.base
    with CODE_PAGES._lock:  # as inside allocate
        code.free()  # returns at once: no deadlock
    assert code.freed
    again = load_elf(_kernel_object(2002), "k")  # gives the pending piece back first
    assert again.base == place
    again.free()
    keep.free()


def test_dropped_tensor_kernels_give_their_code_back() -> None:
    """``clear_kernels`` drops the loaded programs; their code pages are given back."""
    import gc

    from fusegrad import Tensor
    from fusegrad.engine import clear_kernels
    from fusegrad.renderer.codepages import CODE_PAGES

    if CODE_PAGES.unavailable:
        pytest.skip("no memfd_create here")
    x = Tensor(np.arange(16, dtype=np.float32)).realize()
    clear_kernels()
    gc.collect()
    base = sum(c.used for c in CODE_PAGES._chunks)
    for i in range(80):
        (x * float(i + 1000) - 0.5).realize()
    loaded = sum(c.used for c in CODE_PAGES._chunks)
    assert loaded > base + 80 * 64  # each kernel took at least a cache line
    clear_kernels()
    gc.collect()
    assert sum(c.used for c in CODE_PAGES._chunks) <= base
