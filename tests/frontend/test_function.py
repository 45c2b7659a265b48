"""``fusegrad.function`` (tinygrad's ``function``): traced once per signature, lazy and
differentiable; ``precompile=True`` runs the body as one captured launch plan per call;
``allow_implicit=False`` refuses tensors the body reads from outside its arguments."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from fusegrad import GlobalCounters, Tensor, function

pytestmark = pytest.mark.kernels
RNG = np.random.default_rng(9)


def _arr(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.normal(size=shape).astype(np.float32)


def test_signature_is_tinygrads() -> None:
    params = list(inspect.signature(function).parameters)
    assert params == ["fxn", "precompile", "precompile_backward", "allow_implicit", "grad_fxn"]


def test_precompile_runs_the_body_as_one_plan_and_stays_differentiable() -> None:
    traced: list[int] = []

    @function(precompile=True)
    def body(a: Tensor, b: Tensor) -> Tensor:
        traced.append(1)
        return ((a * b).relu().contiguous() + 1).sum(axis=1)

    for _ in range(10):
        a0, b0 = _arr(4, 3), _arr(4, 3)
        a = Tensor(a0, requires_grad=True)
        out = body(a, Tensor(b0))
        assert out.is_realized  # computed by the plan before anything reads it
        np.testing.assert_allclose(out.numpy(), (np.maximum(a0 * b0, 0) + 1).sum(1), rtol=1e-6)
        out.sum().backward()
        assert a.grad is not None
        np.testing.assert_allclose(a.grad.numpy(), np.where(a0 * b0 > 0, b0, 0), rtol=1e-6)
    assert len(traced) == 1
    (jit,) = body.plans.values()
    assert jit.captured and jit.kernel_count >= 2
    before = GlobalCounters.kernel_count
    body(Tensor(_arr(4, 3)), Tensor(_arr(4, 3)))
    assert GlobalCounters.kernel_count - before == jit.kernel_count


def test_implicit_inputs_need_allow_implicit() -> None:
    w = Tensor([[1.0, 2.0], [3.0, 4.0]]).realize()
    x = Tensor([[1.0, 1.0]])
    with pytest.raises(ValueError, match="not one of its arguments"):
        function(lambda x: x @ w)(x)
    out = function(lambda x: (x @ w) + Tensor([1.0]), allow_implicit=True)(x)
    np.testing.assert_array_equal(out.numpy(), [[5.0, 7.0]])
    made_inside = function(lambda x: x * Tensor([2.0, 3.0]))  # data made by the body is fine
    np.testing.assert_array_equal(made_inside(x).numpy(), [[2.0, 3.0]])


def test_methods_and_callable_instances() -> None:
    class Scale:
        def __init__(self, k: float) -> None:
            self.k = k

        @function
        def apply(self, x: Tensor) -> Tensor:
            return x * self.k

    class Shift:
        def __call__(self, x: Tensor) -> Tensor:
            return x + 1

    assert Scale(3.0).apply(Tensor([1.0, 2.0])).tolist() == [3.0, 6.0]
    assert function(Shift())(Tensor([1.0])).tolist() == [2.0]


def test_bad_options_say_so() -> None:
    with pytest.raises(TypeError, match="grad_fxn must be callable"):
        function(lambda x: x, grad_fxn=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="call it with the function"):
        function(precompile=True)(Tensor([1.0]))


def test_multitensor_arguments_and_results() -> None:
    from fusegrad.tensor.multi import MultiTensor, shard

    devices = ("CPU:0", "CPU:1")
    traced: list[int] = []

    @function(precompile=True)
    def step(x: MultiTensor, y: MultiTensor) -> tuple[MultiTensor, MultiTensor]:
        traced.append(1)
        z = (x * 2 + y).relu()
        return z, z.sum(axis=0)

    for _ in range(10):
        a, b = _arr(6, 3), _arr(6, 3)
        x = shard(Tensor(a), devices, axis=0)
        z, total = step(x, shard(Tensor(b), devices, axis=0))
        assert isinstance(z, MultiTensor) and z.devices == x.devices
        np.testing.assert_allclose(z.numpy(), np.maximum(a * 2 + b, 0), rtol=1e-6)
        np.testing.assert_allclose(total.numpy(), np.maximum(a * 2 + b, 0).sum(0), rtol=1e-5)
    assert len(traced) == 1
