"""UPat matching and PatternMatcher: ops and dtypes, commutative sources, captures, any-length
sources, alternatives, constants, operator overloads, ctx passing, ``+`` and pickling."""

from __future__ import annotations

import functools
import itertools
import pickle
import subprocess
import sys

import pytest
from fusegrad.uop import GroupOp, Ops, PatternMatcher, UOp, UPat, dtypes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

x = UOp.variable("x", 0, 10)
y = UOp.variable("y", 0, 10)
z = UOp.variable("z", 0, 10)
f = UOp.variable("f", 0.0, 1.0, dtypes.float32)


def matches(pat: UPat, u: UOp) -> list[dict[str, UOp]]:
    return pat.match(u, {})


# -- UPat ---------------------------------------------------------------------------------------------------


def test_op_and_op_set() -> None:
    assert matches(UPat(Ops.ADD), x + y) == [{}]
    assert matches(UPat(Ops.MUL), x + y) == []
    assert matches(UPat({Ops.MUL, Ops.ADD}), x + y) == [{}]
    assert matches(UPat(GroupOp.Binary), x + y) == [{}]
    assert matches(UPat(), x) == [{}]


def test_dtype_and_dtype_set_match_the_scalar_too() -> None:
    v4 = f.cast(dtypes.float32.vec(4))
    assert matches(UPat(dtype=dtypes.float32), f) == [{}]
    assert matches(UPat(dtype=dtypes.float32), v4) == [{}]  # a vector of float32
    assert matches(UPat(dtype=dtypes.float32.vec(4)), v4) == [{}]
    assert matches(UPat(dtype=dtypes.float32.vec(4)), f) == []
    assert matches(UPat(dtype=dtypes.ints), x) == [{}]
    assert matches(UPat(dtype=dtypes.ints), f) == []


def test_src_tuple_matches_in_order_and_length() -> None:
    pat = UPat(Ops.SUB, src=(UPat.var("a"), UPat.cvar("c")))
    assert matches(pat, x - 1) == [{"a": x, "c": UOp.const(1, dtypes.weakint)}]
    assert matches(pat, 1 - x) == []
    assert matches(UPat(Ops.SUB, src=(UPat.var("a"),)), x - 1) == []  # too few patterns


def test_src_list_matches_any_permutation() -> None:
    pat = UPat(Ops.ADD, src=[UPat.var("a"), UPat.cvar("c")])
    one = UOp.const(1, dtypes.weakint)
    assert matches(pat, x + 1) == [{"a": x, "c": one}]
    assert matches(pat, 1 + x) == [{"a": x, "c": one}]


def test_src_list_of_three_tries_all_six_orders() -> None:
    pats = [UPat(Ops.DEFINE_VAR, arg=(n, 0, 10), name=n) for n in "xyz"]
    pat = UPat(Ops.SINK, src=pats)
    for order in itertools.permutations((x, y, z)):
        assert matches(pat, UOp.sink(*order)) == [{"x": x, "y": y, "z": z}]


def test_src_list_yields_every_way_to_match() -> None:
    pat = UPat(Ops.MUL, src=[UPat.var("a"), UPat.var("b")])
    assert matches(pat, x * y) == [{"a": x, "b": y}, {"a": y, "b": x}]


def test_single_upat_src_matches_every_source() -> None:
    pat = UPat(Ops.SINK, src=UPat(Ops.CONST))
    assert matches(pat, UOp.sink(UOp.const(1, dtypes.int8), UOp.const(2, dtypes.int8))) == [{}]
    assert matches(pat, UOp.sink(UOp.const(1, dtypes.int8), x)) == []
    assert matches(pat, UOp.sink()) == [{}]


def test_allow_any_len_matches_a_prefix() -> None:
    pat = UPat(Ops.SINK, src=(UPat.var("first"),), allow_any_len=True)
    assert matches(pat, UOp.sink(x, y, z)) == [{"first": x}]
    assert matches(UPat(Ops.SINK, src=(UPat.var("first"),)), UOp.sink(x, y)) == []
    assert matches(pat, UOp.sink()) == []


def test_same_name_must_capture_the_same_node() -> None:
    pat = UPat.var("a") + UPat.var("a")
    assert matches(pat, x + x) == [{"a": x}, {"a": x}]
    assert matches(pat, x + y) == []
    nested = (UPat.var("a") * UPat.var("b")) + UPat.var("a")
    assert matches(nested, x * y + x) == [{"a": x, "b": y}]
    assert matches(nested, x * y + y) == [{"a": y, "b": x}]
    assert matches(nested, x * y + z) == []


def test_capture_store_is_not_mutated_between_alternatives() -> None:
    pat = UPat(Ops.ADD, src=[UPat.var("a"), UPat(Ops.MUL, name="m")])
    store: dict[str, UOp] = {}
    assert matches(pat, x + y * z) == [{"a": x, "m": y * z}]
    assert pat.match(x + y * z, store) and store == {}


def test_arg_matches_by_value_but_not_bool_against_int() -> None:
    assert matches(UPat.const(0, None), UOp.const(0.0, dtypes.float32)) == [{}]
    assert matches(UPat.const(0, None), UOp.const(-0.0, dtypes.float32)) == [{}]
    assert matches(UPat.const(1, None), UOp.const(True, dtypes.bool)) == []
    assert matches(UPat.const(True, None), UOp.const(1, dtypes.weakint)) == []
    assert matches(UPat.const(True, dtypes.bool), UOp.const(True, dtypes.bool)) == [{}]
    assert matches(UPat(Ops.RANGE, arg=(1, None)), UOp.range(4, 1)) == []


def test_cvar_matches_scalar_and_vector_constants() -> None:
    vconst = UOp.vconst((1, 2), dtypes.int32.vec(2))
    assert matches(UPat.cvar("c"), vconst) == [{"c": vconst}]
    assert matches(UPat.cvar("c", vec=False), vconst) == []
    assert matches(UPat.cvar("c", dtypes.floats), UOp.const(1, dtypes.int8)) == []
    # a tensor constant (with a DEVICE source) is not a cvar
    assert (
        matches(UPat.cvar("c"), UOp(Ops.CONST, dtypes.int8, (UOp(Ops.DEVICE, arg="CPU"),), 1)) == []
    )


def test_any_tries_every_alternative() -> None:
    pat = UPat.any(UPat(Ops.ADD, name="add"), UPat(Ops.MUL, name="mul"))
    assert pat.op == frozenset({Ops.ADD, Ops.MUL})
    assert matches(pat, x + y) == [{"add": x + y}]
    assert matches(pat, x * y) == [{"mul": x * y}]
    assert matches(pat, x - y) == []
    assert UPat.any(UPat(Ops.ADD), UPat()).op is None  # an alternative matching any op


def test_any_with_a_name_captures_the_node() -> None:
    # regression: a name on UPat.any(...) was ignored
    pat = UPat.any(UPat(Ops.ADD), UPat(Ops.MUL)).named("n")
    assert matches(pat, x + y) == [{"n": x + y}]
    both = UPat(Ops.SUB, src=(UPat.var("n"), UPat.any(UPat(Ops.ADD), UPat(Ops.MUL)).named("n")))
    assert matches(both, x - x) == []


def test_named_copies() -> None:
    base = UPat(Ops.ADD)
    named = base.named("a")
    assert base.name is None and named.name == "a"


@pytest.mark.parametrize(
    ("pat", "node"),
    [
        (UPat.var("a") + 1, x + 1),
        (1 + UPat.var("a"), x + 1),
        (UPat.var("a") * 2, 2 * x),
        (2 * UPat.var("a"), x * 2),
        (UPat.var("a") - 1, x - 1),
        (UPat.var("a") // 2, x // 2),
        (UPat.var("a") % 2, x % 2),
        (UPat.var("a") / 2.0, f / 2.0),
        (UPat.var("a").cdiv(2), x.cdiv(2)),
        (UPat.var("a").cmod(2), x.cmod(2)),
        (UPat.var("a") < 2, x < 2),
        (UPat.var("a") > 2, x > 2),
        (UPat.var("a").eq(2), x.eq(2)),
        (UPat.var("a").ne(2), x.ne(2)),
        (UPat.var("a") & 2, x & 2),
        (2 & UPat.var("a"), x & 2),
        (UPat.var("a") | 2, x | 2),
        (2 | UPat.var("a"), 2 | x),
        (UPat.var("a") ^ 2, x ^ 2),
        (2 ^ UPat.var("a"), x ^ 2),
        (UPat.var("a") << 2, x << 2),
        (UPat.var("a") >> 2, x >> 2),
        (-UPat.var("a"), -x),
        (UPat.var("a").maximum(2), x.maximum(2)),
        (UPat.var("b").where(UPat.var("a"), 2), (x < 1).where(x, 2)),
        (UPat.var("a", dtypes.bool).logical_not(), (x < 1).logical_not()),
        (UPat.var("a").cast(dtypes.float32), x.cast(dtypes.float32)),
        (
            UPat.var("a").bitcast(dtypes.float32),
            UOp.variable("i", 0, 1, dtypes.int32).bitcast(dtypes.float32),
        ),
        (UPat.var("a").reciprocal(), f.reciprocal()),
    ],
)
def test_operator_overloads_match_what_the_uop_operators_build(pat: UPat, node: UOp) -> None:
    assert matches(pat, node), f"{pat} does not match {node}"


def test_operator_overloads_build_commutative_patterns_only_for_commutative_ops() -> None:
    assert isinstance((UPat.var("a") + 1).src, list)
    assert isinstance((UPat.var("a") - 1).src, tuple)
    assert not matches(UPat.var("a") - 1, 1 - x)
    assert not matches(UPat.var("a") < 2, x > 2)


def test_upat_repr() -> None:
    assert repr(UPat(Ops.ADD, name="a", arg=1)) == "UPat(ADD, name='a', arg=1)"
    assert repr(UPat()) == "UPat(any)"


# -- PatternMatcher -------------------------------------------------------------------------------------------


def test_rules_are_tried_in_order_and_none_falls_through() -> None:
    calls: list[str] = []

    def first(a: UOp) -> UOp | None:
        calls.append("first")
        return None

    def second(a: UOp) -> UOp | None:
        calls.append("second")
        return a.src[0]

    pm = PatternMatcher([(UPat(Ops.ADD, name="a"), first), (UPat(Ops.ADD, name="a"), second)])
    assert pm.rewrite(x + y) is x
    assert calls == ["first", "second"]
    assert pm.rewrite(x * y) is None
    assert len(pm) == 2


def test_returning_the_node_itself_counts_as_no_match() -> None:
    pm = PatternMatcher([(UPat(Ops.ADD, name="a"), lambda a: a), (UPat(Ops.ADD), lambda: x)])
    assert pm.rewrite(x + y) is x


def test_all_matches_of_a_commutative_pattern_are_offered() -> None:
    # the rule refuses the first way to match, accepts the second
    pm = PatternMatcher([(UPat.var("a") * UPat.var("b"), lambda a, b: a if a is y else None)])
    assert pm.rewrite(x * y) is y


def test_ctx_is_passed_only_to_rules_that_ask() -> None:
    seen: list[object] = []

    def with_ctx(ctx: list[int], a: UOp) -> UOp | None:
        ctx.append(1)
        return None

    def without(a: UOp) -> UOp | None:
        seen.append(a)
        return None

    pm = PatternMatcher([(UPat(Ops.ADD, name="a"), with_ctx), (UPat(Ops.ADD, name="a"), without)])
    ctx: list[int] = []
    assert pm.rewrite(x + y, ctx) is None
    assert ctx == [1] and seen == [x + y]


def test_rule_without_parameters_and_with_partial() -> None:
    pm = PatternMatcher(
        [
            (UPat(Ops.MUL), lambda: x),
            (UPat(Ops.ADD, name="a"), functools.partial(lambda a, k: a.src[k], k=1)),
        ]
    )
    assert pm.rewrite(y * z) is x
    assert pm.rewrite(y + z) is z


def test_dispatch_by_op_skips_rules_for_other_ops() -> None:
    def boom(**_: UOp) -> UOp:
        raise AssertionError("a rule for another op was tried")

    pm = PatternMatcher([(UPat(Ops.MUL), boom), (UPat(Ops.ADD, name="a"), lambda a: x)])
    assert pm.rewrite(y + z) is x
    assert set(pm.pdict) == {Ops.MUL, Ops.ADD}
    anyop = PatternMatcher([(UPat(name="u"), lambda u: None)])
    assert set(anyop.pdict) == set(Ops)


def test_matchers_concatenate_with_plus_left_rules_first() -> None:
    left = PatternMatcher([(UPat(Ops.ADD), lambda: x)])
    right = PatternMatcher([(UPat(Ops.ADD), lambda: y), (UPat(Ops.MUL), lambda: z)])
    both = left + right
    assert len(both) == 3
    assert both.rewrite(y + z) is x
    assert (right + left).rewrite(y + z) is y
    assert both.rewrite(x * y) is z
    assert len(left) == 1  # the operands are unchanged


def test_non_upat_is_rejected() -> None:
    with pytest.raises(TypeError, match="expected a UPat, got tuple"):
        PatternMatcher([((Ops.ADD,), lambda: x)])  # type: ignore[list-item]


def test_early_reject_by_source_ops() -> None:
    calls: list[UOp] = []

    def rule(c: UOp) -> None:
        calls.append(c)

    pm = PatternMatcher([(UPat(Ops.ADD, src=[UPat(Ops.MUL), UPat(Ops.CONST, name="c")]), rule)])
    pm.rewrite(x + 1)  # no MUL source: rejected before matching
    pm.rewrite(x * y + 1)
    assert calls == [UOp.const(1, dtypes.weakint)]


# -- pickling ------------------------------------------------------------------------------------------------


def named_rule(a: UOp) -> UOp:
    return a.src[0]


def make_closure_matcher(offset: int) -> PatternMatcher:
    def shift(a: UOp) -> UOp:
        return a.src[0] + offset

    return PatternMatcher(
        [
            (UPat(Ops.MUL, name="a"), shift),
            (UPat(Ops.SUB, name="a"), lambda a: a.src[1] * offset),
            (UPat(Ops.ADD, name="a"), named_rule),
        ]
    )


def test_matcher_pickles_with_lambdas_closures_and_named_functions() -> None:
    pm = make_closure_matcher(5)
    back = pickle.loads(pickle.dumps(pm))
    assert len(back) == 3
    assert back.rewrite(x * y) is x + 5
    assert back.rewrite(x - y) is y * 5
    assert back.rewrite(x + y) is x
    assert set(back.pdict) == set(pm.pdict)


def test_lambda_closing_over_a_lambda_pickles() -> None:
    inner = lambda u: u + 1
    pm = PatternMatcher([(UPat(Ops.NEG, name="a"), lambda a: inner(a.src[0]))])
    assert pickle.loads(pickle.dumps(pm)).rewrite(-x) is x + 1


def test_rule_with_ctx_still_gets_ctx_after_pickling() -> None:
    pm = PatternMatcher([(UPat(Ops.ADD, name="a"), lambda ctx, a: ctx[a.src[0]])])
    back = pickle.loads(pickle.dumps(pm))
    assert back.rewrite(x + y, {x: z}) is z


PICKLE_IN_CHILD = """
import pickle, sys
from fusegrad.uop import UOp
pm = pickle.load(sys.stdin.buffer)
x, y = UOp.variable("x", 0, 10), UOp.variable("y", 0, 10)
print(pm.rewrite(x * y).render(simplify=False), pm.rewrite(x - y).render(simplify=False))
"""


def test_matcher_pickle_loads_in_a_fresh_process() -> None:
    data = pickle.dumps(make_closure_matcher(7))
    done = subprocess.run(
        [sys.executable, "-c", PICKLE_IN_CHILD],
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == ["x+7", "y*7"]


# -- compiled matchers agree with the interpreter ------------------------------------------------------------

LEAVES = [
    UOp.const(1, dtypes.int32),
    UOp.const(0, dtypes.int32),
    UOp.const(1.0, dtypes.float32),
    UOp.const(True, dtypes.bool),
    UOp.vconst((1.0, 2.0), dtypes.float32.vec(2)),
    x,
    y,
]
INNER_OPS = (Ops.ADD, Ops.MUL, Ops.NEG, Ops.WHERE, Ops.SINK)
ANY_DTYPES = (dtypes.int32, dtypes.float32, dtypes.float32.vec(2), dtypes.bool, dtypes.weakint)


@st.composite
def random_uops(draw: st.DrawFn, depth: int = 3) -> UOp:
    """Small graphs over a few leaves, so that equal subtrees (one node) are common."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES))
    n = draw(st.integers(0, 3))
    src = tuple(draw(random_uops(depth - 1)) for _ in range(n))
    arg = draw(st.sampled_from([None, 1, True, (1, 2)]))
    return UOp(draw(st.sampled_from(INNER_OPS)), draw(st.sampled_from(ANY_DTYPES)), src, arg)


@st.composite
def patterns_for(draw: st.DrawFn, u: UOp, depth: int = 3) -> UPat:
    """A pattern built from ``u``, each part loosened, tightened or broken at random: op sets,
    dtypes, args, shared capture names, tuples, commutative lists, any-length prefixes,
    repeated sources and alternatives."""
    if draw(st.integers(0, 9)) == 0:
        return UPat(draw(st.sampled_from(INNER_OPS)), name=draw(st.sampled_from([None, "a"])))
    # mostly loosened or kept: a quarter to a half of the pairs match
    ops = [None, None, u.op, u.op, {u.op, Ops.MUL}, Ops.CONST, GroupOp.ALU]
    dts = [None] * 6 + [u.dtype, u.dtype.scalar(), {dtypes.int32, dtypes.bool}, dtypes.float32]
    args = [None] * 6 + [u.arg, 1, True, (1, 2), 1.0]
    srcs: list[UPat] = []
    if depth > 0:
        srcs = [draw(patterns_for(s, depth - 1)) for s in u.src]
    shape = draw(st.sampled_from(["none", "tuple", "list", "list", "prefix", "repeat", "drop"]))
    src: UPat | tuple[UPat, ...] | list[UPat] | None = None
    if depth > 0 and shape in ("tuple", "prefix"):
        src = tuple(srcs[: draw(st.integers(0, len(srcs)))] if shape == "prefix" else srcs)
    elif depth > 0 and shape == "list":
        src = list(draw(st.permutations(srcs)))
    elif depth > 0 and shape == "repeat" and srcs:
        src = srcs[0]
    elif depth > 0 and shape == "drop":
        src = tuple(srcs[1:])
    pat = UPat(
        draw(st.sampled_from(ops)),
        draw(st.sampled_from(dts)),
        src,
        draw(st.sampled_from(args)),
        draw(st.sampled_from([None, None, None, "a", "b", "c"])),
        allow_any_len=shape == "prefix",
    )
    if draw(st.integers(0, 5)) == 0:
        decoy = UPat(draw(st.sampled_from(INNER_OPS)), name=draw(st.sampled_from([None, "b"])))
        pat = UPat.any(*draw(st.permutations([pat, decoy])))
    return pat


def recording_rule(calls: list[dict[str, UOp]], answer_at: int, answer: UOp) -> object:
    """A rule that records its captures and returns ``answer`` on call ``answer_at``."""

    def rule(**captures: UOp) -> UOp | None:
        calls.append(captures)
        return answer if len(calls) == answer_at else None

    return rule


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_compiled_matcher_agrees_with_the_interpreter(data: st.DataObject) -> None:
    u = data.draw(random_uops())
    pat = data.draw(patterns_for(u))
    other = data.draw(random_uops())
    for node in (u, other, *u.src):
        assert pat.compiled("stores")(node) == pat.match_interpreted(node, {})
    # the same rule calls, in the same order, and the same result through a PatternMatcher
    answer_at = data.draw(st.integers(0, 3))
    answer = data.draw(st.sampled_from([u, x + y]))  # returning the node itself is no rewrite
    compiled_calls: list[dict[str, UOp]] = []
    interpreted_calls: list[dict[str, UOp]] = []
    compiled = PatternMatcher([(pat, recording_rule(compiled_calls, answer_at, answer))])
    interpreted = PatternMatcher([(pat, recording_rule(interpreted_calls, answer_at, answer))])
    for node in (u, other):
        assert compiled.rewrite(node) is interpreted.rewrite_interpreted(node)
    assert compiled_calls == interpreted_calls


def test_compiled_matcher_passes_ctx_to_rules_that_ask() -> None:
    pat = UPat(Ops.ADD, src=[UPat.var("a"), UPat.cvar("c")])
    seen: list[object] = []
    pm = PatternMatcher([(pat, lambda ctx, a, c: seen.append(ctx))])
    assert pm.rewrite(x + 1, ctx="the ctx") is None
    assert seen == ["the ctx"]
    assert pm.rewrite(1 + x, ctx=7) is None and seen[-1] == 7


def test_patterns_the_compiler_leaves_to_the_interpreter() -> None:
    repeated = UPat(Ops.SINK, src=UPat.var("a"))
    assert repeated.compiled("stores")(UOp.sink(x, x)) == [{"a": x}]
    assert repeated.compiled("stores")(UOp.sink(x, y)) == []
    ctx_capture = UPat(Ops.ADD, src=(UPat.var("ctx"), UPat.var("b")))
    pm = PatternMatcher([(ctx_capture, lambda **kw: kw["ctx"])])
    assert pm.rewrite(x + y) is x
    keyword_capture = UPat(Ops.ADD, src=(UPat.var("if"), UPat.var("b")))
    assert keyword_capture.compiled("call")(x + y, None, lambda **kw: kw["if"]) is x
    deep = UPat.var("leaf")
    for _ in range(120):  # deeper than Python's indentation limit
        deep = UPat(Ops.NEG, src=(deep,))
    chain = x
    for _ in range(120):
        chain = UOp(Ops.NEG, x.dtype, (chain,))
    assert deep.compiled("stores")(chain) == [{"leaf": x}]
    wide = UPat(Ops.SINK, src=[UPat(name=n) for n in "abcde"])  # 120 orders: interpreted
    five = UOp.sink(x, y, z, x, y)
    assert len(wide.compiled("stores")(five)) == 120
    assert wide.compiled("stores")(five) == wide.match_interpreted(five, {})


def test_compiled_code_is_generated_once_per_pattern() -> None:
    pat = UPat.var("a") + 0
    pm1 = PatternMatcher([(pat, lambda a: a)])
    pm2 = PatternMatcher([(UPat(Ops.MUL), lambda: None)]) + pm1
    assert pm1.rewrite(x + 0) is x and pm2.rewrite(x + 0) is x
    assert pm1.rules[Ops.ADD][0][0] is pm2.rules[Ops.ADD][0][0] is pat.compiled("call")
    assert pm1.rules[Ops.SUB] == ()  # no rule for SUB: nothing to try


def test_matcher_pickles_after_its_rules_were_compiled() -> None:
    pm = make_closure_matcher(3)
    assert pm.rewrite(x * y) is x + 3
    back = pickle.loads(pickle.dumps(pm))
    assert back.rewrite(x * y) is x + 3
    assert back.rewrite(x + y) is x
