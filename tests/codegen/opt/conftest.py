"""Optimizer tests: IR specs checked at every stage, and the optimizer installed as the
pipeline's opts hook before each test (another test may have swapped the hook)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():
    # TODO(#9): fusegrad.uop's Ops enum warns on Python 3.11 (enum.auto after an alias)
    warnings.simplefilter("ignore", DeprecationWarning)
    import fusegrad.uop

from fusegrad.codegen.opt import install

fusegrad.uop.SPEC.value = 1

# the sibling helper module opt_testing imports by name
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _optimizer_installed() -> None:
    install()
