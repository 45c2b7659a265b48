"""fusegrad.fetch downloads once into the cache and never leaves partial files."""

from __future__ import annotations

from pathlib import Path

import fusegrad
import pytest
from fusegrad import Context, fetch


def test_fetch_copies_a_file_url_into_the_cache_once(tmp_path: Path) -> None:
    src = tmp_path / "weights.bin"
    src.write_bytes(b"\x01\x02\x03")
    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path / "cache")):
        got = fetch(src.as_uri(), name="w.bin", subdir="models")
        assert got == tmp_path / "cache" / "downloads" / "models" / "w.bin"
        assert got.read_bytes() == b"\x01\x02\x03"
        src.write_bytes(b"changed")
        assert fetch(src.as_uri(), name="w.bin", subdir="models").read_bytes() == b"\x01\x02\x03"
        assert (
            fetch(src.as_uri(), name="w.bin", subdir="models", allow_caching=False).read_bytes()
            == b"changed"
        )


def test_a_failed_fetch_leaves_no_file(tmp_path: Path) -> None:
    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path)), pytest.raises(OSError):
        fetch((tmp_path / "missing.bin").as_uri(), name="x")
    assert [p.name for p in (tmp_path / "downloads").iterdir()] == []


def test_device_is_exported_at_the_top_level() -> None:
    assert fusegrad.Device["CPU"] is fusegrad.Device["CPU"]
    assert "fetch" in fusegrad.__all__ and "Device" in fusegrad.__all__
