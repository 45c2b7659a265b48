"""The CUDA device: NVIDIA GPUs through the CUDA driver API (``libcuda.so``) with ctypes.

No CUDA Python package is needed, only the driver. ``Device["CUDA"]`` (``CUDA:1``... for
more GPUs) opens the device's primary context; kernels are rendered by ``PTXRenderer`` for the
GPU's architecture and loaded with ``cuModuleLoadData`` — as PTX the driver compiles
(``DEV=CUDA`` or ``CUDA:PTX``, the default: it works with any driver new enough for the GPU)
or as a cubin from ``ptxas`` (``DEV=CUDA:PTXAS``, when ptxas is on PATH and no newer than
the driver).

* memory: ``cuMemAlloc`` behind the LRU cache of freed allocations; host <-> device copies
  go through a pinned staging buffer (``cuMemHostAlloc``) on a copy stream; views are
  pointer offsets;
* HCQ: one ring per engine as on every device; its exec commands launch on the device's
  compute stream (asynchronously), a ``signal`` command first waits for the stream, a
  ``timestamp`` records a CUDA event and converts its time to the host clock, ``wait``
  blocks the ring until the signal's value;
* timing: ``CUDADevice.timer`` times kernels with events (BEAM's timer);
* several GPUs: ``peer_copy`` uses ``cuMemcpyPeer`` (direct over NVLink/PCIe where the GPUs
  can access each other, through the host otherwise: the driver decides).

Without a driver or GPU, opening the device raises ``Unavailable`` naming the reason, so the
device list shows it as unavailable and nothing else changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from fusegrad.codegen import Compiler, ProgramSpec, Renderer
from fusegrad.renderer.conformance import ConformanceTarget, RunFn, register_target
from fusegrad.runtime.device import (
    Compiled,
    CompilerOption,
    Program,
    Unavailable,
    _TimelineRing,
)
from fusegrad.runtime.hcq import Command, ExecCmd, SignalCmd, TimestampCmd
from fusegrad.runtime.memory import BufferSpec, LRUAllocator
from fusegrad.runtime.profiler import record
from fusegrad.uop import DEBUG, Ops, UOp, sym_infer

_ATTR_CC_MAJOR, _ATTR_CC_MINOR = 75, 76
_HOST_ALLOC_PORTABLE = 1
_EVENT_DEFAULT = 0
_STREAM_NON_BLOCKING = 1
#: the PTX architecture to render for each compute capability (newer GPUs JIT sm_90 PTX)
_KNOWN_ARCHES = ((9, 0), (8, 9), (8, 6), (8, 0), (7, 5))


class CUDAError(RuntimeError):
    """A CUDA driver call failed: names the call and the driver's error."""


@functools.cache
def _libcuda() -> Any:
    """The driver library with the signatures we use; Unavailable when it isn't there."""
    names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
    errors = []
    for name in filter(None, names):
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
            continue
        _declare(lib)
        return lib
    raise Unavailable(f"CUDA: the driver library libcuda.so was not found ({'; '.join(errors)})")


def _declare(lib: Any) -> None:
    u64, vp, c_int, c_uint = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
    p = ctypes.POINTER
    table: dict[str, list[Any]] = {
        "cuInit": [c_uint],
        "cuDeviceGetCount": [p(c_int)],
        "cuDeviceGet": [p(c_int), c_int],
        "cuDeviceGetName": [ctypes.c_char_p, c_int, c_int],
        "cuDeviceGetAttribute": [p(c_int), c_int, c_int],
        "cuDevicePrimaryCtxRetain": [p(vp), c_int],
        "cuDevicePrimaryCtxRelease_v2": [c_int],
        "cuCtxSetCurrent": [vp],
        "cuCtxSynchronize": [],
        "cuCtxEnablePeerAccess": [vp, c_uint],
        "cuDeviceCanAccessPeer": [p(c_int), c_int, c_int],
        "cuMemAlloc_v2": [p(u64), ctypes.c_size_t],
        "cuMemFree_v2": [u64],
        "cuMemHostAlloc": [p(vp), ctypes.c_size_t, c_uint],
        "cuMemFreeHost": [vp],
        "cuMemcpyHtoDAsync_v2": [u64, vp, ctypes.c_size_t, vp],
        "cuMemcpyDtoHAsync_v2": [vp, u64, ctypes.c_size_t, vp],
        "cuMemcpyPeer": [u64, vp, u64, vp, ctypes.c_size_t],
        "cuModuleLoadData": [p(vp), ctypes.c_char_p],
        "cuModuleUnload": [vp],
        "cuModuleGetFunction": [p(vp), vp, ctypes.c_char_p],
        "cuLaunchKernel": [vp, *[c_uint] * 6, c_uint, vp, p(vp), p(vp)],
        "cuStreamCreate": [p(vp), c_uint],
        "cuStreamSynchronize": [vp],
        "cuStreamWaitEvent": [vp, vp, c_uint],
        "cuEventCreate": [p(vp), c_uint],
        "cuEventRecord": [vp, vp],
        "cuEventSynchronize": [vp],
        "cuEventElapsedTime": [p(ctypes.c_float), vp, vp],
        "cuEventDestroy_v2": [vp],
        "cuGetErrorString": [c_int, p(ctypes.c_char_p)],
    }
    for name, argtypes in table.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, c_int


def check(result: int, call: str) -> None:
    """Raise CUDAError for a failed driver call (``result`` != CUDA_SUCCESS)."""
    if result == 0:
        return
    text = ctypes.c_char_p()
    _libcuda().cuGetErrorString(result, ctypes.byref(text))
    message = text.value.decode() if text.value else "unknown error"
    raise CUDAError(f"CUDA: {call} failed with error {result}: {message}")


def _call(name: str, *args: Any) -> None:
    check(getattr(_libcuda(), name)(*args), name)


@functools.cache
def device_count() -> int:
    """GPUs the driver sees; Unavailable (with the reason) without a driver or GPU."""
    lib = _libcuda()
    result = lib.cuInit(0)
    if result != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(result, ctypes.byref(text))
        reason = text.value.decode() if text.value else f"error {result}"
        raise Unavailable(f"CUDA: the driver did not initialize: {reason}")
    n = ctypes.c_int()
    _call("cuDeviceGetCount", ctypes.byref(n))
    if n.value == 0:
        raise Unavailable("CUDA: the driver sees no GPU")
    return n.value


def unavailable_reason() -> str | None:
    """Why CUDA can't be used here (None: it can)."""
    try:
        device_count()
    except (Unavailable, CUDAError) as e:
        return str(e)
    return None


def arch_for(major: int, minor: int) -> str:
    """The PTX architecture to render for compute capability ``major.minor``: the newest
    supported one not newer than the GPU (PTX runs on later GPUs through the driver)."""
    for cc in _KNOWN_ARCHES:
        if (major, minor) >= cc:
            return f"sm_{cc[0]}{cc[1]}"
    raise Unavailable(f"CUDA: compute capability {major}.{minor} is older than sm_75")


# -- memory ---------------------------------------------------------------------------------


class CUDAMemory:
    """Device memory: ``address`` is the device pointer; views keep their base alive."""

    __slots__ = ("address", "base", "size")

    def __init__(self, address: int, size: int, base: CUDAMemory | None = None) -> None:
        self.address, self.size, self.base = address, size, base

    def __repr__(self) -> str:
        return f"CUDAMemory({self.address:#x}, {self.size} bytes)"


class _Staging:
    """A growing pinned host buffer for copies (one per device, used under a lock)."""

    def __init__(self) -> None:
        self.ptr, self.size = ctypes.c_void_p(), 0
        self.lock = threading.Lock()

    def get(self, size: int) -> int:
        if size > self.size:
            if self.ptr.value:
                _call("cuMemFreeHost", self.ptr)
            self.size = max(size, 1 << 20)
            _call("cuMemHostAlloc", ctypes.byref(self.ptr), self.size, _HOST_ALLOC_PORTABLE)
        return int(self.ptr.value or 0)


class CUDAAllocator(LRUAllocator[CUDAMemory]):
    """``cuMemAlloc`` memory; copies through pinned staging on the device's copy stream."""

    def __init__(self, dev: CUDADevice, device: str) -> None:
        super().__init__()
        self.dev, self.device = dev, device
        self.staging = _Staging()

    def _alloc(self, size: int, options: BufferSpec) -> CUDAMemory:
        self.dev.activate()
        ptr = ctypes.c_uint64()
        result = _libcuda().cuMemAlloc_v2(ctypes.byref(ptr), max(size, 1))
        if result == 2:  # CUDA_ERROR_OUT_OF_MEMORY
            raise MemoryError("cuMemAlloc: out of device memory")
        check(result, "cuMemAlloc")
        return CUDAMemory(ptr.value, size)

    def _free(self, opaque: CUDAMemory, options: BufferSpec) -> None:
        self.dev.activate()
        _call("cuMemFree_v2", ctypes.c_uint64(opaque.address))

    def _offset(self, opaque: CUDAMemory, size: int, offset: int) -> CUDAMemory:
        return CUDAMemory(opaque.address + offset, size, opaque.base or opaque)

    def _copyin(self, dest: CUDAMemory, src: memoryview) -> None:
        data = src.cast("B") if src.format != "B" or src.ndim != 1 else src
        n = data.nbytes
        with self.staging.lock:
            self.dev.activate()
            host = self.staging.get(n)
            memoryview((ctypes.c_char * n).from_address(host)).cast("B")[:] = data
            args = (ctypes.c_uint64(dest.address), ctypes.c_void_p(host), n, self.dev.copy_stream)
            _call("cuMemcpyHtoDAsync_v2", *args)
            _call("cuStreamSynchronize", self.dev.copy_stream)

    def _copyout(self, dest: memoryview, src: CUDAMemory) -> None:
        out = dest.cast("B") if dest.format != "B" or dest.ndim != 1 else dest
        n = out.nbytes
        with self.staging.lock:
            self.dev.activate()
            host = self.staging.get(n)
            args = (ctypes.c_void_p(host), ctypes.c_uint64(src.address), n, self.dev.copy_stream)
            _call("cuMemcpyDtoHAsync_v2", *args)
            _call("cuStreamSynchronize", self.dev.copy_stream)
            out[:] = memoryview((ctypes.c_char * n).from_address(host)).cast("B")


# -- programs ---------------------------------------------------------------------------------


class CUDAProgram(Program):
    """A kernel loaded with ``cuModuleLoadData`` (PTX text or a cubin), launched on its
    device's compute stream. Buffers are device pointers, then the int32 Variables."""

    def __init__(self, dev: CUDADevice, name: str, lib: bytes, spec: ProgramSpec | None) -> None:
        super().__init__(name, lib, spec)
        self.dev = dev
        image = lib if lib[:4] == b"\x7fELF" else lib.rstrip(b"\0") + b"\0"
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        dev.activate()
        _call("cuModuleLoadData", ctypes.byref(self.module), image)
        _call("cuModuleGetFunction", ctypes.byref(self.function), self.module, name.encode())
        #: kernels with ld/st.v2/.v4 need 16-byte aligned buffers (views may not be)
        self.vector_access = b".global.v" in lib if lib[:4] != b"\x7fELF" else True
        self.cores = self.core_size
        self._scalar: ctypes.c_void_p | None = None
        self._scalar_module: ctypes.c_void_p | None = None

    def function_for(self, bufs: Sequence[Any]) -> ctypes.c_void_p:
        """The kernel to launch over ``bufs``: itself, or — when it uses vector accesses and
        a buffer is not 16-byte aligned (a view) — the same program rendered lane by lane
        (built on first need)."""
        if not self.vector_access or _aligned(bufs):
            return self.function
        if self._scalar is None:
            self._scalar_module, self._scalar = self._lane_by_lane()
        return self._scalar

    def _lane_by_lane(self) -> tuple[ctypes.c_void_p, ctypes.c_void_p]:
        if self.spec is None or not self.spec.uops:
            raise ValueError(
                f"CUDA: {self.name} uses vector loads but a buffer is not 16-byte aligned, "
                "and without its program it can't be rendered lane by lane"
            )
        from fusegrad.renderer import PTXCompiler, PTXRenderer

        src = PTXRenderer(self.dev.arch, vector_memory=False).render(
            list(self.spec.uops), self.name
        )
        lib = PTXCompiler(self.dev.arch, use_ptxas=False).compile(src)
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        self.dev.activate()
        _call("cuModuleLoadData", ctypes.byref(module), lib + b"\0")
        _call("cuModuleGetFunction", ctypes.byref(function), module, self.name.encode())
        return module, function

    def slices(self, vals: Sequence[int]) -> int:
        """One launch: the cores of a THREAD-split kernel are blocks of the grid."""
        return 1

    def launch_grid(self, vals: Sequence[int], global_size: Sequence[int]) -> tuple[int, ...]:
        """The grid: the global size, or the core count for a core-split kernel."""
        if self.cores is None:
            return tuple((*global_size, 1, 1, 1)[:3])
        return (Program.slices(self, vals), 1, 1)

    def __call__(
        self,
        bufs: Sequence[Any],
        vals: Sequence[int],
        global_size: Sequence[int],
        local_size: Sequence[int] | None,
        core: int = 0,
    ) -> None:
        """Launch asynchronously on the compute stream."""
        self.dev.launch(self, bufs, vals, self.launch_grid(vals, global_size), local_size)

    def __del__(self) -> None:
        modules = [getattr(self, "module", None), getattr(self, "_scalar_module", None)]
        if self.dev.closed:
            return
        for module in modules:
            if module is None or not module.value:
                continue
            try:
                self.dev.activate()
                _libcuda().cuModuleUnload(module)
            except Exception:  # interpreter exit: the driver may be gone
                return


def _aligned(bufs: Sequence[Any]) -> bool:
    return all(int(getattr(b, "address", b)) % 16 == 0 for b in bufs)


def _arguments(bufs: Sequence[Any], vals: Sequence[int]) -> list[Any]:
    args: list[Any] = [ctypes.c_uint64(int(getattr(b, "address", b))) for b in bufs]
    return args + [ctypes.c_int32(v) for v in vals]


#: CUDA's launch limits: grid blocks per axis, threads per block per axis and in all
GRID_MAX = (2**31 - 1, 65535, 65535)
BLOCK_MAX = (1024, 1024, 64)
BLOCK_THREADS_MAX = 1024


def _check_dims(name: str, grid: tuple[int, ...], block: tuple[int, ...]) -> None:
    """ValueError naming the kernel and the limit when a launch exceeds CUDA's."""
    too_big = any(g > m for g, m in zip(grid, GRID_MAX, strict=False)) or any(
        b > m for b, m in zip(block, BLOCK_MAX, strict=False)
    )
    if too_big or block[0] * block[1] * block[2] > BLOCK_THREADS_MAX:
        raise ValueError(
            f"CUDA: {name}: launch of grid {grid} x block {block} exceeds CUDA's limits "
            f"(grid {GRID_MAX}, block {BLOCK_MAX}, {BLOCK_THREADS_MAX} threads per block)"
        )


# -- the ring -----------------------------------------------------------------------------------


class _CUDARing(_TimelineRing):
    """The device's ring: exec launches asynchronously; a signal waits for the stream first
    (so it means "done on the GPU"); a timestamp is a CUDA event in host nanoseconds."""

    def __init__(self, name: str, dev: CUDADevice) -> None:
        self.dev = dev
        super().__init__(name, dev._execute, record)

    def _dispatch(self, cmd: Command) -> None:
        if isinstance(cmd, SignalCmd):
            self.dev.stream_synchronize()
        elif isinstance(cmd, TimestampCmd):
            cmd.signal.timestamp = self.dev.event_time_ns()
            return
        super()._dispatch(cmd)


class CUDATimer:
    """BEAM's timer on a CUDA device: scratch buffers, one warm-up launch, then the fastest of
    ``runs`` launches measured with CUDA events (seconds)."""

    def __init__(self, dev: CUDADevice, runs: int = 3) -> None:
        self.dev, self.runs = dev, runs
        self.device = dev.device

    @property
    def compiler(self) -> Compiler:
        """The device's compiler (BEAM builds candidates with it)."""
        return self.dev.compiler

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf
    ) -> float:
        """Seconds of the fastest run of ``spec`` (Variables at their maximum)."""
        dev = self.dev
        prog = dev.load(spec, lib)
        assert isinstance(prog, CUDAProgram)
        var_vals = {str(v.arg[0]): int(v.arg[2]) for v in spec.variables}
        vals = [var_vals[str(v.arg[0])] for v in spec.variables]
        gs, ls = spec.launch_dims(var_vals)
        bufs = [dev.allocator.alloc(max(b.size * b.dtype.itemsize, 1)) for b in spec.buffers]
        try:
            best = math.inf
            for _ in range(self.runs):
                seconds = dev.time_launch(prog, bufs, vals, prog.launch_grid(vals, gs), ls)
                best = min(best, seconds)
                if seconds > limit:
                    break
            return best
        finally:
            for b, p in zip(bufs, spec.buffers, strict=True):
                dev.allocator.free(b, max(p.size * p.dtype.itemsize, 1))


# -- the device ----------------------------------------------------------------------------------


def _cuda_pair(dev: CUDADevice, use_ptxas: bool) -> Any:
    def factory() -> tuple[Renderer, Compiler]:
        from fusegrad.renderer import PTXCompiler, PTXRenderer

        return PTXRenderer(dev.arch), PTXCompiler(dev.arch, use_ptxas=use_ptxas)

    return factory


class CUDADevice(Compiled):
    """One NVIDIA GPU (``CUDA`` is GPU 0, ``CUDA:n`` GPU n); see the module docstring."""

    def __init__(self, device: str = "CUDA") -> None:
        ordinal = int(device.partition(":")[2] or 0)
        count = device_count()
        if ordinal >= count:
            raise Unavailable(f"CUDA: no GPU {ordinal} (the driver sees {count})")
        self.ordinal, self.cu_device = ordinal, ctypes.c_int()
        _call("cuDeviceGet", ctypes.byref(self.cu_device), ordinal)
        self.context = ctypes.c_void_p()
        _call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.cu_device)
        self.activate()
        self.name, self.arch = _name(self.cu_device), arch_for(*_capability(self.cu_device))
        self.compute_stream, self.copy_stream = _stream(), _stream()
        self._clock = _ClockBase(self.compute_stream)
        options = [
            CompilerOption("PTX", _cuda_pair(self, False)),
            CompilerOption("PTXAS", _cuda_pair(self, True)),
        ]
        super().__init__(
            device,
            CUDAAllocator(self, device),
            options,
            lambda name, lib, spec: CUDAProgram(self, name, lib, spec),
        )
        self.timer = CUDATimer(self)

    def activate(self) -> None:
        """Make this GPU's context current in the calling thread."""
        _call("cuCtxSetCurrent", self.context)

    def _new_ring(self, name: str) -> Any:
        return _CUDARing(name, self)

    def _execute(self, cmd: ExecCmd) -> None:
        cmd.program(cmd.bufs, cmd.vals, cmd.global_size, cmd.local_size)
        if DEBUG.value >= 2:  # the profiler's time of this command includes the kernel
            self.stream_synchronize()

    def launch(
        self,
        prog: CUDAProgram,
        bufs: Sequence[Any],
        vals: Sequence[int],
        grid: Sequence[int],
        local_size: Sequence[int] | None,
    ) -> None:
        """``cuLaunchKernel`` on the compute stream."""
        block = tuple((*(local_size or ()), 1, 1, 1)[:3])
        _check_dims(prog.name, tuple(int(g) for g in grid[:3]), block)
        function = prog.function_for(bufs)
        args = _arguments(bufs, vals)
        pointers = (ctypes.c_void_p * max(len(args), 1))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args]
        )
        self.activate()
        _call(
            "cuLaunchKernel",
            function,
            *(int(g) for g in grid[:3]),
            *(int(b) for b in block),
            0,
            self.compute_stream,
            pointers,
            None,
        )

    def time_launch(
        self,
        prog: CUDAProgram,
        bufs: Sequence[Any],
        vals: Sequence[int],
        grid: Sequence[int],
        local_size: Sequence[int] | None,
    ) -> float:
        """Seconds one launch takes on the GPU, measured with events around it."""
        start, end = _event(), _event()
        try:
            _call("cuEventRecord", start, self.compute_stream)
            self.launch(prog, bufs, vals, grid, local_size)
            _call("cuEventRecord", end, self.compute_stream)
            _call("cuEventSynchronize", end)
            ms = ctypes.c_float()
            _call("cuEventElapsedTime", ctypes.byref(ms), start, end)
            return ms.value / 1e3
        finally:
            _call("cuEventDestroy_v2", start)
            _call("cuEventDestroy_v2", end)

    def stream_synchronize(self) -> None:
        """Wait until everything launched on the compute stream is done."""
        self.activate()
        _call("cuStreamSynchronize", self.compute_stream)

    def event_time_ns(self) -> int:
        """A CUDA event recorded on the compute stream now, in host ``perf_counter_ns``."""
        self.activate()
        return self._clock.now(self.compute_stream)

    def peer_copy(self, dest: CUDAMemory, src: CUDAMemory, src_device: CUDADevice) -> None:
        """Copy ``src`` (memory of ``src_device``) into ``dest`` (this GPU's), GPU to GPU."""
        if dest.size != src.size:
            raise ValueError(f"peer_copy: sizes differ, {dest.size} <- {src.size} bytes")
        src_device.stream_synchronize()
        self.stream_synchronize()
        _call(
            "cuMemcpyPeer",
            ctypes.c_uint64(dest.address),
            self.context,
            ctypes.c_uint64(src.address),
            src_device.context,
            dest.size,
        )

    def can_access_peer(self, other: CUDADevice) -> bool:
        """Whether this GPU can read ``other``'s memory directly."""
        can = ctypes.c_int()
        _call("cuDeviceCanAccessPeer", ctypes.byref(can), self.cu_device, other.cu_device)
        return bool(can.value)

    def synchronize(self) -> None:
        """Wait for every queue and for the GPU."""
        super().synchronize()
        if not self.closed:
            self.stream_synchronize()

    def __repr__(self) -> str:
        return (
            f"<CUDADevice {self.device} {getattr(self, 'name', '?')} {getattr(self, 'arch', '')}>"
        )


def _name(dev: ctypes.c_int) -> str:
    buf = ctypes.create_string_buffer(256)
    _call("cuDeviceGetName", buf, 256, dev)
    return buf.value.decode(errors="replace")


def _capability(dev: ctypes.c_int) -> tuple[int, int]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _call("cuDeviceGetAttribute", ctypes.byref(major), _ATTR_CC_MAJOR, dev)
    _call("cuDeviceGetAttribute", ctypes.byref(minor), _ATTR_CC_MINOR, dev)
    return major.value, minor.value


def _stream() -> ctypes.c_void_p:
    stream = ctypes.c_void_p()
    _call("cuStreamCreate", ctypes.byref(stream), _STREAM_NON_BLOCKING)
    return stream


def _event() -> ctypes.c_void_p:
    event = ctypes.c_void_p()
    _call("cuEventCreate", ctypes.byref(event), _EVENT_DEFAULT)
    return event


class _ClockBase:
    """Converts CUDA event times to the host clock: an event recorded and waited for at
    creation is paired with ``perf_counter_ns`` then; later events are offsets from it."""

    def __init__(self, stream: ctypes.c_void_p) -> None:
        self.event = _event()
        _call("cuEventRecord", self.event, stream)
        _call("cuEventSynchronize", self.event)
        self.host_ns = time.perf_counter_ns()

    def now(self, stream: ctypes.c_void_p) -> int:
        event = _event()
        try:
            _call("cuEventRecord", event, stream)
            _call("cuEventSynchronize", event)
            ms = ctypes.c_float()
            _call("cuEventElapsedTime", ctypes.byref(ms), self.event, event)
            return self.host_ns + int(ms.value * 1e6)
        finally:
            _call("cuEventDestroy_v2", event)


# -- the conformance suite on CUDA ---------------------------------------------------------------


def _core_count(uops: Sequence[UOp], var_vals: Mapping[str, int]) -> int | None:
    core = next((u for u in uops if u.op is Ops.SPECIAL and u.arg == "core"), None)
    return None if core is None else int(sym_infer(core.src[0], var_vals))


def run_linear_on_cuda(
    dev: CUDADevice,
    renderer: Renderer,
    uops: Sequence[UOp],
    bufs: list[bytearray],
    var_vals: Mapping[str, int],
) -> None:
    """Render a linear program with ``renderer``, run it on ``dev`` (one thread; a block per
    core of a core-split program) over copies of ``bufs``, and copy the results back."""
    from fusegrad.renderer import ptx_signature

    prog_uops = list(uops)
    src = renderer.render(prog_uops, "conformance")
    assert isinstance(src, str)
    prog = CUDAProgram(dev, "conformance", dev.compile(src), None)
    sig = ptx_signature(prog_uops, "conformance")
    mems = [dev.allocator.alloc(max(len(bufs[int(b.arg)]), 1)) for b in sig.buffers]
    try:
        for mem, b in zip(mems, sig.buffers, strict=True):
            dev.allocator._copyin(mem, memoryview(bufs[int(b.arg)]))
        vals = [int(var_vals[str(v.arg[0])]) for v in sig.variables]
        cores = _core_count(prog_uops, var_vals)
        dev.launch(prog, mems, vals, (cores or 1, 1, 1), None)
        dev.stream_synchronize()
        for mem, b in zip(mems, sig.buffers, strict=True):
            dev.allocator._copyout(memoryview(bufs[int(b.arg)]), mem)
    finally:
        for mem, b in zip(mems, sig.buffers, strict=True):
            dev.allocator.free(mem, max(len(bufs[int(b.arg)]), 1))


def _conformance_renderer() -> Renderer:
    from fusegrad.runtime.device import Device

    return Device["CUDA"].renderer


def _conformance_runner(renderer: Renderer) -> RunFn:
    from fusegrad.runtime.device import Device

    dev = Device["CUDA"]
    assert isinstance(dev, CUDADevice)

    def run(uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]) -> None:
        run_linear_on_cuda(dev, renderer, uops, bufs, var_vals)

    return run


def conformance_target() -> ConformanceTarget:
    """The conformance suite's ``CUDA`` target (GPU 0; unavailable without a driver/GPU)."""
    return ConformanceTarget("CUDA", _conformance_renderer, _conformance_runner, unavailable_reason)


register_target(conformance_target())
