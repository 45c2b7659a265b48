"""Call a compiled CPU kernel from Python: load its object, then run it over buffers.

The CPU runtime device has its own launcher (worker threads, command queues); this one is
the simple, synchronous path the renderer tests, the conformance suite and the compile
benchmark use: one call per core id, in order, on the calling thread.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence
from typing import Any

from fusegrad.renderer.elf import LoadedCode, load_elf
from fusegrad.renderer.signature import KernelSignature


def buffer_address(buf: Any) -> tuple[int, Any]:
    """(address, keep-alive object) of a writable buffer-protocol object (bytearray, NumPy
    array, writable memoryview)."""
    view = memoryview(buf)
    if view.readonly:
        raise TypeError(f"kernel buffers must be writable, got a read-only {type(buf).__name__}")
    raw = view.cast("B")
    holder = (ctypes.c_char * max(raw.nbytes, 1)).from_buffer(raw) if raw.nbytes else None
    return (ctypes.addressof(holder) if holder is not None else 0), (holder, raw)


class CPUProgram:
    """A loaded CPU kernel (an ELF object from a CPU compiler) callable from Python.

    ``program(bufs, var_vals)`` passes ``bufs[slot]`` for each buffer parameter, the
    Variables' int32 values by name, and runs every core id of a THREAD-split kernel.
    """

    def __init__(self, lib: bytes, sig: KernelSignature) -> None:
        self.sig = sig
        self.code: LoadedCode = load_elf(lib, sig.name)
        nargs = len(sig.buffers)
        scalars = len(sig.variables) + (sig.core is not None)
        proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * nargs + [ctypes.c_int32] * scalars))
        self.fn = proto(self.code.address)

    def __call__(self, bufs: Sequence[Any], var_vals: Mapping[str, int] | None = None) -> None:
        """Run the kernel over ``bufs`` (indexed by slot) with the Variables' values."""
        vals = dict(var_vals or {})
        missing = [v.arg[0] for v in self.sig.variables if v.arg[0] not in vals]
        if missing:
            raise ValueError(f"{self.sig.name}: no value for variable(s) {missing}")
        if any(int(b.arg) >= len(bufs) for b in self.sig.buffers):
            raise ValueError(
                f"{self.sig.name}: needs buffer slots up to {self.sig.buffers[-1].arg}"
            )
        addrs = [buffer_address(bufs[int(b.arg)]) for b in self.sig.buffers]
        args: list[Any] = [a for a, _ in addrs] + [vals[v.arg[0]] for v in self.sig.variables]
        cores = self.sig.core_count
        if cores is None:
            self.fn(*args)
            return
        for core in range(cores):
            self.fn(*args, core)

    def free(self) -> None:
        """Unmap the code now (it is also freed when the program is garbage collected)."""
        self.code.free()
