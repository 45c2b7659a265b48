"""torch_load: PyTorch checkpoints (the zip format and the legacy one) without PyTorch and
without running pickled code.

The unpickler is restricted: ``find_class`` resolves only an allowlist of names (tensor and
storage rebuilders, OrderedDict, dtype and Size markers), each to a stub of our own; BUILD is
accepted only on dicts and our tensors, and ignored. Anything else raises UnsafePickleError (a
ValueError) before it is called, so a malicious pickle runs nothing. Contiguous tensors are lazy
views of the file (DISK device); strided ones are copied out after checking every index
stays inside their storage.
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fusegrad.nn.archive import MAX_RATIO, zip_data_offset
from fusegrad.nn.disk import ByteSource, MemoryBytes, SourceReader, open_source
from fusegrad.tensor import Tensor
from fusegrad.uop import DType, dtypes, prod


class UnsafePickleError(ValueError):
    """A pickle asked for a global outside the allowlist, or for an unsupported operation."""


_DTYPE_NAMES: dict[str, DType] = {
    "Double": dtypes.float64,
    "Float": dtypes.float32,
    "Half": dtypes.float16,
    "BFloat16": dtypes.bfloat16,
    "Long": dtypes.int64,
    "Int": dtypes.int32,
    "Short": dtypes.int16,
    "Char": dtypes.int8,
    "Byte": dtypes.uint8,
    "Bool": dtypes.bool,
}
_TORCH_DTYPES: dict[str, DType] = {
    "float64": dtypes.float64, "double": dtypes.float64, "float32": dtypes.float32,
    "float": dtypes.float32, "float16": dtypes.float16, "half": dtypes.float16,
    "bfloat16": dtypes.bfloat16, "int64": dtypes.int64, "long": dtypes.int64,
    "int32": dtypes.int32, "int": dtypes.int32, "int16": dtypes.int16, "short": dtypes.int16,
    "int8": dtypes.int8, "uint8": dtypes.uint8, "bool": dtypes.bool,
}  # fmt: skip


@dataclass(frozen=True)
class StorageType:
    """The marker ``torch.FloatStorage`` & co. resolve to."""

    dtype: DType | None  # None: UntypedStorage (bytes)


@dataclass(frozen=True)
class TorchDType:
    """The marker ``torch.float32`` & co. resolve to."""

    dtype: DType


@dataclass(frozen=True)
class Storage:
    """A storage the pickle refers to by key (its bytes live elsewhere in the file)."""

    key: str
    dtype: DType
    numel: int


class _TypeMarker:
    """torch.Tensor / torch.nn.Parameter, only usable as _rebuild_from_type_v2's new_type."""


# -- the rebuilders -----------------------------------------------------------------------------------


def _ints(x: Any, what: str) -> tuple[int, ...]:
    if not isinstance(x, (tuple, list)) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in x
    ):
        raise ValueError(f"torch_load: bad tensor {what} {x!r}")
    return tuple(x)


def _contiguous_strides(size: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(size):
        out.append(acc)
        acc *= s
    return tuple(reversed(out))


class _Context:
    """What the rebuilders need: where each storage's bytes are (None in a sizing pass)."""

    def __init__(self, locate: Callable[[Storage], tuple[ByteSource, int]] | None) -> None:
        self.locate = locate
        self.storages: dict[str, Storage] = {}

    def storage(self, pid: Any) -> Storage:
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise UnsafePickleError(f"torch_load: unsupported persistent id {pid!r:.80}")
        stype, key, numel = pid[1], pid[2], pid[4]
        if not isinstance(stype, StorageType) or not isinstance(key, str):
            raise ValueError(f"torch_load: bad storage reference {pid!r:.80}")
        if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise ValueError(f"torch_load: bad storage size {numel!r}")
        dtype = stype.dtype if stype.dtype is not None else dtypes.uint8
        st = Storage(key, dtype, numel)
        if self.storages.setdefault(key, st) != st:
            raise ValueError(f"torch_load: storage {key!r} referenced with two types or sizes")
        return st

    def rebuild(
        self, storage: Any, offset: Any, size: Any, stride: Any, dtype: DType | None = None
    ) -> Any:
        if not isinstance(storage, Storage):
            raise ValueError(f"torch_load: tensor over a non-storage {type(storage).__name__}")
        shape, strides = _ints(size, "size"), _ints(stride, "stride")
        (start,) = _ints((offset,), "offset")
        if len(shape) != len(strides):
            raise ValueError(f"torch_load: size {shape} and stride {strides} differ in length")
        dt = dtype if dtype is not None else storage.dtype
        if dt.itemsize != storage.dtype.itemsize and storage.dtype is not dtypes.uint8:
            raise ValueError(f"torch_load: {dt!r} tensor over a {storage.dtype!r} storage")
        numel = storage.numel * storage.dtype.itemsize // dt.itemsize
        count = int(prod(shape))
        last = start + sum((s - 1) * st for s, st in zip(shape, strides, strict=True))
        if count and last >= numel:
            raise ValueError(
                f"torch_load: tensor {shape} at offset {start} reads past its storage of {numel}"
            )
        if self.locate is None:
            return None
        src, base = self.locate(storage)
        if count <= 1 or strides == _contiguous_strides(shape):
            return src.tensor(base + start * dt.itemsize, dt, shape)
        if count > numel:
            raise ValueError(f"torch_load: strided tensor {shape} has more elements than storage")
        flat = src.array(base, dt, numel)
        view = np.lib.stride_tricks.as_strided(
            flat[start:], shape, tuple(st * flat.itemsize for st in strides), writeable=False
        )
        return Tensor(np.ascontiguousarray(view), dtype=dt, device=_host(src))


def _host(src: ByteSource) -> str | None:
    return None if src.device.startswith("DISK") else src.device


# -- the restricted unpickler ----------------------------------------------------------------------


class _Rebuilders:
    """The callables the allowlist resolves to (bound to one load's context)."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx

    def v2(self, storage: Any, offset: Any, size: Any, stride: Any, *_: Any) -> Any:
        return self.ctx.rebuild(storage, offset, size, stride)

    def v3(
        self, storage: Any, offset: Any, size: Any, stride: Any, rg: Any, hooks: Any, dtype: Any,
        *_: Any,
    ) -> Any:  # fmt: skip
        if not isinstance(dtype, TorchDType):
            raise ValueError(f"torch_load: bad dtype {dtype!r:.80}")
        return self.ctx.rebuild(storage, offset, size, stride, dtype.dtype)

    def parameter(self, data: Any, *_: Any) -> Any:
        return data

    def from_type(self, func: Any, new_type: Any, args: Any, state: Any) -> Any:
        if func not in (self.v2, self.v3, self.parameter) or not isinstance(new_type, _TypeMarker):
            raise UnsafePickleError("torch_load: _rebuild_from_type_v2 of an unknown type")
        if not isinstance(args, tuple):
            raise ValueError("torch_load: bad _rebuild_from_type_v2 arguments")
        return func(*args)

    @staticmethod
    def encode(text: Any, encoding: Any = "latin1") -> bytes:
        if not isinstance(text, str) or encoding != "latin1":
            raise UnsafePickleError("torch_load: _codecs.encode is only allowed for latin1 text")
        return text.encode("latin1")


def _globals(ctx: _Context) -> dict[tuple[str, str], Any]:
    """The allowlist: (module, name) -> what it resolves to (all ours)."""
    r = _Rebuilders(ctx)
    table: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): r.v2,
        ("torch._utils", "_rebuild_tensor"): r.v2,
        ("torch._utils", "_rebuild_tensor_v3"): r.v3,
        ("torch._utils", "_rebuild_parameter"): r.parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): r.parameter,
        ("torch._tensor", "_rebuild_from_type_v2"): r.from_type,
        ("torch", "Tensor"): _TypeMarker(),
        ("torch.nn.parameter", "Parameter"): _TypeMarker(),
        ("torch", "Size"): tuple,
        ("_codecs", "encode"): r.encode,
        ("torch", "UntypedStorage"): StorageType(None),
    }
    for name, dt in _DTYPE_NAMES.items():
        table["torch", f"{name}Storage"] = StorageType(dt)
    for name, dt in _TORCH_DTYPES.items():
        table["torch", name] = TorchDType(dt)
    return table


class RestrictedUnpickler(pickle._Unpickler):
    """The pure-Python unpickler with find_class, persistent_load and BUILD restricted."""

    dispatch: ClassVar[dict[int, Callable[[Any], None]]] = dict(pickle._Unpickler.dispatch)
    stack: list[Any]

    def __init__(self, file: Any, ctx: _Context) -> None:
        super().__init__(file, encoding="latin1")
        self.ctx = ctx
        self.allowed = _globals(ctx)

    def find_class(self, module: str, name: str) -> Any:
        found = self.allowed.get((module, name))
        if found is None:
            raise UnsafePickleError(f"torch_load: refusing to load global {module}.{name}")
        return found

    def persistent_load(self, pid: Any) -> Any:
        return self.ctx.storage(pid)

    def load_build(self) -> None:
        self.stack.pop()  # the state: ignored (dicts keep their items, tensors their data)
        target = self.stack[-1]
        if not isinstance(target, (dict, Tensor)) and target is not None:
            raise UnsafePickleError(f"torch_load: BUILD on a {type(target).__name__}")

    def load_ext(self) -> None:
        raise UnsafePickleError("torch_load: pickle extension codes are not allowed")

    dispatch[pickle.BUILD[0]] = load_build
    for _op in (pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_op[0]] = load_ext


_PICKLE_ERRORS = (
    pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
    AttributeError, struct.error, OverflowError, MemoryError, RecursionError,
    UnicodeDecodeError, zipfile.BadZipFile, NotImplementedError, OSError,
)  # fmt: skip


def _unpickle(reader: Any, ctx: _Context) -> Any:
    try:
        return RestrictedUnpickler(reader, ctx).load()
    except UnsafePickleError:
        raise
    except _PICKLE_ERRORS as e:
        if isinstance(e, ValueError) and str(e).startswith("torch_load"):
            raise
        raise ValueError(f"torch_load: malformed pickle: {type(e).__name__}: {e}") from None


# -- the file formats ------------------------------------------------------------------------------


def _load_zip(source: ByteSource) -> Any:
    try:
        with zipfile.ZipFile(SourceReader(source)) as archive:
            infos = {i.filename: i for i in archive.infolist()}
            pkl = [n for n in infos if n.endswith("/data.pkl") or n == "data.pkl"]
            if len(pkl) != 1:
                raise ValueError(f"torch_load: {source.path} has no single data.pkl")
            root = pkl[0][: -len("data.pkl")]
            order = infos.get(f"{root}byteorder")
            if order is not None and archive.read(order).strip() not in (b"little", b""):
                raise ValueError("torch_load: big-endian checkpoints are not supported")
            pickled = _read_member(archive, infos[pkl[0]])
            blobs: dict[str, tuple[ByteSource, int]] = {}

            def locate(st: Storage) -> tuple[ByteSource, int]:
                if st.key not in blobs:
                    name = f"{root}data/{st.key}"
                    blobs[st.key] = _storage_bytes(source, archive, infos, name)
                    _check_storage_size(infos[name], st)
                return blobs[st.key]

            return _unpickle(io.BytesIO(pickled), _Context(locate))
    except (zipfile.BadZipFile, struct.error, OverflowError, EOFError, KeyError, OSError) as e:
        raise ValueError(f"torch_load: malformed zip checkpoint {source.path}: {e}") from None


def _check_storage_size(info: zipfile.ZipInfo, st: Storage) -> None:
    # a storage file shorter than its declared elements: the tensors over its end would read
    # whatever follows it in the archive
    need = st.numel * st.dtype.itemsize
    if info.file_size < need:
        raise ValueError(
            f"torch_load: storage {info.filename!r} has {info.file_size} bytes, its"
            f" {st.numel} {st.dtype!r} elements need {need}"
        )


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    if info.file_size > info.compress_size * MAX_RATIO + 1024:
        raise ValueError(f"torch_load: {info.filename!r} claims an impossible size")
    with archive.open(info) as f:
        data = f.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise ValueError(f"torch_load: {info.filename!r} has a size other than declared")
    return data


def _storage_bytes(
    source: ByteSource, archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], name: str
) -> tuple[ByteSource, int]:
    info = infos.get(name)
    if info is None:
        raise ValueError(f"torch_load: storage {name!r} is missing from the archive")
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size == info.file_size:
        return source, zip_data_offset(source, info)
    return MemoryBytes(_read_member(archive, info), _host(source)), 0


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def _load_legacy(source: ByteSource) -> Any:
    reader = SourceReader(source)
    header = [_unpickle(reader, _Context(None)) for _ in range(3)]
    if header[0] != LEGACY_MAGIC or header[1] != 1001:
        raise ValueError(f"torch_load: {source.path} is not a PyTorch checkpoint")
    main = reader.tell()
    sizing = _Context(None)
    _unpickle(reader, sizing)
    keys = _unpickle(reader, _Context(None))
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError("torch_load: bad storage key list")
    offsets: dict[str, int] = {}
    pos = reader.tell()
    for key in keys:
        st = sizing.storages.get(key)
        if st is None:
            raise ValueError(f"torch_load: storage {key!r} is never used")
        (numel,) = struct.unpack("<q", bytes(source.bytes_at(pos, 8)))
        if numel != st.numel:
            raise ValueError(f"torch_load: storage {key!r} has {numel} elements, not {st.numel}")
        offsets[key] = pos + 8
        pos += 8 + numel * st.dtype.itemsize
        source.bytes_at(offsets[key], numel * st.dtype.itemsize)  # bounds check

    def locate(st: Storage) -> tuple[ByteSource, int]:
        if st.key not in offsets:
            raise ValueError(f"torch_load: storage {st.key!r} has no data")
        return source, offsets[st.key]

    return _unpickle(SourceReader(source, main), _Context(locate))


def torch_load(t: Any) -> Any:
    """The object saved by ``torch.save`` (state dicts: key -> Tensor, lazily on the file's
    DISK device). ``t``: a path, a uint8 Tensor or bytes."""
    source = open_source(t)
    if bytes(source.bytes_at(0, min(4, source.size))) == b"PK\x03\x04":
        return _load_zip(source)
    return _load_legacy(source)
