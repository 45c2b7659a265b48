"""``fusegrad.nn.datasets.cifar``: the CIFAR-10 binary tarball parsed into Tensors, checked on
a small synthetic tarball of the same layout (no network)."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
from fusegrad import dtypes
from fusegrad.nn.datasets import CIFAR_RECORD, cifar

RNG = np.random.default_rng(10)


def _records(n: int) -> np.ndarray:
    out = RNG.integers(0, 256, size=(n, CIFAR_RECORD), dtype=np.uint8)
    out[:, 0] = RNG.integers(0, 10, size=n)
    return out


def _tarball(path: Path, batches: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in batches.items():
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_cifar_parses_the_binary_layout(tmp_path: Path) -> None:
    train = [_records(3) for _ in range(5)]
    test = _records(4)
    files = {f"data_batch_{i + 1}.bin": r.tobytes() for i, r in enumerate(train)}
    files["test_batch.bin"] = test.tobytes()
    files["batches.meta.txt"] = b"airplane\nautomobile\n"
    tarball = _tarball(tmp_path / "cifar-10-binary.tar.gz", files)
    md5 = hashlib.md5(tarball.read_bytes(), usedforsecurity=False).hexdigest()
    x_train, y_train, x_test, y_test = cifar(path=tarball, checksum=md5)
    every = np.concatenate(train)
    assert x_train.shape == (15, 3, 32, 32) and x_train.dtype == dtypes.uint8
    assert y_train.shape == (15,) and y_test.shape == (4,) and y_test.dtype == dtypes.uint8
    np.testing.assert_array_equal(y_train.numpy(), every[:, 0])
    # channels first: pixel (c, row, col) is byte 1 + 1024 c + 32 row + col of its record
    np.testing.assert_array_equal(x_train.numpy()[7, 2, 5, 9], every[7, 1 + 2048 + 160 + 9])
    np.testing.assert_array_equal(x_test.numpy(), test[:, 1:].reshape(4, 3, 32, 32))


def test_cifar_bad_files_say_what_is_wrong(tmp_path: Path) -> None:
    good = {f"data_batch_{i}.bin": _records(1).tobytes() for i in range(1, 6)}
    short = _tarball(tmp_path / "short.tar.gz", {**good, "test_batch.bin": b"\0" * 100})
    with pytest.raises(ValueError, match=r"test_batch\.bin has 100 bytes"):
        cifar(path=short, checksum=None)
    missing = _tarball(tmp_path / "missing.tar.gz", good)
    with pytest.raises(ValueError, match=r"no test_batch\.bin"):
        cifar(path=missing, checksum=None)
    with pytest.raises(ValueError, match="MD5"):
        cifar(path=missing)  # the published checksum of the real tarball
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tarball")
    with pytest.raises(ValueError, match="not a readable tarball"):
        cifar(path=tmp_path / "junk.tar.gz", checksum=None)
    with pytest.raises(FileNotFoundError):
        cifar(path=tmp_path / "nothing.tar.gz")
