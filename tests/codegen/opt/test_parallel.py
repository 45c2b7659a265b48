"""BEAM's candidate builds in worker processes (``PARALLEL``), and what a search drops and
counts: candidates that fail to build or run, and ones slower than ``BEAM_TIMEOUT_S``; its
progress bar at ``DEBUG>=1``."""

from __future__ import annotations

import math
import os
import sys
import threading
from pathlib import Path
from typing import Any

import opt_testing
import pytest
from fusegrad.codegen import DiskCache, ProgramSpec
from fusegrad.codegen.opt import Opt, OptOps, SearchStats, apply_opt, beam_search
from fusegrad.codegen.opt import parallel as parallel_module
from fusegrad.codegen.opt import search as search_module
from fusegrad.codegen.opt.parallel import Job, build, build_all
from fusegrad.uop import AxisType, Context, Ops, UOp, dtypes

CPU = opt_testing.TARGETS.RENDERERS["cpu"]


def matmul(n: int = 8) -> UOp:
    from fusegrad.codegen import KernelInfo

    c, a, b = (UOp.param(s, dtypes.float32.ptr(n * n)) for s in range(3))
    i, j, k = UOp.range(n, 0), UOp.range(n, 1), UOp.range(n, 2, AxisType.REDUCE)
    val = (a.index(i * n + k).load() * b.index(k * n + j).load()).reduce(k, arg=Ops.ADD)
    return UOp.sink(c.index(i * n + j).store(val).end(i, j), arg=KernelInfo("mm"))


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "_cache", DiskCache("beam_opts", tmp_path / "beam.db"))


def jobs(compiler: type | None = None, key: str = "", renderer: Any = CPU) -> list[Job]:
    root = matmul()
    opts = [(), (Opt(OptOps.UPCAST, 1, 4),), (Opt(OptOps.UPCAST, 0, 2),)]
    out = []
    for seq in opts:
        ast = root
        for o in seq:
            ast = apply_opt(ast, o, renderer)
        out.append(Job(root, ast, seq, renderer, compiler, key))
    return out


def llvm() -> tuple[type, Any]:
    """The LLVM compiler class and a renderer (skips without llvmlite)."""
    renderers = pytest.importorskip("fusegrad.renderer")
    if not hasattr(renderers, "LLVMCompiler"):
        pytest.skip("no LLVM compiler")
    return renderers.LLVMCompiler, renderers.LLVMRenderer()


def test_workers_build_and_compile_what_this_process_would() -> None:
    cls, renderer = llvm()
    todo = jobs(cls, cls().cache_key, renderer)
    with Context(PARALLEL=2):
        built = build_all(todo)
    here = [build(j) for j in todo]
    for b, h, job in zip(built, here, todo, strict=True):
        assert b.spec is not None and h.spec is not None and b.lib and h.lib
        assert b.spec.src == h.spec.src and b.spec.applied_opts == job.opts
    pool = parallel_module._pool[0]
    pids = {w.proc.pid for w in pool.workers}
    assert len(pids) == 2 and os.getpid() not in pids and all(w.alive for w in pool.workers)


def test_a_compiler_built_with_other_arguments_leaves_compiling_to_the_timer() -> None:
    cls, renderer = llvm()
    (job,) = jobs(cls, "another compiler's key", renderer)[:1]
    built = build(job)
    assert built.spec is not None and built.lib is None


class LockedRenderer(type(CPU)):  # type: ignore[misc]
    """A renderer that does not pickle (it holds a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


def test_a_job_that_does_not_pickle_or_a_dead_worker_is_built_here() -> None:
    locked = [Job(j.root, j.ast, j.opts, LockedRenderer()) for j in jobs()]
    with Context(PARALLEL=2):
        built = build_all(locked)
        assert all(b.spec is not None for b in built)
        pool = parallel_module._pool[0]
        pool.workers[0].proc.kill()
        pool.workers[0].proc.wait()
        again = build_all(jobs())  # the dead worker is replaced
        assert all(b.spec is not None for b in again)
        assert all(w.alive for w in pool.workers)


def test_workers_that_cannot_start_leave_building_to_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parallel_module.close_pool()
    failing = [sys.executable, "-c", "raise SystemExit(1)"]
    monkeypatch.setattr(parallel_module, "worker_command", lambda: failing)
    try:
        with Context(PARALLEL=2):
            for _ in range(4):
                assert all(b.spec is not None for b in build_all(jobs()))
            pool = parallel_module._pool[0]
            assert pool.broken
            before = [w.proc.pid for w in pool.workers]
            build_all(jobs())
            assert [w.proc.pid for w in pool.workers] == before  # no more tries
    finally:
        parallel_module.close_pool()


def test_a_failing_build_is_returned_not_raised() -> None:
    job = jobs()[0]
    with Context(BEAM_MAX_UOPS=3):
        built = build(job)
    assert built.spec is None and "BEAM_MAX_UOPS" in built.error


class SlowTimer:
    """Fake times (fewer loop iterations: faster); candidates with a THREAD opt take an hour,
    ones with UNROLL fail to run."""

    def __init__(self) -> None:
        self.limits: list[float] = []

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf
    ) -> float:
        self.limits.append(limit)
        ops = {o.op for o in spec.applied_opts}
        if OptOps.UNROLL in ops:
            raise RuntimeError("this kernel crashes")
        if OptOps.THREAD in ops:
            return 3600.0
        iters = math.prod(int(u.src[0].arg) for u in spec.uops if u.op is Ops.RANGE)
        return iters * 1e-6


def test_failing_and_timed_out_candidates_are_dropped_and_counted() -> None:
    timer, stats = SlowTimer(), SearchStats()
    with Context(PARALLEL=0):
        opts = beam_search(matmul(), CPU, 2, timer, stats=stats)
    assert all(o.op not in (OptOps.THREAD, OptOps.UNROLL) for o in opts)
    assert stats.failed > 0 and stats.timed_out > 0 and stats.timed > 0
    finite = [x for x in timer.limits if math.isfinite(x)]
    assert finite and max(finite) < 3600  # ten times the best so far, never an hour
    timer, stats = SlowTimer(), SearchStats()
    with Context(PARALLEL=0, IGNORE_BEAM_CACHE=1, BEAM_TIMEOUT_S=1e9):
        beam_search(matmul(), CPU, 2, timer, stats=stats)
    assert stats.timed_out == 0 and 1e9 in timer.limits  # an explicit timeout


def test_progress_bar_only_at_debug_1(capsys: pytest.CaptureFixture[str]) -> None:
    with Context(PARALLEL=0, DEBUG=1):
        beam_search(matmul(), CPU, 2, SlowTimer())
    err = capsys.readouterr().err
    assert "BEAM mm round 1" in err and "left" in err and "best" in err
    with Context(PARALLEL=0, IGNORE_BEAM_CACHE=1):
        beam_search(matmul(), CPU, 2, SlowTimer())
    assert "BEAM" not in capsys.readouterr().err
