"""Assign: writes into the existing buffer (also through views), hazards, ordering."""

from __future__ import annotations

import numpy as np
from fusegrad.uop import Ops, UOp, dtypes
from schedule_testing import Memory, T, run_graph, run_on_emulator, schedule


def _buffer(t: T) -> UOp:
    u = t.uop
    while u.op is not Ops.BUFFER:
        u = u.src[0]
    return u


def _new_buffer_count(kg: object) -> int:
    return len(kg.buffers)  # type: ignore[attr-defined]


def test_assign_add_one_is_one_kernel_without_new_buffer(mem: Memory) -> None:
    a = mem.rand(4, 4)
    want = a.np + 1
    kg = schedule(a.assign(a + 1.0))
    assert len(kg.kernels) == 1 and _new_buffer_count(kg) == 0
    (out,) = run_graph(kg, mem)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(mem.arrays[_buffer(a)].reshape(4, 4), want, rtol=1e-6)


def test_assign_becomes_the_target_view(mem: Memory) -> None:
    a = mem.rand(4, 4)
    after = a.assign(a * 2.0)
    kg = schedule(after)
    assert kg.becomes[after.uop] is a.uop


def test_assign_into_shrink_view_writes_only_the_window(mem: Memory) -> None:
    a, b = mem.rand(5, 3), mem.rand(2, 3)
    want = a.np.copy()
    want[1:3] = b.np
    kg = schedule(a.shrink(((1, 3), (0, 3))).assign(b))
    assert len(kg.kernels) == 1 and _new_buffer_count(kg) == 0
    run_graph(kg, mem)
    np.testing.assert_array_equal(mem.arrays[_buffer(a)].reshape(5, 3), want)


def test_assign_through_bitcast_view(mem: Memory) -> None:
    a = mem.rand(6)
    v = mem.buf(np.arange(6), dtypes.int32)
    kg = schedule(a.bitcast(dtypes.int32).assign(v + 1))
    assert len(kg.kernels) == 1 and _new_buffer_count(kg) == 0
    run_graph(kg, mem)
    np.testing.assert_array_equal(mem.arrays[_buffer(a)].view(np.int32), np.arange(6) + 1)


def test_assign_of_own_transpose_goes_through_a_temporary(mem: Memory) -> None:
    a = mem.rand(4, 4)
    want = a.np.T.copy()
    kg = schedule(a.assign(a.T))
    assert len(kg.kernels) == 2
    run_graph(kg, mem, run_on_emulator)
    np.testing.assert_array_equal(mem.arrays[_buffer(a)].reshape(4, 4), want)


def test_assign_of_overlapping_shrink_reads_old_values(mem: Memory) -> None:
    a = mem.rand(6)
    want = a.np.copy()
    want[1:6] = a.np[0:5]
    kg = schedule(a.shrink(((1, 6),)).assign(a.shrink(((0, 5),)) * 1.0))
    assert len(kg.kernels) == 2
    run_graph(kg, mem)
    np.testing.assert_array_equal(mem.arrays[_buffer(a)], want)


def test_assign_of_reduction_of_target_reads_old_values(mem: Memory) -> None:
    a = mem.rand(3, 4)
    want = a.np + a.np.sum(0, keepdims=True)
    kg = schedule(a.assign(a + a.sum(0, keepdim=True)))
    run_graph(kg, mem)
    np.testing.assert_allclose(mem.arrays[_buffer(a)].reshape(3, 4), want, rtol=1e-5)


def test_reader_of_old_value_runs_before_the_assign(mem: Memory) -> None:
    a = mem.rand(4)
    old = a * 2.0  # reads a before the assign
    want_old, want_new = a.np * 2, a.np + 10
    kg = schedule(a.assign(a + 10.0), old)
    assert len(kg.kernels) == 1  # the old-value read and the assign share one loop
    got = run_graph(kg, mem)
    np.testing.assert_allclose(got[1], want_old, rtol=1e-6)
    np.testing.assert_allclose(mem.arrays[_buffer(a)], want_new, rtol=1e-6)


def test_reader_of_new_value_runs_after_the_assign(mem: Memory) -> None:
    a = mem.rand(4)
    new = a.assign(a + 10.0)
    doubled = new * 2.0
    kg = schedule(doubled, new)
    got = run_graph(kg, mem)
    np.testing.assert_allclose(got[0], (a.np + 10) * 2, rtol=1e-6)


def test_chained_assigns_apply_in_order(mem: Memory) -> None:
    a = mem.rand(4)
    first = a.assign(a + 1.0)
    second = T(first.uop, first.np).assign(T(first.uop, first.np) * 3.0)
    kg = schedule(second)
    assert len(kg.kernels) == 2
    run_graph(kg, mem)
    np.testing.assert_allclose(mem.arrays[_buffer(a)], (a.np + 1) * 3, rtol=1e-6)


def test_setitem_form_after_of_whole_buffer_store_into_view(mem: Memory) -> None:
    # x[1:3] = v as the frontend builds it: AFTER(x, STORE(x[1:3], v)), the AFTER being all of x
    a = mem.rand(4)
    window = a.uop.shrink(((1, 3),))
    value = UOp.const(9.0, dtypes.float32, "CPU", (2,))
    after = a.uop.after(window.store(value))
    want = a.np.copy()
    want[1:3] = 9.0
    kg = schedule(T(after, want))
    assert len(kg.kernels) == 1 and len(kg.buffers) == 0
    (got,) = run_graph(kg, mem, run_on_emulator)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(mem.arrays[_buffer(a)], want)


def test_kernel_reading_old_and_new_value_snapshots_the_old(mem: Memory) -> None:
    a = mem.rand(3, 4)
    new = a.assign(a + 10.0)
    mixed = T(new.uop, new.np) * 2.0 + a.T.T * 3.0  # new value and (a view of) the old one
    want_new = a.np + 10
    kg = schedule(mixed, new)
    got = run_graph(kg, mem)
    np.testing.assert_allclose(got[0], want_new * 2 + a.np * 3, rtol=1e-6)
    np.testing.assert_allclose(mem.arrays[_buffer(a)].reshape(3, 4), want_new, rtol=1e-6)


def test_old_and_new_value_read_directly_copies_the_old(mem: Memory) -> None:
    a = mem.rand(4)  # 1-D: the old value is the BUFFER itself, read as it is
    want_new = a.np + 1
    new = a.assign(a + 1.0)
    kg = schedule(T(new.uop, new.np) + a)
    got = run_graph(kg, mem, run_on_emulator)
    np.testing.assert_allclose(got[0], want_new + a.np, rtol=1e-6)
    np.testing.assert_allclose(mem.arrays[_buffer(a)], want_new, rtol=1e-6)
    assert len(kg.kernels) == 2  # copy of the old value; the assign and the sum in one kernel


def test_two_assigns_and_both_values_read(mem: Memory) -> None:
    a = mem.rand(4)
    first = a.assign(a + 1.0)
    second = T(first.uop, first.np).assign(T(first.uop, first.np) * 3.0)
    both = T(second.uop, second.np) - T(first.uop, first.np)  # after the 2nd minus after the 1st
    kg = schedule(both)
    (got,) = run_graph(kg, mem)
    np.testing.assert_allclose(got, (a.np + 1) * 3 - (a.np + 1), rtol=1e-6)
