"""Tensor state across calls: the default device follows ``Device.DEFAULT``/``DEV`` at once,
grad-requiring leaves stay distinct under hash-consing, and assign through a view of a
realized buffer writes into that buffer (PyTorch's view semantics)."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Context, Device, Tensor, dtypes

# -- the default device ---------------------------------------------------------------------------


def test_context_dev_changes_the_default_device_at_once() -> None:
    before = Tensor([1]).device
    with Context(DEV="PYTHON"):
        assert Tensor([1]).device == "PYTHON"
        assert Tensor.zeros(2).device == "PYTHON"
        assert Tensor.arange(3).device == "PYTHON"
    assert Tensor([1]).device == before


def test_device_default_assignment_changes_the_default_device() -> None:
    previous = Device.default_override
    try:
        Device.DEFAULT = "PYTHON"
        assert Tensor([1.0]).device == "PYTHON"
        assert Tensor.rand(2).device == "PYTHON"
    finally:
        Device.DEFAULT = previous
    assert Tensor([1.0]).device == Device.DEFAULT


@pytest.mark.kernels
def test_tensor_made_under_context_dev_runs_there() -> None:
    with Context(DEV="PYTHON"):
        t = Tensor([1.0, 2.0]) * 3
    assert t.device == "PYTHON"
    np.testing.assert_array_equal(t.numpy(), [3.0, 6.0])


# -- distinct leaves ------------------------------------------------------------------------------


def _two_leaf_grads(a: Tensor, b: Tensor) -> tuple[np.ndarray, np.ndarray]:
    (a * 2 + b * 3).sum().backward()
    assert a.grad is not None and b.grad is not None
    return a.grad.numpy(), b.grad.numpy()


@pytest.mark.parametrize(
    "make",
    [
        lambda: Tensor.ones(3, requires_grad=True),
        lambda: Tensor.zeros(3).requires_grad_(),
        lambda: Tensor.full((3,), 2.5, requires_grad=True),
        lambda: Tensor(1.5, requires_grad=True),
        lambda: Tensor.arange(3.0, requires_grad=True),
        lambda: Tensor.linspace(0, 1, 3, requires_grad=True),
        lambda: Tensor.eye(3, requires_grad=True),
    ],
    ids=["ones", "zeros_requires_grad_", "full", "scalar", "arange", "linspace", "eye"],
)
def test_equal_constant_leaves_keep_separate_grads(make) -> None:  # type: ignore[no-untyped-def]
    a, b = make(), make()
    ga, gb = _two_leaf_grads(a, b)
    np.testing.assert_array_equal(ga, np.full(ga.shape, 2.0))
    np.testing.assert_array_equal(gb, np.full(gb.shape, 3.0))


def test_leaf_equal_to_a_plain_constant_gets_only_its_own_grad() -> None:
    a = Tensor.zeros(2).requires_grad_()
    c = Tensor.zeros(2)
    (a * 2 + c * 3).sum().backward()
    assert a.grad is not None
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])


def test_reseeded_random_leaves_are_equal_but_distinct() -> None:
    Tensor.manual_seed(7)
    a = Tensor.rand(3, requires_grad=True)
    Tensor.manual_seed(7)
    b = Tensor.rand(3, requires_grad=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    ga, gb = _two_leaf_grads(a, b)
    np.testing.assert_array_equal(ga, [2.0] * 3)
    np.testing.assert_array_equal(gb, [3.0] * 3)


def test_created_with_requires_grad_are_leaves() -> None:
    for t in (
        Tensor.eye(2, requires_grad=True),
        Tensor.arange(4.0, requires_grad=True),
        Tensor.linspace(0, 1, 4, requires_grad=True),
        Tensor.rand(2, requires_grad=True),
        Tensor.uniform(2, requires_grad=True),
    ):
        assert t.is_leaf and t.requires_grad
        assert t.dtype is dtypes.float32


def test_detach_then_requires_grad_is_a_new_leaf() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2).detach().requires_grad_()
    assert d.is_leaf
    (d * d).sum().backward()
    assert d.grad is not None
    np.testing.assert_array_equal(d.grad.numpy(), [4.0, 8.0])
    assert x.grad is None


def test_leaf_values_survive_getting_their_own_buffer() -> None:
    t = Tensor.full((2, 2), 3, dtype=dtypes.int32)
    t.requires_grad = True
    assert t.dtype is dtypes.int32
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), 3))
    h = Tensor.full((2,), 1.5, dtype=dtypes.float16, requires_grad=True)
    assert h.dtype is dtypes.float16 and h.tolist() == [1.5, 1.5]


# -- assign through views -------------------------------------------------------------------------


def _base() -> Tensor:
    return Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).realize()


VIEWS = [
    (lambda t: t[1:3], lambda a: a[1:3]),
    (lambda t: t[0], lambda a: a[0]),
    (lambda t: t[:, ::2], lambda a: a[:, ::2]),
    (lambda t: t[::-1, 1], lambda a: a[::-1, 1]),
    (lambda t: t.T, lambda a: a.T),
    (lambda t: t.reshape(2, 6)[1], lambda a: a.reshape(2, 6)[1]),
    (lambda t: t[1:, 1:].flip(0), lambda a: a[1:, 1:][::-1]),
]


@pytest.mark.parametrize("kernels", [False, True], ids=["reference", "kernels"])
@pytest.mark.parametrize("view", VIEWS, ids=[str(i) for i in range(len(VIEWS))])
def test_assign_through_a_view_writes_the_base(view, kernels: bool, request) -> None:  # type: ignore[no-untyped-def]
    if kernels:
        request.applymarker(pytest.mark.kernels)
    get, get_np = view
    a = _base()
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    target = get_np(want)
    value = np.arange(target.size, dtype=np.float32).reshape(target.shape) + 100
    target[...] = value
    v = get(a)
    v.assign(Tensor(value)).realize()
    np.testing.assert_array_equal(v.numpy(), value)
    np.testing.assert_array_equal(a.numpy(), want)


@pytest.mark.kernels
def test_assign_through_a_view_with_the_kernel_pipeline() -> None:
    a = Tensor.zeros(2, 3).contiguous().realize()
    a[1].assign(a[0] + 5).realize()
    a[0, 1:].assign(2).realize()
    np.testing.assert_array_equal(a.numpy(), [[0, 2, 2], [5, 5, 5]])


def test_assign_into_expanded_or_padded_views_raises() -> None:
    a = Tensor.zeros(5).contiguous().realize()
    with pytest.raises(RuntimeError, match="expanded or padded"):
        a[::2].assign(Tensor([7.0, 8.0, 9.0]))
    with pytest.raises(RuntimeError, match="expanded or padded"):
        a.reshape(1, 5).expand(2, 5).assign(1.0)
    np.testing.assert_array_equal(a.numpy(), np.zeros(5))


def test_assign_on_lazy_tensors_replaces_the_value() -> None:
    t = Tensor.zeros(3)
    t.assign(Tensor([1.0, 2.0, 3.0]))
    assert t.tolist() == [1.0, 2.0, 3.0]
