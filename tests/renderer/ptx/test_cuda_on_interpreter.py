"""The CUDA device end to end on a fake ``libcuda`` (``fake_driver``) whose kernels run in the
PTX interpreter: the device's driver calls, launch parameters and dimensions, copies through
pinned staging, views, signals, events and BEAM's timer are exercised here without a GPU,
with Tensor code on ``device="CUDA"`` compared with NumPy."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad.renderer.conformance import compare, fresh_buffers
from fusegrad.renderer.corpus import corpus
from fusegrad.runtime import Buffer, Device, HWQueue, Signal, device_cuda, run_linear
from fusegrad.uop import AxisType, UOp, dtypes

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
from fake_driver import FakeDriver


def _open(monkeypatch: pytest.MonkeyPatch, fake: FakeDriver, name: str) -> device_cuda.CUDADevice:
    dev = device_cuda.CUDADevice(name)
    monkeypatch.setitem(Device._opened, name, dev)
    return dev


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeDriver, Any]]:
    fake = FakeDriver(gpus=2)
    monkeypatch.setattr(device_cuda, "_libcuda", lambda: fake)
    device_cuda.device_count.cache_clear()
    dev = _open(monkeypatch, fake, "CUDA")
    yield fake, dev
    from fusegrad.engine import synchronize

    synchronize()
    for opened in [d for d in Device.opened() if isinstance(d, device_cuda.CUDADevice)]:
        opened.close()
    device_cuda.device_count.cache_clear()
    _forget_in_engine([name for name in ("CUDA", "CUDA:1")])


def _forget_in_engine(names: list[str]) -> None:
    """Drop the engine's memory of the fake devices (its per-device timelines and device
    handles), so a later ``synchronize()`` of every device does not open the real CUDA."""
    from fusegrad.engine import launch, plan

    timelines = getattr(getattr(launch, "_STATE", None), "timelines", {})
    handles = getattr(plan, "_DEVICES", {})
    for name in names:
        timelines.pop(name, None)
        handles.pop(name, None)


def test_device_opens_with_the_gpus_architecture(fake_gpu: Any) -> None:
    _fake, dev = fake_gpu
    assert dev.arch == "sm_90" and "Fake GPU" in dev.name
    assert type(dev.renderer).__name__ == "PTXRenderer" and dev.renderer.arch == "sm_90"
    assert device_cuda.unavailable_reason() is None


CORPUS_SUBSET = (
    "alu-int32", "alu-float16", "cast-from-float32", "gated-float32", "if-endif",
    "symbolic-end-5", "multicore", "reduce-add-float32", "vector-float324",
    "vector-gated-float4", "nested-int64", "mulacc-fused-float32",
)  # fmt: skip


@pytest.mark.parametrize("name", CORPUS_SUBSET)
def test_conformance_kernels_through_the_driver(fake_gpu: Any, name: str) -> None:
    fake, dev = fake_gpu
    case = next(c for c in corpus(dev.renderer) if c.name == name)
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, case.var_vals)
    device_cuda.run_linear_on_cuda(dev, dev.renderer, case.uops, got, case.var_vals)
    assert not compare(case, want, got)
    grid = fake.launches[-1][1]
    assert grid == ((4, 1, 1) if name == "multicore" else (1, 1, 1))  # a block per core
    assert dev.allocator.cached_bytes > 0  # the buffers went back to the LRU cache
    dev.allocator.free_cache()
    assert not fake.allocations, "and from there to cuMemFree"


def test_tensor_code_on_cuda(fake_gpu: Any) -> None:
    from fusegrad import Tensor

    fake, _dev = fake_gpu
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 12)).astype(np.float32)
    b = rng.standard_normal((12, 8)).astype(np.float32)
    x, y = Tensor(a, device="CUDA"), Tensor(b, device="CUDA")
    np.testing.assert_allclose((x @ y).relu().numpy(), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.sum(axis=1).numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    h = (x.half() * 3).numpy()
    np.testing.assert_array_equal(h, a.astype(np.float16) * np.float16(3))
    assert fake.launches, "kernels ran through cuLaunchKernel"
    assert any(b != (1, 1, 1) for _, _, b in fake.launches), "GPU launches use thread blocks"


def test_copies_views_and_staging(fake_gpu: Any) -> None:
    data = np.arange(1000, dtype=np.float32)
    b = Buffer("CUDA", 1000, dtypes.float32).copyin(data)
    assert np.array_equal(b.numpy(), data)
    view = b.view(10, dtypes.float32, offset=40)
    assert np.array_equal(view.numpy(), data[10:20])
    view.copyin(np.full(10, -1, np.float32))
    assert np.array_equal(b.numpy()[8:22], np.r_[data[8:10], [-1] * 10, data[20:22]])
    big = np.random.default_rng(0).integers(0, 255, 3 << 20, dtype=np.uint8)  # > 1 MiB staging
    assert np.array_equal(Buffer("CUDA", big.size, dtypes.uint8).copyin(big).numpy(), big)


def test_signals_and_timestamps(fake_gpu: Any) -> None:
    _fake, dev = fake_gpu
    done, t0, t1 = Signal(), Signal(), Signal()
    HWQueue().timestamp(t0).signal(done, 7).timestamp(t1).submit(dev)
    done.wait(7, timeout=30)
    dev.synchronize()
    assert done.value == 7
    assert 0 < t0.timestamp <= t1.timestamp


def _double_kernel(n: int) -> UOp:
    from fusegrad.codegen import KernelInfo

    out, x = UOp.param(0, dtypes.float32.ptr(n)), UOp.param(1, dtypes.float32.ptr(n))
    i = UOp.range(n, 0, AxisType.LOOP)
    store = out.index(i).store(x.index(i).load() * 2.0).end(i)
    return UOp.sink(store, arg=KernelInfo("double"))


def test_beam_timer_uses_events(fake_gpu: Any) -> None:
    from fusegrad.codegen import to_program

    fake, dev = fake_gpu
    spec = to_program(_double_kernel(64), dev.renderer)
    assert isinstance(dev.timer, device_cuda.CUDATimer)
    seconds = dev.timer(spec)
    assert 0 < seconds < 10
    assert fake.launches[-1][0] == spec.function_name


def test_vector_kernel_on_an_unaligned_view_runs_lane_by_lane(fake_gpu: Any) -> None:
    from fusegrad.codegen import to_program

    fake, dev = fake_gpu
    n = 64
    spec = to_program(_double_kernel(n), dev.renderer)
    assert ".global.v4.f32" in str(spec.src)
    prog = dev.load(spec)
    base = Buffer("CUDA", n + 4, dtypes.float32).copyin(np.arange(n + 4, dtype=np.float32))
    out = Buffer("CUDA", n, dtypes.float32)
    gs, ls = spec.launch_dims({})
    dev.launch(prog, [out.opaque, base.view(n, dtypes.float32, offset=16).opaque], [], gs, ls)
    assert np.array_equal(out.numpy(), np.arange(4, n + 4, dtype=np.float32) * 2)
    assert len(fake.modules) == 1  # aligned: the vector kernel itself
    dev.launch(prog, [out.opaque, base.view(n, dtypes.float32, offset=4).opaque], [], gs, ls)
    assert np.array_equal(out.numpy(), np.arange(1, n + 1, dtype=np.float32) * 2)
    scalar = list(fake.modules.values())[-1]
    assert len(fake.modules) == 2 and ".v4" not in scalar  # rendered lane by lane, once
    dev.launch(prog, [out.opaque, base.view(n, dtypes.float32, offset=8).opaque], [], gs, ls)
    assert len(fake.modules) == 2


def test_peer_copy_between_two_gpus(fake_gpu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake, dev0 = fake_gpu
    dev1 = _open(monkeypatch, fake, "CUDA:1")
    data = np.arange(256, dtype=np.int32)
    src = Buffer("CUDA", 256, dtypes.int32).copyin(data)
    dst = Buffer("CUDA:1", 256, dtypes.int32)
    assert dev1.can_access_peer(dev0)
    dev1.peer_copy(dst.opaque, src.opaque, dev0)
    assert np.array_equal(dst.numpy(), data)


def test_driver_errors_name_the_call(fake_gpu: Any) -> None:
    _fake, dev = fake_gpu
    with pytest.raises(device_cuda.CUDAError, match=r"cuModuleLoadData.*fake error 1"):
        device_cuda.CUDAProgram(dev, "k", b"\x00not ptx", None)
    with pytest.raises(device_cuda.Unavailable, match="no GPU 5"):
        device_cuda.CUDADevice("CUDA:5")


_A = np.random.default_rng(3).standard_normal((6, 10)).astype(np.float32)
_B = np.random.default_rng(4).standard_normal((10, 7)).astype(np.float32)
_I = np.random.default_rng(5).integers(-50, 50, (6, 10)).astype(np.int32)
_LONG = np.random.default_rng(6).standard_normal(3000).astype(np.float32)
_IMG = np.random.default_rng(7).standard_normal((1, 2, 6, 6)).astype(np.float32)
_KER = np.random.default_rng(8).standard_normal((3, 2, 3, 3)).astype(np.float32)

TENSOR_OPS: dict[str, Any] = {
    "exp_log_sin": lambda T: T(_A).exp() + T(np.abs(_A) + 0.1).log() + T(_A).sin(),
    "gelu_tanh": lambda T: T(_A).gelu() * T(_A).tanh(),
    "softmax": lambda T: T(_A).softmax(-1),
    "argmax": lambda T: T(_A).argmax(1),
    "cumsum": lambda T: T(_A).cumsum(1),
    "int_div_mod_shift": lambda T: (T(_I) // 7) * 100 + (T(_I) % 7) + (T(_I) << 2),
    "bfloat16": lambda T: (T(_A).bfloat16() * 3).float(),
    "int64": lambda T: T(_I).cast(dtypes.int64) * 3000000000,
    "gather_pad_flip": lambda T: T(_A)[:, [1, 3, 5]].pad(((1, 1), (2, 0))).flip(1),
    "float64": lambda T: T(_A.astype(np.float64)).exp(),
    "grouped_sum": lambda T: T(_LONG).sum(),
    "conv2d": lambda T: T(_IMG).conv2d(T(_KER)),
}


@pytest.mark.parametrize("name", sorted(TENSOR_OPS))
def test_tensor_ops_on_cuda_match_the_cpu(fake_gpu: Any, name: str) -> None:
    from fusegrad import Tensor

    def on(device: str) -> Any:
        return lambda x: Tensor(x, device=device)

    got = TENSOR_OPS[name](on("CUDA")).numpy()
    want = TENSOR_OPS[name](on("CPU")).numpy()
    np.testing.assert_allclose(
        got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-6
    )


def test_launch_beyond_cuda_limits_is_named(fake_gpu: Any) -> None:
    from fusegrad.codegen import to_program

    _fake, dev = fake_gpu
    spec = to_program(_double_kernel(64), dev.renderer)
    prog = dev.load(spec)
    bufs = [Buffer("CUDA", 64, dtypes.float32).opaque for _ in range(2)]
    with pytest.raises(ValueError, match=r"grid \(1, 70000, 1\).*exceeds"):
        dev.launch(prog, bufs, [], (1, 70000, 1), (1, 1, 1))
    with pytest.raises(ValueError, match="1024 threads per block"):
        dev.launch(prog, bufs, [], (1, 1, 1), (64, 32, 1))


def test_half_matmul_on_tensor_cores_through_the_driver(fake_gpu: Any) -> None:
    """A TC-optimized half matmul (float32 accumulators) compiled by the device, loaded and
    launched through the driver: mma.sync in the module, the result equals NumPy's."""
    from fusegrad.codegen import KernelInfo, to_program
    from fusegrad.codegen.opt import Opt, OptOps
    from fusegrad.uop import Ops

    fake, dev = fake_gpu
    m, k, n = 32, 64, 32
    c = UOp.param(0, dtypes.float32.ptr(m * n))
    a, b = UOp.param(1, dtypes.float16.ptr(m * k)), UOp.param(2, dtypes.float16.ptr(k * n))
    i, j, r = UOp.range(m, 0), UOp.range(n, 1), UOp.range(k, 2, AxisType.REDUCE)
    x = a.index(i * k + r).load().cast(dtypes.float32)
    y = b.index(r * n + j).load().cast(dtypes.float32)
    store = c.index(i * n + j).store((x * y).reduce(r, arg=Ops.ADD)).end(i, j)
    ast = UOp.sink(store, arg=KernelInfo("mm_tc", opts_to_apply=(Opt(OptOps.TC, 0),)))
    spec = to_program(ast, dev.renderer)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in str(spec.src)
    rng = np.random.default_rng(9)
    ha = rng.standard_normal((m, k)).astype(np.float16)
    hb = rng.standard_normal((k, n)).astype(np.float16)
    out = Buffer("CUDA", m * n, dtypes.float32)
    bufs = [out, Buffer("CUDA", m * k, dtypes.float16).copyin(ha)]
    bufs.append(Buffer("CUDA", k * n, dtypes.float16).copyin(hb))
    gs, ls = spec.launch_dims({})
    dev.launch(dev.load(spec), [buf.opaque for buf in bufs], [], gs, ls)
    got = out.numpy().reshape(m, n)
    want = ha.astype(np.float32) @ hb.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert fake.launches[-1][0] == spec.function_name and fake.launches[-1][2] == (32, 1, 1)


def test_gpu_tensor_core_check_script_passes_on_the_fake_gpu(fake_gpu: Any) -> None:
    """tools/gpu/tensor_cores.py (run by check_cuda.sh on a real GPU), its quick cases:
    Tensor.custom_kernel with TC opts on device CUDA, mma.sync in the kernels, NumPy's result."""
    import importlib.util

    path = Path(__file__).parents[3] / "tools" / "gpu" / "tensor_cores.py"
    spec = importlib.util.spec_from_file_location("gpu_tensor_cores", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fake, _dev = fake_gpu
    results = module.check("CUDA", quick=True)
    assert results["ok"] and len(results["cases"]) == 2
    assert all(c["mma"] and c["max_rel_err"] <= 1e-4 for c in results["cases"])
    assert any(name.startswith("tc_matmul") for name, _, _ in fake.launches)
