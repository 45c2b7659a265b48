"""The CUDA device. Without a driver or GPU it must be listed as unavailable with the reason
(tested everywhere); with one, the conformance corpus, Tensor kernels, copies, signals and
events, BEAM's timer and (with two GPUs) peer copies run on it (skipped elsewhere)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from fusegrad.renderer.conformance import compare, fresh_buffers
from fusegrad.renderer.corpus import Case, corpus
from fusegrad.runtime import Buffer, Device, HWQueue, Signal, Unavailable, device_report, run_linear
from fusegrad.runtime.device_cuda import (
    CUDADevice,
    arch_for,
    conformance_target,
    device_count,
    run_linear_on_cuda,
    unavailable_reason,
)
from fusegrad.uop import dtypes

REASON = unavailable_reason()
needs_gpu = pytest.mark.skipif(REASON is not None, reason=f"no CUDA GPU: {REASON}")


def _gpus() -> int:
    return 0 if REASON is not None else device_count()


needs_two_gpus = pytest.mark.skipif(_gpus() < 2, reason="needs two CUDA GPUs")


# -- everywhere ------------------------------------------------------------------------------------


def test_architecture_for_each_compute_capability() -> None:
    assert arch_for(9, 0) == "sm_90"
    assert arch_for(12, 0) == "sm_90"  # newer GPUs run sm_90 PTX through the driver
    assert arch_for(8, 9) == "sm_89"
    assert arch_for(8, 7) == "sm_86"
    assert arch_for(7, 5) == "sm_75"
    with pytest.raises(Unavailable, match="older than sm_75"):
        arch_for(7, 0)


def test_device_list_names_cuda_and_why() -> None:
    lines = [line for line in device_report() if line.startswith("CUDA")]
    assert lines, "CUDA is a built-in device kind"
    if REASON is None:
        assert "available" in lines[0] and "unavailable" not in lines[0]
        return
    assert "unavailable" in lines[0]
    assert "CUDA:" in lines[0]  # the reason, e.g. "CUDA: the driver library ... not found"
    with pytest.raises(Unavailable, match="CUDA"):
        Device["CUDA"]


def test_conformance_target_is_registered_and_says_why() -> None:
    target = conformance_target()
    assert target.name == "CUDA"
    assert target.unavailable() == REASON


# -- on a GPU ----------------------------------------------------------------------------------------


@functools.cache
def _dev() -> CUDADevice:
    dev = Device["CUDA"]
    assert isinstance(dev, CUDADevice)
    return dev


def _cases() -> list[Any]:
    if REASON is not None:
        return [pytest.param(None, marks=needs_gpu, id="no-gpu")]
    return [pytest.param(c, id=c.name) for c in corpus(_dev().renderer)]


@needs_gpu
@pytest.mark.parametrize("case", _cases())
def test_conformance_corpus_on_cuda(case: Case) -> None:
    dev = _dev()
    want, got = fresh_buffers(case), fresh_buffers(case)
    run_linear(case.uops, want, case.var_vals)
    run_linear_on_cuda(dev, dev.renderer, case.uops, got, case.var_vals)
    mismatches = compare(case, want, got)
    assert not mismatches, f"{case.name}:\n" + "\n".join(mismatches)


@needs_gpu
def test_buffer_copies_and_views() -> None:
    data = np.arange(1000, dtype=np.float32)
    b = Buffer("CUDA", 1000, dtypes.float32).copyin(data)
    assert np.array_equal(b.numpy(), data)
    view = b.view(10, dtypes.float32, offset=40)
    assert np.array_equal(view.numpy(), data[10:20])
    view.copyin(np.full(10, -1, np.float32))
    assert np.array_equal(b.numpy()[8:22], np.r_[data[8:10], [-1] * 10, data[20:22]])
    big = np.random.default_rng(0).integers(0, 255, 5 << 20, dtype=np.uint8)  # > the staging
    assert np.array_equal(Buffer("CUDA", big.size, dtypes.uint8).copyin(big).numpy(), big)


@needs_gpu
def test_signals_and_timestamps_follow_the_gpu() -> None:
    dev = _dev()
    done, stamp0, stamp1 = Signal(), Signal(), Signal()
    HWQueue().timestamp(stamp0).signal(done, 1).timestamp(stamp1).submit(dev)
    done.wait(1, timeout=30)
    dev.synchronize()
    assert stamp0.timestamp > 0
    assert stamp1.timestamp >= stamp0.timestamp


TENSOR_CHECKS = {
    "matmul_relu": (lambda T, a, b: (T(a) @ T(b)).relu(), lambda a, b: np.maximum(a @ b, 0)),
    "softmax": (lambda T, a, b: T(a).softmax(-1), None),
    "sum_axis": (lambda T, a, b: T(a).sum(axis=0), lambda a, b: a.sum(axis=0)),
    "exp_sin": (lambda T, a, b: T(a).exp().sin(), lambda a, b: np.sin(np.exp(a))),
    "half": (lambda T, a, b: (T(a).half() * 2).float(), lambda a, b: a.astype(np.float16) * 2),
    "cumsum": (lambda T, a, b: T(a).cumsum(1), lambda a, b: np.cumsum(a, 1)),
    "int_div": (lambda T, a, b: (T(a) * 100).int() // 7, lambda a, b: (a * 100).astype(int) // 7),
}


@needs_gpu
@pytest.mark.parametrize("name", sorted(TENSOR_CHECKS))
def test_tensor_kernels_on_cuda(name: str) -> None:
    from fusegrad import Tensor

    def on_cuda(x: np.ndarray) -> Any:
        return Tensor(x, device="CUDA")

    rng = np.random.default_rng(1)
    a = rng.standard_normal((33, 65)).astype(np.float32)
    b = rng.standard_normal((65, 17)).astype(np.float32)
    build, ref = TENSOR_CHECKS[name]
    got = build(on_cuda, a, b).numpy()
    if ref is None:
        want = np.exp(a - a.max(-1, keepdims=True))
        want = want / want.sum(-1, keepdims=True)
    else:
        want = ref(a, b)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@needs_gpu
def test_beam_timer_measures_with_events() -> None:
    from fusegrad.codegen import KernelInfo, to_program
    from fusegrad.uop import AxisType, UOp

    n = 1 << 20
    out, x = UOp.param(0, dtypes.float32.ptr(n)), UOp.param(1, dtypes.float32.ptr(n))
    i = UOp.range(n, 0, AxisType.LOOP)
    store = out.index(i).store(x.index(i).load() * 2.0).end(i)
    spec = to_program(UOp.sink(store, arg=KernelInfo("double")), _dev().renderer)
    seconds = _dev().timer(spec)
    assert 0 < seconds < 1


@needs_two_gpus
def test_peer_copy_between_gpus() -> None:
    a, b = Device["CUDA"], Device["CUDA:1"]
    assert isinstance(a, CUDADevice) and isinstance(b, CUDADevice)
    data = np.arange(4096, dtype=np.int32)
    src = Buffer("CUDA", 4096, dtypes.int32).copyin(data)
    dst = Buffer("CUDA:1", 4096, dtypes.int32)
    b.peer_copy(dst.opaque, src.opaque, a)
    assert np.array_equal(dst.numpy(), data)
