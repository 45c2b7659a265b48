"""CPU heuristics for reductions: which opts sums/max/softmax-like kernels get (PARTIALS along a
contiguous reduce axis, wide UPCAST + TILE across a strided one, no PARTIALS for argmax's
arange), and that reductions through Tensor code on the CPU device match NumPy on odd sizes
(non-multiples of the vector width, one row, one column), float sums within a tolerance
(partial accumulators reassociate), integer sums exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import opt_testing
import pytest
from fusegrad import Tensor
from fusegrad.codegen import KernelInfo
from fusegrad.codegen.opt import Opt, OptOps, hand_coded_optimizations
from fusegrad.codegen.opt.heuristics import REDUCE_ACCUMULATORS, REDUCE_ROW_TILE
from fusegrad.uop import AxisType, Ops, UOp, dtypes

CPU = opt_testing.TARGETS.RENDERERS["cpu"]  # float32 vectors of 8, 4 cores
WIDTH = 8


def reduce_kernel(rows: int, cols: int, axis: int, op: Ops = Ops.ADD) -> UOp:
    """out[i] = op over k of x[rows, cols] along ``axis`` (0: down the columns)."""
    outs = cols if axis == 0 else rows
    red_size = rows if axis == 0 else cols
    out = UOp.param(0, dtypes.float32.ptr(outs))
    x = UOp.param(1, dtypes.float32.ptr(rows * cols))
    i, k = UOp.range(outs, 0), UOp.range(red_size, 1, AxisType.REDUCE)
    at = k * cols + i if axis == 0 else i * cols + k
    val = x.index(at).load().reduce(k, arg=op)
    return UOp.sink(out.index(i).store(val).end(i), arg=KernelInfo("red"))


def test_sum_over_the_last_axis_keeps_vector_partial_sums_and_threads_the_rows() -> None:
    assert hand_coded_optimizations(reduce_kernel(256, 512, 1), CPU) == [
        Opt(OptOps.PARTIALS, 1, REDUCE_ACCUMULATORS * WIDTH),
        Opt(OptOps.THREAD, 0, 4),
    ]


def test_short_contiguous_reduce_takes_fewer_lanes() -> None:
    opts = hand_coded_optimizations(reduce_kernel(4096, 24, 1), CPU)
    assert opts[0] == Opt(OptOps.PARTIALS, 1, WIDTH)  # 24: 8 divides it, 16 and 32 don't


def test_sum_over_the_first_axis_upcasts_accumulators_and_tiles_rows() -> None:
    assert hand_coded_optimizations(reduce_kernel(512, 256, 0), CPU) == [
        Opt(OptOps.UPCAST, 0, REDUCE_ACCUMULATORS * WIDTH),
        Opt(OptOps.TILE, 1, REDUCE_ROW_TILE),
        Opt(OptOps.THREAD, 0, 4),
    ]


def test_max_over_the_first_axis_is_tiled_too_but_not_a_product() -> None:
    # TILE keeps running sums or maxima in the output: ADD and MAX only
    opts = hand_coded_optimizations(reduce_kernel(512, 256, 0, Ops.MAX), CPU)
    assert opts[:2] == [
        Opt(OptOps.UPCAST, 0, REDUCE_ACCUMULATORS * WIDTH),
        Opt(OptOps.TILE, 1, REDUCE_ROW_TILE),
    ]
    opts = hand_coded_optimizations(reduce_kernel(512, 256, 0, Ops.MUL), CPU)
    assert opts[0] == Opt(OptOps.UPCAST, 0, REDUCE_ACCUMULATORS * WIDTH)
    assert all(o.op is not OptOps.TILE for o in opts)


@pytest.mark.parametrize("shape", [(64, 256), (512, 40)])
def test_tiled_max_over_the_first_axis_of_negative_values(shape: tuple[int, int]) -> None:
    """The first tile's read-back is masked to 0: a running max of all-negative columns must
    not see it."""
    a = -np.random.default_rng(5).random(shape).astype(np.float32) - 1
    np.testing.assert_array_equal(Tensor(a).max(0).numpy(), a.max(0))


def test_per_row_operand_does_not_hide_the_contiguous_reduce() -> None:
    """softmax's sum(exp(x - max[i])): max[i] is stride 1 along the rows, but constant along
    the reduce; the streamed operand decides."""
    n = 256
    out, x, m = (UOp.param(s, dtypes.float32.ptr(n * n if s == 1 else n)) for s in range(3))
    i, k = UOp.range(n, 0), UOp.range(n, 1, AxisType.REDUCE)
    val = (x.index(i * n + k).load() - m.index(i).load()).exp2().reduce(k, arg=Ops.ADD)
    ast = UOp.sink(out.index(i).store(val).end(i), arg=KernelInfo("sm"))
    assert hand_coded_optimizations(ast, CPU)[0] == Opt(OptOps.PARTIALS, 1, 32)


def test_reduce_with_much_index_arithmetic_keeps_row_upcast() -> None:
    """argmax-like: the value computed from the reduce index alone would be repeated per lane."""
    n = 256
    out, x, m = (UOp.param(s, dtypes.float32.ptr(n * n if s == 1 else n)) for s in range(3))
    i, k = UOp.range(n, 0), UOp.range(n, 1, AxisType.REDUCE)
    idx = k
    for bit in range(8):  # an index rebuilt from its bits, as the arange lowering does
        idx = idx + ((k // (1 << bit)) % 2) * (1 << bit)
    hit = x.index(i * n + k).load().eq(m.index(i).load())
    val = hit.where(idx.cast(dtypes.float32), 0.0).reduce(k, arg=Ops.MAX)
    ast = UOp.sink(out.index(i).store(val).end(i), arg=KernelInfo("am"))
    opts = hand_coded_optimizations(ast, CPU)
    assert all(o.op is not OptOps.PARTIALS for o in opts)
    assert opts[0] == Opt(OptOps.UPCAST, 0, WIDTH)


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


SHAPES = [(1, 37), (37, 1), (3, 1000), (129, 96), (96, 129), (64, 256), (300, 48)]

CASES: dict[str, tuple[Callable[[Tensor], Tensor], Callable[[np.ndarray], Any]]] = {
    "sum_last": (lambda t: t.sum(-1), lambda a: a.sum(-1)),
    "sum_first": (lambda t: t.sum(0), lambda a: a.sum(0)),
    "sum_all": (lambda t: t.sum(), lambda a: a.sum()),
    "mean_last": (lambda t: t.mean(-1), lambda a: a.mean(-1)),
    "max_last": (lambda t: t.max(-1), lambda a: a.max(-1)),
    "max_first": (lambda t: t.max(0), lambda a: a.max(0)),
    "fused_sum": (lambda t: (t * 2 + 1).sum(-1), lambda a: (a * 2 + 1).sum(-1)),
    "softmax": (lambda t: t.softmax(-1), _softmax),
    "log_softmax": (lambda t: t.log_softmax(-1), lambda a: np.log(_softmax(a))),
    "layernorm": (
        lambda t: t.layernorm(),
        lambda a: (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5),
    ),
}


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
@pytest.mark.parametrize("name", list(CASES))
def test_float_reductions_match_numpy(name: str, shape: tuple[int, int]) -> None:
    ours, ref = CASES[name]
    a = np.random.default_rng(hash((name, shape)) % 2**32).standard_normal(shape)
    a = a.astype(np.float32)
    got = ours(Tensor(a)).numpy()
    want = ref(a.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.sqrt(a.size))


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
def test_argmax_matches_numpy(shape: tuple[int, int]) -> None:
    a = np.random.default_rng(1).integers(0, 5, shape).astype(np.float32)  # ties: first wins
    np.testing.assert_array_equal(Tensor(a).argmax(-1).numpy(), a.argmax(-1))
    np.testing.assert_array_equal(Tensor(a).argmax(0).numpy(), a.argmax(0))


@pytest.mark.parametrize("shape", [(3, 1000), (129, 96), (96, 129), (64, 256), (2, 64, 96)])
def test_integer_sums_are_exact(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(2).integers(-(2**20), 2**20, shape).astype(np.int32)
    for axis in range(len(shape)):
        np.testing.assert_array_equal(Tensor(a).sum(axis).numpy(), a.sum(axis, dtype=np.int32))
    assert Tensor(a).sum().item() == int(a.sum(dtype=np.int64))


def test_middle_axis_sum_of_a_large_tensor() -> None:
    """A reduction over a middle axis big enough for the heuristics' threads and tiles."""
    a = np.random.default_rng(3).standard_normal((4, 96, 520)).astype(np.float32)
    np.testing.assert_allclose(Tensor(a).sum(1).numpy(), a.sum(1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(Tensor(a).sum(2).numpy(), a.sum(2), rtol=1e-4, atol=1e-3)


def test_large_full_reductions_are_split_in_two_kernels() -> None:
    """schedule/layout.py: a CPU full reduction of >= SPLIT_MIN_ELEMENTS becomes SPLIT_PARTS
    partial reductions in a buffer of their own (an output loop the cores can share), then
    one over them; smaller ones and partial reductions stay whole."""
    from fusegrad.codegen.schedule import layout

    big = Tensor.empty(1024, layout.SPLIT_MIN_ELEMENTS // 1024).sum()
    (split,) = layout.split_full_reduces(big.uop.toposort()).values()
    parts = [u for u in split.toposort() if u.op is Ops.REDUCE_AXIS]
    assert [p.src[0].st_shape for p in parts] == [
        (layout.SPLIT_PARTS, layout.SPLIT_MIN_ELEMENTS // layout.SPLIT_PARTS),
        (layout.SPLIT_PARTS, 1),
    ]
    assert parts[1].src[0].op is Ops.CONTIGUOUS
    small = Tensor.empty(1023, 255).sum()
    assert layout.split_full_reduces(small.uop.toposort()) == {}
    rows = Tensor.empty(1024, 1024).sum(-1)
    assert layout.split_full_reduces(rows.uop.toposort()) == {}


@pytest.mark.parametrize("shape", [(512, 512), (3, 128, 1024)])
def test_split_full_reductions_match_numpy(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(Tensor(a).sum().item(), a.sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_allclose(Tensor(a).mean().item(), a.mean(dtype=np.float64), atol=1e-6)
    assert Tensor(a).max().item() == a.max() and Tensor(a).min().item() == a.min()
    ints = rng.integers(-1000, 1000, shape).astype(np.int32)
    assert Tensor(ints).sum().item() == int(ints.sum())
    assert Tensor(a).argmax().item() == a.argmax()
