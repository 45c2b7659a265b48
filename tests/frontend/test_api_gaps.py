# ruff: noqa: E501  (the signature table reads best one method per line)
"""The API audit: signatures of commonly used methods against tinygrad's (names, order,
defaults), the behaviour fixed by the audit, and the schedule methods (schedule_linear,
linear_with_vars, custom_kernel)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, Variable, dtypes
from fusegrad.codegen import KernelInfo
from fusegrad.uop import Ops, UOp
from reference import assert_close

REQ = inspect.Parameter.empty

# tinygrad 0.14's signatures (self/cls and **kwargs left out; "*name" is a *args parameter)
TINYGRAD: dict[str, tuple[Any, ...]] = {
    "sum": (("axis", None), ("keepdim", False), ("dtype", None)),
    "mean": (("axis", None), ("keepdim", False)),
    "max": (("axis", None), ("keepdim", False)),
    "min": (("axis", None), ("keepdim", False)),
    "prod": (("axis", None), ("keepdim", False), ("dtype", None)),
    "var": (("axis", None), ("keepdim", False), ("correction", 1)),
    "std": (("axis", None), ("keepdim", False), ("correction", 1)),
    "argmax": (("axis", None), ("keepdim", False)),
    "argmin": (("axis", None), ("keepdim", False)),
    "softmax": (("axis", -1), ("dtype", None)),
    "log_softmax": (("axis", -1), ("dtype", None)),
    "logsumexp": (("axis", None), ("keepdim", False)),
    "cumsum": (("axis", 0),),
    "cummax": (("axis", 0),),
    "pad": (("padding", REQ), ("mode", "constant"), ("value", 0.0)),
    "pad_to": (("shape", REQ), "*args", ("value", 0)),
    "reshape": (("shape", REQ), "*args"),
    "permute": (("order", REQ), "*args"),
    "transpose": (("dim0", 1), ("dim1", 0)),
    "flatten": (("start_dim", 0), ("end_dim", -1)),
    "squeeze": (("dim", None),),
    "unsqueeze": (("dim", REQ),),
    "cat": ("*args", ("dim", 0)),
    "stack": ("*args", ("dim", 0)),
    "split": (("sizes", REQ), ("dim", 0)),
    "chunk": (("chunks", REQ), ("dim", 0)),
    "repeat": (("repeats", REQ), "*args"),
    "unfold": (("dim", REQ), ("size", REQ), ("step", REQ)),
    "roll": (("shifts", REQ), ("dims", None)),
    "diagonal": (("offset", 0), ("dim1", 0), ("dim2", 1)),
    "unflatten": (("dim", REQ), ("sizes", REQ)),
    "repeat_interleave": (("repeats", REQ), ("dim", None)),
    "interpolate": (("size", REQ), ("mode", "linear"), ("align_corners", False)),
    "scaled_dot_product_attention": (("key", REQ), ("value", REQ), ("attn_mask", None), ("dropout_p", 0.0), ("is_causal", False), ("enable_gqa", False)),
    "conv2d": (("weight", REQ), ("bias", None), ("groups", 1), ("stride", 1), ("dilation", 1), ("padding", 0), ("dtype", None)),
    "conv_transpose2d": (("weight", REQ), ("bias", None), ("groups", 1), ("stride", 1), ("dilation", 1), ("padding", 0), ("output_padding", 0)),
    "avg_pool2d": (("kernel_size", (2, 2)), ("stride", None), ("dilation", 1), ("padding", 0), ("ceil_mode", False), ("count_include_pad", True)),
    "max_pool2d": (("kernel_size", (2, 2)), ("stride", None), ("dilation", 1), ("padding", 0), ("ceil_mode", False), ("return_indices", False)),
    "arange": (("start", REQ), ("stop", None), ("step", 1), ("dtype", None)),
    "linspace": (("start", REQ), ("stop", REQ), ("steps", REQ), ("dtype", None)),
    "eye": (("n", REQ), ("m", None), ("dtype", None)),
    "full": (("shape", REQ), ("fill_value", REQ), ("dtype", None), ("device", None), ("buffer", True)),
    "dropout": (("p", 0.5),),
    "layernorm": (("axis", -1), ("eps", 1e-05)),
    "sparse_categorical_crossentropy": (("Y", REQ), ("ignore_index", -1), ("label_smoothing", 0.0), ("reduction", "mean")),
    "cross_entropy": (("Y", REQ), ("reduction", "mean"), ("label_smoothing", 0.0)),
    "nll_loss": (("Y", REQ), ("weight", None), ("ignore_index", None), ("reduction", "mean")),
    "binary_crossentropy": (("Y", REQ), ("reduction", "mean")),
    "gather": (("dim", REQ), ("index", REQ)),
    "scatter": (("dim", REQ), ("index", REQ), ("src", REQ), ("reduce", None)),
    "scatter_reduce": (("dim", REQ), ("index", REQ), ("src", REQ), ("reduce", REQ), ("include_self", True)),
    "masked_select": (("mask", REQ), ("size", None), ("fill_value", 0)),
    "nonzero": (("size", None), ("fill_value", 0)),
    "topk": (("k", REQ), ("dim", -1), ("largest", True), ("sorted_", True)),
    "sort": (("dim", -1), ("descending", False)),
    "clamp": (("min_", None), ("max_", None)),
    "matmul": (("x", REQ), ("reverse", False), ("dtype", None)),
    "dot": (("w", REQ), ("dtype", None)),
    "linear": (("weight", REQ), ("bias", None), ("dtype", None)),
    "gelu": (("approximate", "tanh"),),
    "leaky_relu": (("neg_slope", 0.01),),
    "softplus": (("beta", 1.0),),
    "elu": (("alpha", 1.0),),
    "hardtanh": (("min_val", -1), ("max_val", 1)),
    "normalize": (("p", 2.0), ("dim", 1), ("eps", 1e-12)),
    "isclose": (("other", REQ), ("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False)),
    "div": (("x", REQ), ("reverse", False), ("rounding_mode", None)),
    "lerp": (("end", REQ), ("weight", REQ)),
    "copysign": (("other", REQ),),
    "logaddexp": (("other", REQ),),
    "clone": (("device", None),),
    "qr": (),
    "svd": (("full_matrices", True),),
    "custom_kernel": ("*lst", ("fxn", REQ), ("grad_fxn", None)),
    "linear_with_vars": ("*lst",),
    "schedule_linear": ("*lst",),
}  # fmt: skip


def _params(name: str) -> list[inspect.Parameter]:
    sig = inspect.signature(getattr(Tensor, name))
    skip = (inspect.Parameter.VAR_KEYWORD,)
    return [
        p for p in sig.parameters.values() if p.name not in ("self", "cls") and p.kind not in skip
    ]


@pytest.mark.parametrize("name", sorted(TINYGRAD))
def test_signature_matches_tinygrad(name: str) -> None:
    """Every tinygrad parameter exists with its default, positional ones at the same place
    (extra fusegrad parameters may only follow them)."""
    ours = _params(name)
    for i, want in enumerate(TINYGRAD[name]):
        if isinstance(want, str):
            assert ours[i].kind is inspect.Parameter.VAR_POSITIONAL, f"{name}: {want} at {i}"
            continue
        pname, default = want
        assert i < len(ours), f"{name}: missing {pname}"
        got = ours[i]
        assert got.name == pname, f"{name}: parameter {i} is {got.name!r}, tinygrad's {pname!r}"
        assert got.default == default or (got.default is default), (
            f"{name}({pname}=...): default {got.default!r}, tinygrad's {default!r}"
        )


# -- behaviour fixed by the audit -------------------------------------------------------------------


def test_creation_takes_dtype_positionally_like_tinygrad() -> None:
    assert Tensor.arange(0, 4, 1, dtypes.float32).dtype is dtypes.float32
    assert Tensor.eye(2, 3, dtypes.int32).numpy().tolist() == [[1, 0, 0], [0, 1, 0]]
    full = Tensor.full((2,), 3, dtypes.float16)
    assert full.dtype is dtypes.float16 and full.tolist() == [3.0, 3.0]
    assert Tensor.full((2,), 1.0, buffer=False).tolist() == [1.0, 1.0]
    assert_close(Tensor.linspace(0, 1, 3, dtypes.float64), np.array([0.0, 0.5, 1.0]))


def test_rand_accepts_contiguous() -> None:
    assert Tensor.rand(3, contiguous=False).shape == (3,)


def test_renamed_parameters_take_keywords() -> None:
    x = np.array([1.0, -2.0, 3.0], np.float32)
    assert_close(Tensor(x).copysign(other=-1.0), np.copysign(x, -1.0))
    assert_close(Tensor(x).logaddexp(other=Tensor(x)), np.logaddexp(x, x))
    assert_close(
        Tensor(np.arange(5, dtype=np.float32)).unfold(dim=0, size=2, step=2),
        np.array([[0.0, 1.0], [2.0, 3.0]], np.float32),
    )


def test_pad_to_value() -> None:
    got = Tensor([[1, 2]]).pad_to(2, 3, value=7)
    assert got.tolist() == [[1, 2, 7], [7, 7, 7]]
    assert Tensor([[1, 2]]).pad_to(None, 3).tolist() == [[1, 2, 0]]


def test_clone_to_device_keeps_values_and_grad() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    y = x.clone(device=x.device)
    assert y.tolist() == [1.0, 2.0]
    assert y.grad is not None and y.grad.tolist() == [2.0, 4.0]
    assert y.uop is not x.uop


@pytest.mark.parametrize("size", [0, 2, 4, 9])
def test_nonzero_with_size_pads_or_cuts(size: int) -> None:
    m = np.array([[0, 3, 0], [5, 0, 0], [0, 2, 1]], np.int32)
    want = np.full((size, 2), -1, np.int32)
    coords = np.argwhere(m)[:size]
    want[: len(coords)] = coords
    got = Tensor(m).nonzero(size=size, fill_value=-1)
    assert got.dtype is dtypes.int32
    np.testing.assert_array_equal(got.numpy(), want)


def test_masked_select_with_size_is_lazy_and_exact() -> None:
    x = np.array([-0.0, np.nan, 2.0, -np.inf, 5.0], np.float32)
    m = np.array([True, True, False, True, False])
    got = Tensor(x).masked_select(Tensor(m), size=5, fill_value=9.0)
    assert not got.is_realized
    want = np.array([-0.0, np.nan, -np.inf, 9.0, 9.0], np.float32)
    np.testing.assert_array_equal(got.numpy(), want)
    assert np.signbit(got.numpy()[0])
    ints = Tensor([4, 5, 6]).masked_select(Tensor([False, True, True]), size=1)
    assert ints.tolist() == [5] and ints.dtype is dtypes.int32
    flags = Tensor([True, False, True]).masked_select(Tensor([False, True, True]), size=3)
    assert flags.tolist() == [False, True, False]


def test_masked_select_needs_a_bool_mask() -> None:
    with pytest.raises(RuntimeError, match="bool mask"):
        Tensor([1, 2]).masked_select(Tensor([1, 0]))


def test_cummax_cummin_return_values_and_last_index_like_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, 5.0], [2.0, np.nan, 1.0, np.nan, 0.0, 4.0]], np.float32)
    for ours, theirs in (
        (Tensor(x).cummax(1), torch.cummax(torch.from_numpy(x), 1)),
        (Tensor(x).cummin(1), torch.cummin(torch.from_numpy(x), 1)),
    ):
        assert_close(ours[0], theirs.values)
        assert_close(ours[1], theirs.indices.to(torch.int32))
    values, index = Tensor(2.0).cummax(0)
    assert values.item() == 2.0 and index.item() == 0


# -- schedule methods -------------------------------------------------------------------------------


def test_schedule_linear_is_the_kernel_schedule_and_leaves_tensors_lazy() -> None:
    a = Tensor([1.0, 2.0, 3.0])
    b = (a * 2).contiguous() + 1
    before = b.uop
    linear = b.schedule_linear()
    assert linear.op is Ops.LINEAR
    assert [c.op for c in linear.src] == [Ops.CALL, Ops.CALL]
    assert all(c.src[0].op is Ops.SINK for c in linear.src)  # two kernels, no copies
    assert b.uop is before
    assert b.tolist() == [3.0, 5.0, 7.0]


def test_schedule_linear_of_several_tensors_is_one_schedule() -> None:
    a = Tensor([1.0, 2.0])
    linear = (a + 1).schedule_linear(a * 3)
    assert len(linear.src) == 1  # one kernel writes both outputs


def test_linear_with_vars_reports_bound_variables() -> None:
    n = Variable("n", 1, 8).bind(3)
    x = Tensor.ones(8).contiguous().realize().shrink(((0, n),)) * 2
    linear, var_vals = x.linear_with_vars()
    assert var_vals == {"n": 3}
    assert len(linear.src) == 1
    with pytest.raises(RuntimeError, match="linear_with_vars"):
        x.schedule_linear()


def _twice_plus_one(out: UOp, inp: UOp) -> UOp:
    rng = UOp.range(4, 0)
    store = out.index(rng).store(inp.index(rng).load() * 2.0 + 1.0)
    return UOp.sink(store.end(rng), arg=KernelInfo("twice_plus_one"))


@pytest.mark.kernels
def test_custom_kernel_writes_its_first_buffer_in_place() -> None:
    out = Tensor.zeros(4).contiguous().realize()
    inp = Tensor([1.0, 2.0, 3.0, 4.0])
    after_out, after_inp = out.custom_kernel(inp, fxn=_twice_plus_one)
    assert after_out.tolist() == [3.0, 5.0, 7.0, 9.0]
    assert after_inp.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert out.tolist() == [3.0, 5.0, 7.0, 9.0]  # the buffer itself was written
    assert (after_out + 1).tolist() == [4.0, 6.0, 8.0, 10.0]


@pytest.mark.kernels
def test_custom_kernel_over_a_lazy_tensor() -> None:
    (result, _) = (Tensor.ones(4) * 5).custom_kernel(
        Tensor([0.0, 1.0, 2.0, 3.0]), fxn=_twice_plus_one
    )
    assert result.tolist() == [1.0, 3.0, 5.0, 7.0]


def test_custom_kernel_graph_form() -> None:
    a, b = Tensor.ones(4), Tensor.zeros(4)
    outs = a.custom_kernel(b, fxn=_twice_plus_one)
    assert [o.uop.op for o in outs] == [Ops.AFTER, Ops.AFTER]
    kernel = outs[0].uop.src[1]
    assert kernel.op is Ops.CUSTOM_KERNEL and kernel is outs[1].uop.src[1]
    assert kernel.src == (a.uop, b.uop) and kernel.arg is _twice_plus_one


def test_custom_kernel_rejects_grad_fxn_and_non_callables() -> None:
    with pytest.raises(NotImplementedError, match="grad_fxn"):
        Tensor.ones(2).custom_kernel(fxn=_twice_plus_one, grad_fxn=lambda *a: a)
    with pytest.raises(TypeError, match="callable"):
        Tensor.ones(2).custom_kernel(fxn=3)  # type: ignore[arg-type]
