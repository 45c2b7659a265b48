"""Accuracy of the transcendental approximations: the UOp graph the pipeline emits, evaluated
with NumPy on >= 10^6 float32 points per function (random bit patterns over every finite
float32, dense sweeps of the interesting range, edge cases), against NumPy float64; float64
against NumPy long double. The same graphs on vectors: the pipeline keeps them whole (no
lane-by-lane split), the PYTHON emulator and the LLVM-compiled kernel agree bit for bit.

Stated bounds (ulp of the correctly rounded result): float32 exp2 <= 1.5, log2 <= 0.51,
sin <= 0.51 (every finite float32), sqrt <= 1; on targets without float64: log2 <= 2,
sin <= 2; float64 exp2 <= 1.5, log2 <= 2, sin <= 2 for
|x| < 2**50 (beyond: a value in [-1, 1]); special values (NaN, +-inf, +-0.0, subnormals)
exact."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import targets as _targets
from fusegrad.codegen import KernelInfo
from fusegrad.codegen.lower import to_program
from fusegrad.codegen.lower.transcendental import is_native, xexp2, xlog2, xpow, xsin, xsqrt
from fusegrad.uop import AxisType, DType, Ops, UOp, dtypes
from npeval import np_eval

X32 = UOp(Ops.DEFINE_VAR, dtypes.float32, (), ("x", -math.inf, math.inf))
_rs = np.random.default_rng(1234)

EDGES = np.array(
    [0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, -3.4028235e38,
     1.0, -1.0, 0.5, 2.0, 127.99999, 128.0, -126.0, -149.0, -150.0, -149.5, 1e-30, 1e30,
     math.pi / 2, math.pi, 3 * math.pi / 2, 2 * math.pi, 1e5 * math.pi, 102940.38, 16777216.0,
     np.nextafter(np.float32(1), np.float32(2)), np.nextafter(np.float32(1), np.float32(0))],
    np.float32,
)  # fmt: skip


def _sweep(lo: float, hi: float, n: int = 420_000) -> np.ndarray:
    every = _rs.integers(0, 2**32, size=600_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = (_rs.random(n) * (hi - lo) + lo).astype(np.float32)
    xs = np.concatenate([every[np.isfinite(every)], dense, EDGES])
    return xs


def ulp_error(approx: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|approx - exact| in float32 ulps of the exact result (finite, in-range results)."""
    spacing = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    spacing = np.where(spacing == 0, 2.0**-149, spacing)
    return np.abs(approx.astype(np.float64) - exact) / spacing


def _check(
    name: str, fn: Callable[[UOp], UOp], ref: Callable[..., Any], xs: np.ndarray, bound: float
) -> None:
    got = np_eval(fn(X32), {X32: xs})
    with np.errstate(all="ignore"):
        exact = ref(xs.astype(np.float64))
        want32 = exact.astype(np.float32)
    finite = np.isfinite(exact) & (np.abs(exact) <= float(np.finfo(np.float32).max))
    err = ulp_error(got[finite], exact[finite])
    worst = int(np.argmax(err))
    print(f"{name}: {len(xs)} points, max error {err.max():.3f} ulp at x={xs[finite][worst]!r}")
    assert len(xs) >= 1_000_000
    assert err.max() <= bound, (name, xs[finite][worst], got[finite][worst], exact[finite][worst])
    special = ~finite
    assert np.array_equal(np.isnan(got[special]), np.isnan(want32[special]))
    both = special & ~np.isnan(want32)
    np.testing.assert_array_equal(got[both], want32[both])


def test_exp2_accuracy() -> None:
    _check("exp2", xexp2, np.exp2, _sweep(-160, 130), 1.5)


def test_fused_exp2_accuracy() -> None:
    """The polynomial in fused multiply-adds (targets with MULACC) keeps the bound."""
    _check("exp2 fused", functools.partial(xexp2, fused=True), np.exp2, _sweep(-160, 130), 1.5)


def test_log2_accuracy() -> None:
    xs = _sweep(0, 4)
    _check("log2", xlog2, np.log2, np.concatenate([xs, np.abs(xs[:400_000])]), 0.51)


def test_sin_accuracy() -> None:
    _check("sin", xsin, np.sin, _sweep(-1000, 1000), 0.51)


def test_float32_without_float64_accuracy() -> None:
    """Targets without float64 get float32-only sin/log2 (Dekker/two-sum pairs instead)."""
    _check("sin narrow", functools.partial(xsin, wide=False), np.sin, _sweep(-1000, 1000), 2.0)
    xs = _sweep(0, 4)
    both = np.concatenate([xs, np.abs(xs[:400_000])])
    _check("log2 narrow", functools.partial(xlog2, wide=False), np.log2, both, 2.0)


def test_sqrt_accuracy() -> None:
    xs = _sweep(0, 100)
    _check("sqrt", xsqrt, np.sqrt, np.concatenate([xs, np.abs(xs[:400_000])]), 1.0)


@pytest.mark.parametrize(
    ("fn", "x", "want"),
    [
        (xsin, -0.0, -0.0), (xsin, math.inf, math.nan), (xsin, -math.inf, math.nan),
        (xsin, 1e-45, 1e-45), (xexp2, -math.inf, 0.0), (xexp2, math.inf, math.inf),
        (xexp2, -149.0, 1e-45), (xexp2, 0.0, 1.0), (xlog2, 0.0, -math.inf),
        (xlog2, -0.0, -math.inf), (xlog2, -1.0, math.nan), (xlog2, math.inf, math.inf),
        (xlog2, 1e-45, -149.0), (xsqrt, -0.0, -0.0), (xsqrt, 1e-45, 3.7433921e-23),
        (xsqrt, -1.0, math.nan), (xsqrt, math.inf, math.inf), (xsin, math.nan, math.nan),
    ],
)  # fmt: skip
def test_special_values(fn: Callable[[UOp], UOp], x: float, want: float) -> None:
    got = np_eval(fn(X32), {X32: np.array([x], np.float32)})[0]
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == np.float32(want) and math.copysign(1, got) == math.copysign(1, want)


def test_pow_matches_exec_alu_special_cases() -> None:
    y = UOp(Ops.DEFINE_VAR, dtypes.float32, (), ("y", -math.inf, math.inf))
    graph = xpow(X32, y, xexp2, xlog2)
    vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        0.5,
        -8.0,
        3.0,
        math.inf,
        -math.inf,
        math.nan,
        1.5,
        -1.5,
    ]
    xs, ys = np.meshgrid(np.array(vals, np.float32), np.array(vals, np.float32))
    got = np_eval(graph, {X32: xs.ravel(), y: ys.ravel()})
    from fusegrad.uop import exec_alu

    for a, b, g in zip(xs.ravel(), ys.ravel(), got, strict=True):
        want = exec_alu(Ops.POW, dtypes.float32, [float(a), float(b)])
        if math.isnan(want):
            assert math.isnan(g), (a, b, g)
        else:
            assert g == pytest.approx(want, rel=1e-6) and math.copysign(1, g) == math.copysign(
                1, want
            ), (a, b, g, want)


@pytest.mark.parametrize("op", [Ops.SIN, Ops.EXP2, Ops.LOG2, Ops.SQRT])
def test_emulator_agrees_with_numpy_evaluator(op: Ops) -> None:
    """The pipeline's program for a target without the op, run in the PYTHON emulator, gives
    bit-for-bit what the NumPy evaluator gives for the approximation's graph."""
    xs = np.concatenate([EDGES, (_rs.random(40) * 200 - 100).astype(np.float32)])
    n = len(xs)
    out, inp = _targets.buf(0, dtypes.float32, n), _targets.buf(1, dtypes.float32, n)
    i = _targets.rng(n, 0, AxisType.LOOP)
    value = UOp(op, dtypes.float32, (inp.index(i).load(),))
    spec = to_program(
        _targets.kernel(out.index(i).store(value).end(i)), _targets.RENDERERS["scalar"]
    )
    assert not any(u.op is op for u in spec.uops)
    got = _targets.run_program(spec, [np.zeros(n, np.float32), xs])[0]
    fn = {Ops.SIN: xsin, Ops.EXP2: xexp2, Ops.LOG2: xlog2, Ops.SQRT: xsqrt}[op]
    np.testing.assert_array_equal(got, np_eval(fn(X32), {X32: xs}))


# -- float64 --------------------------------------------------------------------------------------

X64 = UOp(Ops.DEFINE_VAR, dtypes.float64, (), ("x", -math.inf, math.inf))
_LONG = np.finfo(np.longdouble).nmant >= 63  # an 80-bit (or wider) long double reference

EDGES64 = np.array(
    [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1.0, -1.0,
     0.5, 2.0, -1022.0, -1074.0, -1075.0, 1023.99, 1024.0, math.pi / 2, math.pi, 1e15,
     2.0**50 - 1, -(2.0**49) - 0.5, 1e-300, 1e300, 710.0, -745.0],
    np.float64,
)  # fmt: skip


def _check64(
    name: str, fn: Callable[[UOp], UOp], ref: Callable[..., Any], xs: np.ndarray, bound: float
) -> None:
    got = np_eval(fn(X64), {X64: xs})
    with np.errstate(all="ignore"):
        exact = ref(xs.astype(np.longdouble))
        want64 = exact.astype(np.float64)
    finite = np.isfinite(want64)
    spacing = np.spacing(np.abs(want64[finite])).astype(np.longdouble)
    spacing = np.where(spacing == 0, np.longdouble(5e-324), spacing)
    err = np.abs(got[finite].astype(np.longdouble) - exact[finite]) / spacing
    worst = int(np.argmax(err))
    print(f"{name} float64: {len(xs)} points, max error {float(err.max()):.3f} ulp")
    assert float(err.max()) <= bound, (name, xs[finite][worst], got[finite][worst])
    special = ~finite
    assert np.array_equal(np.isnan(got[special]), np.isnan(want64[special]))
    both = special & ~np.isnan(want64)
    np.testing.assert_array_equal(got[both], want64[both])


def _sweep64(lo: float, hi: float, n: int = 200_000) -> np.ndarray:
    every = _rs.integers(0, 2**64, size=200_000, dtype=np.uint64).view(np.float64)
    dense = _rs.random(n) * (hi - lo) + lo
    return np.concatenate([every[np.isfinite(every)], dense, EDGES64])


@pytest.mark.skipif(not _LONG, reason="no extended-precision long double for the reference")
def test_exp2_float64_accuracy() -> None:
    _check64("exp2", xexp2, np.exp2, _sweep64(-1080, 1030), 1.5)


@pytest.mark.skipif(not _LONG, reason="no extended-precision long double for the reference")
def test_log2_float64_accuracy() -> None:
    xs = _sweep64(0, 4)
    _check64("log2", xlog2, np.log2, np.concatenate([xs, np.abs(xs[:200_000])]), 2.0)


@pytest.mark.skipif(not _LONG, reason="no extended-precision long double for the reference")
def test_sin_float64_accuracy_below_2_to_50() -> None:
    mags = np.exp2(_rs.uniform(-30, 50, 300_000)) * _rs.choice([-1.0, 1.0], 300_000)
    xs = np.concatenate([_sweep64(-1000, 1000), mags])
    _check64("sin", xsin, np.sin, xs[np.abs(xs) < 2.0**50], 2.0)


def test_sin_float64_beyond_2_to_50_is_bounded() -> None:
    xs = np.concatenate([np.exp2(_rs.uniform(50, 1023, 10_000)), [2.0**50, 1.7976931348623157e308]])
    got = np_eval(xsin(X64), {X64: np.concatenate([xs, -xs])})
    assert np.all(np.abs(got) <= 1.0)


# -- vectors --------------------------------------------------------------------------------------


class _VectorTarget(_targets.CPUTestRenderer):
    """CPU-like with vectors and no native EXP2/LOG2/SIN."""

    suffix = "TESTVECTOR"
    code_for_op = {  # noqa: RUF012
        op: f for op, f in _targets.CPUTestRenderer.code_for_op.items()
        if op not in (Ops.EXP2, Ops.LOG2, Ops.SIN)
    }  # fmt: skip


def _vector_kernel(op: Ops, dt: DType, n: int, lanes: int) -> UOp:
    out, inp = _targets.buf(0, dt, n), _targets.buf(1, dt, n)
    i = _targets.rng(n, 0, AxisType.LOOP)
    ast = _targets.kernel(out.index(i).store(UOp(op, dt, (inp.index(i).load(),))).end(i))
    return _targets.split(ast, 0, lanes, AxisType.UPCAST)


_VECTOR_INPUTS = {
    Ops.EXP2: (EDGES, -140.0, 140.0),
    Ops.LOG2: (np.abs(EDGES), 0.0, 1e6),
    Ops.SIN: (EDGES, -1e6, 1e6),
}
#: the graphs a target with MULACC gets (its exp2 polynomial in fused multiply-adds)
_GRAPHS = {Ops.SIN: xsin, Ops.EXP2: functools.partial(xexp2, fused=True), Ops.LOG2: xlog2}


def _vector_inputs(op: Ops, dt: DType, n: int) -> np.ndarray:
    edges, lo, hi = _VECTOR_INPUTS[op]
    np_dt = {dtypes.float32: np.float32, dtypes.float64: np.float64, dtypes.float16: np.float16}
    xs = np.concatenate([edges, [math.inf, -math.inf, math.nan], _rs.uniform(lo, hi, n)])
    with np.errstate(over="ignore"):  # float16: the float32 edges beyond 65504 become inf
        return xs[:n].astype(np_dt[dt])


@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float64, dtypes.float16], ids=str)
@pytest.mark.parametrize("op", [Ops.EXP2, Ops.LOG2, Ops.SIN], ids=lambda o: o.name)
def test_vector_graph_stays_vector_and_matches(op: Ops, dt: DType) -> None:
    """A vector of 4 lanes is approximated as one vector graph (float ALU on vectors, no
    per-lane copies of the polynomial) and the emulator's results equal the scalar graph's."""
    n = 64
    spec = to_program(_vector_kernel(op, dt, n, 4), _VectorTarget())
    assert not any(u.op is op for u in spec.uops)
    float_alu = [
        u for u in spec.uops if u.op in (Ops.MUL, Ops.ADD) and dtypes.is_float(u.dtype.scalar())
    ]
    assert float_alu and all(u.dtype.count == 4 for u in float_alu), [u.dtype for u in float_alu]
    xs = _vector_inputs(op, dt, n)
    got = _targets.run_program(spec, [np.zeros(n, xs.dtype), xs])[0]
    wide = dtypes.float32 if dt is dtypes.float16 else dt
    leaf = UOp(Ops.DEFINE_VAR, wide, (), ("x", -math.inf, math.inf))
    want = np_eval(
        _GRAPHS[op](leaf), {leaf: xs.astype(np.float64 if dt is dtypes.float64 else np.float32)}
    )
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, want.astype(xs.dtype))


_LLVM_VECTOR_CASES = [
    (op, dt)
    for op in (Ops.EXP2, Ops.LOG2, Ops.SIN)
    for dt in (dtypes.float32, dtypes.float64)
    if (op, dt) != (Ops.SIN, dtypes.float64)  # stays native: see the next test
]


@pytest.mark.parametrize(("op", "dt"), _LLVM_VECTOR_CASES, ids=str)
def test_llvm_vector_kernel_calls_no_libm_and_matches(op: Ops, dt: DType) -> None:
    """On the LLVM renderer (the default CPU path) the approximations replace the libm calls
    LLVM made per lane: the optimized machine code of an 8-lane kernel calls nothing, and it
    gives the graph's results bit for bit."""
    renderers = pytest.importorskip("fusegrad.renderer")
    renderer, compiler = renderers.LLVMRenderer(fast_math=False), renderers.LLVMCompiler()
    assert not is_native(renderer, op, dt.vec(8))
    n = 256
    spec = to_program(_vector_kernel(op, dt, n, 8), renderer)
    assert isinstance(spec.src, str)
    assert "call" not in compiler.assembly(spec.src)
    xs = _vector_inputs(op, dt, n)
    out = np.zeros(n, xs.dtype)
    sig = renderers.kernel_signature(list(spec.uops), spec.name)
    renderers.CPUProgram(compiler.compile(spec.src), sig)([out, xs])
    leaf = X32 if dt is dtypes.float32 else X64
    np.testing.assert_array_equal(out, np_eval(_GRAPHS[op](leaf), {leaf: xs}))


def test_llvm_vector_float64_sin_stays_native_for_huge_arguments() -> None:
    """float64 sin's approximation is exact only for |x| < 2**50, so a renderer's native
    float64 SIN is kept on vectors too: an 8-lane kernel equals libm for arguments up to 1e300
    (the approximation would give +-0 or +-1 there)."""
    renderers = pytest.importorskip("fusegrad.renderer")
    renderer, compiler = renderers.LLVMRenderer(fast_math=False), renderers.LLVMCompiler()
    assert is_native(renderer, Ops.SIN, dtypes.float64.vec(8))
    assert not is_native(renderer, Ops.SIN, dtypes.float32.vec(8))
    n = 64
    spec = to_program(_vector_kernel(Ops.SIN, dtypes.float64, n, 8), renderer)
    assert isinstance(spec.src, str)
    xs = np.concatenate(
        [[1e16, -3e17, 1e300, 2.0**60, 2.0**51, -(2.0**50)], _rs.uniform(-1e20, 1e20, n)]
    )[:n]
    out = np.zeros(n, np.float64)
    sig = renderers.kernel_signature(list(spec.uops), spec.name)
    renderers.CPUProgram(compiler.compile(spec.src), sig)([out, xs])
    np.testing.assert_allclose(out, np.sin(xs), rtol=0, atol=1e-15)


# -- which renderer approximates what ---------------------------------------------------------------


def _scalar_kernel(op: Ops, dt: DType, n: int) -> UOp:
    out, inp = _targets.buf(0, dt, n), _targets.buf(1, dt, n)
    i = _targets.rng(n, 0, AxisType.LOOP)
    store = out.index(i).store(UOp(op, dt, (inp.index(i).load(),))).end(i)
    return UOp.sink(store, arg=KernelInfo("scalar", opts_to_apply=()))  # no upcast


class _LibmTarget(_targets.CPUTestRenderer):
    """Every op native for scalars; EXP2 and SIN approximated on vectors."""

    suffix = "TESTLIBM"
    vector_approximated = frozenset({Ops.EXP2, Ops.SIN})


@pytest.mark.parametrize("op", [Ops.EXP2, Ops.LOG2, Ops.SIN], ids=lambda o: o.name)
def test_vector_approximated_ops_approximate_vectors_only(op: Ops) -> None:
    target = _LibmTarget()
    scalar = to_program(_scalar_kernel(op, dtypes.float32, 32), target)
    vector = to_program(_vector_kernel(op, dtypes.float32, 32, 4), target)
    assert any(u.op is op for u in scalar.uops)
    assert any(u.op is op for u in vector.uops) == (op is Ops.LOG2)
    xs = _vector_inputs(op, dtypes.float32, 32)
    got = _targets.run_program(vector, [np.zeros(32, np.float32), xs])[0]
    if op is not Ops.LOG2:
        np.testing.assert_array_equal(got, np_eval(_GRAPHS[op](X32), {X32: xs}))


RENDERER_POLICY = {
    # renderer: ops approximated on (scalars, vectors)
    "LLVMRenderer": ({Ops.EXP2}, {Ops.EXP2, Ops.LOG2, Ops.SIN}),
    "CRenderer": (set(), {Ops.EXP2}),
}


@pytest.mark.parametrize("name", list(RENDERER_POLICY))
def test_cpu_renderers_approximate_where_it_is_faster(name: str) -> None:
    """tools/bench/transcendental.py measured it: LLVM's exp2/log2/sin intrinsics and C's libm
    calls run lane by lane on vectors, the approximations as vector code."""
    renderers = pytest.importorskip("fusegrad.renderer")
    renderer = getattr(renderers, name)()
    scalars, vectors = RENDERER_POLICY[name]
    for op in (Ops.EXP2, Ops.LOG2, Ops.SIN):
        assert is_native(renderer, op, dtypes.float32) == (op not in scalars), op
        assert is_native(renderer, op, dtypes.float32.vec(8)) == (op not in vectors), op
        scalar = to_program(_scalar_kernel(op, dtypes.float32, 64), renderer)
        assert any(u.op is op for u in scalar.uops) == (op not in scalars), op


@pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float64], ids=str)
def test_c_vector_exp2_matches(dt: DType) -> None:
    """The C renderer approximates vector EXP2: compiled by the system C compiler, bit for bit
    the graph's results."""
    renderers = pytest.importorskip("fusegrad.renderer")
    try:
        compiler = renderers.CCompiler()
    except renderers.CCompilerNotFoundError:
        pytest.skip("no C compiler")
    n = 256
    spec = to_program(_vector_kernel(Ops.EXP2, dt, n, 8), renderers.CRenderer())
    assert not any(u.op is Ops.EXP2 for u in spec.uops)
    xs = _vector_inputs(Ops.EXP2, dt, n)
    out = np.zeros(n, xs.dtype)
    sig = renderers.kernel_signature(list(spec.uops), spec.name)
    renderers.CPUProgram(compiler.compile(spec.src), sig)([out, xs])
    leaf = X32 if dt is dtypes.float32 else X64
    np.testing.assert_array_equal(out, np_eval(_GRAPHS[Ops.EXP2](leaf), {leaf: xs}))


class _NoFloat64Target(_targets.ScalarTestRenderer):
    """A scalar target without float64 (and without transcendentals)."""

    suffix = "TESTNOF64"
    supported_dtypes = _targets.ScalarTestRenderer.supported_dtypes - {dtypes.float64}


@pytest.mark.parametrize("op", [Ops.SIN, Ops.LOG2], ids=lambda o: o.name)
def test_no_float64_target_gets_float32_only_graphs(op: Ops) -> None:
    n = 64
    spec = to_program(_scalar_kernel(op, dtypes.float32, n), _NoFloat64Target())
    assert not any(u.dtype.scalar() is dtypes.float64 for u in spec.uops)
    xs = _vector_inputs(op, dtypes.float32, n)
    got = _targets.run_program(spec, [np.zeros(n, np.float32), xs])[0]
    fn = functools.partial(xsin if op is Ops.SIN else xlog2, wide=False)
    np.testing.assert_array_equal(got, np_eval(fn(X32), {X32: xs}))
