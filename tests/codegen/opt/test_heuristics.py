"""Hand-coded optimizations and the pipeline hook: which opts kernels get, NOOPT, explicit
opts, recording in the ProgramSpec, DEBUG>=3 output; heuristic kernels still compute the
right thing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import opt_testing
import pytest
from fusegrad.codegen import KernelInfo, to_program
from fusegrad.codegen.opt import Opt, OptOps, choose_opts, hand_coded_optimizations
from fusegrad.uop import AxisType, Context, Ops, UOp, dtypes

H = opt_testing
CPU, GPU = H.TARGETS.RENDERERS["cpu"], H.TARGETS.RENDERERS["gpu"]


def matmul(n: int = 64, name: str = "mm") -> UOp:
    c, a, b = (UOp.param(s, dtypes.float32.ptr(n * n)) for s in range(3))
    i, j, k = UOp.range(n, 0), UOp.range(n, 1), UOp.range(n, 2, AxisType.REDUCE)
    val = (a.index(i * n + k).load() * b.index(k * n + j).load()).reduce(k, arg=Ops.ADD)
    return UOp.sink(c.index(i * n + j).store(val).end(i, j), arg=KernelInfo(name))


def conv3x3(cin: int = 4, cout: int = 8, hw: int = 16) -> UOp:
    oh = hw - 2
    out = UOp.param(0, dtypes.float32.ptr(cout * oh * oh))
    x, w = (
        UOp.param(1, dtypes.float32.ptr(cin * hw * hw)),
        UOp.param(2, dtypes.float32.ptr(cout * cin * 9)),
    )
    co, y, xx = UOp.range(cout, 0), UOp.range(oh, 1), UOp.range(oh, 2)
    ci, ky, kx = (UOp.range(s, a, AxisType.REDUCE) for s, a in ((cin, 3), (3, 4), (3, 5)))
    pix = x.index(ci * hw * hw + (y + ky) * hw + xx + kx).load()
    tap = w.index(co * cin * 9 + ci * 9 + ky * 3 + kx).load()
    val = (pix * tap).reduce(ci, ky, kx, arg=Ops.ADD)
    return UOp.sink(
        out.index((co * oh + y) * oh + xx).store(val).end(co, y, xx), arg=KernelInfo("conv")
    )


def test_cpu_matmul_is_vectorized_along_n_tiled_along_k_and_threaded() -> None:
    assert hand_coded_optimizations(matmul(256), CPU) == [
        Opt(OptOps.PADTO, 0, 24),  # M padded to 6-row blocks times the 4 cores (264 rows)
        Opt(OptOps.UPCAST, 0, 6),  # a 6 x 16 register block (12 accumulators): M by 6
        Opt(OptOps.UPCAST, 1, 16),  # N by two vectors, the innermost lanes
        Opt(OptOps.TILE, 2, 32),  # K in tiles of 32 around the output loops: B's tile cached
        Opt(OptOps.THREAD, 0, 4),  # M split across the cores (each reuses B's whole tile)
    ]


def test_cpu_matmul_rows_divisible_by_the_block_are_not_padded() -> None:
    opts = hand_coded_optimizations(matmul(288), CPU)
    assert opts[0] == Opt(OptOps.UPCAST, 0, 6) and all(o.op is not OptOps.PADTO for o in opts)


def test_cpu_matmul_with_few_rows_falls_back_to_4_row_blocks() -> None:
    opts = hand_coded_optimizations(matmul(64), CPU)  # 64 rows: too few to pad
    assert opts[0] == Opt(OptOps.UPCAST, 0, 4)


def test_cpu_matmul_splits_the_columns_when_b_tiles_outgrow_a_core() -> None:
    # 2048 columns x a K tile of 32 = 256 KiB of B per tile: each core takes half the columns
    opts = hand_coded_optimizations(matmul(2048), CPU)
    assert opts[-2:] == [Opt(OptOps.TILE, 2, 32), Opt(OptOps.THREAD, 1, 4)]


def matmul_b_in_panels(n: int = 256) -> UOp:
    """``matmul`` reading B from 16-column panels (the scheduler's layout copy)."""
    c, a, b = (UOp.param(s, dtypes.float32.ptr(n * n)) for s in range(3))
    i, j, k = UOp.range(n, 0), UOp.range(n, 1), UOp.range(n, 2, AxisType.REDUCE)
    b_at = (j // 16) * (n * 16) + k * 16 + j % 16
    val = (a.index(i * n + k).load() * b.index(b_at).load()).reduce(k, arg=Ops.ADD)
    return UOp.sink(c.index(i * n + j).store(val).end(i, j), arg=KernelInfo("mm_panels"))


def test_cpu_matmul_over_panels_streams_them_instead_of_tiling() -> None:
    assert hand_coded_optimizations(matmul_b_in_panels(), CPU) == [
        Opt(OptOps.PADTO, 0, 24),
        Opt(OptOps.UPCAST, 0, 6),
        Opt(OptOps.UPCAST, 1, 16),  # one panel row per step of K: no K tiles
        Opt(OptOps.SWAP, 0, 1),  # the loop over panels outside the row blocks
        Opt(OptOps.THREAD, 0, 4),  # each core its own panels (columns)
    ]


def test_cpu_matmul_over_panels_matches_numpy() -> None:
    n = 96
    rs = np.random.default_rng(3)
    a, b = rs.standard_normal((n, n), np.float32), rs.standard_normal((n, n), np.float32)
    panels = b.reshape(n, n // 16, 16).transpose(1, 0, 2).reshape(-1)
    ast = matmul_b_in_panels(n)
    opts = hand_coded_optimizations(ast, CPU)
    assert opts[-2:] == [Opt(OptOps.SWAP, 0, 1), Opt(OptOps.THREAD, 0, 3)]
    opts[-1] = Opt(OptOps.THREAD, 0, 2)  # the test renderer has 4 cores, the CPU device 2+
    case = SimpleNamespace(inputs=[np.zeros(n * n, np.float32), a.reshape(-1), panels], var_vals={})
    got = H.run_cpu(case, H.with_opts(ast, opts))
    np.testing.assert_allclose(got[0].reshape(n, n), a @ b, rtol=1e-4, atol=1e-4)


def test_cpu_matmul_with_b_transposed_runs_vectors_along_k() -> None:
    c, a, b = (UOp.param(s, dtypes.float32.ptr(64 * 64)) for s in range(3))
    i, j, k = UOp.range(64, 0), UOp.range(64, 1), UOp.range(64, 2, AxisType.REDUCE)
    val = (a.index(i * 64 + k).load() * b.index(j * 64 + k).load()).reduce(k, arg=Ops.ADD)
    ast = UOp.sink(c.index(i * 64 + j).store(val).end(i, j), arg=KernelInfo("mm_bt"))
    assert hand_coded_optimizations(ast, CPU) == [
        Opt(OptOps.UPCAST, 0, 4),  # rows of A: 4 registers
        Opt(OptOps.UPCAST, 1, 2),  # rows of W: 2 registers
        Opt(OptOps.PARTIALS, 2, 8),  # vectors along K: 8 lanes of partial sums
        Opt(OptOps.THREAD, 0, 4),
    ]


def test_cpu_matmul_with_few_rows_swaps_instead_of_tiling() -> None:
    opts = hand_coded_optimizations(matmul(64), CPU)
    assert Opt(OptOps.SWAP, 0, 1) in opts and all(o.op is not OptOps.TILE for o in opts)


def test_cpu_matmul_with_a_short_reduce_swaps_instead_of_tiling() -> None:
    c, a, b = (UOp.param(s, dtypes.float32.ptr(64 * 64)) for s in range(3))
    i, j, k = UOp.range(64, 0), UOp.range(64, 1), UOp.range(32, 2, AxisType.REDUCE)
    val = (a.index(i * 32 + k).load() * b.index(k * 64 + j).load()).reduce(k, arg=Ops.ADD)
    ast = UOp.sink(c.index(i * 64 + j).store(val).end(i, j), arg=KernelInfo("mm"))
    opts = hand_coded_optimizations(ast, CPU)
    assert Opt(OptOps.SWAP, 0, 1) in opts and all(o.op is not OptOps.TILE for o in opts)


def test_cpu_matmul_register_blocking(monkeypatch: pytest.MonkeyPatch) -> None:
    from fusegrad.codegen.opt import heuristics

    monkeypatch.setattr(heuristics, "MATMUL_BLOCK", (4, 4, 2))
    opts = hand_coded_optimizations(matmul(), CPU)
    ops = [o.op for o in opts]
    assert OptOps.UPCAST in ops and OptOps.THREAD in ops
    upcast_axes = {o.axis for o in opts if o.op is OptOps.UPCAST}
    assert upcast_axes == {0, 1}  # both output axes: a block of registers
    assert opts[0] == Opt(OptOps.UNROLL, 2, 4)
    upcasts = [o for o in opts if o.op is OptOps.UPCAST]
    assert upcasts[-1] == Opt(OptOps.UPCAST, 1, 16)  # N last: the innermost, contiguous lanes


def test_cpu_elementwise_vectorizes_the_contiguous_axis() -> None:
    out, x = UOp.param(0, dtypes.float32.ptr(64 * 64)), UOp.param(1, dtypes.float32.ptr(64 * 64))
    i, j = UOp.range(64, 0), UOp.range(64, 1)
    ast = UOp.sink(out.index(j * 64 + i).store(x.index(j * 64 + i).load() + 1.0).end(i, j))
    assert hand_coded_optimizations(ast, CPU)[0] == Opt(OptOps.UPCAST, 0, 8)


def test_cpu_small_reductions_are_unrolled() -> None:
    opts = hand_coded_optimizations(conv3x3(), CPU)
    assert Opt(OptOps.UNROLL, 5, 0) in opts  # kx (3), the innermost reduce, whole


def test_gpu_uses_locals_and_groups_big_reductions() -> None:
    assert any(o.op is OptOps.LOCAL for o in hand_coded_optimizations(matmul(), GPU))
    out, x = UOp.param(0, dtypes.float32.ptr(4)), UOp.param(1, dtypes.float32.ptr(4 * 1024))
    i, k = UOp.range(4, 0), UOp.range(1024, 1, AxisType.REDUCE)
    red = UOp.sink(
        out.index(i).store(x.index(i * 1024 + k).load().reduce(k, arg=Ops.ADD)).end(i),
        arg=KernelInfo("s"),
    )
    assert hand_coded_optimizations(red, GPU)[0].op is OptOps.GROUPTOP


@pytest.mark.parametrize("target", ["cpu", "gpu"])
@pytest.mark.parametrize("build", [matmul, conv3x3], ids=["matmul", "conv"])
def test_heuristic_kernels_match_unoptimized(build: Any, target: str) -> None:
    renderer = H.TARGETS.RENDERERS[target]
    ast = build(16) if build is matmul else build(2, 4, 8)
    spec = to_program(ast, renderer)
    assert spec.applied_opts == tuple(hand_coded_optimizations(ast, renderer))
    rs = np.random.default_rng(0)
    arrays = [
        np.zeros(b.size, np.float32) if b.written else rs.random(b.size, np.float32)
        for b in spec.buffers
    ]
    got = H.TARGETS.run_program(spec, arrays)[0]
    want = H.TARGETS.run_program(to_program(H.with_opts(ast, []), renderer), arrays)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_hook_decides_by_kernel_info_and_noopt() -> None:
    raw = matmul().replace(arg=None)
    assert choose_opts(raw, CPU) == []  # hand-built AST without KernelInfo: as is
    assert choose_opts(matmul(), CPU) == hand_coded_optimizations(matmul(), CPU)
    given = [Opt(OptOps.UPCAST, 0, 2)]
    assert choose_opts(H.with_opts(matmul(), given), CPU) == given
    assert choose_opts(H.with_opts(matmul(), [("UNROLL", 2, 4)]), CPU) == [Opt(OptOps.UNROLL, 2, 4)]
    with Context(NOOPT=1):
        assert choose_opts(matmul(), CPU) == []
        assert choose_opts(H.with_opts(matmul(), given), CPU) == given


def test_applied_opts_are_recorded_and_shown_at_debug_3(capsys: pytest.CaptureFixture[str]) -> None:
    with Context(DEBUG=3):
        spec = to_program(matmul(32, name="shown"), CPU)
    assert spec.applied_opts and "opts shown: [Opt(op=OptOps." in capsys.readouterr().out


def test_matmul_with_fused_operands_is_blocked_like_a_matmul() -> None:
    # attention's q @ k.T with the projections' biases fused into both factors
    n, d = 16, 32
    out = UOp.param(0, dtypes.float32.ptr(n * n))
    q, k, bias = (UOp.param(s, dtypes.float32.ptr(n * d)) for s in (1, 2, 3))
    i, j, r = UOp.range(n, 0), UOp.range(n, 1), UOp.range(d, 2, AxisType.REDUCE)
    qf = q.index(i * d + r).load() + bias.index(r).load()
    kf = (k.index(j * d + r).load() + bias.index(r).load()) * 0.5
    ast = UOp.sink(out.index(i * n + j).store((qf * kf).reduce(r, arg=Ops.ADD)).end(i, j),
                   arg=KernelInfo("qk"))  # fmt: skip
    opts = hand_coded_optimizations(ast, CPU)
    assert Opt(OptOps.PARTIALS, 2, 8) in opts
    rs = np.random.default_rng(0)
    arrays = [np.zeros(n * n, np.float32), *(rs.random(n * d, np.float32) for _ in range(3))]
    got = H.run_emulated(_Inputs(arrays), H.with_opts(ast, opts), CPU)
    qa, ka, b = (a.reshape(n, d) for a in arrays[1:])
    want = (qa + b[0]) @ ((ka + b[0]) * 0.5).T
    np.testing.assert_allclose(got[0].reshape(n, n), want, rtol=1e-5)


class _Inputs:
    def __init__(self, inputs: list[np.ndarray]) -> None:
        self.inputs, self.var_vals = inputs, {}
