"""Every corpus kernel lowered for each test target, run in the PYTHON emulator, compared with
NumPy: unoptimized on every target, and with the target's opts (upcasts, unrolls, threads;
workgroups, locals, grouped reductions) where the case has them."""

from __future__ import annotations

from typing import Any

import corpus as _corpus
import numpy as np
import pytest
import targets as _targets
from fusegrad.codegen.lower import to_program
from fusegrad.uop import dtypes

RENDERERS, bf16_values, run_program = _targets.RENDERERS, _targets.bf16_values, _targets.run_program
Case, build = _corpus.Case, _corpus.build

_RUNS = [
    pytest.param(c, target, variant, id=f"{c.name}-{target}-{variant}")
    for c in build()
    for target in RENDERERS
    for variant in ("plain", "opt")
    if variant == "plain" or target in c.opts
]


def _check(c: Any, got: np.ndarray, want: np.ndarray) -> None:
    if c.exact:
        np.testing.assert_array_equal(got, want.reshape(-1))
    else:
        np.testing.assert_allclose(got, want.reshape(-1).astype(got.dtype), rtol=c.tol, atol=c.tol)


@pytest.mark.parametrize(("c", "target", "variant"), _RUNS)
def test_corpus_kernel_matches_numpy(c: Any, target: str, variant: str) -> None:
    ast = c.opts[target](c.ast) if variant == "opt" else c.ast
    spec = to_program(ast, RENDERERS[target])
    out = run_program(spec, c.inputs, c.var_vals)
    for slot, want in c.expected.items():
        got = out[slot]
        if spec.buffers[slot].dtype is dtypes.bfloat16:
            got = bf16_values(got)
        _check(c, got, want)


def test_corpus_is_big_enough() -> None:
    assert len(build()) >= 60
