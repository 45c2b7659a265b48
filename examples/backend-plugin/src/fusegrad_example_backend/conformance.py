"""The example backend as a target of the renderer conformance suite.

``targets()`` is registered under the ``fusegrad.conformance_targets`` entry-point group
(see pyproject.toml), so ``tests/renderer/test_conformance.py`` and
``fusegrad.renderer.conformance.check_target`` run the whole corpus on it once the package is
installed. Each case goes the way a real kernel does: ``ExampleRenderer`` prints it, the
``EXAMPLE`` device compiles and loads it, and an HCQ exec command runs it on the device's ring
(THREAD-split cases on its cores) over the case's buffers.
"""

from __future__ import annotations

import ctypes
import shutil
from collections.abc import Mapping, Sequence

from fusegrad.codegen import BufferParam, ProgramSpec, Renderer
from fusegrad.renderer import kernel_signature
from fusegrad.renderer.conformance import ConformanceTarget, RunFn
from fusegrad.runtime import CPUProgram, Device, HostMemory
from fusegrad.uop import PtrDType, UOp


def _host_memory(buf: bytearray) -> HostMemory:
    """A bytearray as device memory of the EXAMPLE device (host memory, zero-copy)."""
    if not buf:
        return HostMemory(buf, 0, 0, memoryview(buf))
    address = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
    return HostMemory(buf, address, len(buf), memoryview(buf))


def _spec(name: str, src: str, uops: list[UOp]) -> ProgramSpec:
    sig = kernel_signature(uops)
    params = tuple(
        BufferParam(int(p.arg), p.dtype.base, p.dtype.size, True, True)
        for p in sig.buffers
        if isinstance(p.dtype, PtrDType)
    )
    return ProgramSpec(name, src, "EXAMPLE", UOp.sink(), tuple(uops), params, sig.variables)


def _runner(renderer: Renderer) -> RunFn:
    device = Device["EXAMPLE"]

    def run(uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]) -> None:
        prog = list(uops)
        sig = kernel_signature(prog)
        src = renderer.render(prog, name=sig.name)
        program = CPUProgram(sig.name, device.compile(src), _spec(sig.name, src, prog))
        handles = [_host_memory(bufs[int(p.arg)]) for p in sig.buffers]
        values = [int(var_vals[str(v.arg[0])]) for v in sig.variables]
        device.exec(program, handles, values, wait=True)

    return run


def _unavailable() -> str | None:
    if not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")):
        return "no C compiler (cc, gcc or clang) on PATH"
    return None


def targets() -> list[ConformanceTarget]:
    """The conformance targets this package adds: ``EXAMPLE``."""
    from fusegrad_example_backend import ExampleRenderer

    return [ConformanceTarget("EXAMPLE", ExampleRenderer, _runner, _unavailable)]
