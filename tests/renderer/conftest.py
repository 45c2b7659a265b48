"""Renderer tests: a private compile cache for tests about caching."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fusegrad.codegen import DiskCache

# the sibling helper module lowering_corpus imports by name
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def private_cache(tmp_path: Path) -> Callable[[], DiskCache]:
    """Makes DiskCaches in this test's own folder (same path each call: a 'second process')."""
    return lambda: DiskCache("compile", tmp_path / "cache.db")
