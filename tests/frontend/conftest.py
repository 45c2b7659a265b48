"""Frontend test setup: every test runs on the reference interpreter (tests/frontend/reference.py)
unless marked ``kernels``; test modules import helpers with ``from reference import ...``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fusegrad.engine import set_executor

sys.path.insert(0, str(Path(__file__).parent))

from reference import RefExecutor

REFERENCE = RefExecutor()


@pytest.fixture(autouse=True)
def reference_executor(request: pytest.FixtureRequest) -> Iterator[RefExecutor]:
    """Run the test on the reference interpreter (unless marked ``kernels``)."""
    if request.node.get_closest_marker("kernels") is not None:
        yield REFERENCE
        return
    previous = set_executor(REFERENCE)
    try:
        yield REFERENCE
    finally:
        set_executor(previous)
