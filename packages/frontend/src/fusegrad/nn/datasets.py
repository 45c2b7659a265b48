"""fusegrad.nn.datasets: small standard data sets as Tensors.

* ``mnist(device=None, fashion=False, path=None)``: MNIST (or Fashion-MNIST) as tinygrad
  returns it: ``(X_train, Y_train, X_test, Y_test)``, images uint8 ``(N, 1, 28, 28)``,
  labels uint8 ``(N,)``. The four IDX files (gzip-compressed or not) come from the folder
  ``path`` when given, else they are fetched once into the fusegrad cache. Every file is
  checked against its published MD5 before it is read (``checksums=`` replaces the table;
  ``{}`` skips the check), and its IDX header against its size.
* ``cifar(device=None, path=None, checksum=CIFAR_MD5)``: CIFAR-10 as tinygrad returns it:
  ``(X_train, Y_train, X_test, Y_test)``, images uint8 ``(N, 3, 32, 32)``, labels uint8
  ``(N,)``, parsed from the binary tarball (``cifar-10-binary.tar.gz``: per batch file,
  records of one label byte and 3,072 pixel bytes, channels first). The tarball is ``path``
  when given, else fetched once into the fusegrad cache; its MD5 is checked (``checksum=None``
  skips the check).
* ``digits(device=None, test_fraction=0.2, seed=0)``: the 1,797 8x8 handwritten digits that
  ship with scikit-learn (its ``digits.csv.gz`` is read directly; scikit-learn is only where
  the file lives), split with a seeded permutation: images float32 ``(N, 1, 8, 8)`` in
  ``[0, 16]``, labels int32.

Malformed files raise ValueError naming the file and the problem.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import io
import struct
import tarfile
import zlib
from pathlib import Path

import numpy as np

from fusegrad.fetch import fetch
from fusegrad.tensor import Tensor

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FASHION_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
               "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")  # fmt: skip

# the MD5s published for the gzip files (as torchvision lists them)
MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
FASHION_MD5 = {
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
}
IDX_UBYTE = 0x08  # the IDX type code of unsigned bytes
MAX_IDX_BYTES = 1 << 31


def check_md5(path: Path, checksums: dict[str, str]) -> None:
    """ValueError unless ``path``'s MD5 is the one ``checksums`` lists for its name (names
    not listed are not checked)."""
    want = checksums.get(path.name)
    if want is None:
        return
    got = hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest()
    if got != want:
        raise ValueError(
            f"{path}: MD5 {got}, expected {want} (a corrupt or different file; delete it to "
            "fetch it again)"
        )


def _inflate(path: Path, raw: bytes) -> bytes:
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            out = f.read(MAX_IDX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{path}: malformed gzip data: {e}") from None
    if len(out) > MAX_IDX_BYTES:
        raise ValueError(f"{path}: inflates past {MAX_IDX_BYTES} bytes")
    return out


def read_idx(path: Path) -> np.ndarray:
    """An IDX file of unsigned bytes (gzip-compressed or not) as a uint8 array of its shape."""
    data = _inflate(path, path.read_bytes())
    if len(data) < 4 or data[:2] != b"\0\0" or data[2] != IDX_UBYTE:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes (header {data[:4]!r})")
    ndim = data[3]
    if ndim == 0 or len(data) < 4 + 4 * ndim:
        raise ValueError(f"{path}: IDX header with {ndim} dimensions is truncated or empty")
    shape = struct.unpack(f">{ndim}I", data[4 : 4 + 4 * ndim])
    body = memoryview(data)[4 + 4 * ndim :]
    if int(np.prod(shape)) != len(body):
        raise ValueError(f"{path}: IDX shape {shape} needs {int(np.prod(shape))} bytes, "
                         f"the file has {len(body)}")  # fmt: skip
    return np.frombuffer(body, dtype=np.uint8).reshape(shape)


def _mnist_file(name: str, path: Path | None, url: str, checksums: dict[str, str]) -> Path:
    if path is None:
        subdir = "fashion-mnist" if url == FASHION_URL else "mnist"
        file = fetch(url + name + ".gz", name=name + ".gz", subdir=subdir)
    else:
        candidates = [path / (name + ".gz"), path / name]
        file = next((c for c in candidates if c.is_file()), candidates[0])
        if not file.is_file():
            raise FileNotFoundError(f"mnist: neither {candidates[0]} nor {candidates[1]} exists")
    check_md5(file, checksums)
    return file


def mnist(
    device: str | None = None,
    fashion: bool = False,
    path: str | Path | None = None,
    checksums: dict[str, str] | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(X_train, Y_train, X_test, Y_test) of MNIST (``fashion``: Fashion-MNIST): uint8
    images (N, 1, 28, 28) and uint8 labels (N,), from the folder ``path`` or fetched."""
    url = FASHION_URL if fashion else MNIST_URL
    table = checksums if checksums is not None else (FASHION_MD5 if fashion else MNIST_MD5)
    folder = Path(path) if path is not None else None
    arrays = [read_idx(_mnist_file(n, folder, url, table)) for n in MNIST_FILES]
    for images, labels in ((arrays[0], arrays[1]), (arrays[2], arrays[3])):
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f"mnist: images {images.shape} don't match labels {labels.shape}")
    x_train, y_train, x_test, y_test = arrays
    return (Tensor(x_train[:, None], device=device), Tensor(y_train, device=device),
            Tensor(x_test[:, None], device=device), Tensor(y_test, device=device))  # fmt: skip


CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
CIFAR_MD5 = "c32a1d4ab5d03f1284b67883e8d87530"  # as published on the CIFAR page
CIFAR_RECORD = 1 + 3 * 32 * 32  # one label byte, then the red, green and blue planes
CIFAR_TRAIN = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
CIFAR_TEST = "test_batch.bin"


def _cifar_batches(archive: tarfile.TarFile, names: tuple[str, ...], file: Path) -> np.ndarray:
    """The records of the batch files ``names`` as one (N, 3073) uint8 array."""
    members = {Path(m.name).name: m for m in archive.getmembers() if m.isfile()}
    parts = []
    for name in names:
        member = members.get(name)
        if member is None:
            raise ValueError(f"{file}: the tarball has no {name} (not CIFAR-10 binary?)")
        data = archive.extractfile(member)
        assert data is not None  # a regular file
        raw = data.read()
        if not raw or len(raw) % CIFAR_RECORD:
            raise ValueError(
                f"{file}: {name} has {len(raw)} bytes, not a whole number of "
                f"{CIFAR_RECORD}-byte records"
            )
        parts.append(np.frombuffer(raw, dtype=np.uint8).reshape(-1, CIFAR_RECORD))
    return np.concatenate(parts)


def cifar(
    device: str | None = None,
    path: str | Path | None = None,
    checksum: str | None = CIFAR_MD5,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(X_train, Y_train, X_test, Y_test) of CIFAR-10: uint8 images (N, 3, 32, 32) and uint8
    labels 0..9 (N,), from the binary tarball at ``path`` or fetched."""
    if path is None:
        file = fetch(CIFAR_URL, name="cifar-10-binary.tar.gz", subdir="cifar")
    else:
        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"cifar: {file} does not exist")
    if checksum is not None:
        check_md5(file, {file.name: checksum})
    try:
        with tarfile.open(file, mode="r:*") as archive:
            train = _cifar_batches(archive, CIFAR_TRAIN, file)
            test = _cifar_batches(archive, (CIFAR_TEST,), file)
    except (tarfile.TarError, EOFError, zlib.error) as e:
        raise ValueError(f"{file}: not a readable tarball: {e}") from None
    for records in (train, test):
        if records[:, 0].max(initial=0) > 9:
            raise ValueError(f"{file}: a label above 9 (not CIFAR-10 binary?)")
    out = []
    for records in (train, test):
        images = np.ascontiguousarray(records[:, 1:].reshape(-1, 3, 32, 32))
        out += [Tensor(images, device=device), Tensor(records[:, 0].copy(), device=device)]
    return out[0], out[1], out[2], out[3]


def digits_file() -> Path:
    """scikit-learn's ``digits.csv.gz`` (FileNotFoundError when scikit-learn is missing)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "digits: the data ships with scikit-learn: pip install scikit-learn"
        )
    return Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"


def digits(
    device: str | None = None, test_fraction: float = 0.2, seed: int = 0
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(X_train, Y_train, X_test, Y_test) of the 8x8 digits: float32 images (N, 1, 8, 8) with
    values 0..16, int32 labels; ``test_fraction`` of a seeded permutation is the test set."""
    if not 0 <= test_fraction < 1:
        raise ValueError(f"digits: test_fraction must be in [0, 1), got {test_fraction}")
    table = np.loadtxt(digits_file(), delimiter=",", dtype=np.float32)
    if table.ndim != 2 or table.shape[1] != 65:
        raise ValueError(f"digits: expected rows of 64 pixels and a label, got {table.shape}")
    x = np.ascontiguousarray(table[:, :64].reshape(-1, 1, 8, 8))
    y = table[:, 64].astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (Tensor(x[train], device=device), Tensor(y[train], device=device),
            Tensor(x[test], device=device), Tensor(y[test], device=device))  # fmt: skip


__all__ = ["check_md5", "cifar", "digits", "mnist", "read_idx"]
