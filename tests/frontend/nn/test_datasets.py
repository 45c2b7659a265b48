"""nn.datasets: MNIST from IDX files (local folder or fetched, MD5-checked, headers
validated) and scikit-learn's 8x8 digits, against NumPy/scikit-learn."""

from __future__ import annotations

import gzip
import hashlib
import struct
from pathlib import Path

import numpy as np
import pytest
from fusegrad import Context, dtypes
from fusegrad.nn import datasets
from fusegrad.nn.datasets import MNIST_FILES, mnist, read_idx


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def _fake_mnist(
    folder: Path, compress: bool, n_train: int = 5, n_test: int = 3
) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 256, (n_train, 28, 28)), rng.integers(0, 10, n_train),
              rng.integers(0, 256, (n_test, 28, 28)), rng.integers(0, 10, n_test)]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for name, arr in zip(MNIST_FILES, arrays, strict=True):
        data = _idx(arr)
        if compress:
            (folder / (name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (folder / name).write_bytes(data)
    return [a.astype(np.uint8) for a in arrays]


def _md5s(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize("compress", [True, False])
def test_mnist_from_a_local_folder(tmp_path: Path, compress: bool) -> None:
    want = _fake_mnist(tmp_path, compress)
    got = mnist(path=tmp_path, checksums=_md5s(tmp_path))
    shapes = [(5, 1, 28, 28), (5,), (3, 1, 28, 28), (3,)]
    for t, w, shape in zip(got, want, shapes, strict=True):
        assert t.shape == shape and t.dtype == dtypes.uint8
        np.testing.assert_array_equal(t.numpy().reshape(w.shape), w)


def test_mnist_checksum_mismatch_raises(tmp_path: Path) -> None:
    _fake_mnist(tmp_path, compress=True)
    sums = _md5s(tmp_path)
    sums["t10k-labels-idx1-ubyte.gz"] = "0" * 32
    with pytest.raises(ValueError, match=r"t10k-labels.*MD5 .* expected 0000"):
        mnist(path=tmp_path, checksums=sums)
    with pytest.raises(ValueError, match="MD5"):  # the published sums don't match fakes
        mnist(path=tmp_path)


def test_mnist_fetches_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = tmp_path / "server"
    want = _fake_mnist(server, compress=True)
    monkeypatch.setattr(datasets, "MNIST_URL", server.as_uri() + "/")
    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path / "cache")):
        got = mnist(checksums=_md5s(server))
        np.testing.assert_array_equal(got[3].numpy(), want[3])
        cached = tmp_path / "cache" / "downloads" / "mnist"
        assert sorted(p.name for p in cached.iterdir()) == sorted(n + ".gz" for n in MNIST_FILES)
        for p in server.iterdir():
            p.unlink()  # the second call reads the cache only
        np.testing.assert_array_equal(mnist(checksums={})[2].numpy()[:, 0], want[2])


def test_missing_mnist_files_raise(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="train-images"):
        mnist(path=tmp_path)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"\x00\x00\x0d\x01" + struct.pack(">I", 2) + b"ab", "unsigned bytes"),  # float32 type
        (b"\x00\x00\x08\x02" + struct.pack(">I", 2), "truncated"),
        (b"\x00\x00\x08\x01" + struct.pack(">I", 5) + b"abc", "needs 5 bytes"),
        (b"\x00\x00\x08\x00", "0 dimensions"),
        (b"\x1f\x8b" + b"\x00" * 30, "malformed gzip"),
        (b"", "not an IDX"),
    ],
)
def test_malformed_idx_raises(tmp_path: Path, data: bytes, match: str) -> None:
    path = tmp_path / "bad"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=match):
        read_idx(path)


def test_digits_match_scikit_learn() -> None:
    sk = pytest.importorskip("sklearn.datasets")
    ref = sk.load_digits()
    x_train, y_train, x_test, y_test = datasets.digits(test_fraction=0.25, seed=1)
    assert x_train.shape == (1348, 1, 8, 8) and x_test.shape == (449, 1, 8, 8)
    assert y_train.dtype == dtypes.int32 and x_train.dtype == dtypes.float32
    order = np.random.default_rng(1).permutation(1797)
    np.testing.assert_array_equal(x_test.numpy()[:, 0], ref.images[order[:449]])
    np.testing.assert_array_equal(y_train.numpy(), ref.target[order[449:]])
    np.testing.assert_array_equal(y_test.numpy(), ref.target[order[:449]])
    with pytest.raises(ValueError, match="test_fraction"):
        datasets.digits(test_fraction=1.0)
