"""``fusegrad.device``: tinygrad's ``Program(dev, obj)`` over a ``TinyELF``, and the PROFILE
records (``Profile*Event``) a user reads off ``Compiled.profile_events``."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.device import Buffer, Compiled, Device, Program
from fusegrad.renderer.corpus import Builder, alu, end, index, load, rng, store
from fusegrad.renderer.elf import TinyELF
from fusegrad.runtime.profiler import ProfileDeviceEvent, ProfileProgramEvent
from fusegrad.uop import Context, Ops, UOp, dtypes

SIGNATURE = ((None, 6, dtypes.float32, ()), (None, 6, dtypes.float32, ()))


def _plus_elf() -> TinyELF:
    dev = Device["CPU"]
    if type(dev.renderer).__name__ not in ("LLVMRenderer", "CRenderer", "NIRRenderer"):
        pytest.skip(f"{type(dev.renderer).__name__} does not make ELF objects")
    p = Builder()
    out, x = p.buffer(dtypes.float32, [0] * 6), p.buffer(dtypes.float32, range(6))
    i = p.add(rng(6))
    p.add(store(index(out, i), alu(Ops.ADD, load(index(x, i)), UOp.const(0.5, dtypes.float32))))
    p.add(end(i))
    lib = dev.compile(dev.renderer.render(p.uops, "plus_half"))
    return TinyELF(lib, "plus_half", "CPU", SIGNATURE)


def test_program_loads_a_tinyelf_and_runs_it_over_buffers() -> None:
    prg = Program("CPU", _plus_elf())
    out = Buffer("CPU", 6, dtypes.float32).ensure_allocated()
    src = Buffer("CPU", 6, dtypes.float32).copyin(memoryview(np.arange(6, dtype=np.float32)))
    seconds = prg(out, src, wait=True)
    assert seconds is not None and seconds >= 0
    np.testing.assert_array_equal(out.numpy(), np.arange(6, dtype=np.float32) + 0.5)


def test_program_checks_its_arguments() -> None:
    prg = Program("CPU", _plus_elf())
    small = Buffer("CPU", 2, dtypes.float32)
    ints = Buffer("CPU", 6, dtypes.int32)
    good = Buffer("CPU", 6, dtypes.float32)
    with pytest.raises(ValueError, match="takes 2 buffers and 0 values, got 1 and 0"):
        prg(good)
    with pytest.raises(ValueError, match="buffer 0 must be 6 x float32 on CPU, got 2 x float32"):
        prg(small, good)
    with pytest.raises(ValueError, match="buffer 1 must be 6 x float32 on CPU, got 6 x int32"):
        prg(good, ints)
    with pytest.raises(TypeError, match="obj must be a TinyELF"):
        Program("CPU", b"\x7fELF")  # type: ignore[arg-type]


@pytest.mark.kernels
def test_profile_records_the_device_and_each_program_a_tensor_compiles() -> None:
    events = Compiled.profile_events
    before = len(events)
    with Context(PROFILE=1):
        got = (Tensor.arange(13, dtype=dtypes.float32) * 3.25 + 1).numpy()
    np.testing.assert_allclose(got, np.arange(13) * 3.25 + 1)
    device = Device[Device.DEFAULT].device
    assert any(isinstance(e, ProfileDeviceEvent) and e.device == device for e in events)
    programs = [e for e in events[before:] if isinstance(e, ProfileProgramEvent)]
    if not programs:  # the kernel was loaded earlier in this process (the program cache)
        pytest.skip("no new program was loaded")
    assert all(p.device == device and p.lib for p in programs)


@pytest.mark.kernels
def test_tinyjit_replays_under_profile_leave_one_graph_event_each() -> None:
    from fusegrad import Context, Device, Tensor, TinyJit
    from fusegrad.device import Compiled, ProfileGraphEvent

    @TinyJit
    def step(x: Tensor) -> Tensor:
        a = (x * 2 + 1).contiguous()
        return (a.exp().sum() + a.max()).realize()

    def graph_events() -> int:
        Device["CPU"].synchronize()
        return sum(isinstance(e, ProfileGraphEvent) for e in Compiled.profile_events)

    with Context(PROFILE=1):
        for _ in range(3):  # warm-up and capture
            step(Tensor.ones(16).contiguous().realize())
        inputs = [Tensor.ones(16).contiguous().realize() for _ in range(4)]
        before = graph_events()
        for x in inputs:
            out = step(x)
        after = graph_events()
    assert out.item() == pytest.approx(16 * np.exp(3.0) + 3.0, rel=1e-5)
    assert after - before == 4
