"""Bad input gets a clear exception naming the value, or is converted correctly (issue #24)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from fusegrad import Device, Tensor, dtypes

pytestmark = pytest.mark.kernels  # the real engine and device, not the reference interpreter


def _import_with(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "import fusegrad"
    full = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("key", "value"), [("BEAM", "abc"), ("JIT", "abc"), ("DEBUG", "x")])
def test_bad_env_var_names_the_variable_and_value(key: str, value: str) -> None:
    proc = _import_with({key: value})
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert f"{key}={value!r}" in last, last
    assert "invalid literal" not in last


def test_unknown_device_raises_at_tensor_creation() -> None:
    with pytest.raises(ValueError, match=r"unknown device 'FOO'.*'CPU'.*'PYTHON'"):
        Tensor([1.0, 2.0], device="FOO")


def test_unknown_default_device_raises_at_assignment() -> None:
    before = Device.default_override
    with pytest.raises(ValueError, match=r"unknown device 'FOO'.*'CPU'"):
        Device.DEFAULT = "FOO"
    assert Device.default_override == before


def test_known_device_names_still_accepted() -> None:
    assert Tensor([1.0], device="cpu").device == "CPU"
    assert Tensor([1.0], device="CPU:0").device == "CPU"


@pytest.mark.parametrize("npdt", [">i4", ">f4", ">f8", ">i8", ">u2", "<i4"])
def test_big_endian_arrays_are_byte_swapped(npdt: str) -> None:
    arr = np.array([[1, -2 if "u" not in npdt else 2], [300, 7]], dtype=npdt)
    t = Tensor(arr)
    assert t.dtype.itemsize == arr.dtype.itemsize
    np.testing.assert_array_equal(t.numpy(), arr.astype(arr.dtype.newbyteorder("=")))


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (2**31 - 1, dtypes.int32),
        (2**31, dtypes.int64),
        (2**32, dtypes.int64),
        (2**40, dtypes.int64),
        (2**63 - 1, dtypes.int64),
        (-(2**31), dtypes.int32),
        (-(2**31) - 1, dtypes.int64),
        (-(2**63), dtypes.int64),
        (2**63, dtypes.uint64),
        (2**64 - 1, dtypes.uint64),
    ],
)
def test_python_ints_outside_int32_infer_a_wide_dtype(value: int, dtype: object) -> None:
    listed, scalar = Tensor([value]), Tensor(value)
    assert listed.dtype is dtype and scalar.dtype is dtype
    assert listed.tolist() == [value]
    assert scalar.item() == value


def test_list_with_one_wide_int_is_int64() -> None:
    t = Tensor([1, 2**40, -3])
    assert t.dtype is dtypes.int64
    assert t.tolist() == [1, 2**40, -3]


@pytest.mark.parametrize("data", [[2**64], [2**63, -1]])
def test_ints_beyond_64_bits_raise_overflow(data: list[int]) -> None:
    with pytest.raises(OverflowError):
        Tensor(data)


def _conv_input() -> tuple[Tensor, Tensor]:
    return Tensor.ones(1, 1, 5, 5), Tensor.ones(1, 1, 3, 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x, w: x.conv2d(w, dilation=0), r"conv2d: dilation .* \(0, 0\)"),
        (lambda x, w: x.conv2d(w, stride=0), r"conv2d: stride .* \(0, 0\)"),
        (lambda x, w: x.conv2d(w, stride=(1, -1)), r"conv2d: stride .* \(1, -1\)"),
        (lambda x, w: x.conv2d(Tensor.ones(1, 1, 0, 3)), r"conv2d: kernel size .* \(0, 3\)"),
        (lambda x, w: x.conv_transpose2d(w, stride=0), r"conv_transpose2d: stride"),
        (lambda x, w: x.conv_transpose2d(w, dilation=0), r"conv_transpose2d: dilation"),
        (lambda x, w: x.max_pool2d(2, stride=0), r"pool: stride .* \(0, 0\)"),
        (lambda x, w: x.avg_pool2d(0), r"pool: kernel_size .* \(0, 0\)"),
        (lambda x, w: x.max_pool2d((2, 0)), r"pool: kernel_size .* \(2, 0\)"),
        (lambda x, w: x.max_pool2d(2, dilation=0), r"pool: dilation"),
        (lambda x, w: x.conv2d(w, padding=-9), r"pad: padding \(-9, -9\) .* size 5 of dim 2"),
        (lambda x, w: x.pad((-9, 0)), r"pad: padding \(-9, 0\) .* size 5 of dim 3"),
        (lambda x, w: x.repeat(1, 1, -1, 1), r"repeat: repeats must be >= 0.*-1"),
    ],
)
def test_bad_conv_pool_pad_repeat_arguments_raise_value_error(call: object, message: str) -> None:
    x, w = _conv_input()
    with pytest.raises(ValueError, match=message):
        call(x, w)  # type: ignore[operator]


def test_allowed_crops_and_zero_repeats_still_work() -> None:
    x, w = _conv_input()
    assert x.conv2d(w, padding=-1).shape == (1, 1, 1, 1)
    assert x.pad((-5, 0)).shape == (1, 1, 5, 0)
    assert x.repeat(1, 1, 0, 1).shape == (1, 1, 0, 5)


@pytest.mark.parametrize("shape", [(2**64 + 4,), (2**32, 2**32)])
def test_huge_allocations_say_the_size_overflows(shape: tuple[int, ...]) -> None:
    t = Tensor.zeros(*shape).contiguous() if len(shape) > 1 else Tensor.empty(*shape)
    with pytest.raises(OverflowError, match=r"allocation size \d+ bytes overflows"):
        (t.flatten()[:4] + 1).realize()


def test_arange_past_int32_is_int64_and_indexes_in_int64() -> None:
    a = Tensor.arange(2**33)
    assert a.dtype is dtypes.int64
    assert a[2**32 + 5].item() == 2**32 + 5
    assert a[-1].item() == 2**33 - 1


@pytest.mark.parametrize(
    ("start", "stop", "dtype"),
    [
        (0, 2**31, dtypes.int32),  # last value 2**31 - 1 fits
        (0, 2**31 + 1, dtypes.int64),
        (2**31 - 3, 2**31, dtypes.int32),
        (2**31, 2**31 + 3, dtypes.int64),
        (2**32, 2**32 + 3, dtypes.int64),
        (-(2**31) - 2, -(2**31) + 2, dtypes.int64),
        (2**63 - 3, 2**63 - 1, dtypes.int64),
    ],
)
def test_arange_dtype_and_values_at_int32_boundaries(start: int, stop: int, dtype: object) -> None:
    t = Tensor.arange(start, stop)
    assert t.dtype is dtype
    assert t[-3:].tolist() == list(range(max(start, stop - 3), stop))
