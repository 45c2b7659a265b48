"""Host-side data: NumPy storage types for every dtype, and the table of host arrays that
back BUFFER UOps until an executor takes them over.

Buffers are flat 1-D arrays in a *storage* dtype: the NumPy dtype with the same bits
(bfloat16 and fp8 have no NumPy type and are stored as their raw bits, uint16/uint8).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from fusegrad.uop import DType, UOp, dtypes

_STORAGE: dict[DType, Any] = {
    dtypes.bool: np.bool_,
    dtypes.int8: np.int8,
    dtypes.uint8: np.uint8,
    dtypes.int16: np.int16,
    dtypes.uint16: np.uint16,
    dtypes.int32: np.int32,
    dtypes.uint32: np.uint32,
    dtypes.int64: np.int64,
    dtypes.uint64: np.uint64,
    dtypes.float16: np.float16,
    dtypes.float32: np.float32,
    dtypes.float64: np.float64,
    dtypes.bfloat16: np.uint16,
    dtypes.fp8e4m3: np.uint8,
    dtypes.fp8e5m2: np.uint8,
    dtypes.fp8e4m3fnuz: np.uint8,
    dtypes.fp8e5m2fnuz: np.uint8,
}

_FROM_NUMPY: dict[Any, DType] = {
    np.dtype(v): k for k, v in _STORAGE.items() if k not in (dtypes.bfloat16, *dtypes.fp8s)
}


def storage_dtype(dt: DType) -> np.dtype[Any]:
    """The NumPy dtype holding ``dt``'s bits."""
    if dt.scalar() not in _STORAGE:
        raise TypeError(f"{dt!r} can't be stored in a buffer")
    out: np.dtype[Any] = np.dtype(_STORAGE[dt.scalar()])
    return out


def from_numpy_dtype(npdt: np.dtype[Any]) -> DType:
    """The fusegrad dtype of a NumPy dtype; TypeError for types fusegrad has no dtype for."""
    dt = _FROM_NUMPY.get(np.dtype(npdt))
    if dt is None:
        raise TypeError(f"can't convert a NumPy array of dtype {np.dtype(npdt)} to a Tensor")
    return dt


def has_numpy_type(dt: DType) -> bool:
    """True when the storage dtype *is* the value dtype (no bit-level encoding)."""
    return dt.scalar() not in (dtypes.bfloat16, *dtypes.fp8s)


def encode_floats(values: np.ndarray[Any, Any], dt: DType) -> np.ndarray[Any, Any]:
    """Float values converted to the bit storage of bfloat16/fp8 (round to nearest even)."""
    if dt is dtypes.bfloat16:
        f32 = np.ascontiguousarray(values, dtype=np.float32)
        bits = f32.view(np.uint32).astype(np.uint64)
        nan = np.isnan(f32)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        sign = ((bits >> 16) & 0x8000).astype(np.uint16)
        out: np.ndarray[Any, Any] = np.where(nan, sign | np.uint16(0x7FC0), rounded)
        return out.astype(np.uint16)
    from fusegrad.uop import bitcast

    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    enc = [bitcast(float(v), dt, dtypes.uint8) for v in flat]
    return np.array(enc, dtype=np.uint8).reshape(np.shape(values))


def decode_floats(bits: np.ndarray[Any, Any], dt: DType) -> np.ndarray[Any, Any]:
    """bfloat16/fp8 bit storage decoded to float32 values."""
    if dt is dtypes.bfloat16:
        out: np.ndarray[Any, Any] = (bits.astype(np.uint32) << 16).view(np.float32)
        return out
    from fusegrad.uop import bitcast

    flat = [bitcast(int(b), dtypes.uint8, dt) for b in bits.reshape(-1)]
    return np.array(flat, dtype=np.float32).reshape(bits.shape)


class HostTable:
    """BUFFER UOp -> flat host array. Weak on the UOp: the data dies with the last tensor
    that references its buffer."""

    def __init__(self) -> None:
        self.arrays: weakref.WeakKeyDictionary[UOp, np.ndarray[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def new_buffer(self, flat: np.ndarray[Any, Any], dt: DType, device: str) -> UOp:
        """A fresh BUFFER holding ``flat`` (already in ``dt``'s storage dtype, 1-D)."""
        if flat.ndim != 1 or flat.dtype != storage_dtype(dt):
            raise ValueError(f"new_buffer: need a 1-D {storage_dtype(dt)} array, got {flat.dtype}")
        buf = UOp.new_buffer(device, int(flat.size), dt)
        self.arrays[buf] = flat
        return buf

    def get(self, buf: UOp) -> np.ndarray[Any, Any] | None:
        """The host array of ``buf`` (None when it has none)."""
        arrays = self.arrays
        return arrays.get(buf) if arrays else None  # an empty table: no weak reference made

    def put(self, buf: UOp, flat: np.ndarray[Any, Any]) -> None:
        """Set the host array of ``buf``."""
        self.arrays[buf] = flat


HOST = HostTable()
"""The process-wide host table."""
