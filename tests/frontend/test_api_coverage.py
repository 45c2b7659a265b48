# ruff: noqa: E501  (parametrize tables read best one case per line)
"""Every Tensor method named in shared/API.md exists on fusegrad's Tensor."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fusegrad import Tensor

API = Path(__file__).resolve().parents[3] / "shared" / "API.md"
# API names that double as parameter names in API.md: the parser skips them as words, so they
# are checked here explicitly (else a missing one would go unnoticed)
ALSO_PARAMETERS = {"data", "device", "dtype", "requires_grad", "shape", "ndim", "grad", "linear",
                   "sequential", "mean", "std", "int", "bool", "to"}  # fmt: skip


def api_methods() -> list[str]:
    text = API.read_text()
    section = text.split("## Tensor", 1)[1].split("## dtypes", 1)[0]
    names = set(re.findall(r"`([^`]+)`", section))
    words: set[str] = set()
    for chunk in names:
        for w in re.findall(r"(?<![\w.=\"'])([a-z_][a-z0-9_]*)\s*(?:\(|\b)", chunk):
            words.add(w)
    skip = {"data", "device", "dtype", "requires_grad", "shape", "ndim", "grad", "mode", "constant", "reflect",
            "replicate", "circular", "value", "linear", "nearest", "exact", "align_corners", "neg_slope",
            "approximate", "beta", "x", "y", "p", "n", "m", "dim", "axis", "keepdim", "ptr", "low", "high",
            "start", "stop", "step", "steps", "mean", "std", "seed", "fill_value", "devices", "fxn", "grad_fxn",
            "gradient", "targets", "tensors", "padding", "and", "operators", "incl", "reflected", "in", "place",
            "lists", "ints", "slices", "with", "none", "ellipsis", "negative", "indices", "int", "bool",
            "tensor", "einops", "formula", "rounding_mode", "sequential", "tuple", "to", "_like", "or", "xor"}  # fmt: skip
    return sorted(w for w in words if w not in skip or hasattr(Tensor, w))


@pytest.mark.skipif(not API.exists(), reason="shared/API.md not available")
def test_count_api_methods_present() -> None:
    names = api_methods()
    missing = [n for n in names if not hasattr(Tensor, n)]
    assert not missing, f"missing API methods: {missing}"
    present = sum(1 for n in names if hasattr(Tensor, n))
    print(f"API.md Tensor names: {present}/{len(names)} present")


def test_api_names_that_are_also_parameters_exist() -> None:
    t = Tensor([1.0])  # grad and requires_grad are instance attributes
    missing = sorted(n for n in ALSO_PARAMETERS if not hasattr(t, n))
    assert not missing, f"missing API methods: {missing}"


@pytest.mark.skipif(not API.exists(), reason="shared/API.md not available")
def test_api_file_is_parsed() -> None:
    assert len(api_methods()) > 150
