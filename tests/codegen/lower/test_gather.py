"""The "collapse gathers" stage: a sum over a range of a one-hot select becomes one gated read.

Exact IR for the arange fold, and random evaluation of every collapsed kernel against the same
kernel lowered without the stage (both run in the PYTHON emulator, inputs with out-of-range
and negative indices), for hand-built ASTs and for the kernels the frontend schedules for
``Embedding``, ``gather`` and fancy indexing."""

from __future__ import annotations

from typing import Any

import corpus as C
import numpy as np
import pytest
import targets as T
from fusegrad.codegen.lower import STAGES, lower, to_program
from fusegrad.codegen.lower.gather import collapse_one_hot_sum, pm_gather
from fusegrad.runtime import run_linear
from fusegrad.uop import AxisType, Ops, PtrDType, UOp, dtypes, graph_rewrite

WITHOUT = tuple(s for s in STAGES if s.name != "collapse gathers")
R = AxisType.REDUCE


@pytest.mark.parametrize("n", [2, 3, 5, 10, 64, 30522])
def test_arange_bits_fold_to_the_range(n: int) -> None:
    r = T.rng(n, 0, R)
    assert graph_rewrite(C.arange_bits(r, n), pm_gather) is r.cast(dtypes.int32)


def test_select_of_a_non_bit_stays() -> None:
    x = T.rng(3, 0)  # x // 1 is 0, 1 or 2: not a bit
    sel = (x < 1).logical_not().where(UOp.const(2, dtypes.int32), UOp.const(0, dtypes.int32))
    out = graph_rewrite(sel, pm_gather)
    assert out.op is Ops.WHERE


def test_sum_of_one_hot_select_becomes_gated_read() -> None:
    table, ids = T.buf(1, dtypes.float32, 10), T.buf(2, dtypes.int32, 4)
    i, r = T.rng(4, 0), T.rng(10, 1, R)
    e = ids.index(i).load()
    red = r.cast(dtypes.int32).eq(e).where(table.index(r).load(), 0.0).reduce(r, arg=Ops.ADD)
    at = e.cast(dtypes.weakint)
    ok = (at > -1) & (at < 10)
    assert collapse_one_hot_sum(red) is ok.where(table.index(at.valid(ok)).load(), 0.0)


def test_compare_that_uses_the_range_on_both_sides_stays() -> None:
    table = T.buf(1, dtypes.float32, 10)
    r = T.rng(10, 1, R)
    red = r.eq(r * 2).where(table.index(r).load(), 0.0).reduce(r, arg=Ops.ADD)
    assert collapse_one_hot_sum(red) is None


def test_max_reduce_is_not_a_gather() -> None:
    table, ids = T.buf(1, dtypes.float32, 10), T.buf(2, dtypes.int32, 4)
    i, r = T.rng(4, 0), T.rng(10, 1, R)
    hot = r.cast(dtypes.int32).eq(ids.index(i).load())
    assert (
        collapse_one_hot_sum(hot.where(table.index(r).load(), 0.0).reduce(r, arg=Ops.MAX)) is None
    )


def _ranges(uops: list[UOp]) -> list[int]:
    return [u.src[0].arg for u in uops if u.op is Ops.RANGE]


def _random_inputs(ast: UOp, rs: np.random.Generator, spread: int) -> list[np.ndarray]:
    params = sorted({u.arg: u for u in ast.toposort() if u.op is Ops.PARAM}.items())
    out = []
    for _, p in params:
        dt = p.dtype
        assert isinstance(dt, PtrDType)
        if dtypes.is_float(dt.base):
            out.append(rs.standard_normal(dt.size).astype(T._NP[dt.base]))
        else:
            out.append(rs.integers(-3, spread, dt.size).astype(T._NP[dt.base]))
    return out


def _run(
    ast: UOp, target: str, stages: Any, arrays: list[np.ndarray]
) -> tuple[list[Any], list[UOp]]:
    uops, ctx = lower(ast, T.RENDERERS[target], stages)
    bufs = [a.copy() for a in arrays]
    run_linear(uops, bufs, {}, global_size=tuple(ctx.global_size), local_size=ctx.local_size)
    return bufs, uops


def _agree(ast: UOp, target: str, seed: int, spread: int, gone: int) -> None:
    """``ast`` lowered with and without the stage computes the same on random inputs, and the
    collapsed program has no loop of ``gone`` iterations left."""
    arrays = _random_inputs(ast, np.random.default_rng(seed), spread)
    got, uops = _run(ast, target, STAGES, arrays)
    want, loop_uops = _run(ast, target, WITHOUT, arrays)
    assert gone in _ranges(loop_uops) or gone in [u.arg for u in loop_uops if u.op is Ops.CONST]
    assert gone not in _ranges(uops)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


_ONE_HOT = {"gather_one_hot_sum": 10, "gather_one_hot_mul": 10, "gather_two_axes": 7}


@pytest.mark.parametrize("target", ["cpu", "gpu", "scalar"])
@pytest.mark.parametrize("name", list(_ONE_HOT))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_collapse_agrees_with_the_loop(name: str, target: str, seed: int) -> None:
    c = next(c for c in C.build() if c.name == name)
    _agree(c.ast, target, seed, spread=_ONE_HOT[name] + 3, gone=_ONE_HOT[name])


# -- what the frontend builds ---------------------------------------------------------------------


def _frontend_kernels(make: Any) -> list[UOp]:
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.tensor import Tensor

    rs = np.random.default_rng(0)
    out = make(Tensor, rs)
    kg = get_kernel_graph(UOp.sink(out.uop), cache=None)
    return [k.src[0] for k in kg.kernels]


def _embedding(tensor: Any, rs: np.random.Generator) -> Any:
    from fusegrad.nn import Embedding

    emb = Embedding(37, 5)
    return emb(tensor(rs.integers(0, 37, (2, 3)).astype(np.int32)))


def _fancy(tensor: Any, rs: np.random.Generator) -> Any:
    x = tensor(rs.standard_normal((9, 4)).astype(np.float32))
    return x[tensor(np.array([[1, -2], [8, 0]], dtype=np.int32))]


def _gather_dim1(tensor: Any, rs: np.random.Generator) -> Any:
    x = tensor(rs.standard_normal((3, 37)).astype(np.float32))
    return x.gather(1, tensor(rs.integers(0, 37, (3, 2)).astype(np.int32)))


def _two_indices(tensor: Any, rs: np.random.Generator) -> Any:
    x = tensor(rs.standard_normal((9, 37)).astype(np.float32))
    i = tensor(np.array([0, 8, 3], dtype=np.int32))
    return x[i, tensor(np.array([36, 1, 5], dtype=np.int32))]


@pytest.mark.parametrize(
    ("make", "size"),
    [(_embedding, 37), (_fancy, 9), (_gather_dim1, 37), (_two_indices, 37)],
    ids=["embedding", "fancy_index", "gather_dim1", "two_indices"],
)
def test_frontend_gathers_collapse(make: Any, size: int) -> None:
    kernels = [k for k in _frontend_kernels(make) if any(u.op is Ops.REDUCE for u in k.toposort())]
    assert kernels, "expected the gather as a reduce over the indexed axis"
    for k in kernels:
        _agree(k, "cpu", 0, spread=size + 3, gone=size)


# -- index widths: the gate bounds the gathered address ----------------------------------------

_EXTREME_IDS = np.array([0, 36, -1, 37, 2**31 - 1, -(2**31), 5, 2**30], dtype=np.int32)


def _int64_nodes(uops: Any) -> list[UOp]:
    return [u for u in uops if u.dtype.scalar() is dtypes.int64]


@pytest.mark.parametrize("target", ["cpu", "gpu", "scalar"])
@pytest.mark.parametrize(
    "make", [_embedding, _fancy, _gather_dim1, _two_indices], ids=["emb", "fancy", "dim1", "two"]
)
def test_gathered_index_math_is_int32(make: Any, target: str) -> None:
    """An id is any int32, so ``id * row`` is not; where the gate ``0 <= id < rows`` holds it
    is small, and the address is only used there: no int64 math in the program."""
    for k in _frontend_kernels(make):
        uops, _ = lower(k, T.RENDERERS[target])
        assert _int64_nodes(uops) == [], k.arg


@pytest.mark.parametrize("name", ["gather_one_hot_sum", "gather_two_axes", "gather_masked"])
def test_corpus_gathers_have_int32_index_math(name: str) -> None:
    c = next(c for c in C.build() if c.name == name)
    for target in ("cpu", "gpu"):
        ast = c.opts[target](c.ast) if target in c.opts else c.ast
        assert _int64_nodes(lower(ast, T.RENDERERS[target])[0]) == []


def _embedding_ast(vocab: int, dim: int, n: int) -> UOp:
    """out[i, d] = sum over r of (r == ids[i]) ? table[r, d] : 0 (what Embedding builds)."""
    out, table, ids = (
        T.buf(0, dtypes.float32, n * dim),
        T.buf(1, dtypes.float32, vocab * dim),
        T.buf(2, dtypes.int32, n),
    )
    i, d, r = T.rng(n, 0), T.rng(dim, 1), T.rng(vocab, 2, R)
    hot = r.cast(dtypes.int32).eq(ids.index(i).load())
    val = hot.where(table.index(r * dim + d).load(), 0.0).reduce(r, arg=Ops.ADD)
    return T.kernel(out.index(i * dim + d).store(val).end(i, d), name="emb")


def _embedding_want(table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    ok = (ids >= 0) & (ids < table.shape[0])
    return np.where(ok[:, None], table[np.where(ok, ids, 0)], 0).reshape(-1)


def test_out_of_range_ids_read_zero_in_the_emulator() -> None:
    """ids at the int32 extremes: ``id * dim`` wraps in int32 where the gate is false, and
    nothing is read there."""
    vocab, dim = 37, 5
    table = np.random.default_rng(3).standard_normal((vocab, dim)).astype(np.float32)
    ast = _embedding_ast(vocab, dim, len(_EXTREME_IDS))
    for target in ("cpu", "gpu", "scalar"):
        spec = to_program(ast, T.RENDERERS[target])
        assert _int64_nodes(spec.uops) == []
        arrays = [np.zeros(len(_EXTREME_IDS) * dim, np.float32), table, _EXTREME_IDS]
        got = T.run_program(spec, arrays)[0]
        np.testing.assert_array_equal(got, _embedding_want(table, _EXTREME_IDS))


@pytest.mark.parametrize("backend", ["llvm", "c"])
def test_out_of_range_ids_read_zero_compiled(backend: str) -> None:
    renderer, compiler = T.cpu_backend(backend)
    vocab, dim = 37, 5
    table = np.random.default_rng(4).standard_normal((vocab, dim)).astype(np.float32)
    spec = to_program(_embedding_ast(vocab, dim, len(_EXTREME_IDS)), renderer)
    assert _int64_nodes(spec.uops) == []
    out = np.full(len(_EXTREME_IDS) * dim, np.nan, np.float32)
    T.run_compiled(spec, renderer, compiler, [out, table, _EXTREME_IDS])
    np.testing.assert_array_equal(out, _embedding_want(table, _EXTREME_IDS))


def test_a_use_outside_the_gate_keeps_int64() -> None:
    """``id * 5`` both as a gated address and as a stored value: the stored value needs the
    whole range, so the shared math stays int64."""
    out, vals, table, ids = (
        T.buf(0, dtypes.float32, 4),
        T.buf(1, dtypes.int64, 4),
        T.buf(2, dtypes.float32, 50),
        T.buf(3, dtypes.int32, 4),
    )
    i = T.rng(4, 0)
    e = ids.index(i).load().cast(dtypes.weakint)
    ok = (e > -1) & (e < 10)
    read = table.index((e * 5).valid(ok)).load()
    ast = T.kernel(
        out.index(i).store(read).end(i), vals.index(i).store((e * 5).cast(dtypes.int64)).end(i)
    )
    uops = to_program(ast, T.RENDERERS["cpu"]).uops
    mul = next(u for u in uops if u.op is Ops.MUL)
    assert mul.dtype is dtypes.int64
    got = T.run_program(
        to_program(ast, T.RENDERERS["cpu"]),
        [np.zeros(4, np.float32), np.zeros(4, np.int64), np.arange(50, dtype=np.float32),
         np.array([1, 2**31 - 1, -3, 9], np.int32)],
    )  # fmt: skip
    np.testing.assert_array_equal(got[0], [5, 0, 0, 45])
    np.testing.assert_array_equal(got[1], [5, (2**31 - 1) * 5, -15, 45])
