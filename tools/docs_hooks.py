"""mkdocs hook (mkdocs.yml ``hooks:``): one ``fusegrad`` source tree for the API pages.

The five packages install into one ``fusegrad`` namespace, but only at import time (the
frontend's ``__init__`` extends ``__path__``); griffe, which mkdocstrings uses to read the
sources without importing them, finds the frontend's regular package and stops there. This
hook lays the namespace out once as one folder, ``build/docs-src/fusegrad``: the frontend's
modules plus the four layer packages, which mkdocs.yml gives griffe as its only search path.

The docstrings are Markdown to mkdocstrings, but ours hold doctests: in the copies, each run
of ``>>>`` lines and their output is fenced as a ``pycon`` code block, so a doctest renders
as code (and ``[1, 2]`` in its output is not read as a Markdown link).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def merged_root() -> Path:
    """Where the tree goes: ``$FUSEGRAD_DOCS_SRC`` (mkdocs.yml reads the same variable), by
    default ``build/docs-src`` (the tests build into a folder of their own)."""
    return Path(os.environ.get("FUSEGRAD_DOCS_SRC") or ROOT / "build" / "docs-src").resolve()


def fence_doctests(source: str) -> str:
    """``source`` with every doctest block (``>>>`` lines up to a blank line) in a fence.

    A block also ends at a line that closes the docstring: the fence closes before the quotes.
    """
    out: list[str] = []
    indent: str | None = None  # the open block's indentation
    for line in source.splitlines():
        stripped = line.strip()
        if indent is None and (stripped.startswith(">>> ") or stripped == ">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            if out and out[-1].strip():
                out.append("")  # a fence starts a new block, not inside a paragraph
            out.append(f"{indent}```pycon")
        elif indent is not None and (not stripped or stripped in ('"""', "'''")):
            out.append(f"{indent}```")
            indent = None
        elif indent is not None and stripped.endswith(('"""', "'''")):
            out += [line[:-3], f"{indent}```", f"{indent}{line[-3:]}"]
            indent = None
            continue
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out) + "\n"


def merge_sources() -> Path:
    """(Re)make ``merged_root()/fusegrad`` from the checkout; returns it."""
    merged = merged_root() / "fusegrad"
    shutil.rmtree(merged, ignore_errors=True)
    merged.mkdir(parents=True)
    for src in sorted((ROOT / "packages").glob("*/src/fusegrad")):
        for entry in src.iterdir():
            target = merged / entry.name
            if entry.name == "__pycache__":
                continue
            if target.exists():
                raise RuntimeError(f"docs: {entry} and another package both claim {target}")
            if entry.is_dir():
                shutil.copytree(entry, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(entry, target)
    for module in merged.rglob("*.py"):
        module.write_text(fence_doctests(module.read_text(encoding="utf-8")), encoding="utf-8")
    return merged


def on_startup(**kwargs: Any) -> None:
    merge_sources()
