"""tinygrad's IR-level helpers of the op mixin on Tensor (alu, const, const_like, ufix, usum,
uprod) and UOp.linspace: the same graphs as the UOp methods build."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.uop import Ops, UOp, dtypes


def test_tensor_alu_is_uop_alu_on_its_uop() -> None:
    t = Tensor([1.0, -2.0, 3.0]).realize()
    assert t.alu(Ops.ADD, t).uop is t.uop.alu(Ops.ADD, t.uop)
    assert t.alu(Ops.MUL, 3).uop is t.uop.alu(Ops.MUL, 3)
    assert t.alu(Ops.CMPLT, 0).uop is t.uop.alu(Ops.CMPLT, 0)
    np.testing.assert_array_equal(t.alu(Ops.MAX, 0.5).numpy(), [1.0, 0.5, 3.0])
    w = Tensor([2.0, 2.0, 2.0], requires_grad=True)
    assert t.alu(Ops.MUL, w).requires_grad  # a Tensor operand's gradient flows


def test_tensor_const_helpers() -> None:
    t = Tensor([1, 2, 3]).realize()
    c = Tensor.const(2.5)
    assert c.shape == () and c.dtype is dtypes.float32 and c.item() == 2.5
    assert Tensor.const(True).dtype is dtypes.bool
    assert Tensor.const(7, dtypes.int8).dtype is dtypes.int8
    with pytest.raises(TypeError, match="Python bool/int/float"):
        Tensor.const("x")
    assert t.const_like(4).uop is t.uop.const_like(4)
    assert t.const_like(4).tolist() == [4, 4, 4]
    assert t.ufix(5).tolist() == [5, 5, 5] and t.ufix(t) is t
    np.testing.assert_array_equal(t.usum(t, 1).numpy(), [3, 5, 7])
    np.testing.assert_array_equal(t.uprod(t, t).numpy(), [1, 8, 27])


def test_uop_linspace_is_tensor_linspace() -> None:
    for args in ((0, 1, 5), (-2.0, 3.0, 7), (1, 1, 1), (0, 1, 0)):
        assert UOp.linspace(*args, device="CPU") is Tensor.linspace(*args, device="CPU").uop
    np.testing.assert_allclose(
        Tensor(UOp.linspace(-2, 3, 7)).numpy(), np.linspace(-2, 3, 7), rtol=1e-6
    )
    with pytest.raises(RuntimeError, match="non-negative"):
        UOp.linspace(0, 1, -1)


def test_allclose_on_uops() -> None:
    a = Tensor([1.0, 2.0, math.nan]).realize().uop
    b = Tensor([1.0, 2.0000001, math.nan]).realize().uop
    assert Tensor(a.allclose(b)).item() is False  # NaN != NaN
    assert Tensor(a.allclose(b, equal_nan=True)).item() is True
    assert Tensor(a.allclose(b * 1.1, equal_nan=True)).item() is False
    assert a.allclose(b).shape == () and a.allclose(b).dtype is dtypes.bool
