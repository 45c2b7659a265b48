"""A reduction over a constant folds to arithmetic in the scheduler, and DEBUG>=1 warns about a
kernel whose loops run an absurd number of steps (issue #24)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from fusegrad.codegen.schedule import get_kernel_graph
from fusegrad.codegen.schedule.graph import ABSURD_LOOP_STEPS, loop_steps, summary
from fusegrad.uop import UOp

pytestmark = pytest.mark.kernels


def _max_steps(t: Tensor) -> int:
    kg = get_kernel_graph(UOp.sink(t.uop), cache=None)
    return max((loop_steps(c.src[0]) for c in kg.kernels), default=0)


def test_sum_of_2_to_40_ones_folds_without_a_loop() -> None:
    code = "from fusegrad import Tensor; print(int(Tensor.ones(2**40).sum().item()))"
    proc = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) == 2**40


@pytest.mark.parametrize(
    "make",
    [
        lambda: Tensor.ones(2**40).sum(),
        lambda: Tensor.full((2**40,), 1.5).max(),
        lambda: Tensor.full((2**40,), 1.5).min(),
        lambda: Tensor.full((2**40,), 1.0).prod(),
        lambda: Tensor.ones(2**40).mean(),
        lambda: Tensor.full((3, 2**38), 2.0).sum(1),
    ],
)
def test_reductions_of_a_constant_build_no_big_loop(make: object) -> None:
    assert _max_steps(make()) <= 3  # type: ignore[operator]


@pytest.mark.parametrize(
    ("make", "want"),
    [
        (lambda: Tensor.ones(2**40).sum(), float(2**40)),
        (lambda: Tensor.full((2**33,), 2.0).sum(), float(2**34)),
        (lambda: Tensor.ones(2**25).sum(), float(2**25)),  # a float32 loop would stall at 2**24
        (lambda: Tensor.full((2**40,), 1.5).max(), 1.5),
        (lambda: Tensor.full((2**40,), -1.5).min(), -1.5),
        (lambda: Tensor.full((40,), 2.0).prod(), float(2**40)),
        (lambda: Tensor.full((400,), 2.0).prod(), float("inf")),
        (lambda: Tensor.full((401,), -2.0).prod(), float("-inf")),
        (lambda: Tensor.full((7,), -3, dtype=dtypes.int32).prod(), -2187),
        (lambda: Tensor.full((2**31,), 3, dtype=dtypes.int32).sum(), -(2**31)),  # wraps as int32
        (lambda: Tensor.ones(2**40, dtype=dtypes.int64).sum(), 2**40),
        (lambda: Tensor.ones(2**40).mean(), 1.0),
        (lambda: Tensor.full((2**40,), float("nan")).sum(), float("nan")),
    ],
)
def test_folded_reductions_have_the_right_value(make: object, want: float) -> None:
    got = make().item()  # type: ignore[operator]
    np.testing.assert_equal(got, want)


def test_partial_reduction_of_a_constant_keeps_its_shape() -> None:
    out = Tensor.full((3, 2**33, 2), 0.5).sum(1)
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(out.numpy(), np.full((3, 2), 2.0**32, np.float32))


def test_reduction_of_data_is_not_folded() -> None:
    x = Tensor([1.0, 2.0, 3.0])
    assert _max_steps(x.sum()) == 3
    assert x.sum().item() == 6.0


def test_debug_summary_warns_about_absurd_loop_counts() -> None:
    x = Tensor.rand(2**10).contiguous().realize()
    big = x.reshape(1, -1).expand(2**27, -1).sum()  # 2**37 steps: warned, not run here
    kg = get_kernel_graph(UOp.sink(big.uop), cache=None)
    assert loop_steps(kg.kernels[0].src[0]) == 2**37 > ABSURD_LOOP_STEPS
    assert "WARNING: 1.37e+11 loop steps" in summary(kg)
    small = get_kernel_graph(UOp.sink(x.sum().uop), cache=None)
    assert "WARNING" not in summary(small)
