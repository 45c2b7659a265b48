"""PADTO on an output axis: stores of the padded rows are masked; strided loads read the last
real row instead of being masked (no branch in the loops inside: a matmul's 6-row block on
1024 rows), contiguous loads stay masked (they may become one vector load); results equal
the unpadded kernel's."""

from __future__ import annotations

import numpy as np
import opt_testing
from fusegrad.codegen import KernelInfo, to_program
from fusegrad.codegen.opt import Opt, OptOps, apply_opts
from fusegrad.uop import AxisType, Ops, UOp, dtypes

H = opt_testing
CPU = H.TARGETS.RENDERERS["cpu"]
M, K, N = 10, 8, 16


def matmul() -> UOp:
    c = UOp.param(0, dtypes.float32.ptr(M * N))
    a = UOp.param(1, dtypes.float32.ptr(M * K))
    b = UOp.param(2, dtypes.float32.ptr(K * N))
    i, j, k = UOp.range(M, 0), UOp.range(N, 1), UOp.range(K, 2, AxisType.REDUCE)
    val = (a.index(i * K + k).load() * b.index(k * N + j).load()).reduce(k, arg=Ops.ADD)
    return UOp.sink(c.index(i * N + j).store(val).end(i, j), arg=KernelInfo("mm"))


def _index_of(ast: UOp, slot: int, op: Ops) -> UOp:
    return next(u.src[0] for u in ast.toposort() if u.op is op and u.src[0].src[0].arg == slot)


def test_strided_loads_are_clamped_stores_masked() -> None:
    ast = apply_opts(matmul(), [Opt(OptOps.PADTO, 0, 6)], CPU)  # 10 -> 12 rows
    a_idx = _index_of(ast, 1, Ops.LOAD)
    assert a_idx.src[1].get_valid().op is Ops.CONST  # no mask (valid: True)
    assert any(u.op is Ops.WHERE for u in a_idx.src[1].toposort())  # the clamp
    c_idx = _index_of(ast, 0, Ops.STORE)
    assert c_idx.src[1].get_valid().op is not Ops.CONST  # the padded rows' stores are skipped


def test_contiguous_loads_stay_masked() -> None:
    ast = apply_opts(matmul(), [Opt(OptOps.PADTO, 1, 24)], CPU)  # 16 -> 24 columns
    b_idx = _index_of(ast, 2, Ops.LOAD)
    assert b_idx.src[1].get_valid().op is not Ops.CONST


def test_padded_rows_give_the_unpadded_result() -> None:
    rs = np.random.default_rng(0)
    a = rs.random((M, K), np.float32)
    b = rs.random((K, N), np.float32)
    outs = []
    for opts in ([], [Opt(OptOps.PADTO, 0, 6), Opt(OptOps.UPCAST, 0, 6)]):
        spec = to_program(H.with_opts(matmul(), opts), CPU)
        arrays = [np.full(M * N, 7, np.float32), a.reshape(-1), b.reshape(-1)]
        outs.append(H.TARGETS.run_program(spec, arrays)[0])
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[1].reshape(M, N), a @ b, rtol=1e-5)
