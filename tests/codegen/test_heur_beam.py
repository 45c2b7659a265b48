"""BEAM and tensor cores: a kernel over ``BASE_MAX_ITERATIONS`` is not searched from its
untiled form, so BEAM starts from the kernel with just TC too (when the renderer has a core
that takes it); a timer that finds mma.sync kernels fastest then gets a TC kernel even where
the heuristics chose the register block."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from fusegrad.codegen import ProgramSpec
from fusegrad.codegen.opt import OptOps, beam_search, hand_coded_optimizations
from fusegrad.codegen.opt import heuristics as heuristics_module
from fusegrad.codegen.opt import search as search_module
from fusegrad.renderer.ptx import PTXRenderer
from fusegrad.uop import Context, dtypes

sys.path.insert(0, str(Path(__file__).parents[1] / "renderer" / "ptx"))
from test_ptx_tensor_cores import matmul

# 256 x 512 x 256 = 2^25 iterations: over BASE_MAX_ITERATIONS
M, K, N = 256, 512, 256


class MmaFastest:
    """A fake timer: kernels with mma.sync take 1 ms, others 2 ms; records what it timed."""

    def __init__(self) -> None:
        self.timed: list[tuple[object, ...]] = []

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf
    ) -> float:
        self.timed.append(tuple(spec.applied_opts))
        return 1e-3 if "mma.sync" in str(spec.src) else 2e-3


def _no_heuristic_tc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heuristics_module, "_gpu_tensor_core", lambda plan: False)


def test_big_kernel_starts_from_tc_and_finds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert M * K * N > search_module.BASE_MAX_ITERATIONS
    _no_heuristic_tc(monkeypatch)
    renderer = PTXRenderer("sm_90")
    ast = matmul(M, K, N)
    heuristic = hand_coded_optimizations(ast, renderer)
    assert heuristic and all(o.op is not OptOps.TC for o in heuristic)
    timer = MmaFastest()
    with Context(CACHELEVEL=0, PARALLEL=0):
        opts = beam_search(ast, renderer, 2, timer, max_rounds=0)
    assert opts[0].op is OptOps.TC and opts[0].axis == 0, opts
    assert () not in timer.timed  # still not timed untiled


def test_no_tc_start_where_no_core_takes_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_heuristic_tc(monkeypatch)
    timer = MmaFastest()
    with Context(CACHELEVEL=0, PARALLEL=0):
        opts = beam_search(matmul(M, K, N, dtypes.float32), PTXRenderer("sm_90"), 2, timer, 0)
    assert all(o.op is not OptOps.TC for o in opts)
    assert not any(any(getattr(o, "op", None) is OptOps.TC for o in t) for t in timer.timed)


def test_the_heuristics_stay_the_baseline_beside_the_tc_start() -> None:
    """With the heuristics choosing TC and 2 x 2 tiles, TC alone is a start too; a timer
    that finds every kernel as fast keeps the heuristics' whole sequence."""
    renderer = PTXRenderer("sm_90")
    ast = matmul(M, K, N)
    heuristic = hand_coded_optimizations(ast, renderer)
    assert heuristic[0].op is OptOps.TC and len(heuristic) > 1
    timed: list[tuple[object, ...]] = []

    def flat(spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf) -> float:
        timed.append(tuple(spec.applied_opts))
        return 1e-3

    with Context(CACHELEVEL=0, PARALLEL=0):
        opts = beam_search(ast, renderer, 2, flat, max_rounds=0)
    assert (heuristic[0],) in timed
    assert opts == heuristic
