"""BEAM from Tensor code: ``BEAM=2`` searches every kernel a program compiles on the CPU
device's own timer — plain realize, schedule-cache hits and TinyJit capture — and a later
process reuses the opts from the on-disk BEAM cache without timing anything."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad import Context, Tensor, TinyJit
from fusegrad.codegen import DiskCache, ProgramSpec, clear_programs, to_program
from fusegrad.codegen.opt import hand_coded_optimizations
from fusegrad.codegen.opt import search as search_module
from fusegrad.codegen.schedule import schedule_cache
from fusegrad.engine import programs
from fusegrad.runtime import Device

pytestmark = pytest.mark.kernels


class CountingTimer:
    """The CPU device's own timer, counting its calls; it reports the heuristics' opts ten
    times slower than they run (so BEAM must pick something else)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.device, self.compiler = inner.device, inner.compiler

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf
    ) -> float:
        self.calls += 1
        seconds = float(self.inner(spec, lib, limit))
        renderer = Device["CPU"].renderer
        return seconds * 10 if spec.applied_opts == tuple(heuristics(spec, renderer)) else seconds


def heuristics(spec: ProgramSpec, renderer: Any) -> list[Any]:
    return hand_coded_optimizations(spec.ast, renderer)


@pytest.fixture
def timer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingTimer]:
    """A counting timer registered on the real CPU device, a fresh BEAM cache in ``tmp_path``
    (``cache.db``, where FUSEGRAD_CACHE_DIR=tmp_path puts it for another process), and no
    kernels compiled yet."""
    dev = Device["CPU"]
    counting = CountingTimer(dev.timer)
    monkeypatch.setattr(dev, "timer", counting)
    monkeypatch.setattr(search_module, "_cache", DiskCache("beam_opts", tmp_path / "cache.db"))
    programs.clear_kernels()
    clear_programs()
    with Context(PARALLEL=0):
        yield counting
    programs.clear_kernels()
    clear_programs()


def matmul_inputs(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rs = np.random.default_rng(m * k * n)
    return rs.random((m, k), np.float32), rs.random((k, n), np.float32)


def beam_kernel() -> ProgramSpec:
    """The one program compiled under BEAM=2 (the test's matmul)."""
    found = [k.spec for key, k in programs._KERNELS.items() if key[2][0] == 2]
    assert len(found) == 1, f"expected one kernel compiled under BEAM=2, got {found}"
    return found[0]


def assert_beam_chose(spec: ProgramSpec) -> None:
    """``spec`` has opts BEAM searched, not the heuristics' (the timer said they are slow),
    and the heuristics' program of the same kernel differs."""
    renderer = Device["CPU"].renderer
    plain = to_program(spec.ast, renderer)  # BEAM=0: the heuristics
    assert plain.applied_opts == tuple(heuristics(spec, renderer))
    assert spec.applied_opts != plain.applied_opts


def test_plain_realize_searches_on_the_device_timer(timer: CountingTimer) -> None:
    a, b = matmul_inputs(8, 8, 8)
    with Context(BEAM=2):
        out = (Tensor(a) @ Tensor(b)).numpy()
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    assert timer.calls > 0
    assert_beam_chose(beam_kernel())
    calls = timer.calls
    with Context(BEAM=2):
        (Tensor(b) @ Tensor(a)).numpy()  # the same kernel: already compiled
    assert timer.calls == calls


def test_schedule_cache_hit_searches_too(timer: CountingTimer) -> None:
    a, b = matmul_inputs(4, 8, 8)
    with Context(BEAM=0):
        (Tensor(a) @ Tensor(b)).realize()  # scheduled with the heuristics, template stored
    programs.clear_kernels()  # the template's plan is built again on the next hit
    hits, before = schedule_cache.hits, timer.calls
    with Context(BEAM=2):
        out = (Tensor(a) @ Tensor(b)).numpy()
    assert schedule_cache.hits > hits  # the template path ran it
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    assert timer.calls > before
    assert_beam_chose(beam_kernel())


def test_beam_switched_on_later_in_the_process_searches_a_cached_schedule(
    timer: CountingTimer,
) -> None:
    """A schedule-cache plan built under BEAM=0 is not reused once BEAM is on: its kernels
    are the heuristics' (no clear_kernels between the two, unlike the test above)."""
    a, b = matmul_inputs(4, 4, 8)
    for _ in range(2):  # the second run launches from the template's plan
        (Tensor(a) @ Tensor(b)).realize()
    hits, before = schedule_cache.hits, timer.calls
    with Context(BEAM=2):
        out = (Tensor(a) @ Tensor(b)).numpy()
    assert schedule_cache.hits > hits
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    assert timer.calls > before
    assert_beam_chose(beam_kernel())


def test_tinyjit_capture_searches_and_replays_without_timing(timer: CountingTimer) -> None:
    a, b = matmul_inputs(8, 4, 8)
    step = TinyJit(lambda x, y: (x @ y).realize())
    with Context(BEAM=2):
        for _ in range(2):
            step(Tensor(a), Tensor(b))
        assert step.captured and step.plan is not None
        calls = timer.calls
        out = step(Tensor(a), Tensor(b)).numpy()
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    assert calls > 0 and timer.calls == calls  # a replay times nothing
    kernels = [s.kernel.spec for s in step.plan.steps if s.kernel is not None]
    assert kernels
    assert_beam_chose(kernels[-1])


_SECOND_PROCESS = """
    import json, math
    import numpy as np
    from fusegrad import Context, Tensor
    from fusegrad.codegen import clear_programs
    from fusegrad.codegen.opt import search
    from fusegrad.codegen.opt.search import codegen_fingerprint
    from fusegrad.engine import programs
    from fusegrad.runtime import Device

    dev = Device["CPU"]
    inner, calls = dev.timer, [0]

    class Counting:
        device, compiler = inner.device, inner.compiler

        def __call__(self, spec, lib=None, limit=math.inf):
            calls[0] += 1
            return inner(spec, lib, limit)

    dev.timer = Counting()
    if codegen_fingerprint() != PARENT_FINGERPRINT:
        # codegen's source changed while the test ran (a working tree being edited): key the
        # cache as the parent did, the reuse is still what is tested
        search.codegen_fingerprint = lambda: PARENT_FINGERPRINT
    a = np.random.default_rng(4096).random((8, 8), np.float32)
    b = np.random.default_rng(4097).random((8, 8), np.float32)
    out = {}
    for ignore in (0, 1):
        programs.clear_kernels()
        clear_programs()
        calls[0] = 0
        with Context(BEAM=2, IGNORE_BEAM_CACHE=ignore, PARALLEL=0):
            (Tensor(a) @ Tensor(b)).realize()
        spec = [k.spec for key, k in programs._KERNELS.items() if key[2][0] == 2][-1]
        opts = [list(o.to_tuple()) for o in spec.applied_opts]
        out[ignore] = {"opts": opts, "calls": calls[0]}
    print(json.dumps(out))
"""


def test_a_second_process_reuses_the_opts_without_timing(
    timer: CountingTimer, tmp_path: Path
) -> None:
    # the cache key includes a hash of codegen's source: computed now, as the other process
    # will (in a working tree being edited, an earlier hash may be stale)
    search_module.codegen_fingerprint.cache_clear()
    a, b = matmul_inputs(8, 8, 8)
    with Context(BEAM=2):
        (Tensor(a) @ Tensor(b)).realize()
    first = beam_kernel()
    assert timer.calls > 0
    env = {**os.environ, "FUSEGRAD_CACHE_DIR": str(tmp_path)}
    env.pop("BEAM", None)
    fingerprint = search_module.codegen_fingerprint()
    script = f"PARENT_FINGERPRINT = {fingerprint!r}\n" + textwrap.dedent(_SECOND_PROCESS)
    command = [sys.executable, "-c", script]
    run = subprocess.run(command, check=False, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    cached, searched = result["0"], result["1"]
    assert cached["calls"] == 0  # the on-disk BEAM cache answered
    assert cached["opts"] == [list(o.to_tuple()) for o in first.applied_opts]
    assert searched["calls"] > 0  # IGNORE_BEAM_CACHE=1 searched again
