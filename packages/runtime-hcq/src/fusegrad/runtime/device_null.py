"""The NULL device: compiles for real, allocates nothing real, runs nothing.

For compile-only tests and renderer checks (``DEV=NULL:LLVM``, ``DEV=NULL:PTX:sm_90``): the
pipeline down to the binary is exercised, launches and copies are no-ops, buffers read back
as zeros. The PTX options (``PTX`` is ``PTX:SM_90``; ``PTX:SM_75`` .. ``PTX:SM_90``) render
for that GPU architecture and assemble with ``ptxas`` when it is on PATH (else the binary is
the PTX text).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusegrad.codegen import Compiler, Renderer
from fusegrad.runtime.device import Compiled, CompilerOption, Program
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


#: the GPU architectures NULL renders PTX for (``DEV=NULL:PTX:sm_90``)
PTX_ARCHES = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90")


def _ptx_pair(arch: str) -> Any:
    def factory() -> tuple[Renderer, Compiler]:
        from fusegrad.renderer import PTXCompiler, PTXRenderer

        return PTXRenderer(arch), PTXCompiler(arch)

    return factory


def ptx_compilers() -> list[CompilerOption]:
    """PTX for each architecture (``PTX:SM_90`` ...), and ``PTX`` for sm_90."""
    options = [CompilerOption(f"PTX:{arch.upper()}", _ptx_pair(arch)) for arch in PTX_ARCHES]
    return [*options, CompilerOption("PTX", _ptx_pair("sm_90"))]


class NullDevice(Compiled):
    """Compiles with the CPU renderers (or PYTHON's, or PTX's); runs nothing."""

    def __init__(self, device: str = "NULL") -> None:
        compilers = [*cpu_compilers(), python_compiler(), *ptx_compilers()]
        super().__init__(device, NullAllocator(device), compilers, NullProgram)
