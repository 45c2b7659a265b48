"""nn.state: state dicts, safetensors (round trips, laziness, validation), torch_load (zip and
legacy formats vs PyTorch; malicious pickles), gguf_load (metadata, dequantization vs the
element-wise C definitions), zip/tar extraction."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import subprocess
import sys
import tarfile
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, dtypes, nn
from fusegrad.nn.state import (
    UnsafePickleError,
    get_parameters,
    get_state_dict,
    gguf_load,
    load_state_dict,
    safe_load,
    safe_load_metadata,
    safe_save,
    tar_extract,
    torch_load,
    zip_extract,
)
from ggml_reference import BLOCKS, dequantize_np, random_blocks, write_gguf
from reference import assert_close, rand_np


class Net:
    def __init__(self) -> None:
        self.conv = nn.Conv2d(1, 2, 3)
        self.blocks = [nn.Linear(4, 4), {"norm": nn.LayerNorm(4)}]
        self.bn = nn.BatchNorm(2)
        self.parent = self  # a cycle get_state_dict must survive


# -- state dicts -------------------------------------------------------------------------------------


def test_get_state_dict_walks_attributes_lists_dicts() -> None:
    net = Net()
    sd = get_state_dict(net)
    assert list(sd) == [
        "conv.weight", "conv.bias", "blocks.0.weight", "blocks.0.bias", "blocks.1.norm.weight",
        "blocks.1.norm.bias", "bn.weight", "bn.bias", "bn.num_batches_tracked",
        "bn.running_mean", "bn.running_var",
    ]  # fmt: skip
    assert sd["blocks.0.weight"] is net.blocks[0].weight  # type: ignore[union-attr]
    assert get_parameters(net) == list(sd.values())


def test_load_state_dict_copies_values_and_checks() -> None:
    a, b = Net(), Net()
    load_state_dict(b, get_state_dict(a))
    for (k, x), y in zip(get_state_dict(a).items(), get_state_dict(b).values(), strict=True):
        assert_close(y, x.numpy(), atol=0), k
    sd = dict(get_state_dict(a))
    sd["conv.weight"] = Tensor.zeros(2, 1, 3, 4)
    with pytest.raises(ValueError, match=r"Shape mismatch in layer `conv\.weight`"):
        load_state_dict(b, sd)
    sd["conv.weight"] = Tensor.zeros(2, 1, 3, 3, dtype=dtypes.float16)
    with pytest.raises(ValueError, match=r"dtype mismatch in layer `conv\.weight`"):
        load_state_dict(b, sd)
    del sd["conv.weight"]
    with pytest.raises(KeyError, match=r"conv\.weight"):
        load_state_dict(b, sd)
    load_state_dict(b, sd, strict=False)  # the rest loads, extra keys are ignored
    sd["unused"] = Tensor([1.0])
    load_state_dict(b, sd, strict=False, consume=True)
    assert list(sd) == ["unused"]


def test_loaded_params_train(tmp_path: Path) -> None:
    layer = nn.Linear(3, 2)
    safe_save(get_state_dict(layer), tmp_path / "l.safetensors")
    other = nn.Linear(3, 2)
    load_state_dict(other, safe_load(tmp_path / "l.safetensors"))
    assert other.weight.device == "CPU"
    opt = nn.optim.SGD([other.weight], lr=1.0)
    Tensor.training = True
    try:
        other(Tensor.ones(1, 3)).sum().backward()
        opt.step()
    finally:
        Tensor.training = False
    assert_close(other.weight, layer.weight.numpy() - 1.0, atol=1e-6)


# -- safetensors ------------------------------------------------------------------------------------


def _sample() -> dict[str, Tensor]:
    return {
        "f32": Tensor(rand_np((3, 4))),
        "f16": Tensor(rand_np((5,)).astype(np.float16)),
        "bf16": Tensor([1.5, -2.0, 3.25], dtype=dtypes.bfloat16),
        "i64": Tensor(np.arange(6, dtype=np.int64).reshape(2, 3)),
        "u8": Tensor(np.arange(7, dtype=np.uint8)),
        "bool": Tensor([True, False, True]),
        "empty": Tensor.zeros(0, 3),
        "scalar": Tensor(np.float64(2.5)),
    }


def test_safetensors_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "m.safetensors"
    tensors = _sample()
    safe_save(tensors, path, metadata={"format": "pt"})
    loaded = safe_load(path)
    assert list(loaded) == list(tensors)
    for k, t in tensors.items():
        assert loaded[k].dtype is t.dtype and loaded[k].shape == t.shape, k
        assert loaded[k].device == f"DISK:{path}"
        np.testing.assert_array_equal(loaded[k].numpy(), t.numpy())
        np.testing.assert_array_equal((loaded[k].to("CPU") + 0).numpy(), t.numpy() + 0)
    whole, n, header = safe_load_metadata(path)
    assert header["__metadata__"] == {"format": "pt"} and n % 8 == 0
    assert whole.shape == (os.path.getsize(path),) and whole.dtype is dtypes.uint8


def test_safetensors_interoperates_with_the_reference_library(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    arrays = {
        "a": rand_np((2, 3)),
        "b": np.arange(5, dtype=np.int32),
        "c": np.zeros((0,), np.float16),
    }
    st.save_file(arrays, str(tmp_path / "ref.safetensors"))
    loaded = safe_load(tmp_path / "ref.safetensors")
    for k, v in arrays.items():
        np.testing.assert_array_equal(loaded[k].numpy(), v)
    safe_save({k: Tensor(v) for k, v in arrays.items()}, tmp_path / "ours.safetensors")
    back = st.load_file(str(tmp_path / "ours.safetensors"))
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)


def test_safe_load_reads_only_the_tensors_used(tmp_path: Path) -> None:
    """A 512 MB file (sparse): loading it and using one small tensor must not page the rest in
    (checked as the peak resident memory of a fresh interpreter)."""
    path = tmp_path / "big.safetensors"
    big = 512 * 1024 * 1024
    header = {"small": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
              "big": {"dtype": "U8", "shape": [big], "data_offsets": [16, 16 + big]}}  # fmt: skip
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + np.arange(4, dtype=np.float32).tobytes())
        f.truncate(8 + len(raw) + 16 + big)
    script = f"""
import resource
from fusegrad.nn.state import safe_load
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = safe_load({str(path)!r})
assert t["big"].shape == ({big},)
assert t["small"].tolist() == [0.0, 1.0, 2.0, 3.0]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) < 100 * 1024, out.stdout  # KiB: far below the 512 MB


def _write_raw(path: Path, header: Any, data: bytes = b"", size: int | None = None) -> Path:
    raw = json.dumps(header).encode() if not isinstance(header, bytes) else header
    n = len(raw) if size is None else size
    path.write_bytes(struct.pack("<Q", n) + raw + data)
    return path


@pytest.mark.parametrize("header,data,match", [
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, "outside the 4 data bytes"),
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "needs 12"),
    ({"a": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}}, b"\0", "unknown dtype"),
    ({"a": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}}, b"\0", "bad shape"),
    ({"a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 0]}}, b"\0", "outside"),
    ({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0]}}, b"\0", "bad data_offsets"),
    ({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
      "b": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}}, b"\0" * 3, "starts at 1, expected 2"),
    ({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, b"\0" * 2, "cover 1 of 2"),
    ([1, 2], b"", "must be a JSON object"),
    ({"__metadata__": {"a": 1}}, b"", "strings to strings"),
    (b"\xff\xfe{", b"", "UTF-8 JSON"),
    (b"[" * 5000 + b"]" * 5000, b"", "JSON"),
])  # fmt: skip
def test_safe_load_rejects_malformed(tmp_path: Path, header: Any, data: bytes, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        safe_load(_write_raw(tmp_path / "bad.safetensors", header, data))


def test_safe_load_rejects_bad_header_sizes(tmp_path: Path) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError, match="too short"):
        safe_load(path)
    with pytest.raises(ValueError, match="doesn't fit"):
        safe_load(_write_raw(path, {}, size=2**63))
    with pytest.raises(ValueError, match="doesn't fit"):
        safe_load_metadata(_write_raw(path, {}, size=1000))


# -- torch_load -------------------------------------------------------------------------------------


def _torch_state(torch: Any) -> dict[str, Any]:
    torch.manual_seed(0)
    return OrderedDict(
        w=torch.randn(3, 4),
        p=torch.nn.Parameter(torch.randn(2, 2)),
        t=torch.arange(12, dtype=torch.int32).reshape(3, 4).T,  # strided
        sl=torch.arange(10, dtype=torch.float64)[2:7],  # offset into a shared storage
        h=torch.randn(5).half(),
        bf=torch.tensor([1.5, -3.0], dtype=torch.bfloat16),
        b=torch.tensor([True, False]),
        i8=torch.tensor([-3, 4], dtype=torch.int8),
        s=torch.tensor(7),
        e=torch.zeros(0, 2),
        nested={"list": [torch.ones(2), 3, "text"], "n": 1.5},
    )


@pytest.mark.parametrize("zip_format", [True, False])
def test_torch_load_matches_torch(tmp_path: Path, zip_format: bool) -> None:
    torch = pytest.importorskip("torch")
    sd = _torch_state(torch)
    path = tmp_path / "ckpt.pt"
    torch.save(sd, path, _use_new_zipfile_serialization=zip_format)
    got = torch_load(path)
    assert isinstance(got, dict) and list(got) == list(sd)
    for k, v in sd.items():
        if k == "nested":
            continue
        want = v.detach().float().numpy() if v.dtype is torch.bfloat16 else v.detach().numpy()
        assert got[k].shape == tuple(v.shape), k
        np.testing.assert_array_equal(got[k].numpy(), want)
    assert got["w"].device.startswith("DISK:")  # contiguous tensors stay lazy
    assert got["nested"]["list"][1:] == [3, "text"] and got["nested"]["n"] == 1.5
    np.testing.assert_array_equal(got["nested"]["list"][0].numpy(), [1.0, 1.0])
    model = nn.Linear(4, 3)
    torch.save({"weight": sd["w"], "bias": torch.zeros(3)}, path)
    load_state_dict(model, torch_load(path))
    assert_close(model.weight, sd["w"].numpy(), atol=0)


class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def test_torch_load_refuses_code_in_zip_checkpoints(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": _Evil(str(marker))}, protocol=2))
    with pytest.raises(UnsafePickleError, match=r"refusing to load global (posix|os)\.system"):
        torch_load(path)
    assert not marker.exists()


def test_torch_load_refuses_code_in_legacy_checkpoints(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    for obj in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        pickle.dump(obj, buf, protocol=2)
    pickle.dump({"w": _Evil(str(marker))}, buf, protocol=2)
    path = tmp_path / "evil_legacy.pt"
    path.write_bytes(buf.getvalue())
    with pytest.raises(UnsafePickleError):
        torch_load(path)
    assert not marker.exists()


@pytest.mark.parametrize("payload", [
    b"cbuiltins\neval\n(S'1'\ntR.",  # protocol 0 GLOBAL + REDUCE
    b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x8c\x04exec\x93.",  # STACK_GLOBAL
    b"\x80\x02ccollections\nOrderedDict\n)R}X\x01\x00\x00\x00ac__main__\nEvil\nsb.",  # BUILD state
    b"\x80\x02\x82\x01.",  # EXT1
    b"(cos\nsystem\nS'true'\ni.",  # INST
])  # fmt: skip
def test_restricted_unpickler_runs_nothing(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "p.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", payload)
    with pytest.raises(ValueError):
        torch_load(path)


# -- gguf -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gtype", sorted(BLOCKS))
def test_gguf_dequantizes_like_ggml(tmp_path: Path, gtype: int) -> None:
    per_block, _ = BLOCKS[gtype]
    rng = np.random.default_rng(gtype)
    raw = random_blocks(gtype, 6, rng)
    dims = (per_block * 2, 3)  # innermost first: a (3, 2 * block) tensor
    path = tmp_path / "q.gguf"
    path.write_bytes(write_gguf({"general.name": "q"}, [("q", dims, gtype, raw)]))
    _, tensors = gguf_load(path)
    got = tensors["q"]
    assert got.shape == (3, per_block * 2) and got.dtype is dtypes.float32
    want = dequantize_np(gtype, raw).reshape(3, per_block * 2)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    gguf = pytest.importorskip("gguf")
    theirs = gguf.quants.dequantize(
        np.frombuffer(raw, np.uint8).reshape(3, -1), gguf.GGMLQuantizationType(gtype)
    )
    np.testing.assert_allclose(got.numpy(), theirs, rtol=1e-6, atol=1e-6)


def test_gguf_metadata_and_plain_types(tmp_path: Path) -> None:
    f32 = rand_np((2, 3))
    f16 = rand_np((4,)).astype(np.float16)
    bf16 = np.array([1.5, -2.0], np.float32).view(np.uint32) >> 16
    kv = {"general.architecture": "llama", "llama.block_count": 2, "flag": True, "ratio": 0.5,
          "tokens": ["a", "b"], "ids": [1, 2, 3], "general.alignment": 64}  # fmt: skip
    path = tmp_path / "m.gguf"
    path.write_bytes(write_gguf(kv, [("a", (3, 2), 0, f32.tobytes()), ("b", (4,), 1, f16.tobytes()),
                                     ("c", (2,), 30, bf16.astype(np.uint16).tobytes())], align=64))  # fmt: skip
    meta, tensors = gguf_load(path)
    assert meta == kv
    np.testing.assert_array_equal(tensors["a"].numpy(), f32)
    np.testing.assert_array_equal(tensors["b"].numpy(), f16)
    assert tensors["c"].dtype is dtypes.bfloat16 and tensors["c"].tolist() == [1.5, -2.0]


@pytest.mark.parametrize("mutate,match", [
    (lambda b: b"GGUX" + b[4:], "doesn't start with GGUF"),
    (lambda b: b[:4] + struct.pack("<I", 1) + b[8:], "unsupported version"),
    (lambda b: b[:8] + struct.pack("<Q", 2**40) + b[16:], "tensor count"),
    (lambda b: b[:16] + struct.pack("<Q", 2**40) + b[24:], "metadata count"),
    (lambda b: b[:-40], "past the end"),
])  # fmt: skip
def test_gguf_rejects_malformed(tmp_path: Path, mutate: Any, match: str) -> None:
    raw = write_gguf({"k": "v"}, [("t", (32,), 8, random_blocks(8, 1, np.random.default_rng(0)))])
    with pytest.raises(ValueError, match=match):
        gguf_load(mutate(raw))


# -- archives ---------------------------------------------------------------------------------------


def test_zip_extract_stored_and_deflated(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("stored.bin", bytes(range(10)), compress_type=zipfile.ZIP_STORED)
        z.writestr("dir/deflated.txt", b"hello " * 50, compress_type=zipfile.ZIP_DEFLATED)
    files = zip_extract(path)
    assert files["stored.bin"].tolist() == list(range(10))
    assert files["stored.bin"].device.startswith("DISK:")
    assert bytes(files["dir/deflated.txt"].numpy()) == b"hello " * 50
    assert zip_extract(Tensor(path.read_bytes()))["stored.bin"].tolist() == list(range(10))


def test_tar_extract(tmp_path: Path) -> None:
    path = tmp_path / "a.tar"
    with tarfile.open(path, "w") as t:
        for name, data in (("x.bin", b"\x01\x02\x03"), ("sub/y.txt", b"abc" * 300)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    files = tar_extract(path)
    assert files["x.bin"].tolist() == [1, 2, 3]
    assert bytes(files["sub/y.txt"].numpy()) == b"abc" * 300
    with pytest.raises(ValueError, match="malformed tar"):
        tar_extract(b"\x00" * 100 + b"garbage" * 100)


def _tar_bytes(files: dict[str, bytes], mode: str = "w") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as t:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_tar_gz_extract_from_path_bytes_and_tensor(tmp_path: Path) -> None:
    files = {"x.bin": bytes(range(256)) * 3, "sub/y.txt": b"abc" * 3000, "empty": b""}
    raw = _tar_bytes(files, "w:gz")
    assert raw[:2] == b"\x1f\x8b" and len(raw) < 2000  # really compressed
    path = tmp_path / "a.tar.gz"
    path.write_bytes(raw)
    for src in (path, raw, Tensor(raw)):
        got = tar_extract(src)
        assert sorted(got) == sorted(files)
        for name, data in files.items():
            assert bytes(got[name].numpy()) == data, name


@pytest.mark.parametrize("name", ["../evil", "a/../../evil", "/etc/passwd", "C:/x", "a\\..\\..\\b"])
def test_archive_member_names_outside_the_folder_raise(name: str) -> None:
    with pytest.raises(ValueError, match=r"outside|drive letter"):
        tar_extract(_tar_bytes({"ok.txt": b"1", name: b"2"}))
    with pytest.raises(ValueError, match=r"outside|drive letter"):
        tar_extract(_tar_bytes({name: b"2"}, "w:gz"))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zipfile.ZipInfo(name), b"2")
    with pytest.raises(ValueError, match=r"outside|drive letter"):
        zip_extract(out.getvalue())


def test_malformed_tar_gz_raises_value_error() -> None:
    raw = _tar_bytes({"x.bin": bytes(range(200)) * 5}, "w:gz")
    bad_crc = raw[:-8] + bytes([raw[-8] ^ 1]) + raw[-7:]
    for bad in (raw[: len(raw) // 2], bad_crc, raw[:10], b"\x1f\x8b" + b"\x00" * 40):
        with pytest.raises(ValueError, match="malformed tar"):
            tar_extract(bad)
    import gzip

    with pytest.raises(ValueError, match="malformed tar"):  # gzip of something not a tar
        tar_extract(gzip.compress(b"not a tar archive at all " * 40))


def test_gzip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from fusegrad.nn import archive

    bomb = _tar_bytes({"zeros": bytes(4 << 20)}, "w:gz")  # ~4 KB of gzip for 4 MB
    with monkeypatch.context() as m:
        m.setattr(archive, "MAX_RATIO", 10)  # pretend deflate can't do better than 10x
        with pytest.raises(ValueError, match="inflates past"):
            tar_extract(bomb)
    assert tar_extract(bomb)["zeros"].shape == (4 << 20,)
