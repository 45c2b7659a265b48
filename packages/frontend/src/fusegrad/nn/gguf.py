"""gguf_load: GGUF model files (llama.cpp's format): metadata and tensors, dequantized.

Layout: magic ``GGUF``, version (2 or 3), tensor count and key/value count (uint64), the
key/values, the tensor infos (name, dims innermost first, ggml type, offset), then the data
from the next multiple of ``general.alignment`` (32). Every count, length and offset is
checked against the file before it is used: a malformed file raises ValueError.

F32/F16/BF16 tensors are lazy views of the file; the quantized types (Q4_0, Q4_1, Q5_0, Q8_0,
Q4_K, Q6_K) are dequantized by tensor ops over the raw blocks (lazily too, as float32),
following the block layouts of ggml's ``dequantize_row_*``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from fusegrad.nn.disk import ByteSource, open_source, to_device
from fusegrad.tensor import Tensor
from fusegrad.uop import DType, dtypes, prod

MAX_DEPTH = 4  # nested arrays in metadata
MAX_DIMS = 4  # GGML_MAX_DIMS

_SCALARS: dict[int, tuple[str, int]] = {
    0: ("<u1", 1), 1: ("<i1", 1), 2: ("<u2", 2), 3: ("<i2", 2), 4: ("<u4", 4), 5: ("<i4", 4),
    6: ("<f4", 4), 7: ("<?", 1), 10: ("<u8", 8), 11: ("<i8", 8), 12: ("<f8", 8),
}  # fmt: skip
_STRING, _ARRAY = 8, 9


class _Cursor:
    """Sequential little-endian reads over a ByteSource, bounds checked."""

    def __init__(self, src: ByteSource) -> None:
        self.src, self.pos = src, 0

    def left(self) -> int:
        return self.src.size - self.pos

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or n > self.left():
            raise ValueError(f"gguf: {what} of {n} bytes at {self.pos} runs past the end")
        out = self.src.bytes_at(self.pos, n)
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str) -> str:
        n = self.unpack("<Q", what)
        try:
            return bytes(self.take(n, what)).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"gguf: {what} isn't UTF-8: {e}") from None

    def count(self, min_item: int, what: str) -> int:
        n = int(self.unpack("<Q", what))
        if n * min_item > self.left():
            raise ValueError(f"gguf: {what} {n} is more than the file can hold")
        return n


def _value(cur: _Cursor, vtype: int, depth: int = 0) -> Any:
    if vtype in _SCALARS:
        fmt, size = _SCALARS[vtype]
        return np.frombuffer(cur.take(size, "value"), dtype=fmt)[0].item()
    if vtype == _STRING:
        return cur.string("string value")
    if vtype != _ARRAY:
        raise ValueError(f"gguf: unknown metadata value type {vtype}")
    if depth >= MAX_DEPTH:
        raise ValueError("gguf: metadata arrays nested too deep")
    item = cur.unpack("<I", "array type")
    if item in _SCALARS:
        fmt, size = _SCALARS[item]
        n = cur.count(size, "array length")
        return np.frombuffer(cur.take(n * size, "array"), dtype=fmt).tolist()
    n = cur.count(8 if item in (_STRING, _ARRAY) else 1, "array length")
    return [_value(cur, item, depth + 1) for _ in range(n)]


# -- dequantization: ggml block layouts -> float32 tensors -----------------------------------------


def _f16(blocks: Tensor, at: int) -> Tensor:
    """The float16 at byte ``at`` of each block, as float32 of shape (n, 1)."""
    return blocks[:, at : at + 2].bitcast(dtypes.float16).float()


def _nibbles(q: Tensor) -> tuple[Tensor, Tensor]:
    qi = q.cast(dtypes.int32)
    return qi & 0xF, qi >> 4


def _q4_0(b: Tensor) -> Tensor:
    lo, hi = _nibbles(b[:, 2:18])  # y[j] = (lo_j - 8) d, y[j + 16] = (hi_j - 8) d
    return (lo.cat(hi, dim=1) - 8).float() * _f16(b, 0)


def _q4_1(b: Tensor) -> Tensor:
    lo, hi = _nibbles(b[:, 4:20])  # y = q d + m
    return lo.cat(hi, dim=1).float() * _f16(b, 0) + _f16(b, 2)


def _q5_0(b: Tensor) -> Tensor:
    qh = b[:, 2:6].bitcast(dtypes.uint32).cast(dtypes.int64)  # bit j: 5th bit of y[j]
    powers = Tensor([2**j for j in range(32)], dtype=dtypes.int64, device=b.device)
    high = (qh // powers) % 2
    lo, hi = _nibbles(b[:, 6:22])
    return (lo.cat(hi, dim=1) + high.cast(dtypes.int32) * 16 - 16).float() * _f16(b, 0)


def _q8_0(b: Tensor) -> Tensor:
    return b[:, 2:34].bitcast(dtypes.int8).float() * _f16(b, 0)


def _q4_k(b: Tensor) -> Tensor:
    n = int(b.shape[0])
    s = b[:, 4:16].cast(dtypes.int32)  # 8 six-bit scales and mins packed in 12 bytes
    sc = (s[:, 0:4] & 63).cat((s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4), dim=1)
    mn = (s[:, 4:8] & 63).cat((s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4), dim=1)
    lo, hi = _nibbles(b[:, 16:144].reshape(n, 4, 32))  # 64-chunk c: low nibbles, then high
    q = lo.unsqueeze(2).cat(hi.unsqueeze(2), dim=2).reshape(n, 8, 32).float()
    scale = (_f16(b, 0) * sc.float()).reshape(n, 8, 1)
    minimum = (_f16(b, 2) * mn.float()).reshape(n, 8, 1)
    return (q * scale - minimum).reshape(n, 256)


def _q6_k(b: Tensor) -> Tensor:
    n = int(b.shape[0])
    lo, hi = _nibbles(b[:, 0:128].reshape(n, 2, 2, 32))  # [half, l or l+32, l]
    low4 = lo.unsqueeze(2).cat(hi.unsqueeze(2), dim=2).reshape(n, 2, 4, 32)  # k = nibble*2 + a
    qh = b[:, 128:192].reshape(n, 2, 1, 32).cast(dtypes.int32)
    shifts = Tensor([1, 4, 16, 64], dtype=dtypes.int32, device=b.device).reshape(1, 1, 4, 1)
    q = low4 + ((qh // shifts) % 4) * 16 - 32  # 6-bit values, k-th pair of high bits
    sc = b[:, 192:208].bitcast(dtypes.int8).float().reshape(n, 2, 4, 2, 1)  # [half, k, l // 16]
    y = q.float().reshape(n, 2, 4, 2, 16) * sc * _f16(b, 208).reshape(n, 1, 1, 1, 1)
    return y.reshape(n, 256)


# ggml type -> (elements per block, bytes per block, dequantizer or plain dtype)
GGML_TYPES: dict[int, tuple[int, int, Callable[[Tensor], Tensor] | DType]] = {
    0: (1, 4, dtypes.float32),
    1: (1, 2, dtypes.float16),
    30: (1, 2, dtypes.bfloat16),
    2: (32, 18, _q4_0),
    3: (32, 20, _q4_1),
    6: (32, 22, _q5_0),
    8: (32, 34, _q8_0),
    12: (256, 144, _q4_k),
    14: (256, 210, _q6_k),
}


def _tensor_info(cur: _Cursor) -> tuple[str, tuple[int, ...], int, int]:
    name = cur.string("tensor name")
    ndim = cur.unpack("<I", "tensor dims")
    if ndim > MAX_DIMS:
        raise ValueError(f"gguf: tensor {name!r} has {ndim} dims (at most {MAX_DIMS})")
    dims = tuple(int(cur.unpack("<Q", "tensor dim")) for _ in range(ndim))
    gtype = cur.unpack("<I", "tensor type")
    offset = cur.unpack("<Q", "tensor offset")
    return name, dims, gtype, offset


def _load_tensor(
    src: ByteSource, name: str, dims: tuple[int, ...], gtype: int, start: int
) -> Tensor:
    if gtype not in GGML_TYPES:
        raise ValueError(f"gguf: tensor {name!r} has unsupported ggml type {gtype}")
    per_block, block_bytes, kind = GGML_TYPES[gtype]
    count = int(prod(dims))
    if dims and dims[0] % per_block:
        raise ValueError(
            f"gguf: tensor {name!r} row of {dims[0]} isn't whole blocks of {per_block}"
        )
    nbytes = count // per_block * block_bytes
    if start + nbytes > src.size:
        raise ValueError(f"gguf: tensor {name!r} data [{start}, {start + nbytes}) past the end")
    shape = tuple(reversed(dims))
    if not callable(kind):
        return src.tensor(start, kind, shape)
    blocks = src.tensor(start, dtypes.uint8, (count // per_block, block_bytes))
    if blocks.device.startswith("DISK:"):
        blocks = to_device(
            blocks, None
        )  # dequantize on the default device (read lazily from the file)
    return kind(blocks).reshape(shape)


def gguf_load(src: Any) -> tuple[dict[str, Any], dict[str, Tensor]]:
    """(metadata, tensors) of a GGUF file (path, uint8 Tensor or bytes)."""
    source = open_source(src)
    cur = _Cursor(source)
    if bytes(cur.take(4, "magic")) != b"GGUF":
        raise ValueError(f"gguf: {source.path} doesn't start with GGUF")
    version = cur.unpack("<I", "version")
    if version not in (2, 3):
        raise ValueError(f"gguf: unsupported version {version}")
    n_tensors = cur.count(24, "tensor count")
    n_kv = cur.count(12, "metadata count")
    kv: dict[str, Any] = {}
    for _ in range(n_kv):
        key = cur.string("metadata key")
        kv[key] = _value(cur, cur.unpack("<I", "metadata type"))
    infos = [_tensor_info(cur) for _ in range(n_tensors)]
    align = kv.get("general.alignment", 32)
    if not isinstance(align, int) or align <= 0 or align & (align - 1):
        raise ValueError(f"gguf: general.alignment {align!r} isn't a power of two")
    data = cur.pos + (-cur.pos % align)
    tensors: dict[str, Tensor] = {}
    for name, dims, gtype, offset in infos:
        if name in tensors:
            raise ValueError(f"gguf: tensor {name!r} appears twice")
        if offset % align:
            raise ValueError(
                f"gguf: tensor {name!r} offset {offset} violates general.alignment {align}"
            )
        tensors[name] = _load_tensor(source, name, dims, gtype, data + offset)
    return kv, tensors
