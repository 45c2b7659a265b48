"""zip_extract / tar_extract: the files of an archive as uint8 tensors.

Stored (uncompressed) members are lazy views of the archive's bytes; deflated zip members are
inflated when extracted, bounded by their declared sizes; a gzip-compressed tar (.tar.gz,
.tgz) is inflated first, bounded by deflate's largest ratio. Malformed archives raise
ValueError, and so do member names that would leave an extraction folder (absolute paths,
``..`` components, drive letters): nothing an archive names can point outside it.
"""

from __future__ import annotations

import gzip
import struct
import tarfile
import zipfile
import zlib
from pathlib import PurePosixPath
from typing import Any

from fusegrad.nn.disk import ByteSource, MemoryBytes, SourceReader, open_source
from fusegrad.tensor import Tensor
from fusegrad.uop import dtypes

MAX_RATIO = 1100  # deflate expands at most ~1032x: more than that is a lie (a zip bomb)
GZIP_MAGIC = b"\x1f\x8b"


_ARCHIVE_ERRORS = (
    zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, struct.error, OverflowError,
    NotImplementedError, RuntimeError, KeyError, IndexError, UnicodeDecodeError, ValueError,
    zlib.error,
)  # fmt: skip


def safe_member_name(name: str, archive: str) -> str:
    """``name`` if it stays inside an extraction folder; ValueError otherwise."""
    posix = name.replace("\\", "/")
    if not posix or posix.startswith("/") or ".." in PurePosixPath(posix).parts:
        raise ValueError(f"{archive}: member name {name!r} points outside the archive")
    if len(posix) > 1 and posix[1] == ":":
        raise ValueError(f"{archive}: member name {name!r} has a drive letter")
    return name


def zip_extract(t: Any) -> dict[str, Tensor]:
    """Every file of a zip archive (path, uint8 tensor or bytes) as a uint8 tensor."""
    source = open_source(t)
    try:
        with zipfile.ZipFile(SourceReader(source)) as archive:
            return {
                safe_member_name(info.filename, "zip"): _zip_member(source, archive, info)
                for info in archive.infolist()
                if not info.is_dir()
            }
    except _ARCHIVE_ERRORS as e:
        raise ValueError(f"zip_extract: malformed zip archive {source.path}: {e}") from None


def zip_data_offset(source: ByteSource, info: zipfile.ZipInfo) -> int:
    """Where a member's data starts: after its local header (checked against the file)."""
    header = bytes(source.bytes_at(info.header_offset, 30))
    if header[:4] != b"PK\x03\x04":
        raise ValueError(f"zip: bad local header for {info.filename!r}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    start: int = info.header_offset + 30 + name_len + extra_len
    source.bytes_at(start, info.compress_size)  # bounds check
    return start


def _zip_member(source: ByteSource, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Tensor:
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise ValueError(f"zip: stored member {info.filename!r} has two sizes")
        return source.tensor(zip_data_offset(source, info), dtypes.uint8, (info.file_size,))
    if info.file_size > info.compress_size * MAX_RATIO + 1024:
        raise ValueError(
            f"zip: {info.filename!r} claims {info.file_size} bytes from {info.compress_size}"
        )
    zip_data_offset(source, info)
    with archive.open(info) as f:
        data = f.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise ValueError(f"zip: {info.filename!r} inflates to a size other than declared")
    return Tensor(data, device=source.device if not source.device.startswith("DISK") else None)


def gunzip(source: ByteSource) -> MemoryBytes:
    """The inflated bytes of a gzip ``source`` (every member, CRCs checked), refusing more
    than deflate can honestly produce from its size (a gzip bomb)."""
    limit = source.size * MAX_RATIO + 1024
    out = bytearray()
    with gzip.GzipFile(fileobj=SourceReader(source), mode="rb") as f:
        while chunk := f.read(1 << 20):
            out += chunk
            if len(out) > limit:
                raise ValueError(f"gzip: {source.path} inflates past {limit} bytes")
    device = None if source.device.startswith("DISK") else source.device
    return MemoryBytes(bytes(out), device)


def _tar_member(source: ByteSource, member: tarfile.TarInfo) -> Tensor:
    if member.sparse is not None:
        raise ValueError(f"tar: sparse member {member.name!r} is not supported")
    return source.tensor(member.offset_data, dtypes.uint8, (member.size,))


def tar_extract(t: Any) -> dict[str, Tensor]:
    """Every regular file of a tar archive as a uint8 tensor: lazy views of an uncompressed
    archive's bytes; a gzip-compressed one (.tar.gz) is inflated into memory first."""
    source = open_source(t)
    name = source.path
    out: dict[str, Tensor] = {}
    try:
        if bytes(source.bytes_at(0, min(2, source.size))) == GZIP_MAGIC:
            source = gunzip(source)
        with tarfile.open(fileobj=SourceReader(source), mode="r:") as archive:
            for member in archive:
                if member.isreg():
                    out[safe_member_name(member.name, "tar")] = _tar_member(source, member)
    except _ARCHIVE_ERRORS as e:
        raise ValueError(f"tar_extract: malformed tar archive {name}: {e}") from None
    return out
