"""Optimizer tests: IR specs checked at every stage; BEAM builds candidates in this process
(``PARALLEL=0``) unless a test asks for worker processes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():
    # TODO(#9): fusegrad.uop's Ops enum warns on Python 3.11 (enum.auto after an alias)
    warnings.simplefilter("ignore", DeprecationWarning)
    import fusegrad.uop

from fusegrad.codegen.opt import PARALLEL

fusegrad.uop.SPEC.value = 1

# the sibling helper module opt_testing imports by name
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _build_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PARALLEL, "value", 0)
