"""The PTX renderer's output run by a PTX interpreter written from the ISA's definitions
(``ptx_interp``): every conformance kernel must give the PYTHON emulator's results, so the
renderer's bridges between PTX and ``exec_alu`` (guarded division, clamped shifts, NaN-first
MAX, x86-style float -> int, f16/bf16 rounding and NaN bits) are checked without a GPU; and
lowered GPU kernels (hardware ids, shared memory, barriers) run with their launch sizes.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad.codegen import to_program
from fusegrad.renderer import PTXRenderer, ptx_signature
from fusegrad.renderer.conformance import compare, fresh_buffers
from fusegrad.renderer.corpus import Case, corpus
from fusegrad.runtime import run_linear
from fusegrad.uop import DType, Ops, UOp, dtypes, sym_infer

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
import ptx_interp

ARCH = "sm_90"


@functools.cache
def _renderer() -> PTXRenderer:
    return PTXRenderer(ARCH)


@functools.cache
def _corpus() -> tuple[Case, ...]:
    return tuple(corpus(_renderer()))


def _grid(uops: Sequence[UOp], var_vals: Mapping[str, int]) -> tuple[int, int, int]:
    core = next((u for u in uops if u.op is Ops.SPECIAL and u.arg == "core"), None)
    return (1, 1, 1) if core is None else (int(sym_infer(core.src[0], var_vals)), 1, 1)


def run_on_interpreter(
    uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]
) -> None:
    """Render ``uops`` as PTX and run it in the interpreter (one thread, a block per core)."""
    prog = list(uops)
    src = _renderer().render(prog, "k")
    sig = ptx_signature(prog, "k")
    scalars = [var_vals[v.arg[0]] for v in sig.variables]
    ordered = [bufs[int(b.arg)] for b in sig.buffers]
    ptx_interp.run_ptx(src, ordered, scalars, grid=_grid(prog, var_vals))


@pytest.mark.parametrize("case", _corpus(), ids=lambda c: c.name)
def test_interpreted_ptx_matches_emulator(case: Case) -> None:
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, case.var_vals)
    run_on_interpreter(case.uops, got, case.var_vals)
    mismatches = compare(case, want, got)
    assert not mismatches, f"{case.name}:\n" + "\n".join(mismatches)


# -- narrow integers kept in range between ops --------------------------------------------------


def _chain_case(dt: DType) -> Case:
    """(a + b) then compared, divided, shifted and multiplied again: each step must see the
    wrapped value of the previous one (the 32-bit registers re-extend after every op)."""
    from fusegrad.renderer.corpus import Builder, alu, alu_values, end, index, load, rng, store

    vals = alu_values(dt)
    pairs = [(x, y) for x in vals for y in vals]
    p = Builder()
    a = p.buffer(dt, [x for x, _ in pairs])
    b = p.buffer(dt, [y for _, y in pairs])
    outs = {k: p.output(dt if k != "lt" else dtypes.bool, len(pairs), k) for k in ops_chain()}
    i = p.add(rng(len(pairs)))
    x, y = load(index(a, i)), load(index(b, i))
    s = alu(Ops.ADD, x, y)
    two = UOp.const(dtype=dt, b=2)
    results = {
        "lt": alu(Ops.CMPLT, s, x),
        "div": alu(Ops.CDIV, s, alu(Ops.ADD, y, two)),
        "shr": alu(Ops.SHR, alu(Ops.MUL, s, y), UOp.const(dtype=dt, b=1)),
        "max": alu(Ops.MAX, alu(Ops.SUB, x, y), alu(Ops.NEG, s)),
        "mulacc": alu(Ops.ADD, alu(Ops.MULACC, x, y, s), alu(Ops.SHL, s, two)),
    }
    for k, v in results.items():
        p.add(store(index(outs[k], i), v))
    p.add(end(i))
    return p.case(f"chain-{dt.name}")


def ops_chain() -> tuple[str, ...]:
    return ("lt", "div", "shr", "max", "mulacc")


@pytest.mark.parametrize(
    "dt", [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16], ids=lambda d: d.name
)
def test_narrow_integer_chains_wrap_between_ops(dt: DType) -> None:
    case = _chain_case(dt)
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, case.var_vals)
    run_on_interpreter(case.uops, got, case.var_vals)
    mismatches = compare(case, want, got)
    assert not mismatches, "\n".join(mismatches)


# -- lowered GPU kernels: ids, shared memory, barriers ---------------------------------------------

LOWER_TESTS = Path(__file__).parents[2] / "codegen" / "lower"


def _lowering_module(name: str) -> Any:
    mod_name = f"_fusegrad_tests_ptx_sem_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, LOWER_TESTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return mod


def _lowered_cases() -> list[Any]:
    if not (LOWER_TESTS / "corpus.py").exists():
        return []
    out = []
    for c in _lowering_module("corpus").build():
        for variant in ("plain", "gpu") if "gpu" in c.opts else ("plain",):
            out.append(pytest.param(c, variant, id=f"{c.name}-{variant}"))
    return out


@pytest.mark.parametrize(("c", "variant"), _lowered_cases())
def test_lowered_kernel_runs_in_the_interpreter(c: Any, variant: str) -> None:
    """Codegen's lowering corpus for the PTX renderer (every output a GPU thread; with the
    case's GPU opts: workgroups, shared memory, barriers), run from its PTX."""
    targets = _lowering_module("targets")
    spec = to_program(c.opts["gpu"](c.ast) if variant == "gpu" else c.ast, _renderer())
    want = targets.run_program(spec, c.inputs, c.var_vals)
    got = [np.array(a, dtype=w.dtype).reshape(-1) for a, w in zip(c.inputs, want, strict=True)]
    gs, ls = spec.launch_dims(c.var_vals)
    sig = ptx_signature(list(spec.uops), spec.name)
    views = [bytearray(got[int(b.arg)].tobytes()) for b in sig.buffers]
    scalars = [c.var_vals[str(v.arg[0])] for v in sig.variables]
    assert isinstance(spec.src, str)
    ptx_interp.run_ptx(spec.src, views, scalars, grid=gs, block=ls or (1, 1, 1))
    for b, raw in zip(sig.buffers, views, strict=True):
        slot = int(b.arg)
        out = np.frombuffer(raw, dtype=want[slot].dtype)
        np.testing.assert_array_equal(out, want[slot], err_msg=f"buffer {slot}")


def test_heuristic_matmul_runs_in_the_interpreter() -> None:
    """A 64 x 8 @ 8 x 64 matmul with the GPU heuristics (register block, 2-D workgroup,
    unrolled K); K is short to keep the interpreter quick."""
    from fusegrad.codegen import KernelInfo
    from fusegrad.uop import AxisType

    n, kk = 64, 8
    out = UOp.param(0, dtypes.float32.ptr(n * n))
    a, b = UOp.param(1, dtypes.float32.ptr(n * kk)), UOp.param(2, dtypes.float32.ptr(kk * n))
    i, j = UOp.range(n, 0, AxisType.LOOP), UOp.range(n, 1, AxisType.LOOP)
    k = UOp.range(kk, 2, AxisType.REDUCE)
    acc = (a.index(i * kk + k).load() * b.index(k * n + j).load()).reduce(k, arg=Ops.ADD)
    ast = UOp.sink(out.index(i * n + j).store(acc).end(i, j), arg=KernelInfo("mm"))
    spec = to_program(ast, _renderer())
    assert [o.op.name for o in spec.applied_opts].count("UPCAST") == 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, kk)).astype(np.float32)
    y = rng.standard_normal((kk, n)).astype(np.float32)
    bufs = [bytearray(n * n * 4), bytearray(x.tobytes()), bytearray(y.tobytes())]
    gs, ls = spec.launch_dims({})
    assert isinstance(spec.src, str) and ".v4.f32" in spec.src
    ptx_interp.run_ptx(spec.src, bufs, grid=gs, block=ls or (1, 1, 1))
    got = np.frombuffer(bufs[0], np.float32).reshape(n, n)
    np.testing.assert_allclose(got, x @ y, rtol=1e-5, atol=1e-5)


def test_interpreter_fp8_conversions_agree_with_exec_alu() -> None:
    """The interpreter's fp8 (ISA) against exec_alu's: every code decoded, and float32 values
    across both formats' ranges (subnormals, ties, saturation) encoded."""
    from fusegrad.uop import bitcast, truncate

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(-600, 600, 500), rng.uniform(-1e-3, 1e-3, 500)])
    values = np.concatenate([values, [2.0**-k * 1.5 for k in range(25)], [6e4, -1e5, 0.0]])
    for kind, dt in (("e4m3x2", dtypes.fp8e4m3), ("e5m2x2", dtypes.fp8e5m2)):
        for code in range(256):
            got, want = ptx_interp.fp8_decode(code, kind), bitcast(code, dtypes.uint8, dt)
            assert got == want or (np.isnan(got) and np.isnan(want)), (kind, code)
        for x in values.astype(np.float32).tolist():
            want = bitcast(truncate(dt)(x), dt, dtypes.uint8)
            assert ptx_interp.fp8_encode(x, kind) == want, (kind, x)
