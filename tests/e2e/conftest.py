"""End-to-end test setup: tensors run through the real kernel pipeline (scheduler -> lowering
-> renderer -> compiler -> runtime), never the reference interpreter.

``target`` parametrizes a test over the ways kernels run here: the CPU device with the LLVM
renderer, with the C renderer (when a C compiler exists), and the PYTHON emulator. It makes
that device the default for every tensor the test builds. Helpers are importable from test
modules with ``from e2e_support import ...`` (this conftest puts the folder on sys.path).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fusegrad.engine import KernelExecutor, set_executor
from fusegrad.renderer import CCompilerNotFoundError, find_c_compiler
from fusegrad.runtime import Device
from fusegrad.tensor.convert import default_device

sys.path.insert(0, str(Path(__file__).parent))

TARGETS = ("LLVM", "C", "PYTHON")


def _has_c_compiler() -> bool:
    try:
        find_c_compiler()
    except CCompilerNotFoundError:
        return False
    return True


def _use_default(name: str | None) -> None:
    Device.DEFAULT = name
    default_device.cache_clear()  # the frontend caches the default device


@pytest.fixture(autouse=True)
def kernel_executor() -> Iterator[None]:
    """Every e2e test runs on the kernel pipeline (whatever executor was installed before)."""
    previous = set_executor(KernelExecutor())
    try:
        yield
    finally:
        set_executor(previous)


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> Iterator[str]:
    """Make the target's device the default (``"CPU"`` with LLVM or C, or ``"PYTHON"``);
    yields the device name."""
    kind: str = request.param
    device = "PYTHON" if kind == "PYTHON" else "CPU"
    cpu = Device["CPU"]
    before_renderer = cpu.renderer.suffix
    before_default = Device.default_override  # None: restore "follow DEV", don't pin it
    if kind == "C":
        if not _has_c_compiler():
            pytest.skip("no C compiler on this machine")
        cpu.select_compiler("C")
    elif kind == "LLVM":
        cpu.select_compiler("LLVM")
    _use_default(device)
    try:
        yield device
    finally:
        cpu.select_compiler(before_renderer)
        _use_default(before_default)
