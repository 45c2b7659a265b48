"""Built wheels install and import outside the checkout, alone and all together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def origins(venv, modules: list[str]) -> dict[str, str | None]:
    """Where each of ``modules`` is loaded from in ``venv`` (None: a bare namespace)."""
    code = (
        "import importlib, json\n"
        f"print(json.dumps({{n: importlib.import_module(n).__file__ for n in {modules!r}}}))"
    )
    loaded: dict[str, str | None] = json.loads(venv.run_ok(code))
    return loaded


def site_packages(venv) -> Path:
    return Path(venv.run_ok("import sysconfig; print(sysconfig.get_path('purelib'))").strip())


def test_all_wheels_import_together_from_site_packages(full_venv, packages) -> None:
    loaded = origins(full_venv, [p.module for p in packages])
    site = site_packages(full_venv).resolve()
    for name, file in loaded.items():
        assert file is not None, f"{name} imported as a bare namespace in the full install"
        assert Path(file).resolve().is_relative_to(site), f"{name} loaded from {file}"


def test_all_wheels_report_their_versions(full_venv, packages) -> None:
    code = (
        "import importlib.metadata as m, json\n"
        f"print(json.dumps({{n: m.version(n) for n in {[p.distribution for p in packages]!r}}}))"
    )
    versions = json.loads(full_venv.run_ok(code))
    assert set(versions) == {p.distribution for p in packages}
    assert all(versions.values()), versions


def test_uop_wheel_installs_no_other_distribution(uop_venv) -> None:
    code = "import importlib.metadata as m; print(sorted(d.metadata['Name'] for d in m.distributions()))"
    assert uop_venv.run_ok(code).strip() == "['fusegrad-uop']"


def test_uop_wheel_alone_has_no_numpy(uop_venv) -> None:
    done = uop_venv.run("import numpy")
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'numpy'" in done.stderr


def test_uop_wheel_alone_imports_uop_from_site_packages(uop_venv) -> None:
    loaded = origins(uop_venv, ["fusegrad", "fusegrad.uop"])
    assert loaded["fusegrad"] is None, "fusegrad must be a bare namespace without the frontend"
    file = loaded["fusegrad.uop"]
    assert file is not None
    assert Path(file).resolve().is_relative_to(site_packages(uop_venv).resolve())


def test_uop_wheel_alone_exports_uop(uop_venv) -> None:
    output = uop_venv.run_ok("from fusegrad.uop import UOp; print(UOp.__name__)")
    assert output.strip() == "UOp"


def test_uop_readme_doctests_pass_with_uop_wheel_alone(uop_venv) -> None:
    readme = ROOT / "packages" / "uop-core" / "README.md"
    done = uop_venv.run_module("doctest", "-o", "ELLIPSIS", readme)
    assert done.returncode == 0, f"doctest failures in {readme}:\n{done.stdout}{done.stderr}"
