"""The device registry, DEV, the device list command, and the PYTHON/NULL devices end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from fusegrad.runtime import (
    Buffer,
    Device,
    NullDevice,
    PythonProgram,
    PythonRenderer,
    Unavailable,
    canonicalize,
    parse_dev,
)
from fusegrad.uop import Context, dtypes


def test_devices_are_cached_per_canonical_name() -> None:
    assert Device["PYTHON"] is Device["python"] is Device["PYTHON:0"]
    assert Device["CPU:1"] is not Device["CPU"] and Device["CPU:1"].device == "CPU:1"


@pytest.mark.parametrize(
    "name,canon",
    [("cpu", "CPU"), ("CPU:0", "CPU"), ("cpu:2", "CPU:2"), ("disk:/tmp/x", "DISK:/tmp/x")],
)
def test_canonicalize(name: str, canon: str) -> None:
    assert canonicalize(name) == canon


def test_bad_names_and_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="expected KIND or KIND:index"):
        canonicalize("CPU:fast")
    with pytest.raises(KeyError, match=r"no device kind 'NOPE'; known: \[.*'CPU'.*\]"):
        Device["NOPE"]


@pytest.mark.parametrize(
    "dev,parsed",
    [
        ("CPU", ("CPU", "CPU", None)),
        ("CPU:LLVM", ("CPU", "CPU", "LLVM")),
        ("cpu:c", ("CPU", "CPU", "C")),
        ("CPU:1", ("CPU:1", "CPU", None)),
        ("NULL:LLVM", ("NULL", "NULL", "LLVM")),
    ],
)
def test_parse_dev(dev: str, parsed: tuple[str, str, str | None]) -> None:
    assert parse_dev(dev) == parsed


def test_dev_picks_the_default_device_and_renderer() -> None:
    with Context(DEV="PYTHON"):
        assert Device.DEFAULT == "PYTHON"
    with Context(DEV="NULL:PY"):
        assert Device.DEFAULT == "NULL"
        assert isinstance(NullDevice("NULL").renderer, PythonRenderer)
    with Context(DEV="NULL:LLVM"):
        dev = NullDevice("NULL")
        assert dev.choice == "LLVM"
        status = dict(dev.compiler_status())
        if status["LLVM"] != "ok":
            with pytest.raises(Unavailable, match="LLVM"):
                _ = dev.renderer


def test_default_without_dev_is_an_available_device() -> None:
    with Context(DEV=""):
        assert Device.DEFAULT in ("CPU", "PYTHON")
        assert any(s == "ok" for _, s in Device[Device.DEFAULT].compiler_status())


def test_device_list_command_reports_each_kind() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "fusegrad.runtime"],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "PYTHON   available" in out and "renderer PY     ok" in out
    for kind in ("CPU", "NULL", "DISK"):
        assert kind in out
    assert "unavailable:" in out or re.search(r"renderer LLVM\s+ok", out)
    assert "default:" in out


def _square_program(lb: Any, n: int) -> list[Any]:
    i = lb.special("gidx0", n)
    pa, po = lb.buf(0, dtypes.float32, n), lb.buf(1, dtypes.float32, n)
    x = lb.load(pa.index(i))
    return lb.linear(lb.store(po.index(i), x * x))


def test_python_device_renders_compiles_loads_and_runs(lb: Any, rt: Any) -> None:
    n = 10
    dev = Device["PYTHON"]
    uops = _square_program(lb, n)
    spec = rt.spec_for("square", uops, src=dev.renderer.render(uops), global_size=(n, 1, 1))
    prg = dev.load(spec)
    assert isinstance(prg, PythonProgram) and prg.uops == uops
    a = np.arange(n, dtype=np.float32) - 3
    ba, bo = Buffer("PYTHON", n, dtypes.float32).copyin(a), Buffer("PYTHON", n, dtypes.float32)
    dev.exec(prg, [ba.opaque, bo.opaque], [], spec.global_size)
    np.testing.assert_array_equal(bo.numpy(), a * a)  # numpy() waits for the queue


def test_python_device_out_of_bounds_kernel_raises_at_synchronize(lb: Any, rt: Any) -> None:
    dev = Device["PYTHON"]
    uops = _square_program(lb, 8)
    prg = dev.load(rt.spec_for("oob", uops, src=dev.renderer.render(uops)))
    small, big = Buffer("PYTHON", 4, dtypes.float32), Buffer("PYTHON", 8, dtypes.float32)
    dev.exec(prg, [big.opaque, small.opaque], [], (8, 1, 1))
    with pytest.raises(IndexError, match=r"index 4 out of bounds for buffer slot 1 \(4 elements"):
        dev.synchronize()


def test_python_device_passes_variables_by_position(lb: Any, rt: Any) -> None:
    dev = Device["PYTHON"]
    n = lb.var("n", 1, 16)
    po = lb.buf(0, dtypes.int32, 16)
    r = lb.rng(n)
    uops = lb.linear(r, lb.store(po.index(r), r * 3), lb.end(r))
    prg = dev.load(rt.spec_for("vars", uops, src=dev.renderer.render(uops)))
    # fresh memory may be recycled by the LRU allocator: zero it, the kernel writes 5 of 16
    out = Buffer("PYTHON", 16, dtypes.int32).copyin(bytearray(64))
    dev.exec(prg, [out.opaque], [5])
    assert out.numpy().tolist() == [0, 3, 6, 9, 12] + [0] * 11


def test_null_device_compiles_but_runs_and_stores_nothing(lb: Any, rt: Any) -> None:
    dev = NullDevice("NULL")
    with Context(DEV="NULL:PY"):
        dev.select_compiler("PY")
    uops = _square_program(lb, 4)
    spec = rt.spec_for("sq", uops, src=dev.renderer.render(uops))
    assert dev.compile(str(spec.src))  # really compiled
    b = Buffer("NULL", 4, dtypes.float32).copyin(np.ones(4, np.float32))
    dev.exec(dev.load(spec), [b.opaque, b.opaque], [], wait=True)
    assert bytes(b.as_memoryview()) == bytes(16)
    dev.close()
