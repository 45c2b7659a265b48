"""Kernels from the real lowering pipeline on the NIR renderer: codegen's lowering corpus
(tests/codegen/lower), lowered for NIRRenderer plain, with the CPU opts (upcasts, unrolls,
core splits: the core split stays a loop here) and with the GPU opts (workgroups: LOCAL ids,
GROUP reductions through shared memory and barriers), compiled by the LVP compiler, run, and
compared with the PYTHON emulator running the same linear program (as
tests/renderer/test_lowered.py does for the other CPU renderers)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad.codegen import to_program
from fusegrad.renderer import CPUProgram
from fusegrad.renderer.nir import LVPCompiler, NIRRenderer, mesa_unavailable
from fusegrad.renderer.nir.renderer import MAX_LANES, cpu_signature
from lowering_corpus import load

REASON = mesa_unavailable()


_targets, _corpus = load("targets"), load("corpus")


def _params() -> list[Any]:
    if REASON is not None:
        return [pytest.param(None, "", marks=pytest.mark.skip(reason=REASON))]
    return [
        pytest.param(c, variant, id=f"{c.name}-{variant}")
        for c in _corpus.build()
        for variant in ("plain", *(v for v in ("cpu", "gpu") if v in c.opts))
    ]


@pytest.fixture(scope="module")
def pair() -> tuple[NIRRenderer, LVPCompiler]:
    return NIRRenderer(), LVPCompiler()


@pytest.mark.parametrize(("c", "variant"), _params())
def test_lowered_kernel_matches_emulator(
    pair: tuple[NIRRenderer, LVPCompiler], c: Any, variant: str
) -> None:
    renderer, compiler = pair
    try:
        spec = to_program(c.opts[variant](c.ast) if variant in c.opts else c.ast, renderer)
    except NotImplementedError as exc:  # the corpus's GPU opts (for a GPU's local_max)
        if f"at most {MAX_LANES}, the lanes" not in str(exc):
            raise
        pytest.skip(f"{exc} (the GPU opts chose it; NIRRenderer.local_max keeps to {MAX_LANES})")
    want = _targets.run_program(spec, c.inputs, c.var_vals)
    got = [np.array(a, dtype=w.dtype).reshape(-1) for a, w in zip(c.inputs, want, strict=True)]
    src = renderer.render(list(spec.uops), spec.name)
    CPUProgram(compiler.compile_cached(src), cpu_signature(list(spec.uops), spec.name))(
        got, c.var_vals
    )
    for slot in c.expected:
        if c.exact:
            np.testing.assert_array_equal(got[slot], want[slot])
        else:  # approximated transcendentals vs the emulator's double-then-round
            np.testing.assert_allclose(
                got[slot].astype(np.float64), want[slot].astype(np.float64), rtol=2e-6, atol=1e-7
            )
