"""Every package declares what it imports, each within a range (a static scan of the sources).

The scan reads every module under ``packages/*/src`` with ``ast``: the top-level name of each
absolute import is either the standard library, a fusegrad package (which must be one of the
importer's ``dependencies``) or a third-party module, whose distribution (looked up in the dev
venv, where everything is installed) must be among the importer's ``dependencies`` or one of
its extras. Every declared requirement carries an upper bound, and every fusegrad requirement
is imported (no stale ones).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYER_DIRS = {
    "uop": "uop-core",
    "codegen": "codegen",
    "renderer": "renderers",
    "runtime": "runtime-hcq",
}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert found is not None, f"unparsable requirement {requirement!r}"
    return normalize(found[1])


@cache
def project(directory: str) -> dict[str, object]:
    with (ROOT / "packages" / directory / "pyproject.toml").open("rb") as handle:
        data: dict[str, object] = tomllib.load(handle)["project"]
    return data


def requirements(directory: str) -> tuple[list[str], list[str]]:
    """The package's ``dependencies`` and the requirements of all its extras."""
    data = project(directory)
    required = list(data.get("dependencies", []))  # type: ignore[call-overload]
    extras = data.get("optional-dependencies", {})
    assert isinstance(extras, dict)
    return required, [r for group in extras.values() for r in group]


@cache
def imported_modules(directory: str) -> dict[str, str]:
    """Absolute imports of the package's modules outside the standard library -> one file."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "packages" / directory / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module == "fusegrad" and not node.level:
                names = [f"fusegrad.{alias.name}" for alias in node.names]  # layer modules
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.split(".")[0] not in sys.stdlib_module_names:
                    found.setdefault(name, str(path.relative_to(ROOT)))
    return found


@cache
def top_level_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def owner(module: str) -> str | None:
    """The distribution providing ``module``: a fusegrad package, a third-party one, or None."""
    parts = module.split(".")
    if parts[0] == "fusegrad":
        directory = LAYER_DIRS.get(parts[1], "frontend") if len(parts) > 1 else "frontend"
        return normalize(str(project(directory)["name"]))
    candidates = top_level_distributions().get(parts[0], [])
    return normalize(candidates[0]) if candidates else None


@pytest.mark.parametrize("directory", [*LAYER_DIRS.values(), "frontend"])
def test_every_import_is_declared(directory: str) -> None:
    own = normalize(str(project(directory)["name"]))
    required, extras = requirements(directory)
    declared = {requirement_name(r) for r in required}
    optional = {requirement_name(r) for r in extras}
    undeclared = []
    for module, where in imported_modules(directory).items():
        dist = owner(module)
        assert dist is not None, (
            f"{where} imports {module}, which no installed distribution provides"
        )
        if dist == own:
            continue
        if dist.startswith("fusegrad") and dist not in declared:
            undeclared.append(f"{where}: {module} ({dist} is not in dependencies)")
        elif not dist.startswith("fusegrad") and dist not in declared | optional:
            undeclared.append(f"{where}: {module} ({dist} is neither a dependency nor an extra)")
    assert not undeclared, f"{directory} imports undeclared distributions:\n" + "\n".join(
        undeclared
    )


@pytest.mark.parametrize("directory", [*LAYER_DIRS.values(), "frontend"])
def test_every_fusegrad_requirement_is_imported(directory: str) -> None:
    required, _ = requirements(directory)
    imported = {owner(m) for m in imported_modules(directory)}
    stale = [r for r in required if requirement_name(r).startswith("fusegrad")]
    stale = [r for r in stale if requirement_name(r) not in imported]
    assert not stale, f"{directory} declares fusegrad packages it never imports: {stale}"


@pytest.mark.parametrize("directory", [*LAYER_DIRS.values(), "frontend"])
def test_every_requirement_has_an_upper_bound(directory: str) -> None:
    required, extras = requirements(directory)
    open_ended = [r for r in required + extras if not re.search(r"<|~=|==", r.split(";")[0])]
    assert not open_ended, f"{directory}: requirements without an upper bound: {open_ended}"


def test_fusegrad_packages_share_one_release_line() -> None:
    """The five packages move together: each pins the others to its own minor series."""
    versions = {d: str(project(d)["version"]) for d in [*LAYER_DIRS.values(), "frontend"]}
    assert len(set(versions.values())) == 1, versions
    minor = ".".join(next(iter(versions.values())).split(".")[:2])
    for directory in versions:
        for requirement in requirements(directory)[0]:
            if requirement_name(requirement).startswith("fusegrad"):
                assert requirement.endswith(f"~={minor}.0"), (directory, requirement)
