"""Golden files: the rendered source of representative kernels, per renderer, kept under
tests/renderer/golden/<renderer>/ so a change shows exactly what code it changes.

Refresh after an intended change with ``FUSEGRAD_UPDATE_GOLDEN=1`` and review the diff. The
output is host-independent: LLVM IR carries no target triple, CPU or features (the compiler
adds them), vector widths are fixed here rather than taken from the host, and fast-math is
pinned off.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fusegrad.codegen import Renderer
from fusegrad.renderer import CRenderer, LLVMRenderer, PTXRenderer
from fusegrad.renderer.corpus import (
    Case,
    alu_case,
    bitcast_case,
    cast_case,
    gated_case,
    if_case,
    multicore_case,
    nested_case,
    reduce_case,
    symbolic_case,
    vector_case,
    vector_gated_case,
)
from fusegrad.uop import Ops, dtypes

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("FUSEGRAD_UPDATE_GOLDEN") == "1"

RENDERERS: dict[str, tuple[Callable[[], Renderer], str]] = {
    "llvm": (lambda: LLVMRenderer(fast_math=False), ".ll"),
    "c": (CRenderer, ".c"),
    "ptx": (lambda: PTXRenderer("sm_90"), ".ptx"),
}

KERNELS: dict[str, Callable[[Renderer], Case | None]] = {
    "alu_float32": lambda r: alu_case(r, dtypes.float32),
    "alu_int32": lambda r: alu_case(r, dtypes.int32),
    "alu_uint8": lambda r: alu_case(r, dtypes.uint8),
    "alu_bool": lambda r: alu_case(r, dtypes.bool),
    "alu_float16": lambda r: alu_case(r, dtypes.float16),
    "cast_from_float32": lambda r: cast_case(r, dtypes.float32),
    "cast_from_int64": lambda r: cast_case(r, dtypes.int64),
    "bitcast_from_bfloat16": lambda r: bitcast_case(r, dtypes.bfloat16),
    "gated_float32": lambda r: gated_case(dtypes.float32),
    "if_endif": lambda r: if_case(),
    "symbolic_end": lambda r: symbolic_case(5),
    "multicore": lambda r: multicore_case(),
    "reduce_add_float32": lambda r: reduce_case(dtypes.float32, Ops.ADD),
    "nested_int64": lambda r: nested_case(),
    "vector_float32x4": lambda r: vector_case(r, dtypes.float32, 4),
    "vector_int8x16": lambda r: vector_case(r, dtypes.int8, 16),
    "vector_gated_float4": lambda r: vector_gated_case(4),
}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_rendered_source_matches_golden_file(renderer: str, kernel: str) -> None:
    make, suffix = RENDERERS[renderer]
    r = make()
    case = KERNELS[kernel](r)
    assert case is not None
    src = r.render(list(case.uops), kernel)
    assert isinstance(src, str)
    path = GOLDEN / renderer / f"{kernel}{suffix}"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
        return
    assert path.exists(), f"no golden file {path}; create it with FUSEGRAD_UPDATE_GOLDEN=1"
    assert src == path.read_text(), (
        f"{renderer} output for {kernel} changed; if intended, refresh with "
        "FUSEGRAD_UPDATE_GOLDEN=1 and review the diff"
    )


def test_every_golden_file_belongs_to_a_kernel() -> None:
    known = {f"{r}/{k}{s}" for r, (_, s) in RENDERERS.items() for k in KERNELS}
    present = {
        str(p.relative_to(GOLDEN))
        for p in GOLDEN.rglob("*")
        if p.is_file() and p.relative_to(GOLDEN).parts[0] in RENDERERS  # x86/ has its own test
    }
    assert present <= known, f"stale golden files: {sorted(present - known)}"
