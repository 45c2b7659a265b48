"""tinygrad's Tensor-level functions: ``function(grad_fxn=, precompile_backward=True)``,
``Tensor.as_param``/``call``/``callify``/``is_param_``, and the Tensor signatures that take
tinygrad's parameters (``realize(do_update_stats=)``, ``contiguous(**kwargs)``, the *_like
family, ``from_blob``). Gradients are checked against PyTorch and finite differences."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from fusegrad import GlobalCounters, Tensor, dtypes, function

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.kernels
RNG = np.random.default_rng(18)


def _arr(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.normal(size=shape).astype(np.float32)


# -- grad_fxn ------------------------------------------------------------------------------------


def test_grad_fxn_replaces_the_bodys_gradient() -> None:
    seen: list[tuple[tuple[int, ...], ...]] = []

    def straight_through(grad: Tensor, x: Tensor) -> Tensor:
        seen.append((tuple(grad.shape), tuple(x.shape)))
        return grad * 1.0  # round's gradient is 0 almost everywhere: pass it straight through

    rounded = function(lambda x: x.round(), grad_fxn=straight_through)
    x0 = _arr(3, 4)
    for _ in range(2):
        x = Tensor(x0, requires_grad=True)
        y = rounded(x)
        np.testing.assert_array_equal(y.numpy(), np.round(x0))
        (y * Tensor(x0)).sum().backward()
        assert x.grad is not None
        np.testing.assert_allclose(x.grad.numpy(), x0, rtol=1e-6)  # d/dx sum(ste(x) * c) = c
    assert seen == [((3, 4), (3, 4))] * 2  # called by backward, with the Tensors


def test_grad_fxn_against_pytorch_custom_function() -> None:
    """A clipped-gradient tanh: fusegrad's grad_fxn and a torch.autograd.Function agree."""

    def clipped(grad: Tensor, x: Tensor, w: Tensor) -> tuple[Tensor, Tensor | None]:
        local = 1 - (x * w).tanh() ** 2
        return (grad * local * w).clip(-0.1, 0.1), grad * local * x

    class Torched(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, w: Any) -> Any:
            ctx.save_for_backward(x, w)
            return torch.tanh(x * w)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x, w = ctx.saved_tensors
            local = 1 - torch.tanh(x * w) ** 2
            return (grad * local * w).clamp(-0.1, 0.1), grad * local * x

    f = function(lambda x, w: (x * w).tanh(), grad_fxn=clipped)
    x0, w0, g0 = _arr(5, 3), _arr(5, 3) * 3, _arr(5, 3)
    x, w = Tensor(x0, requires_grad=True), Tensor(w0, requires_grad=True)
    f(x, w).backward(Tensor(g0))
    tx = torch.tensor(x0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    Torched.apply(tx, tw).backward(torch.tensor(g0))
    assert x.grad is not None and w.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_grad_fxn_errors_name_the_problem() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True)
    two = function(lambda x: (x, x * 2), grad_fxn=lambda g, x: g)
    with pytest.raises(ValueError, match="return one Tensor"):
        two(x)
    wrong_count = function(lambda x, y: x * y, grad_fxn=lambda g, x, y: g)
    with pytest.raises(ValueError, match="1 gradients for 2 Tensor arguments"):
        wrong_count(x, Tensor([3.0, 4.0])).sum().backward()
    wrong_shape = function(lambda x: x * 2, grad_fxn=lambda g, x: g.sum())
    with pytest.raises(ValueError, match=r"gradient 0 has shape \(\), its input \(2,\)"):
        wrong_shape(x).sum().backward()


# -- precompile_backward -------------------------------------------------------------------------


def _torch_grads(x0: np.ndarray[Any, Any], w0: np.ndarray[Any, Any]) -> tuple[Any, Any]:
    tx = torch.tensor(x0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    (torch.exp((tx @ tw) * 0.1).sum(dim=0) * torch.arange(1.0, 5.0)).sum().backward()
    assert tx.grad is not None and tw.grad is not None
    return tx.grad.numpy(), tw.grad.numpy()


def test_precompile_backward_matches_pytorch_and_runs_one_plan() -> None:
    traced: list[int] = []

    @function(precompile_backward=True)
    def layer(x: Tensor, w: Tensor) -> Tensor:
        traced.append(1)
        return ((x @ w) * 0.1).exp().sum(axis=0)

    scale = Tensor(np.arange(1.0, 5.0, dtype=np.float32))
    kernels = []
    for _ in range(4):
        x0, w0 = _arr(3, 6), _arr(6, 4)
        x, w = Tensor(x0, requires_grad=True), Tensor(w0, requires_grad=True)
        out = layer(x, w)
        (out * scale).sum().backward()
        before = GlobalCounters.kernel_count
        assert x.grad is not None and w.grad is not None
        gx, gw = x.grad.numpy(), w.grad.numpy()
        kernels.append(GlobalCounters.kernel_count - before)
        tx, tw = _torch_grads(x0, w0)
        np.testing.assert_allclose(gx, tx, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(gw, tw, rtol=1e-4, atol=1e-5)
    assert traced == [1]
    (trace,) = layer.traces.values()
    rule = trace.gradients[0]
    assert rule is not None and rule.name == "layer backward"
    # the backward ran as its precompiled plan when backward() reached the output: reading
    # the gradients afterwards launches no kernel of the body's backward
    assert kernels[1:] == [0, 0, 0]


def test_precompile_backward_gives_gradients_to_implicit_weights() -> None:
    w0, x0 = _arr(4, 2), _arr(3, 4)
    w = Tensor(w0, requires_grad=True)
    f = function(lambda x: (x @ w).relu().sum(), precompile_backward=True, allow_implicit=True)
    x = Tensor(x0, requires_grad=True)
    f(x).backward()
    tx = torch.tensor(x0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    torch.relu(tx @ tw).sum().backward()
    assert x.grad is not None and w.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_precompile_backward_finite_differences() -> None:
    f = function(lambda a, b: (a.sin() * b + a * a).sum(), precompile_backward=True)
    a0, b0 = _arr(5).astype(np.float64), _arr(5).astype(np.float64)
    a = Tensor(a0.astype(np.float32), requires_grad=True)
    f(a, Tensor(b0.astype(np.float32))).backward()
    eps = 1e-4

    def value(v: np.ndarray[Any, Any]) -> float:
        return float((np.sin(v) * b0 + v * v).sum())

    numeric = [(value(a0 + eps * e) - value(a0 - eps * e)) / (2 * eps) for e in np.eye(5)]
    assert a.grad is not None
    np.testing.assert_allclose(a.grad.numpy(), numeric, rtol=1e-3, atol=1e-4)


def test_precompile_backward_with_grad_fxn_traces_the_gradient_once() -> None:
    calls: list[int] = []

    def doubled(grad: Tensor, x: Tensor) -> Tensor:
        calls.append(1)
        return grad * 2

    f = function(lambda x: x * 5, grad_fxn=doubled, precompile_backward=True)
    for _ in range(3):
        x = Tensor(_arr(4), requires_grad=True)
        f(x).sum().backward()
        assert x.grad is not None
        np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 2.0, np.float32))
    assert calls == [1]  # traced once; later backwards replay the compiled plan


# -- as_param / call / callify / is_param ---------------------------------------------------------


def test_as_param_and_call() -> None:
    a, b = Tensor(_arr(2, 3)), Tensor(_arr(2, 3))
    body = (a.as_param(0) * b.as_param(1)).relu() + 1
    assert a.as_param(0).uop is a.as_param(0).uop  # one node per slot, dtype, shape, device
    for _ in range(2):
        x0, y0 = _arr(2, 3), _arr(2, 3)
        out = Tensor(x0).call(Tensor(y0), fxn=body)
        np.testing.assert_allclose(out.numpy(), np.maximum(x0 * y0, 0) + 1, rtol=1e-6)
    with pytest.raises(ValueError, match=r"parameter 1 is dtypes.float32 \(2, 3\)"):
        Tensor(x0).call(Tensor(_arr(3, 2)), fxn=body)
    with pytest.raises(ValueError, match="reads parameter 1, given 1"):
        Tensor(x0).call(fxn=body)
    with pytest.raises(ValueError, match="slot must be an int"):
        a.as_param(-1)


def test_call_is_differentiable_and_takes_grad_fxn() -> None:
    x0, y0 = _arr(4), _arr(4)
    body = Tensor(x0).as_param(0).exp() * Tensor(y0).as_param(1)
    x, y = Tensor(x0, requires_grad=True), Tensor(y0, requires_grad=True)
    x.call(y, fxn=body).sum().backward()
    assert x.grad is not None and y.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x0) * y0, rtol=1e-5)
    np.testing.assert_allclose(y.grad.numpy(), np.exp(x0), rtol=1e-5)
    x, y = Tensor(x0, requires_grad=True), Tensor(y0, requires_grad=True)
    x.call(y, fxn=body, grad_fxn=lambda g, a, b: (g * 3, None)).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 3.0, np.float32))


def test_callify_keeps_the_value() -> None:
    x0, y0 = _arr(3), _arr(3)
    x, y = Tensor(x0).realize(), Tensor(y0).realize()
    z = (x * y + 1).exp()
    c = z.callify()
    assert c.uop is z.uop  # the call of the body over z's buffers is z's graph again
    np.testing.assert_allclose(c.numpy(), np.exp(x0 * y0 + 1), rtol=1e-6)
    lazy = x * 2  # an explicit argument that is not a buffer: parameter 0
    d = (lazy + y).callify(lazy)
    np.testing.assert_allclose(d.numpy(), x0 * 2 + y0, rtol=1e-6)
    y.assign(Tensor(_arr(3)))
    with pytest.raises(ValueError, match="writes into a buffer"):
        y.callify()


def test_is_param_lets_a_body_read_a_weight() -> None:
    w = Tensor([[1.0, 2.0], [3.0, 4.0]]).realize()
    assert w.is_param is False
    with pytest.raises(ValueError, match="not one of its arguments"):
        function(lambda x: x @ w)(Tensor([[1.0, 1.0]]))
    assert w.is_param_() is w and w.is_param is True
    out = function(lambda x: x @ w)(Tensor([[1.0, 1.0]]))
    assert out.tolist() == [[4.0, 6.0]]
    w.is_param_(False)
    assert w.is_param is False


# -- signatures with tinygrad's parameters --------------------------------------------------------


def test_realize_without_updating_stats() -> None:
    a = Tensor(_arr(8))
    before = GlobalCounters.kernel_count
    (a * 2).realize(do_update_stats=False)
    assert GlobalCounters.kernel_count == before
    (a * 3).realize()
    assert GlobalCounters.kernel_count > before


def test_contiguous_kwargs_and_like_family() -> None:
    a = Tensor([1.0, 2.0]).realize()
    assert a.contiguous() is a
    tagged = a.contiguous(tag=1)
    assert tagged.uop.tag == 1 and tagged.tolist() == [1.0, 2.0]
    assert a.full_like(3, dtype=dtypes.int32).tolist() == [3, 3]
    assert a.full_like(2.5, buffer=False).tolist() == [2.5, 2.5]
    e = a.empty_like(dtype="float16", device="CPU")
    assert e.dtype == dtypes.float16 and e.shape == (2,)
    assert a.zeros_like(dtype=dtypes.int8).tolist() == [0, 0]


def test_from_blob_takes_dtype_and_device_as_keywords() -> None:
    buf = (ctypes.c_int32 * 4)(1, 2, 3, 4)
    t = Tensor.from_blob(ctypes.addressof(buf), (2, 2), dtype=dtypes.int32, device="CPU")
    assert t.tolist() == [[1, 2], [3, 4]]


def _jit_training(f: Any) -> list[float]:
    from fusegrad import Context, TinyJit
    from fusegrad.nn.optim import SGD

    w = Tensor(np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    opt = SGD([w], lr=0.01)

    @TinyJit
    def step(x: Tensor) -> Tensor:
        opt.zero_grad()
        loss = f(x, w).sum()
        loss.backward()
        opt.step()
        return loss.realize()

    weights = []
    with Context(TRAINING=1):
        for i in range(5):
            step(Tensor(np.full((2, 4), i + 1, np.float32)))
            weights.append(float(w.numpy().sum()))
    return weights


def test_custom_gradients_inside_tinyjit_training() -> None:
    def body(x: Tensor, w: Tensor) -> Tensor:
        return (x @ w).relu().sum(axis=1)

    def by_hand(g: Tensor, x: Tensor, w: Tensor) -> tuple[None, Tensor]:
        return None, x.T @ g.reshape(-1, 1).expand(-1, 3)  # relu is the identity here (x, w > 0)

    plain = _jit_training(body)
    assert plain[0] != plain[-1]  # the weights move every replayed step
    for f in (function(body, precompile_backward=True), function(body, grad_fxn=by_hand)):
        np.testing.assert_allclose(_jit_training(f), plain, rtol=1e-6)


def test_precompile_backward_computes_only_the_gradients_backward_uses() -> None:
    f = function(lambda x, w: (x @ w).exp().sum(), precompile_backward=True)

    def backward_kernels(x_grad: bool | None) -> int:
        counts = []
        for _ in range(3):
            x = Tensor(_arr(8, 16), requires_grad=x_grad)
            w = Tensor(_arr(16, 4) * 0.1, requires_grad=True)
            loss = f(x, w)
            loss.realize()
            before = GlobalCounters.kernel_count
            loss.backward()
            counts.append(GlobalCounters.kernel_count - before)
            assert w.grad is not None and (x.grad is None) == (x_grad is False)
        return counts[-1]

    # x marked requires_grad=False: its gradient is not wanted, so not computed
    assert backward_kernels(False) < backward_kernels(None)


def test_precompile_backward_with_multitensor_arguments() -> None:
    from fusegrad.tensor.multi import MultiTensor, shard

    devices = ("CPU:0", "CPU:1")
    f = function(lambda x, w: (x * w).exp().sum(axis=0), precompile_backward=True)
    for _ in range(2):
        a, b = _arr(4, 3), _arr(4, 3)
        w = Tensor(a, requires_grad=True)
        out = f(shard(Tensor(b), devices, axis=0), shard(w, devices, axis=0))
        assert isinstance(out, MultiTensor)
        np.testing.assert_allclose(out.numpy(), np.exp(a * b).sum(0), rtol=1e-5)
        out.sum().backward()
        assert w.grad is not None
        np.testing.assert_allclose(w.grad.numpy(), b * np.exp(a * b), rtol=1e-5)


def test_call_on_multitensors_shard_by_shard() -> None:
    from fusegrad.tensor.multi import MultiTensor, shard

    devices = ("CPU:0", "CPU:1")
    a0, b0 = _arr(4, 3), _arr(4, 3)
    a, b = shard(Tensor(a0), devices, axis=0), shard(Tensor(b0), devices, axis=0)
    body = (a.as_param(0) * b.as_param(1)).relu()
    assert isinstance(body, MultiTensor) and body.device == a.device
    for _ in range(2):
        x0, y0 = _arr(4, 3), _arr(4, 3)
        x, y = shard(Tensor(x0), devices, axis=0), shard(Tensor(y0), devices, axis=0)
        out = x.call(y, fxn=body)
        assert out.axis == 0
        np.testing.assert_allclose(out.numpy(), np.maximum(x0 * y0, 0), rtol=1e-6)
    with pytest.raises(ValueError, match="argument 1 must be a MultiTensor"):
        x.call(Tensor(y0), fxn=body)  # type: ignore[arg-type]
