"""Gradients of the composed Tensor transcendentals at their edges (issue #24): what PyTorch
gives (inf where the function overflows, 0 where it saturates, never a NaN from a computed
but unselected branch), and the sign of zero kept in the values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fusegrad import Tensor

pytestmark = pytest.mark.kernels


def _grad(name: str, xs: list[float]) -> np.ndarray:
    t = Tensor(np.array(xs, np.float32), requires_grad=True)
    getattr(t, name)().sum().backward()
    assert t.grad is not None
    return t.grad.numpy().astype(np.float64)


def test_exp_gradient_is_exp_up_to_and_past_overflow() -> None:
    xs = [-math.inf, -200.0, -1.0, 0.0, 1.0, 20.0, 88.5, 88.7, 88.75, 100.0, math.inf]
    got = _grad("exp", xs)
    with np.errstate(over="ignore"):
        want = np.exp(np.array(xs, np.float32).astype(np.float64)).astype(np.float32)
    assert not np.isnan(got).any(), got
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6)
    assert (got[~finite] == math.inf).all(), got  # PyTorch: exp(x) * 1 = inf


def test_exp_gradient_nan_is_nan() -> None:
    assert np.isnan(_grad("exp", [math.nan])).all()


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_saturating_gradients_are_zero_at_infinity(name: str) -> None:
    got = _grad(name, [-math.inf, math.inf, -1e30, 1e30])
    assert (got == 0).all(), got


def test_tanh_gradient_matches_float64() -> None:
    xs = np.array([-3.5, -1.0, -0.3, 1e-3, 0.3, 0.7, 1.0, 2.0, 3.5], np.float32)
    got = _grad("tanh", xs.tolist())
    want = 1 / np.cosh(xs.astype(np.float64)) ** 2
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_sigmoid_gradient_matches_float64_in_the_tails() -> None:
    xs = np.array([-80.0, -20.0, -1.0, 0.0, 1.0, 20.0], np.float32)
    got = _grad("sigmoid", xs.tolist())
    s = 1 / (1 + np.exp(-xs.astype(np.float64)))
    np.testing.assert_allclose(got, s * (1 - s), rtol=1e-5)


@pytest.mark.parametrize("name", ["tanh", "sin", "expm1", "log1p", "erf"])
def test_odd_functions_keep_the_sign_of_zero(name: str) -> None:
    got = getattr(Tensor(np.array([-0.0, 0.0], np.float32)), name)().numpy()
    assert got.tolist() == [0.0, 0.0]
    assert np.signbit(got).tolist() == [True, False], name
