"""Fuzzing the model-file readers: random truncations, flipped bytes and huge lengths written
over valid files. Each reader must either load (and every tensor it returns must realize) or
raise ValueError; never another exception, a crash or a hang."""

from __future__ import annotations

import contextlib
import io
import struct
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from fusegrad.nn.state import gguf_load, safe_load, safe_save, tar_extract, torch_load, zip_extract
from ggml_reference import random_blocks, write_gguf

CASES = 120


def corrupt(raw: bytes, rng: np.random.Generator) -> bytes:
    """One random corruption: truncate, flip bytes, or write a huge/odd length somewhere."""
    data = bytearray(raw)
    kind = rng.integers(0, 4)
    if kind == 0:
        return bytes(data[: rng.integers(0, len(data))])
    if kind == 1:
        for _ in range(rng.integers(1, 9)):
            data[rng.integers(0, len(data))] ^= 1 << int(rng.integers(0, 8))
        return bytes(data)
    at = int(rng.integers(0, max(len(data) - 8, 1)))
    value = [2**63 - 1, 2**64 - 1, 2**32 - 1, 2**31, len(data) + 1][int(rng.integers(0, 5))]
    if kind == 2:
        data[at : at + 8] = struct.pack("<Q", value)[: len(data) - at]
    else:
        data[at : at + 4] = struct.pack("<I", value & 0xFFFFFFFF)[: len(data) - at]
    return bytes(data)


def realize_all(obj: Any, depth: int = 0) -> None:
    """Read every tensor in a loader's result (nested dicts/lists)."""
    if isinstance(obj, Tensor):
        obj.numpy()
    elif isinstance(obj, dict) and depth < 8:
        for v in obj.values():
            realize_all(v, depth + 1)
    elif isinstance(obj, (list, tuple)) and depth < 8:
        for v in obj:
            realize_all(v, depth + 1)


def fuzz(load: Callable[[bytes], Any], raw: bytes, seed: int, cases: int = CASES) -> int:
    """Returns how many corruptions were rejected (ValueError); anything else fails."""
    load(raw)  # the valid file loads
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(cases):
        bad = corrupt(raw, rng)
        try:
            realize_all(load(bad))
        except ValueError:
            rejected += 1
    return rejected


def _safetensors_bytes(tmp_path: Path) -> bytes:
    tensors = {"a": Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)),
               "b": Tensor([1, 2, 3], dtype=dtypes.int16), "c": Tensor([1.5], dtype=dtypes.bfloat16)}  # fmt: skip
    safe_save(tensors, tmp_path / "f.safetensors", {"k": "v"})
    return (tmp_path / "f.safetensors").read_bytes()


def test_fuzz_safe_load(tmp_path: Path) -> None:
    assert fuzz(safe_load, _safetensors_bytes(tmp_path), 0) > CASES // 3


def test_fuzz_safe_load_files(tmp_path: Path) -> None:
    """The same through files on the DISK device (mmap bounds)."""
    raw = _safetensors_bytes(tmp_path)
    rng = np.random.default_rng(1)
    path = tmp_path / "bad.safetensors"
    for _ in range(30):
        path.write_bytes(corrupt(raw, rng))
        with contextlib.suppress(ValueError):
            realize_all(safe_load(path))


def _torch_bytes(tmp_path: Path, zip_format: bool) -> bytes:
    torch = pytest.importorskip("torch")
    sd = {"w": torch.arange(6.0).reshape(2, 3), "t": torch.arange(6).reshape(2, 3).T,
          "h": torch.ones(3).half(), "n": [torch.zeros(2), 1]}  # fmt: skip
    path = tmp_path / "c.pt"
    torch.save(sd, path, _use_new_zipfile_serialization=zip_format)
    return path.read_bytes()


@pytest.mark.parametrize("zip_format", [True, False])
def test_fuzz_torch_load(tmp_path: Path, zip_format: bool) -> None:
    assert fuzz(torch_load, _torch_bytes(tmp_path, zip_format), 2) > 10


def test_fuzz_torch_load_pickle_stream(tmp_path: Path) -> None:
    """Corruptions of the pickle itself (inside a valid zip)."""
    raw = _torch_bytes(tmp_path, True)
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        names = z.namelist()
        members = {n: z.read(n) for n in names}
    pkl = next(n for n in names if n.endswith("data.pkl"))

    def load(data: bytes) -> Any:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for n in names:
                z.writestr(n, data if n == pkl else members[n])
        return torch_load(out.getvalue())

    rng = np.random.default_rng(3)
    for _ in range(CASES):
        with contextlib.suppress(ValueError):
            realize_all(load(corrupt(members[pkl], rng)))


def test_fuzz_gguf_load() -> None:
    rng = np.random.default_rng(4)
    tensors = [("q4k", (256,), 12, random_blocks(12, 1, rng)), ("q8", (32, 2), 8, random_blocks(8, 2, rng)),
               ("f32", (3,), 0, np.ones(3, np.float32).tobytes())]  # fmt: skip
    raw = write_gguf({"name": "x", "ids": [1, 2], "toks": ["a", "bc"]}, tensors)
    assert fuzz(gguf_load, raw, 5, cases=60) > 10


def test_fuzz_zip_extract() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("a.bin", bytes(range(50)), compress_type=zipfile.ZIP_STORED)
        z.writestr("b.txt", b"text " * 40, compress_type=zipfile.ZIP_DEFLATED)
    assert fuzz(zip_extract, out.getvalue(), 6) > 10


def test_fuzz_tar_extract() -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as t:
        for name, data in (("a.bin", bytes(range(50))), ("b/c.txt", b"x" * 700)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    fuzz(tar_extract, out.getvalue(), 7)


def test_fuzz_tar_gz_extract() -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for name, data in (("a.bin", bytes(range(50))), ("b/c.txt", b"x" * 700)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    assert fuzz(tar_extract, out.getvalue(), 8) > 10
