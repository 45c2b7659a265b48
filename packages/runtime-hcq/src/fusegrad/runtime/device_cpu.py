"""The CPU device: host memory, kernels compiled to machine code and called through ctypes,
and HCQ rings whose exec commands run THREAD-split kernels on every core.

Calling convention (shared with every CPU renderer): ``void name(T0* buf0, ..., int32 var0,
..., int32 core_id)`` — buffer pointers by slot, then Variables in ProgramSpec order, then the
core id only when the kernel has a ``SPECIAL core``. ctypes releases the GIL for the call, so
the slices of a split kernel really run in parallel.
"""

from __future__ import annotations

import ctypes
import os
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from fusegrad.codegen import Compiler, ProgramSpec, Renderer, host_cpu_count
from fusegrad.runtime.device import Compiled, CompilerOption, Program, Unavailable
from fusegrad.runtime.flags import CPU_THREADS, HCQ_COMPILED, PROFILE
from fusegrad.runtime.hcq import ExecCmd, WorkerPool
from fusegrad.runtime.memory import HostAllocator
from fusegrad.runtime.native import NativeGraph, NativeRing, native_library
from fusegrad.runtime.profiler import record, record_slice

_ET_REL, _ET_DYN = 1, 3


def load_shared_object(lib: bytes, symbol: str) -> tuple[Any, int]:
    """Load a shared library given as bytes (through a temporary file that is deleted at
    once) and return (the library handle, the address of ``symbol``)."""
    fd, path = tempfile.mkstemp(suffix=".so", prefix="fusegrad-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(lib)
        dll = ctypes.CDLL(path)
    finally:
        os.unlink(path)
    try:
        fn = getattr(dll, symbol)
    except AttributeError:
        raise Unavailable(f"load: no function {symbol!r} in the shared library") from None
    address = ctypes.cast(fn, ctypes.c_void_p).value
    assert address is not None
    return dll, address


def load_code(lib: bytes, symbol: str) -> tuple[Any, int]:
    """(keep-alive handle, function address) for compiled CPU code: an ELF relocatable
    object goes through ``fusegrad.renderer.load_elf``, a shared object through the system
    loader."""
    if lib[:4] != b"\x7fELF":
        raise ValueError(f"load: {symbol}: not an ELF file ({lib[:4]!r}...)")
    e_type = struct.unpack_from("<H", lib, 16)[0]
    if e_type == _ET_DYN:
        return load_shared_object(lib, symbol)
    if e_type != _ET_REL:
        raise ValueError(f"load: {symbol}: ELF type {e_type} is neither an object nor a library")
    import fusegrad.renderer as renderers

    load_elf = getattr(renderers, "load_elf", None)
    if load_elf is None:
        raise Unavailable("load: fusegrad.renderer exports no load_elf (ELF objects) yet")
    code = load_elf(lib, symbol)
    return code, int(code.address)


class CPUProgram(Program):
    """A compiled kernel in executable memory, called through ctypes; ``__call__`` runs one
    core slice."""

    def __init__(
        self,
        name: str,
        lib: bytes,
        spec: ProgramSpec | None = None,
        loader: Callable[[bytes, str], tuple[Any, int]] = load_code,
    ) -> None:
        super().__init__(name, lib, spec)
        self._keep, self.address = loader(lib, name)
        self._fns: dict[tuple[int, int], Any] = {}

    def _function(self, nbufs: int, nvals: int) -> Any:
        fn = self._fns.get((nbufs, nvals))
        if fn is None:
            split = [ctypes.c_int32] if self.core_size is not None else []
            args = [ctypes.c_void_p] * nbufs + [ctypes.c_int32] * nvals + split
            fn = self._fns[(nbufs, nvals)] = ctypes.CFUNCTYPE(None, *args)(self.address)
        return fn

    def __call__(
        self,
        bufs: Sequence[Any],
        vals: Sequence[int],
        global_size: Sequence[int],
        local_size: Sequence[int] | None,
        core: int = 0,
    ) -> None:
        fn = self._function(len(bufs), len(vals))
        core_arg = (core,) if self.core_size is not None else ()
        fn(*(b.address for b in bufs), *vals, *core_arg)


def _renderers_pair(renderer_names: Sequence[str], compiler_names: Sequence[str]) -> Any:
    def factory() -> tuple[Renderer, Compiler]:
        import fusegrad.renderer as renderers

        found = []
        for names in (renderer_names, compiler_names):
            cls = next((getattr(renderers, n) for n in names if hasattr(renderers, n)), None)
            if cls is None:
                raise Unavailable(f"fusegrad.renderer exports no {' / '.join(names)} yet")
            found.append(cls())
        return found[0], found[1]

    return factory


def _x86_pair() -> tuple[Renderer, Compiler]:
    from fusegrad.renderer import X86Compiler, X86Renderer, x86_unavailable

    reason = x86_unavailable()
    if reason is not None:
        raise Unavailable(reason)
    return X86Renderer(), X86Compiler()


def cpu_compilers() -> list[CompilerOption]:
    """The CPU's ways to compile, default first: LLVM (llvmlite, in process), C (system cc),
    X86 (our own machine code: no compiler at all), LVP (Mesa NIR run by llvmpipe)."""
    return [
        CompilerOption("LLVM", _renderers_pair(("LLVMRenderer",), ("LLVMCompiler",))),
        CompilerOption(
            "C",
            _renderers_pair(("CRenderer", "ClangRenderer"), ("CCompiler", "ClangCompiler")),
        ),
        CompilerOption("X86", _x86_pair),
        CompilerOption("LVP", _renderers_pair(("NIRRenderer",), ("LVPCompiler",))),
    ]


def cpu_threads() -> int:
    """Worker threads of the CPU device (``CPU_THREADS``, else the usable cores)."""
    n = int(CPU_THREADS.value)
    return n if n > 0 else host_cpu_count()


class CPUDevice(Compiled):
    """Host memory, ctypes-called kernels, a pool of ``CPU_THREADS`` cores for split kernels."""

    def __init__(
        self,
        device: str = "CPU",
        compilers: Sequence[CompilerOption] | None = None,
        runtime: Any = CPUProgram,
    ) -> None:
        super().__init__(
            device, HostAllocator(device), cpu_compilers() if compilers is None else compilers,
            runtime,
        )  # fmt: skip
        self.threads = cpu_threads()
        self._pool: WorkerPool | None = None

    @property
    def pool(self) -> WorkerPool:
        """The worker threads (started on the first split kernel); the ring's own thread
        is one more worker, so there are ``threads - 1``."""
        with self._lock:
            if self._pool is None:
                self._pool = WorkerPool(self.threads - 1, f"fusegrad-{self.device}-core")
            return self._pool

    @property
    def graph(self) -> Any:
        """``NativeGraph`` (launches encoded once into ring slots) where the compute ring is
        compiled, else None."""
        return NativeGraph if isinstance(self.ring("compute"), NativeRing) else None

    def _new_ring(self, name: str) -> Any:
        """A compiled ring (``native.NativeRing``) where it can be built, else a Python one."""
        lib = native_library() if HCQ_COMPILED.value else None
        if lib is None:
            return super()._new_ring(name)
        return NativeRing(name, lib, self._execute, record, helpers=self.threads - 1)

    def _execute(self, cmd: ExecCmd) -> None:
        prg = cmd.program
        n = prg.slices(cmd.vals)
        if n == 1:
            prg(cmd.bufs, cmd.vals, cmd.global_size, cmd.local_size, 0)
            return
        if PROFILE.value:  # each slice's time, for the trace's per-core spans
            pool = self.pool
            pool.run(lambda i: _timed_slice(cmd, i, pool), n)
            return
        self.pool.run(lambda i: prg(cmd.bufs, cmd.vals, cmd.global_size, cmd.local_size, i), n)

    def close(self) -> None:
        """Stop the rings, then the worker threads."""
        super().close()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def _timed_slice(cmd: ExecCmd, i: int, pool: WorkerPool) -> None:
    """Run slice ``i`` and note its time; the core is numbered like the compiled ring's: the
    ring's thread 0, the pool's threads 1, 2, ..."""
    t0 = time.perf_counter_ns()
    cmd.program(cmd.bufs, cmd.vals, cmd.global_size, cmd.local_size, i)
    end = time.perf_counter_ns()
    me = threading.current_thread()
    core = pool.threads.index(me) + 1 if me in pool.threads else 0
    record_slice(cmd, i, t0, end, core)
