"""The codegen lowering tests' corpus and targets (``tests/codegen/lower/{corpus,targets}.py``),
loaded once by path for the renderer tests that run those kernels on their own targets.

Imported by name: ``tests/renderer/conftest.py`` puts this folder on ``sys.path``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

LOWER_TESTS = Path(__file__).parents[1] / "codegen" / "lower"


def load(name: str) -> Any:
    """``tests/codegen/lower/<name>.py`` as a module (skips the calling test module when the
    codegen tests are not there, e.g. in an installed-package run)."""
    mod_name = f"_fusegrad_tests_renderer_lower_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    path = LOWER_TESTS / f"{name}.py"
    if not path.exists():
        pytest.skip(f"codegen's lowering corpus {path} is not there", allow_module_level=True)
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return mod
