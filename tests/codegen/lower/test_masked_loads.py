"""The LLVM target's masked vector loads: an upcast axis whose lanes have different gates (the
edge taps of a padded convolution) loads its lanes with one ``llvm.masked.load`` instead of
a branch per lane, reads nothing where a lane is masked off, and gives the reference's
values (NumPy, and the PYTHON emulator on the same linear program)."""

from __future__ import annotations

import numpy as np
import pytest
import targets as T
from fusegrad.codegen import to_program
from fusegrad.codegen.opt import Opt, OptOps, apply_opts
from fusegrad.uop import AxisType, Ops, UOp, dtypes

H, W = 5, 16  # W: two vectors of 8 lanes per row


def _padded_conv(height: int, width: int) -> UOp:
    """out[y, x] = sum over a 3x3 window (zero padding 1) of img * w[tap]."""
    out, img, w = (
        T.buf(0, dtypes.float32, height * width),
        T.buf(1, dtypes.float32, height * width),
        T.buf(2, dtypes.float32, 9),
    )
    y, x = T.rng(height, 0), T.rng(width, 1)
    ky, kx = T.rng(3, 2, AxisType.REDUCE), T.rng(3, 3, AxisType.REDUCE)
    iy, ix = y + ky - 1, x + kx - 1
    ok = (iy >= 0) & (iy < height) & (ix >= 0) & (ix < width)
    pix = img.index((iy * width + ix).valid(ok)).load()
    val = (pix * w.index(ky * 3 + kx).load()).reduce(ky, kx, arg=Ops.ADD)
    return T.kernel(out.index(y * width + x).store(val).end(y, x), name="padded_conv")


def _want(img: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(img, 1)
    out = np.zeros_like(img)
    for ky in range(3):
        for kx in range(3):
            out += padded[ky : ky + img.shape[0], kx : kx + img.shape[1]] * w[ky * 3 + kx]
    return out


def _masked_loads(uops: tuple[UOp, ...]) -> list[UOp]:
    return [
        u
        for u in uops
        if u.op is Ops.LOAD and len(u.src[0].src) == 3 and u.src[0].src[2].dtype.count > 1
    ]


@pytest.fixture(scope="module")
def llvm() -> tuple[object, object]:
    return T.cpu_backend("llvm")


OPTS = (Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.UNROLL, 3, 3), Opt(OptOps.UNROLL, 2, 3))


def test_edge_taps_load_one_masked_vector(llvm: tuple[object, object]) -> None:
    renderer, _ = llvm
    spec = to_program(apply_opts(_padded_conv(H, W), OPTS, renderer), renderer)  # type: ignore[arg-type]
    masked = _masked_loads(spec.uops)
    assert masked and all(u.dtype == dtypes.float32.vec(8) for u in masked)
    gated_scalars = [
        u for u in spec.uops if u.op is Ops.LOAD and len(u.src[0].src) == 3 and u.dtype.count == 1
    ]
    assert gated_scalars == []  # no lane of the image is loaded alone
    src = renderer.render(list(spec.uops), spec.name)  # type: ignore[attr-defined]
    assert "@llvm.masked.load.v8f32.p0" in src
    assert "label %load" not in src  # no branch around a load


@pytest.mark.parametrize("height,width", [(H, W), (4, 32), (7, 24)])
def test_masked_vector_loads_give_the_reference(
    llvm: tuple[object, object], height: int, width: int
) -> None:
    renderer, compiler = llvm
    spec = to_program(apply_opts(_padded_conv(height, width), OPTS, renderer), renderer)  # type: ignore[arg-type]
    assert _masked_loads(spec.uops)
    rs = np.random.default_rng(height)
    img = rs.standard_normal((height, width)).astype(np.float32)
    w = rs.standard_normal(9).astype(np.float32)
    want = _want(img, w).reshape(-1)
    out = np.full(height * width, np.nan, np.float32)
    T.run_compiled(spec, renderer, compiler, [out, img.reshape(-1), w])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    emulated = T.run_program(spec, [np.zeros(height * width, np.float32), img.reshape(-1), w])[0]
    np.testing.assert_array_equal(emulated, out)  # same program, same rounding


def test_masked_lanes_at_the_buffer_edges_read_zero(llvm: tuple[object, object]) -> None:
    """The image fills an exact-size buffer: the first row's top taps start before it and
    the last row's bottom taps end after it; those lanes are masked off and add zero."""
    renderer, compiler = llvm
    spec = to_program(apply_opts(_padded_conv(2, 16), OPTS, renderer), renderer)  # type: ignore[arg-type]
    img = np.arange(32, dtype=np.float32).reshape(2, 16)
    w = np.ones(9, np.float32)
    out = np.zeros(32, np.float32)
    T.run_compiled(spec, renderer, compiler, [out, img.reshape(-1), w])
    np.testing.assert_array_equal(out, _want(img, w).reshape(-1))


def test_a_masked_load_with_every_lane_off_reads_from_its_buffer(
    llvm: tuple[object, object],
) -> None:
    """Where every lane is masked off, the address may be far outside the buffer (a cat's
    other pieces: the fused optimizer's update read 6 of them per element). A masked load
    touches no memory, but on an unmapped page it takes a microcode assist (AMD: the fused
    SGD step's update kernel ran 61 ms instead of 5); so the load's pointer is its buffer's
    start unless some lane is on."""
    renderer, _ = llvm
    spec = to_program(apply_opts(_padded_conv(H, W), OPTS, renderer), renderer)  # type: ignore[arg-type]
    src = renderer.render(list(spec.uops), spec.name)  # type: ignore[attr-defined]
    loads = [ln for ln in src.splitlines() if "@llvm.masked.load" in ln and "call" in ln]
    assert loads
    for line in loads:
        name = line.split("=")[0].strip()
        assert f"ptr {name}.ptr," in line
        assert f"{name}.any = call i1 @llvm.vector.reduce.or.v8i1(" in src
        assert f"{name}.ptr = select i1 {name}.any, ptr %" in src
