"""The UOp: hash-consing (identity, weak eviction, pickling, threads), constructors, graph
properties and variable binding."""

from __future__ import annotations

import copy
import gc
import pickle
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterator

import pytest
from fusegrad.uop import AxisType, Invalid, Ops, UOp, dtypes, resolve
from fusegrad.uop.uop import interned_count


def fresh_name() -> str:
    """A Variable name no other test uses (so its nodes are new to the intern table)."""
    fresh_name.counter += 1  # type: ignore[attr-defined]
    return f"fresh{fresh_name.counter}"  # type: ignore[attr-defined]


fresh_name.counter = 0  # type: ignore[attr-defined]


# -- interning -------------------------------------------------------------------------------------------


def test_equal_structure_is_the_same_object() -> None:
    x = UOp.variable("x", 0, 10)
    a = UOp(Ops.ADD, dtypes.weakint, (x, UOp.const(1, dtypes.weakint)))
    b = UOp(Ops.ADD, dtypes.weakint, (UOp.variable("x", 0, 10), UOp.const(1, dtypes.weakint)))
    assert a is b
    assert a == b and hash(a) == hash(b)
    assert (x + 1) is (x + 1)
    assert {x + 1: "v"}[x + 1] == "v"


def test_each_field_tells_nodes_apart() -> None:
    x = UOp.variable("x", 0, 10)
    base = UOp(Ops.NEG, dtypes.weakint, (x,))
    assert UOp(Ops.NEG, dtypes.int32, (x,)) is not base
    assert UOp(Ops.TRUNC, dtypes.weakint, (x,)) is not base
    assert UOp(Ops.NEG, dtypes.weakint, (x,), arg=1) is not base
    assert UOp(Ops.NEG, dtypes.weakint, (x,), tag="t") is not base
    assert UOp(Ops.NEG, dtypes.weakint, (x + 0,)) is not base


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 1.0),
        (1, True),
        (0, False),
        (0.0, -0.0),
        ((1, 2), (1.0, 2)),
        (("x", 0, 1), ("x", 0.0, 1)),
    ],
)
def test_args_equal_in_python_but_of_different_type_are_different_nodes(
    a: object, b: object
) -> None:
    # regression: args compared with ==, so UNIQUE(1) and UNIQUE(True), or a Variable with
    # bounds (0, 1) and one with (0.0, 1), were the same node
    ua, ub = UOp(Ops.UNIQUE, arg=a), UOp(Ops.UNIQUE, arg=b)
    assert ua is not ub
    assert ua.arg == a and type(ub.arg) is type(b)
    assert UOp(Ops.NOOP, tag=a) is not UOp(Ops.NOOP, tag=b)


def test_float_variable_bounds_keep_their_type() -> None:
    # regression for the collision above, as it showed: the second variable got int bounds
    assert UOp.variable("f", 0, 1, dtypes.float32).arg == ("f", 0, 1)
    assert UOp.variable("f", 0.0, 1.0, dtypes.float32).arg[1:] == (0.0, 1.0)
    assert type(UOp.variable("f", 0.0, 1.0, dtypes.float32).arg[1]) is float


def test_constants_tell_zero_from_negative_zero_and_intern_nan() -> None:
    zero, neg_zero = UOp.const(0.0, dtypes.float32), UOp.const(-0.0, dtypes.float32)
    assert zero is not neg_zero
    assert str(neg_zero.arg) == "-0.0"
    nan1, nan2 = UOp.const(float("nan"), dtypes.float32), UOp.const(float("nan"), dtypes.float32)
    assert nan1 is nan2
    assert UOp.const((0.0, 1.0), dtypes.float32.vec(2)) is not UOp.const(
        (-0.0, 1.0), dtypes.float32.vec(2)
    )


@pytest.fixture
def no_gc() -> Iterator[None]:
    """Count table entries without the collector freeing other tests' garbage meanwhile."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("no_gc")
def test_a_node_nobody_holds_leaves_the_table() -> None:
    name = fresh_name()
    before = interned_count()
    v = UOp.variable(name, 0, 10)
    node = (v * 3) + 7
    assert interned_count() >= before + 3  # the variable, mul and add are new (3 and 7 may be)
    probe = weakref.ref(node)
    del node, v
    assert probe() is None  # freed by reference counting alone
    assert interned_count() == before
    # rebuilding it makes a new object: nothing stale was left in the table
    again = UOp.variable(name, 0, 10) * 3 + 7
    assert again.src[0].src[0].arg == (name, 0, 10)


def test_sources_are_freed_with_the_last_user() -> None:
    leaf = UOp.variable(fresh_name(), 0, 1)
    probe = weakref.ref(leaf)
    chain = leaf
    for _ in range(100):
        chain = chain + 1
    del leaf
    assert probe() is not None  # held by the chain
    del chain
    assert probe() is None


def test_nodes_in_reference_cycles_leave_the_table_when_collected() -> None:
    # a RANGE caches its ``ranges`` dict, which holds the RANGE itself: a reference cycle the
    # garbage collector frees. Regression: its table entry outlived it (the weak reference was
    # cleared before __del__ ran, so __del__ didn't recognize its own entry)
    gc.collect()
    gc.disable()
    try:
        before = interned_count()
        r = UOp.range(UOp.variable(fresh_name(), 1, 8), 0)
        assert r in r.ranges
        probe = weakref.ref(r)
        del r
        assert probe() is not None  # only the collector can free it
    finally:
        gc.enable()
    gc.collect()
    assert probe() is None
    assert interned_count() == before


CREATE_DURING_GC = """
import gc
from fusegrad.uop import UOp, Ops, dtypes
gc.set_threshold(1)  # collect at nearly every allocation, i.e. also inside node creation
for i in range(3000):
    r = UOp.range(UOp.const(i + 1, dtypes.weakint), i)
    r.ranges  # a reference cycle: only the collector frees it
    UOp(Ops.NEG, dtypes.weakint, (r,))
print("ok")
"""


def test_garbage_collection_inside_node_creation_does_not_deadlock() -> None:
    # regression: a node freed by the collector while another node was being created (with the
    # table's lock held) took the same lock in __del__ and hung. Run apart: a hang must fail.
    done = subprocess.run(
        [sys.executable, "-c", CREATE_DURING_GC],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_threads_building_the_same_nodes_get_the_same_objects() -> None:
    name = fresh_name()
    threads, per_thread = 8, 300
    barrier = threading.Barrier(threads)
    results: list[list[UOp]] = [[] for _ in range(threads)]

    def build(slot: int) -> None:
        barrier.wait()
        x = UOp.variable(name, 0, 1000)
        results[slot] = [(x * i + i) // 3 for i in range(per_thread)]

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        workers = [threading.Thread(target=build, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(old)
    first = results[0]
    assert len(first) == per_thread
    for other in results[1:]:
        assert all(a is b for a, b in zip(first, other, strict=True))


def test_unique_numbers_are_distinct_across_threads() -> None:
    got: list[int] = []
    lock = threading.Lock()

    def draw() -> None:
        mine = [UOp.unique().arg for _ in range(500)]
        with lock:
            got.extend(mine)

    workers = [threading.Thread(target=draw) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(set(got)) == len(got) == 2000


# -- pickling --------------------------------------------------------------------------------------------------


def sample_graph() -> UOp:
    x = UOp.variable("x", 0, 10)
    buf = UOp.new_buffer("CPU", 16, dtypes.float32, num=77)
    reshaped = buf.reshape(4, 4)
    values = [
        (x * 4 + 2) // 3,
        UOp.const(float("nan"), dtypes.float32),
        UOp.const(-0.0, dtypes.float16),
        UOp.invalid(),
        UOp.range(x + 1, 3, AxisType.REDUCE),
        reshaped.rtag(("keep", 1)),
        UOp.param(0, dtypes.float32.ptr(16)),
        x.bind(3),
    ]
    return UOp.sink(*values)


def test_pickle_round_trip_is_identity() -> None:
    g = sample_graph()
    assert pickle.loads(pickle.dumps(g)) is g
    assert copy.copy(g) is g and copy.deepcopy(g) is g


def test_pickle_is_flat_so_deep_graphs_need_no_recursion() -> None:
    u = UOp.variable(fresh_name(), 0, 1)
    for _ in range(20_000):
        u = UOp(Ops.NEG, dtypes.weakint, (u,))
    # the payload is one flat tuple: neither pickling nor unpickling nests once per level
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        data = pickle.dumps(u)
        assert pickle.loads(data) is u
    finally:
        sys.setrecursionlimit(old)


def test_pickled_graph_rebuilds_in_a_fresh_process() -> None:
    g = sample_graph()
    script = "import pickle, sys; g = pickle.load(sys.stdin.buffer); print(repr(g)); print(g.render(simplify=False))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(g),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == f"{g!r}\n{g.render(simplify=False)}\n"


def test_a_symbolic_arg_pickles_too() -> None:
    x = UOp.variable("x", 1, 10)
    buf = UOp.new_buffer("CPU", 40, dtypes.int8, num=5).reshape(40)
    node = UOp(Ops.RESHAPE, dtypes.int8, (buf,), (x, 4))
    assert pickle.loads(pickle.dumps(node)) is node


# -- constructors ---------------------------------------------------------------------------------------------


def test_const_converts_like_the_hardware() -> None:
    assert UOp.const(300, dtypes.int8).arg == 44
    assert UOp.const(-1, dtypes.uint8).arg == 255
    assert UOp.const(0.1, dtypes.float16).arg == 0.0999755859375
    assert UOp.const(2, dtypes.bool).arg is True
    assert UOp.const(2.9, dtypes.int32).arg == 2
    assert [c.arg for c in UOp.const((1, 300), dtypes.int8.vec(2)).src] == [1, 44]
    assert UOp.const((1, 300), dtypes.int8.vec(2)).op is Ops.VECTORIZE
    assert UOp.vconst((1, 300), dtypes.int8.vec(2)).arg == (1, 44)
    with pytest.raises(ValueError, match=r"3 values for dtypes\.int8\.vec\(2\)"):
        UOp.const((1, 2, 3), dtypes.int8.vec(2))


def test_const_of_a_uop_casts_it() -> None:
    x = UOp.variable("x", 0, 10)
    assert UOp.const(x, dtypes.weakint) is x
    assert UOp.const(x, dtypes.int32) is x.cast(dtypes.int32)


def test_tensor_const_is_broadcast_from_a_device_const() -> None:
    c = UOp.const(2.0, dtypes.float32, device="CPU", shape=(3, 4))
    assert c.op is Ops.EXPAND and c.shape == (3, 4) and c.device == "CPU"
    assert c.src[0].op is Ops.RESHAPE and c.src[0].shape == (1, 1)
    assert c.src[0].src[0] is UOp(Ops.CONST, dtypes.float32, (UOp(Ops.DEVICE, arg="CPU"),), 2.0)
    assert c.const_like(5).shape == (3, 4)
    assert c.const_like(5).src[0].src[0].arg == 5.0


def test_variable_validates_and_binds() -> None:
    with pytest.raises(ValueError, match="non-empty str"):
        UOp.variable("", 0, 1)
    with pytest.raises(ValueError, match="min 5 > max 1"):
        UOp.variable("v", 5, 1)
    v = UOp.variable("v", 1, 10)
    assert v.is_variable and not v.is_bound_var and v.expr == "v"
    assert UOp.variable("v", 1, 10, param=True).op is Ops.PARAM
    b = v.bind(3)
    assert b.op is Ops.AFTER and b.is_bound_var and not b.is_variable
    assert b.src[1] is v.store(3)
    assert b.unbind() == (v, 3)
    assert b is v.bind(3) and b is not v.bind(4)
    with pytest.raises(ValueError, match="11 is outside v's range \\[1, 10\\]"):
        v.bind(11)
    with pytest.raises(TypeError, match="needs an int"):
        v.bind(True)
    with pytest.raises(TypeError, match="only a Variable"):
        (v + 1).bind(3)
    with pytest.raises(TypeError, match="not a bound Variable"):
        v.unbind()


def test_kernel_constructors() -> None:
    r = UOp.range(16, 2, AxisType.REDUCE)
    assert (r.op, r.dtype, r.src[0].arg, r.arg) == (
        Ops.RANGE,
        dtypes.weakint,
        16,
        (2, AxisType.REDUCE),
    )
    assert UOp.special(8, "gidx0").arg == "gidx0"
    p = UOp.param(1, dtypes.float32.ptr(8))
    idx = p.index(r, gate=r < 8)
    assert idx.op is Ops.INDEX and idx.src == (p, r, r < 8)
    ld = idx.load()
    assert ld.dtype is dtypes.float32
    st = idx.store(1)
    assert st.src[1] is UOp.const(1.0, dtypes.float32)
    assert st.end(r).src == (st, r)
    red = ld.reduce(r, arg=Ops.MAX)
    assert (red.op, red.arg, red.src) == (Ops.REDUCE, Ops.MAX, (ld, r))
    with pytest.raises(ValueError, match=r"Ops\.SUB is not a reduce op"):
        ld.reduce(r, arg=Ops.SUB)
    assert UOp.group(ld) is ld
    assert UOp.group(ld, st).op is Ops.GROUP
    assert UOp.sink(ld, arg="k").arg == "k"
    assert p.after(st).src == (p, st)


def test_buffers_have_fresh_identities() -> None:
    a = UOp.new_buffer("CPU", 4, dtypes.int32)
    b = UOp.new_buffer("CPU", 4, dtypes.int32)
    assert a is not b
    assert UOp.new_buffer("CPU", 4, dtypes.int32, num=9) is UOp.new_buffer(
        "CPU", 4, dtypes.int32, num=9
    )
    assert a.shape == (4,) and a.device == "CPU"
    with pytest.raises(ValueError, match="size must be an int >= 0"):
        UOp.new_buffer("CPU", -1, dtypes.int32)


def test_valid_get_idx_get_valid() -> None:
    i = UOp.variable("i", 0, 20)
    cond = i < 10
    v = i.valid(cond)
    assert v.op is Ops.WHERE and v.src[2].arg is Invalid
    assert v.get_idx() is i and v.get_valid() is cond
    assert i.get_idx() is i and i.get_valid().arg is True


def test_cast_and_bitcast() -> None:
    x = UOp.variable("x", 0, 10, dtypes.int32)
    assert x.cast(dtypes.int32) is x
    assert x.cast(dtypes.float32).op is Ops.CAST
    assert UOp.const(300, dtypes.int32).cast(dtypes.uint8) is UOp.const(44, dtypes.uint8)
    assert UOp.invalid().cast(dtypes.int32).op is Ops.CAST  # Invalid isn't folded
    assert x.bitcast(dtypes.float32).op is Ops.BITCAST
    assert x.bitcast(dtypes.int32) is x


def test_replace_and_rtag() -> None:
    x = UOp.variable("x", 0, 10)
    y = x + 1
    assert y.replace(op=Ops.MUL) is x * 1
    assert y.replace(src=[x, x]) is x + x  # any sequence of sources
    assert y.rtag().tag is True and y.rtag("t").tag == "t"
    assert y.rtag("t").replace(tag=None) is y
    with pytest.raises(TypeError, match="unknown field\\(s\\) \\['name'\\]"):
        y.replace(name="z")


# -- graph properties -----------------------------------------------------------------------------------------


def test_toposort_puts_sources_first_and_visits_each_node_once() -> None:
    x, y = UOp.variable("x", 0, 10), UOp.variable("y", 0, 10)
    shared = x * y
    root = UOp.sink(shared + 1, shared + 2)
    order = root.toposort()
    assert len(order) == len(set(order)) == 8  # x, y, x*y, 1, +1, 2, +2, sink
    position = {u: i for i, u in enumerate(order)}
    assert all(position[s] < position[u] for u in order for s in u.src)
    assert order[-1] is root
    assert set(order) == root.backward_slice() | {root}


def test_toposort_gate_stops_below_a_node() -> None:
    x = UOp.variable("x", 0, 10)
    inner = x + 1
    root = inner * 2
    order = root.toposort(gate=lambda u: u is not inner)
    assert inner in order and x not in order


@pytest.mark.usefixtures("no_gc")
def test_cached_toposort_is_a_fresh_list_and_makes_no_reference_cycle() -> None:
    v = UOp.variable(fresh_name(), 0, 10)
    root = UOp.sink(v * 3 + 1, v * 3)
    first = root.toposort()
    first.reverse()  # the caller owns the list: the cache must not change
    again = root.toposort()
    assert again == root.toposort(gate=lambda u: True) == first[::-1]
    assert again is not root.toposort()
    probe = weakref.ref(root)
    del root, first, again
    assert probe() is None  # freed by reference counting alone: the cache holds no cycle


def test_variables_are_sorted_and_deduplicated() -> None:
    b, a = UOp.variable("b", 0, 3), UOp.variable("a", 0, 3)
    expr = (b + a) * b + a.bind(2)
    assert expr.variables() == [a, b]


def test_ranges_in_order_and_closed_by_end_and_reduce() -> None:
    r0, r1 = UOp.range(4, 0), UOp.range(8, 1)
    value = r0 * 8 + r1
    assert list(value.ranges) == [r0, r1]
    assert list(value.reduce(r1).ranges) == [r0]
    assert list(value.end(r0, r1).ranges) == []
    nested = UOp.range(r0 + 1, 2)  # a range whose end depends on another
    assert list(nested.ranges) == [r0, nested]


def test_graph_properties_of_a_deep_chain_need_no_recursion() -> None:
    # regression: vmin/vmax, ranges, shapes and devices recursed once per level
    r = UOp.range(10, 0)
    u = r
    one = UOp.const(1, dtypes.weakint)
    for _ in range(20_000):
        u = UOp(Ops.ADD, dtypes.weakint, (u, one))
    assert (u.vmin, u.vmax) == (20_000, 20_009)
    assert list(u.ranges) == [r]
    t = UOp.new_buffer("CPU", 6, dtypes.float32, num=3)
    for _ in range(20_000):
        t = UOp(Ops.CONTIGUOUS, dtypes.float32, (t,))
    assert t.shape == (6,) and t.device == "CPU"


def test_bool_int_and_resolve() -> None:
    x = UOp.variable("x", 0, 10)
    assert bool(UOp.const(True, dtypes.bool)) is True
    assert bool(x < 11) is True  # decided by range analysis
    assert bool(x < 0) is False
    assert resolve(x < 11) is True and resolve(x < 5) is True and resolve(x < 5, False) is False
    assert resolve(True) is True
    assert int(UOp.const(7, dtypes.int32)) == 7
    with pytest.raises(
        ValueError, match=r"bool: x<5 is not a single value, its range is \[False, True\]"
    ):
        bool(x < 5)
    with pytest.raises(ValueError, match=r"int: x is not a single value, its range is \[0, 10\]"):
        int(x)
    with pytest.raises(ValueError, match="resolve: needs a bool"):
        resolve(x)


def test_resolve_falls_back_to_the_simplified_form() -> None:
    x = UOp.variable("x", 0, 10)
    # x - x has the range [-10, 10] until the simplifier sees it is 0
    assert (x - x < 1)._min_max == (False, True)
    assert resolve(x - x < 1, False) is True
    assert bool(x - x < 1) is True and int(x - x) == 0


def test_float_and_int_of_constants() -> None:
    assert float(UOp.const(2.5, dtypes.float32)) == 2.5
    assert float(UOp.const(3)) == 3.0
    assert int(UOp.const(3)) == 3 and int(UOp.variable("x", 4, 4)) == 4
    with pytest.raises(TypeError, match="use float"):
        int(UOp.const(2.5))
    with pytest.raises(ValueError, match="range is"):
        float(UOp.variable("y", 0.0, 1.0, dtypes.float32))


def test_nodes_are_immutable_by_convention_but_slots_only() -> None:
    x = UOp.variable("x", 0, 10)
    assert "op" not in x.__dict__  # fields live in slots
    assert not hasattr(x, "_key")


def test_a_copy_lives_on_the_device_it_copies_to() -> None:
    src = UOp.new_buffer("CPU", 4, dtypes.float32)
    copied = UOp(Ops.COPY, dtypes.float32, (src, UOp(Ops.DEVICE, arg="PYTHON")))
    assert src.device == "CPU"
    assert copied.device == "PYTHON"
