"""tinygrad's engine internals on fusegrad's LINEARs of CALLs (issue #18): graph calls
(``create_graph_call``, ``graph_split_rewrite``) run as one device-graph submission each,
``prune_linear``, ``CapturedJit``'s constructor replayed by ``TinyJit(captured=...)``, and
``DepsTracker`` (directly, and through ``MultiGraphRunner.deps``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor, TinyJit
from fusegrad.device import DepsTracker
from fusegrad.engine import synchronize
from fusegrad.engine.buffers import runtime_buffer
from fusegrad.engine.jit import (
    CapturedJit,
    JitError,
    MultiGraphRunner,
    create_graph_call,
    graph_split_rewrite,
    prune_linear,
)
from fusegrad.engine.linear import call_buffers, is_graph_call, run_graph_linear
from fusegrad.engine.realize import buffer_of, compile_linear, read_buffer, run_linear
from fusegrad.helpers import Context
from fusegrad.runtime import Buffer, Device, ProfileGraphEvent, Signal, WaitCmd
from fusegrad.runtime.profiler import device_events
from fusegrad.uop import Ops, UOp, dtypes

pytestmark = pytest.mark.kernels


def _values(buf: UOp, n: int) -> list[float]:
    synchronize()
    return [float(v) for v in read_buffer(buf)[:n]]


def _buf(t: Tensor) -> UOp:
    found = buffer_of(t.uop)
    assert found is not None
    return found


def _require_graphs() -> None:
    """Skip where CPU devices run Python rings (HCQ_COMPILED=0): no device graph to batch."""
    if Device["CPU"].graph is None or Device["CPU:1"].graph is None:
        pytest.skip("the CPU devices run Python rings here: no graph")


def _chain(x: Tensor) -> Tensor:
    """Four kernels in a row: ((x * 2) + 1) ** 2 - 3."""
    y = (x * 2).contiguous() + 1
    return (y.contiguous() * y.contiguous()).contiguous() - 3


def _two_devices() -> tuple[UOp, list[float]]:
    """A LINEAR: two kernels on CPU:1, a copy to CPU, two kernels on CPU; its expected
    output (the last CALL's first buffer)."""
    src = np.array([1.0, 2.0, 3.0], np.float32)
    a = Tensor(src, device="CPU:1").realize()
    b = ((a * 2).contiguous() + 1).contiguous()
    c = ((b.to("CPU") * 3).contiguous() - 1).contiguous()
    want = [float(v) for v in (src * 2 + 1) * 3 - 1]
    return c.schedule_linear(), want


def _output(linear: UOp) -> UOp:
    return call_buffers(linear.src[-1])[0]


# -- graph calls ---------------------------------------------------------------------------------


def test_create_graph_call_holds_the_batch_and_its_buffers_in_first_use_order() -> None:
    x = Tensor(np.ones(4, np.float32)).realize()
    linear = _chain(x).schedule_linear()
    calls = list(linear.src)
    call = create_graph_call(calls)
    assert call.op is Ops.CALL and call.src[0] == UOp(Ops.LINEAR, dtypes.void, tuple(calls))
    order = list(dict.fromkeys(b for c in calls for b in call_buffers(c)))
    assert list(call.src[1:]) == order and order[0] is not _buf(x)
    assert _buf(x) in order


def test_create_graph_call_refuses_copies_and_mixed_devices() -> None:
    linear, _ = _two_devices()
    copy = next(c for c in linear.src if c.src[0].op is Ops.COPY)
    with pytest.raises(ValueError, match="kernel CALLs only"):
        create_graph_call([copy])
    kernels = [c for c in linear.src if c.src[0].op is Ops.SINK]
    with pytest.raises(ValueError, match="not one device"):
        create_graph_call(kernels)
    with pytest.raises(ValueError, match="empty"):
        create_graph_call([])


def test_graph_split_rewrite_batches_runs_per_device_and_size() -> None:
    _require_graphs()
    linear, _ = _two_devices()
    kinds = [c.src[0].op for c in linear.src]
    assert kinds == [Ops.SINK, Ops.SINK, Ops.COPY, Ops.SINK, Ops.SINK]
    split = graph_split_rewrite(linear)
    assert [c.src[0].op for c in split.src] == [Ops.LINEAR, Ops.COPY, Ops.LINEAR]
    assert split.src[0].src[0].src == linear.src[:2] and split.src[2].src[0].src == linear.src[3:]
    # batches of at most one kernel: nothing to batch, the LINEAR as it was
    assert graph_split_rewrite(linear, max_batch_size=1) is linear
    x = Tensor(np.ones(4, np.float32)).realize()
    four = _chain(x).schedule_linear()
    assert len(four.src) == 4
    assert [len(c.src[0].src) for c in graph_split_rewrite(four, 2).src] == [2, 2]
    assert [is_graph_call(c) for c in graph_split_rewrite(four, 3).src] == [True, False]


def _graph_events(run: Any) -> list[ProfileGraphEvent]:
    before = len(device_events)
    with Context(PROFILE=1):
        run()
        synchronize()
    return [e for e in device_events[before:] if isinstance(e, ProfileGraphEvent)]


def test_graph_calls_run_as_one_graph_submission_each() -> None:
    _require_graphs()
    linear, want = _two_devices()
    split = graph_split_rewrite(linear)
    events = _graph_events(lambda: run_graph_linear(split))
    assert _values(_output(linear), 3) == want
    # one graph event per graph call, holding its kernels (recorded as the rings run them)
    assert sorted((e.ents[0].device, len(e.ents)) for e in events) == [("CPU", 2), ("CPU:1", 2)]


def test_a_graph_call_takes_its_kernels_bound_variables() -> None:
    _require_graphs()
    x = Tensor(np.arange(8, dtype=np.float32)).realize()
    n = UOp.variable("n", 1, 8).bind(4)
    plain, var_vals = ((x[:n] * 2).contiguous() + 1).contiguous().linear_with_vars()
    split = graph_split_rewrite(plain)
    (call,) = split.src
    assert var_vals == {"n": 4} and [s for s in call.src if s.op is Ops.AFTER] == [n]
    out = _output(plain)
    run_graph_linear(split)
    assert _values(out, 4) == [1.0, 3.0, 5.0, 7.0]
    run_graph_linear(split, {"n": 6})  # the graph's launches re-encoded for the new value
    assert _values(out, 6) == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]


def test_multi_graph_runner_runs_graph_calls_with_new_inputs() -> None:
    _require_graphs()
    x = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    plain = _chain(x).schedule_linear()
    runner = MultiGraphRunner(graph_split_rewrite(plain), (_buf(x),))
    assert runner.kernels == 4 and runner.plan is not None  # one graph call: one plan
    events = _graph_events(runner)
    assert _values(_output(plain), 2) == [6.0, 22.0] and [len(e.ents) for e in events] == [4]
    other = Tensor(np.array([0.0, 3.0], np.float32)).realize()
    runner(_buf(other))
    assert _values(_output(plain), 2) == [-2.0, 46.0]


def test_compile_linear_plan_of_graph_calls_has_every_kernel() -> None:
    _require_graphs()
    x = Tensor(np.ones(2, np.float32)).realize()
    linear = _chain(x).schedule_linear()
    plan = compile_linear(graph_split_rewrite(linear))
    assert plan.kernels == len(linear.src) == 4


def test_run_linear_runs_graph_calls() -> None:
    _require_graphs()
    linear, want = _two_devices()
    events = _graph_events(lambda: run_linear(graph_split_rewrite(linear)))
    assert _values(_output(linear), 3) == want
    assert [len(e.ents) for e in events] == [2, 2]


# -- prune_linear --------------------------------------------------------------------------------


def test_prune_linear_keeps_what_depends_on_the_inputs() -> None:
    x = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    w = Tensor(np.array([10.0, 20.0], np.float32)).realize()
    scaled = (w * 2).contiguous()  # depends on the weight only: runs once
    linear = (x + scaled).contiguous().schedule_linear()
    assert len(linear.src) == 2
    pruned, onetime = prune_linear(linear, {_buf(x)})
    assert onetime.src == linear.src[:1] and pruned.src == linear.src[1:]
    run_linear(onetime)
    run_linear(pruned)
    out = _output(linear)
    assert _values(out, 2) == [21.0, 42.0]
    synchronize()
    runtime_buffer(_buf(x)).copyin(memoryview(np.array([5.0, 6.0], np.float32)).cast("B"))
    run_linear(pruned)  # the weight's kernel is not run again: its result is kept
    assert _values(out, 2) == [25.0, 46.0]


def test_prune_linear_keeps_a_call_writing_what_the_kept_calls_read() -> None:
    x = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    w = Tensor(np.array([10.0, 20.0], np.float32)).realize()
    reads_w = (x + w).contiguous().schedule_linear()
    writes_w = w.assign(Tensor(np.array([7.0, 7.0], np.float32))).schedule_linear()
    both = UOp(Ops.LINEAR, dtypes.void, (*reads_w.src, *writes_w.src))
    pruned, onetime = prune_linear(both, {_buf(x)})
    # the assign reads no input, but it overwrites the weight the kept call reads
    assert pruned.src == both.src and onetime.src == ()
    alone, once = prune_linear(writes_w, {_buf(x)})
    assert alone.src == () and once.src == writes_w.src


# -- CapturedJit ---------------------------------------------------------------------------------


def _linear_capture() -> tuple[CapturedJit, Tensor]:
    """A CapturedJit from tinygrad's constructor: out = (x * 2 + w).sum(1) over a (2, 3) x."""
    x = Tensor(np.zeros((2, 3), np.float32)).realize()
    w = Tensor(np.full((2, 3), 10.0, np.float32)).realize()
    linear, _ = (x * 2 + w).contiguous().sum(1).linear_with_vars()
    ret = Tensor(_output(linear))
    info = [(x.uop, (), x.dtype, x.device)]
    return CapturedJit(ret, graph_split_rewrite(linear), [0], info), w


def test_captured_jit_from_a_linear_replays_with_new_inputs() -> None:
    _require_graphs()
    captured, w = _linear_capture()
    jit = TinyJit(captured=captured)
    assert jit.captured and jit.plan is captured.plan and captured.expected_names == [0]
    results = []
    for i in range(3):
        results.append(jit(Tensor(np.full((2, 3), float(i), np.float32))))
    assert [r.tolist() for r in results] == [[30.0, 30.0], [36.0, 36.0], [42.0, 42.0]]
    assert w.tolist() == [[10.0] * 3] * 2  # the weight is the LINEAR's own buffer
    with pytest.raises(JitError, match="shape"):
        jit(Tensor(np.zeros((3, 2), np.float32)))


def test_captured_jit_checks_its_arguments() -> None:
    captured, _ = _linear_capture()
    with pytest.raises(ValueError, match="names"):
        CapturedJit(captured.ret, captured._linear, [0, 1], captured.expected_input_info)
    with pytest.raises(TypeError, match="CapturedJit"):
        TinyJit(captured=object())
    with pytest.raises(JitError, match="no function"):
        TinyJit()(Tensor([1.0]))


def test_a_tinyjit_capture_replays_in_another_tinyjit() -> None:
    @TinyJit
    def triple(a: Tensor) -> Tensor:
        return (a * 3).realize()

    for i in range(3):
        triple(Tensor([float(i)]))
    assert triple.captured_plan is not None and triple.captured_plan._linear is None
    again = TinyJit(captured=triple.captured_plan)
    assert again(Tensor([5.0])).tolist() == [15.0]


# -- DepsTracker ---------------------------------------------------------------------------------


def test_deps_tracker_orders_reads_after_writes_and_writes_after_both() -> None:
    q1, q2, q3 = Signal(name="q1"), Signal(name="q2"), Signal(name="q3")
    deps = DepsTracker()
    assert deps.wait_for([], ["a"], q1, 1) == []
    assert deps.wait_for(["a"], ["b"], q2, 1) == [(q1, 1)]  # read after write
    assert deps.wait_for(["a"], ["c"], q3, 1) == [(q1, 1)]
    # write after read: both readers (and the last writer, same signal as none of them)
    assert sorted(deps.wait_for([], ["a"], q1, 2), key=lambda p: p[0].name) == [
        (q1, 1), (q2, 1), (q3, 1),
    ]  # fmt: skip
    assert deps.wait_for(["a"], [], q2, 2) == [(q1, 2)]  # only the new writer now
    q1.value = 2  # reached: nothing to wait for
    assert deps.deps(["a"], []) == []


def test_deps_tracker_keys_views_by_their_base_and_skips_its_own_queue() -> None:
    base = Buffer("CPU", 8, dtypes.float32)
    view = base.view(4, dtypes.float32, 16)
    mine, other = Signal(name="mine"), Signal(name="other")
    deps = DepsTracker()
    deps.add([], [view], other, 3)
    assert deps.deps([base], []) == [(other, 3)]
    queue = Device["CPU"].queue()
    deps.wait(queue, [base], [], mine, 1)
    deps.wait(queue, [], [base], other, 4)  # waits for its reader on ``mine``, not itself
    assert queue.commands == [WaitCmd(other, 3), WaitCmd(mine, 1)]


def test_multi_graph_runner_deps_follow_the_buffers_across_devices() -> None:
    _require_graphs()
    linear, want = _two_devices()
    runner = MultiGraphRunner(graph_split_rewrite(linear))
    # CPU:1 graph, the copy to CPU (reads its result), the CPU graph (after the copy on its
    # own device's ring: no cross-device wait)
    assert runner.deps == [[], [0], []]
    runner()
    assert _values(_output(linear), 3) == want
