"""Local memory and barriers: no two threads of a workgroup race on a DEFINE_LOCAL.

The PYTHON emulator runs a workgroup's threads in lockstep, so a missing barrier never shows
as a wrong number there; ``races`` checks the linear program itself instead: between a STORE
and a LOAD of the same local buffer (in either order, and around the back edge of a loop that
holds both) every path must pass a BARRIER. A grouped reduction inside a loop refills its
local buffer every iteration, so it needs a barrier before those stores as well as after."""

from __future__ import annotations

from typing import Any

import corpus as _corpus
import numpy as np
import pytest
import targets as T
from barriers import races
from fusegrad.codegen.lower import to_program
from fusegrad.uop import AxisType, Ops, UOp, dtypes

GPU = T.RENDERERS["gpu"]
R, GR = AxisType.REDUCE, AxisType.GROUP_REDUCE


def _nested(n: int, a_: int, b_: int, inner: Ops, outer: Ops) -> UOp:
    out, x = T.buf(0, dtypes.float32, n), T.buf(1, dtypes.float32, n * a_ * b_)
    i, k1, k2 = T.rng(n, 0, AxisType.GLOBAL), T.rng(a_, 1, R), T.rng(b_, 2, R)
    val = x.index(i * a_ * b_ + k1 * b_ + k2).load().reduce(k2, arg=inner)
    return T.kernel(out.index(i).store(val.reduce(k1, arg=outer)).end(i))


_NP_REDUCE: dict[Ops, Any] = {Ops.ADD: np.sum, Ops.MAX: np.max, Ops.MUL: np.prod}


@pytest.mark.parametrize(
    ("inner", "outer", "group"),
    [(Ops.MAX, Ops.ADD, 4), (Ops.ADD, Ops.MAX, 8), (Ops.ADD, Ops.ADD, 2), (Ops.MAX, Ops.MUL, 16)],
)
def test_grouped_reduce_in_a_loop_has_a_barrier_before_refilling(
    inner: Ops, outer: Ops, group: int
) -> None:
    n, a_, b_ = 2, 3, 16
    ast = T.split(_nested(n, a_, b_, inner, outer), 2, group, GR)
    spec = to_program(ast, GPU)
    uops = list(spec.uops)
    assert sum(u.op is Ops.BARRIER for u in uops) == 2
    assert races(uops) == []
    data = np.random.default_rng(1).random((n, a_, b_)).astype(np.float32) + 0.5
    got = T.run_program(spec, [np.zeros(n, np.float32), data])[0]
    want = _NP_REDUCE[outer](_NP_REDUCE[inner](data, axis=2), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_grouped_reduce_outside_loops_keeps_one_barrier() -> None:
    out, x = T.buf(0, dtypes.float32, 4), T.buf(1, dtypes.float32, 32)
    i, k = T.rng(4, 0, AxisType.GLOBAL), T.rng(8, 1, R)
    ast = T.kernel(out.index(i).store(x.index(i * 8 + k).load().reduce(k, arg=Ops.ADD)).end(i))
    uops = list(to_program(T.split(ast, 1, 4, GR), GPU).uops)
    assert sum(u.op is Ops.BARRIER for u in uops) == 1 and races(uops) == []


def test_race_check_finds_the_missing_barrier() -> None:
    """The check itself: drop the barrier before the refill and it reports the race."""
    uops = list(to_program(T.split(_nested(2, 3, 8, Ops.MAX, Ops.ADD), 2, 4, GR), GPU).uops)
    first = next(n for n, u in enumerate(uops) if u.op is Ops.BARRIER)
    assert races([*uops[:first], UOp(Ops.NOOP), *uops[first + 1 :]]) != []


_GPU_OPT = [pytest.param(c, id=c.name) for c in _corpus.build() if "gpu" in c.opts]


@pytest.mark.parametrize("c", _GPU_OPT)
def test_corpus_has_no_local_races(c: Any) -> None:
    assert races(list(to_program(c.opts["gpu"](c.ast), GPU).uops)) == []
