"""Golden listings of the x86 renderer: the assembly (with machine code) of representative
kernels, kept under tests/renderer/golden/x86/ so a change to selection, allocation or
encoding shows exactly which instructions it changes.

Refresh after an intended change with ``FUSEGRAD_UPDATE_GOLDEN=1`` and review the diff. The
listing doesn't depend on the host: the renderer is given the features to render for (AVX2,
FMA and F16C, which every CPU the x86 renderer runs on here has).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fusegrad.renderer.corpus import (
    Case,
    alu_case,
    cast_case,
    gated_case,
    if_case,
    mulacc_case,
    multicore_case,
    nested_case,
    reduce_case,
    symbolic_case,
)
from fusegrad.renderer.x86 import X86Renderer
from fusegrad.uop import Ops, dtypes

GOLDEN = Path(__file__).parents[1] / "golden" / "x86"
UPDATE = os.environ.get("FUSEGRAD_UPDATE_GOLDEN") == "1"

GOLDEN_FEATURES = ("osxsave", "avx", "avx2", "fma", "f16c", "bmi2")

KERNELS: dict[str, Callable[[X86Renderer], Case | None]] = {
    "alu_float32": lambda r: alu_case(r, dtypes.float32),
    "alu_int32": lambda r: alu_case(r, dtypes.int32),
    "alu_uint8": lambda r: alu_case(r, dtypes.uint8),
    "alu_int64": lambda r: alu_case(r, dtypes.int64),
    "alu_bool": lambda r: alu_case(r, dtypes.bool),
    "cast_from_float32": lambda r: cast_case(r, dtypes.float32),
    "cast_from_uint64": lambda r: cast_case(r, dtypes.uint64),
    "gated_float32": lambda r: gated_case(dtypes.float32),
    "if_endif": lambda r: if_case(),
    "symbolic_end": lambda r: symbolic_case(5),
    "multicore": lambda r: multicore_case(),
    "reduce_add_float32": lambda r: reduce_case(dtypes.float32, Ops.ADD),
    "reduce_max_float32": lambda r: reduce_case(dtypes.float32, Ops.MAX),
    "nested_int64": lambda r: nested_case(),
    "mulacc_float64": lambda r: mulacc_case(r, dtypes.float64),
}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_listing_matches_golden_file(kernel: str) -> None:
    r = X86Renderer(features=GOLDEN_FEATURES, listing=True)
    case = KERNELS[kernel](r)
    assert case is not None
    src = r.render(list(case.uops), kernel)
    path = GOLDEN / f"{kernel}.s"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
        return
    assert path.exists(), f"no golden file {path}; create it with FUSEGRAD_UPDATE_GOLDEN=1"
    assert src == path.read_text(), (
        f"x86 listing of {kernel} changed; if intended, refresh with FUSEGRAD_UPDATE_GOLDEN=1"
    )
