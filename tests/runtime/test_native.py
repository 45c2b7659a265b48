"""The compiled ring (fusegrad.runtime.native): native kernels run by the worker loop in
machine code, the core pool, signals across rings, the deferred doorbell, wrap-around of the
slot ring, profiling, errors and shutdown."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import numpy as np
import pytest
from fusegrad.runtime import CPUDevice, CPUProgram, HWQueue, Signal
from fusegrad.runtime.native import CAPACITY, NativeRing, native_library
from fusegrad.runtime.profiler import events
from fusegrad.uop import Context

pytestmark = pytest.mark.skipif(
    native_library() is None, reason="no compiled ring on this machine (needs Linux + LLVM)"
)

# appends its value to a log: log[0] is the count, then the values in the order they ran
APPEND = """
void append(int* log, int v) { log[1 + log[0]] = v; log[0] += 1; }
"""

# a THREAD-split kernel over n elements: core c of 8 handles its eighth
SPLIT = """
void split(float* out, const float* x, int n, int core) {
  int per = (n + 7) / 8, lo = core * per, hi = lo + per < n ? lo + per : n;
  for (int i = lo; i < hi; i++) out[i] = x[i] * 3.0f + (float)core;
}
"""

SPIN = """
#include <time.h>
void spin(volatile long* flag, long ms) {  /* ms of wall time (a loop count ran 1 ms short on a fast CPU) */
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while (!flag[0] && (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ms * 1000000L);
}
"""


@pytest.fixture
def cpu() -> Any:
    dev = CPUDevice("CPU")
    yield dev
    dev.close()


def _log(dev: Any, n: int) -> Any:
    mem = dev.allocator.alloc(4 * (n + 1))
    mem.view[:] = bytes(4 * (n + 1))
    return mem


def _values(mem: Any) -> list[int]:
    arr = np.frombuffer(mem.view, np.int32)
    return arr[1 : 1 + int(arr[0])].tolist()


def test_the_cpu_device_runs_a_compiled_ring(cpu: Any) -> None:
    ring = cpu.ring()
    assert isinstance(ring, NativeRing)
    assert ring._thread.name == "fusegrad-CPU:compute"


def test_native_kernels_run_in_submission_order_across_ring_wraparound(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    n = 3 * CAPACITY + 17  # several laps of the slot ring, one kernel per queue
    log = _log(cpu, n)
    for i in range(n):
        cpu.exec(prg, [log], [i])
    cpu.synchronize()
    assert _values(log) == list(range(n))


def test_one_queue_longer_than_the_ring(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    n = CAPACITY * 2 + 5
    log = _log(cpu, n)
    q = HWQueue()
    for i in range(n):
        q.exec(prg, [log], [i])
    done = Signal()
    q.signal(done, 1).submit(cpu)
    done.wait(1, timeout=30)
    assert _values(log) == list(range(n))


def test_thread_split_kernel_runs_on_the_core_pool(rt: Any, lb: Any) -> None:
    n = 100_001
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    core = lb.special("core", 8)
    spec = rt.spec_for("split", [core.src[0], core], device="CPU")
    results = []

    def pool_threads() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("fusegrad-CPU:compute-core")}

    before = pool_threads()  # other tests' devices (the default CPU) may have pools running
    for threads in (1, 3, 8):
        dev = CPUDevice("CPU")
        dev.threads = threads
        try:
            prg = CPUProgram("split", rt.gcc_shared(SPLIT), spec)
            bx, out = dev.allocator.alloc(4 * n), dev.allocator.alloc(4 * n)
            bx.view[:] = x.tobytes()
            for _ in range(20):  # the pool's generations turn over
                dev.exec(prg, [out, bx], [n])
            dev.synchronize()
            assert len(pool_threads() - before) == threads - 1
            results.append(np.frombuffer(out.view, np.float32).copy())
        finally:
            dev.close()
    core_of = np.minimum(np.arange(n) // ((n + 7) // 8), 7).astype(np.float32)
    for got in results:
        np.testing.assert_array_equal(got, x * np.float32(3) + core_of)


def test_compiled_wait_is_released_by_a_python_thread(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log, gate, done = _log(cpu, 4), Signal(name="gate"), Signal(name="done")
    HWQueue().wait(gate, 2).exec(prg, [log], [7]).signal(done, 1).submit(cpu)
    time.sleep(0.05)
    assert _values(log) == []
    threading.Timer(0.02, lambda: setattr(gate, "value", 2)).start()
    done.wait(1, timeout=10)
    assert _values(log) == [7]


def test_rings_of_one_device_wait_on_each_other(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log, ready, done = _log(cpu, 4), Signal(), Signal()
    HWQueue("compute").wait(ready, 1).exec(prg, [log], [2]).signal(done, 1).submit(cpu)
    time.sleep(0.02)
    HWQueue("copy").exec(prg, [log], [1]).signal(ready, 1).submit(cpu)
    done.wait(1, timeout=10)
    assert _values(log) == [1, 2]


def test_cheap_work_waits_for_the_first_wait_and_then_runs(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log, done = _log(cpu, 8), Signal()
    for i in range(5):
        HWQueue().exec(prg, [log], [i]).submit(cpu)
    HWQueue().signal(done, 1).submit(cpu)
    done.wait(1, timeout=10)  # a wait rings the doorbell of rings it may depend on
    assert _values(log) == [0, 1, 2, 3, 4]


def test_copy_commands_run_natively_and_through_python(cpu: Any) -> None:
    src = bytearray(range(256)) * 4
    dest = bytearray(len(src))
    readonly = memoryview(bytes(range(100)))
    other = bytearray(100)
    done = Signal()
    q = HWQueue().copy(memoryview(dest), memoryview(src)).copy(memoryview(other), readonly)
    q.signal(done, 1).submit(cpu)
    done.wait(1, timeout=10)
    assert dest == src and bytes(other) == bytes(range(100))


def test_timestamps_and_profile_events_time_a_native_kernel(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("spin", rt.gcc_shared(SPIN))
    flag = cpu.allocator.alloc(8)
    t0, t1 = Signal(), Signal()
    with Context(PROFILE=1):
        HWQueue().timestamp(t0).exec(prg, [flag], [20]).timestamp(t1).submit(cpu)
        cpu.synchronize()
    assert t1.timestamp - t0.timestamp >= 1_000_000
    ev = [e for e in events() if e["name"] == "spin" and e["pid"] == "CPU"]
    assert ev and ev[-1]["dur"] >= 1000 and ev[-1]["tid"] == "compute"


def test_debug_2_line_for_a_native_kernel(cpu: Any, rt: Any, capsys: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log = _log(cpu, 2)
    with Context(DEBUG=2):
        cpu.exec(prg, [log], [1], global_size=(3, 1, 1))
    out = capsys.readouterr().out
    assert "append" in out and "global (3, 1, 1)" in out and "us" in out


def test_python_error_skips_the_rest_of_its_queue_only(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log, after = _log(cpu, 4), Signal()

    def boom(b: Any, v: Any, c: int) -> None:
        raise KeyError("boom")

    HWQueue().exec(rt.FnProgram("boom", boom), []).exec(prg, [log], [1]).signal(after, 1).submit(
        cpu
    )
    HWQueue().exec(prg, [log], [2]).submit(cpu)
    after.wait(1, timeout=10)
    with pytest.raises(KeyError, match="boom"):
        cpu.synchronize()
    assert _values(log) == [2]


def test_close_stops_a_ring_blocked_in_a_wait_and_its_pool(rt: Any, lb: Any) -> None:
    dev = CPUDevice("CPU:5")
    dev.threads = 3
    core = lb.special("core", 8)
    spec = rt.spec_for("split", [core.src[0], core], device="CPU")
    prg = CPUProgram("split", rt.gcc_shared(SPLIT), spec)
    bx, out = dev.allocator.alloc(4 * 64), dev.allocator.alloc(4 * 64)
    dev.exec(prg, [out, bx], [64], wait=True)
    HWQueue().wait(Signal(), 1).submit(dev)  # never satisfied
    time.sleep(0.02)
    t = time.monotonic()
    dev.close()
    assert time.monotonic() - t < 2
    assert not [th for th in threading.enumerate() if th.name.startswith("fusegrad-CPU:5")]


def test_interpreter_exit_with_a_compiled_ring_waiting_does_not_hang() -> None:
    script = textwrap.dedent(
        """
        from fusegrad.runtime import Device, HWQueue, Signal
        cpu = Device["CPU"]
        cpu.threads = 2
        for _ in range(100):
            HWQueue().wait(Signal(), 1).submit(cpu)
        HWQueue("copy").wait(Signal(), 1).submit(cpu)
        print("submitted", flush=True)
        """
    )
    t = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "submitted"
    assert time.monotonic() - t < 30


def test_python_ring_fallback_when_disabled(rt: Any) -> None:
    with Context(HCQ_COMPILED=0):
        dev = CPUDevice("CPU:6")
        try:
            assert not isinstance(dev.ring(), NativeRing)
            prg = CPUProgram("append", rt.gcc_shared(APPEND))
            log = _log(dev, 4)
            dev.exec(prg, [log], [3], wait=True)
            assert _values(log) == [3]
        finally:
            dev.close()


def test_profile_keeps_work_submitted_under_it_reported_later(cpu: Any, rt: Any) -> None:
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log = _log(cpu, 2)
    before = len([e for e in events() if e["name"] == "append"])
    with Context(PROFILE=1):
        cpu.exec(prg, [log], [1])  # cheap: runs once someone waits, after the context
    cpu.exec(prg, [log], [2])  # not profiled
    cpu.synchronize()
    assert len([e for e in events() if e["name"] == "append"]) == before + 1


def test_a_device_dropped_without_close_keeps_its_ring_alive(rt: Any) -> None:
    import gc
    import weakref

    dev = CPUDevice("CPU:7")
    prg = CPUProgram("append", rt.gcc_shared(APPEND))
    log = _log(dev, 2)
    dev.exec(prg, [log], [4])
    ring = weakref.ref(dev.ring())
    del dev
    gc.collect()
    alive = ring()
    assert alive is not None  # its thread runs in the ring's memory: the thread holds it
    alive.timeline.wait(1, timeout=10)
    assert _values(log) == [4]
    alive.close()


TIDS = """
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>
void tids(long* out, int core) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
  out[core] = syscall(SYS_gettid);
}
"""


def test_split_slices_run_on_the_pool_threads(rt: Any, lb: Any) -> None:
    core = lb.special("core", 8)
    spec = rt.spec_for("tids", [core], device="CPU")
    dev = CPUDevice("CPU:8")
    dev.threads = 4
    try:
        prg = CPUProgram("tids", rt.gcc_shared(TIDS), spec)
        out = dev.allocator.alloc(8 * 8)
        dev.exec(prg, [out], [], wait=True)
        tids = np.frombuffer(out.view, np.int64)
    finally:
        dev.close()
    assert np.all(tids > 0)  # every slice ran
    assert len(set(tids.tolist())) >= 2  # 160 ms of slices: the helpers take some
