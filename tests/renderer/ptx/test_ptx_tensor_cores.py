"""Tensor cores on PTX: the TC opt's tile becomes WMMA (``lower/wmma.py``) and one
``mma.sync.aligned.m16n8k16`` per warp; the kernels assemble with ptxas and, run in the PTX
interpreter (whose mma.sync follows the ISA's fragment layout), equal NumPy's matmul."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fusegrad.codegen import KernelInfo, TensorCore
from fusegrad.codegen.lower.pipeline import lower, render
from fusegrad.codegen.opt import KernelOptError, Opt, OptOps, apply_opts, kernel_axes
from fusegrad.codegen.opt.kernel import lane_count
from fusegrad.codegen.opt.search import beam_search
from fusegrad.codegen.renderer import ProgramSpec
from fusegrad.renderer.ptx import PTXRenderer, assemble, find_ptxas
from fusegrad.uop import AxisType, Context, DType, Ops, UOp, dtypes

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
from ptx_interp import run_ptx

MMA = "mma.sync.aligned.m16n8k16.row.col.f32.{0}.{0}.f32"


def matmul(
    m: int, k: int, n: int, dt: DType = dtypes.float16, a_t: bool = False, b_t: bool = False
) -> UOp:
    """C[m, n] (float32) = sum_k A[m, k] * B[k, n] with A, B of ``dt``, row-major (``a_t``:
    A's buffer holds A transposed, k-major; ``b_t``: B's holds B transposed, n-major)."""
    c = UOp.param(0, dtypes.float32.ptr(m * n))
    a, b = UOp.param(1, dt.ptr(m * k)), UOp.param(2, dt.ptr(k * n))
    i, j, r = UOp.range(m, 0), UOp.range(n, 1), UOp.range(k, 2, AxisType.REDUCE)
    x = a.index(r * m + i if a_t else i * k + r).load().cast(dtypes.float32)
    y = b.index(j * k + r if b_t else r * n + j).load().cast(dtypes.float32)
    out = c.index(i * n + j).store((x * y).reduce(r, arg=Ops.ADD)).end(i, j)
    return UOp.sink(out, arg=KernelInfo(f"mm_{m}_{k}_{n}"))


def program(
    ast: UOp, opts: list[Opt], arch: str = "sm_90", cores: tuple[TensorCore, ...] | None = None
) -> ProgramSpec:
    r = PTXRenderer(arch)
    if cores is not None:
        r.tensor_cores = cores
    optimized = apply_opts(ast, opts, r)
    return render(optimized, lower(optimized, r))


def run(
    spec: ProgramSpec,
    m: int,
    k: int,
    n: int,
    dt: DType,
    seed: int = 0,
    a_t: bool = False,
    b_t: bool = False,
) -> None:
    """Run ``spec`` in the interpreter on random inputs; compare with NumPy in float32."""
    rng = np.random.default_rng(seed)
    a32 = rng.standard_normal((m, k)).astype(np.float32)
    b32 = rng.standard_normal((k, n)).astype(np.float32)
    if dt is dtypes.bfloat16:  # bfloat16: the top 16 bits of a float32 (truncated inputs)
        a_bits = (a32.view(np.uint32) >> 16).astype(np.uint16)
        b_bits = (b32.view(np.uint32) >> 16).astype(np.uint16)
        a32 = (a_bits.astype(np.uint32) << 16).view(np.float32)
        b32 = (b_bits.astype(np.uint32) << 16).view(np.float32)
        a_raw, b_raw = a_bits.tobytes(), b_bits.tobytes()
    else:
        a16, b16 = a32.astype(np.float16), b32.astype(np.float16)
        a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
        a_raw, b_raw = a16.tobytes(), b16.tobytes()
    if a_t or b_t:  # the buffers in their transposed layouts (bit patterns as 16-bit ints)
        a_bits = np.frombuffer(a_raw, np.uint16).reshape(m, k)
        b_bits = np.frombuffer(b_raw, np.uint16).reshape(k, n)
        a_raw = np.ascontiguousarray(a_bits.T if a_t else a_bits).tobytes()
        b_raw = np.ascontiguousarray(b_bits.T if b_t else b_bits).tobytes()
    out = bytearray(np.full((m, n), np.nan, np.float32).tobytes())
    src = spec.src if isinstance(spec.src, str) else spec.src.decode()
    assert spec.local_size is not None
    run_ptx(src, [out, bytearray(a_raw), bytearray(b_raw)], (), spec.global_size, spec.local_size)
    got = np.frombuffer(out, np.float32).reshape(m, n)
    np.testing.assert_allclose(got, a32 @ b32, rtol=1e-5, atol=1e-4)


def _assembles(src: str, arch: str) -> None:
    if find_ptxas() is None:
        pytest.skip("ptxas is not on PATH")
    assert assemble(src, arch)


# -- the renderer's tensor cores -------------------------------------------------------------------


def test_sm80_and_sm90_declare_the_f16_and_bf16_cores_sm75_the_k8_one() -> None:
    for arch in ("sm_80", "sm_90"):
        cores = PTXRenderer(arch).tensor_cores
        assert [(c.dims, c.threads, c.dtype_in, c.dtype_out) for c in cores] == [
            ((8, 16, 16), 32, dtypes.float16, dtypes.float32),
            ((8, 16, 16), 32, dtypes.bfloat16, dtypes.float32),
        ]
    cores = PTXRenderer("sm_75").tensor_cores
    assert [(c.dims, c.dtype_in) for c in cores] == [((8, 16, 8), dtypes.float16)]
    with pytest.raises(KernelOptError, match="no tensor core 1"):
        program(matmul(32, 32, 32, dtypes.bfloat16), [Opt(OptOps.TC, 1)], "sm_75")


def test_sm75_half_matmul_on_m16n8k8_assembles_and_equals_numpy() -> None:
    spec = program(matmul(32, 24, 16), [Opt(OptOps.TC, 0)], "sm_75")
    src = str(spec.src)
    assert src.count("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32") == 1
    run(spec, 32, 24, 16, dtypes.float16, seed=9)
    _assembles(src, "sm_75")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("core", [0, 1])
def test_tc_renders_one_mma_per_k_step_and_assembles(arch: str, core: int) -> None:
    dt = (dtypes.float16, dtypes.bfloat16)[core]
    spec = program(matmul(64, 64, 64, dt), [Opt(OptOps.TC, core)], arch)
    src = str(spec.src)
    kind = "f16" if core == 0 else "bf16"
    assert src.count("mma.sync") == 1 and MMA.format(kind) in src
    assert spec.local_size == (32, 1, 1)  # one warp: lane = %tid.x
    assert spec.global_size == (8, 4, 1)  # N / 8 by M / 16 tiles
    assert [u.op for u in spec.uops].count(Ops.WMMA) == 1
    _assembles(src, arch)


def test_a_fragments_element_pairs_are_loaded_two_at_a_time() -> None:
    src = str(program(matmul(16, 32, 8), [Opt(OptOps.TC, 0)]).src)
    assert src.count("ld.global.v2.u16") == 4  # A (row-major): 4 pairs; B: 4 single loads
    assert src.count("ld.global.u16") == 4


def test_tc_tiles_m_as_eight_threads_times_two_lanes() -> None:
    r = PTXRenderer("sm_90")
    ast = apply_opts(matmul(32, 32, 16), [Opt(OptOps.TC, 0)], r)
    assert [(x.arg[1], x.src[0].arg) for x in kernel_axes(ast)][3:] == [
        (AxisType.LOCAL, 8), (AxisType.LOCAL, 8), (AxisType.UPCAST, 2), (AxisType.UNROLL, 16),
    ]  # fmt: skip
    assert lane_count(ast) == 32  # within BEAM's lane budget (BEAM_UPCAST_MAX)


def test_a_core_without_the_m_threads_layout_also_becomes_mma() -> None:
    plain = tuple(replace(c, opts=()) for c in PTXRenderer("sm_90").tensor_cores)
    spec = program(matmul(32, 32, 16), [Opt(OptOps.TC, 0)], cores=plain)
    assert str(spec.src).count("mma.sync") == 1  # M as an UPCAST of 16: the same mma
    run(spec, 32, 32, 16, dtypes.float16, seed=7)


def test_beam_on_ptx_can_choose_tensor_cores() -> None:
    """BEAM's actions include TC and its tile fits the lane budget: with a timer that finds
    mma.sync kernels fastest (no GPU here), the search picks TC."""

    def timer(spec: ProgramSpec, lib: object = None, limit: object = None) -> float:
        return 1e-3 if "mma.sync" in str(spec.src) else 2e-3

    with Context(CACHELEVEL=0, PARALLEL=0):
        opts = beam_search(matmul(16, 32, 16), PTXRenderer("sm_90"), 1, timer, max_rounds=1)
    assert opts == [Opt(OptOps.TC, 0)]


def test_the_k_loop_accumulates_through_the_mma_c_operand() -> None:
    spec = program(matmul(16, 64, 8), [Opt(OptOps.TC, 0)])
    wmma = next(u for u in spec.uops if u.op is Ops.WMMA)
    assert wmma.src[2].op is not Ops.VCONST  # the accumulator, not a zero C plus an ADD
    assert not [u for u in spec.uops if u.op is Ops.ADD and u.dtype.scalar() is dtypes.float32]


# -- results in the interpreter -------------------------------------------------------------------


def test_half_matmul_with_tensor_cores_equals_numpy() -> None:
    spec = program(matmul(32, 48, 16), [Opt(OptOps.TC, 0)])
    assert "mma.sync" in str(spec.src)
    run(spec, 32, 48, 16, dtypes.float16)


@pytest.mark.parametrize("a_t,b_t", [(True, False), (False, True)])
def test_transposed_operand_layouts_equal_numpy(a_t: bool, b_t: bool) -> None:
    spec = program(matmul(16, 32, 16, a_t=a_t, b_t=b_t), [Opt(OptOps.TC, 0)])
    src = str(spec.src)
    assert "mma.sync" in src
    if b_t:  # B's element pairs are adjacent in memory now: loaded two at a time
        assert src.count("ld.global.v2.u16") == 4 + 2
    run(spec, 16, 32, 16, dtypes.float16, seed=5, a_t=a_t, b_t=b_t)


def test_bfloat16_matmul_with_tensor_cores_equals_numpy() -> None:
    spec = program(matmul(16, 32, 24, dtypes.bfloat16), [Opt(OptOps.TC, 1)], "sm_80")
    assert MMA.format("bf16") in str(spec.src)
    run(spec, 16, 32, 24, dtypes.bfloat16, seed=1)


def test_padded_non_multiple_shape_uses_tensor_cores_and_equals_numpy() -> None:
    m, k, n = 20, 24, 12  # no dimension a multiple of the core's: PADTO first, then TC
    pads = [Opt(OptOps.PADTO, 0, 16), Opt(OptOps.PADTO, 1, 8), Opt(OptOps.PADTO, 2, 16)]
    spec = program(matmul(m, k, n), [*pads, Opt(OptOps.TC, 0)])
    assert "mma.sync" in str(spec.src)
    run(spec, m, k, n, dtypes.float16, seed=2)
    _assembles(str(spec.src), "sm_90")


def test_tc_with_another_local_axis_keeps_the_warp_on_tid_x() -> None:
    spec = program(matmul(32, 16, 16), [Opt(OptOps.TC, 0), Opt(OptOps.LOCAL, 1, 2)])
    assert "mma.sync" in str(spec.src)
    assert spec.local_size == (32, 2, 1)  # two warps, each along %tid.x
    run(spec, 32, 16, 16, dtypes.float16, seed=4)


@pytest.mark.parametrize(
    "extra,mmas,loads",
    [
        ([Opt(OptOps.UPCAST, 0, 2)], 2, 12),  # two M tiles share B's fragment
        ([Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 2)], 4, 16),  # 2 x 2 tiles
    ],
)
def test_upcasts_after_tc_give_several_mmas_sharing_fragments(
    extra: list[Opt], mmas: int, loads: int
) -> None:
    spec = program(matmul(64, 32, 32), [Opt(OptOps.TC, 0), *extra])
    src = str(spec.src)
    assert src.count("mma.sync") == mmas and src.count("ld.global") == loads
    assert "add.f32" not in src  # every mma accumulates into its own lanes through C
    run(spec, 64, 32, 32, dtypes.float16, seed=8)


def test_tc_with_a_grouped_reduce_falls_back_to_plain_lanes_and_stays_right() -> None:
    spec = program(matmul(16, 32, 8), [Opt(OptOps.TC, 0), Opt(OptOps.GROUPTOP, 2, 2)])
    assert "mma.sync" not in str(spec.src)  # a layout the stage does not know: lanes
    run(spec, 16, 32, 8, dtypes.float16, seed=3)


def test_tc_rejects_a_non_multiple_shape_without_padding() -> None:
    with pytest.raises(KernelOptError, match="not a multiple"):
        program(matmul(20, 16, 8), [Opt(OptOps.TC, 0)])


# -- the interpreter's mma.sync --------------------------------------------------------------------


def test_interpreter_mma_needs_the_whole_warp() -> None:
    spec = program(matmul(16, 16, 8), [Opt(OptOps.TC, 0)])
    src = str(spec.src)
    bufs = [bytearray(16 * 8 * 4), bytearray(16 * 16 * 2), bytearray(16 * 8 * 2)]
    with pytest.raises(RuntimeError, match="part of a warp"):
        run_ptx(src, bufs, (), (1, 1, 1), (16, 1, 1))


def test_tensor_style_half_product_with_a_fused_epilogue() -> None:
    """The graph a Tensor half matmul makes (the product in half, CAST to float32, REDUCE),
    with a bias and relu fused after it and a half output: one mma, NumPy's result (the
    tensor core's products are exact, as the float32 reference's)."""
    m, k, n = 32, 32, 16
    c = UOp.param(0, dtypes.float16.ptr(m * n))
    a, b = UOp.param(1, dtypes.float16.ptr(m * k)), UOp.param(2, dtypes.float16.ptr(k * n))
    bias = UOp.param(3, dtypes.float32.ptr(n))
    i, j, r = UOp.range(m, 0), UOp.range(n, 1), UOp.range(k, 2, AxisType.REDUCE)
    prod = (a.index(i * k + r).load() * b.index(r * n + j).load()).cast(dtypes.float32)
    acc = prod.reduce(r, arg=Ops.ADD) + bias.index(j).load()
    relu = UOp(Ops.MAX, dtypes.float32, (acc, UOp.const(0.0, dtypes.float32)))
    store = c.index(i * n + j).store(relu.cast(dtypes.float16)).end(i, j)
    spec = program(UOp.sink(store, arg=KernelInfo("epilogue")), [Opt(OptOps.TC, 0)])
    assert str(spec.src).count("mma.sync") == 1
    rng = np.random.default_rng(6)
    ha = rng.standard_normal((m, k)).astype(np.float16)
    hb = rng.standard_normal((k, n)).astype(np.float16)
    hbias = rng.standard_normal(n).astype(np.float32)
    out = bytearray(m * n * 2)
    bufs = [out, bytearray(ha.tobytes()), bytearray(hb.tobytes()), bytearray(hbias.tobytes())]
    assert spec.local_size is not None
    run_ptx(str(spec.src), bufs, (), spec.global_size, spec.local_size)
    got = np.frombuffer(out, np.float16).reshape(m, n)
    exact = ha.astype(np.float32) @ hb.astype(np.float32) + hbias
    np.testing.assert_allclose(
        got.astype(np.float32), np.maximum(exact, 0).astype(np.float16).astype(np.float32),
        rtol=1e-3, atol=1e-3,
    )  # fmt: skip


_NULL_TC_SCRIPT = """
import sys
sys.path.insert(0, {tools!r})
import tensor_cores as tc
from fusegrad import Tensor
from fusegrad.runtime import Device
from fusegrad.uop import dtypes
a = Tensor.empty(64, 48, dtype=dtypes.float16).realize()
b = Tensor.empty(48, 40, dtype=dtypes.float16).realize()
out = tc.tc_matmul(a, b, "NULL")()  # padded to 64 x 48 x 48: compiled (ptxas), not run
src = tc.tc_source(64, 48, 40, dtypes.float16, "NULL")
print(Device["NULL"].renderer.arch, out.shape, src.count("mma.sync"))
"""


def test_dev_null_ptx_compiles_a_tensor_core_matmul_from_tensor_code() -> None:
    """``DEV=NULL:PTX:sm_90``: Tensor.custom_kernel with TC opts (tools/gpu/tensor_cores.py)
    renders mma.sync and compiles (with ptxas when present); nothing runs."""
    import os
    import subprocess

    tools = str(Path(__file__).parents[3] / "tools" / "gpu")
    proc = subprocess.run(
        [sys.executable, "-c", _NULL_TC_SCRIPT.format(tools=tools)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "DEV": "NULL:PTX:sm_90"},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["sm_90", "(64,", "40)", "1"]
