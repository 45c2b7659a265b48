"""Estimates of tensor-core kernels: a WMMA counts its instruction's work (N * M * K * 2 flops
per warp-wide mma, spread over the threads that run it), so a matmul's ops are the same
2 * M * N * K with TC (one mma per tile, register-blocked tiles, K loops) as without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fusegrad.codegen.opt import Opt, OptOps
from fusegrad.uop import Ops, dtypes

sys.path.insert(0, str(Path(__file__).parents[1] / "renderer" / "ptx"))
from test_ptx_tensor_cores import matmul, program


@pytest.mark.parametrize(
    ("mkn", "extra"),
    [
        ((16, 16, 8), []),  # one mma
        ((64, 64, 64), []),  # a K loop of 4 mma per tile
        ((64, 32, 32), [Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 2)]),  # 2 x 2 tiles
        ((32, 16, 16), [Opt(OptOps.LOCAL, 1, 2)]),  # two warps per workgroup
    ],
)
def test_tc_matmul_ops_are_2mnk_as_without_tc(mkn: tuple[int, int, int], extra: list[Opt]) -> None:
    m, k, n = mkn
    for dt in (dtypes.float16, dtypes.bfloat16):
        spec = program(
            matmul(m, k, n, dt), [Opt(OptOps.TC, 0 if dt is dtypes.float16 else 1), *extra]
        )
        assert any(u.op is Ops.WMMA for u in spec.uops)
        assert spec.estimates.ops == 2 * m * n * k
        plain = program(matmul(m, k, n, dt), [])
        assert plain.estimates.ops == spec.estimates.ops
