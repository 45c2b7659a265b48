"""merge_gemm_ranges (#25): a sum of products has neighbouring ranges that walk memory as
one axis merged (a convolution's pixels and taps), and keeps those that don't."""

from __future__ import annotations

from fusegrad.codegen.schedule.indexing import merge_gemm_ranges
from fusegrad.uop import AxisType, Ops, UOp, dtypes


def _sizes(ast: UOp) -> list[tuple[int, AxisType]]:
    rngs = sorted({u for u in ast.toposort() if u.op is Ops.RANGE}, key=lambda r: r.arg[0])
    return [(r.src[0].arg, r.arg[1]) for r in rngs]


def _gemm(y_stride: int, k_stride: int) -> UOp:
    """out[co, y, x] = sum over (ci, k) of w[co, ci, k] * cols[ci, k, y, x]; ``y_stride`` /
    ``k_stride``: the steps of y and k in cols (8 and 64 when contiguous)."""
    out = UOp.param(0, dtypes.float32.ptr(4 * 8 * 8))
    w = UOp.param(1, dtypes.float32.ptr(4 * 3 * 9))
    cols = UOp.param(2, dtypes.float32.ptr(3 * 9 * 64 * 2))
    co, y, x = UOp.range(4, 0), UOp.range(8, 1), UOp.range(8, 2)
    ci, k = UOp.range(3, 3, AxisType.REDUCE), UOp.range(9, 4, AxisType.REDUCE)
    a = w.index(co * 27 + ci * 9 + k).load()
    b = cols.index(ci * 9 * k_stride + k * k_stride + y * y_stride + x).load()
    val = (a * b).reduce(ci, k, arg=Ops.ADD)
    return UOp.sink(out.index(co * 64 + y * 8 + x).store(val).end(co, y, x))


def test_contiguous_pixels_and_taps_merge() -> None:
    merged = merge_gemm_ranges(_gemm(8, 64))
    assert _sizes(merged) == [(4, AxisType.LOOP), (64, AxisType.LOOP), (27, AxisType.REDUCE)]
    loads = [u.src[0].src[1].render() for u in merged.toposort() if u.op is Ops.LOAD]
    assert not any("//" in s or "%" in s for s in loads), loads


def test_strided_pixels_stay_apart() -> None:
    # cols rows of 16 for 8 pixels: (y, x) is no single axis in cols, the taps still are
    merged = merge_gemm_ranges(_gemm(16, 128))
    assert _sizes(merged) == [
        (4, AxisType.LOOP), (8, AxisType.LOOP), (8, AxisType.LOOP), (27, AxisType.REDUCE),
    ]  # fmt: skip


def test_kernel_without_products_is_left_alone() -> None:
    out = UOp.param(0, dtypes.float32.ptr(64))
    x = UOp.param(1, dtypes.float32.ptr(64))
    i, j = UOp.range(8, 0), UOp.range(8, 1)
    ast = UOp.sink(out.index(i * 8 + j).store(x.index(i * 8 + j).load() + 1.0).end(i, j))
    assert merge_gemm_ranges(ast) is ast
