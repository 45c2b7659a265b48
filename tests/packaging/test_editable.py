"""The dev venv imports every package from the checkout (editable installs).

Imports run in child interpreters: the result must not depend on which test imported a
package first, nor on warnings filters the test run installs.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname


def test_package_imports_from_checkout(package, dev_venv) -> None:
    code = f"import {package.module} as m; print(m.__file__)"
    where = dev_venv.run_ok(code).strip()
    assert where != "None", f"{package.module} is a bare namespace, not the package"
    assert Path(where).resolve().is_relative_to(package.src.resolve()), where


def test_package_imports_without_warnings(package, dev_venv) -> None:
    done = dev_venv.run(f"import warnings; warnings.simplefilter('error'); import {package.module}")
    assert done.returncode == 0, f"import {package.module} warned or failed:\n{done.stderr}"


def test_distribution_is_editable_install_of_checkout(package) -> None:
    text = importlib.metadata.distribution(package.distribution).read_text("direct_url.json")
    assert text is not None, f"{package.distribution} was not installed from a local folder"
    origin = json.loads(text)
    assert origin.get("dir_info", {}).get("editable") is True, origin
    installed_from = Path(url2pathname(urlparse(origin["url"]).path)).resolve()
    assert installed_from == package.src.parent.resolve(), origin


def test_namespace_spans_every_checked_out_package(packages, dev_venv) -> None:
    code = "import json, fusegrad; print(json.dumps(list(fusegrad.__path__)))"
    portions = {Path(p).resolve() for p in json.loads(dev_venv.run_ok(code))}
    expected = {(p.src / "fusegrad").resolve() for p in packages}
    assert portions == expected
