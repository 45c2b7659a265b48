"""Shapes of tensor-level UOps: movement ops, broadcasting, and the errors for bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.uop import Ops, UOp, broadcast_shapes, dtypes


def buffer(*shape: int) -> UOp:
    size = int(np.prod(shape))
    buf = UOp.new_buffer("CPU", size, dtypes.float32, num=1000 + size)
    return buf.reshape(shape)


@pytest.mark.parametrize(
    ("build", "shape", "numpy_shape"),
    [
        (lambda t: t.reshape(6, 4), (6, 4), lambda a: a.reshape(6, 4)),
        (lambda t: t.reshape((24,)), (24,), lambda a: a.reshape(24)),
        (lambda t: t.permute(2, 0, 1), (4, 2, 3), lambda a: a.transpose(2, 0, 1)),
        (lambda t: t.reshape(2, 3, 1, 4).expand(2, 3, 5, 4), (2, 3, 5, 4), None),
        (
            lambda t: t.pad(((1, 0), (0, 2), (3, 3))),
            (3, 5, 10),
            lambda a: np.pad(a, ((1, 0), (0, 2), (3, 3))),
        ),
        (lambda t: t.shrink(((0, 1), (1, 3), (0, 4))), (1, 2, 4), lambda a: a[0:1, 1:3, 0:4]),
        (lambda t: t.flip(0, 2), (2, 3, 4), lambda a: a[::-1, :, ::-1]),
        (lambda t: t.r(Ops.ADD, (1,)), (2, 1, 4), lambda a: a.sum(1, keepdims=True)),
        (lambda t: t.cast(dtypes.int8), (2, 3, 4), None),
        (lambda t: t.bitcast(dtypes.float16), (2, 3, 8), None),
        (lambda t: UOp(Ops.CONTIGUOUS, t.dtype, (t,)), (2, 3, 4), None),
    ],
)
def test_movement_shapes_match_numpy(build, shape, numpy_shape) -> None:  # type: ignore[no-untyped-def]
    t = buffer(2, 3, 4)
    out = build(t)
    assert out.shape == shape
    assert out.ndim == len(shape) and out.size == int(np.prod(shape))
    if numpy_shape is not None:
        assert numpy_shape(np.zeros((2, 3, 4))).shape == shape


def test_movement_that_changes_nothing_returns_the_node() -> None:
    t = buffer(2, 3, 4)
    assert t.reshape(2, 3, 4) is t
    assert t.permute(0, 1, 2) is t
    assert t.expand(2, 3, 4) is t
    assert t.pad(((0, 0),) * 3) is t
    assert t.shrink(((0, 2), (0, 3), (0, 4))) is t
    assert t.flip(()) is t
    assert t.r(Ops.ADD, (0,)).r(Ops.ADD, (0,)) is t.r(Ops.ADD, (0,))  # size-1 axes don't reduce


R, P, E, PD, S, F = Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda t: t._mop(R, (5, 5)),
            r"reshape: can't reshape \(2, 3, 4\) \(24 elements\) to \(5, 5\) \(25 elements\)",
        ),
        (lambda t: t._mop(R, (-1, 24)), r"reshape: negative size in \(-1, 24\)"),
        (lambda t: t._mop(P, (0, 1)), r"permute: \(0, 1\) is not a permutation of the 3 axes"),
        (lambda t: t._mop(P, (0, 0, 1)), r"permute: \(0, 0, 1\) is not a permutation"),
        (lambda t: t._mop(E, (2, 3)), r"expand: \(2, 3, 4\) and \(2, 3\) differ in length"),
        (lambda t: t._mop(E, (4, 3, 4)), r"expand: can't expand \(2, 3, 4\) to \(4, 3, 4\)"),
        (lambda t: t._mop(PD, ((1, 1),)), r"pad: 1 pairs for 3 axes"),
        (lambda t: t._mop(PD, ((0, -1), (0, 0), (0, 0))), r"pad: negative padding"),
        (
            lambda t: t._mop(S, ((0, 3), (0, 3), (0, 4))),
            r"shrink: window .* doesn't fit in \(2, 3, 4\)",
        ),
        (lambda t: t._mop(S, ((1, 0), (0, 3), (0, 4))), r"shrink: window"),
        (lambda t: t._mop(F, (True,)), r"flip: 1 flags for 3 axes"),
        (lambda t: UOp.range(4, 0).reshape(1), r"Ops.RANGE has no shape"),
    ],
)
def test_bad_movement_node_raises_a_clear_value_error(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build(buffer(2, 3, 4))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda t: t.reshape(5, 5), r"shape '\[5, 5\]' is invalid for input of size 24"),
        (lambda t: t.reshape(-1, -1), "only one dimension can be inferred"),
        (lambda t: t.permute(0, 1), "number of dims don't match"),
        (lambda t: t.expand(4, 3, 4), r"expanded size of the tensor \(4\) must match"),
        (lambda t: t.shrink(((0, 3), (0, 3), (0, 4))), "doesn't fit"),
        (lambda t: t.pad((1, 1), mode="bogus"), "unsupported mode"),
        (lambda t: t.flip(3), "Dimension out of range"),
    ],
)
def test_bad_movement_method_raises_like_pytorch(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((RuntimeError, IndexError, NotImplementedError), match=message):
        build(buffer(2, 3, 4))


@pytest.mark.parametrize(
    "shapes",
    [((2, 3), (3,)), ((4, 1, 5), (3, 1)), ((1,), ()), ((2, 1), (1, 7), (2, 7)), ((0, 3), (1, 3))],
)
def test_broadcast_shapes_matches_numpy(shapes: tuple[tuple[int, ...], ...]) -> None:
    assert broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_names_the_shapes_that_dont_fit() -> None:
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) don't broadcast"):
        broadcast_shapes((2, 3), (4,))
    assert broadcast_shapes() == ()


def test_elementwise_ops_broadcast_their_sources() -> None:
    a, b = buffer(2, 1, 4), buffer(3, 1)
    assert (a + b).shape == (2, 3, 4)
    assert (a * 2.0).shape == (2, 1, 4)
    assert (a * 2.0).src[1] is UOp.const(2.0, dtypes.float32, "CPU", (2, 1, 4))  # as a Tensor's
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match .* \(4\)"):
        _ = buffer(2, 3) + buffer(4)
    # nodes built directly broadcast by shape inference, which names the shapes
    with pytest.raises(ValueError, match="don't broadcast"):
        _ = UOp(Ops.ADD, dtypes.float32, (buffer(2, 3), buffer(4))).shape


def test_symbolic_shapes() -> None:
    n = UOp.variable("n", 1, 10)
    t = buffer(1, 4).expand(n, 4)
    assert t.shape == (n, 4)
    # regression: a shrink from 0 or a pad by 0 made the size n-0 or n+0, a different node
    assert t.shrink(((0, n), (1, 3))).shape == (n, 2)
    assert t.pad(((0, 0), (1, 1))).shape == (n, 6)
    assert t.pad(((2, 0), (0, 0))).shape[0] is n + 2
    assert (t + t).shape == (n, 4)
    assert broadcast_shapes((n, 1), (1, 4)) == (n, 4)
    m = UOp.variable("m", 1, 10)
    with pytest.raises(ValueError, match="don't broadcast"):
        broadcast_shapes((n,), (m,))


def test_kernel_level_nodes_have_no_shape() -> None:
    r = UOp.range(4, 0)
    assert r.st_shape is None
    with pytest.raises(ValueError, match=r"Ops\.RANGE has no shape"):
        _ = r.shape
    assert UOp.variable("s", 0, 3).shape == ()  # a Variable is a 0-d buffer
