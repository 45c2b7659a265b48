"""Loader faults found trying bad files (issue #24): each is a clear error, not bad data or a
dead interpreter. The truncated-file cases run in a subprocess: before the fix they killed the
interpreter with SIGBUS."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.nn.state import gguf_load, torch_load
from ggml_reference import write_gguf

pytestmark = pytest.mark.kernels  # the real engine and DISK device

TRUNCATE = """
import sys
from fusegrad import Tensor
from fusegrad.nn.state import safe_load, safe_save
path = sys.argv[1]
safe_save({{"a": Tensor.arange(100000).float(), "b": Tensor.ones(100000)}}, path)
loaded = safe_load(path)
with open(path, "r+b") as f:
    f.truncate(4096)
try:
    {read}
except OSError as e:
    print("OSError:", e)
else:
    print("read without error")
"""


@pytest.mark.parametrize(
    "read",
    [
        'loaded["b"].numpy()',
        'loaded["a"].to("CPU").realize()',
        'loaded["b"][10:20].to("CPU").numpy()',
    ],
)
def test_safetensors_truncated_after_load_raises_os_error(tmp_path: Path, read: str) -> None:
    path = tmp_path / "t.safetensors"
    code = TRUNCATE.format(read=read)
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"rc={proc.returncode} (SIGBUS is -7) {proc.stderr[-2000:]}"
    assert proc.stdout.startswith("OSError:"), proc.stdout
    assert str(path) in proc.stdout and "4096 bytes" in proc.stdout


def test_safetensors_truncated_keeps_the_bytes_before_the_cut(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        from fusegrad import Tensor
        from fusegrad.nn.state import safe_load, safe_save
        path = sys.argv[1]
        safe_save({"a": Tensor.arange(100000).float()}, path)
        loaded = safe_load(path)
        with open(path, "r+b") as f:
            f.truncate(8192)
        print(loaded["a"][:100].to("CPU").numpy().sum())
        """
    )
    path = tmp_path / "t.safetensors"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout) == float(sum(range(100)))


def _gguf_f32(offset: int) -> bytes:
    raw = np.arange(8, dtype=np.float32).tobytes()
    data = write_gguf({"general.alignment": 32}, [("w", (8,), 0, raw)]) + b"\0" * 64
    entry = struct.pack("<Q", 1) + b"w" + struct.pack("<IQIQ", 1, 8, 0, 0)
    assert data.count(entry) == 1
    return data.replace(entry, entry[:-8] + struct.pack("<Q", offset))


def test_gguf_aligned_offset_loads() -> None:
    _, tensors = gguf_load(_gguf_f32(32))
    np.testing.assert_array_equal(tensors["w"].numpy(), np.zeros(8, np.float32))
    _, tensors = gguf_load(_gguf_f32(0))
    np.testing.assert_array_equal(tensors["w"].numpy(), np.arange(8, dtype=np.float32))


@pytest.mark.parametrize("offset", [4, 1, 33])
def test_gguf_misaligned_offset_is_rejected(offset: int) -> None:
    with pytest.raises(ValueError, match=rf"'w' offset {offset} violates general.alignment 32"):
        gguf_load(_gguf_f32(offset))


def _short_storage_checkpoint(keep: int) -> bytes:
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    torch.save({"w": torch.arange(8.0), "pad": torch.full((64,), 1.5e-36)}, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data/0"):
                data = data[:keep]
            dst.writestr(info.filename, data)
    return out.getvalue()


def test_torch_zip_storage_shorter_than_declared_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"storage '.*data/0' has 16 bytes.*8 .*need 32"):
        torch_load(_short_storage_checkpoint(16))


def test_torch_zip_storage_of_full_size_loads() -> None:
    sd = torch_load(_short_storage_checkpoint(32))
    assert isinstance(sd["w"], Tensor)
    np.testing.assert_array_equal(sd["w"].numpy(), np.arange(8, dtype=np.float32))
