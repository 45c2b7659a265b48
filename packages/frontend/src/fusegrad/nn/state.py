"""State dicts and model files: get_parameters, get_state_dict, load_state_dict, safetensors
(safe_load, safe_save, safe_load_metadata), and the readers of other formats re-exported
here (torch_load, gguf_load, zip_extract, tar_extract).

Every reader validates what it reads against the file: a malformed file raises ValueError
(naming the problem), never reads out of bounds and never runs code.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from fusegrad.nn.archive import tar_extract, zip_extract
from fusegrad.nn.content import TensorIO, accept_filename, fs_load, fs_store
from fusegrad.nn.disk import ByteSource, open_source, to_device
from fusegrad.nn.gguf import gguf_load
from fusegrad.nn.torch_load import UnsafePickleError, torch_load
from fusegrad.tensor import Tensor
from fusegrad.uop import DType, dtypes, prod

__all__ = [
    "TensorIO",
    "UnsafePickleError",
    "accept_filename",
    "fs_load",
    "fs_store",
    "get_parameters",
    "get_state_dict",
    "gguf_load",
    "load_state_dict",
    "safe_load",
    "safe_load_metadata",
    "safe_save",
    "tar_extract",
    "torch_load",
    "zip_extract",
]

# -- state dicts ------------------------------------------------------------------------------------


def get_state_dict(obj: Any, prefix: str = "", tensor_type: type = Tensor) -> dict[str, Tensor]:
    """Every tensor reachable from ``obj`` through attributes, dicts, lists and tuples, keyed
    by its dotted path (``"layers.0.weight"``).

    >>> from fusegrad import nn
    >>> sorted(get_state_dict(nn.Linear(2, 3)))
    ['bias', 'weight']
    """
    out: dict[str, Tensor] = {}
    _collect(obj, prefix, tensor_type, out, set())
    return out


def _children(obj: Any) -> list[tuple[str, Any]]:
    if hasattr(obj, "_asdict"):  # namedtuple
        return list(obj._asdict().items())
    if isinstance(obj, Mapping):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return list(vars(obj).items())
    return []


def _collect(
    obj: Any, prefix: str, tensor_type: type, out: dict[str, Tensor], seen: set[int]
) -> None:
    if isinstance(obj, tensor_type):
        out[prefix.strip(".")] = cast(Tensor, obj)
        return
    if id(obj) in seen:  # cycles (a child that points back at its parent)
        return
    seen.add(id(obj))
    for key, child in _children(obj):
        _collect(child, f"{prefix}{key}.", tensor_type, out, seen)


def get_parameters(obj: Any) -> list[Tensor]:
    """The tensors of ``get_state_dict(obj)``, in order."""
    return list(get_state_dict(obj).values())


def load_state_dict(
    model: Any,
    state_dict: Mapping[str, Tensor],
    strict: bool = True,
    verbose: bool = True,
    consume: bool = False,
    realize: bool = True,
) -> None:
    """Make each tensor of ``model`` hold the value under its key in ``state_dict`` (copied
    to the tensor's device). ``strict``: every key of the model must be present. Shapes and
    dtypes must match exactly (ValueError naming the key). Extra keys are ignored.
    ``consume`` deletes the used entries from ``state_dict``."""
    del verbose  # no progress bar: loading is lazy, realize does the work
    targets = get_state_dict(model)
    missing = [k for k in targets if k not in state_dict]
    if strict and missing:
        raise KeyError(f"load_state_dict: missing keys in state dict: {missing}")
    loaded: list[tuple[Tensor, bool | None]] = []
    for key, target in targets.items():
        if key not in state_dict:
            continue
        value = state_dict[key]
        _check_match(key, target, value)
        loaded.append((target, target.requires_grad))
        target.requires_grad = None  # the loaded value is data: no graph to keep
        target.replace(to_device(value, target.device))
        if consume and isinstance(state_dict, dict):
            del state_dict[key]
    if realize and loaded:
        Tensor.realize(*(t for t, _ in loaded))
    for t, rg in loaded:
        t.requires_grad = rg


def _check_match(key: str, target: Tensor, value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"load_state_dict: `{key}` is a {type(value).__name__}, not a Tensor")
    if tuple(value.shape) != tuple(target.shape):
        raise ValueError(
            f"Shape mismatch in layer `{key}`: Expected shape {tuple(target.shape)}, but found "
            f"{tuple(value.shape)} in state dict."
        )
    if value.dtype is not target.dtype:
        raise ValueError(
            f"dtype mismatch in layer `{key}`: Expected {target.dtype!r}, but found "
            f"{value.dtype!r} in state dict (cast it first)"
        )


# -- safetensors ------------------------------------------------------------------------------------

SAFE_DTYPES: dict[str, DType] = {
    "BOOL": dtypes.bool,
    "U8": dtypes.uint8,
    "I8": dtypes.int8,
    "U16": dtypes.uint16,
    "I16": dtypes.int16,
    "U32": dtypes.uint32,
    "I32": dtypes.int32,
    "U64": dtypes.uint64,
    "I64": dtypes.int64,
    "F16": dtypes.float16,
    "BF16": dtypes.bfloat16,
    "F32": dtypes.float32,
    "F64": dtypes.float64,
    "F8_E4M3": dtypes.fp8e4m3,
    "F8_E5M2": dtypes.fp8e5m2,
}
SAFE_NAMES = {v: k for k, v in SAFE_DTYPES.items()}
MAX_HEADER = 100 * 1024 * 1024  # the reference implementation's limit


def _parse_header(raw: bytes, path: str) -> dict[str, Any]:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError too
        raise ValueError(f"{path}: safetensors header isn't valid UTF-8 JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: safetensors header must be a JSON object")
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError(f"{path}: safetensors __metadata__ must map strings to strings")
    return header


def _is_index(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _check_entry(name: str, info: Any, data_len: int) -> tuple[DType, tuple[int, ...], int, int]:
    """(dtype, shape, begin, end) of one header entry, all checked."""
    if not isinstance(info, dict):
        raise ValueError(f"safetensors: entry {name!r} must be an object")
    dt = SAFE_DTYPES.get(info.get("dtype"))  # type: ignore[arg-type]
    if dt is None:
        raise ValueError(f"safetensors: {name!r} has unknown dtype {info.get('dtype')!r}")
    shape, offsets = info.get("shape"), info.get("data_offsets")
    if not isinstance(shape, list) or not all(_is_index(s) for s in shape):
        raise ValueError(f"safetensors: {name!r} has a bad shape {shape!r}")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(map(_is_index, offsets)):
        raise ValueError(f"safetensors: {name!r} has bad data_offsets {offsets!r}")
    begin, end = offsets
    if not begin <= end <= data_len:
        raise ValueError(
            f"safetensors: {name!r} data_offsets {offsets} outside the {data_len} data bytes"
        )
    if end - begin != prod(shape) * dt.itemsize:
        raise ValueError(
            f"safetensors: {name!r} has {end - begin} bytes, shape {shape} of {info['dtype']} "
            f"needs {prod(shape) * dt.itemsize}"
        )
    return dt, tuple(shape), begin, end


def _check_layout(spans: list[tuple[int, int, str]], data_len: int) -> None:
    """Tensors must tile the data bytes: no overlaps, no holes."""
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            raise ValueError(f"safetensors: {name!r} starts at {begin}, expected {pos}")
        pos = end
    if pos != data_len:
        raise ValueError(f"safetensors: tensors cover {pos} of {data_len} data bytes")


def _read_header(file: ByteSource) -> tuple[int, dict[str, Any]]:
    if file.size < 8:
        raise ValueError(f"{file.path}: {file.size} bytes is too short for a safetensors file")
    (n,) = struct.unpack("<Q", bytes(file.bytes_at(0, 8)))
    if n > min(file.size - 8, MAX_HEADER):
        raise ValueError(
            f"{file.path}: safetensors header size {n} doesn't fit the file of {file.size} bytes"
        )
    return n, _parse_header(bytes(file.bytes_at(8, n)), file.path)


def safe_load_metadata(t: Any) -> tuple[Tensor, int, dict[str, Any]]:
    """(the file as a uint8 tensor, the header's byte size, the parsed header); ``t`` is a
    path (a DISK tensor), a uint8 Tensor or bytes."""
    file = open_source(t)
    n, header = _read_header(file)
    return file.tensor(0, dtypes.uint8, (file.size,)), n, header


def safe_load(fn: Any) -> dict[str, Tensor]:
    """The tensors of a safetensors file (path, uint8 Tensor or bytes); from a path they are
    lazy on the file's DISK device: using one reads only its bytes."""
    file = open_source(fn)
    n, header = _read_header(file)
    data_len = file.size - 8 - n
    entries = {k: _check_entry(k, v, data_len) for k, v in header.items() if k != "__metadata__"}
    _check_layout([(b, e, k) for k, (_, _, b, e) in entries.items()], data_len)
    return {
        k: file.tensor(8 + n + begin, dt, shape) for k, (dt, shape, begin, _) in entries.items()
    }


def safe_save(
    tensors: Mapping[str, Tensor],
    fn: str | os.PathLike[str],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Write ``tensors`` (realized as needed) as a safetensors file, through the DISK device."""
    from fusegrad.runtime import Buffer, BufferSpec

    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    pos = 0
    for name, t in tensors.items():
        if t.dtype not in SAFE_NAMES:
            raise ValueError(f"safe_save: {name!r} has dtype {t.dtype!r}, not in safetensors")
        size = int(t.nbytes())
        header[name] = {
            "dtype": SAFE_NAMES[t.dtype],
            "shape": [int(s) for s in t.shape],
            "data_offsets": [pos, pos + size],
        }
        pos += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path = os.path.abspath(os.fspath(fn))
    with open(path, "wb"):
        pass  # start empty: the DISK device only grows files
    total = 8 + len(raw) + pos
    base = Buffer(f"DISK:{path}", total, dtypes.uint8, options=BufferSpec(writable=True))
    base.view(8 + len(raw), dtypes.uint8).copyin(struct.pack("<Q", len(raw)) + raw)
    for name, t in tensors.items():
        begin = header[name]["data_offsets"][0]
        data = _storage_bytes(t)
        if data.nbytes:
            base.view(data.nbytes, dtypes.uint8, 8 + len(raw) + begin).copyin(data)
    del base


def _storage_bytes(t: Tensor) -> memoryview:
    """The tensor's elements as raw little-endian storage bytes (bfloat16/fp8 as bits)."""
    from fusegrad.engine import encode_floats, has_numpy_type

    values = t.numpy()
    arr = values if has_numpy_type(t.dtype) else encode_floats(values, t.dtype)
    return np.ascontiguousarray(arr).reshape(-1).data.cast("B")
