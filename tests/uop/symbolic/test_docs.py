"""The z3 examples in docs/symbolic.md run as doctests (the README's run without z3 in
tests/packaging)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", ["docs/symbolic.md", "packages/uop-core/README.md"])
def test_doc_examples_pass(path: str) -> None:
    pytest.importorskip("z3")
    result = doctest.testfile(str(ROOT / path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_module_doctests_pass() -> None:
    for name in ("fusegrad.uop.symbolic", "fusegrad.uop.uop"):
        # import_module: the package attribute ``symbolic`` is the rule set, not the module
        result = doctest.testmod(importlib.import_module(name))
        assert result.failed == 0
