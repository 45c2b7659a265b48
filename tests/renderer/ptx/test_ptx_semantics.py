"""The PTX renderer's output run by a PTX interpreter written from the ISA's definitions
(``ptx_interp``): every conformance kernel must give the PYTHON emulator's results, so the
renderer's bridges between PTX and ``exec_alu`` (guarded division, clamped shifts, NaN-first
MAX, x86-style float -> int, f16/bf16 rounding and NaN bits) are checked without a GPU; and
lowered GPU kernels (hardware ids, shared memory, barriers) run with their launch sizes.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from fusegrad.renderer import PTXRenderer, ptx_signature
from fusegrad.renderer.conformance import compare, fresh_buffers
from fusegrad.renderer.corpus import Case, corpus
from fusegrad.runtime import run_linear
from fusegrad.uop import Ops, UOp, sym_infer

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
import ptx_interp

ARCH = "sm_90"


@functools.cache
def _renderer() -> PTXRenderer:
    return PTXRenderer(ARCH)


@functools.cache
def _corpus() -> tuple[Case, ...]:
    return tuple(corpus(_renderer()))


def _grid(uops: Sequence[UOp], var_vals: Mapping[str, int]) -> tuple[int, int, int]:
    core = next((u for u in uops if u.op is Ops.SPECIAL and u.arg == "core"), None)
    return (1, 1, 1) if core is None else (int(sym_infer(core.src[0], var_vals)), 1, 1)


def run_on_interpreter(
    uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]
) -> None:
    """Render ``uops`` as PTX and run it in the interpreter (one thread, a block per core)."""
    prog = list(uops)
    src = _renderer().render(prog, "k")
    sig = ptx_signature(prog, "k")
    scalars = [var_vals[v.arg[0]] for v in sig.variables]
    ordered = [bufs[int(b.arg)] for b in sig.buffers]
    ptx_interp.run_ptx(src, ordered, scalars, grid=_grid(prog, var_vals))


@pytest.mark.parametrize("case", _corpus(), ids=lambda c: c.name)
def test_interpreted_ptx_matches_emulator(case: Case) -> None:
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, case.var_vals)
    run_on_interpreter(case.uops, got, case.var_vals)
    mismatches = compare(case, want, got)
    assert not mismatches, f"{case.name}:\n" + "\n".join(mismatches)
