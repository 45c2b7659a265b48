"""The opts that split a reduction. TILE: the loop over reduce tiles goes around the output
loops, partial sums are kept in the output. PARTIALS: lanes of partial sums, combined after
the loop. Results match NumPy through the PYTHON emulator and the CPU device, and every
precondition raises a KernelOptError that says what is wrong."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import opt_testing
import pytest
from fusegrad.codegen.opt import KernelOptError, Opt, OptOps, apply_opt, kernel_axes
from fusegrad.uop import AxisType, Ops, UOp, dtypes

H = opt_testing
CPU, GPU = H.TARGETS.RENDERERS["cpu"], H.TARGETS.RENDERERS["gpu"]
N, K, M = 8, 32, 16


class _Case:
    """What the helpers' runners need: the inputs (one per buffer slot) and no variables."""

    def __init__(self, inputs: list[np.ndarray]) -> None:
        self.inputs, self.var_vals = inputs, {}


def matmul(epilogue: bool = False, out_dt: Any = dtypes.float32) -> UOp:
    """C[N, M] = A[N, K] @ B[K, M] (+ bias[M], relu with ``epilogue``)."""
    c = UOp.param(0, out_dt.ptr(N * M))
    a, b = UOp.param(1, dtypes.float32.ptr(N * K)), UOp.param(2, dtypes.float32.ptr(K * M))
    bias = UOp.param(3, dtypes.float32.ptr(M))
    i, j, k = UOp.range(N, 0), UOp.range(M, 1), UOp.range(K, 2, AxisType.REDUCE)
    val = (a.index(i * K + k).load() * b.index(k * M + j).load()).reduce(k, arg=Ops.ADD)
    if epilogue:
        val = (val + bias.index(j).load()).maximum(UOp.const(0.0, dtypes.float32))
    if out_dt is not dtypes.float32:
        val = val.cast(out_dt)
    return UOp.sink(c.index(i * M + j).store(val).end(i, j))


def inputs() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    rs = np.random.default_rng(0)
    a = rs.standard_normal((N, K)).astype(np.float32)
    b = rs.standard_normal((K, M)).astype(np.float32)
    bias = rs.standard_normal(M).astype(np.float32)
    return [np.zeros(N * M, np.float32), a.reshape(-1), b.reshape(-1), bias], a @ b, bias


def raises(ast: UOp, opt: Opt, renderer: Any, match: str) -> None:
    with pytest.raises(KernelOptError, match=re.escape(match)):
        apply_opt(ast, opt, renderer)


def test_tile_loop_is_outer_and_the_reduce_covers_one_tile() -> None:
    ast = apply_opt(matmul(), Opt(OptOps.TILE, 2, 8), CPU)
    kinds = {(r.arg[0], r.arg[1], r.src[0].arg) for r in kernel_axes(ast)}
    assert kinds == {(0, AxisType.LOOP, N), (1, AxisType.LOOP, M), (2, AxisType.REDUCE, 8),
                     (3, AxisType.OUTER, K // 8)}  # fmt: skip
    loads = [u for u in ast.toposort() if u.op is Ops.LOAD]
    assert any(ld.src[0].src[0].arg == 0 for ld in loads)  # the partial sums read back


@pytest.mark.parametrize("epilogue", [False, True], ids=["plain", "bias_relu"])
@pytest.mark.parametrize("target", ["emulator", "cpu_device"])
def test_tiled_matmul_matches_numpy(epilogue: bool, target: str) -> None:
    arrays, want, bias = inputs()
    if epilogue:
        want = np.maximum(want + bias, 0)
    else:
        arrays = arrays[:3]  # no bias buffer
    opts = [Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.TILE, 2, 8), Opt(OptOps.THREAD, 0, 2)]
    ast = H.with_opts(matmul(epilogue), opts)
    run = H.run_cpu if target == "cpu_device" else lambda c, a: H.run_emulated(c, a, CPU)
    got = run(_Case(arrays), ast)
    np.testing.assert_allclose(got[0].reshape(N, M), want, rtol=1e-5, atol=1e-5)


def test_tile_after_upcasts_and_before_thread_in_any_order() -> None:
    arrays, want, _ = inputs()
    arrays = arrays[:3]
    opts = [Opt(OptOps.TILE, 2, 16), Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 8)]
    got = H.run_emulated(_Case(arrays), H.with_opts(matmul(), opts), CPU)
    np.testing.assert_allclose(got[0].reshape(N, M), want, rtol=1e-5, atol=1e-5)


def _upcast_j() -> UOp:
    return apply_opt(matmul(), Opt(OptOps.UPCAST, 1, 4), CPU)


def test_tile_on_an_output_axis_puts_its_tile_loop_outermost() -> None:
    ast = apply_opt(matmul(), Opt(OptOps.TILE, 0, 4), CPU)
    kinds = {(r.arg[0], r.arg[1], r.src[0].arg) for r in kernel_axes(ast)}
    assert kinds == {(0, AxisType.LOOP, 4), (1, AxisType.LOOP, M), (2, AxisType.REDUCE, K),
                     (3, AxisType.OUTER, N // 4)}  # fmt: skip
    assert not any(u.op is Ops.LOAD and u.src[0].src[0].arg == 0 for u in ast.toposort())


@pytest.mark.parametrize("target", ["emulator", "cpu_device"])
@pytest.mark.parametrize(
    "opts",
    [
        [Opt(OptOps.TILE, 0, 2)],
        # the matmul heuristics' shape for B in panels: rows inside the loop over column
        # blocks, row tiles outermost, cores on column blocks
        [Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.SWAP, 0, 1), Opt(OptOps.THREAD, 0, 2),
         Opt(OptOps.TILE, 1, 4)],
        # both kinds of TILE together
        [Opt(OptOps.TILE, 2, 8), Opt(OptOps.TILE, 0, 4), Opt(OptOps.UPCAST, 1, 4)],
    ],
    ids=["plain", "panel_order", "with_reduce_tiles"],
)  # fmt: skip
def test_output_tiles_match_numpy(opts: list[Opt], target: str) -> None:
    arrays, want, _ = inputs()
    run = H.run_cpu if target == "cpu_device" else lambda c, a: H.run_emulated(c, a, CPU)
    got = run(_Case(arrays[:3]), H.with_opts(matmul(), opts))
    np.testing.assert_allclose(got[0].reshape(N, M), want, rtol=1e-5, atol=1e-5)


def _two_stores() -> UOp:
    ast = matmul()
    end = ast.src[0]
    i, j = end.src[1:]
    extra = UOp.param(4, dtypes.float32.ptr(N * M)).index(i * M + j).store(end.src[0].src[1])
    return UOp.sink(end, extra.end(i, j))


def _reads_output() -> UOp:
    ast = matmul()
    store = ast.src[0].src[0]
    val = store.src[1] + store.src[0].load()
    return ast.substitute({store: store.src[0].store(val)})


def _max_reduce() -> UOp:
    ast = matmul()
    red = next(u for u in ast.toposort() if u.op is Ops.REDUCE)
    return ast.substitute({red: red.replace(arg=Ops.MAX)})


def _mul_reduce() -> UOp:
    ast = matmul()
    red = next(u for u in ast.toposort() if u.op is Ops.REDUCE)
    return ast.substitute({red: red.replace(arg=Ops.MUL)})


@pytest.mark.parametrize(
    ("ast", "opt", "renderer", "match"),
    [
        (_upcast_j(), Opt(OptOps.TILE, 3, 2), CPU, "TILE needs a reduce or LOOP axis"),
        (matmul(), Opt(OptOps.TILE, 0, 4), GPU, "TILE is for CPUs"),
        (matmul(), Opt(OptOps.TILE, 0, 3), CPU, "3 does not divide"),
        (matmul(), Opt(OptOps.TILE, 2, 8), GPU, "TILE is for CPUs"),
        (matmul(), Opt(OptOps.TILE, 2, 32), CPU, "the axis is one tile"),
        (matmul(), Opt(OptOps.TILE, 2, 5), CPU, "5 does not divide"),
        (_two_stores(), Opt(OptOps.TILE, 2, 8), CPU, "one STORE, it has 2"),
        (_reads_output(), Opt(OptOps.TILE, 2, 8), CPU, "reads its output buffer"),
        (_mul_reduce(), Opt(OptOps.TILE, 2, 8), CPU, "one ADD or MAX reduce over the axis"),
        (matmul(out_dt=dtypes.float16), Opt(OptOps.TILE, 2, 8), CPU, "stored exactly"),
    ],
    ids=[
        "upcast_axis",
        "gpu_loop_axis",
        "loop_not_dividing",
        "gpu",
        "one_tile",
        "not_dividing",
        "two_stores",
        "reads_output",
        "mul_reduce",
        "narrower_output",
    ],
)
def test_tile_precondition_raises(ast: UOp, opt: Opt, renderer: Any, match: str) -> None:
    raises(ast, opt, renderer, match)


def test_tile_without_output_loops_reads_back_after_the_previous_tile() -> None:
    # every output axis upcast: the read-back depends on no output loop, only on the tile
    arrays, want, _ = inputs()
    opts = [Opt(OptOps.UPCAST, 0, 0), Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.TILE, 2, 8)]
    ast = H.with_opts(matmul(), opts)
    for got in (H.run_emulated(_Case(arrays[:3]), ast, CPU), H.run_cpu(_Case(arrays[:3]), ast)):
        np.testing.assert_allclose(got[0].reshape(N, M), want, rtol=1e-5, atol=1e-5)


def matmul_bt() -> UOp:
    """C[N, M] = A[N, K] @ Bt[M, K].T: both operands contiguous along K."""
    c = UOp.param(0, dtypes.float32.ptr(N * M))
    a, b = UOp.param(1, dtypes.float32.ptr(N * K)), UOp.param(2, dtypes.float32.ptr(K * M))
    i, j, k = UOp.range(N, 0), UOp.range(M, 1), UOp.range(K, 2, AxisType.REDUCE)
    val = (a.index(i * K + k).load() * b.index(j * K + k).load()).reduce(k, arg=Ops.ADD)
    return UOp.sink(c.index(i * M + j).store(val).end(i, j))


def test_partials_nest_a_reduce_over_lanes_around_the_loop() -> None:
    ast = apply_opt(matmul_bt(), Opt(OptOps.PARTIALS, 2, 8), CPU)
    reds = [u for u in ast.toposort() if u.op is Ops.REDUCE]
    assert len(reds) == 2
    inner, outer = reds
    assert outer.src[0] is inner and [r.arg[1] for r in outer.src[1:]] == [AxisType.UNROLL]
    assert [(r.arg[1], r.src[0].arg) for r in inner.src[1:]] == [(AxisType.REDUCE, K // 8)]


@pytest.mark.parametrize("target", ["emulator", "cpu_device"])
def test_partials_matmul_matches_numpy(target: str) -> None:
    arrays, _, _ = inputs()
    a = arrays[1].reshape(N, K)
    bt = np.random.default_rng(1).standard_normal((M, K)).astype(np.float32)
    case = _Case([arrays[0], arrays[1], bt.reshape(-1)])
    opts = [Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 1, 2), Opt(OptOps.PARTIALS, 2, 8)]
    ast = H.with_opts(matmul_bt(), [*opts, Opt(OptOps.THREAD, 0, 2)])
    run = H.run_cpu if target == "cpu_device" else lambda c, a: H.run_emulated(c, a, CPU)
    got = run(case, ast)
    np.testing.assert_allclose(got[0].reshape(N, M), a @ bt.T, rtol=1e-5, atol=1e-5)


def test_partials_of_a_max_reduce() -> None:
    arrays, _, _ = inputs()
    ast = _max_reduce()
    got = H.run_emulated(_Case(arrays[:3]), H.with_opts(ast, [Opt(OptOps.PARTIALS, 2, 4)]), CPU)
    a, b = arrays[1].reshape(N, K), arrays[2].reshape(K, M)
    want = (a[:, :, None] * b[None, :, :]).max(1)
    np.testing.assert_allclose(got[0].reshape(N, M), want, rtol=1e-6)


def test_tile_of_a_max_reduce_keeps_running_maxima() -> None:
    """TILE on a MAX reduce: the first tile stores its maximum (not max(0, ...): the masked
    read-back is 0), later tiles the max with what is stored."""
    arrays, _, _ = inputs()
    arrays[1] = -np.abs(arrays[1]) - 1  # every product <= -1 or >= 1 by sign of b: max < 0 rows
    arrays[2] = np.abs(arrays[2]) + 1
    got = H.run_emulated(
        _Case(arrays[:3]), H.with_opts(_max_reduce(), [Opt(OptOps.TILE, 2, 8)]), CPU
    )
    a, b = arrays[1].reshape(N, K), arrays[2].reshape(K, M)
    want = (a[:, :, None] * b[None, :, :]).max(1)
    assert (want < 0).all()
    np.testing.assert_allclose(got[0].reshape(N, M), want, rtol=1e-6)


@pytest.mark.parametrize(
    ("opt", "match"),
    [
        (Opt(OptOps.PARTIALS, 0, 4), "PARTIALS needs a reduce axis"),
        (Opt(OptOps.PARTIALS, 2, 5), "5 does not divide"),
        (Opt(OptOps.PARTIALS, 2, 64), "more than 32 lanes"),
    ],
    ids=["loop_axis", "not_dividing", "too_many_lanes"],
)
def test_partials_precondition_raises(opt: Opt, match: str) -> None:
    raises(matmul_bt(), opt, CPU, match)


def _tiled(ast: UOp) -> list[Opt]:
    """A TILE that applies to ``ast`` (the first reduce axis and size that do), or none."""
    for pos, rng in enumerate(kernel_axes(ast)):
        for amount in (2, 4):
            try:
                apply_opt(ast, Opt(OptOps.TILE, pos, amount), CPU)
            except KernelOptError:
                continue
            if rng.arg[1] is AxisType.REDUCE:
                return [Opt(OptOps.TILE, pos, amount)]
    return []


_CORPUS = [c for c in H.CORPUS.build() if _tiled(c.ast)]


@pytest.mark.parametrize("c", _CORPUS, ids=[c.name for c in _CORPUS])
def test_tile_on_the_corpus_matches_unoptimized(c: Any) -> None:
    import random

    tile = _tiled(c.ast)
    rs = random.Random(len(c.name))
    more = H.random_opts(apply_opt(c.ast, tile[0], CPU), CPU, rs, 2)
    want = H.run_emulated(c, H.with_opts(c.ast, []), CPU)
    for opts in (tile, [*tile, *more]):
        got = H.run_emulated(c, H.with_opts(c.ast, opts), CPU)
        for slot in c.expected:
            np.testing.assert_allclose(
                got[slot], want[slot], rtol=1e-5, atol=1e-5, err_msg=f"{opts}"
            )
