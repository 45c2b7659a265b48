"""Golden files: the linear programs of representative kernels, kept as reviewed text in
tests/codegen/golden/ so a refactor shows exactly what code it changes. Refresh with
``FUSEGRAD_UPDATE_GOLDEN=1``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import corpus as _corpus
import pytest
import targets as _targets
from fusegrad.codegen.lower import to_program

GOLDEN = Path(__file__).parent.parent / "golden"

# (case, target, variant): scalar CPU-style, vectorized, threaded, GPU ids/locals/groups,
# masks, gathers, decompositions, emulated dtypes, symbolic shapes
SELECTED = [
    ("ew_add", "scalar", "plain"),
    ("ew_add", "cpu", "opt"),
    ("ew_max", "gpu", "plain"),
    ("math_sin", "cpu", "plain"),
    ("reduce_add_last", "cpu", "opt"),
    ("reduce_max_first", "gpu", "opt"),
    ("matmul", "cpu", "plain"),
    ("matmul", "cpu", "opt"),
    ("matmul", "gpu", "opt"),
    ("pad_1d", "cpu", "opt"),
    ("gather_masked", "cpu", "plain"),
    ("gather_one_hot_sum", "cpu", "opt"),
    ("gather_two_axes", "gpu", "plain"),
    ("conv2d", "gpu", "opt"),
    ("dtype_bf16_scale", "scalar", "plain"),
    ("int_floordiv_const", "gpu", "plain"),
    ("symbolic_reduce", "cpu", "plain"),
    ("softmax2", "cpu", "opt"),
    ("padded_matmul", "gpu", "opt"),
    ("padded_matmul", "scalar", "plain"),
    ("grouped_max_in_sum", "gpu", "opt"),
    ("partials_add_last", "cpu", "opt"),
    ("tiled_sum_first", "cpu", "opt"),
]


def render_golden(case: Any, target: str, variant: str) -> str:
    """The reviewed text form of one lowered kernel."""
    ast = case.opts[target](case.ast) if variant == "opt" else case.ast
    spec = to_program(ast, _targets.RENDERERS[target])
    head = [
        f"# {case.name} on {target} ({variant})",
        f"name: {spec.name}",
        f"global_size: {spec.global_size}  local_size: {spec.local_size}",
        f"buffers: {[(b.slot, b.dtype.name, b.size, b.read, b.written) for b in spec.buffers]}",
        f"estimates: ops={spec.estimates.ops} lds={spec.estimates.lds} mem={spec.estimates.mem}",
    ]
    return "\n".join(head) + "\n" + str(spec.src) + "\n"


@pytest.mark.parametrize(
    ("name", "target", "variant"), SELECTED, ids=["-".join(s) for s in SELECTED]
)
def test_linear_program_matches_golden(name: str, target: str, variant: str) -> None:
    case = next(c for c in _corpus.build() if c.name == name)
    text = render_golden(case, target, variant)
    path = GOLDEN / f"{name}-{target}-{variant}.txt"
    if os.environ.get("FUSEGRAD_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {path}: run with FUSEGRAD_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{path.name} changed: review, then FUSEGRAD_UPDATE_GOLDEN=1"
