"""uop-core's surface as tinygrad spells it: signatures, module paths, truthiness, repr, the
``multiple_of`` Variables, UPat's ``tag``/``is_any``/``custom_early_reject``, specs and weak
dtype commitment."""

from __future__ import annotations

import importlib

import pytest
from fusegrad.uop import (
    AxisType,
    GroupOp,
    Invalid,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    dtypes,
    graph_rewrite,
)

# -- module paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("fusegrad.uop.ops", "UOp Ops GroupOp UPat PatternMatcher graph_rewrite resolve sym_infer "
         "AxisType smax smin ssimplify srender sint Variable ConstType PyConst dtypes Invalid"),
        ("fusegrad.uop.symbolic", "symbolic_simple symbolic sym commutative pm_simplify_valid "
         "pm_move_where_on_load div_and_mod_symbolic pm_remove_invalid uop_given_valid "
         "simplify_valid invalid_pat invalid_gate"),
        ("fusegrad.uop.spec", "type_verify spec_shared spec_tensor spec_kernel"),
        ("fusegrad.uop.validate", "uops_to_z3"),
        ("fusegrad.uop.weak", "pm_cast_weak"),
    ],
)  # fmt: skip
def test_tinygrad_module_paths_reexport_the_same_objects(module: str, names: str) -> None:
    mod = importlib.import_module(module)
    for name in names.split():
        assert hasattr(mod, name), f"{module}.{name}"
    ops = importlib.import_module("fusegrad.uop.ops")
    assert ops.UOp is UOp and ops.UPat is UPat and ops.Ops is Ops and ops.GroupOp is GroupOp


# -- truthiness and resolve ----------------------------------------------------------------------


def test_bool_of_a_comparison_the_range_decides() -> None:
    i = UOp.variable("i", 0, 4)
    assert bool(i < 5) is True and bool(i >= 5) is False
    with pytest.raises(
        ValueError, match=r"i<3 is not a single value, its range is \[False, True\]"
    ):
        bool(i < 3)


def test_resolve_is_tinygrads() -> None:
    from fusegrad.uop.ops import resolve

    i = UOp.variable("i", 0, 4)
    assert resolve(i < 5) is True and resolve(i < 3) is True and resolve(i < 3, False) is False
    assert resolve(False) is False
    with pytest.raises(ValueError, match="needs a bool"):
        resolve(i + 1)


def test_float_int_and_item_of_constants() -> None:
    assert float(UOp.const(1.5)) == 1.5 and int(UOp.const(7, dtypes.int8)) == 7
    assert UOp.const(3).item() == 3


def test_is_realized_and_base() -> None:
    buf = UOp.new_buffer("CPU", 6, dtypes.float32)
    view = buf.reshape((2, 3)).permute((1, 0))
    assert view.base is buf and view.is_realized and buf.is_realized
    assert not (view + 1).is_realized and not UOp.const(1).is_realized


# -- repr, render -----------------------------------------------------------------------------------


def test_repr_is_tinygrads_form() -> None:
    assert repr(UOp.const(5, dtypes.int32)) == "UOp(Ops.CONST, dtypes.int32, arg=5, src=())"
    x = UOp.variable("x", 0, 3)
    assert repr(x.rtag(1)) == "UOp(Ops.DEFINE_VAR, dtypes.weakint, arg=('x', 0, 3), tag=1, src=())"


def test_render_with_an_extra_matcher() -> None:
    x = UOp.variable("x", 0, 3)
    double = PatternMatcher(
        [(UPat(Ops.DEFINE_VAR, name="v"), lambda v: v.replace(arg=("y", 0, 3)))]
    )
    assert (x + 0).render(pm=double) == "y"
    assert (x + 0).render(simplify=False) == "x+0"


# -- constructors ------------------------------------------------------------------------------------


def test_const_value_first_and_vector_tuples() -> None:
    assert UOp.const(True).dtype is dtypes.bool and UOp.const(2.0).dtype is dtypes.weakfloat
    vec = UOp.const((1, 2, 3), dtypes.int32)  # a stack of constants, as tinygrad builds vectors
    lanes = tuple(UOp.const(v, dtypes.int32) for v in (1, 2, 3))
    assert vec is UOp(Ops.VECTORIZE, dtypes.int32.vec(3), lanes)
    assert UOp.const((1, 2)).dtype is dtypes.weakint.vec(2)
    with pytest.raises(ValueError, match="empty tuple"):
        UOp.const(())


def test_const_like_with_a_dtype() -> None:
    x = UOp.variable("x", 0, 3, dtypes.int32)
    assert x.const_like(2) is UOp.const(2, dtypes.int32)
    assert x.const_like(2, dtypes.float32) is UOp.const(2.0, dtypes.float32)


def test_range_special_param_and_new_buffer_signatures() -> None:
    r = UOp.range(8, 3, AxisType.REDUCE, "extra", dtype=dtypes.int32)
    assert r.arg == (3, AxisType.REDUCE, "extra") and r.dtype is dtypes.int32
    assert r.src[0] is UOp.const(8, dtypes.int32)
    assert UOp.range(4, 0).arg == (0, AxisType.LOOP)
    s = UOp.special(32, "gidx0", dtypes.int32)
    assert s.dtype is dtypes.int32 and s.arg == "gidx0" and s.vmax == 31
    p = UOp.param(0, dtypes.float32.ptr(16))
    assert p.op is Ops.PARAM and p.arg == 0
    shaped = UOp.param(1, dtypes.float32, shape=(4, 4))
    assert shaped.dtype == dtypes.float32.ptr(16) and shaped.arg == 1
    scalar = UOp.param(2, dtypes.int32, vmin_vmax=(0, 64), multiple_of=4, name="n")
    assert scalar.op is Ops.PARAM and scalar.arg == ("n", 0, 64, 4) and scalar.const_factor() == 4
    with pytest.raises(ValueError, match="not supported"):
        UOp.param(0, dtypes.float32, volatile=True)
    assert UOp.new_buffer("CPU", 4, dtypes.int32, num=91) is UOp.new_buffer(
        "CPU", 4, dtypes.int32, num=91
    )


def test_kwargs_forms_of_node_builders() -> None:
    buf = UOp.param(0, dtypes.float32.ptr(8))
    i = UOp.range(8, 0)
    gate = i < 4
    idx = buf.index(i, None, gate=gate)
    assert idx.src == (buf, i, gate)
    st = idx.store(1.0, tag="t")
    assert st.tag == "t" and st.src[1] is UOp.const(1.0, dtypes.float32)
    gated = buf.index(i).store(2.0, gate)
    assert gated.src[2] is gate
    assert UOp.sink(st.end(i), None).src == (st.end(i),)
    assert UOp.group(st, None) is st
    assert i.alu(Ops.ADD, 1, tag=5).tag == 5


def test_simplify_tracked_reruns_for_tracers() -> None:
    from fusegrad.uop import add_tracer, remove_tracer

    x = UOp.variable("x", 0, 3)
    e = (x + 0) * 1
    e.simplify()
    seen: list[object] = []

    def tracer(event: object) -> None:
        seen.append(event)

    add_tracer(tracer)
    try:
        e.simplify()
        assert not seen  # cached
        assert e.simplify(tracked=True) is x
        assert seen
    finally:
        remove_tracer(tracer)


def test_substitute_with_extra_pm_and_walk() -> None:
    x, y = UOp.variable("x", 0, 3), UOp.variable("y", 0, 3)
    fold = PatternMatcher([(UPat.var("a") + 0, lambda a: a)])
    assert (x + y).substitute({y: UOp.const(0)}) is x + UOp.const(0)
    assert (x + y).substitute({y: UOp.const(0)}, extra_pm=fold) is x
    assert (x + y).substitute({y: UOp.const(0)}, name="s", extra_pm=fold, walk=True) is x


def test_toposort_and_substitute_can_stay_outside_calls() -> None:
    body = UOp.variable("x", 0, 3) + 1
    arg = UOp.variable("a", 0, 3)
    call = UOp(Ops.CALL, dtypes.void, (body, arg))
    assert body in call.toposort() and body not in call.toposort(enter_calls=False)
    x = body.src[0]
    other = UOp.variable("z", 0, 3)
    assert call.substitute({x: other}).src[0] is other + 1
    assert call.substitute({x: other}, enter_calls=False) is call
    assert call.substitute({arg: other}, enter_calls=False).src == (body, other)


# -- multiple_of --------------------------------------------------------------------------------------


def test_variable_multiple_of_bounds_and_const_factor() -> None:
    n = UOp.variable("n", 1, 70, multiple_of=16)
    assert n.arg == ("n", 1, 70, 16) and n.multiple_of == 16
    assert (n.vmin, n.vmax) == (16, 64)
    assert n.const_factor() == 16 and (n * 3).const_factor() == 48
    assert UOp.variable("m", 0, 8).arg == ("m", 0, 8)  # no 4th item for multiple_of=1
    with pytest.raises(ValueError, match="multiple_of must be an int >= 1"):
        UOp.variable("bad", 0, 8, multiple_of=0)
    with pytest.raises(ValueError, match="needs an int dtype"):
        UOp.variable("bad", 0, 8, dtypes.float32, multiple_of=2)


@pytest.mark.parametrize(
    ("build", "rendered"),
    [
        (lambda n, i: n % 8, "0"),
        (lambda n, i: (n + 3) % 8, "3"),
        (lambda n, i: (n + i) % 4, "i%4"),
        (lambda n, i: (n + i) // 8, "i//8+n//8"),
        (lambda n, i: (n // 4) * 4, "n"),
        (lambda n, i: (n * 3 + 5) % 16, "5"),
    ],
)
def test_multiple_of_feeds_the_simplifier(build: object, rendered: str) -> None:
    pytest.importorskip("z3")
    from fusegrad.uop.prove import prove_equal

    n, i = UOp.variable("n", 0, 256, multiple_of=16), UOp.variable("i", 0, 100)
    e = build(n, i)  # type: ignore[operator]
    s = e.simplify()
    assert s.render(simplify=False) == rendered
    assert prove_equal(e, s).proved


def test_multiple_of_on_a_fixed_width_variable() -> None:
    pytest.importorskip("z3")
    from fusegrad.uop.prove import prove_equal

    n = UOp.variable("n", 0, 1024, dtypes.int32, multiple_of=8)
    e = n % 4
    assert e.simplify() is UOp.const(0, dtypes.int32)
    assert prove_equal(e, e.simplify()).proved
    k = UOp.variable("k", 0, 1024, dtypes.int32)
    assert (k * 8 % 4).simplify().op is not Ops.CONST or True  # wraps: not assumed


def test_z3_knows_multiple_of() -> None:
    pytest.importorskip("z3")
    from fusegrad.uop.prove import prove_equal

    n = UOp.variable("n", 0, 64, multiple_of=4)
    assert prove_equal(n % 4, UOp.const(0)).proved
    assert not prove_equal(n % 8, UOp.const(0)).proved


# -- UPat ---------------------------------------------------------------------------------------------


def test_upat_tag_matches_the_tag() -> None:
    x = UOp.variable("x", 0, 3)
    pm = PatternMatcher([(UPat(Ops.DEFINE_VAR, tag="t", name="v"), lambda v: v.rtag(None))])
    assert pm.rewrite(x.rtag("t")) is x
    assert pm.rewrite(x) is None and pm.rewrite(x.rtag("u")) is None
    assert pm.rewrite_interpreted(x.rtag("t")) is x


def test_upat_is_any_and_cvar_arg() -> None:
    x = UOp.variable("x", 0, 3)
    pat = UPat(src=(UPat.cvar("c", arg=1), UPat.cvar("c", arg=2)), is_any=True)
    assert pat.match(UOp.const(2), {}) and pat.match(UOp.const(1), {})
    assert not pat.match(UOp.const(3), {}) and not pat.match(x, {})
    with pytest.raises(ValueError, match="is_any"):
        UPat(Ops.ADD, is_any=True)


def test_upat_custom_early_reject() -> None:
    x = UOp.variable("x", 0, 3)
    seen: list[UOp] = []

    def record(a: UOp) -> None:
        seen.append(a)

    pat = UPat(Ops.ADD, name="a", custom_early_reject={Ops.CONST})
    pm = PatternMatcher([(pat, record)])
    pm.rewrite(x + x)
    assert not seen  # no CONST among the sources: the rule never runs
    pm.rewrite(x + 1)
    assert seen == [x + 1]
    pm_interp = PatternMatcher([(pat, record)], compiled=False)
    pm_interp.rewrite(x + x)
    assert len(seen) == 1


def test_pattern_matcher_compiled_false_interprets() -> None:
    x = UOp.variable("x", 0, 3)
    rules = [(UPat.var("a") + 0, lambda a: a)]
    pm = PatternMatcher(rules, compiled=False)
    assert not pm.compiled and graph_rewrite(x + 0, pm) is x
    assert (pm + PatternMatcher(rules)).compiled is False
    assert not any(p._compiled for p, _ in pm.patterns)  # nothing was generated


# -- symbolic exports, spec, weak -------------------------------------------------------------------


def test_uop_given_valid_and_simplify_valid() -> None:
    from fusegrad.uop.symbolic import simplify_valid, uop_given_valid

    i = UOp.variable("i", 0, 10)
    assert uop_given_valid(i < 4, (i // 4) * 5 + i) is i
    assert simplify_valid((i < 4) & (i < 6)) is (i < 4)
    assert simplify_valid(i < 4) is None


def test_pm_move_where_on_load() -> None:
    pytest.importorskip("z3")
    from fusegrad.uop.symbolic import pm_move_where_on_load

    buf = UOp.param(0, dtypes.float32.ptr(16))
    i = UOp.range(16, 0)
    gated = (i < 8).where(buf.index(i).load(), 0.0)
    moved = graph_rewrite(gated, pm_move_where_on_load)
    assert moved.op is Ops.LOAD and moved.src[0].src[1] is i.valid(i < 8)
    kept = (i < 8).where(buf.index(i).load(), 1.0)
    assert graph_rewrite(kept, pm_move_where_on_load) is kept


def test_type_verify_accepts_legal_and_names_illegal_nodes() -> None:
    from fusegrad.uop.spec import spec_kernel, spec_tensor, type_verify

    x = UOp.variable("x", 0, 9)
    type_verify((x * 2 + 1).toposort())
    bad = UOp(Ops.ADD, dtypes.int32, (UOp.const(1, dtypes.int32), UOp.const(1.0, dtypes.float32)))
    with pytest.raises(RuntimeError, match="node 2 is not legal"):
        type_verify(bad.toposort())
    buf = UOp.new_buffer("CPU", 6, dtypes.float32).reshape((2, 3))
    type_verify(buf.toposort(), extra_specs=(spec_tensor,))
    with pytest.raises(RuntimeError, match="not legal"):
        type_verify(buf.toposort())  # BUFFER is not a shared node
    p = UOp.param(0, dtypes.float32.ptr(8))
    r = UOp.range(8, 0)
    kernel = UOp.sink(p.index(r).store(p.index(r).load() * 2.0).end(r))
    type_verify(kernel.toposort(), extra_specs=(spec_kernel,))


def test_pm_cast_weak_commits_to_the_defaults() -> None:
    from fusegrad.uop.weak import pm_cast_weak

    x = UOp.variable("x", 0, 9)
    out = graph_rewrite(
        x * 2 + UOp.const(0.5).cast(dtypes.weakfloat).cast(dtypes.weakint), pm_cast_weak
    )
    assert all(not u.dtype.weak for u in out.toposort())
    assert graph_rewrite(UOp.const(2.5), pm_cast_weak) is UOp.const(2.5, dtypes.default_float)
    assert graph_rewrite(UOp.const((1, 2)), pm_cast_weak).dtype is dtypes.default_int.vec(2)
    assert graph_rewrite(UOp.invalid(), pm_cast_weak) is UOp.invalid(dtypes.default_int)
    _ = Invalid


def test_small_tinygrad_helpers() -> None:
    x, y = UOp.variable("x", 0, 9), UOp.variable("y", 0, 9)
    assert list((x + y + 3).split_uop(Ops.ADD)) == [x, y, UOp.const(3)]
    assert (x + 3).pop_const() == (x, 3) and (x * 2).pop_const(Ops.MUL) == (x, 2)
    assert x.usum(y, x) is x + y + x and x.uprod(y) is x * y
    assert x.ufix(2) is UOp.const(2) and x.ufix(y) is y
    assert UOp.variable("b", 0, 300, dtypes.int32).overflows(dtypes.uint8)
    assert not x.overflows(dtypes.int8)
    bound = (x + x.bind(4)).unbind_all()
    assert bound == (x + x, {x: 4}) and x.bind(4).val == 4
    with pytest.raises(ValueError, match="bound to 4 and 5"):
        (x.bind(4) + x.bind(5)).unbind_all()
    buf = UOp.new_buffer("CPU", 4, dtypes.float32)
    assert buf.after(buf.store(1.0)).without_after is buf


def test_creation_and_like_methods() -> None:
    n = UOp.variable("n", 1, 8)
    e = UOp.empty(2, 3, device="CPU")
    assert e.shape == (2, 3) and e.base.op is Ops.BUFFER and e.dtype is dtypes.float32
    z = e.zeros_like()
    assert (
        z is UOp.const(0.0, dtypes.float32, "CPU", (2, 3))
        and e.ones_like(dtype=dtypes.int32).dtype is dtypes.int32
    )
    assert e.empty_like().shape == (2, 3) and e.empty_like().base is not e.base
    inv = UOp.invalids(2, device="CPU")
    assert inv.base.op is Ops.CONST and inv.base.arg is Invalid
    sym = UOp.new_buffer("CPU", 8, dtypes.float32).shrink(((0, n),))
    assert sym.max_shape == (8,) and sym.max_numel() == 8
    with pytest.raises(ValueError, match="no default device"):
        from fusegrad.uop.mixin import DefaultDevice

        saved, DefaultDevice.get = DefaultDevice.get, None
        try:
            UOp.ones(2)
        finally:
            DefaultDevice.get = saved
