"""Launch grids within the target's ``global_max`` (``lower/hardware_ids.py``): a grid that
would exceed CUDA's 65535 blocks in y or z is packed into the dimensions that have room, and
the kernel, run in the PTX interpreter, still writes every element once."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from fusegrad.codegen import KernelInfo
from fusegrad.codegen.lower.pipeline import lower, render
from fusegrad.codegen.opt import apply_opts
from fusegrad.codegen.renderer import ProgramSpec
from fusegrad.renderer.ptx import PTXRenderer
from fusegrad.uop import UOp, dtypes

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
from ptx_interp import run_ptx

CUDA_GRID = (2**31 - 1, 65535, 65535)


def numbered(*shape: int) -> UOp:
    """out[flat index] = 3 * flat index + 1, one loop per dimension of ``shape``."""
    n = int(np.prod(shape))
    out = UOp.param(0, dtypes.int32.ptr(n))
    rs = [UOp.range(s, i) for i, s in enumerate(shape)]
    idx = rs[0]
    for r, s in zip(rs[1:], shape[1:], strict=True):
        idx = idx * s + r
    store = out.index(idx).store(idx.cast(dtypes.int32) * 3 + 1).end(*rs)
    return UOp.sink(store, arg=KernelInfo("numbered"))


def program(ast: UOp, global_max: tuple[int, ...]) -> ProgramSpec:
    r = PTXRenderer("sm_90")
    r.global_max = global_max
    optimized = apply_opts(ast, [], r)  # every loop a GLOBAL axis
    return render(optimized, lower(optimized, r))


def within(spec: ProgramSpec, limits: tuple[int, ...]) -> bool:
    return all(int(g) <= lim for g, lim in zip(spec.global_size, limits, strict=True))


def test_a_grid_within_the_limits_keeps_one_axis_per_dimension() -> None:
    spec = program(numbered(300, 5), CUDA_GRID)
    assert spec.global_size == (5, 300, 1)


@pytest.mark.parametrize("shape", [(70000, 2), (70000, 3, 2)])
def test_a_grid_over_cudas_y_z_limit_is_packed_and_writes_every_element(
    shape: tuple[int, ...],
) -> None:
    spec = program(numbered(*shape), CUDA_GRID)
    n = int(np.prod(shape))
    assert within(spec, CUDA_GRID) and int(np.prod(spec.global_size)) == n
    assert spec.global_size == (n, 1, 1)  # before: (2, 70000, 1) and (2, 3, 70000)
    assert spec.local_size == (1, 1, 1)
    # the interpreter runs a sample of the blocks: the first, the last and 200 others
    picks = sorted({0, n - 1, *np.random.default_rng(0).integers(0, n, 200).tolist()})
    out = bytearray(np.full(n, -1, np.int32).tobytes())
    run_ptx(str(spec.src), [out], (), spec.global_size, spec.local_size, [(p, 0, 0) for p in picks])
    got = np.frombuffer(out, np.int32)
    assert np.array_equal(got[picks], np.array(picks) * 3 + 1)
    assert (np.delete(got, picks) == -1).all()  # each block wrote its own element only


def test_a_grid_is_split_over_every_dimension_when_each_is_small() -> None:
    limits = (8, 4, 4)  # a target with tiny grid limits: the same packing, on all of it
    spec = program(numbered(12, 3), limits)
    assert spec.global_size == (6, 3, 2)  # 3 and 2 of 12 in x, 3 in y, the last 2 in z
    out = bytearray(np.full(36, -1, np.int32).tobytes())
    run_ptx(str(spec.src), [out], (), spec.global_size, spec.local_size)
    assert np.array_equal(np.frombuffer(out, np.int32), np.arange(36) * 3 + 1)


def test_a_grid_that_cannot_be_packed_raises() -> None:
    with pytest.raises(ValueError, match=r"do not fit the limits \(8, 4, 4\)"):
        program(numbered(5, 7), (8, 4, 4))  # 7 in x; 5 fits neither y nor z, nor divides


def test_a_workgroup_over_the_local_z_limit_is_packed_and_runs() -> None:
    from fusegrad.codegen.opt import Opt, OptOps

    r = PTXRenderer("sm_90")
    r.local_max = (64, 4, 2)  # 4 x 4 x 4 threads: z = 4 is over the limit 2
    opts = [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.LOCAL, 1, 4), Opt(OptOps.LOCAL, 2, 4)]
    ast = apply_opts(numbered(4, 4, 4), opts, r)
    spec = render(ast, lower(ast, r))
    assert spec.local_size == (64, 1, 1) and spec.global_size == (1, 1, 1)
    assert spec.local_size is not None
    out = bytearray(np.full(64, -1, np.int32).tobytes())
    run_ptx(str(spec.src), [out], (), spec.global_size, spec.local_size)
    assert np.array_equal(np.frombuffer(out, np.int32), np.arange(64) * 3 + 1)
