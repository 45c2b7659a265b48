"""Renderer tests: a private compile cache for tests about caching."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

with warnings.catch_warnings():
    # TODO(#9): fusegrad.uop's Ops enum warns on Python 3.11 (enum.auto after an alias)
    warnings.simplefilter("ignore", DeprecationWarning)
    import fusegrad.uop  # noqa: F401

from fusegrad.codegen import DiskCache


@pytest.fixture
def private_cache(tmp_path: Path) -> Callable[[], DiskCache]:
    """Makes DiskCaches in this test's own folder (same path each call: a 'second process')."""
    return lambda: DiskCache("compile", tmp_path / "cache.db")
