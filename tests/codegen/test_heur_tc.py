"""Tensor cores in the hand-coded GPU heuristics: a matmul the renderer's tensor cores take
(a Tensor half matmul on PTX sm_80+; padded to the core's shape where that wastes little)
gets TC and up to 2 x 2 core tiles per warp; it renders
mma.sync, and the PTX interpreter's result equals NumPy's. Matmuls no core takes (float32
inputs, a renderer without cores) keep the register block."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.codegen.lower.pipeline import lower, render
from fusegrad.codegen.opt import OptOps, apply_opts, hand_coded_optimizations
from fusegrad.renderer.ptx import PTXRenderer
from fusegrad.uop import Ops, UOp, dtypes

sys.path.insert(0, str(Path(__file__).parents[1] / "renderer" / "ptx"))
from ptx_interp import run_ptx


def _matmul_kernel(m: int, k: int, n: int, dt: object) -> UOp:
    a, b = Tensor.empty(m, k, dtype=dt), Tensor.empty(k, n, dtype=dt)
    kernels = [c.src[0] for c in (a @ b).schedule_linear().src if c.src[0].op is Ops.SINK]
    assert len(kernels) == 1, kernels
    return kernels[0]


@pytest.mark.parametrize(
    ("arch", "mkn", "start", "mmas"),
    [
        ("sm_80", (64, 48, 32), [OptOps.TC, OptOps.UPCAST, OptOps.UPCAST], 4),  # 2 x 2 tiles
        ("sm_90", (64, 48, 32), [OptOps.TC, OptOps.UPCAST, OptOps.UPCAST], 4),
        # M 72 -> 80 (1.11x the work), K 40 -> 48: padded for the core; 5 M tiles: no M upcast
        ("sm_90", (72, 40, 32), [OptOps.PADTO, OptOps.PADTO, OptOps.TC, OptOps.UPCAST], 2),
    ],
)
def test_tensor_half_matmul_gets_tc_renders_mma_and_equals_numpy(
    arch: str, mkn: tuple[int, int, int], start: list[OptOps], mmas: int
) -> None:
    m, k, n = mkn
    ast = _matmul_kernel(m, k, n, dtypes.float16)
    renderer = PTXRenderer(arch)
    opts = hand_coded_optimizations(ast, renderer)
    assert [o.op for o in opts] == start, opts
    optimized = apply_opts(ast, opts, renderer)
    spec = render(optimized, lower(optimized, renderer))
    src = str(spec.src)
    assert src.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == mmas
    rng = np.random.default_rng(5)
    ha = rng.standard_normal((m, k)).astype(np.float16)
    hb = rng.standard_normal((k, n)).astype(np.float16)
    out = bytearray(np.full(m * n, np.nan, np.float16).tobytes())
    params = sorted((u.arg, u.dtype.size) for u in ast.toposort() if u.op is Ops.PARAM)
    assert [size for _, size in params] == [m * n, m * k, k * n]  # out, a, b
    assert spec.local_size is not None
    run_ptx(src, [out, bytearray(ha.tobytes()), bytearray(hb.tobytes())], (),
            spec.global_size, spec.local_size)  # fmt: skip
    got = np.frombuffer(out, np.float16).reshape(m, n).astype(np.float32)
    want = (ha.astype(np.float32) @ hb.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_matmuls_no_core_takes_keep_the_register_block() -> None:
    f32 = _matmul_kernel(64, 64, 64, dtypes.float32)
    assert all(o.op is not OptOps.TC for o in hand_coded_optimizations(f32, PTXRenderer("sm_90")))
    half = _matmul_kernel(64, 64, 64, dtypes.float16)
    no_cores = PTXRenderer("sm_90")
    no_cores.tensor_cores = ()
    opts = hand_coded_optimizations(half, no_cores)
    assert opts and all(o.op is not OptOps.TC for o in opts)
    # M = 20 padded to the core's 16 would be 1.6x the work (over GPU_TC_PAD_MAX)
    odd = _matmul_kernel(20, 32, 32, dtypes.float16)
    assert all(o.op is not OptOps.TC for o in hand_coded_optimizations(odd, PTXRenderer("sm_90")))


SCRIPT = """
from fusegrad import Tensor
from fusegrad.uop import dtypes
a = Tensor.empty(64, 48, dtype=dtypes.float16)
b = Tensor.empty(48, 32, dtype=dtypes.float16)
(a @ b).realize()
"""


def test_dev_null_ptx_half_matmul_picks_tc() -> None:
    """``DEV=NULL:PTX:sm_90``, plain Tensor code: the opts shown at DEBUG=3 start with TC and
    the kernel (printed at DEBUG=4) has the 4 mma.sync of its 2 x 2 core tiles."""
    env = {k: v for k, v in os.environ.items() if k not in ("BEAM", "NOOPT")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True, text=True, timeout=300, check=False,
        env={**env, "DEV": "NULL:PTX:sm_90", "DEBUG": "4"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout + done.stderr
    assert "Opt(op=OptOps.TC, axis=0" in text, text[-3000:]
    assert text.count("mma.sync.aligned.m16n8k16") == 4, text[-3000:]
