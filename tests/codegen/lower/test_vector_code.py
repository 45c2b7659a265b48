"""Register-blocked kernels lower to native-width vector code: float ALU stays in vectors of
the target's width, accumulators are loaded and stored whole, results stay right."""

from __future__ import annotations

import numpy as np
import pytest
import targets as T
from fusegrad.codegen import KernelInfo, to_program
from fusegrad.codegen.opt import Opt, OptOps, apply_opts
from fusegrad.uop import AddrSpace, AxisType, GroupOp, Ops, PtrDType, UOp, dtypes

CPU = T.RENDERERS["cpu"]  # float32 vectors of 4 and 8


def _matmul(n: int, k_: int, m: int, opts: tuple[Opt, ...]) -> UOp:
    c, a, b = (
        T.buf(0, dtypes.float32, n * m),
        T.buf(1, dtypes.float32, n * k_),
        T.buf(2, dtypes.float32, k_ * m),
    )
    i, j, k = T.rng(n, 0), T.rng(m, 1), T.rng(k_, 2, AxisType.REDUCE)
    val = (a.index(i * k_ + k).load() * b.index(k * m + j).load()).reduce(k, arg=Ops.ADD)
    ast = UOp.sink(c.index(i * m + j).store(val).end(i, j), arg=KernelInfo("mm"))
    return apply_opts(ast, opts, CPU)  # applied here: another test may unhook the optimizer


def _float_alu(uops: tuple[UOp, ...]) -> list[UOp]:
    return [u for u in uops if u.op in GroupOp.ALU and u.dtype.scalar() is dtypes.float32]


def _is_reg(idx: UOp) -> bool:
    dt = idx.src[0].dtype
    return isinstance(dt, PtrDType) and dt.addrspace is AddrSpace.REG


BLOCKS = {
    "4x16": (Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 1, 16)),
    "unroll4-4x16": (
        Opt(OptOps.UNROLL, 2, 4),
        Opt(OptOps.UPCAST, 0, 4),
        Opt(OptOps.UPCAST, 1, 16),
    ),
    "2x8-threads": (Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.THREAD, 0, 2)),
}


@pytest.mark.parametrize("block", list(BLOCKS))
def test_blocked_matmul_is_native_vector_code(block: str) -> None:
    n, k_, m = 8, 12, 32
    spec = to_program(_matmul(n, k_, m, BLOCKS[block]), CPU)
    alu = _float_alu(spec.uops)
    assert alu and all(u.dtype.count == 8 for u in alu), [u.dtype for u in alu]
    reg_access = [u for u in spec.uops if u.op in (Ops.LOAD, Ops.STORE) and _is_reg(u.src[0])]
    assert reg_access and all(
        (u.dtype if u.op is Ops.LOAD else u.src[1].dtype).count == 8 for u in reg_access
    )
    assert not any(u.op is Ops.VECTORIZE and u.dtype.scalar() is dtypes.float32 and
                   len(set(u.src)) > 1 for u in spec.uops)  # fmt: skip
    rs = np.random.default_rng(0)
    a, b = rs.random((n, k_), np.float32), rs.random((k_, m), np.float32)
    out = T.run_program(spec, [np.zeros(n * m, np.float32), a, b])[0]
    np.testing.assert_allclose(out.reshape(n, m), a @ b, rtol=1e-5)
