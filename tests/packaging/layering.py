"""The import-layering rule, checked statically over ``packages/*/src``.

Layers, bottom to top: ``fusegrad.uop`` < ``fusegrad.codegen`` < ``fusegrad.renderer`` <
``fusegrad.runtime`` < the frontend (top-level ``fusegrad`` and every ``fusegrad.<x>`` that
is not one of the four layer names). A module may import

- anything of its own layer (relative imports included),
- the root of a lower layer (``from fusegrad.uop import UOp``),
- a module a lower layer declares public in its ``pyproject.toml``::

      [tool.fusegrad]
      public-modules = ["fusegrad.codegen.schedule"]

Everything else is a violation: an import of a higher layer ("upward") or of a lower layer's
non-public module ("private"); imports under ``if TYPE_CHECKING:`` count too (a contract
between layers is a Protocol in the lower one). ``from X import name`` imports the module ``X.name`` when
that module exists in the tree, else the attribute ``name`` of ``X``.

Run as a script to check the checkout: ``python tests/packaging/layering.py``.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LAYERS = ("uop", "codegen", "renderer", "runtime", "frontend")


def layer_of(module: str) -> str | None:
    """The layer owning ``module``, or None for a module outside fusegrad."""
    parts = module.split(".")
    if parts[0] != "fusegrad":
        return None
    if len(parts) > 1 and parts[1] in LAYERS[:-1]:
        return parts[1]
    return "frontend"


def layer_root(layer: str) -> str:
    """The module whose public names are the layer's public surface."""
    return "fusegrad" if layer == "frontend" else f"fusegrad.{layer}"


@dataclass(frozen=True, slots=True)
class Violation:
    """One import that breaks the layering rule."""

    path: Path
    line: int
    importer: str
    imported: str
    kind: str  # "upward", "private" or "config"

    def __str__(self) -> str:
        what = {
            "upward": "imports a higher layer",
            "private": "imports a non-public module of a lower layer",
            "config": "declares as public a module the package does not contain",
        }[self.kind]
        return f"{self.path}:{self.line}: {self.importer} {what}: {self.imported}"


@dataclass(frozen=True, slots=True)
class Package:
    """One distribution of the tree: its source files and declared public modules."""

    pyproject: Path
    modules: dict[str, Path]  # module name -> file
    public: frozenset[str]


def module_name(src: Path, path: Path) -> str:
    """``src/fusegrad/uop/ops.py`` -> ``fusegrad.uop.ops``; ``__init__.py`` names its package."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def load_package(directory: Path) -> Package:
    """Read one ``packages/<dir>``: its modules and its ``[tool.fusegrad]`` table."""
    src = directory / "src"
    modules = {module_name(src, path): path for path in sorted(src.rglob("*.py"))}
    config = tomllib.loads((directory / "pyproject.toml").read_text(encoding="utf-8"))
    table = config.get("tool", {}).get("fusegrad", {})
    public = frozenset(table.get("public-modules", []))
    return Package(directory / "pyproject.toml", modules, public)


def resolve_relative(importer: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module a relative import in ``importer`` names."""
    base = importer.split(".")
    if not is_package:
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def imported_modules(
    tree: ast.Module, importer: str, is_package: bool
) -> Iterator[tuple[int, str, list[str]]]:
    """(line, module, names) for every import statement; ``names`` are from-import names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = resolve_relative(importer, is_package, node.level, node.module)
            yield node.lineno, module, [alias.name for alias in node.names]


def targets(module: str, names: list[str], known: set[str]) -> list[str]:
    """The modules one import statement loads, by the ``from X import name`` rule above."""
    if not names:
        return [module]
    found = [f"{module}.{name}" for name in names if f"{module}.{name}" in known]
    if len(found) < len(names):
        found.append(module)
    return found


def judge(importer: str, imported: str, public: set[str]) -> str | None:
    """The violation kind of ``importer`` importing ``imported``, or None if allowed."""
    own, other = layer_of(importer), layer_of(imported)
    if other is None or own is None or own == other:
        return None
    if LAYERS.index(other) > LAYERS.index(own):
        return "upward"
    if imported == layer_root(other) or imported in public:
        return None
    return "private"


def check_file(path: Path, importer: str, known: set[str], public: set[str]) -> list[Violation]:
    """The violations in one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found = []
    for line, module, names in imported_modules(tree, importer, is_package):
        for imported in targets(module, names, known):
            kind = judge(importer, imported, public)
            if kind is not None:
                found.append(Violation(path, line, importer, imported, kind))
    return found


def check_public_modules(package: Package) -> list[Violation]:
    """A declared public module must be one of the package's own modules."""
    lines = package.pyproject.read_text(encoding="utf-8").splitlines()
    found = []
    for name in sorted(package.public - package.modules.keys()):
        line = next((n for n, text in enumerate(lines, 1) if f'"{name}"' in text), 1)
        found.append(Violation(package.pyproject, line, "[tool.fusegrad]", name, "config"))
    return found


def check_layering(root: Path) -> list[Violation]:
    """Every layering violation in ``root/packages/*/src``, sorted by file and line."""
    packages = [load_package(d) for d in sorted(root.glob("packages/*")) if (d / "src").is_dir()]
    known = {name for package in packages for name in package.modules}
    public = {name for package in packages for name in package.public}
    violations = [v for package in packages for v in check_public_modules(package)]
    for package in packages:
        for importer, path in package.modules.items():
            violations += check_file(path, importer, known, public)
    return sorted(violations, key=lambda v: (str(v.path), v.line, v.imported))


def main() -> int:
    root = Path(__file__).resolve().parents[2]
    violations = check_layering(root)
    for violation in violations:
        print(violation)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
