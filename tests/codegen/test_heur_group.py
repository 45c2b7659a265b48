"""GROUP vs GROUPTOP in the hand-coded GPU heuristics: ``Renderer.group_top`` picks which
split a big reduction gets. GPUs (PTX) keep GROUPTOP (a warp's loads coalesce); the NIR
renderer, whose workgroup is llvmpipe's SIMD lanes of one core, gets GROUP (a gather's lanes
on adjacent floats, not a run apart)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from fusegrad.codegen import KernelInfo, Renderer, to_program
from fusegrad.codegen.opt import OptOps, hand_coded_optimizations
from fusegrad.renderer.nir import mesa_unavailable
from fusegrad.renderer.ptx import PTXRenderer
from fusegrad.uop import AxisType, Ops, UOp, dtypes

MESA = mesa_unavailable()


def row_sums(rows: int, n: int) -> UOp:
    out, x = UOp.param(0, dtypes.float32.ptr(rows)), UOp.param(1, dtypes.float32.ptr(rows * n))
    i, k = UOp.range(rows, 0), UOp.range(n, 1, AxisType.REDUCE)
    val = x.index(i * n + k).load().reduce(k, arg=Ops.ADD)
    return UOp.sink(out.index(i).store(val).end(i), arg=KernelInfo("rowsum"))


class _LanesRenderer(Renderer):
    """A GPU-style renderer whose workgroups are SIMD lanes (as the NIR renderer's)."""

    device = "CPU"
    suffix = "LANES"
    has_local = True
    has_shared = True
    local_max = (8, 8, 8)
    group_top = False


def _group_ops(renderer: Renderer) -> list[OptOps]:
    opts = hand_coded_optimizations(row_sums(2, 1 << 16), renderer)
    return [o.op for o in opts if o.op in (OptOps.GROUP, OptOps.GROUPTOP)]


def test_renderers_default_to_grouptop() -> None:
    assert Renderer.group_top is True
    assert PTXRenderer("sm_80").group_top is True
    assert _group_ops(PTXRenderer("sm_80")) == [OptOps.GROUPTOP]


def test_lane_renderer_groups_interleaved() -> None:
    assert _group_ops(_LanesRenderer()) == [OptOps.GROUP]


@pytest.mark.skipif(MESA is not None, reason=str(MESA))
def test_nir_renderer_groups_and_sums_like_numpy() -> None:
    from fusegrad.renderer import CPUProgram
    from fusegrad.renderer.nir import LVPCompiler, NIRRenderer
    from fusegrad.renderer.nir.renderer import cpu_signature

    renderer = NIRRenderer()
    assert renderer.group_top is False
    rows, n = 3, 1 << 14
    ast = row_sums(rows, n)
    opts = hand_coded_optimizations(ast, renderer)
    assert [o.op for o in opts if o.op in (OptOps.GROUP, OptOps.GROUPTOP)] == [OptOps.GROUP]
    spec = to_program(ast, renderer)
    x = np.random.default_rng(0).standard_normal(rows * n).astype(np.float32)
    bufs = [np.zeros(rows, np.float32), x]
    src = renderer.render(list(spec.uops), spec.name)
    CPUProgram(LVPCompiler().compile_cached(src), cpu_signature(list(spec.uops), spec.name))(
        bufs, {}
    )
    want = x.astype(np.float64).reshape(rows, n).sum(1)
    np.testing.assert_allclose(bufs[0], want, rtol=1e-4, atol=1e-3)


SCRIPT = """
import numpy as np
from fusegrad import Device, Tensor
assert type(Device["CPU"].renderer).__name__ == "NIRRenderer", Device["CPU"].renderer
x = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32)
got = Tensor(x).sum().numpy()
np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
print("ok")
"""


@pytest.mark.skipif(MESA is not None, reason=str(MESA))
def test_tensor_sum_on_lvp_matches_numpy() -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "BEAM")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True, text=True, timeout=300, check=False, env={**env, "DEV": "CPU:LVP"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
