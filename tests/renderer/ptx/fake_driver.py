"""A stand-in for ``libcuda.so`` that runs kernels in the PTX interpreter, so the CUDA device's
driver calls (contexts, allocations, pinned-staging copies, module loading, launch parameters
and dimensions, streams, events) are exercised without a GPU.

It implements exactly the driver functions ``fusegrad.runtime.device_cuda`` declares, with the
driver's conventions: results are ``CUresult`` codes, outputs are written through the
``byref`` pointers, ``cuLaunchKernel`` gets an array of pointers to the argument values.
Device memory is a bytearray per allocation at a made-up address; an access outside every
allocation fails the call (``CUDA_ERROR_ILLEGAL_ADDRESS``, 700).
"""

from __future__ import annotations

import ctypes
import re
import time
from typing import Any

import ptx_interp

_INVALID_VALUE, _ILLEGAL_ADDRESS, _NOT_FOUND = 1, 700, 500


def _out(ref: Any) -> Any:
    """The ctypes object a ``byref`` argument points at."""
    return ref._obj


class FakeDriver:
    """The fake driver (see the module docstring). ``launches`` records (name, grid, block)."""

    def __init__(self, gpus: int = 1, capability: tuple[int, int] = (9, 0)) -> None:
        self.gpus, self.capability = gpus, capability
        self.allocations: dict[int, bytearray] = {}
        self.next_address = 0x7F0000000000
        self.modules: dict[int, str] = {}
        self.functions: dict[int, tuple[str, str]] = {}
        self.events: dict[int, float] = {}
        self.launches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
        self.host: list[Any] = []
        self.handles = 1

    def _handle(self) -> int:
        self.handles += 1
        return self.handles * 16

    # -- devices and contexts ---------------------------------------------------------------
    def cuInit(self, flags: int) -> int:
        return 0

    def cuDeviceGetCount(self, n: Any) -> int:
        _out(n).value = self.gpus
        return 0

    def cuDeviceGet(self, dev: Any, ordinal: int) -> int:
        _out(dev).value = ordinal
        return 0 if ordinal < self.gpus else _INVALID_VALUE

    def cuDeviceGetName(self, buf: Any, size: int, dev: Any) -> int:
        buf.value = b"Fake GPU (PTX interpreter)"
        return 0

    def cuDeviceGetAttribute(self, value: Any, attr: int, dev: Any) -> int:
        _out(value).value = {75: self.capability[0], 76: self.capability[1]}[attr]
        return 0

    def cuDevicePrimaryCtxRetain(self, ctx: Any, dev: Any) -> int:
        _out(ctx).value = 0x1000 + int(getattr(dev, "value", dev))
        return 0

    def cuCtxSetCurrent(self, ctx: Any) -> int:
        return 0

    def cuDeviceCanAccessPeer(self, can: Any, dev: Any, peer: Any) -> int:
        _out(can).value = 1
        return 0

    # -- memory ----------------------------------------------------------------------------------
    def cuMemAlloc_v2(self, ptr: Any, size: int) -> int:
        address = self.next_address
        self.allocations[address] = bytearray(size)
        self.next_address += (size + 0xFFFF) & ~0xFFF
        _out(ptr).value = address
        return 0

    def cuMemFree_v2(self, ptr: Any) -> int:
        return 0 if self.allocations.pop(int(ptr.value), None) is not None else _INVALID_VALUE

    def cuMemHostAlloc(self, ptr: Any, size: int, flags: int) -> int:
        block = (ctypes.c_char * size)()
        self.host.append(block)
        _out(ptr).value = ctypes.addressof(block)
        return 0

    def cuMemFreeHost(self, ptr: Any) -> int:
        return 0

    def locate(self, address: int, size: int) -> memoryview | None:
        """The device bytes ``[address, address + size)``, or None when not allocated."""
        for base, data in self.allocations.items():
            if base <= address and address + size <= base + len(data):
                return memoryview(data)[address - base : address - base + size]
        return None

    def cuMemcpyHtoDAsync_v2(self, dst: Any, src: Any, size: int, stream: Any) -> int:
        view = self.locate(int(dst.value), size)
        if view is None:
            return _ILLEGAL_ADDRESS
        view[:] = ctypes.string_at(int(src.value or 0), size)
        return 0

    def cuMemcpyDtoHAsync_v2(self, dst: Any, src: Any, size: int, stream: Any) -> int:
        view = self.locate(int(src.value), size)
        if view is None:
            return _ILLEGAL_ADDRESS
        ctypes.memmove(int(dst.value or 0), bytes(view), size)
        return 0

    def cuMemcpyPeer(self, dst: Any, dctx: Any, src: Any, sctx: Any, size: int) -> int:
        a, b = self.locate(int(dst.value), size), self.locate(int(src.value), size)
        if a is None or b is None:
            return _ILLEGAL_ADDRESS
        a[:] = bytes(b)
        return 0

    # -- modules and launches ------------------------------------------------------------------------
    def cuModuleLoadData(self, module: Any, image: bytes) -> int:
        text = image.decode()
        if not text.startswith(".version"):
            return _INVALID_VALUE  # the fake only takes PTX
        handle = self._handle()
        self.modules[handle] = text
        _out(module).value = handle
        return 0

    def cuModuleUnload(self, module: Any) -> int:
        return 0

    def cuModuleGetFunction(self, fn: Any, module: Any, name: bytes) -> int:
        src = self.modules[int(module.value)]
        if not re.search(rf"\.entry {re.escape(name.decode())}\(", src):
            return _NOT_FOUND
        handle = self._handle()
        self.functions[handle] = (name.decode(), src)
        _out(fn).value = handle
        return 0

    def cuLaunchKernel(self, fn: Any, *args: Any) -> int:
        gx, gy, gz, bx, by, bz, _shared, _stream, params, _extra = args
        name, src = self.functions[int(fn.value)]
        kernel = ptx_interp.parse(src)
        buffers, scalars = [], []
        for i, (typ, _) in enumerate(kernel.params):
            ptr = params[i]
            if typ == "u64":
                address = ctypes.c_uint64.from_address(ptr).value
                view = self._buffer_from(address)
                if view is None:
                    return _ILLEGAL_ADDRESS
                buffers.append(view)
            else:
                scalars.append(ctypes.c_int32.from_address(ptr).value)
        self.launches.append((name, (gx, gy, gz), (bx, by, bz)))
        ptx_interp.Machine(kernel, buffers, scalars).launch((gx, gy, gz), (bx, by, bz))
        return 0

    def _buffer_from(self, address: int) -> memoryview | None:
        for base, data in self.allocations.items():
            if base <= address <= base + len(data):
                return memoryview(data)[address - base :]
        return None

    # -- streams and events ------------------------------------------------------------------------
    def cuStreamCreate(self, stream: Any, flags: int) -> int:
        _out(stream).value = self._handle()
        return 0

    def cuStreamSynchronize(self, stream: Any) -> int:
        return 0

    def cuStreamWaitEvent(self, stream: Any, event: Any, flags: int) -> int:
        return 0

    def cuCtxSynchronize(self) -> int:
        return 0

    def cuCtxEnablePeerAccess(self, ctx: Any, flags: int) -> int:
        return 0

    def cuDevicePrimaryCtxRelease_v2(self, dev: Any) -> int:
        return 0

    def cuEventCreate(self, event: Any, flags: int) -> int:
        _out(event).value = self._handle()
        return 0

    def cuEventRecord(self, event: Any, stream: Any) -> int:
        self.events[int(event.value)] = time.perf_counter()
        return 0

    def cuEventSynchronize(self, event: Any) -> int:
        return 0

    def cuEventElapsedTime(self, ms: Any, start: Any, end: Any) -> int:
        _out(ms).value = (self.events[int(end.value)] - self.events[int(start.value)]) * 1e3
        return 0

    def cuEventDestroy_v2(self, event: Any) -> int:
        return 0

    def cuGetErrorString(self, code: int, text: Any) -> int:
        _out(text).value = f"fake error {code}".encode()
        return 0
