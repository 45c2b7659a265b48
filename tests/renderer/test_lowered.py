"""Kernels from the real lowering pipeline: codegen's lowering corpus (tests/codegen/lower),
lowered for each CPU renderer with and without its CPU opts (upcasts, unrolls, core splits),
compiled, run, and compared with the PYTHON emulator running the same linear program.

This is what the renderers see in practice — AFTER-ordered accumulators, vector accesses to
scalar registers, emulated dtypes — beyond the hand-built conformance corpus.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad.codegen import Compiler, Renderer, to_program
from fusegrad.renderer import CPUProgram, kernel_signature
from fusegrad.renderer.conformance import conformance_targets
from lowering_corpus import load

_targets, _corpus = load("targets"), load("corpus")
TARGETS = {
    t.name: t for t in conformance_targets() if t.name in ("LLVM", "C-gcc", "C-clang", "X86")
}
_built: dict[str, tuple[Renderer, Compiler]] = {}


def _pair(name: str) -> tuple[Renderer, Compiler]:
    if name not in _built:
        from fusegrad.renderer import CCompiler, CRenderer, LLVMCompiler, LLVMRenderer
        from fusegrad.renderer.x86 import X86Compiler, X86Renderer

        cc = name.split("-")[1] if name.startswith("C-") else None
        _built[name] = (
            (X86Renderer(), X86Compiler())
            if name == "X86"
            else (LLVMRenderer(fast_math=False), LLVMCompiler())
            if cc is None
            else (CRenderer(), CCompiler(cc))
        )
    return _built[name]


def _params() -> list[Any]:
    out = []
    for name, target in TARGETS.items():
        reason = target.unavailable()
        if reason is not None:
            skip = pytest.mark.skip(reason=reason)
            out.append(pytest.param(name, None, "", id=name, marks=skip))
            continue
        for c in _corpus.build():
            for variant in ("plain", "opt") if "cpu" in c.opts else ("plain",):
                out.append(pytest.param(name, c, variant, id=f"{name}-{c.name}-{variant}"))
    return out


@pytest.mark.parametrize(("target", "c", "variant"), _params())
def test_lowered_kernel_matches_emulator(target: str, c: Any, variant: str) -> None:
    renderer, compiler = _pair(target)
    spec = to_program(c.opts["cpu"](c.ast) if variant == "opt" else c.ast, renderer)
    want = _targets.run_program(spec, c.inputs, c.var_vals)
    got = [np.array(a, dtype=w.dtype).reshape(-1) for a, w in zip(c.inputs, want, strict=True)]
    src = renderer.render(list(spec.uops), spec.name)
    assert isinstance(src, str)
    CPUProgram(compiler.compile_cached(src), kernel_signature(list(spec.uops), spec.name))(
        got, c.var_vals
    )
    for slot in c.expected:
        if c.exact:
            np.testing.assert_array_equal(got[slot], want[slot])
        else:  # libm transcendentals vs the emulator's double-then-round
            np.testing.assert_allclose(
                got[slot].astype(np.float64), want[slot].astype(np.float64), rtol=2e-6, atol=1e-7
            )
