"""``__version__`` from the metadata, and one clear ImportError for a mismatched set.

The mismatch tests build a temporary venv (no pip, nothing installed) whose site-packages
holds a ``.pth`` file naming the checkout's package sources and hand-written ``.dist-info``
folders with fake versions: the import sees exactly the metadata a mismatched install has.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fusegrad.uop.version import check_requirements, release, satisfies

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {
    "fusegrad-uop": "uop-core",
    "fusegrad-codegen": "codegen",
    "fusegrad": "frontend",
}


def test_every_package_reports_its_installed_version(packages) -> None:
    import importlib

    for package in packages:
        module = importlib.import_module(package.module)
        assert module.__version__ == importlib.metadata.version(package.distribution)


@pytest.mark.parametrize(
    ("version", "specifier", "expected"),
    [
        ("0.1.0", "~=0.1.0", True),
        ("0.1.9", "~=0.1.0", True),
        ("0.2.0", "~=0.1.0", False),
        ("0.1.0", ">=0.1,<0.2", True),
        ("0.2.0", ">=0.1,<0.2", False),
        ("2.13.0+cpu", ">=2.13,<3", True),
        ("0.2.0rc1", "==0.2.*", True),
        ("0.3.0", "==0.2.*", False),
        ("1.0", "!=1.0.0", False),
        ("1.0", "", True),
    ],
)
def test_satisfies(version: str, specifier: str, expected: bool) -> None:
    assert satisfies(version, specifier) is expected


def test_bad_specifier_and_version_are_named() -> None:
    with pytest.raises(ValueError, match="unsupported version specifier clause 'about 1'"):
        satisfies("1.0", "about 1")
    with pytest.raises(ValueError, match=r"not a version: 'x\.y'"):
        release("x.y")


def test_installed_dev_set_matches() -> None:
    for distribution in ("fusegrad", "fusegrad-runtime", "fusegrad-renderers"):
        assert check_requirements(distribution) == importlib.metadata.version(distribution)


def fake_venv(root: Path, versions: dict[str, tuple[str, list[str]]]) -> Path:
    """A venv whose imports come from the checkout and whose metadata says ``versions``.

    ``versions``: distribution -> (version, Requires-Dist lines). Returns its python.
    """
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    sources = [ROOT / "packages" / SOURCES[d] / "src" for d in versions]
    # the frontend's regular package first: it extends its __path__ over the other portions
    sources.sort(key=lambda s: s.parent.name != "frontend")
    (Path(site) / "fusegrad-checkout.pth").write_text("".join(f"{s}\n" for s in sources))
    for name, (version, requires) in versions.items():
        info = Path(site) / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        lines += [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(lines) + "\n")
    return python


def run(python: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    return subprocess.run(
        [python, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=python.parent,
        check=False,
    )


def test_frontend_over_older_uop_raises_one_import_error(tmp_path: Path) -> None:
    python = fake_venv(
        tmp_path,
        {
            "fusegrad": ("0.2.0", ["fusegrad-uop~=0.2.0", "numpy>=1.26,<3"]),
            "fusegrad-uop": ("0.1.0", []),
        },
    )
    done = run(python, "import fusegrad")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: mismatched fusegrad packages: fusegrad 0.2.0 "), last
    assert "needs fusegrad-uop~=0.2.0 but fusegrad-uop 0.1.0 is installed" in last
    assert "Fix: pip install 'fusegrad-uop~=0.2.0'" in last
    # raised before anything else is imported: the venv has no numpy, and that is not the error
    assert "During handling" not in done.stderr and "numpy" not in done.stderr, done.stderr


def test_layer_over_newer_uop_raises(tmp_path: Path) -> None:
    python = fake_venv(
        tmp_path,
        {"fusegrad-codegen": ("0.1.0", ["fusegrad-uop~=0.1.0"]), "fusegrad-uop": ("0.2.0", [])},
    )
    assert run(python, "import fusegrad.uop").returncode == 0
    done = run(python, "import fusegrad.codegen")
    assert "ImportError: mismatched fusegrad packages: fusegrad-codegen 0.1.0" in done.stderr
    assert "fusegrad-uop 0.2.0 is installed" in done.stderr


def test_matching_fake_set_imports(tmp_path: Path) -> None:
    python = fake_venv(
        tmp_path,
        {"fusegrad-codegen": ("0.2.1", ["fusegrad-uop~=0.2.0"]), "fusegrad-uop": ("0.2.0", [])},
    )
    done = run(python, "import fusegrad.uop as u; print(u.__version__)")
    assert done.returncode == 0 and done.stdout.strip() == "0.2.0", done.stderr
    done = run(
        python,
        "from fusegrad.uop.version import check_requirements as c; print(c('fusegrad-codegen'))",
    )
    assert done.stdout.strip() == "0.2.1", done.stderr


def test_version_module_doctests() -> None:
    import doctest

    import fusegrad.uop.version

    result = doctest.testmod(fusegrad.uop.version)
    assert result.attempted > 0 and result.failed == 0, result
