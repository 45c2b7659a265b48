"""Kernels of sequential reductions over each row (softmax in one kernel: a max loop, a sum
loop, the output loop): the CPU heuristics give every reduce axis PARTIALS and upcast the
output axis (their lanes don't multiply: each loop is its own), and a workgroup target keeps
the row a loop of one thread instead of a thread per element."""

from __future__ import annotations

import opt_testing
from fusegrad.codegen import KernelInfo
from fusegrad.codegen.opt import Opt, OptOps, apply_opts, hand_coded_optimizations
from fusegrad.codegen.opt.heuristics import REDUCE_ACCUMULATORS
from fusegrad.codegen.opt.kernel import MAX_LANES, axes_of, lane_count, row_axes
from fusegrad.renderer.ptx import PTXRenderer
from fusegrad.uop import AxisType, Ops, UOp, dtypes

CPU = opt_testing.TARGETS.RENDERERS["cpu"]  # float32 vectors of 8, 4 cores
WIDTH = 8


def row_softmax(rows: int, n: int) -> UOp:
    """out[i, j] = exp2(x[i, j] - max_k x[i, k]) / sum_k exp2(x[i, k] - max)."""
    out = UOp.param(0, dtypes.float32.ptr(rows * n))
    x = UOp.param(1, dtypes.float32.ptr(rows * n))
    i, j = UOp.range(rows, 0), UOp.range(n, 1)
    k1, k2 = UOp.range(n, 2, AxisType.REDUCE), UOp.range(n, 3, AxisType.REDUCE)
    top = x.index(i * n + k1).load().reduce(k1, arg=Ops.MAX)
    den = (x.index(i * n + k2).load() - top).exp2().reduce(k2, arg=Ops.ADD)
    val = (x.index(i * n + j).load() - top).exp2() / den
    return UOp.sink(out.index(i * n + j).store(val).end(i, j), arg=KernelInfo("softmax"))


def test_every_row_loop_is_vectorized_and_rows_are_threaded() -> None:
    assert hand_coded_optimizations(row_softmax(256, 512), CPU) == [
        Opt(OptOps.PARTIALS, 2, REDUCE_ACCUMULATORS * WIDTH),
        Opt(OptOps.PARTIALS, 3, REDUCE_ACCUMULATORS * WIDTH),
        Opt(OptOps.UPCAST, 1, WIDTH),
        Opt(OptOps.THREAD, 0, 4),
    ]


def test_lanes_of_sequential_loops_do_not_multiply() -> None:
    opts = [Opt(OptOps.PARTIALS, 2, 32), Opt(OptOps.PARTIALS, 3, 32), Opt(OptOps.UPCAST, 1, 16)]
    ast = apply_opts(row_softmax(8, 64), opts, CPU)
    assert lane_count(ast) == 32 <= MAX_LANES  # not 32 * 32 * 16


def test_the_row_is_one_axis_no_reduction_varies_with() -> None:
    ast = row_softmax(8, 64)
    assert [r.arg[0] for r in row_axes(ast)] == [1]


def test_a_workgroup_target_loops_over_the_row_in_each_thread() -> None:
    gpu = PTXRenderer("sm_90")
    ast = row_softmax(256, 512)
    opts = hand_coded_optimizations(ast, gpu)
    assert opts == [Opt(OptOps.LOCAL, 0, 32)]  # a workgroup of 32 rows
    done = apply_opts(ast, opts, gpu)
    assert [r.arg[0] for r in axes_of(done, AxisType.GLOBAL)] == [0]
    assert [r.arg[0] for r in axes_of(done, AxisType.LOOP)] == [1]  # each thread's row


def test_one_reduction_then_the_row_gets_both_loops_vectorized() -> None:
    rows, n = 256, 512
    out = UOp.param(0, dtypes.float32.ptr(rows * n))
    x = UOp.param(1, dtypes.float32.ptr(rows * n))
    i, j, k = UOp.range(rows, 0), UOp.range(n, 1), UOp.range(n, 2, AxisType.REDUCE)
    val = x.index(i * n + j).load() - x.index(i * n + k).load().reduce(k, arg=Ops.MAX)
    ast = UOp.sink(out.index(i * n + j).store(val).end(i, j), arg=KernelInfo("sub_max"))
    assert hand_coded_optimizations(ast, CPU) == [
        Opt(OptOps.PARTIALS, 2, REDUCE_ACCUMULATORS * WIDTH),
        Opt(OptOps.UPCAST, 1, WIDTH),
        Opt(OptOps.THREAD, 0, 4),
    ]
