"""The schedule-cache key made part by part and remembered on the nodes (issue 29's plain
dispatch): equal keys for equal structure over other buffers, different keys for anything
that schedules differently, the input order the template numbers, bound Variables' values,
and the walk that takes over past ``LEAF_LIMIT`` leaves."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor, Variable
from fusegrad.codegen.schedule import schedule_cache, structure_key
from fusegrad.codegen.schedule.cache import _MEMO, LEAF_LIMIT, StructureKey
from fusegrad.uop import UOp, dtypes

pytestmark = pytest.mark.kernels  # realizes on the kernel pipeline (the schedule cache's user)


def _buf(n: int = 4, dtype: object = dtypes.float32) -> Tensor:
    return Tensor.empty(n, dtype=dtype).realize()  # type: ignore[arg-type]


def _key(*ts: Tensor) -> tuple[object, list[UOp], dict[UOp, int]]:
    return structure_key(UOp.sink(*(t.uop for t in ts)))


def test_same_structure_over_new_buffers_is_one_key() -> None:
    a, b = _buf(), _buf()
    k1, inputs1, _ = _key(a + 1)
    k2, inputs2, _ = _key(b + 1)
    assert k1 is k2  # interned: equal structure is the same object
    assert inputs1 == [a.uop] and inputs2 == [b.uop]


def test_shared_leaf_differs_from_two_leaves() -> None:
    a, b = _buf(), _buf()
    same, inputs_same, _ = _key(a + a)
    two, inputs_two, _ = _key(a + b)
    assert same != two
    assert inputs_same == [a.uop] and inputs_two == [a.uop, b.uop]


def test_inputs_follow_the_structure_not_the_buffers() -> None:
    a, b = _buf(), _buf()
    k1, inputs1, _ = _key(a * 2 + b)
    k2, inputs2, _ = _key(b * 2 + a)
    assert k1 is k2
    assert inputs1 == [a.uop, b.uop] and inputs2 == [b.uop, a.uop]


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (lambda x: x + 1.0, lambda x: x + 2.0),  # constant value
        (lambda x: x + 0.0, lambda x: x + -0.0),  # -0.0 is not 0.0 to a kernel
        (lambda x: x + 1, lambda x: x * 1),  # op
        (lambda x: x.reshape(2, 2).sum(0), lambda x: x.reshape(2, 2).sum(1)),  # arg
    ],
)
def test_different_structure_is_another_key(left: object, right: object) -> None:
    a = _buf()
    assert _key(left(a))[0] != _key(right(a))[0]  # type: ignore[operator]


def test_buffer_size_and_dtype_are_part_of_the_key() -> None:
    base = _key(_buf(4) + 1)[0]
    assert _key(_buf(8) + 1)[0] != base
    assert _key(_buf(4, dtypes.int32) + 1)[0] != base


def test_part_is_remembered_on_the_nodes() -> None:
    a = _buf()
    y = (a + 1) * 3
    key, _, _ = _key(y)
    assert _MEMO in y.uop.__dict__ and _MEMO in y.uop.src[0].__dict__
    assert _key(y)[0] is key


def test_bound_variable_values_come_back_by_variable() -> None:
    a = _buf(8)
    v = Variable("n", 1, 8)
    k3, _, vals3 = _key(a.shrink(((0, v.bind(3)),)).sum())
    k5, _, vals5 = _key(a.shrink(((0, v.bind(5)),)).sum())
    assert k3 == k5  # the value is not part of the structure
    assert list(vals3.values()) == [3] and list(vals5.values()) == [5]


def test_many_leaves_fall_back_to_the_walk_with_the_same_meaning() -> None:
    bufs = [_buf() for _ in range(LEAF_LIMIT + 1)]
    total = bufs[0]
    for b in bufs[1:]:
        total = total + b
    key, inputs, _ = _key(total)
    assert isinstance(key, StructureKey)
    assert inputs == [b.uop for b in bufs]
    other = [_buf() for _ in range(LEAF_LIMIT + 1)]
    total2 = other[0]
    for b in other[1:]:
        total2 = total2 + b
    assert _key(total2)[0] == key


def test_dependent_chain_hits_the_schedule_cache_and_computes_right() -> None:
    x = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    x = (x + 1).realize()
    hits = schedule_cache.hits
    for _ in range(5):
        x = (x + 1).realize()
    assert schedule_cache.hits - hits == 5
    np.testing.assert_array_equal(x.numpy(), [7.0, 8.0])
