"""tinygrad's ``helpers`` and ``device`` names added for #18: host profiling (``cpu_profile``,
``profile_marker``, the event classes), stack and source helpers, ``cpu_objdump``, the cache
database (``CACHEDB``, ``db_connection``), ``NO_MEMORY_PLANNER``; ``Buffer``'s positional
``initial_value``/``uop_refcount`` and ``CompileError(message)``."""

from __future__ import annotations

import inspect
import json
import shutil

import numpy as np
import pytest
from fusegrad import Context, Device, Tensor, TinyJit, dtypes
from fusegrad import helpers as h
from fusegrad.device import Buffer, CompileError
from fusegrad.runtime import profile_events


def test_cpu_profile_records_under_profile_only() -> None:
    before = len(h.cpu_events)
    with h.cpu_profile("quiet") as event:
        pass
    assert event.en is not None and event.en >= event.st
    assert len(h.cpu_events) == before  # PROFILE=0: timed, not kept
    with Context(PROFILE=1):
        with h.cpu_profile(h.TracingKey("load weights"), device="HOST") as event:
            sum(range(1000))
        h.profile_marker("epoch 1", color="red")
    kept = h.cpu_events[before:]
    assert kept[0] is event and isinstance(event, h.ProfileRangeEvent)
    assert event.device == "HOST" and event.en is not None and event.en > event.st
    assert isinstance(kept[1], h.ProfilePointEvent)
    assert kept[1].arg == {"name": "epoch 1", "color": "red"}
    names = [e["name"] for e in profile_events()]
    assert "load weights" in names and "marker: epoch 1" in names  # in the PROFILE trace too
    assert json.dumps(profile_events()[-1])  # trace events stay JSON


def test_stacktrace_and_printable() -> None:
    frame = inspect.currentframe()
    trace = h.get_stacktrace(frame, max_frames=2)
    assert len(trace) == 2
    file, line, name, text = trace[0]
    assert file == __file__ and name == "test_stacktrace_and_printable"
    assert "get_stacktrace" in text and h.printable((file, line)) == text
    assert h.printable(("/no/such/file.py", 3)) == "<missing>"
    assert h.get_stacktrace(None) == ()


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump")
def test_cpu_objdump_disassembles_a_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    dev = Device["CPU"]
    sources = {
        "LLVMCompiler": "define void @tiny_kernel(ptr %a) {\n  ret void\n}\n",
        "CCompiler": "void tiny_kernel(float* a) { a[0] = 1.0f; }",
    }
    source = sources.get(type(dev.compiler).__name__)
    if type(dev.compiler).__name__ == "LVPCompiler":  # NIR: the renderer's text of a tiny kernel
        from fusegrad.renderer.corpus import Builder, index, store
        from fusegrad.uop import UOp
        from fusegrad.uop import dtypes as udtypes

        p = Builder()
        a = p.buffer(udtypes.float32, [0.0])
        p.add(store(index(a, UOp.const(0, udtypes.int32)), UOp.const(1.0, udtypes.float32)))
        source = dev.renderer.render(p.uops, "tiny_kernel")
    if source is None:
        pytest.skip(f"no test kernel for {type(dev.compiler).__name__}")
    lib = dev.compile(source)
    h.cpu_objdump(lib)
    out = capsys.readouterr().out
    assert "Disassembly of section .text" in out and "<tiny_kernel>" in out
    with pytest.raises(FileNotFoundError, match="not installed"):
        h.cpu_objdump(lib, objdump_tool="no-such-objdump")
    with pytest.raises(ValueError, match="failed"):
        h.cpu_objdump(b"not an object file")


def test_cache_database() -> None:
    assert h.CACHEDB.endswith("cache.db")
    conn = h.db_connection()
    assert conn is h.db_connection()
    assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.kernels
def test_no_memory_planner_turns_off_the_jit_memory_plan() -> None:
    def chain(x: Tensor) -> Tensor:
        a = (x * 2).contiguous()
        b = (a + 1).contiguous()
        return (b * b).sum(0).realize()

    for planner_off, planned in ((0, True), (1, False)):
        with Context(NO_MEMORY_PLANNER=planner_off):
            jit = TinyJit(chain, optimize=True)
            for _ in range(3):
                x = np.abs(np.random.default_rng(0).normal(size=(16, 8))).astype(np.float32)
                got = jit(Tensor(x)).numpy()
                np.testing.assert_allclose(got, ((x * 2 + 1) ** 2).sum(0), rtol=1e-5)
        assert (jit.memory_plan[0] > 0) is planned


def test_buffer_takes_tinygrads_positional_parameters() -> None:
    buf = Buffer("CPU", 2, dtypes.int32, None, None, b"\x01\0\0\0\x02\0\0\0", 3)
    assert buf.uop_refcount == 3
    assert np.frombuffer(bytes(buf.as_memoryview()), np.int32).tolist() == [1, 2]
    assert Buffer("CPU", 1, dtypes.int8).uop_refcount == 0


def test_compile_error_with_one_message() -> None:
    e = CompileError("nvrtc: bad code")
    assert str(e) == "nvrtc: bad code" and e.compiler_message == "nvrtc: bad code"
    assert e.kernel == ""
    full = CompileError("E_4", "error: x undeclared", "int x;\ny = 1;", [2])
    assert "compiling E_4 failed" in str(full) and "y = 1;" in str(full)


def test_multibuffer_holds_one_buffer_per_device() -> None:
    from fusegrad.device import MultiBuffer

    m = MultiBuffer(("CPU:0", "CPU:1"), 3, dtypes.float32)
    assert m.device == ("CPU", "CPU:1") and m.size == 3 and m.nbytes == 12
    assert m.ensure_allocated() is m
    m.bufs[1].copyin(memoryview(np.array([1, 2, 3], np.float32).tobytes()))
    assert np.frombuffer(bytes(m.bufs[1].as_memoryview()), np.float32).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="non-empty tuple"):
        MultiBuffer("CPU", 3, dtypes.float32)  # type: ignore[arg-type]


def test_disallow_broadcast_from_tensor_code() -> None:
    a, b = Tensor.ones(2, 3), Tensor.ones(3)
    assert (a + b).shape == (2, 3)
    with h.Context(DISALLOW_BROADCAST=1):
        with pytest.raises(RuntimeError, match="DISALLOW_BROADCAST"):
            a + b
        assert (a + 1).tolist() == [[2.0] * 3] * 2  # a Python scalar still spreads
