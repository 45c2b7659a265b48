"""Renderer tests: a private compile cache for tests about caching."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fusegrad.codegen import DiskCache


@pytest.fixture
def private_cache(tmp_path: Path) -> Callable[[], DiskCache]:
    """Makes DiskCaches in this test's own folder (same path each call: a 'second process')."""
    return lambda: DiskCache("compile", tmp_path / "cache.db")
