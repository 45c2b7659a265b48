"""Range merging: adjacent loops that always open and close together and address every buffer
contiguously become one loop (``a*B + b`` is ``m``), so the nest is shallower and the runs
longer. Not merged: loops whose merge would need a division/modulo (a transpose, a mask on
one axis, a non-contiguous buffer), hardware ids, and loops that do not nest directly.
The scheduler keeps a tensor's dims as they are (nothing upstream merges them)."""

from __future__ import annotations

import numpy as np
import pytest
import targets as T
from fusegrad.codegen.lower import STAGES, lower, to_program
from fusegrad.codegen.lower.ranges import merge_ranges
from fusegrad.runtime import run_linear
from fusegrad.uop import AxisType, Ops, UOp, dtypes

R = AxisType.REDUCE


def _loops(uops: tuple[UOp, ...] | list[UOp]) -> list[int]:
    return [u.src[0].arg for u in uops if u.op is Ops.RANGE]


def _elementwise_3d(perm: tuple[int, int, int] = (0, 1, 2)) -> UOp:
    """out[(i, j, k) permuted] = x[i, j, k] * 2 over a 2x3x5 tensor."""
    shape = (2, 3, 5)
    out, x = T.buf(0, dtypes.float32, 30), T.buf(1, dtypes.float32, 30)
    rs = [T.rng(n, a) for a, n in enumerate(shape)]
    src = rs[0] * 15 + rs[1] * 5 + rs[2]
    oshape = [shape[p] for p in perm]
    o = [rs[p] for p in perm]
    dst = o[0] * (oshape[1] * oshape[2]) + o[1] * oshape[2] + o[2]
    return T.kernel(out.index(dst).store(x.index(src).load() * 2.0).end(*rs))


@pytest.mark.parametrize("target", ["cpu", "scalar"])
def test_contiguous_loops_become_one(target: str) -> None:
    spec = to_program(_elementwise_3d(), T.RENDERERS[target])
    assert _loops(spec.uops) == [30]
    data = np.arange(30, dtype=np.float32)
    np.testing.assert_array_equal(
        T.run_program(spec, [np.zeros(30, np.float32), data])[0], data * 2
    )


@pytest.mark.parametrize(
    ("perm", "loops"), [((1, 0, 2), [2, 3, 5]), ((0, 2, 1), [2, 3, 5]), ((2, 0, 1), [6, 5])]
)
def test_transposed_axes_stay_apart(perm: tuple[int, int, int], loops: list[int]) -> None:
    """Output axes permuted: a pair merges only where it is contiguous in both buffers —
    with (2, 0, 1) that is (i, j): ``i*15 + j*5`` in the input, ``i*3 + j`` in the output."""
    spec = to_program(_elementwise_3d(perm), T.RENDERERS["cpu"])
    assert _loops(spec.uops) == loops
    data = np.arange(30, dtype=np.float32)
    want = (data.reshape(2, 3, 5) * 2).transpose(perm).reshape(-1)
    np.testing.assert_array_equal(T.run_program(spec, [np.zeros(30, np.float32), data])[0], want)


def test_mask_on_one_axis_keeps_it() -> None:
    """A pad on the inner axis (``j >= 1``) would need ``m % 4`` after a merge."""
    out, x = T.buf(0, dtypes.float32, 12), T.buf(1, dtypes.float32, 12)
    i, j = T.rng(3, 0), T.rng(4, 1)
    val = x.index((i * 4 + j - 1).valid(j >= 1)).load()
    spec = to_program(T.kernel(out.index(i * 4 + j).store(val).end(i, j)), T.RENDERERS["cpu"])
    assert _loops(spec.uops) == [3, 4]
    data = np.arange(12, dtype=np.float32) + 1
    want = np.where(np.arange(12) % 4 >= 1, np.roll(data, 1), 0)
    np.testing.assert_array_equal(T.run_program(spec, [np.zeros(12, np.float32), data])[0], want)


def test_contiguous_reduce_axes_merge_in_the_same_order() -> None:
    """sum over (k1, k2) of x[i, k1, k2]: one reduce loop of 32, and bit for bit the same
    sum as the nested loops (the order of accumulation is unchanged)."""
    out, x = T.buf(0, dtypes.float32, 3), T.buf(1, dtypes.float32, 96)
    i, k1, k2 = T.rng(3, 0), T.rng(4, 1, R), T.rng(8, 2, R)
    val = x.index(i * 32 + k1 * 8 + k2).load().reduce(k1, k2, arg=Ops.ADD)
    ast = T.kernel(out.index(i).store(val).end(i))
    merged, _ = lower(ast, T.RENDERERS["scalar"])
    assert _loops(merged) == [3, 32]
    no_merge = tuple(s for s in STAGES if s.name != "simplify ranges")
    from fusegrad.codegen.lower.pipeline import Stage
    from fusegrad.codegen.lower.ranges import pm_simplify_ranges
    from fusegrad.uop import graph_rewrite

    plain = Stage("simplify ranges", lambda s, c: graph_rewrite(s, pm_simplify_ranges, ctx=c))
    stages = (*no_merge[:3], plain, *no_merge[3:])
    nested, _ = lower(ast, T.RENDERERS["scalar"], stages)
    assert _loops(nested) == [3, 4, 8]
    data = np.random.default_rng(0).standard_normal(96).astype(np.float32) * 1e3
    got = [np.zeros(3, np.float32), data]
    want = [np.zeros(3, np.float32), data.copy()]
    run_linear(merged, got, {})
    run_linear(nested, want, {})
    np.testing.assert_array_equal(got[0], want[0])


def test_hardware_ids_are_not_merged() -> None:
    ast = _elementwise_3d()
    for axis in range(3):
        ast = T.retype(ast, axis, AxisType.GLOBAL)
    spec = to_program(ast, T.RENDERERS["gpu"])
    assert spec.global_size == (5, 3, 2)
    assert sorted(u.arg for u in spec.uops if u.op is Ops.SPECIAL) == ["gidx0", "gidx1", "gidx2"]


def test_loops_that_do_not_nest_directly_stay() -> None:
    """i and k are contiguous together only through j; i and j are not (j is the outer
    axis of the output): nothing merges."""
    out, x = T.buf(0, dtypes.float32, 30), T.buf(1, dtypes.float32, 30)
    i, j, k = T.rng(2, 0), T.rng(3, 1), T.rng(5, 2)
    ast = T.kernel(
        out.index(j * 10 + i * 5 + k).store(x.index(i * 15 + j * 5 + k).load()).end(i, j, k)
    )
    assert _loops(to_program(ast, T.RENDERERS["cpu"]).uops) == [2, 3, 5]


def test_embedding_kernel_loses_a_loop() -> None:
    """The frontend's (2, 3) ids x 5 embedding kernel: rows (2, 3) merge, the 5 columns
    (contiguous in the output, not in the table) stay."""
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.nn import Embedding
    from fusegrad.tensor import Tensor

    out = Embedding(37, 5)(Tensor(np.array([[0, 36, 4], [1, 5, 2]], np.int32)))
    kg = get_kernel_graph(UOp.sink(out.uop), cache=None)
    (ast,) = [k.src[0] for k in kg.kernels if any(u.op is Ops.REDUCE for u in k.src[0].toposort())]
    assert _loops(to_program(ast, T.RENDERERS["cpu"]).uops) == [6, 5]


def test_merge_is_idempotent() -> None:
    once = merge_ranges(_elementwise_3d())
    assert merge_ranges(once) is once
