"""``tools/dev release``: artifacts, twine check and the three smoke-tested install sets.

The ``release`` fixture runs tools/release.py once per test run; test_wheels.py checks the
same venvs further.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_release_builds_a_wheel_and_sdist_of_each_package(release: Path, packages) -> None:
    names = sorted(p.name for p in (release / "out" / "dist").iterdir())
    for package in packages:
        stem = package.distribution.replace("-", "_")
        assert sum(n.startswith(f"{stem}-") and n.endswith(".whl") for n in names) == 1, names
        assert sum(n.startswith(f"{stem}-") and n.endswith(".tar.gz") for n in names) == 1, names


def test_release_runs_twine_check_and_three_smoke_tests(release: Path) -> None:
    log = (release / "log.txt").read_text()
    assert log.count("PASSED") == 10, log
    for line in (
        "== install set 'uop' (uop-core)",
        "uop: x*4+2 ranges over [2, 62]",
        "== install set 'codegen' (uop-core + codegen)",
        "fusegrad.renderer: not installed, as expected",
        "all: (a@a).relu()+1 summed per row",
        "3 install sets pass",
    ):
        assert line in log, f"{line!r} missing from the release output:\n{log}"


def test_sdists_carry_sources_readme_and_changelog(release: Path, packages) -> None:
    for package in packages:
        stem = package.distribution.replace("-", "_")
        (sdist,) = (release / "out" / "dist").glob(f"{stem}-*.tar.gz")
        with tarfile.open(sdist) as archive:
            members = {Path(*Path(m).parts[1:]).as_posix() for m in archive.getnames()}
        assert {"pyproject.toml", "README.md", "CHANGELOG.md"} <= members, (sdist, members)
        init = f"src/{package.module.replace('.', '/')}/__init__.py"
        assert init in members, (sdist, init)


def test_codegen_set_has_no_renderer_or_runtime(codegen_venv) -> None:
    code = "import importlib.metadata as m; print(sorted(d.metadata['Name'] for d in m.distributions()))"
    names = codegen_venv.run_ok(code)
    assert "fusegrad-codegen" in names and "fusegrad-uop" in names
    assert "fusegrad-renderers" not in names and "fusegrad-runtime" not in names
