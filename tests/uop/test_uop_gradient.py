"""UOp.gradient: the same rules and accumulation as Tensor autograd, on UOp graphs."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.uop import UOp, dtypes


def test_uop_gradient_is_the_tensor_gradient_graph() -> None:
    xs = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    x = Tensor(xs).realize()
    y = (x.exp() * x + x.sin()).sum()
    (want,) = y.gradient(x)
    (got,) = y.uop.gradient(x.uop)
    assert got is want.uop or got.cast(dtypes.float32) is want.uop
    np.testing.assert_allclose(
        Tensor(got, device="CPU").numpy(), np.exp(xs) * (xs + 1) + np.cos(xs), rtol=1e-5
    )


def test_uop_gradient_seed_and_unused_target() -> None:
    x = Tensor(np.arange(4, dtype=np.float32)).realize()
    z = Tensor(np.ones(2, np.float32)).realize()
    out = x.uop * 3.0
    g, gz = out.gradient(x.uop, z.uop, gradient=Tensor(np.full(4, 2.0, np.float32)).uop)
    np.testing.assert_allclose(Tensor(g, device="CPU").numpy(), np.full(4, 6.0))
    np.testing.assert_array_equal(Tensor(gz, device="CPU").numpy(), np.zeros(2))


def test_uop_gradient_bad_input() -> None:
    x = UOp.new_buffer("CPU", 4, dtypes.float32)
    with pytest.raises(RuntimeError, match="needs gradient="):
        (x * x).gradient(x)
    with pytest.raises(ValueError, match="seed shape"):
        (x * x).gradient(x, gradient=UOp.new_buffer("CPU", 3, dtypes.float32))
    i = UOp.new_buffer("CPU", 1, dtypes.int32)
    with pytest.raises(RuntimeError, match="floating point"):
        i.sum().gradient(i)
