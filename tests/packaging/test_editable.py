"""The dev venv imports every package from the checkout (editable installs)."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import fusegrad


def test_package_imports_from_checkout(package) -> None:
    module = importlib.import_module(package.module)
    assert module.__file__ is not None, f"{package.module} is a bare namespace, not the package"
    where = Path(module.__file__).resolve()
    assert where.is_relative_to(package.src.resolve()), f"{package.module} loaded from {where}"


def test_distribution_is_editable_install_of_checkout(package) -> None:
    text = importlib.metadata.distribution(package.distribution).read_text("direct_url.json")
    assert text is not None, f"{package.distribution} was not installed from a local folder"
    origin = json.loads(text)
    assert origin.get("dir_info", {}).get("editable") is True, origin
    installed_from = Path(url2pathname(urlparse(origin["url"]).path)).resolve()
    assert installed_from == package.src.parent.resolve(), origin


def test_namespace_spans_every_checked_out_package(packages) -> None:
    portions = {Path(p).resolve() for p in fusegrad.__path__}
    expected = {(p.src / "fusegrad").resolve() for p in packages}
    assert portions == expected
