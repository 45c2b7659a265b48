"""Helpers for the nn.state tests: a GGUF writer and NumPy dequantizers written element by
element from ggml's C definitions (an independent reference for the tensor-op versions)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

BLOCKS = {2: (32, 18), 3: (32, 20), 6: (32, 22), 8: (32, 34), 12: (256, 144), 14: (256, 210)}


def random_blocks(gtype: int, n: int, rng: np.random.Generator) -> bytes:
    """``n`` random blocks of a quantized type, with finite float16 scales."""
    _, size = BLOCKS[gtype]
    raw = rng.integers(0, 256, (n, size), dtype=np.uint8)
    halves = {2: [0], 3: [0, 2], 6: [0], 8: [0], 12: [0, 2], 14: [208]}[gtype]
    for at in halves:
        raw[:, at : at + 2] = rng.uniform(-2, 2, n).astype(np.float16).view(np.uint8).reshape(n, 2)
    return raw.tobytes()


def _f16(b: bytes, at: int) -> float:
    return float(np.frombuffer(b[at : at + 2], dtype=np.float16)[0])


def _dq_q4_0(b: bytes) -> list[float]:
    d = _f16(b, 0)
    qs = b[2:18]
    return [((qs[j] & 0xF) - 8) * d for j in range(16)] + [
        ((qs[j] >> 4) - 8) * d for j in range(16)
    ]


def _dq_q4_1(b: bytes) -> list[float]:
    d, m = _f16(b, 0), _f16(b, 2)
    qs = b[4:20]
    return [(qs[j] & 0xF) * d + m for j in range(16)] + [(qs[j] >> 4) * d + m for j in range(16)]


def _dq_q5_0(b: bytes) -> list[float]:
    d = _f16(b, 0)
    (qh,) = struct.unpack("<I", b[2:6])
    qs = b[6:22]
    y = [0.0] * 32
    for j in range(16):
        xh_0 = ((qh >> j) << 4) & 0x10
        xh_1 = (qh >> (j + 12)) & 0x10
        y[j] = (((qs[j] & 0x0F) | xh_0) - 16) * d
        y[j + 16] = (((qs[j] >> 4) | xh_1) - 16) * d
    return y


def _dq_q8_0(b: bytes) -> list[float]:
    d = _f16(b, 0)
    return [q * d for q in np.frombuffer(b[2:34], dtype=np.int8).tolist()]


def _scale_min_k4(j: int, q: bytes) -> tuple[int, int]:
    if j < 4:
        return q[j] & 63, q[j + 4] & 63
    return (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)


def _dq_q4_k(b: bytes) -> list[float]:
    d, dmin = _f16(b, 0), _f16(b, 2)
    scales, q = b[4:16], b[16:144]
    y: list[float] = []
    is_, qi = 0, 0
    for _ in range(0, 256, 64):
        sc, m = _scale_min_k4(is_, scales)
        d1, m1 = d * sc, dmin * m
        sc, m = _scale_min_k4(is_ + 1, scales)
        d2, m2 = d * sc, dmin * m
        y += [d1 * (q[qi + i] & 0xF) - m1 for i in range(32)]
        y += [d2 * (q[qi + i] >> 4) - m2 for i in range(32)]
        qi += 32
        is_ += 2
    return y


def _dq_q6_k(b: bytes) -> list[float]:
    d = _f16(b, 208)
    ql, qh = b[0:128], b[128:192]
    sc = np.frombuffer(b[192:208], dtype=np.int8).tolist()
    y = [0.0] * 256
    for n in range(2):
        lo, hi, s, out = 64 * n, 32 * n, 8 * n, 128 * n
        for l in range(32):  # noqa: E741 (ggml's name)
            is_ = l // 16
            q1 = ((ql[lo + l] & 0xF) | (((qh[hi + l] >> 0) & 3) << 4)) - 32
            q2 = ((ql[lo + l + 32] & 0xF) | (((qh[hi + l] >> 2) & 3) << 4)) - 32
            q3 = ((ql[lo + l] >> 4) | (((qh[hi + l] >> 4) & 3) << 4)) - 32
            q4 = ((ql[lo + l + 32] >> 4) | (((qh[hi + l] >> 6) & 3) << 4)) - 32
            y[out + l] = d * sc[s + is_] * q1
            y[out + l + 32] = d * sc[s + is_ + 2] * q2
            y[out + l + 64] = d * sc[s + is_ + 4] * q3
            y[out + l + 96] = d * sc[s + is_ + 6] * q4
    return y


DEQUANT = {2: _dq_q4_0, 3: _dq_q4_1, 6: _dq_q5_0, 8: _dq_q8_0, 12: _dq_q4_k, 14: _dq_q6_k}


def dequantize_np(gtype: int, raw: bytes) -> np.ndarray:
    """The float values of quantized blocks, by the element loops above (float64)."""
    _, size = BLOCKS[gtype]
    out: list[float] = []
    for i in range(0, len(raw), size):
        out += DEQUANT[gtype](raw[i : i + size])
    return np.array(out, dtype=np.float64)


def _gguf_string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def _gguf_value(v: Any) -> bytes:
    if isinstance(v, bool):
        return struct.pack("<I?", 7, v)
    if isinstance(v, int):
        return struct.pack("<Iq", 11, v)
    if isinstance(v, float):
        return struct.pack("<Id", 12, v)
    if isinstance(v, str):
        return struct.pack("<I", 8) + _gguf_string(v)
    if all(isinstance(x, int) for x in v):
        return struct.pack("<IIQ", 9, 5, len(v)) + np.array(v, dtype=np.int32).tobytes()
    return struct.pack("<IIQ", 9, 8, len(v)) + b"".join(_gguf_string(x) for x in v)


def write_gguf(
    kv: dict[str, Any], tensors: list[tuple[str, tuple[int, ...], int, bytes]], align: int = 32
) -> bytes:
    """A GGUF v3 file: ``tensors`` are (name, dims innermost first, ggml type, raw data)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    for k, v in kv.items():
        out += _gguf_string(k) + _gguf_value(v)
    offset = 0
    data = b""
    for name, dims, gtype, raw in tensors:
        out += _gguf_string(name) + struct.pack("<I", len(dims))
        out += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", gtype, offset)
        pad = -len(raw) % align
        data += raw + b"\0" * pad
        offset += len(raw) + pad
    out += b"\0" * (-len(out) % align)
    return out + data
