"""TinyJit and function on the real kernel pipeline: replays equal eager (JIT=0) results,
including a training step and gradient accumulation; the footguns raise JitError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import Context, GlobalCounters, Tensor, TinyJit, Variable, function, nn
from fusegrad.jit import JitError
from fusegrad.nn.optim import SGD, Adam
from fusegrad.nn.state import get_parameters

pytestmark = pytest.mark.kernels
RNG = np.random.default_rng(7)


def _arr(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.normal(size=shape).astype(np.float32)


class _Counted:
    """A function that counts how often its Python body runs."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn, self.calls = fn, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.fn(*args, **kwargs)


def test_replays_with_new_inputs_without_running_python() -> None:
    body = _Counted(lambda a, b: (a * 2 + b).sum(axis=0).realize())
    jit = TinyJit(body)
    for i in range(6):
        a, b = _arr(3, 4), _arr(3, 4)
        out = jit(Tensor(a), Tensor(b))
        np.testing.assert_allclose(out.numpy(), (a * 2 + b).sum(axis=0), rtol=1e-6, atol=1e-6)
        assert jit.captured == (i >= 1)
    assert body.calls == 2  # the eager call and the capture; four replays ran no Python
    assert jit.kernel_count >= 1


def test_replay_is_one_queue_submission(monkeypatch: pytest.MonkeyPatch) -> None:
    from fusegrad.engine import launch

    submitted: list[int] = []
    real, real_graph = launch._submit, launch._submit_graph

    def counting(batch: Any) -> None:
        submitted.append(len(batch.queue.commands))
        real(batch)

    def counting_graph(batch: Any, graph: Any, start: Any, end: Any) -> None:
        submitted.append(len(batch.queue.commands) + 2 + len(graph))  # timestamps, launches
        real_graph(batch, graph, start, end)

    jit = TinyJit(lambda x: ((x + 1).contiguous() * (x - 1).sum()).realize())
    x = _arr(8)
    for _ in range(2):
        out = jit(Tensor(x))
    monkeypatch.setattr(launch, "_submit", counting)
    monkeypatch.setattr(launch, "_submit_graph", counting_graph)
    out = jit(Tensor(x))
    assert len(submitted) == 1  # the replay is one queue
    assert jit.kernel_count >= 2
    assert submitted[0] == jit.kernel_count + 2  # the launches between two timestamps
    before = GlobalCounters.kernel_count
    out = jit(Tensor(x))
    assert GlobalCounters.kernel_count - before == jit.kernel_count
    np.testing.assert_allclose(out.numpy(), (x + 1) * (x - 1).sum(), rtol=1e-5)


def test_results_are_new_buffers_every_call() -> None:
    jit = TinyJit(lambda x: (x * 3).realize())
    outs = [jit(Tensor([float(i)])) for i in range(5)]
    assert [o.item() for o in outs] == [0.0, 3.0, 6.0, 9.0, 12.0]


def test_jit_zero_runs_the_function_every_time() -> None:
    body = _Counted(lambda x: (x + 1).realize())
    jit = TinyJit(body)
    with Context(JIT=0):
        vals = [jit(Tensor([float(i)])).item() for i in range(4)]
    assert vals == [1.0, 2.0, 3.0, 4.0]
    assert body.calls == 4 and not jit.captured


# -- a training step ----------------------------------------------------------------------------


class _Net:
    def __init__(self) -> None:
        self.l1 = nn.Linear(12, 16)
        self.l2 = nn.Linear(16, 10)

    def __call__(self, x: Tensor) -> Tensor:
        return self.l2(self.l1(x.flatten(1)).relu())


def _train(
    use_jit: bool, steps: int = 5, optimize: bool = False
) -> tuple[list[float], list[np.ndarray[Any, Any]]]:
    Tensor.manual_seed(3)
    net = _Net()
    opt = Adam(get_parameters(net), lr=0.01)
    rng = np.random.default_rng(0)

    def step(x: Tensor, y: Tensor) -> Tensor:
        Tensor.training = True
        try:
            opt.zero_grad()
            loss = net(x).sparse_categorical_crossentropy(y)
            loss.backward()
            Tensor.realize(loss, *opt.schedule_step())
        finally:
            Tensor.training = False
        return loss

    run = TinyJit(step, optimize=optimize) if use_jit else step
    losses = []
    for _ in range(steps):
        x = Tensor(rng.normal(size=(8, 3, 4)).astype(np.float32))
        y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
        losses.append(float(run(x, y).item()))
    return losses, [p.numpy() for p in get_parameters(net)]


def test_training_step_matches_eager() -> None:
    eager_losses, eager_params = _train(use_jit=False)
    jit_losses, jit_params = _train(use_jit=True)
    np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-6, atol=1e-6)
    for mine, ref in zip(jit_params, eager_params, strict=True):
        np.testing.assert_allclose(mine, ref, rtol=1e-5, atol=1e-6)
    assert eager_losses[-1] != eager_losses[0]


def test_optimized_training_step_matches_eager() -> None:
    eager_losses, eager_params = _train(use_jit=False)
    jit_losses, jit_params = _train(use_jit=True, optimize=True)
    np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-6, atol=1e-6)
    for mine, ref in zip(jit_params, eager_params, strict=True):
        np.testing.assert_allclose(mine, ref, rtol=1e-5, atol=1e-6)


def _accumulate(use_jit: bool, micro: int = 3, steps: int = 4) -> np.ndarray[Any, Any]:
    """Gradient accumulation: ``micro`` backward passes add into accumulators (assign), then
    one SGD step from their mean, ``steps`` times; both functions jitted or not."""
    Tensor.manual_seed(1)
    lin = nn.Linear(5, 3)
    params = get_parameters(lin)
    acc = [Tensor.zeros(*p.shape).contiguous().realize() for p in params]
    opt = SGD(params, lr=0.1, momentum=0.9)
    rng = np.random.default_rng(4)

    def micro_step(x: Tensor, y: Tensor) -> Tensor:
        for p in params:
            p.grad = None
        loss = (lin(x) - y).square().mean()
        loss.backward()
        grads = [p.grad for p in params]
        assert all(g is not None for g in grads)
        Tensor.realize(loss, *(a.assign(a + g) for a, g in zip(acc, grads, strict=True)))  # type: ignore[operator]
        return loss

    def apply() -> Tensor:
        Tensor.training = True
        try:
            for p, a in zip(params, acc, strict=True):
                p.grad = a / micro
            Tensor.realize(*opt.schedule_step(), *(a.assign(a.zeros_like()) for a in acc))
        finally:
            Tensor.training = False
        return params[0]

    run_micro = TinyJit(micro_step) if use_jit else micro_step
    run_apply = TinyJit(apply) if use_jit else apply
    for _ in range(steps):
        for _ in range(micro):
            run_micro(Tensor(rng.normal(size=(4, 5)).astype(np.float32)),
                      Tensor(rng.normal(size=(4, 3)).astype(np.float32)))  # fmt: skip
        run_apply()
    return np.concatenate([p.numpy().reshape(-1) for p in params])


def test_gradient_accumulation_matches_eager() -> None:
    eager = _accumulate(use_jit=False)
    jitted = _accumulate(use_jit=True)
    np.testing.assert_allclose(jitted, eager, rtol=1e-5, atol=1e-6)


# -- inputs, Variables, aliasing ----------------------------------------------------------------


def test_bound_variable_argument_and_symbolic_view() -> None:
    v = Variable("n", 1, 10)
    add = TinyJit(lambda a, n: (a + Tensor(n)).realize())
    for i in range(1, 6):
        np.testing.assert_array_equal(add(Tensor([1.0, 2.0]), v.bind(i)).numpy(), [1 + i, 2 + i])
    x = Tensor(np.arange(10, dtype=np.float32)).realize()
    total = TinyJit(lambda xs: (xs * 2).sum().realize())
    for i in range(1, 8):
        assert total(x.shrink(((0, v.bind(i)),))).item() == 2 * sum(range(i))


def test_returned_input_and_assign_into_input_follow_the_new_input() -> None:
    ident = TinyJit(lambda x, y: (x, (x + y).realize()))
    for i in range(4):
        a, b = Tensor([float(i)]).realize(), Tensor([1.0]).realize()
        same, total = ident(a, b)
        assert same.item() == float(i) and total.item() == i + 1.0

    def bump(x: Tensor) -> Tensor:
        x.assign(x * 2 + 1).realize()
        return x

    jit = TinyJit(bump)
    for i in range(4):
        t = Tensor([float(i)]).contiguous().realize()
        out = jit(t)
        assert t.item() == out.item() == 2.0 * i + 1


def test_copy_between_devices_replays_on_the_general_path() -> None:
    jit = TinyJit(lambda x: (x.to("PYTHON") * 2).realize())
    for i in range(4):
        out = jit(Tensor([float(i), 1.0]))
        np.testing.assert_array_equal(out.numpy(), [2.0 * i, 2.0])
    assert jit.plan is not None and any(s.kernel is None for s in jit.plan.steps)  # a copy step


def _captured(fn: Callable[..., Any], *args: Any) -> TinyJit[Any]:
    jit = TinyJit(fn)
    jit(*args)
    jit(*args)
    assert jit.captured
    return jit


@pytest.mark.parametrize(
    ("new", "match"),
    [
        (lambda: Tensor.ones(4, 2), "shape"),
        (lambda: Tensor.ones(3, 4, dtype="float16"), "dtype"),
        (lambda: Tensor.ones(3, 4, device="PYTHON"), "device"),
    ],
)
def test_changed_inputs_raise(new: Callable[[], Tensor], match: str) -> None:
    jit = _captured(lambda x: (x + 1).realize(), Tensor.ones(3, 4).contiguous())
    with pytest.raises(JitError, match=match):
        jit(new().contiguous())


def test_changed_python_argument_raises() -> None:
    jit = _captured(lambda x, k: (x * k).realize(), Tensor([1.0, 2.0]), 3)
    assert jit(Tensor([1.0, 2.0]), 3).tolist() == [3.0, 6.0]
    with pytest.raises(JitError, match="non-Tensor argument 1 changed from 3 to 4"):
        jit(Tensor([1.0, 2.0]), 4)


def test_duplicate_and_contained_tensors_raise() -> None:
    jit = _captured(lambda a, b: (a + b).realize(), Tensor([1.0]), Tensor([2.0]))
    same = Tensor([5.0]).realize()
    with pytest.raises(JitError, match="same buffer"):
        jit(same, same)
    boxed = TinyJit(lambda xs: (xs[0] + 1).realize())
    with pytest.raises(JitError, match="inside a list"):
        boxed([Tensor([1.0])])


def test_nothing_realized_raises() -> None:
    jit = TinyJit(lambda x: x)
    x = Tensor([1.0]).realize()
    jit(x)
    with pytest.raises(JitError, match="realized nothing"):
        jit(x)


def test_input_aliasing_a_written_buffer_raises() -> None:
    kept: list[Tensor] = []

    def fn(x: Tensor) -> Tensor:
        h = (x * 2).realize()
        kept.append(h)
        return (h + 1).realize()

    jit = _captured(fn, Tensor([1.0]))
    with pytest.raises(JitError, match="aliases a buffer the captured kernels write"):
        jit(kept[-1])


def test_prune_drops_constant_kernels_but_keeps_state_updates() -> None:
    w = Tensor([2.0, 3.0]).contiguous().realize()
    steps = Tensor([0.0]).contiguous().realize()

    def fn(x: Tensor) -> Tensor:
        scale = (Tensor.arange(2).float() + 1).contiguous().realize()  # constant: prunable
        steps.assign(steps + 1).realize()  # state: runs on every call
        return (x * scale * w).realize()

    plain, pruned = TinyJit(fn), TinyJit(fn, prune=True)
    for jit in (plain, pruned):
        for i in range(4):
            np.testing.assert_array_equal(jit(Tensor([1.0, float(i)])).numpy(), [2.0, 6.0 * i])
    assert pruned.kernel_count < plain.kernel_count
    assert steps.item() == 8.0


# -- function -----------------------------------------------------------------------------------


def test_function_traces_once_and_is_lazy_and_differentiable() -> None:
    body = _Counted(lambda a, b: (a * b).relu().sum(axis=1))
    fn = function(body)
    for _ in range(3):
        a, b = _arr(2, 3), _arr(2, 3)
        out = fn(Tensor(a), Tensor(b))
        assert not out.is_realized
        np.testing.assert_allclose(out.numpy(), np.maximum(a * b, 0).sum(axis=1), rtol=1e-6)
    assert body.calls == 1
    fn(Tensor(_arr(4, 3)), Tensor(_arr(4, 3)))
    assert body.calls == 2  # a new shape traces again
    a = Tensor(np.array([[1.0, -2.0]], np.float32), requires_grad=True)
    fn(a, Tensor(np.array([[3.0, 3.0]], np.float32))).sum().backward()
    assert a.grad is not None
    np.testing.assert_allclose(a.grad.numpy(), [[3.0, 0.0]])


# -- optimize: memory planning of the capture ---------------------------------------------------

_KEPT: dict[str, Tensor] = {}


def _chain(x: Tensor) -> Tensor:
    """Five realized intermediates; one of them escapes into ``_KEPT``."""
    a = (x + 1).contiguous().realize()
    b = (a * 2).exp().contiguous().realize()
    _KEPT["b"] = b
    c = ((b + a).contiguous() * 3).realize()
    d = (c.sqrt() + a).contiguous().realize()
    return ((d * d - 1).contiguous().sum(0) + 1).realize()


def _chain_reference(x: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], ...]:
    a = x + 1
    b = np.exp(a * 2)
    d = np.sqrt((b + a) * 3) + a
    return (d * d - 1).sum(0) + 1, b


def test_optimize_shares_memory_between_dead_intermediates() -> None:
    jit = TinyJit(_chain, optimize=True)
    plain = TinyJit(_chain)
    for i in range(5):
        x = np.abs(_arr(32, 64))
        want, want_b = _chain_reference(x)
        np.testing.assert_allclose(plain(Tensor(x)).numpy(), want, rtol=1e-5)
        got = jit(Tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"call {i}")
        # the escaped intermediate kept its own memory: the other intermediates didn't clobber it
        np.testing.assert_allclose(_KEPT["b"].numpy(), want_b, rtol=1e-5, err_msg=f"call {i}")
    planned, arena = jit.memory_plan
    assert planned >= 4 * 32 * 64 * 4  # a, b + a, c, d * d - 1 (b escaped: not planned)
    assert 0 < arena < planned
    assert plain.memory_plan == (0, 0)
    assert jit.kernel_count == plain.kernel_count


def test_optimize_never_plans_inputs_or_outputs() -> None:
    jit = TinyJit(lambda x: ((x * 2).contiguous() + 1).realize(), optimize=True)
    outs = []
    for i in range(4):
        outs.append(jit(Tensor(np.full((16,), float(i), np.float32))))
    for i, out in enumerate(outs):  # every result is still its own buffer
        np.testing.assert_array_equal(out.numpy(), np.full((16,), 2.0 * i + 1))
    assert 0 < jit.memory_plan[1] <= jit.memory_plan[0]
