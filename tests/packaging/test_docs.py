"""The documentation site builds strict (``tools/dev docs``), and its code runs."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def docs_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "fusegrad_docs_hooks", ROOT / "tools" / "docs_hooks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "names"),
    [
        (
            "api/uop",
            ["UOp", "UPat", "PatternMatcher", "graph_rewrite", "sym_infer", "check_requirements"],
        ),
        ("api/codegen", ["Renderer", "to_program", "beam_search", "get_kernel_graph"]),
        ("api/renderer", ["CRenderer", "LLVMRenderer", "PTXRenderer"]),
        ("api/runtime", ["Compiled", "Allocator", "HWQueue", "Signal", "Buffer"]),
        ("api/fusegrad", ["Tensor", "TinyJit"]),
    ],
)
def test_api_pages_document_the_stable_names(docs_site: Path, page: str, names: list[str]) -> None:
    html = (docs_site / page / "index.html").read_text(encoding="utf-8")
    for name in names:
        assert re.search(rf'id="[\w.]*\b{name}"', html), f"{page} has no entry for {name}"


@pytest.mark.slow
def test_guides_and_reference_pages_are_built(docs_site: Path) -> None:
    for page in ("quickstart", "architecture", "env_vars", "backends", "compat", "stability"):
        assert (docs_site / page / "index.html").is_file(), page


def test_quickstart_and_architecture_code_runs() -> None:
    for page in ("index.md", "quickstart.md", "architecture.md"):
        blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)
        assert blocks, page
        for block in blocks:
            done = subprocess.run(
                [sys.executable, "-c", block],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, (
                f"a code block of docs/{page} fails:\n{block}\n{done.stderr}"
            )


def test_doctests_are_fenced_for_markdown() -> None:
    fence = docs_hooks().fence_doctests
    source = '    """Doc.\n    >>> [1] + [2]\n    [1, 2]\n    """\n'
    assert fence(source).splitlines() == [
        '    """Doc.',
        "",
        "    ```pycon",
        "    >>> [1] + [2]",
        "    [1, 2]",
        "    ```",
        '    """',
    ]
    closing = '    """Doc.\n\n    >>> 1\n    1"""\n'
    assert fence(closing).splitlines()[-3:] == ["    1", "    ```", '    """']
    assert fence("x = 1\n") == "x = 1\n"
