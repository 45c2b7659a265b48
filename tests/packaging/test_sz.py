"""tools/sz counts code lines: no blank lines, comments or docstrings."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sz() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("fusegrad_tools_sz", str(ROOT / "tools" / "sz"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_docstrings_comments_and_blank_lines_are_not_code(sz) -> None:
    source = dedent(
        '''
        """Module docstring,
        two lines."""
        # a comment
        import os


        def f() -> str:
            """Function docstring."""
            text = """a multi-line string
        is code"""  # trailing comment
            return text


        class C:
            "class docstring"

            x = 1  # 1 line
        '''
    )
    assert sz.code_lines(source) == 7  # import, def, text (2 lines), return, class, x


def test_implicitly_concatenated_docstring_is_not_code(sz) -> None:
    assert sz.code_lines('def f():\n    "a" "b"\n    return 1\n') == 2


def test_script_prints_every_package_and_a_total() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "sz")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == ["uop-core", "codegen", "renderers", "runtime-hcq", "frontend", "total"]
