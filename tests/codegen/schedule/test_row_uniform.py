"""Row-uniform reductions (``schedule/recompute.py``): a reduction broadcast back over the
trailing axes it reduced (softmax's max and sum, layernorm's mean and variance) stays in its
consumer kernel as a sequential reduction over the row, computed once per row; one read at
indices that are not the kernel's outer loops in order still gets a buffer.

Each test runs the kernel graph against NumPy (``check``) and asserts the kernel structure:
how many kernels, how many reductions, and that every reduction is *hoisted*: the output
loops it depends on are the outermost ones, in order, so the linearizer places it outside
the inner loops and it is evaluated once per row, not once per element.
"""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.codegen.schedule import KernelGraph, recompute
from fusegrad.codegen.schedule.recompute import Usage
from fusegrad.uop import AxisType, Ops, UOp
from schedule_testing import Memory, check


def _asts(kg: KernelGraph) -> list[UOp]:
    return [k.src[0] for k in kg.kernels]


def _reduces(ast: UOp) -> list[UOp]:
    return [u for u in ast.toposort() if u.op is Ops.REDUCE]


def _hoisted(ast: UOp) -> bool:
    """True when every REDUCE depends on a prefix of the kernel's output loops (in order)."""
    loops = sorted(
        (u for u in ast.toposort() if u.op is Ops.RANGE and u.arg[1] is AxisType.LOOP),
        key=lambda r: r.arg[0],
    )
    for red in _reduces(ast):
        used = [r for r in red.ranges if r.arg[1] is AxisType.LOOP]
        if set(used) != set(loops[: len(used)]):
            return False
    return True


def _rows(mem: Memory, kg: KernelGraph, kernels: int, reduces: list[int]) -> None:
    asts = _asts(kg)
    assert len(asts) == kernels
    assert [len(_reduces(a)) for a in asts] == reduces
    assert all(_hoisted(a) for a in asts)


def test_softmax_is_one_kernel_of_sequential_reductions(mem: Memory) -> None:
    kg = check(mem, mem.rand(6, 8).softmax())
    _rows(mem, kg, 1, [2])  # the max (read by the sum and the output: once) and the sum


def test_layernorm_is_one_kernel_of_sequential_reductions(mem: Memory) -> None:
    kg = check(mem, mem.rand(6, 8).layernorm())
    _rows(mem, kg, 1, [2])  # the mean and the variance


def test_layernorm_before_a_matmul_is_one_kernel_then_the_matmul(mem: Memory) -> None:
    kg = check(mem, mem.rand(6, 8).layernorm() @ mem.rand(8, 40))
    _rows(mem, kg, 2, [2, 1])  # the normalized rows get a buffer; the matmul reads it


def test_reduction_read_inside_another_over_its_rows_gets_a_buffer(mem: Memory) -> None:
    x = mem.rand(3, 4, 5)
    y = x - x.sum(2, keepdim=True)
    kg = check(mem, y / y.sum((1, 2), keepdim=True))
    # the outer sum reads the inner one at (row, its own reduce index): not an identity dim,
    # so the inner sum is realized (no nested row reductions: a conservative rule)
    _rows(mem, kg, 2, [1, 1])


def test_row_reduction_read_transposed_gets_a_buffer(mem: Memory) -> None:
    x = mem.rand(8, 8)
    v = x - x.max(1, keepdim=True)
    kg = check(mem, v + v.T)
    asts = _asts(kg)
    assert len(asts) == 2 and all(_hoisted(a) for a in asts)


def test_reduction_over_the_leading_axis_gets_a_buffer(mem: Memory) -> None:
    x = mem.rand(8, 8)
    kg = check(mem, x - x.max(0, keepdim=True))
    _rows(mem, kg, 2, [1, 0])  # inline, it would depend on the inner loop: once per element


def test_softmax_read_transposed_keeps_its_reductions_apart(mem: Memory) -> None:
    x, y = mem.rand(6, 8), mem.rand(8, 6)
    kg = check(mem, x.softmax().T + y)
    assert len(kg.kernels) == 3 and all(_hoisted(a) for a in _asts(kg))


def test_rows_over_the_cache_budget_keep_their_own_kernels(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recompute, "ROW_BYTES", 16)  # a row of 8 float32 is 32 bytes
    kg = check(mem, mem.rand(6, 8).softmax())
    _rows(mem, kg, 3, [1, 1, 0])


def test_row_uniform_needs_one_consumer_kernel_and_identity_dims(mem: Memory) -> None:
    red = mem.rand(6, 8).max(1, keepdim=True).uop  # (6, 1): its one dim > 1 is dim 0
    assert red.op is Ops.REDUCE_AXIS
    assert Usage(depth=1, roots=(0,)).row_uniform(red)
    assert not Usage(depth=0, roots=(0,)).row_uniform(red)  # read at a mixed index
    assert not Usage(depth=1, roots=(0, 1)).row_uniform(red)  # read by two kernels
    assert not Usage(depth=1, roots=(0,), keys=(1, 2)).candidate(red)
    assert Usage(depth=0, roots=(0,), keys=(1, 2)).candidate(red)


def test_rows_over_the_cache_budget_behind_elementwise_ops_keep_their_kernel(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recompute, "ROW_BYTES", 16)
    x = mem.rand(6, 8)
    kg = check(mem, x - (x.sum(1, keepdim=True) * 2.0 + 1.0))
    _rows(mem, kg, 2, [1, 0])


def test_rows_on_a_gpu_keep_their_own_kernels(mem: Memory) -> None:
    x = mem.buf(np.random.default_rng(0).standard_normal((6, 8)), device="CUDA")
    kg = check(mem, x.softmax())
    _rows(mem, kg, 3, [1, 1, 0])  # a thread per element would compute its row's max again
