"""The CPU heuristics split a kernel over the cores when no core count divides its axes: the
outermost long axis is padded to a multiple of the cores (PADTO, a masked tail) and split
with THREAD. The case is a fused optimizer's update over one flat buffer of 2 x odd
elements (#29), which used to run on one core, 2-wide; its values stay right."""

from __future__ import annotations

import types

import numpy as np
import opt_testing as H
import pytest
from fusegrad.codegen import KernelInfo
from fusegrad.codegen.opt import Opt, OptOps, hand_coded_optimizations
from fusegrad.codegen.opt.heuristics import THREAD_MIN_WORK
from fusegrad.uop import UOp, dtypes

CPU = H.TARGETS.RENDERERS["cpu"]  # 4 cores


def _update(n: int) -> UOp:
    """An Adam-like update of parameters p with moments m, v from gradient g, in place."""
    p, m, v, g = (UOp.param(i, dtypes.float32.ptr(n)) for i in range(4))
    i = UOp.range(n, 0)
    grad = g.index(i).load()
    m2 = m.index(i).load() * 0.9 + grad * 0.1
    v2 = v.index(i).load() * 0.999 + grad * grad * 0.001
    p2 = p.index(i).load() - 0.001 * m2 / (v2.sqrt() + 1e-8)
    stores = (m.index(i).store(m2), v.index(i).store(v2), p.index(i).store(p2))
    return UOp.sink(*(s.end(i) for s in stores), arg=KernelInfo(f"update{n}"))


def _want(arrays: list[np.ndarray]) -> list[np.ndarray]:
    p, m, v, g = (a.astype(np.float32) for a in arrays)
    m2 = m * np.float32(0.9) + g * np.float32(0.1)
    v2 = v * np.float32(0.999) + g * g * np.float32(0.001)
    p2 = p - np.float32(0.001) * m2 / (np.sqrt(v2) + np.float32(1e-8))
    return [p2, m2, v2, g]


def _inputs(n: int) -> list[np.ndarray]:
    rs = np.random.default_rng(n)
    p, m, g = (rs.standard_normal(n).astype(np.float32) for _ in range(3))
    return [p, m, rs.random(n).astype(np.float32), g]


N = 2 * 12345


def test_two_times_odd_update_is_split_over_the_cores() -> None:
    n = 2 * 12347  # a prime: no core count of the 4 divides the vector steps
    assert n < THREAD_MIN_WORK  # split for its float work per element, not its length
    opts = hand_coded_optimizations(_update(n), CPU)
    assert opts == [
        Opt(OptOps.UPCAST, 0, 2),  # 2 divides 2 x 12347, 4 and 8 don't
        Opt(OptOps.PADTO, 0, 4),  # 12347 -> 12348 vector steps, the last one masked
        Opt(OptOps.THREAD, 0, 4),
    ]


def test_a_core_count_that_divides_needs_no_padding() -> None:
    opts = hand_coded_optimizations(_update(N), CPU)
    assert opts == [Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.THREAD, 0, 3)]  # 3 divides 12345


def test_padded_split_gives_the_reference_in_the_emulator() -> None:
    n = 2 * 41  # the emulator is slow: the same shape of problem, small
    ast = _update(n)
    opts = hand_coded_optimizations(ast, CPU)
    assert OptOps.THREAD not in [o.op for o in opts]  # too little work: one core
    forced = [Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.PADTO, 0, 4), Opt(OptOps.THREAD, 0, 4)]
    arrays = _inputs(n)
    case = types.SimpleNamespace(inputs=arrays, var_vals={})
    got = H.run_emulated(case, H.with_opts(ast, forced), CPU)
    for g, w in zip(got, _want(arrays), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n", [N, 2 * 1001 * 17])
def test_padded_split_gives_the_reference_on_the_cpu_device(n: int) -> None:
    dev = H.cpu_device()
    if dev.renderer.max_threads < 2:
        pytest.skip("one core: nothing to split")
    ast = _update(n)
    opts = hand_coded_optimizations(ast, dev.renderer)
    assert [o.op for o in opts][-2:] == [OptOps.PADTO, OptOps.THREAD]
    arrays = _inputs(n)
    case = types.SimpleNamespace(inputs=arrays, var_vals={})
    got = H.run_cpu(case, H.with_opts(ast, opts))
    for g, w in zip(got, _want(arrays), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
