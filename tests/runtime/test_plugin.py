"""The example backend plugin (examples/backend-plugin): installed into a temporary folder,
found through the ``fusegrad.backends`` entry point, and checked against the PYTHON
emulator on a subset of kernels (loops, reductions, gates, core splits, Variables, casts,
ALU ops)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad.runtime import Buffer, Device, run_linear
from fusegrad.uop import AxisType, DType, Ops, UOp, dtypes

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "backend-plugin"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: Any) -> Path:
    if not any(Path(p, "gcc").exists() or Path(p, "cc").exists() for p in os.get_exec_path()):
        pytest.skip("no C compiler")
    target = tmp_path_factory.mktemp("plugin")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
           "--no-deps", "--no-compile", "--target", str(target), str(PLUGIN)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return target


@pytest.fixture
def example(plugin_dir: Path, monkeypatch: Any) -> Any:
    monkeypatch.syspath_prepend(str(plugin_dir))
    return Device["EXAMPLE"]


def test_device_list_shows_the_plugin(plugin_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(plugin_dir)}
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "fusegrad.runtime"],
        capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "EXAMPLE  available   ExampleDevice" in done.stdout
    assert "renderer EXC    ok" in done.stdout


def _run_both(
    dev: Any, rt: Any, prog: list[UOp], arrays: list[np.ndarray], vals: dict[str, int] | None = None
) -> list[np.ndarray]:
    """Run ``prog`` on the plugin and on the emulator; return both results per array."""
    spec = rt.spec_for("k", prog, device="EXAMPLE")
    src = dev.renderer.render(prog, name="k")
    prg = dev.load(spec, dev.compile(src))
    bufs = [Buffer("EXAMPLE", a.size, _dt(a)).copyin(a) for a in arrays]
    vals = vals or {}
    dev.exec(prg, [b.opaque for b in bufs], list(vals.values()), wait=True)
    ref = [a.copy() for a in arrays]
    run_linear(prog, ref, vals)
    for got, want in zip(bufs, ref, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    return ref


def _dt(a: np.ndarray) -> DType:
    return {np.dtype(np.float32): dtypes.float32, np.dtype(np.int32): dtypes.int32,
            np.dtype(np.uint32): dtypes.uint32, np.dtype(np.int8): dtypes.int8}[a.dtype]  # fmt: skip


def test_elementwise_loop(example: Any, rt: Any, lb: Any) -> None:
    n = 33
    a, b = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    pa, pb, po = (lb.buf(i, dtypes.float32, n) for i in range(3))
    r = lb.rng(n)
    x, y = lb.load(pa.index(r)), lb.load(pb.index(r))
    st = lb.store(po.index(r), x * y + UOp.const(1.0, dtypes.float32))
    ref = _run_both(example, rt, lb.linear(r, st, lb.end(r)), [a, b, np.zeros(n, np.float32)])
    np.testing.assert_array_equal(ref[2], a * b + np.float32(1))


def test_reduction_with_register(example: Any, rt: Any, lb: Any) -> None:
    n = 100
    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    pa, po = lb.buf(0, dtypes.float32, n), lb.buf(1, dtypes.float32, 1)
    acc, zero, r = lb.reg("acc", dtypes.float32, 1), lb.c32(0), lb.rng(n, 0, AxisType.REDUCE)
    init = lb.store(acc.index(zero), UOp.const(0.0, dtypes.float32))
    upd = lb.store(acc.index(zero), lb.load(acc.index(zero)) + lb.load(pa.index(r)))
    done = lb.end(r)
    fin = lb.store(po.index(zero), lb.load(acc.after(done).index(zero)))
    _run_both(example, rt, lb.linear(init, r, upd, done, fin), [a, np.zeros(1, np.float32)])


def test_gates_core_split_and_variables(example: Any, rt: Any, lb: Any) -> None:
    cores, per = 4, 5
    a = np.arange(cores * per, dtype=np.int32) * 7
    core, n = lb.special("core", cores), lb.var("n", 1, per)
    pa, po = lb.buf(0, dtypes.int32, a.size), lb.buf(1, dtypes.int32, a.size)
    r = lb.rng(n, 0, AxisType.THREAD)
    i = core * per + r
    v = lb.load(pa.index(i - 1, gate=i > 0), alt=lb.c32(-1))
    st = lb.store(po.index(i, gate=r.cmod(2).eq(0)), v)
    ref = _run_both(example, rt, lb.linear(core, r, st, lb.end(r)), [a, np.zeros_like(a)], {"n": 4})
    assert ref[1][0] == -1 and ref[1][2] == a[1] and ref[1][4] == 0


@pytest.mark.parametrize("op", [Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.MAX, Ops.CMPLT])
def test_float_alu(example: Any, rt: Any, lb: Any, op: Ops) -> None:
    n = 16
    a = np.array([1.5, -2, 0, np.nan, np.inf, -0.0, 3e38, 1e-40] * 2, np.float32)
    b = np.roll(a, 3)
    out_dt = dtypes.bool if op is Ops.CMPLT else dtypes.float32
    pa, pb, po = (
        lb.buf(0, dtypes.float32, n),
        lb.buf(1, dtypes.float32, n),
        lb.buf(2, dtypes.float32, n),
    )
    r = lb.rng(n)
    val = UOp(op, out_dt, (lb.load(pa.index(r)), lb.load(pb.index(r))))
    if out_dt is dtypes.bool:
        val = UOp(Ops.CAST, dtypes.float32, (val,))
    prog = lb.linear(r, lb.store(po.index(r), val), lb.end(r))
    with np.errstate(all="ignore"):
        _run_both(example, rt, prog, [a, b, np.zeros(n, np.float32)])


@pytest.mark.parametrize("op", [Ops.ADD, Ops.MUL, Ops.CDIV, Ops.CMOD, Ops.XOR, Ops.SHR])
def test_uint32_alu_wraps(example: Any, rt: Any, lb: Any, op: Ops) -> None:
    n = 16
    rs = np.random.default_rng(2)
    a = rs.integers(0, 2**32, n, dtype=np.uint32)
    b = (
        rs.integers(0, 2**32, n, dtype=np.uint32)
        if op is not Ops.SHR
        else np.arange(n, dtype=np.uint32)
    )
    b[0] = 0  # division by zero gives 0 on both
    p = [lb.buf(i, dtypes.uint32, n) for i in range(3)]
    r = lb.rng(n)
    val = UOp(op, dtypes.uint32, (lb.load(p[0].index(r)), lb.load(p[1].index(r))))
    prog = lb.linear(r, lb.store(p[2].index(r), val), lb.end(r))
    _run_both(example, rt, prog, [a, b, np.zeros(n, np.uint32)])


def test_casts_and_bitcast(example: Any, rt: Any, lb: Any) -> None:
    n = 6
    a = np.array([1.9, -1.9, 300.5, -129.0, 0.0, 127.99], np.float32)
    pa, pi, pb = (
        lb.buf(0, dtypes.float32, n),
        lb.buf(1, dtypes.int8, n),
        lb.buf(2, dtypes.uint32, n),
    )
    r = lb.rng(n)
    x = lb.load(pa.index(r))
    as_i8 = UOp(Ops.CAST, dtypes.int8, (UOp(Ops.CAST, dtypes.int32, (x,)),))
    bits = UOp(Ops.BITCAST, dtypes.uint32, (x,))
    prog = lb.linear(r, lb.store(pi.index(r), as_i8), lb.store(pb.index(r), bits), lb.end(r))
    ref = _run_both(example, rt, prog, [a, np.zeros(n, np.int8), np.zeros(n, np.uint32)])
    np.testing.assert_array_equal(ref[2], a.view(np.uint32))


# -- the plugin as a renderer conformance target and as a device for Tensor programs ------------


def test_plugin_passes_the_renderer_conformance_suite(plugin_dir: Path, monkeypatch: Any) -> None:
    from fusegrad.renderer.conformance import check_target, conformance_targets
    from fusegrad.renderer.corpus import corpus

    monkeypatch.syspath_prepend(str(plugin_dir))
    target = next(t for t in conformance_targets() if t.name == "EXAMPLE")  # its entry point
    assert target.unavailable() is None
    assert len(corpus(target.make_renderer())) >= 40
    assert check_target(target, run_linear) == {}


def test_tensor_programs_run_on_the_plugin_device(example: Any) -> None:
    from fusegrad import Tensor

    rng = np.random.default_rng(3)
    a = rng.standard_normal((12, 8)).astype(np.float32)
    b = rng.standard_normal((8, 5)).astype(np.float32)
    ta, tb = Tensor(a, device="EXAMPLE"), Tensor(b, device="EXAMPLE")
    out = (ta @ tb + 1).relu().sum(0)
    assert out.device == "EXAMPLE"
    np.testing.assert_allclose(out.numpy(), np.maximum(a @ b + 1, 0).sum(0), rtol=1e-5, atol=1e-5)
    want = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(ta.softmax(1).numpy(), want / want.sum(1, keepdims=True), atol=1e-6)
    ints = Tensor(np.arange(-10, 30, dtype=np.int32), device="EXAMPLE")
    np.testing.assert_array_equal(((ints * 3) % 7).numpy(), (np.arange(-10, 30) * 3) % 7)
    back = ta.to("CPU").sum(1) - (ta * 1).to("CPU").sum(1)
    assert back.device == "CPU" and np.all(back.numpy() == 0)
