"""The NULL device: compiles for real, allocates nothing real, runs nothing.

For compile-only tests and renderer checks (``DEV=NULL:LLVM``): the pipeline down to the
binary is exercised, launches and copies are no-ops, buffers read back as zeros.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusegrad.runtime.device import Compiled, Program
from fusegrad.runtime.device_cpu import cpu_compilers
from fusegrad.runtime.device_python import python_compiler
from fusegrad.runtime.memory import Allocator, BufferSpec


class NullMemory:
    """A placeholder allocation of ``size`` bytes."""

    __slots__ = ("address", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.address = 0


class NullAllocator(Allocator[NullMemory]):
    """Hands out placeholders; copies do nothing."""

    def __init__(self, device: str) -> None:
        self.device = device

    def _alloc(self, size: int, options: BufferSpec) -> NullMemory:
        return NullMemory(size)

    def _copyin(self, dest: NullMemory, src: memoryview) -> None:
        pass

    def _copyout(self, dest: memoryview, src: NullMemory) -> None:
        pass

    def _offset(self, opaque: NullMemory, size: int, offset: int) -> NullMemory:
        return NullMemory(size)


class NullProgram(Program):
    """Runs nothing."""

    def __call__(
        self,
        bufs: Sequence[Any],
        vals: Sequence[int],
        global_size: Sequence[int],
        local_size: Sequence[int] | None,
        core: int = 0,
    ) -> None:
        return None


class NullDevice(Compiled):
    """Compiles with the CPU renderers (or PYTHON's); runs nothing."""

    def __init__(self, device: str = "NULL") -> None:
        compilers = [*cpu_compilers(), python_compiler()]
        super().__init__(device, NullAllocator(device), compilers, NullProgram)
