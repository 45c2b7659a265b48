"""Accuracy of the transcendental approximations: the UOp graph the pipeline emits, evaluated
with NumPy on >= 10^6 float32 points per function (random bit patterns over every finite
float32, dense sweeps of the interesting range, edge cases), against NumPy float64.

Stated bounds (float32, ulp of the correctly rounded result): exp2 <= 1.5, log2 <= 2,
sin <= 2, sqrt <= 1; special values (NaN, +-inf, +-0.0, subnormals) exact."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import targets as _targets
from fusegrad.codegen.lower import to_program
from fusegrad.codegen.lower.transcendental import xexp2, xlog2, xpow, xsin, xsqrt
from fusegrad.uop import AxisType, Ops, UOp, dtypes
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


def test_log2_accuracy() -> None:
    xs = _sweep(0, 4)
    _check("log2", xlog2, np.log2, np.concatenate([xs, np.abs(xs[:400_000])]), 2.0)


def test_sin_accuracy() -> None:
    _check("sin", xsin, np.sin, _sweep(-1000, 1000), 2.0)


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
