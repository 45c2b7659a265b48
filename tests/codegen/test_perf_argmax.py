"""argmax/argmin and arange kernels (#25): the arange's bit sum folds to its index when the
kernel is built, and the compare-and-select reduction after it lowers to whole vectors.

``Tensor.arange`` is a sum of padded constants (one per bit of the index): before the fold
an argmax over n columns computed log2(n) divisions, compares and selects per element.
"""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.codegen import Renderer
from fusegrad.codegen.schedule.indexing import fold_bit_sum, fold_bit_sums
from fusegrad.uop import AxisType, Ops, UOp, dtypes


def _kernel_asts(t: Tensor) -> list[UOp]:
    return [call.src[0] for call in t.schedule_linear().src]


def _bit_term(x: UOp, j: int, exact: bool = True) -> UOp:
    b = x // (1 << j) if j else x
    if exact:
        b = b % 2
    return (b < 1).logical_not().where(UOp.const(1 << j, dtypes.int32), UOp.const(0, dtypes.int32))


def _chain(terms: list[UOp]) -> UOp:
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def test_bit_sum_of_a_range_is_the_range() -> None:
    r = UOp.range(64, 0)
    terms = [_bit_term(r, j) for j in range(5)] + [_bit_term(r, 5, exact=False)]
    assert fold_bit_sum(_chain(terms)) is r.cast(dtypes.int32)


def test_bit_sum_keeps_other_terms() -> None:
    r = UOp.range(16, 0)
    other = UOp.const(7, dtypes.int32)
    folded = fold_bit_sum(_chain([_bit_term(r, j) for j in range(4)] + [other]))
    assert folded is not None
    assert {u.op for u in folded.toposort()} == {Ops.ADD, Ops.CAST, Ops.RANGE, Ops.CONST}


@pytest.mark.parametrize(
    ("size", "bits", "top_exact"),
    [
        (64, 5, True),  # bits 0..4 sum to r % 32, not r (r reaches 63)
        (64, 6, False),  # but: 6 bits whose top one lacks "% 2" are r itself (r < 64)
        (128, 6, False),  # the top bit read as r // 32 is not a bit once r reaches 64
    ],
)
def test_bit_sum_needs_the_whole_range(size: int, bits: int, top_exact: bool) -> None:
    r = UOp.range(size, 0)
    terms = [_bit_term(r, j) for j in range(bits - 1)] + [_bit_term(r, bits - 1, top_exact)]
    folded = fold_bit_sum(_chain(terms))
    if size <= 1 << bits:
        assert folded is r.cast(dtypes.int32)
    else:
        assert folded is None


def test_bit_sum_needs_a_run_from_bit_zero() -> None:
    r = UOp.range(16, 0)
    assert fold_bit_sum(_chain([_bit_term(r, j) for j in (1, 2, 3)])) is None
    assert fold_bit_sum(_chain([_bit_term(r, j) for j in (0, 2, 3)])) is None


def test_bit_sum_of_a_signed_index_stays() -> None:
    r = UOp.range(16, 0) + (-8)  # -8..7: its low bits are no sum of powers of two
    assert fold_bit_sum(_chain([_bit_term(r, j) for j in range(4)])) is None


def test_fold_bit_sums_leaves_a_kernel_without_them() -> None:
    r = UOp.range(16, 0, AxisType.LOOP)
    x = UOp.param(0, dtypes.int32.ptr(16))
    ast = UOp.sink(x.index(r).store(r.cast(dtypes.int32) + 1).end(r))
    assert fold_bit_sums(ast) is ast


@pytest.mark.parametrize("n", [2, 3, 100, 1000, 4096])
def test_argmax_kernel_has_no_index_bits(n: int) -> None:
    x = Tensor(np.random.default_rng(0).standard_normal((4, n)).astype(np.float32))
    for ast in _kernel_asts(x.realize().argmax(-1)):
        ops = [u.op for u in ast.toposort()]
        assert Ops.FLOORDIV not in ops and Ops.FLOORMOD not in ops


def test_arange_kernel_is_its_index() -> None:
    (ast,) = _kernel_asts(Tensor.arange(1000))
    ops = {u.op for u in ast.toposort()}
    assert Ops.WHERE not in ops and Ops.FLOORMOD not in ops


@pytest.mark.parametrize(
    "make",
    [
        lambda: (Tensor.arange(1000), np.arange(1000)),
        lambda: (Tensor.arange(5, 1005, 3), np.arange(5, 1005, 3)),
        lambda: (Tensor.arange(1000)[::-1][3:900], np.arange(1000)[::-1][3:900]),
        lambda: (
            Tensor.arange(64).reshape(8, 8).T.flatten(),
            np.arange(64).reshape(8, 8).T.ravel(),
        ),
        lambda: (Tensor.arange(37).pad(((5, 2),)), np.pad(np.arange(37), (5, 2))),
        lambda: (Tensor.arange(10, 0, -1) * 2, np.arange(10, 0, -1) * 2),
    ],
)
def test_arange_views_equal_numpy(make: object) -> None:
    got, want = make()  # type: ignore[operator]
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("shape", [(7, 1000), (64, 64), (3, 4097), (1, 2)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin_equal_numpy(shape: tuple[int, int], axis: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, shape).astype(np.float32)  # many ties: the first index wins
    t = Tensor(a)
    np.testing.assert_array_equal(t.argmax(axis).numpy(), a.argmax(axis))
    np.testing.assert_array_equal(t.argmin(axis).numpy(), a.argmin(axis))


def test_argmax_nan_counts_as_the_maximum() -> None:
    a = np.random.default_rng(2).standard_normal((5, 300)).astype(np.float32)
    a[1, 17] = a[3, 250] = np.nan
    np.testing.assert_array_equal(Tensor(a).argmax(-1).numpy(), a.argmax(-1))


def test_argmax_of_3d_middle_axis_equals_numpy() -> None:
    a = np.random.default_rng(3).standard_normal((4, 300, 5)).astype(np.float32)
    np.testing.assert_array_equal(Tensor(a).argmax(1).numpy(), a.argmax(1))
    np.testing.assert_array_equal(Tensor(a).argmax().numpy(), a.argmax())


def _compare_kernel(n: int) -> UOp:
    """out[i] = n - max_j (x[i, j] == m[i] ? n - j : 0): argmax's second kernel."""
    from fusegrad.codegen import KernelInfo
    from fusegrad.codegen.opt import Opt, OptOps

    o = UOp.param(0, dtypes.int32.ptr(4))
    x = UOp.param(1, dtypes.float32.ptr(4 * n))
    m = UOp.param(2, dtypes.float32.ptr(4))
    i, j = UOp.range(4, 0), UOp.range(n, 1, AxisType.REDUCE)
    xv = x.index(i * n + j).load()
    hit = xv.eq(m.index(i).load()) | xv.ne(xv)
    rev = j.cast(dtypes.int32) * -1 + n
    best = hit.where(rev, rev.const_like(0)).reduce(j, arg=Ops.MAX)
    opts = (Opt(OptOps.PARTIALS, 1, 32),)
    return UOp.sink(
        o.index(i).store(best.const_like(n) - best).end(i),
        arg=KernelInfo("cmp", opts_to_apply=opts),
    )


def _renderer_of_width(simd_bytes: int | None) -> Renderer:
    """The CPU device's renderer (None), or the LLVM renderer with ``simd_bytes`` registers:
    AVX2's 32 and AVX-512's 64 whatever this machine has."""
    from fusegrad.renderer.host import vector_widths_for
    from fusegrad.renderer.llvm import LLVMRenderer
    from fusegrad.runtime import Device

    if simd_bytes is None:
        return Device["CPU"].renderer
    renderer = LLVMRenderer()
    vars(renderer)["vector_widths"] = vector_widths_for(simd_bytes)
    return renderer


@pytest.mark.parametrize("simd_bytes", [None, 32, 64], ids=["device", "avx2", "avx512"])
def test_compare_reduction_lowers_to_whole_vectors(simd_bytes: int | None) -> None:
    """The OR of two compares split from 32 lanes stays whole vectors of the target's width
    (8 lanes on AVX2, 16 on AVX-512; no bool lane extracts), and the column index
    vector is the broadcast row start plus lane constants (no scalar add per lane)."""
    from fusegrad.codegen import to_program

    renderer = _renderer_of_width(simd_bytes)
    # the float32 width, or the widest mask the target has if that is narrower (x86's zmm
    # compares are 8-lane masks)
    width = min(renderer.vector_widths[dtypes.float32][0], max(renderer.vector_widths[dtypes.bool]))
    spec = to_program(_compare_kernel(128), renderer)
    uops = list(spec.uops)
    assert not [u for u in uops if u.op is Ops.VECTORIZE and u.dtype.scalar() is dtypes.bool]
    assert not [u for u in uops if u.op is Ops.GEP and u.dtype is dtypes.bool]
    ors = [u for u in uops if u.op is Ops.OR]
    assert ors and all(u.dtype.count == width for u in ors)
    lane_adds = [
        u
        for u in uops
        if u.op is Ops.ADD
        and u.dtype is dtypes.int32
        and u.src[1].op is Ops.CONST
        and isinstance(u.src[1].arg, int)
        and 0 < u.src[1].arg < width
    ]
    assert not lane_adds
