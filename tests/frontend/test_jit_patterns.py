"""The TinyJit patterns users rely on (issue 20), each run with and without the JIT for 10
steps and compared: the generate loop (a step's output fed back as its next input, then a
fresh input), an input the step updates in place and returns, MultiTensor inputs and
outputs, a 2-device data-parallel SGD step with an allreduce, gradient accumulation; and the
errors: an input aliasing a buffer the capture writes (naming the argument), a host read of
a captured value, an out-of-range index tensor on a replay. Also the module paths
(``fusegrad.engine.jit``, ``fusegrad.function``, ``fusegrad.engine.realize``) and
``Device[...].graph``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import Device, Tensor, TinyJit, nn
from fusegrad.engine.jit import JitError, graph_class
from fusegrad.nn.optim import SGD
from fusegrad.nn.state import get_parameters
from fusegrad.tensor.multi import MultiTensor, shard

pytestmark = pytest.mark.kernels
STEPS = 10
DEVICES = ("CPU:0", "CPU:1")


def _both(run: Callable[[bool], Any]) -> tuple[Any, Any]:
    """``run(use_jit)`` without and with the JIT."""
    return run(False), run(True)


def _generate(use_jit: bool) -> list[np.ndarray[Any, Any]]:
    w = Tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)).realize()

    def step(x: Tensor) -> Tensor:
        return ((x @ w).tanh() + x * 0.5).realize()

    run = TinyJit(step) if use_jit else step
    out = []
    x = Tensor(np.ones((1, 4), np.float32))
    for _ in range(STEPS):
        x = run(x)  # the output is the next input
        out.append(x.numpy())
    fresh = Tensor(np.full((1, 4), -2.0, np.float32))
    out.append(run(fresh).numpy())  # then a new input tensor again
    out.append(run(run(fresh)).numpy())
    return out


def test_output_fed_back_as_the_next_input() -> None:
    eager, jitted = _both(_generate)
    for i, (want, got) in enumerate(zip(eager, jitted, strict=True)):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"step {i}")
    assert not np.allclose(eager[0], eager[-3])


def _bump(use_jit: bool) -> list[float]:
    def step(x: Tensor, y: Tensor) -> Tensor:
        x.assign(x * 2 + y).realize()  # the input is also the output
        return x

    run = TinyJit(step) if use_jit else step
    x = Tensor([1.0]).contiguous().realize()
    seen = []
    for i in range(STEPS):
        x = run(x, Tensor([float(i)]))
        seen.append(float(x.item()))
    return seen


def test_input_updated_in_place_and_returned() -> None:
    eager, jitted = _both(_bump)
    assert jitted == eager
    assert eager[-1] > 1000


def test_input_aliasing_a_written_buffer_names_the_argument() -> None:
    state = Tensor([0.0]).contiguous().realize()
    hidden: list[Tensor] = []

    def step(x: Tensor, y: Tensor) -> Tensor:
        h = (x + y).contiguous().realize()
        hidden.append(h)
        state.assign(state + h.sum()).realize()
        return (h * 2).realize()

    jit = TinyJit(step)
    for _ in range(3):
        jit(Tensor([1.0]), Tensor([2.0]))
    with pytest.raises(JitError, match="argument 1 aliases a buffer the captured kernels write"):
        jit(Tensor([1.0]), hidden[1])
    with pytest.raises(JitError, match="argument 0 aliases"):
        jit(state, Tensor([1.0]))


def _sharded(use_jit: bool) -> list[np.ndarray[Any, Any]]:
    def step(x: MultiTensor, b: MultiTensor) -> tuple[MultiTensor, MultiTensor]:
        y = (x * 2 + b).relu()
        return y.realize(), y.sum(axis=0).realize()  # split along 0: an allreduce

    run = TinyJit(step) if use_jit else step
    rng = np.random.default_rng(5)
    out = []
    for _ in range(STEPS):
        x = shard(Tensor(rng.normal(size=(6, 3)).astype(np.float32)), DEVICES, axis=0)
        b = shard(Tensor(rng.normal(size=(6, 3)).astype(np.float32)), DEVICES, axis=0)
        y, total = run(x, b)
        assert isinstance(y, MultiTensor) and y.devices == x.devices
        out += [y.numpy(), total.numpy()]
    return out


def test_multitensor_inputs_and_outputs() -> None:
    eager, jitted = _both(_sharded)
    for want, got in zip(eager, jitted, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def _data_parallel_sgd(use_jit: bool) -> tuple[list[float], np.ndarray[Any, Any]]:
    """A data-parallel step: the batch split over two devices, the weight replicated (its
    gradient is the sum of the devices' gradients), the loss mean an allreduce."""
    w = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, requires_grad=True)
    opt = SGD([w], lr=0.05, momentum=0.9)

    def step(x: MultiTensor, y: MultiTensor) -> MultiTensor:
        Tensor.training = True
        try:
            opt.zero_grad()
            loss = (x @ shard(w, DEVICES) - y).square().mean()
            loss.backward()
            Tensor.realize(*opt.schedule_step())
        finally:
            Tensor.training = False
        return loss.realize()

    run = TinyJit(step) if use_jit else step
    rng = np.random.default_rng(1)
    losses = []
    for _ in range(STEPS):
        x = shard(Tensor(rng.normal(size=(8, 4)).astype(np.float32)), DEVICES, axis=0)
        y = shard(Tensor(rng.normal(size=(8, 3)).astype(np.float32)), DEVICES, axis=0)
        losses.append(float(run(x, y).numpy()))
    return losses, w.numpy()


def test_two_device_data_parallel_sgd_step() -> None:
    (eager_losses, eager_w), (jit_losses, jit_w) = _both(_data_parallel_sgd)
    np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(jit_w, eager_w, rtol=1e-5, atol=1e-6)
    assert eager_losses[-1] < eager_losses[0]


def _accumulate(use_jit: bool) -> np.ndarray[Any, Any]:
    Tensor.manual_seed(2)
    lin = nn.Linear(3, 2)
    params = get_parameters(lin)
    acc = [Tensor.zeros(*p.shape).contiguous().realize() for p in params]
    opt = SGD(params, lr=0.1)
    rng = np.random.default_rng(3)

    def micro(x: Tensor, y: Tensor) -> Tensor:
        for p in params:
            p.grad = None
        loss = (lin(x) - y).square().mean()
        loss.backward()
        updates = [a.assign(a + p.grad) for a, p in zip(acc, params, strict=True)]  # type: ignore[operator]
        Tensor.realize(loss, *updates)
        return loss

    def apply() -> Tensor:
        Tensor.training = True
        try:
            for p, a in zip(params, acc, strict=True):
                p.grad = a / 2
            Tensor.realize(*opt.schedule_step(), *(a.assign(a.zeros_like()) for a in acc))
        finally:
            Tensor.training = False
        return params[0]

    run_micro = TinyJit(micro) if use_jit else micro
    run_apply = TinyJit(apply) if use_jit else apply
    for _ in range(STEPS):
        for _ in range(2):
            x = Tensor(rng.normal(size=(4, 3)).astype(np.float32))
            run_micro(x, Tensor(rng.normal(size=(4, 2)).astype(np.float32)))
        run_apply()
    return np.concatenate([p.numpy().reshape(-1) for p in params])


def test_gradient_accumulation() -> None:
    eager, jitted = _both(_accumulate)
    np.testing.assert_allclose(jitted, eager, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("read", [lambda t: t.item(), lambda t: t.tolist(), lambda t: t.numpy()])
def test_host_read_of_a_captured_value_raises(read: Callable[[Tensor], Any]) -> None:
    weight = Tensor([3.0]).realize()

    def step(x: Tensor) -> Tensor:
        y = (x * weight).realize()
        assert weight.item() == 3.0  # state computed before the capture may be read
        scale = read(y.sum())  # a value computed from the inputs may not
        return y * float(np.asarray(scale).reshape(-1)[0])

    jit = TinyJit(step)
    jit(Tensor([1.0]))
    with pytest.raises(JitError, match=r"\.item\(\)/\.tolist\(\)/\.numpy\(\) of a tensor computed"):
        jit(Tensor([2.0]))


def _gather(use_jit: bool) -> list[np.ndarray[Any, Any]]:
    table = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3)).realize()

    def step(i: Tensor) -> Tensor:
        return (table[i] * 2).realize()

    run = TinyJit(step) if use_jit else step
    out = []
    for k in range(STEPS):
        idx = (Tensor([k % 4, 3 - k % 4]) + 0).realize()  # device data: the deferred check
        out.append(run(idx).numpy())
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        run((Tensor([4, 0]) + 0).realize())
    return out


def test_out_of_range_index_raises_on_replay() -> None:
    eager, jitted = _both(_gather)
    for want, got in zip(eager, jitted, strict=True):
        np.testing.assert_array_equal(got, want)


def test_device_graph_is_reported() -> None:
    cpu = Device["CPU"]
    assert graph_class("CPU") is cpu.graph
    assert Device["PYTHON"].graph is None  # the emulator batches nothing
    jit = TinyJit(lambda x: ((x + 1).contiguous() * 2).realize())
    for i in range(STEPS):
        np.testing.assert_array_equal(jit(Tensor([float(i)])).numpy(), [(i + 1) * 2.0])
    if cpu.graph is not None:  # the compiled ring: replays went through the graph
        assert isinstance(jit.plan.cache["graph"], cpu.graph)
        assert len(jit.plan.cache["graph"]) == jit.kernel_count


def test_graph_replay_is_one_ring_write(monkeypatch: pytest.MonkeyPatch) -> None:
    from fusegrad.runtime import NativeRing

    cpu = Device["CPU"]
    if cpu.graph is None:
        pytest.skip("no compiled ring here")
    jit = TinyJit(lambda x: (((x + 1).contiguous() * 2).contiguous() - 3).realize())
    for i in range(2):
        jit(Tensor([float(i)]))
    writes: list[int] = []
    real = NativeRing._write

    def counting(self: Any, records: list[bytes], wake: bool) -> None:
        writes.append(len(records))
        real(self, records, wake)

    monkeypatch.setattr(NativeRing, "_write", counting)
    for i in range(STEPS):
        out = jit(Tensor([float(i)]))
    assert jit.kernel_count == 3
    # per replay: BEGIN, two timestamps, three launches and the signal in one write
    assert writes == [1 + 2 + 3 + 2] * STEPS
    assert out.item() == (STEPS - 1 + 1) * 2 - 3


def test_module_paths() -> None:
    import fusegrad
    import fusegrad.engine.jit as engine_jit
    from fusegrad.engine.realize import compile_linear, run_linear
    from fusegrad.function import function
    from fusegrad.jit import JitError as jit_error

    assert engine_jit.TinyJit is fusegrad.TinyJit and engine_jit.JitError is jit_error
    assert fusegrad.function is function
    a = Tensor([1.0, 2.0]).realize()
    out = a * 3 + 1
    linear, var_vals = out.linear_with_vars()
    plan = compile_linear(linear)
    assert plan.kernels == 1
    run_linear(linear, var_vals)
    with pytest.raises(TypeError, match="LINEAR"):
        run_linear(a.uop)


def test_tinyjit_arguments_as_tinygrad() -> None:
    import inspect

    jit = TinyJit(lambda x, scale=2: (x * scale).realize())
    assert str(inspect.signature(TinyJit)) == "(fxn=None, **kwargs)"
    assert list(inspect.signature(jit).parameters) == ["x", "scale"]
    assert TinyJit(None, prune=True, optimize=True).prune
    with pytest.raises(TypeError, match=r"TinyJit: .*'bogus'"):
        TinyJit(lambda x: x, bogus=1)

    @TinyJit
    def double(x: Tensor) -> Tensor:
        return (x * 2).realize()

    assert [double(Tensor([float(i)])).item() for i in range(STEPS)] == [
        2.0 * i for i in range(STEPS)
    ]
