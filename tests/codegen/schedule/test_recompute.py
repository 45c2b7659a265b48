"""The recompute cost model (``schedule/recompute.py``): what gets a buffer so it isn't
evaluated more than once per element, and what still fuses.

Each test schedules a program, runs it and compares with NumPy (``check``), then asserts the
kernel structure: how many kernels, and how many reductions each kernel evaluates per output
element (a reduction nested inside another kernel's loop is the recompute being prevented).
"""

from __future__ import annotations

import numpy as np
from fusegrad.codegen.schedule import KernelGraph
from fusegrad.codegen.schedule.recompute import Usage, broadcast_factor
from fusegrad.uop import Ops, UOp, dtypes
from schedule_testing import Memory, T, check


def _asts(kg: KernelGraph) -> list[UOp]:
    return [k.src[0] for k in kg.kernels]


def _nested_reduces(ast: UOp) -> int:
    """The deepest nesting of REDUCEs in a kernel (1: plain reductions, 2: one inside another)."""
    depth: dict[UOp, int] = {}
    for u in ast.toposort():
        inner = max((depth[s] for s in u.src), default=0)
        depth[u] = inner + (u.op is Ops.REDUCE)
    return max(depth.values())


def _reduces(ast: UOp) -> int:
    return sum(u.op is Ops.REDUCE for u in ast.toposort())


def _gelu(x: T) -> T:
    return x * 0.5 * ((x * 0.7978845 + x * x * x * 0.0356774) * 2.0).exp().rsqrt()


def test_layernorm_output_is_realized_before_a_matmul(mem: Memory) -> None:
    x, w = mem.rand(6, 8), mem.rand(8, 40)
    kg = check(mem, x.layernorm() @ w)
    asts = _asts(kg)
    assert len(asts) == 2  # mean, variance and normalized x in one kernel; the matmul
    assert _reduces(asts[0]) == 2  # the mean (read inside the variance's loop) and the variance
    assert _reduces(asts[-1]) == 1  # the matmul reduces once, reading layernorm's output


def test_cheap_scale_before_a_matmul_fuses(mem: Memory) -> None:
    kg = check(mem, (mem.rand(4, 6) * 2.0) @ mem.rand(6, 40))
    assert len(kg.kernels) == 1


def test_gelu_before_a_matmul_is_realized(mem: Memory) -> None:
    a, w1, w2 = mem.rand(3, 4), mem.rand(4, 16), mem.rand(16, 5)
    kg = check(mem, _gelu(a @ w1) @ w2)
    asts = _asts(kg)
    assert len(asts) == 2  # matmul + gelu epilogue, then the second matmul
    assert [_reduces(a) for a in asts] == [1, 1]


def test_reduce_read_by_two_kernels_is_computed_once(mem: Memory) -> None:
    s = mem.rand(4, 6).sum(1)
    kg = check(mem, s + 1.0, (s * 2.0).reshape((2, 2)))
    assert sum(_reduces(a) for a in _asts(kg)) == 1
    assert len(kg.kernels) == 3


def test_reduce_read_by_outputs_sharing_loops_stays_fused(mem: Memory) -> None:
    s = mem.rand(4, 6).sum(1)
    kg = check(mem, s + 1.0, s * 2.0)
    assert len(kg.kernels) == 1
    assert _reduces(kg.kernels[0].src[0]) == 1


def test_value_and_its_flip_do_not_explode(mem: Memory) -> None:
    x = mem.rand(8)
    for _ in range(12):  # fused, step n evaluates x 2**n times per element
        x = x.maximum(x.flip(0) * 0.5) + 0.25
    kg = check(mem, x)
    assert 2 <= len(kg.kernels) <= 12
    assert all(len(a.toposort()) < 400 for a in _asts(kg))


def test_expensive_elementwise_read_twice_is_realized(mem: Memory) -> None:
    x = mem.rand(4, 6)
    for _ in range(4):
        x = (x * 1.5).exp() * 0.1
    kg = check(mem, x + x.flip(1))
    assert len(kg.kernels) == 2


def test_cheap_elementwise_read_twice_fuses(mem: Memory) -> None:
    x = mem.rand(4, 6) * 2.0
    kg = check(mem, x + x.flip(1))
    assert len(kg.kernels) == 1


def test_index_math_over_constants_is_never_realized(mem: Memory) -> None:
    # an arange-like compare built from constants only, broadcast into a reduction: inlined
    # it folds (a one-hot against an arange is a gather); it reads no memory, so no buffer
    col = T(UOp.const(1.0, dtypes.float32, "CPU", (5,)), np.ones(5, np.float32))
    w = mem.rand(5, 70)
    ramp = (col * 3.0 + 1.0).exp()  # several ALU ops, but no loads
    kg = check(mem, ramp.reshape((1, 5)) @ w)
    assert len(kg.kernels) == 1


def test_usage_merges_factors_and_keys() -> None:
    use = Usage()
    use.add(1, (0,))
    assert not use.recomputed
    use.add(1, (0, 1, 2))
    assert use.keys == (0, 1) and use.recomputed
    use = Usage()
    use.add(7, (3,))
    assert use.factor == 7 and use.recomputed


def test_broadcast_factor_counts_only_size_one_dims() -> None:
    x = UOp.new_buffer("CPU", 4, dtypes.float32).reshape((4, 1))
    assert broadcast_factor(x.expand((4, 6))) == 6
    assert broadcast_factor(x) == 1
