"""Hypothesis properties of the Tensor's semantics against independent references:

* broadcasting + dtype promotion of binary ops over random shapes, dtypes and weak Python
  scalars, against the rules API.md states (PyTorch's, with Python ints -> the default int),
  cross-checked with ``torch.promote_types`` where PyTorch has the pair;
* random index expressions (ints, slices with any step, None, Ellipsis, bool masks, int
  lists/tensors, on random shapes) against NumPy, for getitem and setitem.

Example counts are small: every example realizes a graph on the reference interpreter.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from fusegrad.uop import DType
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- the promotion reference ----------------------------------------------------------------------

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
NAMES = ["bool", *INTS, *FLOATS]


def _category(name: str) -> int:
    return 0 if name == "bool" else (1 if name in INTS else 2)


def expected_promotion(a: str, b: str) -> str:
    """Tensor-tensor promotion: the higher category wins (bool < int < float) whatever the
    sizes; two ints follow NumPy (the smallest int holding both; int64 with uint64 has none:
    the default float); two floats the wider, float16 with bfloat16 -> float32."""
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 0 or a == b:
        return a
    if ca == 1:
        both = np.promote_types(np.dtype(a), np.dtype(b))
        return "float32" if both.kind == "f" else both.name
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return max(a, b, key=lambda n: (dtypes_by_name(n).itemsize, n != "bfloat16"))


def expected_with_scalar(a: str, scalar: Any) -> str:
    """Python scalars are weak: they never widen a tensor of their category or above; a
    Python int makes a bool tensor the default int, a Python float makes a bool/int tensor
    the default float."""
    kind = 0 if isinstance(scalar, bool) else (1 if isinstance(scalar, int) else 2)
    if kind <= _category(a):
        return a
    return dtypes.default_int.name if kind == 1 else dtypes.default_float.name


def dtypes_by_name(name: str) -> DType:
    dt: DType = getattr(dtypes, name)
    return dt


def test_reference_rules_agree_with_torch_where_torch_has_the_pair() -> None:
    torch = pytest.importorskip("torch")
    checked = 0
    for a in NAMES:
        for b in NAMES:
            try:
                want = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
            except (RuntimeError, TypeError):
                continue  # PyTorch has no promotion for some unsigned pairs
            assert want == f"torch.{expected_promotion(a, b)}", (a, b)
            checked += 1
    assert checked > 100


# -- broadcasting + promotion property ------------------------------------------------------------


@st.composite
def broadcast_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: a common shape, each operand dropping leading dims and
    turning some dims into 1."""
    full = draw(st.lists(st.integers(0, 3), min_size=0, max_size=4))
    out = []
    for _ in range(2):
        keep = draw(st.integers(0, len(full)))
        dims = full[len(full) - keep :]
        out.append(tuple(1 if draw(st.booleans()) else d for d in dims))
    return out[0], out[1]


def values(shape: tuple[int, ...], name: str, seed: int) -> np.ndarray:
    """Small integer values: exact in every dtype, so results compare exactly."""
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    low = 0 if name.startswith("uint") else -4
    return rng.integers(low, 5, shape)


def make(arr: np.ndarray, name: str) -> Tensor:
    return Tensor(arr, dtype=dtypes_by_name(name))


def np_result(a: np.ndarray, b: np.ndarray, op: Any, name: str) -> np.ndarray:
    """``op`` in float64 (all our values are small ints, exact), for comparing with the
    result of dtype ``name``."""
    return np.asarray(op(a.astype(np.float64), b.astype(np.float64)))


ARITH = [operator.add, operator.mul, operator.sub, Tensor.maximum]
COMPARE = [operator.lt, operator.eq, operator.ge]


def _np_op(op: Any) -> Any:
    return np.maximum if op is Tensor.maximum else op


@SETTINGS
@given(
    broadcast_shapes(),
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
    st.sampled_from(ARITH + COMPARE),
    st.integers(0, 2**16),
)
def test_binary_op_broadcasts_and_promotes(shapes, a_name, b_name, op, seed) -> None:  # type: ignore[no-untyped-def]
    sa, sb = shapes
    a, b = values(sa, a_name, seed), values(sb, b_name, seed + 1)
    want_dtype = "bool" if op in COMPARE else expected_promotion(a_name, b_name)
    if op is operator.sub and expected_promotion(a_name, b_name) == "bool":
        with pytest.raises(RuntimeError, match="Subtraction"):
            op(make(a, a_name), make(b, b_name))
        return
    got = op(make(a, a_name), make(b, b_name))
    assert got.dtype.name == want_dtype, (a_name, b_name, op)
    assert got.shape == np.broadcast_shapes(sa, sb)
    want = np_result(a, b, _np_op(op), want_dtype)
    if want_dtype == "bool":
        want = want.astype(np.bool_) if op not in COMPARE else want
    elif want_dtype.startswith("uint"):
        want = np.mod(want, 2.0 ** (8 * dtypes_by_name(want_dtype).itemsize))  # wraps like C
    np.testing.assert_array_equal(got.numpy().astype(np.float64), want.astype(np.float64))


@SETTINGS
@given(
    st.lists(st.integers(0, 3), max_size=3).map(tuple),
    st.sampled_from(NAMES),
    st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0])),
    st.sampled_from([operator.add, operator.mul, operator.truediv, operator.lt]),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_weak_python_scalar_promotion(shape, name, scalar, op, reflected, seed) -> None:  # type: ignore[no-untyped-def]
    x = values(shape, name, seed)
    if name.startswith("uint") and isinstance(scalar, int) and not isinstance(scalar, bool):
        scalar = abs(scalar)
    t = make(x, name)
    got = op(scalar, t) if reflected else op(t, scalar)
    want_dtype = expected_with_scalar(name, scalar)
    if op is operator.lt:
        want_dtype = "bool"
    elif op is operator.truediv and _category(want_dtype) < 2:
        want_dtype = dtypes.default_float.name  # true division of ints gives the default float
    assert got.dtype.name == want_dtype, (name, scalar, op)
    assert got.shape == shape
    a, b = (np.float64(scalar), x.astype(np.float64)) if reflected else (x, np.float64(scalar))
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.asarray(op(np.asarray(a, np.float64), np.asarray(b, np.float64)))
    if want_dtype in INTS:
        want = want.astype(np.int64).astype(np.dtype(want_dtype))  # wraps like C
    elif want_dtype == "bool" and op is not operator.lt:
        want = want != 0
    got_np = got.numpy().astype(np.float64)
    np.testing.assert_allclose(got_np, want.astype(np.float64), rtol=1e-2, atol=1e-2)


@SETTINGS
@given(
    st.lists(st.integers(2, 4), min_size=1, max_size=3),
    st.lists(st.integers(2, 4), min_size=1, max_size=3),
)
def test_shapes_that_do_not_broadcast_raise(a, b) -> None:  # type: ignore[no-untyped-def]
    try:
        np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        with pytest.raises(RuntimeError, match="must match the size"):
            Tensor.zeros(*a) + Tensor.zeros(*b)
        return
    assert (Tensor.zeros(*a) + Tensor.zeros(*b)).shape == np.broadcast_shapes(tuple(a), tuple(b))


# -- random index expressions vs NumPy ------------------------------------------------------------


@st.composite
def index_case(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """A shape and an index expression over it: per dim an int, a slice (any step), an int
    list, an int tensor or a bool mask; Nones anywhere; at most one Ellipsis standing for a
    run of dims."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    items: list[Any] = []
    dims = list(shape)
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, len(dims))))
    i = 0
    while i < len(dims):
        if ellipsis_at == i:
            skip = draw(st.integers(0, len(dims) - i))
            items.append(Ellipsis)
            i += skip
            ellipsis_at = None
            continue
        if draw(st.integers(0, 5)) == 0:
            items.append(None)
        n = dims[i]
        kind = draw(st.sampled_from(["int", "slice", "slice", "list", "tensor", "mask", "stop"]))
        if kind == "stop" and all(it is not Ellipsis for it in items):  # after one, name all
            break
        if kind == "stop":
            kind = "slice"
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            items.append(slice(start, stop, step))
        elif kind in ("list", "tensor"):
            idx = draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=3))
            items.append(idx if kind == "list" else np.array(idx, dtype=np.int32))
        else:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        i += 1
    if ellipsis_at is not None:
        items.append(Ellipsis)
    return shape, tuple(items)


def _advanced_lengths(idx: tuple[Any, ...]) -> set[int]:
    out = set()
    for it in idx:
        if isinstance(it, list) or (isinstance(it, np.ndarray) and it.dtype != np.bool_):
            out.add(len(it))
        elif isinstance(it, np.ndarray):
            out.add(int(it.sum()))
    return out


def _as_fusegrad(idx: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(Tensor(i) if isinstance(i, np.ndarray) else i for i in idx)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_case())
def test_getitem_random_expressions_match_numpy(case) -> None:  # type: ignore[no-untyped-def]
    shape, idx = case
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    try:
        want = x[idx]
    except IndexError:  # advanced indices that don't broadcast together
        assert len(_advanced_lengths(idx) - {1}) > 1
        with pytest.raises((IndexError, RuntimeError)):
            Tensor(x)[_as_fusegrad(idx)]
        return
    got = Tensor(x)[_as_fusegrad(idx)]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_case(), st.integers(-9, 9))
def test_setitem_random_expressions_match_numpy(case, value) -> None:  # type: ignore[no-untyped-def]
    shape, idx = case
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    want = x.copy()
    try:
        target = want[idx]
    except IndexError:
        return
    positions = np.arange(x.size).reshape(shape)[idx]
    if positions.size != np.unique(positions).size:
        return  # repeated targets: which write wins isn't specified (PyTorch neither)
    want[idx] = value
    values_ = np.arange(target.size, dtype=np.int32).reshape(target.shape) * 3 - value
    want_t = x.copy()
    want_t[idx] = values_
    t = Tensor(x.copy())
    t[_as_fusegrad(idx)] = value
    np.testing.assert_array_equal(t.numpy(), want)
    t2 = Tensor(x.copy()).realize()
    t2[_as_fusegrad(idx)] = Tensor(values_)
    np.testing.assert_array_equal(t2.numpy(), want_t)
