"""The "contract fma" stage: accumulator updates ``acc + a * b`` become MULACC (one rounding)
for float32/float64 on targets with MULACC; elementwise ``a * b + c``, narrow floats,
products used twice and targets without MULACC are left alone. The PYTHON emulator, LLVM
and C see the same MULACCs and agree bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import targets as T
from fusegrad.codegen import KernelInfo, ProgramSpec, to_program
from fusegrad.codegen.lower.fma import contract_fma
from fusegrad.codegen.opt import Opt, OptOps, apply_opts
from fusegrad.uop import AddrSpace, AxisType, DType, Ops, UOp, dtypes, exec_alu

CPU = T.RENDERERS["cpu"]


def _matmul(n: int, k_: int, m: int, dt: DType = dtypes.float32, opts: tuple[Opt, ...] = ()) -> UOp:
    c, a, b = T.buf(0, dt, n * m), T.buf(1, dt, n * k_), T.buf(2, dt, k_ * m)
    i, j, k = T.rng(n, 0), T.rng(m, 1), T.rng(k_, 2, AxisType.REDUCE)
    val = (a.index(i * k_ + k).load() * b.index(k * m + j).load()).reduce(k, arg=Ops.ADD)
    ast = UOp.sink(c.index(i * m + j).store(val).end(i, j), arg=KernelInfo("mm"))
    return apply_opts(ast, opts, CPU) if opts else ast


def _ops(spec: ProgramSpec, op: Ops) -> list[UOp]:
    return [u for u in spec.uops if u.op is op]


def _inputs(n: int, k_: int, m: int, dt: DType) -> list[np.ndarray]:
    """A and B with full mantissas (every product rounds), B's rows alternating in sign (the
    sums cancel, so the products' rounding errors show)."""
    rs = np.random.default_rng(3)
    npdt = np.float32 if dt is dtypes.float32 else np.float64
    a = (rs.random((n, k_)) + 0.5).astype(npdt)
    b = (rs.random((k_, m)) + 0.5).astype(npdt)
    b[1::2] *= -1
    return [np.zeros(n * m, npdt), a.reshape(-1), b.reshape(-1)]


def _fused_reference(a: np.ndarray, b: np.ndarray, dt: DType) -> np.ndarray:
    """Row-major C = A @ B summed in k order with one exec_alu fma per step."""
    n, k_ = a.shape
    m = b.shape[1]
    out = np.zeros((n, m), a.dtype)
    for i in range(n):
        for j in range(m):
            acc = 0.0
            for k in range(k_):
                acc = exec_alu(Ops.MULACC, dt, [float(a[i, k]), float(b[k, j]), acc])
            out[i, j] = acc
    return out


@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float64], ids=str)
@pytest.mark.parametrize("opts", ["plain", "upcast"])
def test_matmul_accumulates_with_mulacc(dt: DType, opts: str) -> None:
    blocked = (Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UPCAST, 0, 2)) if opts == "upcast" else ()
    spec = to_program(_matmul(4, 6, 8, dt, blocked), CPU)
    fmas = _ops(spec, Ops.MULACC)
    assert fmas and all(u.dtype.scalar() is dt for u in fmas)
    if opts == "upcast":
        assert all(u.dtype.count > 1 for u in fmas)  # vector fma
    assert not [u for u in spec.uops if u.op is Ops.MUL and u.dtype.scalar() is dt]
    arrays = _inputs(4, 6, 8, dt)
    arrays = T.run_program(spec, arrays)
    a, b = arrays[1].reshape(4, 6), arrays[2].reshape(6, 8)
    want = _fused_reference(a, b, dt)
    np.testing.assert_array_equal(arrays[0].reshape(4, 8), want)
    unfused = np.zeros((4, 8), a.dtype)
    for k in range(6):  # the same order, rounding the products: differs somewhere
        unfused = unfused + a[:, k : k + 1] * b[k : k + 1, :]
    assert (unfused != want).any()


@pytest.mark.parametrize(
    ("rows", "opts"),
    [
        (4, (Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 1, 8))),  # the target's vectors
        (4, (Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 2))),  # one vector of 4
        (5, (Opt(OptOps.PADTO, 0, 6), Opt(OptOps.UPCAST, 0, 6))),  # 6 lanes: split up
        (6, (Opt(OptOps.UPCAST, 0, 3),)),
    ],
    ids=["4x8", "2x2", "6-rows-padded", "3-rows"],
)
def test_every_accumulator_lane_is_contracted(rows: int, opts: tuple[Opt, ...]) -> None:
    spec = to_program(_matmul(rows, 6, 8, opts=opts), CPU)
    assert _ops(spec, Ops.MULACC)
    assert not [u for u in spec.uops if u.op is Ops.MUL and u.dtype.scalar() is dtypes.float32]


def test_no_mulacc_without_target_support() -> None:
    spec = to_program(_matmul(4, 6, 8), T.RENDERERS["gpu"])
    assert not _ops(spec, Ops.MULACC)
    spec = to_program(_matmul(4, 6, 8), T.RENDERERS["scalar"])
    assert not _ops(spec, Ops.MULACC)


def test_half_and_int_accumulators_stay_unfused() -> None:
    for dt in (dtypes.float16, dtypes.bfloat16, dtypes.int32):
        spec = to_program(_matmul(2, 3, 4, dt), CPU)
        assert not _ops(spec, Ops.MULACC), dt


def test_elementwise_multiply_add_is_not_contracted() -> None:
    out, a, b, c = (T.buf(s, dtypes.float32, 16) for s in range(4))
    i = T.rng(16, 0)
    value = a.index(i).load() * b.index(i).load() + c.index(i).load()
    spec = to_program(UOp.sink(out.index(i).store(value).end(i)), CPU)
    assert not _ops(spec, Ops.MULACC)
    assert _ops(spec, Ops.MUL) and _ops(spec, Ops.ADD)


class _Ctx:
    renderer = CPU


def _accumulation(extra_use: bool) -> tuple[UOp, UOp]:
    """A lowered-form accumulator loop ``reg += a[k] * b[k]`` (optionally also storing the
    product elsewhere); (sink, the product)."""
    out, a, b, spare = (T.buf(s, dtypes.float32, 8) for s in range(4))
    reg = UOp(Ops.DEFINE_REG, dtypes.float32.ptr(1, AddrSpace.REG), (), 0)
    zero = UOp.const(0, dtypes.weakint)
    init = reg.index(zero).store(UOp.const(0.0, dtypes.float32))
    k = T.rng(8, 0, AxisType.REDUCE)
    acc = reg.after(init, k).index(zero).load()
    prod = a.index(k).load() * b.index(k).load()
    effects = [reg.index(zero).store(acc + prod)]
    if extra_use:
        effects.append(spare.index(k).store(prod))
    done = UOp.group(*effects).end(k) if extra_use else effects[0].end(k)
    result = out.index(zero).store(reg.after(done).index(zero).load())
    return UOp.sink(result), prod


def test_stage_contracts_the_accumulator_update() -> None:
    sink, prod = _accumulation(extra_use=False)
    got = contract_fma(sink, _Ctx())  # type: ignore[arg-type]
    fmas = [u for u in got.toposort() if u.op is Ops.MULACC]
    assert len(fmas) == 1 and fmas[0].src[:2] == prod.src
    assert fmas[0].src[2].op is Ops.LOAD and prod not in got.toposort()


def test_product_with_another_use_is_not_contracted() -> None:
    sink, _ = _accumulation(extra_use=True)
    assert contract_fma(sink, _Ctx()) is sink  # type: ignore[arg-type]


def test_stage_is_a_no_op_without_accumulators() -> None:
    out, a = T.buf(0, dtypes.float32, 8), T.buf(1, dtypes.float32, 8)
    i = T.rng(8, 0)
    sink = UOp.sink(out.index(i).store(a.index(i).load() * 2.0 + 1.0).end(i))
    assert contract_fma(sink, _Ctx()) is sink  # type: ignore[arg-type]


@pytest.mark.parametrize("target", ["LLVM", "C-gcc"])
def test_compiled_matmul_matches_emulator_bit_for_bit(target: str) -> None:
    from fusegrad.renderer.conformance import conformance_targets

    found = [t for t in conformance_targets() if t.name == target]
    if not found or found[0].unavailable() is not None:
        pytest.skip(f"{target} is not available here")
    from fusegrad.renderer import CCompiler, CRenderer, LLVMCompiler, LLVMRenderer

    renderer, compiler = (
        (LLVMRenderer(fast_math=False), LLVMCompiler())
        if target == "LLVM"
        else (CRenderer(), CCompiler("gcc"))
    )
    for dt in (dtypes.float32, dtypes.float64):
        blocked = (Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UPCAST, 0, 2))
        ast = _matmul(4, 6, 8, dt)
        spec = to_program(apply_opts(ast, blocked, renderer), renderer)
        assert _ops(spec, Ops.MULACC)
        arrays = _inputs(4, 6, 8, dt)
        want = T.run_program(spec, arrays)
        got = [a.copy() for a in arrays]
        src = T.run_compiled(spec, renderer, compiler, got)
        assert "llvm.fma" in src or "__builtin_fma" in src
        np.testing.assert_array_equal(got[0], want[0])
        a, b = arrays[1].reshape(4, 6), arrays[2].reshape(6, 8)
        np.testing.assert_array_equal(got[0].reshape(4, 8), _fused_reference(a, b, dt))
