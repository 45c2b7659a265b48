"""A pytest plugin that runs tests/frontend on the real kernel pipeline instead of the reference
interpreter: it marks every collected test ``kernels``, which tests/frontend/conftest.py
honours by leaving the engine's default executor (the kernel pipeline) in place.

    PYTHONPATH=tests/e2e .venv/bin/python -m pytest -p frontend_on_kernels tests/frontend

The default test run covers a curated subset the same way (``test_frontend_subset.py``); the
whole suite is slow on 2 cores (every distinct kernel is lowered and compiled once).
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test ``kernels``."""
    for item in items:
        item.add_marker(pytest.mark.kernels)
