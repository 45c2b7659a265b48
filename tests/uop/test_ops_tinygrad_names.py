"""The rest of ``tinygrad.uop.ops`` on fusegrad: UOp's side tables (metadata, buffers), the
PARAM/program/call records, the rewrite engine's names (BottomUpGate, RewriteContext,
REWRITE_STACK_LIMIT, upat_interpret/upat_deferred_compile), rewrite tracking, the range
printers and the small IR helpers."""

from __future__ import annotations

import gc
import importlib
import pickle
import types

import pytest
from fusegrad.uop import (
    AxisType,
    Context,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    dtypes,
    graph_rewrite,
    symbolic,
)
from fusegrad.uop.rewrite import RewriteNotConverging

ops = importlib.import_module("fusegrad.uop.ops")

# -- UOp(..., metadata=, _buffer=): side tables ---------------------------------------------------


def test_metadata_is_a_side_table_not_identity() -> None:
    x = UOp.variable("meta_x", 0, 9)
    plain = UOp(Ops.ADD, x.dtype, (x, x))
    tagged = UOp(Ops.ADD, x.dtype, (x, x), metadata=("add", "test.py:1"))
    assert tagged is plain  # the same node: metadata is not part of identity
    assert plain.metadata == ("add", "test.py:1")
    assert ops.all_metadata[plain] == ("add", "test.py:1")
    assert UOp(Ops.MUL, x.dtype, (x, x)).metadata is None


def test_metadata_dropped_when_tracemeta_is_off() -> None:
    x = UOp.variable("meta_y", 0, 9)
    with Context(TRACEMETA=0):
        node = UOp(Ops.SUB, x.dtype, (x, x), metadata=("sub",))
    assert node.metadata is None


def test_buffer_side_table_holds_the_object_weakly_keyed() -> None:
    class FakeBuffer:
        pass

    fake = FakeBuffer()
    node = UOp(
        Ops.BUFFER, dtypes.float32, (UOp.unique(), UOp(Ops.DEVICE, arg="CPU")), 4, _buffer=fake
    )
    assert ops.buffers[node] is fake
    count = len(ops.buffers)
    del node
    gc.collect()
    assert len(ops.buffers) == count - 1  # the entry leaves with the node


def test_variable_takes_the_same_parameters() -> None:
    assert ops.Variable is UOp


# -- records -----------------------------------------------------------------------------------


def test_param_arg_round_trips_a_buffer_param() -> None:
    p = UOp.param(2, dtypes.float32.ptr(16))
    rec = ops.ParamArg.of(p)
    assert rec == ops.ParamArg(2, dtypes.float32.ptr(16))
    assert UOp.param(rec) is p and rec.to_uop() is p
    with pytest.raises(ValueError, match="slot 2, not 3"):
        ops.ParamArg.of(p, slot=3)


def test_param_arg_round_trips_a_scalar_param() -> None:
    v = UOp.variable("n", 1, 64, dtypes.int32, multiple_of=4, param=True)
    rec = ops.ParamArg.of(v, slot=1)
    assert (rec.name, rec.vmin_vmax, rec.multiple_of) == ("n", (1, 64), 4)
    assert UOp.param(rec) is v
    with pytest.raises(ValueError, match="needs slot"):
        ops.ParamArg.of(v)
    with pytest.raises(ValueError, match="expected a PARAM"):
        ops.ParamArg.of(UOp.const(1))
    with pytest.raises(ValueError, match="not supported"):
        ops.ParamArg(0, dtypes.float32.ptr(4), volatile=True).to_uop()


def test_program_info_reads_a_program_spec() -> None:
    renderer = pytest.importorskip("fusegrad.codegen.renderer")
    spec = renderer.ProgramSpec(
        "E_4",
        "src",
        "CPU",
        UOp.sink(),
        buffers=(
            renderer.BufferParam(0, dtypes.float32, 4, read=False, written=True),
            renderer.BufferParam(1, dtypes.float32, 4, read=True, written=False),
        ),
        global_size=(4, 1, 1),
    )
    info = ops.ProgramInfo.of(spec)
    assert info == ops.ProgramInfo("E_4", (4, 1, 1), None, (), (0, 1), (0,), (1,), "CPU")


def test_call_info_of_a_call() -> None:
    kernel = UOp.sink(arg=ops.KernelInfo("E_8"))
    call = UOp(Ops.CALL, dtypes.void, (kernel,))
    assert ops.CallInfo.of(call) == ops.CallInfo(name="E_8")
    named = UOp(Ops.CALL, dtypes.void, (kernel,), ops.CallInfo(name="mine", aux=3))
    assert ops.CallInfo.of(named).aux == 3
    with pytest.raises(ValueError, match="expected a CALL"):
        ops.CallInfo.of(kernel)


# -- the rewrite engine ---------------------------------------------------------------------------


def test_bottom_up_gate_keeps_the_node_and_skips_its_sources() -> None:
    x = UOp.variable("gx", 0, 9)
    inner = x + 0
    guarded = UOp(Ops.NOOP, x.dtype, (inner,))

    def gate(n: UOp) -> UOp | None:
        raise ops.BottomUpGate

    pm = PatternMatcher([(UPat(Ops.NOOP, name="n"), gate)]) + symbolic
    root = UOp.sink(guarded, x * 1)
    out = graph_rewrite(root, pm, bottom_up=True)
    assert out is UOp.sink(guarded, x)  # x*1 simplified, the gated NOOP (with x+0) untouched
    assert graph_rewrite(root, symbolic, bottom_up=True) is UOp.sink(
        UOp(Ops.NOOP, x.dtype, (x,)), x
    )


def test_rewrite_context_is_the_engine() -> None:
    x = UOp.variable("rx", 0, 9)
    assert ops.RewriteContext(symbolic, None).unified_rewrite(x + 0) is x
    assert ops.RewriteContext(None, symbolic).unified_rewrite(x * 1) is x
    with pytest.raises(ValueError, match="one matcher"):
        ops.RewriteContext(symbolic, symbolic)
    with pytest.raises(ValueError, match="enter_calls=False"):
        ops.RewriteContext(symbolic, None, enter_calls=False)


def test_rewrite_stack_limit_stops_a_growing_rewrite() -> None:
    def bump(x: UOp, c: UOp) -> UOp:  # x + c -> x + (c+1): a new node each time, never done
        return UOp(Ops.ADD, x.dtype, (x, UOp.const(c.arg + 1, c.dtype)))

    grow = PatternMatcher([(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("c"))), bump)])
    x = UOp.variable("sx", 0, 1)
    limit = pytest.raises(RewriteNotConverging, match="REWRITE_STACK_LIMIT=50")
    with Context(REWRITE_STACK_LIMIT=50), limit:
        graph_rewrite(x + 1, grow)


def test_sentinel_is_the_engine_marker() -> None:
    assert ops.SENTINEL is importlib.import_module("fusegrad.uop.rewrite")._SOURCES_DONE


def test_upat_interpret_and_deferred_compile_match_like_the_matcher() -> None:
    x = UOp.variable("ux", 0, 9)
    pat, fn = UPat.var("x") + 0, lambda x: x
    assert ops.upat_interpret(pat, fn)(x + 0) is x
    assert ops.upat_interpret(pat, fn)(x + 1) is None
    entry: list[object] = [pat, None]
    entry[-1] = ops.upat_deferred_compile(pat, fn, entry)
    first = entry[-1]
    assert first(x + 0) is x  # type: ignore[operator]
    assert entry[-1] is not first  # compiled and swapped in
    assert entry[-1](x + 0) is x and entry[-1](x * 2) is None  # type: ignore[operator]


def test_recursive_property_computes_deep_graphs_iteratively() -> None:
    class Depth:
        @ops.recursive_property
        def depth(self: UOp) -> int:
            return 1 + max((s.depth for s in self.src), default=0)  # type: ignore[attr-defined]

    x = UOp.variable("dx", 0, 9)
    for _ in range(3000):  # deeper than the recursion limit
        x = x + 1
    assert Depth.depth.__get__(x, UOp) == 3001


# -- tracking -------------------------------------------------------------------------------------


def test_graph_rewrite_takes_args_and_kwargs_and_tracks_in_a_group() -> None:
    x = UOp.variable("tx", 0, 9)

    @ops.rewrite_group(name=lambda e: f"simp {e.render(simplify=False)}")
    def simp(e: UOp) -> UOp:
        return graph_rewrite(e, symbolic, name="sym")

    with Context(TRACK_MATCH_STATS=2):
        assert simp(x + 0) is x
    assert ops.tracked_keys[-1] == "simp tx+0"
    (tracked,) = ops.tracked_ctxs[-1]
    assert (tracked.name, tracked.bottom_up, tracked.walk, tracked.depth) == (
        "sym",
        False,
        False,
        0,
    )
    assert tracked.loc[0].endswith("test_ops_tinygrad_names.py")
    ((before, after, loc, _),) = tracked.matches
    assert ops.uop_fields[after][0] is Ops.DEFINE_VAR and ops.uop_fields[before][0] is Ops.ADD
    assert loc[0].endswith("symbolic.py")
    trace = ops.RewriteTrace.capture()
    assert pickle.loads(pickle.dumps(trace)).keys[-1] == "simp tx+0"
    n = len(ops.tracked_keys)
    assert simp(x + 0) is x  # tracking off: nothing recorded
    assert len(ops.tracked_keys) == n and not ops.active_group and not ops.active_rewrites


def test_rewrite_group_replay_capture() -> None:
    tracking = importlib.import_module("fusegrad.uop.tracking")

    @ops.rewrite_group(replay=True)
    def double(e: UOp) -> UOp:
        return e * 2

    x = UOp.variable("px", 0, 9)
    with Context(CAPTURE_PROCESS_REPLAY=1):
        double(x)
    name, blob = tracking.replay_captures[-1]
    args, kwargs, ret = pickle.loads(blob)
    assert name == "double" and args == (x,) and kwargs == {} and ret is x * 2


def test_tracked_pattern_matcher_counts_matches() -> None:
    pat = UPat.var("x") + 0
    pm = ops.TrackedPatternMatcher([(pat, lambda x: x)])
    x = UOp.variable("mx", 0, 9)
    assert graph_rewrite((x + 0) * (x + 1), pm) is x * (x + 1)
    matches, tries, seconds = pm.match_stats[pat]
    assert (matches, tries) == (1, 2) and seconds >= 0
    assert isinstance(pm + PatternMatcher([]), ops.TrackedPatternMatcher)


def test_add_trace_group_and_ucount() -> None:
    ops.add_trace_group("manual")
    assert ops.tracked_keys[-1] == "manual" and ops.tracked_ctxs[-1] == []
    first = next(ops.ucount)
    assert next(ops.ucount) == first + 1


# -- printing and IR helpers -----------------------------------------------------------------------


def test_range_printing() -> None:
    r0, r2 = UOp.range(4, 0), UOp.range(8, 2, AxisType.REDUCE)
    assert ops.range_str(r0) == "0L" and ops.range_str(r2) == "2R"
    assert ops.range_str(r2, color=True) == "\x1b[31m2R\x1b[0m"
    assert ops.multirange_str([r0, r2]) == "[0L,2R]"
    assert ops.multirange_str([r0], color=True, pad=8) == "[\x1b[97m0L\x1b[0m]    "
    assert set(ops.axis_letters) == set(AxisType) == set(ops.axis_colors) == set(ops.axis_to_pos)
    assert sorted([r2, r0], key=lambda r: ops.axis_to_pos[r.arg[1]]) == [r0, r2]
    red = (r0 + r2).reduce(r2)
    assert red.src[ops.range_start[red.op] :] == (r2,)
    with pytest.raises(ValueError, match="expected a RANGE"):
        ops.range_str(UOp.const(1))


def test_shape_to_shape_arg() -> None:
    assert ops.shape_to_shape_arg((2, 3)) is UOp.vconst((2, 3), dtypes.weakint.vec(2))
    n = UOp.variable("n", 1, 8)
    vec = ops.shape_to_shape_arg((n, 4))
    assert vec.op is Ops.VECTORIZE and vec.src == (n, UOp.const(4)) and vec.dtype.count == 2
    assert ops.shape_to_shape_arg((5,)) is UOp.const(5)
    with pytest.raises(ValueError, match="0-d"):
        ops.shape_to_shape_arg(())


def test_dtype_from_uop_matches_what_alu_builds() -> None:
    x = UOp.variable("x", 0, 9, dtypes.int8)
    f = UOp.variable("f", 0, 9, dtypes.int32)
    for node in (x + f, x < f, (x < 3).where(x, f), x * 2, x << 1):
        assert ops.dtype_from_uop(node.op, node.src, node.arg) is node.dtype
    assert ops.dtype_from_uop(Ops.CONST, (), 1.5) is dtypes.weakfloat
    assert ops.dtype_from_uop(Ops.SINK, (x,), None) is dtypes.void
    assert ops.dtype_from_uop(Ops.CAST, (x,), None) is None


def test_deconstruct_function_rebuilds_closures_and_globals() -> None:
    scale = 3

    def fn(v: int) -> int:
        return types.SimpleNamespace(v=v * scale).v

    parts = ops.deconstruct_function(fn)
    assert "types" in parts[1] and "pytest" not in parts[1]  # only the globals it reads
    assert types.FunctionType(*parts)(4) == 12
    with pytest.raises(TypeError, match="expected a Python function"):
        ops.deconstruct_function(len)


def test_gate_kernel_sink_stops_toposort_at_kernels() -> None:
    x = UOp.variable("kx", 0, 9)
    kernel = UOp.sink(x + 1, arg=ops.KernelInfo("k"))
    outer = UOp.sink(UOp(Ops.CALL, dtypes.void, (kernel,)))
    listed = outer.toposort(gate=ops.gate_kernel_sink)
    assert kernel in listed and x not in listed
    assert x in outer.toposort()


def test_pm_contiguous_view_offset() -> None:
    buf = UOp.new_buffer("CPU", 48, dtypes.float32, num=11)
    t = buf.reshape((2, 4, 6))
    row = graph_rewrite(t.shrink(((1, 2), (1, 3), (0, 6))), ops.pm_contiguous_view_offset)
    assert row.op is Ops.RESHAPE and row.arg == (1, 2, 6)
    assert row.src[0] is UOp(Ops.BUFFER_VIEW, dtypes.float32, (buf,), (12, 30))
    strided = t.shrink(((0, 2), (1, 2), (0, 6)))  # two runs: not one view
    assert graph_rewrite(strided, ops.pm_contiguous_view_offset) is strided
    cols = t.shrink(((0, 1), (0, 4), (1, 3)))
    assert graph_rewrite(cols, ops.pm_contiguous_view_offset) is cols


def test_disallow_broadcast_raises_for_different_shapes() -> None:
    a = UOp.new_buffer("CPU", 6, dtypes.float32, num=21).reshape((2, 3))
    b = UOp.new_buffer("CPU", 3, dtypes.float32, num=22).reshape((3,))
    assert (a + b).shape == (2, 3)
    with Context(DISALLOW_BROADCAST=1):
        with pytest.raises(RuntimeError, match="DISALLOW_BROADCAST"):
            _ = a + b
        assert (a + 1.0).shape == (2, 3)  # a scalar still spreads
        assert (a + a).shape == (2, 3)
