"""The engine itself: kernel counts, GlobalCounters, DEBUG output, devices, copies, Variables,
schedules of several tensors, buffers and when the host waits."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from e2e_support import assert_close, kernels_run
from fusegrad import GlobalCounters, Tensor, Variable
from fusegrad.codegen import get_kernel_graph, to_program
from fusegrad.engine import HOST, buffer_of, runtime_buffer, synchronize
from fusegrad.engine import programs as engine_programs
from fusegrad.runtime import Device
from fusegrad.uop import Context, UOp

RNG = np.random.default_rng(3)


def rand(*shape: int) -> Tensor:
    """A realized float32 tensor of uniform data."""
    return Tensor(RNG.uniform(-1, 1, shape).astype(np.float32)).realize()


# -- kernel counts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "build", "most"),
    [
        ("a+b", lambda a, b, c: a + b, 1),
        ("((a+b)*c).relu()", lambda a, b, c: ((a + b) * c).relu(), 1),
        ("(a@b+c).relu()", lambda a, b, c: (a @ b + c).relu(), 1),
        ("(a*b).sum()", lambda a, b, c: (a * b).sum(), 1),
        ("a.sum()+1", lambda a, b, c: a.sum() + 1, 1),
        ("a.T.contiguous()", lambda a, b, c: a.T.contiguous(), 1),
        ("softmax", lambda a, b, c: a.softmax(1), 3),
        ("layernorm", lambda a, b, c: a.layernorm(), 3),
    ],
)
def test_kernel_count(name: str, build: object, most: int) -> None:
    a, b, c = rand(8, 8), rand(8, 8), rand(8, 8)
    out = build(a, b, c)  # type: ignore[operator]
    n = kernels_run(out.realize)
    assert 1 <= n <= most, f"{name}: {n} kernels"


def test_exact_kernel_counts_for_the_fused_cases() -> None:
    a, b, c = rand(8, 8), rand(8, 8), rand(8, 8)
    assert kernels_run((a + b).realize) == 1
    assert kernels_run((a @ b + c).relu().realize) == 1


def test_reshape_of_a_realized_buffer_runs_nothing() -> None:
    a = rand(4, 6)
    view = a.reshape(6, 4)
    assert kernels_run(view.realize) == 0
    assert_close(view, a.numpy().reshape(6, 4))


def test_assign_runs_one_kernel_into_the_same_buffer() -> None:
    a = rand(16)
    buf = buffer_of(a.uop)
    before = a.numpy()
    assert kernels_run(a.assign(a + 1).realize) == 1
    assert buffer_of(a.uop) is buf
    assert_close(a, before + 1)


# -- GlobalCounters ----------------------------------------------------------------------------


def test_counters_come_from_the_program_estimates() -> None:
    a, b = rand(4, 4), rand(4, 4)
    out = a + b
    kg = get_kernel_graph(UOp.sink(out.uop))
    renderer = Device[Device.DEFAULT].renderer
    est = [to_program(k.src[0], renderer).estimates for k in kg.kernels]
    GlobalCounters.reset()
    out.numpy()
    assert GlobalCounters.kernel_count == 1
    assert GlobalCounters.global_ops == sum(e.ops for e in est) == 16  # 16 adds
    assert GlobalCounters.global_mem == sum(e.mem for e in est) == 3 * 16 * 4
    assert GlobalCounters.time_sum_s > 0


def test_counters_accumulate_and_reset() -> None:
    a = rand(32)
    GlobalCounters.reset()
    for _ in range(3):
        (a * 2).numpy()
    assert GlobalCounters.kernel_count == 3
    assert GlobalCounters.global_ops == 3 * 32
    GlobalCounters.reset()
    assert (GlobalCounters.kernel_count, GlobalCounters.global_ops) == (0, 0)
    assert GlobalCounters.time_sum_s == 0.0


def test_mem_used_tracks_live_buffers() -> None:
    before = GlobalCounters.mem_used
    t = (rand(1024) + 1).realize()
    assert GlobalCounters.mem_used >= before + 1024 * 4
    del t


# -- DEBUG output ------------------------------------------------------------------------------


def test_debug1_prints_the_schedule_summary(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = rand(4, 4), rand(4, 4)
    with Context(DEBUG=1):
        (a + b).realize()
    out = capsys.readouterr().out
    assert re.search(r"schedule: 1 kernels", out), out


def test_debug2_prints_one_line_per_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = rand(4, 4), rand(4, 4)
    synchronize()  # the ring prints at DEBUG>=2 when a kernel finishes: earlier work first
    with Context(DEBUG=2):
        Tensor.realize(a.sum(0), (a @ b).relu())
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("***")]
    assert len(lines) == 2, lines
    for ln in lines:
        assert re.search(r"[rE]_\w+", ln) and "us" in ln and "GFLOP/s" in ln and "GB/s" in ln


def test_realize_of_several_tensors_is_one_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    a = rand(6, 6)
    outs = [a + 1, a.sum(0), (a * a).max(1)]
    with Context(DEBUG=1):
        Tensor.realize(*outs)
    text = capsys.readouterr().out
    assert text.count("schedule:") == 1, text
    assert all(t.is_realized for t in outs)
    assert_close(outs[2], (a.numpy() ** 2).max(1))


# -- devices and copies ------------------------------------------------------------------------


def test_default_device_is_the_runtime_default() -> None:
    assert Tensor([1.0]).device == Device.DEFAULT


def test_copy_between_cpu_and_python() -> None:
    x = RNG.uniform(-1, 1, (5, 3)).astype(np.float32)
    cpu = Tensor(x, device="CPU")
    py = (cpu * 2).to("PYTHON").realize()
    assert py.device == "PYTHON"
    assert_close(py, x * 2)
    back = ((py + 1).to("CPU").realize() - 1).sum(0)
    assert back.device == "CPU"
    assert_close(back, (x * 2).sum(0), atol=1e-5)


def test_lazy_copy_reports_its_destination_device() -> None:
    x = np.arange(6, dtype=np.float32)
    py = Tensor(x, device="CPU").to("PYTHON") + 1
    assert py.device == "PYTHON"
    assert_close(py, x + 1)


def test_rand_is_the_same_on_every_device() -> None:
    outs = {}
    for dev in ("CPU", "PYTHON"):
        Tensor.manual_seed(1234)
        outs[dev] = (
            Tensor.rand(64, device=dev).numpy(),
            Tensor.randint(32, low=0, high=1000, device=dev).numpy(),
            Tensor.randn(8, 4, device=dev).numpy(),
        )
    np.testing.assert_array_equal(outs["CPU"][0], outs["PYTHON"][0])  # bits: exact
    np.testing.assert_array_equal(outs["CPU"][1], outs["PYTHON"][1])
    # randn goes through log/cos: the emulator computes them exactly, LLVM approximates
    np.testing.assert_allclose(outs["CPU"][2], outs["PYTHON"][2], rtol=1e-6, atol=1e-7)
    assert outs["CPU"][0].min() >= 0.0 and outs["CPU"][0].max() < 1.0
    assert len(np.unique(outs["CPU"][0])) == 64


# -- host data, buffers, waiting ---------------------------------------------------------------


def test_host_data_moves_to_the_device_once() -> None:
    x = np.arange(8, dtype=np.float32)
    t = Tensor(x)
    buf = buffer_of(t.uop)
    assert buf is not None and HOST.get(buf) is not None
    assert_close(t + 1, x + 1)
    assert HOST.get(buf) is None
    np.testing.assert_array_equal(runtime_buffer(buf).numpy(), x)
    x[0] = 100  # the user's array is not the tensor's memory
    assert t.tolist()[0] == 0.0


def test_realize_does_not_wait_and_read_does() -> None:
    a = rand(256)
    out = a
    for _ in range(10):
        out = (out * 1.5 + 1).realize()
    synchronize()
    want = a.numpy()
    for _ in range(10):
        want = want * np.float32(1.5) + np.float32(1)
    assert_close(out, want, atol=1e-4, rtol=1e-5)


def test_bool_and_float16_buffers_round_trip() -> None:
    m = np.array([True, False, True])
    h = np.array([1.5, -2.25, 65504.0], dtype=np.float16)
    assert_close(Tensor(m) & Tensor([True, True, False]), m & [True, True, False])
    assert_close(Tensor(h) * 1, h)


def test_empty_tensor_buffers_are_allocated_on_demand() -> None:
    e = Tensor.empty(4, 4)
    assert e.numpy().shape == (4, 4)
    assert_close((e * 0 + 2).sum(), np.float32(32.0))


# -- Variables ---------------------------------------------------------------------------------


def test_symbolic_shapes_compile_once() -> None:
    n = Variable("n", 1, 16)
    results = []
    loaded = []
    for value in (3, 7, 12):
        x = Tensor.ones(n.bind(value), 4).contiguous()
        results.append((x * 2).sum().item())
        loaded.append(len(engine_programs._KERNELS))
    assert results == [24.0, 56.0, 96.0]
    assert loaded[0] == loaded[1] == loaded[2], loaded


@pytest.mark.parametrize("dev", ["PYTHON", "CPU:C"])
def test_dev_environment_variable_selects_the_device(dev: str) -> None:
    code = (
        "from fusegrad import Tensor, GlobalCounters; from fusegrad.runtime import Device; "
        "t = (Tensor([[1.0, 2.0], [3.0, 4.0]]) @ Tensor([[1.0], [1.0]])).relu(); "
        "print(t.device, Device[t.device].renderer.suffix, t.tolist(), GlobalCounters.kernel_count)"
    )
    env = dict(os.environ, DEV=dev)
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    device, renderer, *rest = out.stdout.split(maxsplit=2)
    assert (device, renderer) == (("PYTHON", "PY") if dev == "PYTHON" else ("CPU", "C"))
    assert rest[0].strip() == "[[3.0], [7.0]] 1"


def test_copy_of_host_data_reads_the_host_array() -> None:
    x = np.arange(12, dtype=np.int32)
    cpu = Tensor(x, device="CPU")
    buf = buffer_of(cpu.uop)
    py = cpu.to("PYTHON").realize()
    assert py.device == "PYTHON"
    assert_close(py * 2, x * 2)
    assert buf is not None and HOST.get(buf) is not None  # never uploaded to the CPU device


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_profile_trace_waits_for_in_flight_work(compiled: str, tmp_path: object) -> None:
    """A script that ends right after ``.realize()`` (no read, no synchronize) still writes
    every kernel's event: the exit hook waits for the work in flight before the devices
    close (compiled and Python rings)."""
    import json
    from pathlib import Path

    path = Path(str(tmp_path)) / "trace.json"
    code = (
        "from fusegrad import Tensor\n"
        "x = Tensor.ones(64, 64).contiguous().realize()\n"
        "for _ in range(30):\n"
        "    x = (x * 1.0001 + 0.5).exp2().log2().realize()\n"
    )
    env = dict(os.environ, PROFILE="1", PROFILE_PATH=str(path), HCQ_COMPILED=compiled)
    env.pop("DEV", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    trace = json.loads(path.read_text())["traceEvents"]
    events = [e for e in trace if e["ph"] == "X" and e["cat"] != "host"]  # the device spans
    assert len(events) == 31, [e["name"] for e in events]
