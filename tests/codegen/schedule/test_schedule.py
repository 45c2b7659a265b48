"""Scheduler behaviour beyond kernel counts: memory plan, cache, symbolic shapes,
multi-output kernels, copies, custom kernels, the buffer cap, DEBUG output, deep graphs."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.codegen import KernelInfo, verify_kernel_ast
from fusegrad.codegen.schedule import (
    SCHEDULE_STAGES,
    ScheduleCache,
    get_kernel_graph,
    plan_memory,
)
from fusegrad.uop import Context, Ops, UOp, dtypes
from schedule_testing import Memory, T, check, run_graph, run_on_emulator, schedule

# -- memory planner ---------------------------------------------------------------------------------


def test_twenty_step_chain_with_realizations_fits_in_three_buffers(mem: Memory) -> None:
    x = mem.rand(64)
    for i in range(20):
        x = (x * 1.01 + float(i)).contiguous()
    kg = check(mem, x)
    assert len(kg.kernels) == 20
    one = 64 * 4
    assert kg.planned_bytes == 19 * one  # every intermediate but the output
    assert kg.arena_bytes <= 3 * max(one, 256), kg.arena_bytes


def test_planned_buffers_are_views_into_one_arena(mem: Memory) -> None:
    x = mem.rand(8)
    y = ((x + 1.0).contiguous() * 2.0).contiguous() - 1.0
    kg = check(mem, y)
    views = [b for c in kg.calls for b in c.src[1:] if b.op is Ops.BUFFER_VIEW]
    assert views and len({v.src[0] for v in views}) == 1
    assert all(v.src[0].dtype is dtypes.uint8 for v in views)


def test_outputs_and_inputs_are_never_planned(mem: Memory) -> None:
    x = mem.rand(8)
    a = (x + 1.0).contiguous()
    b = a * 2.0
    kg = check(mem, a, b)
    assert kg.planned_bytes == 0
    for view in kg.becomes.values():
        base = view
        while base.op is not Ops.BUFFER:
            base = base.src[0]
        assert base.dtype is not dtypes.uint8


def test_planner_places_disjoint_lifetimes_at_one_offset() -> None:
    bufs = [UOp.new_buffer("CPU", 100, dtypes.float32) for _ in range(4)]
    uses = [[bufs[0]], [bufs[0], bufs[1]], [bufs[1], bufs[2]], [bufs[2], bufs[3]]]
    plan = plan_memory(uses, set(bufs))
    offsets = [plan.views[b].arg[1] * 4 for b in bufs]
    assert offsets[0] == offsets[2] and offsets[1] == offsets[3] and offsets[0] != offsets[1]
    assert plan.arena_bytes == 2 * 512


# -- the schedule cache -----------------------------------------------------------------------------


def _program(mem: Memory) -> tuple[T, T, T]:
    a, b = mem.rand(4, 4), mem.rand(4, 4)
    return a, b, ((a @ b) + a).relu().contiguous() * 2.0


def test_same_structure_reuses_the_schedule(mem: Memory) -> None:
    cache = ScheduleCache()
    *_, first = _program(mem)
    *_, second = _program(mem)
    kg1 = get_kernel_graph(UOp.sink(first.uop), cache=cache)
    kg2 = get_kernel_graph(UOp.sink(second.uop), cache=cache)
    assert not kg1.cached and kg2.cached and cache.hits == 1
    assert [c.src[0] for c in kg1.kernels] == [c.src[0] for c in kg2.kernels]
    assert set(kg1.buffers).isdisjoint(kg2.buffers)  # fresh buffers each time
    got = run_graph(kg2, mem)
    np.testing.assert_allclose(got[0], second.np, rtol=1e-5, atol=1e-6)


def test_different_structure_misses(mem: Memory) -> None:
    cache = ScheduleCache()
    a = mem.rand(4)
    get_kernel_graph(UOp.sink((a + 1.0).uop), cache=cache)
    get_kernel_graph(UOp.sink((a * 1.0).uop), cache=cache)
    get_kernel_graph(UOp.sink((a + a).uop), cache=cache)
    assert cache.hits == 0 and cache.misses == 3


# -- symbolic shapes --------------------------------------------------------------------------------


def _symbolic(mem: Memory, n: int) -> tuple[UOp, np.ndarray]:
    v = UOp.variable("n", 1, 8)
    data = np.arange(16, dtype=np.float32)
    buf = mem.buf(data).uop  # a 1-D tensor over a buffer is the BUFFER itself
    x = buf.shrink(((0, v.bind(n) * 2),)).reshape((v.bind(n), 2))
    two = UOp.const(2.0, dtypes.float32, "CPU", (v.bind(n), 2))
    return (x * two).r(Ops.ADD, (1,)), data[: 2 * n].reshape(n, 2).sum(1, keepdims=True) * 2


def test_symbolic_kernel_serves_every_bound_value(mem: Memory) -> None:
    cache = ScheduleCache()
    out3, want3 = _symbolic(mem, 3)
    out5, want5 = _symbolic(mem, 5)
    kg3 = get_kernel_graph(UOp.sink(out3), cache=cache)
    kg5 = get_kernel_graph(UOp.sink(out5), cache=cache)
    assert kg5.cached and kg3.kernels[0].src[0] is kg5.kernels[0].src[0]
    (var,) = kg3.var_vals
    assert var.op is Ops.DEFINE_VAR and kg3.var_vals[var] == 3 and kg5.var_vals[var] == 5
    assert kg5.kernels[0].src[-1].unbind() == (var, 5)  # the value travels with the CALL
    np.testing.assert_allclose(run_graph(kg3, mem)[0], want3)
    np.testing.assert_allclose(run_graph(kg5, mem, run_on_emulator)[0], want5)


def test_symbolic_output_view_keeps_the_bound_variable(mem: Memory) -> None:
    out, _ = _symbolic(mem, 4)
    kg = get_kernel_graph(UOp.sink(out), cache=None)
    view = kg.becomes[out]
    assert view.shape[0].is_bound_var and view.shape[0].unbind()[1] == 4


def test_padding_by_a_symbolic_amount_closes_every_range(mem: Memory) -> None:
    v = UOp.variable("n", 1, 8)
    data = np.arange(6, dtype=np.float32)
    x = mem.buf(data.reshape(2, 3)).uop
    for n in (1, 4):
        out = x.pad(((v.bind(n), 0), (0, 0))) * UOp.const(
            2.0, dtypes.float32, "CPU", (2 + v.bind(n), 3)
        )
        kg = get_kernel_graph(UOp.sink(out), cache=None)
        ast = kg.kernels[0].src[0]
        ends = {r for e in ast.toposort() if e.op is Ops.END for r in e.src[1:]}
        assert {u for u in ast.toposort() if u.op is Ops.RANGE} == ends  # one RANGE per loop
        want = np.pad(data.reshape(2, 3), ((n, 0), (0, 0))) * 2
        np.testing.assert_allclose(run_graph(kg, mem, run_on_emulator)[0], want)


# -- empty buffers ----------------------------------------------------------------------------------


def test_pad_of_an_empty_buffer_reads_nothing_from_it(mem: Memory) -> None:
    empty, x = mem.buf(np.zeros((0, 3), np.float32)), mem.rand(2, 3)
    kg = check(mem, empty.pad(((0, 2), (0, 0))) + x)
    kg = check(mem, empty.pad(((1, 1), (0, 0))) * x, execute=run_on_emulator)
    (call,) = kg.kernels
    assert all(b.arg != 0 for b in call.src[1:])  # no parameter for the empty buffer
    check(mem, empty * 2.0 + 1.0)  # an empty output is still stored through its PARAM


# -- kernel forms -----------------------------------------------------------------------------------


def test_outputs_sharing_loops_are_one_kernel_with_two_stores(mem: Memory) -> None:
    a, b = mem.rand(3, 5), mem.rand(3, 5)
    kg = check(mem, a + b, (a * b).relu())
    (call,) = kg.kernels
    ast = call.src[0]
    assert len(ast.src) == 2 and all(e.op is Ops.END for e in ast.src)
    assert ast.src[0].src[1:] == ast.src[1].src[1:]  # the same loops


def test_every_kernel_ast_is_legal_and_named(mem: Memory) -> None:
    x = mem.rand(4, 6)
    kg = check(mem, x.softmax(), x.layernorm())
    for call in kg.kernels:
        verify_kernel_ast(call.src[0])
        assert isinstance(call.src[0].arg, KernelInfo) and call.src[0].arg.name


def test_copy_is_a_call_between_devices(mem: Memory) -> None:
    x = mem.rand(3)
    kg = check(mem, (x + 1.0).to("CPU:1"))
    kernel, copy = kg.calls
    assert copy.src[0].op is Ops.COPY and copy.src[0].arg == 12
    assert copy.src[1].device == "CPU:1" and copy.src[2] is kernel.src[1]


def test_custom_kernel_passes_through(mem: Memory) -> None:
    x = mem.rand(4)

    def fill(out: UOp) -> UOp:
        rng = UOp.range(4, 0)
        store = out.index(rng).store(UOp.const(7.0, dtypes.float32))
        return UOp.sink(store.end(rng), arg=KernelInfo("fill"))

    kernel = UOp(Ops.CUSTOM_KERNEL, dtypes.void, (x.uop,), fill)
    after = x.uop.after(kernel)
    kg = schedule(T(after, np.full(4, 7.0, np.float32)) + 1.0)
    assert kg.kernels[0].src[0].arg.name == "fill"
    (got,) = run_graph(kg, mem)
    np.testing.assert_allclose(got, np.full(4, 8.0))


def test_buffer_cap_splits_a_kernel(mem: Memory) -> None:
    xs = [mem.rand(5) for _ in range(8)]
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    kg = check(mem, total, max_buffers={"CPU": 4})
    assert len(kg.kernels) > 1
    assert all(len(c.src) - 1 <= 4 for c in kg.kernels)


def test_size_changing_bitcast_of_a_buffer_reads_it_through_a_view(mem: Memory) -> None:
    x = mem.rand(2, 4)
    kg = check(mem, (x.bitcast(dtypes.float16) * 1.0).bitcast(dtypes.int32) + 1)
    assert len(kg.kernels) == 2  # the float16 product is realized for the second bitcast
    views = [b for k in kg.kernels for b in k.src[1:] if b.op is Ops.BUFFER_VIEW]
    assert {dtypes.float16, dtypes.int32} <= {v.dtype for v in views}  # (and arena views)
    check(mem, (x.bitcast(dtypes.float16) * 1.0).bitcast(dtypes.int32) + 1, execute=run_on_emulator)


def test_size_changing_bitcast_of_a_computed_value_realizes_it(mem: Memory) -> None:
    x = mem.rand(4)
    kg = check(mem, (x + 1.0).bitcast(dtypes.float16).cast(dtypes.float32) * 2.0)
    assert len(kg.kernels) == 2


def test_bitcast_of_a_reshaped_realized_value_needs_no_copy(mem: Memory) -> None:
    x = (mem.rand(2, 4) * 2.0).contiguous().reshape((8,))
    kg = check(mem, x.bitcast(dtypes.uint8).cast(dtypes.int32) + 1)
    assert len(kg.kernels) == 2


def test_bitcast_to_bytes_of_a_slice(mem: Memory) -> None:
    x = mem.rand(3, 4)
    kg = check(mem, x.shrink(((1, 3), (0, 4))).bitcast(dtypes.uint8).cast(dtypes.int32) + 1)
    assert len(kg.kernels) == 2  # rows of a 2-D view: copied out first


def test_bitcast_of_an_aligned_run_of_bytes_reads_in_place(mem: Memory) -> None:
    raw = mem.buf(np.arange(24, dtype=np.uint8), dtypes.uint8)
    halves = raw.shrink(((4, 12),)).bitcast(dtypes.float16).cast(dtypes.float32) * 2.0
    kg = check(mem, halves, execute=run_on_emulator)
    assert len(kg.kernels) == 1
    (view,) = [b for b in kg.kernels[0].src[1:] if b.op is Ops.BUFFER_VIEW]
    assert view.arg == (4, 2)  # 4 halves starting 2 halves (4 bytes) in


def test_bitcast_of_a_misaligned_run_of_bytes_copies_it(mem: Memory) -> None:
    raw = mem.buf(np.arange(24, dtype=np.uint8), dtypes.uint8)
    kg = check(mem, raw.shrink(((3, 11),)).bitcast(dtypes.int32) + 1)
    assert len(kg.kernels) == 2


def test_bitcast_of_a_planned_intermediate(mem: Memory) -> None:
    x = (mem.rand(8) * 3.0).contiguous()
    y = (x.bitcast(dtypes.uint8).cast(dtypes.int32) * 2).sum()
    check(mem, y)


# -- pipeline, DEBUG, deep graphs -------------------------------------------------------------------


def test_stages_are_one_named_list() -> None:
    names = [name for name, _ in SCHEDULE_STAGES]
    assert names == [
        "prepare",
        "layout",
        "realize",
        "rangeify",
        "merge",
        "order",
        "memory",
        "assemble",
    ]


def test_debug_prints_kernel_count_and_summary(
    mem: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    x = mem.rand(4, 4)
    with Context(DEBUG=1):
        schedule(x.softmax())
    out = capsys.readouterr().out
    assert "schedule: 1 kernels" in out and "[0] r_4_4_4_4" in out


def test_deep_chain_schedules_without_recursion(mem: Memory) -> None:
    x = mem.rand(3)
    want = x.np.copy()
    u = x.uop
    for _ in range(3000):
        u = u + UOp.const(1.0, dtypes.float32, "CPU", (3,))
    kg = schedule(T(u, want + 3000))
    assert len(kg.kernels) == 1
