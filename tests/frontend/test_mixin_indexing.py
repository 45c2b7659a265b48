"""Indexing, gather/scatter, one_hot, masked_select/nonzero, interpolate and random numbers
from the op mixin shared by ``UOp`` and ``Tensor``: each op built both ways is the same UOp
(hash-consing makes that an identity test) and realizes to NumPy's (or PyTorch's) values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.uop import UOp, dtypes
from fusegrad.uop.flags import Context

Op = Callable[[Any, Any], Any]

DATA = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
IDX = np.array([[0, 2], [1, 0]], dtype=np.int32)


def _both(op: Op) -> tuple[Any, Any]:
    """``op(x, idx)`` on Tensors and on their UOps; the graphs must be one node."""
    t, i = Tensor(DATA).realize(), Tensor(IDX).realize()
    via_tensor, via_uop = op(t, i), op(t.uop, i.uop)
    outs_t = list(via_tensor) if isinstance(via_tensor, tuple) else [via_tensor]
    outs_u = list(via_uop) if isinstance(via_uop, tuple) else [via_uop]
    for a, b in zip(outs_t, outs_u, strict=True):
        assert isinstance(b, UOp)
        assert a.uop is b, f"graphs differ:\n{a.uop}\n!=\n{b}"
    return via_tensor, via_uop


GETITEM: list[tuple[str, Op, Callable[[Any, Any], Any]]] = [
    ("int", lambda x, i: x[1], lambda a, i: a[1]),
    ("neg_int", lambda x, i: x[-1, -2], lambda a, i: a[-1, -2]),
    ("slices", lambda x, i: x[:, 1:, ::2], lambda a, i: a[:, 1:, ::2]),
    ("neg_step", lambda x, i: x[::-1, ::-2, 1:3], lambda a, i: a[::-1, ::-2, 1:3]),
    ("none_ellipsis", lambda x, i: x[None, ..., 0, None], lambda a, i: a[None, ..., 0, None]),
    ("bool_true", lambda x, i: x[True, :, 1:], lambda a, i: a[True, :, 1:]),
    ("bool_false", lambda x, i: x[..., False], lambda a, i: a[..., False]),
    ("adv_one", lambda x, i: x[:, i], lambda a, i: a[:, i]),
    ("adv_two_adjacent", lambda x, i: x[0, i, i], lambda a, i: a[0, i, i]),
    ("adv_separated", lambda x, i: x[i % 2, :, i], lambda a, i: a[i % 2, :, i]),
    ("adv_with_int", lambda x, i: x[1, :, i], lambda a, i: a[1, :, i]),
    ("adv_neg", lambda x, i: x[:, -1 - i], lambda a, i: a[:, -1 - i]),
    ("adv_ellipsis", lambda x, i: x[..., i], lambda a, i: a[..., i]),
]


@pytest.mark.parametrize(("name", "op", "ref"), GETITEM, ids=[g[0] for g in GETITEM])
def test_getitem_is_the_same_graph_on_uop_and_tensor(name: str, op: Op, ref: Op) -> None:
    _, u = _both(op)
    np.testing.assert_array_equal(Tensor(u).numpy(), ref(DATA, IDX))


def test_uop_getitem_with_lists_and_bool_lists() -> None:
    x = Tensor(DATA).realize().uop
    np.testing.assert_array_equal(Tensor(x[[1, 0], 2]).numpy(), DATA[[1, 0], 2])
    np.testing.assert_array_equal(Tensor(x[:, [[2], [0]]]).numpy(), DATA[:, [[2], [0]]])
    mask = [[True, False, True], [False, False, True]]
    np.testing.assert_array_equal(Tensor(x[mask]).numpy(), DATA[np.array(mask)])
    np.testing.assert_array_equal(Tensor(x[0, [True, False, True]]).numpy(), DATA[0, [0, 2]])
    assert x[[]].shape == (0, 3, 4)


def test_uop_getitem_errors() -> None:
    x = Tensor(DATA).realize().uop
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="float"):
        x[[0.5]]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="shape of the mask"):
        x[[True, False, True]]
    bool_index = Tensor(np.array([True, False])).realize().uop
    with pytest.raises(ValueError, match="size="):
        x[bool_index]  # the count of Trues is data: a graph can't shape the result


def test_uop_iteration() -> None:
    x = Tensor(DATA).realize().uop
    rows = list(x)
    assert len(rows) == 2 and rows[1] is x[1]
    with pytest.raises(TypeError, match="0-d"):
        iter(x[0, 0, 0])
    with pytest.raises(TypeError, match="0-d"):
        list(UOp.variable("n", 0, 4))


def test_flip_of_a_repeated_dim_raises_like_pytorch() -> None:
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        Tensor.ones(2, 3).flip(0, -2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        Tensor.ones(2, 3).uop.flip((1, 1))


torch = pytest.importorskip("torch")


def _tt(a: np.ndarray[Any, Any]) -> Any:
    return torch.tensor(a)


def _scatter_reduce_case(mode: str, incl: bool) -> tuple[str, Op, Callable[[Any, Any], Any]]:
    def op(x: Any, i: Any) -> Any:
        return x[0].scatter_reduce(1, i, x[1, :2, :2], mode, include_self=incl)

    def ref(a: Any, i: Any) -> Any:
        src = _tt(a[1, :2, :2])
        return _tt(a[0]).scatter_reduce(1, _tt(i).long(), src, mode, include_self=incl)

    return f"scatter_reduce_{mode}_{incl}", op, ref


GATHER: list[tuple[str, Op, Callable[[Any, Any], Any]]] = [
    (
        "gather",
        lambda x, i: x[0].gather(1, i),
        lambda a, i: torch.gather(_tt(a[0]), 1, _tt(i).long()),
    ),
    (
        "gather_dim0",
        lambda x, i: x[1].gather(0, i),
        lambda a, i: torch.gather(_tt(a[1]), 0, _tt(i).long()),
    ),
    (
        "scatter",
        lambda x, i: x[0].scatter(1, i, -1.0),
        lambda a, i: _tt(a[0]).scatter(1, _tt(i).long(), -1.0),
    ),
    (
        "scatter_src",
        lambda x, i: x[0].scatter(1, i, x[1, :2, :2]),
        lambda a, i: _tt(a[0]).scatter(1, _tt(i).long(), _tt(a[1, :2, :2])),
    ),
    (
        "scatter_add",
        lambda x, i: x[0].scatter(0, i, x[1, :2, :2], reduce="add"),
        lambda a, i: _tt(a[0]).scatter_add(0, _tt(i).long(), _tt(a[1, :2, :2])),
    ),
    *[
        _scatter_reduce_case(mode, incl)
        for mode in ("sum", "prod", "mean", "amax", "amin")
        for incl in (True, False)
    ],
    (
        "one_hot",
        lambda x, i: i.one_hot(4),
        lambda a, i: torch.nn.functional.one_hot(_tt(i).long(), 4),
    ),
    (
        "masked_select_size",
        lambda x, i: x.masked_select(x > 0, size=20, fill_value=-1.0),
        lambda a, i: torch.cat([_tt(a)[_tt(a) > 0], torch.full((4,), -1.0)]),
    ),
    (
        "nonzero_size",
        lambda x, i: (x[0] > 0).nonzero(size=6),
        lambda a, i: torch.cat([torch.nonzero(_tt(a[0]) > 0), torch.zeros(2, 2)]),
    ),
]


@pytest.mark.parametrize(("name", "op", "ref"), GATHER, ids=[g[0] for g in GATHER])
def test_gather_scatter_are_the_same_graph_on_uop_and_tensor(
    name: str, op: Op, ref: Callable[[Any, Any], Any]
) -> None:
    _, u = _both(op)
    np.testing.assert_allclose(Tensor(u).numpy(), ref(DATA, IDX).numpy(), rtol=1e-6)


def test_data_dependent_shapes_need_size_on_a_uop() -> None:
    t = Tensor(DATA).realize()
    with pytest.raises(ValueError, match="size="):
        t.uop.nonzero()
    with pytest.raises(ValueError, match="size="):
        t.uop.masked_select((t > 0).uop)
    with pytest.raises(ValueError, match="needs the value"):
        Tensor(IDX).realize().uop.one_hot()
    # the Tensor reads its data for them
    np.testing.assert_array_equal(t.nonzero().numpy(), np.argwhere(DATA))
    np.testing.assert_array_equal(t.masked_select(t > 0).numpy(), DATA[DATA > 0])
    assert Tensor(IDX).one_hot().shape == (2, 2, 3)


@pytest.mark.parametrize(
    ("mode", "align"),
    [("linear", False), ("linear", True), ("nearest", False), ("nearest-exact", False)],
)
@pytest.mark.parametrize("size", [(5, 7), (1, 2), (3, 9)])
def test_interpolate_is_the_same_graph_on_uop_and_tensor(
    mode: str, align: bool, size: tuple[int, int]
) -> None:
    _, u = _both(lambda x, i: x.interpolate(size, mode=mode, align_corners=align))
    tmode = {"linear": "bilinear"}.get(mode, mode)
    kwargs = {"align_corners": align} if mode == "linear" else {}
    want = torch.nn.functional.interpolate(_tt(DATA)[None], size=size, mode=tmode, **kwargs)[0]
    np.testing.assert_allclose(Tensor(u).numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_interpolate_errors() -> None:
    x = Tensor(DATA).realize().uop
    with pytest.raises(ValueError, match="unsupported mode"):
        x.interpolate((2, 2), mode="cubic")
    with pytest.raises(ValueError, match="align_corners"):
        x.interpolate((2, 2), mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="non-negative ints"):
        x.interpolate((2, -1))


LINALG_LOSS: list[tuple[str, Op]] = [
    ("qr", lambda x, i: x[0, :, :3].qr()),
    ("svd", lambda x, i: x[0, :, :3].svd(full_matrices=False)),
    ("cross_entropy", lambda x, i: x[0].cross_entropy(i[0].pad(((0, 1),)).cast(dtypes.int32))),
    (
        "sparse_categorical_crossentropy",
        lambda x, i: x[0].sparse_categorical_crossentropy(i[:, 1].pad(((0, 1),))),
    ),
    ("nll_loss", lambda x, i: x[0].log_softmax().nll_loss(i[1].pad(((1, 0),)))),
]


@pytest.mark.parametrize(("name", "op"), LINALG_LOSS, ids=[n[0] for n in LINALG_LOSS])
def test_linalg_and_losses_work_on_uops(name: str, op: Op) -> None:
    t_out, u_out = _both(op)
    ts = list(t_out) if isinstance(t_out, tuple) else [t_out]
    us = list(u_out) if isinstance(u_out, tuple) else [u_out]
    for a, b in zip(ts, us, strict=True):
        np.testing.assert_allclose(Tensor(b).numpy(), a.numpy(), rtol=1e-5, atol=1e-5)


RANDOM: list[tuple[str, Callable[[Any], Any]]] = [
    ("rand", lambda cls: cls.rand(3, 4, device="CPU")),
    ("rand_half", lambda cls: cls.rand((5,), device="CPU", dtype=dtypes.float16)),
    ("randn", lambda cls: cls.randn(2, 3, device="CPU")),
    ("randint", lambda cls: cls.randint(4, 5, low=-3, high=9, device="CPU")),
    ("normal", lambda cls: cls.normal(6, mean=2.0, std=0.5, device="CPU")),
    ("uniform", lambda cls: cls.uniform(2, 2, low=-1.0, high=3.0, device="CPU")),
    ("scaled_uniform", lambda cls: cls.scaled_uniform(3, 4, device="CPU")),
    ("glorot_uniform", lambda cls: cls.glorot_uniform(3, 4, device="CPU")),
    ("kaiming_uniform", lambda cls: cls.kaiming_uniform(3, 4, device="CPU")),
    ("kaiming_normal", lambda cls: cls.kaiming_normal(3, 4, device="CPU")),
    ("randperm", lambda cls: cls.randperm(7, device="CPU")),
    ("rand_like", lambda cls: cls.zeros(2, 5, device="CPU").rand_like()),
    ("randn_like", lambda cls: cls.zeros(2, 5, device="CPU").randn_like()),
    (
        "multinomial",
        lambda cls: cls.arange(1, 5, device="CPU").float().multinomial(6, replacement=True),
    ),
    ("multinomial_no_repl", lambda cls: cls.ones(2, 5, device="CPU").multinomial(3)),
    ("threefry", lambda cls: cls.arange(6, device="CPU").threefry(cls.full((), 7, device="CPU"))),
    (
        "random_bits",
        lambda cls: cls.random_bits(
            cls.full((), 99, device="CPU"), cls.full((), 10, device="CPU"), 5
        ),
    ),
]


@pytest.mark.parametrize(("name", "make"), RANDOM, ids=[r[0] for r in RANDOM])
def test_random_is_the_same_graph_on_uop_and_tensor(name: str, make: Callable[[Any], Any]) -> None:
    Tensor.manual_seed(1234)
    UOp.manual_seed(1234)
    t, u = make(Tensor), make(UOp)
    assert t.uop is u
    got = Tensor(u).numpy()
    np.testing.assert_array_equal(got, t.numpy())
    again_t, again_u = make(Tensor), make(UOp)
    assert again_t.uop is again_u
    if name not in ("threefry", "random_bits"):  # a draw: the next one has a new key
        assert again_u is not u


def test_random_values_and_generators() -> None:
    UOp.manual_seed(5)
    r = Tensor(UOp.rand(1000, device="CPU")).numpy()
    assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.05
    perm = Tensor(UOp.randperm(9, device="CPU")).numpy()
    assert sorted(perm.tolist()) == list(range(9))
    ints = Tensor(UOp.randint(500, low=2, high=5, device="CPU")).numpy()
    assert set(ints.tolist()) == {2, 3, 4}
    # the two classes keep their own generator: seeding UOp leaves Tensor's draws alone
    Tensor.manual_seed(3)
    first = Tensor.rand(4).numpy()
    Tensor.manual_seed(3)
    UOp.manual_seed(77)
    UOp.rand(4, device="CPU")
    np.testing.assert_array_equal(Tensor.rand(4).numpy(), first)


def test_random_errors_on_uops() -> None:
    with pytest.raises(RuntimeError, match="not a supported float dtype"):
        UOp.rand(3, device="CPU", dtype=dtypes.int32)
    with pytest.raises(TypeError, match="low and high must be ints"):
        UOp.randint(3, low=0.5, device="CPU")
    with pytest.raises(TypeError, match="requires_grad"):
        UOp.rand(3, device="CPU", requires_grad=True)
    with pytest.raises(TypeError, match="0-d"):
        UOp.random_bits(UOp.zeros(2, device="CPU"), UOp.zeros((), device="CPU"), 3)
    with pytest.raises(ValueError, match="dropout probability"):
        UOp.zeros(3, device="CPU").dropout(1.5)


def test_dropout_on_uops_follows_training() -> None:
    x = UOp.ones(200, device="CPU")
    assert x.dropout(0.5) is x  # not training: the identity
    with Context(TRAINING=1):
        UOp.manual_seed(2)
        Tensor.manual_seed(2)
        d = x.dropout(0.5)
        assert Tensor.ones(200, device="CPU").dropout(0.5).uop is d
    vals = Tensor(d).numpy()
    assert set(np.unique(vals).tolist()) == {0.0, 2.0}
