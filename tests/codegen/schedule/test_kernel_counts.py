"""The kernel-count table: tensor programs, how many kernels they take, and their values.

Every program is scheduled, every kernel AST verified against spec.py, the kernel graph run
by the reference evaluator, and every output compared with NumPy. The same table runs again
through the full codegen pipeline: each kernel lowered with ``to_program`` for the PYTHON
renderer and run by the PYTHON emulator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
from fusegrad.uop import dtypes
from schedule_testing import Memory, T, cat, check, run_on_emulator


class Program(NamedTuple):
    name: str
    build: Callable[[Memory], list[T]]
    kernels: int
    at_most: bool = False  # the count is an upper bound


def _softmax(m: Memory) -> list[T]:
    return [m.rand(4, 6).softmax()]


def _layernorm(m: Memory) -> list[T]:
    return [m.rand(3, 8).layernorm()]


def _conv(m: Memory) -> list[T]:
    return [m.rand(2, 3, 6, 5).conv2d(m.rand(4, 3, 3, 2))]


def _matmul_chain(m: Memory) -> list[T]:
    return [(m.rand(3, 4) @ m.rand(4, 5)) @ m.rand(5, 2)]


def _variance(m: Memory) -> list[T]:
    x = m.rand(4, 6)
    return [(x - x.mean()).square().mean()]


def _avg_pool(m: Memory) -> list[T]:
    return [m.rand(1, 2, 5, 5).pool((2, 2)).mean((4, 5))]


def _long_chain(m: Memory) -> list[T]:
    x = m.rand(5, 3)
    for i in range(10):
        x = (x * 0.9 + float(i)).relu() if i % 2 else x - 0.5
    return [x]


def _where(m: Memory) -> list[T]:
    a, b = m.rand(4, 4), m.rand(4, 4)
    return [(a < b).where(a, b)]


def _normalize(m: Memory) -> list[T]:
    x = m.rand(5)
    return [x / x.sum()]


def _two_same(m: Memory) -> list[T]:
    a, b = m.rand(3, 3), m.rand(3, 3)
    return [a + b, a * b]


def _two_other(m: Memory) -> list[T]:
    a = m.rand(3, 3)
    return [a + 1.0, a.sum()]


def _sub_max(m: Memory) -> list[T]:
    x = m.rand(6)
    return [x - x.max()]


def _expand_reduce(m: Memory) -> list[T]:
    x = m.rand(3, 4)
    return [x.sum(0, keepdim=True).expand((3, 4)) * x]


def _layernorm_matmul(m: Memory) -> list[T]:
    return [m.rand(6, 8).layernorm() @ m.rand(8, 40)]


def _softmax_matmul(m: Memory) -> list[T]:
    return [m.rand(6, 8).softmax() @ m.rand(8, 40)]


PROGRAMS = [
    Program("add", lambda m: [m.rand(4, 4) + m.rand(4, 4)], 1),
    Program("add_mul_relu", lambda m: [((m.rand(4) + m.rand(4)) * m.rand(4)).relu()], 1),
    Program("mul_sum", lambda m: [(m.rand(4, 3) * m.rand(4, 3)).sum()], 1),
    Program("sum_plus_1", lambda m: [m.rand(6).sum() + 1.0], 1),
    Program("matmul", lambda m: [m.rand(3, 4) @ m.rand(4, 5)], 1),
    Program("matmul_bias_relu", lambda m: [(m.rand(3, 4) @ m.rand(4, 5) + m.rand(3, 5)).relu()], 1),
    Program("conv2d", _conv, 1),
    Program("transpose_contiguous", lambda m: [m.rand(3, 5).T.contiguous()], 1),
    Program("cat3", lambda m: [cat(m.rand(2, 3), m.rand(1, 3), m.rand(3, 3))], 1),
    Program("reshape_of_buffer", lambda m: [m.rand(4, 6).reshape((2, 12))], 0),
    Program("softmax", _softmax, 1),
    Program("layernorm", _layernorm, 1),
    Program("sum0_and_sum1", lambda m: [m.rand(4, 5).sum(0), m.rand(4, 5, seed=0).sum(1)], 2, True),
    Program("sub", lambda m: [m.rand(3) - m.rand(3)], 1),
    Program("exp_scale", lambda m: [m.rand(3, 3).exp() * 2.0], 1),
    Program("max_axis1", lambda m: [m.rand(4, 5).max(1)], 1),
    Program("sum_all_axes", lambda m: [m.rand(3, 4).sum((0, 1))], 1),
    Program("add_then_sum1", lambda m: [(m.rand(3, 4) + m.rand(3, 4)).sum(1)], 1),
    Program(
        "sum_keepdim_broadcast", lambda m: [m.rand(3, 4).sum(1, keepdim=True) + m.rand(3, 4)], 1
    ),
    Program("normalize_by_sum", _normalize, 1),
    Program("pad", lambda m: [m.rand(3, 4).pad(((1, 1), (2, 0)))], 1),
    Program("shrink_add", lambda m: [m.rand(5, 5).shrink(((1, 4), (0, 2))) + 1.0], 1),
    Program("flip_mul", lambda m: [m.rand(4, 3).flip(0) * m.rand(4, 3)], 1),
    Program("permute_add", lambda m: [m.rand(3, 4).permute(1, 0) + m.rand(4, 3)], 1),
    Program(
        "reshape_permute_contiguous", lambda m: [m.rand(4, 4).reshape((8, 2)).T.contiguous()], 1
    ),
    Program("outer_broadcast", lambda m: [m.rand(4, 1) + m.rand(1, 5)], 1),
    Program("two_outputs_same_shape", _two_same, 1),
    Program("two_outputs_other_shapes", _two_other, 2),
    Program("contiguous_of_buffer", lambda m: [m.rand(4, 4).contiguous()], 0),
    Program("contiguous_then_mul", lambda m: [(m.rand(4) + 1.0).contiguous() * 2.0], 2),
    Program("chain_of_10", _long_chain, 1),
    Program("where", _where, 1),
    Program(
        "cast_int_add",
        lambda m: [m.rand(4, 3).cast(dtypes.int32) + m.rand(4, 3, dtype=dtypes.int32)],
        1,
    ),
    Program("mean", lambda m: [m.rand(4, 4).mean()], 1),
    Program("variance", _variance, 1),
    Program("transposed_matmul", lambda m: [m.rand(4, 3).T @ m.rand(4, 2)], 1),
    Program("matmul_chain", _matmul_chain, 2),
    Program("zeros", lambda m: [m.rand(1).const(0.0, (3, 4))], 1),
    Program("nested_sums", lambda m: [m.rand(3, 4).sum(1).sum(0)], 1),
    Program("sub_max", _sub_max, 1),
    Program("avg_pool", _avg_pool, 1),
    Program(
        "pad_add_pad",
        lambda m: [m.rand(2, 2).pad(((0, 2), (0, 0))) + m.rand(2, 2).pad(((2, 0), (0, 0)))],
        1,
    ),
    Program("copy_buffer", lambda m: [m.rand(3, 3).to("CPU:1")], 0),
    Program("copy_computed", lambda m: [(m.rand(3, 3) + 1.0).to("CPU:1")], 1),
    Program("copy_permuted", lambda m: [m.rand(2, 3).T.to("CPU:1") * 2.0], 2),
    Program("sum_of_pad", lambda m: [m.rand(3, 3).pad(((1, 1), (1, 1))).sum(1)], 1),
    Program("flip_reshape", lambda m: [m.rand(2, 6).flip(1).reshape((3, 4)) * 3.0], 1),
    Program("expand_reduce_expand", _expand_reduce, 2),
    # the recompute cost model: the normalized rows get a buffer instead of being recomputed
    # inside the matmul's loop (once per output column)
    Program("layernorm_then_matmul", _layernorm_matmul, 2),
    Program("softmax_then_matmul", _softmax_matmul, 2),
]


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_kernel_count_and_values(prog: Program, mem: Memory) -> None:
    outs = prog.build(mem)
    kg = check(mem, *outs)
    n = len(kg.kernels)
    if prog.at_most:
        assert n <= prog.kernels, f"{prog.name}: {n} kernels, want <= {prog.kernels}"
    else:
        assert n == prog.kernels, f"{prog.name}: {n} kernels, want {prog.kernels}"


def test_table_has_at_least_40_programs() -> None:
    assert len(PROGRAMS) >= 40


def test_conv2d_matches_a_direct_convolution(mem: Memory) -> None:
    x, w = mem.rand(1, 2, 5, 4), mem.rand(3, 2, 2, 3)
    out = x.conv2d(w)
    check(mem, out)
    want = np.zeros((1, 3, 4, 2), np.float32)
    for o in range(3):
        for i in range(4):
            for j in range(2):
                want[0, o, i, j] = (x.np[0, :, i : i + 2, j : j + 3] * w.np[o]).sum()
    np.testing.assert_allclose(out.np, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_program_runs_through_the_codegen_pipeline(prog: Program, mem: Memory) -> None:
    check(mem, *prog.build(mem), execute=run_on_emulator)
