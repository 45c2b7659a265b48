"""The op mixin shared by ``UOp`` and ``Tensor``: each op built both ways is the same UOp
(hash-consing makes that an identity test), and the UOp graph realizes to NumPy's values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.uop import UOp, dtypes

Op = Callable[[Any], Any]


def _pieces(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_both_ways(
    op: Op, ref: Callable[[np.ndarray[Any, Any]], Any], shape: tuple[int, ...]
) -> None:
    """``op`` on a Tensor and on its UOp gives the same UOp, and its values equal ``ref``'s."""
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 5.5
    t = Tensor(data).realize()
    via_tensor = _pieces(op(t))
    via_uop = _pieces(op(t.uop))
    assert len(via_tensor) == len(via_uop)
    for a, b in zip(via_tensor, via_uop, strict=True):
        assert isinstance(b, UOp)
        assert a.uop is b, f"graphs differ:\n{a.uop}\n!=\n{b}"
    for expected, b in zip(_pieces(ref(data)), via_uop, strict=True):
        np.testing.assert_array_equal(Tensor(b).numpy(), expected)


MOVEMENT: list[tuple[str, Op, Callable[[Any], Any]]] = [
    ("reshape", lambda x: x.reshape(4, -1), lambda a: a.reshape(4, -1)),
    ("view", lambda x: x.view((2, 2, 3)), lambda a: a.reshape(2, 2, 3)),
    ("permute", lambda x: x.permute(1, 0), lambda a: a.transpose(1, 0)),
    ("transpose", lambda x: x.transpose(), lambda a: a.T),
    ("T", lambda x: x.T, lambda a: a.T),
    (
        "expand",
        lambda x: x.reshape(1, 3, 4).expand(2, -1, -1),
        lambda a: np.broadcast_to(a, (2, 3, 4)),
    ),
    ("flip", lambda x: x.flip(0, 1), lambda a: a[::-1, ::-1]),
    ("shrink", lambda x: x.shrink(((1, 3), None)), lambda a: a[1:3]),
    ("pad", lambda x: x.pad((1, 2, 0, 1)), lambda a: np.pad(a, ((0, 1), (1, 2)))),
    (
        "pad_value",
        lambda x: x.pad(((1, 0), (0, 2)), value=7.0),
        lambda a: np.pad(a, ((1, 0), (0, 2)), constant_values=7.0),
    ),
    (
        "pad_reflect",
        lambda x: x.pad((2, 1), mode="reflect"),
        lambda a: np.pad(a, ((0, 0), (2, 1)), mode="reflect"),
    ),
    (
        "pad_replicate",
        lambda x: x.pad((1, 2), mode="replicate"),
        lambda a: np.pad(a, ((0, 0), (1, 2)), mode="edge"),
    ),
    (
        "pad_circular",
        lambda x: x.pad((2, 1), mode="circular"),
        lambda a: np.pad(a, ((0, 0), (2, 1)), mode="wrap"),
    ),
    ("pad_crop", lambda x: x.pad((-1, 1)), lambda a: np.pad(a[:, 1:], ((0, 0), (0, 1)))),
    ("squeeze", lambda x: x.reshape(1, 3, 1, 4).squeeze(), lambda a: a),
    ("unsqueeze", lambda x: x.unsqueeze(1), lambda a: a[:, None]),
    ("flatten", lambda x: x.flatten(), lambda a: a.reshape(-1)),
    ("unflatten", lambda x: x.unflatten(1, (2, 2)), lambda a: a.reshape(3, 2, 2)),
    ("pad_to", lambda x: x.pad_to(4, 6), lambda a: np.pad(a, ((0, 1), (0, 2)))),
    ("shrink_to", lambda x: x.shrink_to(2, 3), lambda a: a[:2, :3]),
    ("cat", lambda x: x.cat(x.flip(0), dim=1), lambda a: np.concatenate([a, a[::-1]], 1)),
    ("stack", lambda x: x.stack(x, dim=0), lambda a: np.stack([a, a])),
    ("split", lambda x: x.split([1, 3], dim=1), lambda a: (a[:, :1], a[:, 1:])),
    ("chunk", lambda x: x.chunk(2, dim=1), lambda a: (a[:, :2], a[:, 2:])),
    ("repeat", lambda x: x.repeat(2, 1), lambda a: np.tile(a, (2, 1))),
    ("repeat_interleave", lambda x: x.repeat_interleave(2, dim=0), lambda a: np.repeat(a, 2, 0)),
    ("roll", lambda x: x.roll(1, 1), lambda a: np.roll(a, 1, 1)),
    (
        "unfold",
        lambda x: x.unfold(1, 2, 1),
        lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, 1),
    ),
    ("diagonal0", lambda x: x.diagonal(), np.diagonal),
    ("diagonal", lambda x: x.diagonal(offset=1), lambda a: np.diagonal(a, 1)),
    ("diag", lambda x: x.shrink(((0, 3), (0, 3))).diag(), lambda a: np.diag(a[:3, :3])),
    (
        "diag_1d",
        lambda x: x.flatten().shrink(((0, 3),)).diag(1),
        lambda a: np.diag(a.reshape(-1)[:3], 1),
    ),
    ("triu", lambda x: x.triu(1), lambda a: np.triu(a, 1)),
    ("tril", lambda x: x.reshape(1, 3, 4).tril(-1), lambda a: np.tril(a, -1)[None]),
    (
        "rearrange",
        lambda x: x.rearrange("a (b c) -> b a c", c=2),
        lambda a: a.reshape(3, 2, 2).transpose(1, 0, 2),
    ),
]


@pytest.mark.parametrize(("name", "op", "ref"), MOVEMENT, ids=[m[0] for m in MOVEMENT])
def test_movement_is_the_same_graph_on_uop_and_tensor(
    name: str, op: Op, ref: Callable[[Any], Any]
) -> None:
    check_both_ways(op, ref, (3, 4))


def test_meshgrid_on_uops() -> None:
    a, b = Tensor([1.0, 2.0, 3.0]).realize(), Tensor([4.0, 5.0]).realize()
    grids_t = a.meshgrid(b, indexing="xy")
    grids_u = a.uop.meshgrid(b.uop, indexing="xy")
    assert all(x.uop is y for x, y in zip(grids_t, grids_u, strict=True))
    want = np.meshgrid([1.0, 2.0, 3.0], [4.0, 5.0], indexing="xy")
    for g, w in zip(grids_u, want, strict=True):
        np.testing.assert_array_equal(Tensor(g).numpy(), w)


def test_uop_movement_errors_are_pytorchs() -> None:
    x = Tensor.empty(3, 4).uop
    with pytest.raises(RuntimeError, match="invalid for input of size 12"):
        x.reshape(5, 5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.flip(2)
    assert x.reshape(12).reshape(3, 4) is x.reshape(12).reshape(3, 4)
    assert x.shape == (3, 4) and x.dtype is dtypes.float32


UNARY = [
    "neg",
    "reciprocal",
    "trunc",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "atanh",
    "asinh",
    "acosh",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "square",
    "abs",
    "sign",
    "floor",
    "ceil",
    "round",
    "erf",
    "isnan",
    "isinf",
    "isfinite",
    "logical_not",
    "relu",
    "relu6",
    "sigmoid",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "gelu",
    "quick_gelu",
    "swish",
    "silu",
    "elu",
    "celu",
    "selu",
    "softplus",
    "mish",
    "logsigmoid",
    "softsign",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary_is_the_same_graph_on_uop_and_tensor(name: str) -> None:
    t = Tensor(np.linspace(-0.9, 0.9, 12, dtype=np.float32).reshape(3, 4)).realize()
    via_tensor, via_uop = getattr(t, name)(), getattr(t.uop, name)()
    assert via_tensor.uop is via_uop
    np.testing.assert_allclose(Tensor(via_uop).numpy(), via_tensor.numpy(), equal_nan=True)


def _floats() -> tuple[Tensor, Tensor]:
    a = Tensor(np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)).realize()
    b = Tensor(np.linspace(0.5, 2, 4, dtype=np.float32)).realize()
    return a, b


BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda a, b: a.add(b)),
    ("sub_scalar", lambda a, b: a.sub(2)),
    ("mul_reverse", lambda a, b: a.mul(3, True)),
    ("div", lambda a, b: a.div(b)),
    ("mod", lambda a, b: a.mod(b)),
    ("fmod", lambda a, b: a.fmod(b)),
    ("pow", lambda a, b: a.pow(b)),
    ("pow2", lambda a, b: a.pow(2)),
    ("maximum", lambda a, b: a.maximum(b)),
    ("minimum", lambda a, b: a.minimum(0.5)),
    ("copysign", lambda a, b: a.copysign(b)),
    ("logaddexp", lambda a, b: a.logaddexp(b)),
    ("lerp", lambda a, b: a.lerp(b, 0.25)),
    ("lt", lambda a, b: a.lt(b)),
    ("ge", lambda a, b: a.ge(0)),
    ("le", lambda a, b: a.le(b)),
    ("eq", lambda a, b: a.eq(b)),
    ("where", lambda a, b: (a > 0).where(a, b)),
    ("masked_fill", lambda a, b: a.masked_fill(a < 0, 9.0)),
    ("clamp", lambda a, b: a.clamp(-1, 1)),
    ("isclose", lambda a, b: a.isclose(b)),
    ("operators", lambda a, b: (2 * a + 1) / (b - 5) - a**2),
    ("compare_ops", lambda a, b: ((a < b) & (a >= -1)) | (a > 2)),
    ("reflected", lambda a, b: 1 - a),
    ("negate", lambda a, b: -a),
]


@pytest.mark.parametrize(("name", "op"), BINARY, ids=[b[0] for b in BINARY])
def test_binary_is_the_same_graph_on_uop_and_tensor(
    name: str, op: Callable[[Any, Any], Any]
) -> None:
    a, b = _floats()
    via_tensor, via_uop = op(a, b), op(a.uop, b.uop)
    assert via_tensor.uop is via_uop, f"{via_tensor.uop}\n!=\n{via_uop}"
    np.testing.assert_array_equal(Tensor(via_uop).numpy(), via_tensor.numpy())


def test_int_ops_commit_weak_dtypes_as_a_tensor() -> None:
    t = Tensor(np.arange(12, dtype=np.int32).reshape(3, 4) - 6).realize()
    x = t.uop
    for op in (lambda v: v // 4, lambda v: v % 5, lambda v: v / 2, lambda v: ~v, lambda v: v << 1,
               lambda v: v.bitwise_and(6), lambda v: v * 2.5, lambda v: v.trunc()):  # fmt: skip
        assert op(t).uop is op(x)
    assert (x / 2).dtype is dtypes.float32 and (x * 2.5).dtype is dtypes.float32
    np.testing.assert_array_equal(Tensor(x // 4).numpy(), (t.numpy() // 4))


def test_symbolic_uops_keep_their_algebra() -> None:
    i = UOp.variable("i", 0, 9)
    assert (i + 1).src[1] is UOp.const(1) and (i + 1).dtype is dtypes.weakint  # no device: symbolic
    assert (i * 2.5).dtype is dtypes.weakfloat
    r = UOp.range(8, 0)
    assert (r < 4).src[1] is UOp.const(4)


REDUCE_AND_MORE: list[tuple[str, Op]] = [
    ("sum", lambda x: x.sum(1)),
    ("sum_keepdim", lambda x: x.sum(0, keepdim=True)),
    ("prod", lambda x: x.prod()),
    ("max", lambda x: x.max(1)),
    ("min", lambda x: x.min(0)),
    ("mean", lambda x: x.mean()),
    ("var", lambda x: x.var(1)),
    ("std", lambda x: x.std(0)),
    ("any", lambda x: (x > 0).any(1)),
    ("all", lambda x: (x > -6).all()),
    ("argmax", lambda x: x.argmax(1)),
    ("argmin", lambda x: x.argmin(0)),
    ("logsumexp", lambda x: x.logsumexp(1)),
    ("softmax", lambda x: x.softmax()),
    ("log_softmax", lambda x: x.log_softmax(0)),
    ("cumsum", lambda x: x.cumsum(1)),
    ("cumprod", lambda x: (x / 10).cumprod(0)),
    ("cummax", lambda x: x.cummax(1)),
    ("sort", lambda x: x.sort(1)),
    ("argsort", lambda x: x.argsort(0, descending=True)),
    ("topk", lambda x: x.topk(2, 1)),
    ("matmul", lambda x: x @ x.T),
    ("dot", lambda x: x.dot(x.T)),
    ("linear", lambda x: x.linear(x.T)),
    ("einsum", lambda x: x.einsum("ij,kj->ik", x)),
    ("eye", lambda x: type(x).eye(3, 4, device="CPU") * x),
]


@pytest.mark.parametrize(("name", "op"), REDUCE_AND_MORE, ids=[r[0] for r in REDUCE_AND_MORE])
def test_reduce_sort_linear_are_the_same_graph_on_uop_and_tensor(name: str, op: Op) -> None:
    t = Tensor(np.linspace(-5, 5, 12, dtype=np.float32).reshape(3, 4) ** 2 - 7).realize()
    via_tensor, via_uop = _pieces(op(t)), _pieces(op(t.uop))
    for a, b in zip(via_tensor, via_uop, strict=True):
        assert a.uop is b, f"{a.uop}\n!=\n{b}"
    # (realizing one output replaces its graph in the others: compare graphs first)
    for a, b in zip(via_tensor, via_uop, strict=True):
        np.testing.assert_allclose(Tensor(b).numpy(), a.numpy(), rtol=1e-5, atol=1e-5)


def test_uop_arange_is_tensor_arange() -> None:
    assert UOp.arange(5, device="CPU") is Tensor.arange(5, device="CPU").uop
    assert UOp.arange(1, 10, 3, device="CPU") is Tensor.arange(1, 10, 3, device="CPU").uop
    assert UOp.arange(0.5, 2.5, 0.5) is Tensor.arange(0.5, 2.5, 0.5).uop  # the default device
    np.testing.assert_array_equal(Tensor(UOp.arange(2, 9, 2)).numpy(), np.arange(2, 9, 2))


def _image(x: Any) -> Any:
    return x.reshape(1, 1, 3, 4)


def _kernel(x: Any) -> Any:
    return x.reshape(1, 1, 3, 4).shrink(((0, 1), (0, 1), (0, 2), (0, 2)))


NN: list[tuple[str, Op]] = [
    ("conv2d", lambda x: _image(x).conv2d(_kernel(x), padding=1)),
    ("conv_transpose2d", lambda x: _image(x).conv_transpose2d(_kernel(x), stride=2)),
    ("avg_pool2d", lambda x: x.reshape(1, 1, 3, 4).avg_pool2d((2, 2), stride=1)),
    ("max_pool2d", lambda x: x.reshape(1, 1, 3, 4).max_pool2d((2, 2), stride=1, padding=1)),
    ("layernorm", lambda x: x.layernorm()),
    (
        "batchnorm",
        lambda x: x.reshape(1, 3, 4).batchnorm(None, None, x.mean(1), x.std(1).reciprocal()),
    ),
    (
        "sdpa",
        lambda x: x.reshape(1, 3, 4).scaled_dot_product_attention(
            x.reshape(1, 3, 4), x.reshape(1, 3, 4), is_causal=True
        ),
    ),
    ("binary_crossentropy", lambda x: x.sigmoid().binary_crossentropy((x > 0).float())),
    ("binary_crossentropy_logits", lambda x: x.binary_crossentropy_logits((x > 0).float())),
]


@pytest.mark.parametrize(("name", "op"), NN, ids=[n[0] for n in NN])
def test_nn_functional_is_the_same_graph_on_uop_and_tensor(name: str, op: Op) -> None:
    t = Tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)).realize()
    via_tensor, via_uop = op(t), op(t.uop)
    assert via_tensor.uop is via_uop
    np.testing.assert_allclose(Tensor(via_uop).numpy(), via_tensor.numpy(), rtol=1e-5, atol=1e-6)


def test_uop_full_ones_zeros_are_tensors_nodes() -> None:
    assert UOp.ones(2, 3, device="CPU") is Tensor.ones(2, 3, device="CPU").uop
    assert UOp.zeros((4,)) is Tensor.zeros(4).uop
    assert UOp.full((2,), True, device="CPU") is Tensor.full((2,), True, device="CPU").uop
