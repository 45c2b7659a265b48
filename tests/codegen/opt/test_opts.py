"""Each opt: what it does to the AST (exact IR), its preconditions and error messages, the
axis numbering, and determinism."""

from __future__ import annotations

import re

import opt_testing
import pytest
from fusegrad.codegen import KernelInfo, Renderer, TensorCore
from fusegrad.codegen.opt import (
    KernelOptError,
    Opt,
    OptOps,
    apply_opt,
    apply_opts,
    kernel_axes,
    matmul_shape,
)
from fusegrad.uop import AxisType, Ops, UOp, dtypes

TARGETS = opt_testing.TARGETS
CPU, GPU, SCALAR = (TARGETS.RENDERERS[t] for t in ("cpu", "gpu", "scalar"))
L, R = AxisType.LOOP, AxisType.REDUCE


def matmul(n: int = 8, k: int = 16, m: int = 12, dt: object = dtypes.float32) -> UOp:
    c = UOp.param(0, dtypes.float32.ptr(n * m))
    a, b = UOp.param(1, dt.ptr(n * k)), UOp.param(2, dt.ptr(k * m))  # type: ignore[attr-defined]
    i, j, r = UOp.range(n, 0), UOp.range(m, 1), UOp.range(k, 2, R)
    prod = a.index(i * k + r).load().cast(dtypes.float32) * b.index(r * m + j).load().cast(
        dtypes.float32
    )
    return UOp.sink(c.index(i * m + j).store(prod.reduce(r, arg=Ops.ADD)).end(i, j))


def elementwise(n: int = 12, m: int = 16) -> UOp:
    out, x = UOp.param(0, dtypes.float32.ptr(n * m)), UOp.param(1, dtypes.float32.ptr(n * m))
    i, j = UOp.range(n, 0), UOp.range(m, 1)
    return UOp.sink(out.index(i * m + j).store(x.index(i * m + j).load() * 2.0).end(i, j))


def raises(ast: UOp, opt: Opt, renderer: Renderer, match: str) -> None:
    with pytest.raises(KernelOptError, match=re.escape(match)):
        apply_opt(ast, opt, renderer)


def kinds(ast: UOp) -> list[tuple[int, AxisType, int]]:
    return [(r.arg[0], r.arg[1], r.src[0].arg) for r in kernel_axes(ast)]


# -- what each opt builds ------------------------------------------------------------------------


def test_upcast_splits_into_outer_times_amount_plus_inner() -> None:
    ast = elementwise()
    got = apply_opt(ast, Opt(OptOps.UPCAST, 1, 4), CPU)
    i = UOp.range(12, 0)
    out, x = UOp.param(0, dtypes.float32.ptr(192)), UOp.param(1, dtypes.float32.ptr(192))
    jo, ji = UOp.range(4, 1), UOp.range(4, 2, AxisType.UPCAST)
    jj = jo * 4 + ji
    want = UOp.sink(out.index(i * 16 + jj).store(x.index(i * 16 + jj).load() * 2.0).end(i, jo, ji))
    assert got is want


def test_new_axes_are_appended_so_earlier_positions_stay() -> None:
    ast = apply_opts(matmul(), [Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 4)], CPU)
    assert kinds(ast) == [
        (0, L, 4), (1, L, 3), (2, R, 16), (3, AxisType.UPCAST, 2), (4, AxisType.UPCAST, 4),
    ]  # fmt: skip


def test_upcast_amount_zero_takes_the_whole_axis() -> None:
    ast = apply_opt(elementwise(), Opt(OptOps.UPCAST, 1, 0), CPU)
    assert kinds(ast) == [(0, L, 12), (1, AxisType.UPCAST, 16)]


def test_unroll_splits_a_reduce_axis() -> None:
    ast = apply_opt(matmul(), Opt(OptOps.UNROLL, 2, 4), CPU)
    assert kinds(ast)[2:] == [(2, R, 4), (3, AxisType.UNROLL, 4)]
    red = next(u for u in ast.toposort() if u.op is Ops.REDUCE)
    assert [r.arg[0] for r in red.src[1:]] == [2, 3]


def test_thread_takes_the_top_part_as_contiguous_blocks() -> None:
    ast = apply_opt(elementwise(), Opt(OptOps.THREAD, 0, 4), CPU)
    assert kinds(ast) == [(0, L, 3), (1, L, 16), (2, AxisType.THREAD, 4)]
    store = next(u for u in ast.toposort() if u.op is Ops.STORE)
    t, rest = UOp.range(4, 2, AxisType.THREAD), UOp.range(3, 0)
    assert (t * 3 + rest) in store.src[0].src[1].toposort()


def test_local_and_group_on_a_gpu() -> None:
    ast = apply_opts(matmul(), [Opt(OptOps.LOCAL, 1, 4), Opt(OptOps.GROUP, 2, 4)], GPU)
    assert kinds(ast) == [
        (0, AxisType.GLOBAL, 8), (1, AxisType.GLOBAL, 3), (2, R, 4), (3, AxisType.LOCAL, 4),
        (4, AxisType.GROUP_REDUCE, 4),
    ]  # fmt: skip


def test_grouptop_groups_contiguous_chunks() -> None:
    ast = apply_opt(matmul(), Opt(OptOps.GROUPTOP, 2, 4), GPU)
    g, rest = UOp.range(4, 3, AxisType.GROUP_REDUCE), UOp.range(4, 2, R)
    assert (g * 4 + rest) in ast.toposort()


def test_padto_rounds_up_and_masks() -> None:
    ast = apply_opt(matmul(n=6), Opt(OptOps.PADTO, 0, 4), CPU)
    assert kinds(ast)[0] == (0, L, 8)
    i = UOp.range(8, 0)
    store = next(u for u in ast.toposort() if u.op is Ops.STORE)
    assert store.src[0].src[1].get_valid() is (i < 6)


def test_padto_on_a_reduce_adds_the_identity_outside() -> None:
    ast = apply_opt(matmul(k=10), Opt(OptOps.PADTO, 2, 4), CPU)
    red = next(u for u in ast.toposort() if u.op is Ops.REDUCE)
    k = UOp.range(12, 2, R)
    assert red.src[0].op is Ops.WHERE and red.src[0].src[0] is (k < 10)


def test_swap_exchanges_axis_ids() -> None:
    ast = apply_opt(elementwise(), Opt(OptOps.SWAP, 0, 1), CPU)
    assert kinds(ast) == [(0, L, 16), (1, L, 12)]


def test_nolocals_marks_the_kernel() -> None:
    ast = apply_opt(matmul(), Opt(OptOps.NOLOCALS), GPU)
    assert isinstance(ast.arg, KernelInfo) and ast.arg.dont_use_locals


def test_apply_opts_is_deterministic_and_marks_opts_applied() -> None:
    opts = [Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UNROLL, 2, 4), Opt(OptOps.THREAD, 0, 2)]
    a, b = apply_opts(matmul(), opts, CPU), apply_opts(matmul(), opts, CPU)
    assert a is b
    info = a.arg
    assert isinstance(info, KernelInfo) and info.opts_to_apply == () and info.name == "kernel"
    assert info.applied_opts == tuple(opts)  # tinygrad's record of what was applied
    assert info.axis_types == tuple(k for _, k, _ in kinds(a))


def test_apply_opts_turns_loops_global_on_gpus() -> None:
    assert [k for _, k, _ in kinds(apply_opts(elementwise(), [], GPU))] == [AxisType.GLOBAL] * 2
    assert [k for _, k, _ in kinds(apply_opts(elementwise(), [], CPU))] == [L, L]


class _TCRenderer(type(GPU)):  # type: ignore[misc]
    tensor_cores = (TensorCore((4, 2, 4), 8, dtypes.float16, dtypes.float32, (4, 2, 4)),)


def test_tc_tiles_a_matmul_to_the_core_shape() -> None:
    ast = apply_opt(matmul(dt=dtypes.float16), Opt(OptOps.TC, 0), _TCRenderer())
    assert kinds(ast)[3:] == [
        (3, AxisType.LOCAL, 4), (4, AxisType.UPCAST, 2), (5, AxisType.UNROLL, 4),
    ]  # fmt: skip


def test_matmul_shape_finds_m_n_k() -> None:
    shape = matmul_shape(matmul())
    assert shape is not None
    assert (shape.m.arg[0], shape.n.arg[0], shape.k.arg[0]) == (0, 1, 2)
    assert matmul_shape(elementwise()) is None


# -- preconditions and messages ------------------------------------------------------------------

_CASES = [
    # (name, ast builder, opt, renderer, message part)
    ("axis out of range", matmul, Opt(OptOps.UPCAST, 3, 2), CPU, "axis 3 out of range: the kernel has 3 axes"),
    ("no axis", matmul, Opt(OptOps.UPCAST, None, 2), CPU, "needs an axis"),
    ("negative amount", matmul, Opt(OptOps.UPCAST, 0, -1), CPU, "amount must be an int >= 0"),
    ("upcast a reduce", matmul, Opt(OptOps.UPCAST, 2, 4), CPU, "UPCAST needs an output axis"),
    ("upcast not dividing", matmul, Opt(OptOps.UPCAST, 0, 3), CPU, "3 does not divide axis 0"),
    ("upcast amount 1", matmul, Opt(OptOps.UPCAST, 0, 1), CPU, "amount must be at least 2"),
    ("unroll an output", matmul, Opt(OptOps.UNROLL, 0, 2), CPU, "UNROLL needs a reduce axis"),
    ("unroll too many lanes", lambda: matmul(k=64), Opt(OptOps.UNROLL, 2, 64), CPU, "amount 64 is more than 32 lanes"),
    ("local on a cpu", matmul, Opt(OptOps.LOCAL, 0, 2), CPU, "has no workgroups (has_local is False)"),
    ("local on a reduce", matmul, Opt(OptOps.LOCAL, 2, 2), GPU, "LOCAL needs an output axis"),
    ("group on a cpu", matmul, Opt(OptOps.GROUP, 2, 4), CPU, "has no workgroups"),
    ("group an output", matmul, Opt(OptOps.GROUPTOP, 0, 2), GPU, "GROUPTOP needs a reduce axis"),
    ("workgroup too big", lambda: matmul(k=512), Opt(OptOps.GROUP, 2, 512), GPU, "512 threads is more than 256"),
    ("thread on a gpu", matmul, Opt(OptOps.THREAD, 0, 2), GPU, "has no CPU threads"),
    ("thread a reduce", matmul, Opt(OptOps.THREAD, 2, 2), CPU, "THREAD needs a LOOP axis"),
    ("too many threads", matmul, Opt(OptOps.THREAD, 0, 8), CPU, "8 threads is more than the 4"),
    ("thread not dividing", matmul, Opt(OptOps.THREAD, 0, 3), CPU, "3 does not divide axis 0"),
    ("padto a multiple", matmul, Opt(OptOps.PADTO, 0, 4), CPU, "is already a multiple of 4"),
    ("padto doubling", matmul, Opt(OptOps.PADTO, 0, 32), CPU, "padding 8 to 32 more than doubles"),
    ("swap same axis", matmul, Opt(OptOps.SWAP, 0, 0), CPU, "SWAP needs two different axes"),
    ("swap a reduce", matmul, Opt(OptOps.SWAP, 0, 2), CPU, "SWAP needs two output axes"),
    ("nolocals on a cpu", matmul, Opt(OptOps.NOLOCALS), CPU, "has no workgroups"),
    ("tc without cores", matmul, Opt(OptOps.TC, 0), GPU, "declares no tensor cores"),
    ("tc wrong dtype", matmul, Opt(OptOps.TC, 0), _TCRenderer(), "the matmul has dtypes.float32 x"),
    ("tc not a matmul", elementwise, Opt(OptOps.TC, 0), _TCRenderer(), "not a matmul-shaped reduction"),
    ("tc bad index", matmul, Opt(OptOps.TC, 1), _TCRenderer(), "no tensor core 1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("build", "opt", "renderer", "msg"), [c[1:] for c in _CASES], ids=[c[0] for c in _CASES]
)
def test_precondition_raises_with_message(
    build: object, opt: Opt, renderer: Renderer, msg: str
) -> None:
    raises(build(), opt, renderer, msg)  # type: ignore[operator]


def test_lanes_are_limited_in_total() -> None:
    ast = apply_opt(elementwise(16, 32), Opt(OptOps.UPCAST, 0, 16), CPU)
    raises(ast, Opt(OptOps.UPCAST, 1, 32), CPU, "the kernel would have 512 lanes (at most 256)")


def test_error_names_the_opt() -> None:
    with pytest.raises(KernelOptError, match=r"^Opt\(op=OptOps.UNROLL, axis=0, amount=2\): "):
        apply_opt(matmul(), Opt(OptOps.UNROLL, 0, 2), CPU)


def test_nolocals_blocks_later_locals_and_twice() -> None:
    ast = apply_opt(matmul(), Opt(OptOps.NOLOCALS), GPU)
    raises(ast, Opt(OptOps.LOCAL, 0, 2), GPU, "the kernel has NOLOCALS")
    raises(ast, Opt(OptOps.NOLOCALS), GPU, "already has NOLOCALS")
    grouped = apply_opt(matmul(), Opt(OptOps.GROUP, 2, 4), GPU)
    raises(grouped, Opt(OptOps.NOLOCALS), GPU, "already has LOCAL/GROUP axes")


def test_thread_needs_every_store_to_loop_over_the_axis() -> None:
    out, x = UOp.param(0, dtypes.float32.ptr(8)), UOp.param(1, dtypes.float32.ptr(8))
    o2 = UOp.param(2, dtypes.float32.ptr(4))
    i, j = UOp.range(8, 0), UOp.range(4, 1)
    ast = UOp.sink(out.index(i).store(x.index(i).load()).end(i), o2.index(j).store(1.0).end(j))
    raises(ast, Opt(OptOps.THREAD, 0, 2), CPU, "every store must loop over axis 0")


def test_group_needs_shared_memory_that_fits() -> None:
    assert apply_opt(matmul(k=256), Opt(OptOps.GROUP, 2, 32), GPU) is not None  # 128 bytes fit
    small = type("Tiny", (type(GPU),), {"shared_max": 64})()
    raises(matmul(k=256), Opt(OptOps.GROUP, 2, 32), small, "needs 128 bytes of shared memory")


def test_symbolic_axes_split_only_by_known_divisors() -> None:
    n = UOp.variable("n", 1, 64)
    out, x = UOp.param(0, dtypes.float32.ptr(256)), UOp.param(1, dtypes.float32.ptr(256))
    i = UOp.range(n * 4, 0)
    ast = UOp.sink(out.index(i).store(x.index(i).load()).end(i))
    assert kinds(apply_opt(ast, Opt(OptOps.UPCAST, 0, 4), CPU))[1] == (1, AxisType.UPCAST, 4)
    raises(ast, Opt(OptOps.UPCAST, 0, 8), CPU, "8 does not divide the symbolic size")
    raises(ast, Opt(OptOps.UPCAST, 0, 0), CPU, "amount 0 (the whole axis) needs a constant size")
    raises(ast, Opt(OptOps.PADTO, 0, 8), CPU, "PADTO needs a constant size")


def test_opt_round_trips_through_tuples() -> None:
    opt = Opt(OptOps.GROUPTOP, 2, 16)
    assert Opt.from_tuple(opt.to_tuple()) == opt
    with pytest.raises(ValueError, match="unknown op 'FOO'"):
        Opt.from_tuple(("FOO", 0, 1))
    with pytest.raises(KernelOptError, match="expected a kernel AST"):
        apply_opts(UOp.const(1, dtypes.int32), [], CPU)
