"""Python and NumPy data -> tensor UOps: dtype inference like PyTorch, zero-copy where possible."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fusegrad.engine import HOST, encode_floats, from_numpy_dtype, has_numpy_type, storage_dtype
from fusegrad.tensor.flags import DEV
from fusegrad.uop import ConstType, DType, Ops, UOp, dtypes

DEFAULT_DEVICE = "CPU"


def canonical_device(device: str | None) -> str:
    """``None`` -> the default device; names upper-cased (``"cpu"`` -> ``"CPU"``)."""
    if device is None:
        return default_device()
    if not isinstance(device, str):
        raise TypeError(f"device must be a str, got {type(device).__name__}")
    kind, sep, path = device.partition(":")
    if sep and kind.upper() == "DISK":
        return f"DISK:{path}"  # the path is case-sensitive
    name = device.upper()
    name = name[:-2] if name.endswith(":0") else name
    _check_kind(name.partition(":")[0])
    return name


_KNOWN_KINDS: set[str] = set()


def _check_kind(kind: str) -> None:
    """A device kind the runtime can open (checked once per kind: ``ValueError`` listing the
    known kinds otherwise). Unchecked when the runtime can't be imported."""
    if kind in _KNOWN_KINDS:
        return
    try:
        from fusegrad.runtime import Device
    except ImportError:  # the runtime is optional for building graphs
        return
    Device.check_known(kind)
    _KNOWN_KINDS.add(kind)


def default_device() -> str:
    """The runtime's ``Device.DEFAULT``, read at each call: a ``Device.DEFAULT = name``
    override, else ``DEV`` (so ``Context(DEV=...)`` works), else the device the runtime
    probes for (that probe is slow, so only it is cached). CPU when the runtime can't be
    imported."""
    try:
        from fusegrad.runtime import Device, parse_dev
    except Exception:  # the runtime is optional for building graphs
        return DEFAULT_DEVICE
    override = Device.default_override
    if override is not None:
        return str(override)
    if DEV.value:
        return str(parse_dev(str(DEV.value))[0])
    return _probed_default()


@functools.cache
def _probed_default() -> str:
    from fusegrad.runtime import Device

    return str(Device.DEFAULT)


def _list_shape(data: Any, dim: int = 0) -> tuple[int, ...]:
    if not isinstance(data, (list, tuple)):
        return ()
    if not data:
        return (0,)
    shapes = [_list_shape(x, dim + 1) for x in data]
    if any(s != shapes[0] for s in shapes[1:]):
        bad = next(s for s in shapes if s != shapes[0])
        raise ValueError(
            f"expected sequence of length {shapes[0][:1] or 'scalar'} at dim {dim + 1} "
            f"(got {bad[:1] or 'a scalar'})"
        )
    return (len(data), *shapes[0])


def _check_items(data: Any) -> None:
    if isinstance(data, (list, tuple)):
        for x in data:
            _check_items(x)
        return
    if not isinstance(data, (bool, int, float)) and not isinstance(data, np.generic):
        raise TypeError(f"can't make a Tensor from a list containing {type(data).__name__}")


def infer_dtype(data: Any) -> DType:
    """PyTorch's inference: all bools -> bool, any float -> default float, else default int."""
    if isinstance(data, np.generic):
        return from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)):
        if not data:
            return dtypes.default_float
        return _lub(infer_dtype(x) for x in data)
    return py_dtype(data)


def py_dtype(value: Any) -> DType:
    """The dtype of a Python scalar: ``dtypes.from_py``, except that an int outside the
    default int's range is int64 (uint64 from 2**63 up), as NumPy infers it, instead of
    wrapping: ``Tensor([2**40])`` holds 2**40."""
    dt = dtypes.from_py(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return dt
    if dtypes.min(dt) <= value <= dtypes.max(dt):
        return dt
    for wide in (dtypes.int64, dtypes.uint64):
        if dtypes.min(wide) <= value <= dtypes.max(wide):
            return wide
    raise OverflowError(f"Python int {value} does not fit in int64 or uint64")


def _lub(dts: Any) -> DType:
    best = dtypes.bool
    for dt in dts:
        if _rank(dt) > _rank(best):
            best = dt
    return best


def _rank(dt: DType) -> tuple[int, int]:
    # bool < ints (the wider range first: a list holding 2**40 is int64) < floats
    if dt is dtypes.bool:
        return (0, 0)
    if dtypes.is_float(dt):
        return (2, 0)
    return (1, int(dtypes.max(dt)))


def to_storage(arr: np.ndarray[Any, Any], dt: DType) -> np.ndarray[Any, Any]:
    """``arr`` converted to ``dt``'s storage, flat, without a copy when nothing changes."""
    if not has_numpy_type(dt):
        return encode_floats(np.asarray(arr, dtype=np.float32), dt).reshape(-1)
    want = storage_dtype(dt)
    if arr.dtype != want:
        arr = _convert_values(arr, want)
    return np.ascontiguousarray(arr).reshape(-1)


def _convert_values(arr: np.ndarray[Any, Any], want: np.dtype[Any]) -> np.ndarray[Any, Any]:
    if np.issubdtype(want, np.integer) and np.issubdtype(arr.dtype, np.floating):
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr)
            out = np.where(bad, 0, np.trunc(arr)).astype(np.int64)
        return np.where(bad, np.int64(-(2**63)), out).astype(want)
    if np.issubdtype(want, np.integer) and arr.dtype.kind in "iub":
        return arr.astype(np.int64 if arr.dtype.kind != "u" else np.uint64).astype(want)
    with np.errstate(over="ignore"):
        return arr.astype(want)


def list_to_array(data: Any, dt: DType) -> np.ndarray[Any, Any]:
    """Nested Python lists -> a NumPy array of ``dt``'s values (shape checked)."""
    shape = _list_shape(data)
    _check_items(data)
    if dtypes.is_float(dt):
        return np.array(data, dtype=np.float64).reshape(shape)
    if dt is dtypes.bool:
        return np.array(data, dtype=np.bool_).reshape(shape)
    try:
        ints = np.uint64 if dt is dtypes.uint64 else np.int64
        raw = np.array(data, dtype=np.float64 if _has_float(data) else ints)
    except OverflowError as e:
        raise OverflowError(f"value too large for {dt!r} in Tensor data: {e}") from None
    return raw.reshape(shape)


def _has_float(data: Any) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_has_float(x) for x in data)
    return isinstance(data, (float, np.floating))


def array_to_uop(arr: np.ndarray[Any, Any], dt: DType | None, device: str) -> UOp:
    """A BUFFER view holding ``arr`` (zero-copy for contiguous arrays of the same dtype).
    A non-native byte order (``>i4`` on a little-endian host) is swapped, as ``astype`` would."""
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    target = dt if dt is not None else from_numpy_dtype(arr.dtype)
    flat = to_storage(arr, target)
    buf = HOST.new_buffer(flat, target, device)
    return buf.reshape(arr.shape)


def scalar_to_uop(value: ConstType, dt: DType | None, device: str) -> UOp:
    """A 0-d tensor constant."""
    target = dt if dt is not None else py_dtype(value)
    return UOp.const(value, target, device, ())


def bytes_to_uop(data: bytes, device: str) -> UOp:
    """A uint8 buffer holding ``data`` (zero-copy)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    return HOST.new_buffer(arr, dtypes.uint8, device).reshape((len(data),))


def data_to_uop(data: Any, device: str, dtype: DType | None) -> UOp:
    """Any accepted Tensor data as a tensor-level UOp on ``device``."""
    if isinstance(data, (bool, int, float)):
        return scalar_to_uop(data, dtype, device)
    if isinstance(data, np.generic):
        return array_to_uop(np.asarray(data), dtype, device)
    if isinstance(data, (list, tuple)):
        dt = dtype if dtype is not None else infer_dtype(data)
        return array_to_uop(list_to_array(data, dt), dt, device)
    if isinstance(data, np.ndarray):
        return array_to_uop(data, dtype, device)
    if isinstance(data, (bytes, bytearray, memoryview)):
        out = bytes_to_uop(bytes(data), device)
        return out if dtype is None else out.bitcast(dtype)
    if isinstance(data, UOp):
        return _uop_data(data, device, dtype)
    raise TypeError(f"can't make a Tensor from a {type(data).__name__}")


def _uop_data(u: UOp, device: str, dtype: DType | None) -> UOp:
    if u.is_bound_var or u.op is Ops.DEFINE_VAR or (u.dtype.weak and u.st_shape in (None, ())):
        dt = dtype if dtype is not None else dtypes.default_int
        zero = UOp.const(0, dt, device, ())
        return UOp(Ops.ADD, dt, (zero, UOp(Ops.CAST, dt, (u,))))
    if u.st_shape is None:
        raise TypeError(f"can't make a Tensor from a {u.op!r} UOp (it has no shape)")
    return u if dtype is None or u.dtype is dtype else u.cast(dtype)


# kept for callers from when the whole default was cached (tests/e2e/conftest.py): clearing now
# only forgets the probed device
default_device.cache_clear = _probed_default.cache_clear  # type: ignore[attr-defined]
