"""``Buffer``: ``size`` elements of ``dtype`` on a device, allocated on first use.

A buffer is a *base* (owns an allocation) or a *view* (``offset`` bytes into a base, with its
own size and dtype). Copies in and out wait for the device's queued work first, so a buffer
never reads bytes a kernel still writes.

>>> b = Buffer("PYTHON", 4, dtypes.int32).copyin(memoryview(bytearray(range(16))))
>>> bytes(b.view(1, dtypes.int32, offset=4).as_memoryview())
b'\\x04\\x05\\x06\\x07'
"""

from __future__ import annotations

from typing import Any

from fusegrad.runtime.device import Compiled, Device
from fusegrad.runtime.memory import BufferSpec
from fusegrad.uop import DType, PtrDType, dtypes

# NumPy dtype names holding each dtype's bits (bfloat16 and fp8 as raw unsigned ints)
_NUMPY_STORAGE = {
    dtypes.bfloat16: "uint16",
    dtypes.fp8e4m3: "uint8",
    dtypes.fp8e5m2: "uint8",
    dtypes.fp8e4m3fnuz: "uint8",
    dtypes.fp8e5m2fnuz: "uint8",
    dtypes.bool: "bool",
}


class Buffer:
    """Device memory for ``size`` elements of ``dtype`` (lazily allocated).

    ``uop_refcount`` is tinygrad's count of graph nodes holding the buffer; it is kept as an
    attribute (fusegrad frees a buffer when its last Python reference goes)."""

    def __init__(  # noqa: PLR0917 (tinygrad's signature)
        self,
        device: str,
        size: int,
        dtype: DType,
        opaque: Any = None,
        options: BufferSpec | None = None,
        initial_value: bytes | None = None,
        uop_refcount: int = 0,
        base: Buffer | None = None,
        offset: int = 0,
        preallocate: bool = False,
    ) -> None:
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"Buffer: size must be an int >= 0, got {size!r}")
        if not isinstance(dtype, DType) or isinstance(dtype, PtrDType) or dtype.weak:
            raise TypeError(f"Buffer: dtype must be a concrete value dtype, got {dtype!r}")
        self.device = Device.canonicalize(device)
        self.size, self.dtype, self.options = size, dtype, options
        self.offset, self.uop_refcount = offset, uop_refcount
        self._base = base
        self._buf: Any = None
        self._owns = False
        self._allocator: Any = None
        if base is not None:
            if base._base is not None:
                raise ValueError("Buffer: the base of a view must be a base buffer")
            if offset < 0 or offset + self.nbytes > base.nbytes:
                raise ValueError(
                    f"Buffer view: bytes [{offset}, {offset + self.nbytes}) outside its base "
                    f"of {base.nbytes} bytes ({base!r})"
                )
        if opaque is not None:
            self.allocate(opaque)
        if initial_value is not None:
            self.copyin(memoryview(initial_value))
        elif preallocate:
            self.allocate()

    # -- identity ---------------------------------------------------------------------------
    @property
    def base(self) -> Buffer:
        """The buffer owning the memory (itself for a base)."""
        return self._base if self._base is not None else self

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.size * self.dtype.itemsize

    @property
    def dev(self) -> Compiled:
        """The opened device."""
        return Device[self.device]

    def __repr__(self) -> str:
        view = f" offset={self.offset}" if self._base is not None else ""
        state = "" if self.is_allocated() else " unallocated"
        return f"<Buffer {self.device} {self.size} {self.dtype.name}{view}{state}>"

    # -- allocation -------------------------------------------------------------------------
    def is_allocated(self) -> bool:
        """Whether the memory exists yet."""
        return self._buf is not None

    def allocate(self, opaque: Any = None) -> Buffer:
        """Allocate now (or adopt ``opaque``, which this buffer then doesn't free)."""
        if self._buf is not None:
            raise RuntimeError(f"{self!r}: already allocated")
        alloc = self.dev.allocator
        if self._base is not None:
            self._base.ensure_allocated()
            self._buf = alloc._offset(self._base._buf, self.nbytes, self.offset)
        elif opaque is not None:
            self._buf = opaque
        else:
            self._buf = alloc.alloc(self.nbytes, self.options)
            self._owns, self._allocator = True, alloc
        return self

    def ensure_allocated(self) -> Buffer:
        """Allocate unless already allocated."""
        return self if self._buf is not None else self.allocate()

    def deallocate(self) -> None:
        """Give the memory back (to the allocator's cache)."""
        if self._buf is None:
            return
        if self._owns:
            self._allocator.free(self._buf, self.nbytes, self.options)
        self._buf, self._owns, self._allocator = None, False, None

    def __del__(self) -> None:
        if getattr(self, "_owns", False) and getattr(self, "_buf", None) is not None:
            try:
                self.deallocate()
            except Exception:  # interpreter exit: devices may be gone already
                return

    @property
    def opaque(self) -> Any:
        """The device's handle of the memory (allocating on first use)."""
        buf = self._buf
        return buf if buf is not None else self.allocate()._buf

    def view(self, size: int, dtype: DType, offset: int = 0) -> Buffer:
        """``size`` elements of ``dtype`` starting ``offset`` bytes into this buffer."""
        return Buffer(
            self.device, size, dtype, options=self.options, base=self.base,
            offset=self.offset + offset,
        )  # fmt: skip

    # -- data -------------------------------------------------------------------------------
    def copyin(self, src: Any) -> Buffer:
        """Fill the buffer from bytes (anything with the buffer protocol, same byte size)."""
        mv = memoryview(src).cast("B")
        if mv.nbytes != self.nbytes:
            raise ValueError(f"copyin: {mv.nbytes} bytes given, {self!r} has {self.nbytes}")
        dev = self.dev
        dev.synchronize()
        dev.allocator._copyin(self.opaque, mv)
        return self

    def copyout(self, dest: Any) -> memoryview:
        """Copy the buffer into ``dest`` (writable, same byte size) and return it."""
        mv = memoryview(dest).cast("B")
        if mv.nbytes != self.nbytes:
            raise ValueError(f"copyout: {mv.nbytes} bytes given, {self!r} has {self.nbytes}")
        dev = self.dev
        dev.synchronize()
        dev.allocator._copyout(mv, self.opaque)
        return mv

    def as_memoryview(
        self, allow_zero_copy: bool = True, force_zero_copy: bool = False
    ) -> memoryview:
        """The contents as bytes: the device memory itself where it is host-visible (zero
        copy), else a copy."""
        dev = self.dev
        if allow_zero_copy or force_zero_copy:
            dev.synchronize()
            direct = dev.allocator._as_buffer(self.opaque)
            if direct is not None:
                return direct
        if force_zero_copy:
            raise RuntimeError(f"{self!r}: memory is not host-visible, no zero-copy view")
        return self.copyout(bytearray(self.nbytes))

    as_buffer = as_memoryview

    def numpy(self) -> Any:
        """The contents as a 1-D NumPy array (zero-copy where host-visible). bfloat16 and
        fp8 come as their raw unsigned-int bits. Needs NumPy (the runtime itself doesn't)."""
        import numpy as np

        name = _NUMPY_STORAGE.get(self.dtype, self.dtype.name)
        return np.frombuffer(self.as_memoryview(), dtype=name)

    def copy_from(self, src: Buffer) -> Buffer:
        """Copy another buffer's bytes (any device) into this one."""
        if src.nbytes != self.nbytes:
            raise ValueError(f"copy_from: {src!r} has {src.nbytes} bytes, {self!r} {self.nbytes}")
        return self.copyin(src.as_memoryview())
