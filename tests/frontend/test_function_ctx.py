"""``fusegrad.function.add_to_ctx``: building a function body by turning the tensors it reads
into parameters, applied back with ``Tensor.call``."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.function import add_to_ctx, params_of
from fusegrad.uop import UOp


def test_each_input_gets_one_slot_in_order() -> None:
    a, b = Tensor([1.0, 2.0, 3.0]), Tensor([[4.0], [5.0], [6.0]]).reshape(3)
    ctx: list[UOp] = []
    pa = add_to_ctx(ctx, a.uop)
    pb = add_to_ctx(ctx, b.uop)
    assert add_to_ctx(ctx, a.uop) is pa and ctx == [a.uop, b.uop]
    body = (Tensor(pa) - Tensor(pb)).exp() * Tensor(pa)
    assert sorted(params_of(body.uop)) == [0, 1]
    got = Tensor(ctx[0]).call(Tensor(ctx[1]), fxn=body).numpy()
    np.testing.assert_allclose(got, np.exp(a.numpy() - b.numpy()) * a.numpy(), rtol=1e-6)


def test_the_body_applies_to_other_tensors_of_the_same_kind() -> None:
    ctx: list[UOp] = []
    x = Tensor.ones(4)
    body = Tensor(add_to_ctx(ctx, x.uop)) * 3 + 1
    other = Tensor([0.0, 1.0, 2.0, 3.0])
    assert other.call(fxn=body).tolist() == [1.0, 4.0, 7.0, 10.0]


def test_gradients_flow_through_the_call() -> None:
    w = Tensor([1.0, -2.0], requires_grad=True)
    ctx: list[UOp] = []
    body = Tensor(add_to_ctx(ctx, w.uop)).square().sum()
    w.call(fxn=body).backward()
    assert w.grad is not None and w.grad.tolist() == [2.0, -4.0]


def test_non_tensor_nodes_are_refused() -> None:
    with pytest.raises(TypeError, match="x must be a UOp"):
        add_to_ctx([], Tensor([1.0]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a tensor-level node"):
        add_to_ctx([], UOp.variable("n", 1, 4))
