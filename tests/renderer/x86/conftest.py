"""x86 renderer tests: Tensor code run on the CPU device's X86 compiler option."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def x86_cpu() -> Iterator[None]:
    """The CPU device renders with the x86 renderer for this test (and a fresh executor, so
    no kernel compiled for another renderer is reused)."""
    from fusegrad.engine import KernelExecutor, set_executor
    from fusegrad.runtime import Device

    cpu = Device["CPU"]
    before = cpu.renderer.suffix
    previous = set_executor(KernelExecutor())
    cpu.select_compiler("X86")
    try:
        yield
    finally:
        cpu.select_compiler(before)
        set_executor(previous)
