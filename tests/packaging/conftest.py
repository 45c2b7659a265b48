"""Fixtures for the packaging tests: wheels of the five distributions and fresh venvs.

Building wheels and venvs takes seconds, so each is made once per test run and shared by
the pytest-xdist workers: the first worker to need one builds it under a file lock in the
run's shared temporary folder, the others wait for it and reuse it.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """One distribution of the monorepo."""

    directory: str  # under packages/
    distribution: str
    module: str  # its import name

    @property
    def src(self) -> Path:
        return ROOT / "packages" / self.directory / "src"


# Bottom layer first. Tests taking a ``package`` argument run once per entry, tests taking
# ``layer_package`` once per layer below the frontend (see pytest_generate_tests).
PACKAGES = (
    PackageInfo("uop-core", "fusegrad-uop", "fusegrad.uop"),
    PackageInfo("codegen", "fusegrad-codegen", "fusegrad.codegen"),
    PackageInfo("renderers", "fusegrad-renderers", "fusegrad.renderer"),
    PackageInfo("runtime-hcq", "fusegrad-runtime", "fusegrad.runtime"),
    PackageInfo("frontend", "fusegrad", "fusegrad"),
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for argument, packages in (("package", PACKAGES), ("layer_package", PACKAGES[:-1])):
        if argument in metafunc.fixturenames:
            metafunc.parametrize(argument, packages, ids=[p.directory for p in packages])


@pytest.fixture(scope="session")
def packages() -> tuple[PackageInfo, ...]:
    """Every distribution of the monorepo, bottom layer first."""
    return PACKAGES


def clean_env() -> dict[str, str]:
    """The environment for child interpreters: nothing that adds to their sys.path."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(
    args: list[str | Path], cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run a command and return it; its output is kept for the assertion messages."""
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_ok(args: list[str | Path], cwd: Path, timeout: float = 600) -> str:
    """Run a command that must succeed; return its stdout."""
    done = run(args, cwd, timeout)
    if done.returncode != 0:
        command = " ".join(str(a) for a in args)
        raise AssertionError(
            f"`{command}` exited {done.returncode}\n"
            f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
    return done.stdout


@dataclass(frozen=True, slots=True)
class Venv:
    """A Python environment the tests run code in."""

    root: Path
    python: Path

    def run(self, code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run ``python -c code`` in this environment, from a folder outside the checkout."""
        return run([self.python, "-c", code], cwd=self.root, timeout=timeout)

    def run_ok(self, code: str, timeout: float = 120) -> str:
        """Like ``run`` but the code must succeed; its stdout."""
        return run_ok([self.python, "-c", code], cwd=self.root, timeout=timeout)

    def run_module(
        self, module: str, *args: str | Path, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run ``python -m module args...`` in this environment."""
        return run([self.python, "-m", module, *args], cwd=self.root, timeout=timeout)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every xdist worker of this run sees (the base one without xdist)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``shared_root/name``, made by ``build(folder)`` by the first worker that asks.

    A marker file written after ``build`` returns tells a finished folder from one a failed
    build left behind; such a folder is removed and built again. (Building in place rather
    than renaming a scratch folder matters: a venv records its own path.)
    """
    root = shared_root(factory)
    target = root / name
    done = root / f"{name}.done"
    with locked(root / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            build(target)
            done.touch()
    return target


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder ``tools/dev release --out`` filled, once per test run.

    tools/release.py (what ``tools/dev release`` runs) builds the wheels and sdists of the
    checkout, checks them with twine and installs the three sets into fresh venvs with a smoke
    test each; ``log.txt`` holds its output. The other fixtures reuse its artifacts and venvs.
    """

    def build(folder: Path) -> None:
        output = run_ok(
            [sys.executable, ROOT / "tools" / "release.py", "--out", folder / "out"],
            cwd=folder,
            timeout=1200,
        )
        (folder / "log.txt").write_text(output)

    return build_once(tmp_path_factory, "release", build)


@pytest.fixture(scope="session")
def wheels(release: Path) -> dict[str, Path]:
    """Distribution name -> wheel file, built from the checkout once per test run."""
    found = {}
    for package in PACKAGES:
        name = package.distribution
        matches = sorted((release / "out" / "dist").glob(f"{name.replace('-', '_')}-*.whl"))
        assert len(matches) == 1, f"expected one wheel of {name}, found {matches}"
        found[name] = matches[0]
    return found


def release_venv(release: Path, name: str) -> Venv:
    root = release / "out" / f"venv-{name}"
    return Venv(root, root / "bin" / "python")


@pytest.fixture(scope="session")
def full_venv(release: Path) -> Venv:
    """A fresh venv with all five wheels and their third-party dependencies installed."""
    return release_venv(release, "all")


@pytest.fixture(scope="session")
def codegen_venv(release: Path) -> Venv:
    """A fresh venv with the fusegrad-uop and fusegrad-codegen wheels only."""
    return release_venv(release, "codegen")


@pytest.fixture(scope="session")
def uop_venv(release: Path) -> Venv:
    """A fresh venv with the fusegrad-uop wheel alone, installed with its dependencies."""
    return release_venv(release, "uop")


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site ``mkdocs build --strict`` makes from the checkout (what tools/dev docs runs),
    once per test run; its griffe source tree (tools/docs_hooks.py) goes to a folder of its own."""

    def build(folder: Path) -> None:
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "FUSEGRAD_DOCS_SRC": str(folder / "src")}
        mkdocs = Path(sys.executable).with_name("mkdocs")
        done = subprocess.run(
            [mkdocs, "build", "--strict", "--site-dir", folder / "site"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"

    return build_once(tmp_path_factory, "docs", build) / "site"


@pytest.fixture(scope="session")
def dev_venv() -> Venv:
    """The interpreter running the tests: the dev venv with the editable installs."""
    return Venv(Path(sys.prefix), Path(sys.executable))


@pytest.fixture(scope="session")
def layering() -> ModuleType:
    """tests/packaging/layering.py, loaded by path (tests/ is not an importable package)."""
    name = "fusegrad_tests_layering"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("layering.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
