"""The dispatch fast paths: a schedule-cache hit launches the cached template's launch plan
(``plan.template_plan``) with the same results as the kernel-graph path (memory-planned
arenas included), falls back to it where it must (DEBUG output), keys constants by their bits; engine
buffers give their memory count back; TinyJit's recorder is recognized by its flag."""

from __future__ import annotations

import gc
import math
from typing import Any

import numpy as np
import pytest
from fusegrad import Context, GlobalCounters, Tensor, TinyJit, Variable
from fusegrad.codegen.schedule import schedule_cache
from fusegrad.engine import clear_kernels, get_executor, set_executor, synchronize
from fusegrad.engine.programs import RECIPES

pytestmark = pytest.mark.kernels
RNG = np.random.default_rng(11)


def _arr(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.normal(size=shape).astype(np.float32)


def _count_graph_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from fusegrad.engine import kernels

    runs: list[int] = []
    real = kernels.calls_plan

    def counting(calls: Any, fresh: Any = ()) -> Any:
        runs.append(len(calls))
        return real(calls, fresh)

    monkeypatch.setattr(kernels, "calls_plan", counting)
    return runs


def test_cache_hit_launches_from_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _count_graph_runs(monkeypatch)
    a0, b0 = _arr(3, 5), _arr(3, 5)
    (Tensor(a0) * 2 + Tensor(b0)).realize()  # schedules (or hits an earlier test's entry)
    hits, graph_runs = schedule_cache.hits, len(runs)
    for _ in range(4):
        a, b = _arr(3, 5), _arr(3, 5)
        out = (Tensor(a) * 2 + Tensor(b)).numpy()
        np.testing.assert_allclose(out, a * 2 + b, rtol=1e-6)
    assert schedule_cache.hits >= hits + 4
    assert len(runs) == graph_runs  # every hit ran without building a kernel graph


def test_dependent_chain_on_the_fast_path_counts_kernels() -> None:
    x = Tensor([0.0]).realize()
    for _ in range(3):
        x = (x + 1).realize()
    GlobalCounters.reset()
    for _ in range(50):
        x = (x + 1).realize()
    assert x.item() == 53.0
    assert GlobalCounters.kernel_count == 50
    assert GlobalCounters.time_sum_s > 0  # timestamps bracket the fast launches too


def test_bound_variable_values_on_cache_hits() -> None:
    x = Tensor(np.arange(6, dtype=np.float32)).realize()
    for k in range(5):
        v = Variable("k_fast", 0, 10).bind(k)
        np.testing.assert_allclose((x + v).numpy(), np.arange(6) + k)


def test_debug_output_takes_the_kernel_graph_path(capsys: pytest.CaptureFixture[str]) -> None:
    a = _arr(7)
    for _ in range(2):
        (Tensor(a) - 3).realize()
    capsys.readouterr()
    with Context(DEBUG=1):
        out = (Tensor(a) - 3).numpy()
    np.testing.assert_allclose(out, a - 3)
    assert "(cached)" in capsys.readouterr().out


def test_memory_planned_graph_runs_from_the_template_and_stays_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # intermediates live in an arena (BUFFER_VIEWs): each hit makes a new arena and views
    runs = _count_graph_runs(monkeypatch)
    for i in range(4):
        a = _arr(16, 16)
        out = ((Tensor(a) @ Tensor(a)).relu().sum(axis=1) + Tensor(a).max()).numpy()
        np.testing.assert_allclose(out, np.maximum(a @ a, 0).sum(axis=1) + a.max(), rtol=1e-4)
        if i == 0:
            graph_runs = len(runs)
    assert len(runs) == graph_runs  # the hits ran without building a kernel graph


def test_layout_copies_run_from_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    # a 512 matmul reads B from panels: copy and matmul, the panels in an arena
    runs = _count_graph_runs(monkeypatch)
    x = Tensor(_arr(512, 512)).realize()
    for i in range(3):
        b = _arr(512, 512)
        np.testing.assert_allclose((x @ Tensor(b)).numpy(), x.numpy() @ b, rtol=1e-4, atol=1e-3)
        if i == 0:
            graph_runs = len(runs)
    assert len(runs) == graph_runs


def test_negative_and_positive_zero_constants_stay_apart() -> None:
    x = Tensor([0.0, 1.0, -2.0]).realize()
    neg, pos = (x * -0.0).numpy(), (x * 0.0).numpy()
    assert [math.copysign(1, v) for v in neg] == [-1, -1, 1]
    assert [math.copysign(1, v) for v in pos] == [1, 1, -1]
    assert np.isnan((x + float("nan")).numpy()).all()
    np.testing.assert_array_equal((x + 0.5).numpy(), [0.5, 1.5, -1.5])


def test_clear_kernels_forgets_the_launch_recipes() -> None:
    x = Tensor([1.0, 2.0]).realize()
    for _ in range(2):
        x = (x * 3).realize()
    assert RECIPES
    clear_kernels()
    assert not RECIPES
    np.testing.assert_allclose((x * 3).numpy(), [27.0, 54.0])


def test_engine_buffers_give_their_memory_count_back() -> None:
    gc.collect()
    before = GlobalCounters.mem_used
    t = (Tensor(_arr(1000)) + 1).realize()
    assert GlobalCounters.mem_used >= before + 4000
    del t
    synchronize()  # settled launches let go of their buffers
    gc.collect()
    assert GlobalCounters.mem_used <= before


def test_recorder_is_marked_capturing() -> None:
    seen: list[bool] = []

    def body(x: Tensor) -> Tensor:
        seen.append(bool(getattr(get_executor(), "capturing", False)))
        return (x + 1).realize()

    jit = TinyJit(body)
    for _ in range(4):
        jit(Tensor(_arr(3)))
    assert seen == [False, True]  # the eager call, then the capture


def test_jit_replay_after_executor_swap_and_back() -> None:
    jit = TinyJit(lambda x: (x * 2).realize())
    xs = [_arr(4) for _ in range(5)]
    outs = [jit(Tensor(x)).numpy() for x in xs[:3]]
    previous = set_executor(get_executor())  # the same executor installed again
    try:
        outs += [jit(Tensor(x)).numpy() for x in xs[3:]]
    finally:
        set_executor(previous)
    for x, out in zip(xs, outs, strict=True):
        np.testing.assert_allclose(out, x * 2)


def test_cache_hits_follow_a_compiler_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    from fusegrad.engine import programs
    from fusegrad.runtime import Device

    cpu = Device["CPU"]
    if dict(cpu.compiler_status()).get("C") != "ok":
        pytest.skip("no C compiler here")
    before = cpu.renderer.suffix
    loaded: list[Any] = []
    real = programs.get_kernel

    def recording(ast: Any, device: Any) -> Any:
        kernel = real(ast, device)
        loaded.append(device.renderer)
        return kernel

    x = Tensor([1.0, 2.0]).realize()
    try:
        for kind in ("LLVM", "C", "LLVM"):
            cpu.select_compiler(kind)
            monkeypatch.setattr("fusegrad.engine.plan.get_kernel", recording)
            for _ in range(2):
                np.testing.assert_allclose((x * 5 - 1).numpy(), [4.0, 9.0])
            assert loaded and loaded[-1] is cpu.renderer  # the hit ran this compiler's kernel
            loaded.clear()
    finally:
        cpu.select_compiler(before)
