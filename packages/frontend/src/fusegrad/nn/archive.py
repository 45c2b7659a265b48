"""zip_extract / tar_extract: the files of an archive as uint8 tensors.

Stored (uncompressed) members are lazy views of the archive's bytes; deflated zip members are
inflated when extracted, bounded by their declared sizes. Malformed archives raise ValueError.
"""

from __future__ import annotations

import struct
import tarfile
import zipfile
from typing import Any

from fusegrad.nn.disk import ByteSource, SourceReader, open_source
from fusegrad.tensor import Tensor
from fusegrad.uop import dtypes

MAX_RATIO = 1100  # deflate expands at most ~1032x: more than that is a lie (a zip bomb)


_ARCHIVE_ERRORS = (
    zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, struct.error, OverflowError,
    NotImplementedError, RuntimeError, KeyError, IndexError, UnicodeDecodeError, ValueError,
)  # fmt: skip


def zip_extract(src: Any) -> dict[str, Tensor]:
    """Every file of a zip archive (path, uint8 tensor or bytes) as a uint8 tensor."""
    source = open_source(src)
    try:
        with zipfile.ZipFile(SourceReader(source)) as archive:
            return {
                info.filename: _zip_member(source, archive, info)
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


def tar_extract(src: Any) -> dict[str, Tensor]:
    """Every regular file of an uncompressed tar archive as a lazy uint8 tensor."""
    source = open_source(src)
    out: dict[str, Tensor] = {}
    try:
        with tarfile.open(fileobj=SourceReader(source), mode="r:") as archive:
            for member in archive:
                if member.isreg():
                    out[member.name] = source.tensor(
                        member.offset_data, dtypes.uint8, (member.size,)
                    )
    except _ARCHIVE_ERRORS as e:
        raise ValueError(f"tar_extract: malformed tar archive {source.path}: {e}") from None
    return out
