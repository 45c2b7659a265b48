"""HCQ queues, signals and rings: ordering, waits across queues, throughput without loss,
concurrency, errors, shutdown, profiling."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
from fusegrad.runtime import HWQueue, Signal, launch_line, write_trace
from fusegrad.runtime.profiler import events
from fusegrad.uop import Context, dtypes


def test_signal_wait_returns_once_reached_and_times_out_otherwise() -> None:
    sig = Signal(name="s")
    threading.Timer(0.05, lambda: setattr(sig, "value", 2)).start()
    sig.wait(2, timeout=5)
    assert sig.value == 2
    with pytest.raises(TimeoutError, match=r"signal s: waited 0\.05s for value 3, it is 2"):
        sig.wait(3, timeout=0.05)


def test_commands_in_a_queue_run_in_order_and_signal_last(hcqdev: Any, rt: Any) -> None:
    log: list[str] = []
    done = Signal()
    q = HWQueue()
    for name in "abc":
        q.exec(rt.FnProgram(name, lambda b, v, c, n=name: log.append(n)), [])
    q.signal(done, 7).submit(hcqdev)
    done.wait(7, timeout=10)
    assert log == ["a", "b", "c"]


def test_wait_across_queues_orders_work_on_two_rings(hcqdev: Any, rt: Any) -> None:
    log: list[str] = []
    ready, done = Signal(name="ready"), Signal(name="done")
    # the compute queue is submitted first but must wait for the copy ring's signal
    HWQueue("compute").wait(ready, 1).exec(
        rt.FnProgram("after", lambda b, v, c: log.append("after")), []
    ).signal(done, 1).submit(hcqdev)
    time.sleep(0.05)
    assert log == []
    slow = rt.FnProgram("before", lambda b, v, c: (time.sleep(0.05), log.append("before")))
    HWQueue("copy").exec(slow, []).signal(ready, 1).submit(hcqdev)
    done.wait(1, timeout=10)
    assert log == ["before", "after"]


def test_signal_values_step_a_timeline_in_submission_order(hcqdev: Any, rt: Any) -> None:
    sig = Signal()
    seen: list[int] = []
    for i in range(1, 6):
        HWQueue().signal(sig, i).exec(
            rt.FnProgram("read", lambda b, v, c: seen.append(sig.value)), []
        ).submit(hcqdev)
    hcqdev.synchronize()
    assert seen == [1, 2, 3, 4, 5] and sig.value == 5


def test_ten_thousand_small_submissions_arrive_in_order(hcqdev: Any, rt: Any) -> None:
    got: list[int] = []
    prg = rt.FnProgram("count", lambda b, v, c: got.append(v[0]))
    for i in range(10_000):
        hcqdev.exec(prg, [], [i])
    hcqdev.synchronize()
    assert got == list(range(10_000))


def test_two_python_threads_submitting_concurrently(hcqdev: Any, rt: Any) -> None:
    got: dict[str, list[int]] = {"x": [], "y": []}

    def submit(key: str) -> None:
        prg = rt.FnProgram(key, lambda b, v, c: got[key].append(v[0]))
        for i in range(2_000):
            hcqdev.exec(prg, [], [i])

    threads = [threading.Thread(target=submit, args=(k,)) for k in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hcqdev.synchronize()
    assert got["x"] == list(range(2_000)) and got["y"] == list(range(2_000))


def test_kernel_error_surfaces_at_synchronize_and_device_keeps_working(
    hcqdev: Any, rt: Any
) -> None:
    def boom(b: Any, v: Any, c: int) -> None:
        raise ValueError("kernel exploded")

    log: list[str] = []
    after = Signal()
    HWQueue().exec(rt.FnProgram("boom", boom), []).exec(
        rt.FnProgram("skipped", lambda b, v, c: log.append("skipped")), []
    ).signal(after, 1).submit(hcqdev)
    after.wait(1, timeout=10)  # a failed queue still fires its signals: nobody hangs
    with pytest.raises(ValueError, match="kernel exploded"):
        hcqdev.synchronize()
    assert log == []
    hcqdev.exec(rt.FnProgram("ok", lambda b, v, c: log.append("ok")), [], wait=True)
    assert log == ["ok"]


def test_timestamps_bracket_a_kernel(hcqdev: Any, rt: Any) -> None:
    t0, t1 = Signal(), Signal()
    nap = rt.FnProgram("nap", lambda b, v, c: time.sleep(0.03))
    HWQueue().timestamp(t0).exec(nap, []).timestamp(t1).submit(hcqdev)
    hcqdev.synchronize()
    assert t1.timestamp - t0.timestamp >= 30_000_000


def test_close_with_work_in_flight_stops_threads(rt: Any) -> None:
    from fusegrad.runtime import PythonDevice

    dev = PythonDevice("PYTHON:7")
    started = threading.Event()

    def nap(b: Any, v: Any, c: int) -> None:
        started.set()
        time.sleep(0.05)

    for _ in range(100):
        dev.exec(rt.FnProgram("nap", nap), [])
    HWQueue("copy").wait(Signal(), 1).submit(dev)  # a wait that is never satisfied
    started.wait(5)
    t = time.monotonic()
    dev.close()
    assert time.monotonic() - t < 2
    assert not [th for th in threading.enumerate() if th.name.startswith("fusegrad-PYTHON:7")]


def test_interpreter_exit_with_work_in_flight_does_not_hang(tmp_path: Any) -> None:
    script = textwrap.dedent(
        """
        import time, warnings
        warnings.simplefilter("ignore")
        from fusegrad.runtime import Device, HWQueue, Program, Signal

        class Nap(Program):
            def __call__(self, *a, **k):
                time.sleep(0.05)

        dev = Device["PYTHON"]
        for _ in range(200):
            dev.exec(Nap("nap", b""), [])
        HWQueue("copy").wait(Signal(), 1).submit(dev)
        cpu = Device["CPU"]
        HWQueue().wait(Signal(), 1).submit(cpu)
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


def test_debug_2_prints_one_line_per_launch(hcqdev: Any, rt: Any, capsys: Any) -> None:
    with Context(DEBUG=2):
        hcqdev.exec(rt.FnProgram("my_kernel", lambda b, v, c: None), [], global_size=(4, 1, 1))
    out = capsys.readouterr().out
    assert "my_kernel" in out and "GFLOP/s" in out and "global (4, 1, 1)" in out


def test_launch_line_uses_estimates(rt: Any, lb: Any) -> None:
    from fusegrad.codegen import Estimates
    from fusegrad.runtime.hcq import ExecCmd

    spec = rt.spec_for(
        "est",
        [lb.buf(0, dtypes.float32, 4)],
        estimates=Estimates(2e9, 0, 4e9),
    )
    prg = rt.FnProgram("est", lambda b, v, c: None)
    prg.spec = spec
    line = launch_line("PYTHON:compute", ExecCmd(prg, (), (), (1, 1, 1), None), 1.0, 1)
    assert "2.00 GFLOP/s" in line and "4.00 GB/s" in line and "1000000.00us" in line


def test_profile_writes_a_chrome_trace(pydev: Any, rt: Any, tmp_path: Any) -> None:
    with Context(PROFILE=1):
        pydev.exec(rt.FnProgram("traced_kernel", lambda b, v, c: None), [], wait=True)
    assert any(e["name"] == "traced_kernel" for e in events())
    path = write_trace(tmp_path / "trace.json")
    trace = json.loads(path.read_text())
    ev = next(e for e in trace["traceEvents"] if e["name"] == "traced_kernel")
    assert ev["ph"] == "X" and ev["pid"] == "PYTHON" and ev["tid"] == "compute" and ev["dur"] >= 0
