"""Golden NIR: ``nir_print_shader``'s printout of representative kernels after Mesa's passes,
kept under tests/renderer/golden/nir/ so a change shows exactly what shader it changes.

Refresh after an intended change with ``FUSEGRAD_UPDATE_GOLDEN=1`` and review the diff. The
serialized form that follows the printout in the renderer's output is left out (it is the
same shader, as bytes).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fusegrad.codegen import Renderer
from fusegrad.renderer.corpus import (
    Case,
    alu_case,
    cast_case,
    gated_case,
    if_case,
    multicore_case,
    nested_case,
    reduce_case,
    symbolic_case,
)
from fusegrad.renderer.nir import NIRRenderer, mesa_unavailable
from fusegrad.renderer.nir.renderer import BLOB_PREFIX
from fusegrad.uop import Ops, dtypes

pytestmark = pytest.mark.skipif(mesa_unavailable() is not None, reason=str(mesa_unavailable()))

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "nir"
UPDATE = os.environ.get("FUSEGRAD_UPDATE_GOLDEN") == "1"

KERNELS: dict[str, Callable[[Renderer], Case | None]] = {
    "alu_float32": lambda r: alu_case(r, dtypes.float32),
    "alu_int32": lambda r: alu_case(r, dtypes.int32),
    "alu_bool": lambda r: alu_case(r, dtypes.bool),
    "cast_from_float32": lambda r: cast_case(r, dtypes.float32),
    "cast_from_int64": lambda r: cast_case(r, dtypes.int64),
    "gated_float32": lambda r: gated_case(dtypes.float32),
    "if_endif": lambda r: if_case(),
    "symbolic_end": lambda r: symbolic_case(5),
    "multicore": lambda r: multicore_case(),
    "reduce_add_float32": lambda r: reduce_case(dtypes.float32, Ops.ADD),
    "reduce_max_float32": lambda r: reduce_case(dtypes.float32, Ops.MAX),
    "nested_int64": lambda r: nested_case(),
    # lowered with the GPU opts: a grid of workgroups, a GROUP reduction through shared memory
    # and barriers; a matmul on 2-D workgroups
    "workgroups_reduce_all": lambda r: _lowered(r, "reduce_all"),
    "workgroups_matmul": lambda r: _lowered(r, "matmul"),
}


def _lowered(renderer: Renderer, name: str) -> Case:
    """Codegen's lowering-corpus kernel ``name`` with its GPU opts, as lowered for NIR."""
    from fusegrad.codegen import to_program
    from lowering_corpus import load

    c = next(c for c in load("corpus").build() if c.name == name)
    spec = to_program(c.opts["gpu"](c.ast), renderer)
    return Case(name, tuple(spec.uops), (), {})


@pytest.fixture(scope="module")
def renderer() -> NIRRenderer:
    return NIRRenderer()


def printed(renderer: NIRRenderer, case: Case) -> str:
    """The printout part of the renderer's output."""
    text = renderer.render(list(case.uops))
    return "".join(line + "\n" for line in text.splitlines() if not line.startswith(BLOB_PREFIX))


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_golden_nir(renderer: NIRRenderer, kernel: str) -> None:
    case = KERNELS[kernel](renderer)
    assert case is not None
    got = printed(renderer, case)
    path = GOLDEN / f"{kernel}.nir"
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
        if not UPDATE:
            pytest.fail(f"wrote the missing golden file {path.name}: review and commit it")
    assert got == path.read_text(), f"{path.name} changed: FUSEGRAD_UPDATE_GOLDEN=1 to refresh"


def test_printout_is_the_same_every_time(renderer: NIRRenderer) -> None:
    case = if_case()
    assert printed(renderer, case) == printed(renderer, case)
