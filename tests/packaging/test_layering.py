"""Packages import downward only, and from another package only its public surface."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

ROOT = Path(__file__).resolve().parents[2]
LAYER_ORDER = ("fusegrad.uop", "fusegrad.codegen", "fusegrad.renderer", "fusegrad.runtime")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def synthetic_tree(root: Path) -> dict[str, Path]:
    """Two layers with one upward and one private import, among imports that are allowed."""
    write(root / "packages/uop-core/pyproject.toml", '[project]\nname = "fusegrad-uop"\n')
    write(
        root / "packages/codegen/pyproject.toml",
        """
        [project]
        name = "fusegrad-codegen"

        [tool.fusegrad]
        public-modules = ["fusegrad.codegen.schedule"]
        """,
    )
    uop = root / "packages/uop-core/src/fusegrad/uop"
    codegen = root / "packages/codegen/src/fusegrad/codegen"
    return {
        "uop_init": write(uop / "__init__.py", "from .ops import UOp\n"),
        "uop_ops": write(uop / "ops.py", "class UOp: ...\n"),
        "uop_upward": write(
            uop / "rewrite.py",
            """
            from __future__ import annotations

            import os

            from fusegrad.codegen.schedule import schedule
            """,
        ),
        "codegen_init": write(codegen / "__init__.py", "from . import schedule\n"),
        "codegen_schedule": write(
            codegen / "schedule.py",
            """
            from fusegrad.uop import UOp
            from fusegrad.uop.ops import UOp as PrivateUOp
            from .lower import lower

            def schedule() -> None: ...
            """,
        ),
        "codegen_lower": write(
            codegen / "lower.py",
            """
            import fusegrad.uop
            from fusegrad import uop
            from . import schedule
            from .. import codegen

            def lower() -> None: ...
            """,
        ),
    }


def test_checkout_has_no_layering_violations(layering) -> None:
    violations = layering.check_layering(ROOT)
    assert not violations, "\n".join(str(v) for v in violations)


def test_synthetic_upward_and_private_imports_are_reported(layering, tmp_path: Path) -> None:
    files = synthetic_tree(tmp_path)
    found = {(v.path, v.line, v.imported, v.kind) for v in layering.check_layering(tmp_path)}
    assert found == {
        (files["uop_upward"], 5, "fusegrad.codegen.schedule", "upward"),
        (files["codegen_schedule"], 2, "fusegrad.uop.ops", "private"),
    }


def test_violation_message_names_file_line_and_module(layering, tmp_path: Path) -> None:
    files = synthetic_tree(tmp_path)
    messages = {v.kind: str(v) for v in layering.check_layering(tmp_path)}
    assert messages["upward"] == (
        f"{files['uop_upward']}:5: fusegrad.uop.rewrite imports a higher layer: "
        "fusegrad.codegen.schedule"
    )
    assert messages["private"] == (
        f"{files['codegen_schedule']}:2: fusegrad.codegen.schedule imports a non-public "
        "module of a lower layer: fusegrad.uop.ops"
    )


def test_public_module_from_another_package_is_reported(layering, tmp_path: Path) -> None:
    synthetic_tree(tmp_path)
    pyproject = tmp_path / "packages/uop-core/pyproject.toml"
    pyproject.write_text('[tool.fusegrad]\npublic-modules = ["fusegrad.codegen.lower"]\n')
    config = [v for v in layering.check_layering(tmp_path) if v.kind == "config"]
    assert [(v.path, v.line, v.imported) for v in config] == [
        (pyproject, 2, "fusegrad.codegen.lower")
    ]


# Imports one layer with the frontend's folder off sys.path, as in an install without the
# frontend: the frontend's fusegrad/__init__.py would otherwise run first and may import
# anything. Prints the fusegrad modules loaded afterwards.
IMPORT_ALONE = """
import importlib, json, os, sys
frontend = os.path.realpath({frontend!r})
sys.path[:] = [p for p in sys.path if os.path.realpath(p) != frontend]
importlib.import_module({module!r})
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "fusegrad")))
"""


def in_any(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in packages)


def test_layer_imports_alone_without_higher_layers(layer_package, dev_venv) -> None:
    frontend = str(ROOT / "packages" / "frontend" / "src")
    code = IMPORT_ALONE.format(frontend=frontend, module=layer_package.module)
    loaded = json.loads(dev_venv.run_ok(code))
    allowed = LAYER_ORDER[: LAYER_ORDER.index(layer_package.module) + 1]
    above = [m for m in loaded if m != "fusegrad" and not in_any(m, allowed)]
    assert layer_package.module in loaded
    assert not above, f"import {layer_package.module} also imported {above}"
