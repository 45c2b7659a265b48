"""fp8 tensors (e4m3fn, e5m2) on the kernel pipeline: the CPU device (LLVM and C renderers,
neither has fp8: the lowering emulates it in float32) agrees bit for bit with the PYTHON
emulator (fp8 native) and with a NumPy reference built on ``fusegrad.uop.truncate``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from fusegrad.engine import KernelExecutor, set_executor
from fusegrad.renderer import CCompilerNotFoundError, find_c_compiler
from fusegrad.runtime import Device
from fusegrad.uop import DType, bitcast, truncate

pytestmark = pytest.mark.kernels
FP8 = list(dtypes.fp8s)
IDS = [dt.name for dt in FP8]


def _has_c() -> bool:
    try:
        find_c_compiler()
    except CCompilerNotFoundError:
        return False
    return True


@pytest.fixture(autouse=True)
def kernels() -> Iterator[None]:
    previous = set_executor(KernelExecutor())
    try:
        yield
    finally:
        set_executor(previous)


def on_every_target(make: Callable[[str], Tensor]) -> np.ndarray:
    """``make(device)`` realized on CPU with LLVM, CPU with C (when a C compiler exists) and
    the PYTHON emulator; the raw bits must agree; the emulator's values."""
    cpu = Device["CPU"]
    before = cpu.renderer.suffix
    results: dict[str, np.ndarray] = {}
    try:
        for kind in ("LLVM", "C") if _has_c() else ("LLVM",):
            cpu.select_compiler(kind)
            results[kind] = make("CPU").numpy()
    finally:
        cpu.select_compiler(before)
    reference = make("PYTHON").numpy()
    for kind, got in results.items():
        assert got.dtype == reference.dtype, kind
        np.testing.assert_array_equal(got.view(np.uint8), reference.view(np.uint8), err_msg=kind)
    return reference


def rounded(dt: DType, values: np.ndarray) -> np.ndarray:
    """``truncate(dt)`` of each value, as float32."""
    conv = truncate(dt)
    return np.array([conv(float(v)) for v in np.ravel(values)], np.float32).reshape(
        np.shape(values)
    )


def every_value(dt: DType) -> np.ndarray:
    """The values of all 256 codes (NaN included) as float32."""
    return np.array([bitcast(c, dtypes.uint8, dt) for c in range(256)], np.float32)


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_cast_float32_rounds_like_truncate(dt: DType) -> None:
    vals = every_value(dt).astype(np.float64)
    vals = np.sort(vals[np.isfinite(vals) & (vals >= 0)])
    mids = (vals[1:] + vals[:-1]) / 2
    src = np.concatenate([vals, mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf),
                          [vals[-1] * 1.1, 1e30, np.inf, np.nan, -0.0]])  # fmt: skip
    src = np.concatenate([src, -src]).astype(np.float32)
    got = on_every_target(lambda d: Tensor(src, device=d).cast(dt))
    np.testing.assert_array_equal(got, rounded(dt, src))


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_every_code_reads_back(dt: DType) -> None:
    codes = np.arange(256, dtype=np.uint8)
    got = on_every_target(lambda d: Tensor(codes, device=d).bitcast(dt).cast(dtypes.float32))
    np.testing.assert_array_equal(got, every_value(dt))


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_arithmetic_rounds_each_op(dt: DType) -> None:
    rs = np.random.default_rng(1)
    finite = every_value(dt)
    finite = finite[np.isfinite(finite)]
    a, b = rs.choice(finite, 512), rs.choice(finite, 512)
    c = np.where(rs.random(512) < 0.5, 0.5, rs.choice(finite, 512))

    def make(d: str) -> Tensor:
        x, y, z = (Tensor(v, dtype=dt, device=d) for v in (a, b, c))
        return (x + y) * z - x

    got = on_every_target(make)
    r = lambda v: rounded(dt, v)
    with np.errstate(all="ignore"):
        want = r(r(r(a.astype(np.float64) + b) * c) - a)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_casts_to_and_from_ints_and_floats(dt: DType) -> None:
    ints = np.array([0, 1, -1, 3, 17, 100, -300, 449, 465, 60000, 2**31 - 1, -(2**31)], np.int32)
    got = on_every_target(lambda d: Tensor(ints, device=d).cast(dt))
    np.testing.assert_array_equal(got, rounded(dt, ints))
    vals = rounded(dt, every_value(dt))  # the tensor holds e5m2's infinities as +-max
    finite = vals[np.isfinite(vals)]
    back = on_every_target(lambda d: Tensor(finite, dtype=dt, device=d).cast(dtypes.int32))
    np.testing.assert_array_equal(back, np.trunc(finite).astype(np.int32))
    other = dtypes.fp8e5m2 if dt is dtypes.fp8e4m3 else dtypes.fp8e4m3
    swapped = on_every_target(lambda d: Tensor(vals, dtype=dt, device=d).cast(other))
    np.testing.assert_array_equal(swapped, rounded(other, vals))
    half = on_every_target(lambda d: Tensor(vals, dtype=dt, device=d).cast(dtypes.float16))
    np.testing.assert_array_equal(half, vals.astype(np.float16))  # exact


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_matmul_in_fp8_to_float32(dt: DType) -> None:
    """The products are fp8 (each rounded, as any fp8 multiply); the float32 sums of these
    values are exact, so the float32 result is the exact sum of the rounded products and the
    fp8 result that sum rounded once."""
    rs = np.random.default_rng(2)
    a = rs.integers(-8, 9, (8, 16)) / 4
    b = rs.integers(-8, 9, (16, 4)) / 2
    products = rounded(dt, a[:, :, None] * b[None, :, :]).astype(np.float64)
    want = products.sum(axis=1)

    def f32(d: str) -> Tensor:
        x, y = Tensor(a, dtype=dt, device=d), Tensor(b, dtype=dt, device=d)
        return x.matmul(y, dtype=dtypes.float32)

    np.testing.assert_array_equal(on_every_target(f32), want.astype(np.float32))
    got = on_every_target(lambda d: Tensor(a, dtype=dt, device=d) @ Tensor(b, dtype=dt, device=d))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, rounded(dt, want))


@pytest.mark.parametrize("dt", FP8, ids=IDS)
def test_cast_float64_rounds_once(dt: DType) -> None:
    """float64 values just off an fp8 midpoint (by far less than a float32 ulp) round to
    their side, not to even as a midpoint would: one rounding, not two."""
    vals = every_value(dt).astype(np.float64)
    vals = np.sort(vals[np.isfinite(vals) & (vals >= 0)])
    mids = (vals[1:] + vals[:-1]) / 2
    src = np.concatenate([mids * (1 + 2.0**-40), mids * (1 - 2.0**-40), mids, [1e300, -1e-300]])
    src = np.concatenate([src, -src])
    got = on_every_target(lambda d: Tensor(src, dtype=dtypes.float64, device=d).cast(dt))
    np.testing.assert_array_equal(got, rounded(dt, src))
    with np.errstate(over="ignore"):  # 1e300 -> float32 inf
        twice = rounded(dt, src.astype(np.float32))
    assert (got != twice).sum() > 20  # rounding through float32 first differs
