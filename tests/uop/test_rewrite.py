"""graph_rewrite: the two orders, fixed points, single-pass walks, memoization, deep graphs,
rules that never converge, tracing, graph_rewrite_map and substitute."""

from __future__ import annotations

import pytest
from fusegrad.uop import (
    Ops,
    PatternMatcher,
    RewriteEvent,
    RewriteNotConverging,
    UOp,
    UPat,
    add_tracer,
    dtypes,
    graph_rewrite,
    graph_rewrite_map,
    remove_tracer,
    substitute,
)
from fusegrad.uop import rewrite as rewrite_module

v = UOp.variable("v", 0.0, 1.0, dtypes.float32)
w = UOp.variable("w", 0.0, 1.0, dtypes.float32)


def unary(op: Ops, src: UOp) -> UOp:
    return UOp(op, src.dtype, (src,))


def retag(op: Ops) -> object:
    """A rule body turning the captured node ``a`` into ``op`` on the same sources."""
    return lambda a: a.replace(op=op)


# -- the two orders -----------------------------------------------------------------------------------------

# EXP2 -> LOG2 rewrites the child; SQRT(EXP2(x)) -> x needs to see the child before it changes
ORDER_RULES = PatternMatcher(
    [
        (UPat(Ops.EXP2, name="a"), retag(Ops.LOG2)),
        (UPat(Ops.SQRT, src=(UPat(Ops.EXP2, src=(UPat.var("x"),)),)), lambda x: x),
    ]
)


def test_default_order_rewrites_sources_first() -> None:
    graph = unary(Ops.SQRT, unary(Ops.EXP2, v))
    # the EXP2 became LOG2 before SQRT was looked at, so SQRT(EXP2(x)) never matched
    assert graph_rewrite(graph, ORDER_RULES) is unary(Ops.SQRT, unary(Ops.LOG2, v))


def test_bottom_up_tries_the_node_before_its_sources() -> None:
    graph = unary(Ops.SQRT, unary(Ops.EXP2, v))
    assert graph_rewrite(graph, ORDER_RULES, bottom_up=True) is v


def test_bottom_up_rewrites_the_sources_of_a_node_no_rule_matched() -> None:
    graph = unary(Ops.SIN, unary(Ops.EXP2, v))
    assert graph_rewrite(graph, ORDER_RULES, bottom_up=True) is unary(Ops.SIN, unary(Ops.LOG2, v))


def test_bottom_up_retries_a_node_after_its_sources_changed() -> None:
    # SIN(LOG2(x)) -> x only matches once the EXP2 below has become LOG2
    pm = ORDER_RULES + PatternMatcher(
        [(UPat(Ops.SIN, src=(UPat(Ops.LOG2, src=(UPat.var("x"),)),)), lambda x: x)]
    )
    graph = unary(Ops.SIN, unary(Ops.EXP2, v))
    assert graph_rewrite(graph, pm, bottom_up=True) is v
    assert graph_rewrite(graph, pm) is v


# -- fixed points --------------------------------------------------------------------------------------------

CHAIN = PatternMatcher(
    [
        (UPat(Ops.EXP2, name="a"), lambda a: a.replace(op=Ops.LOG2)),
        (UPat(Ops.LOG2, name="a"), lambda a: a.replace(op=Ops.SIN)),
    ]
)


@pytest.mark.parametrize("bottom_up", [False, True])
def test_a_rule_chain_runs_to_its_fixed_point(bottom_up: bool) -> None:
    graph = unary(Ops.SQRT, unary(Ops.EXP2, unary(Ops.EXP2, v)))
    want = unary(Ops.SQRT, unary(Ops.SIN, unary(Ops.SIN, v)))
    assert graph_rewrite(graph, CHAIN, bottom_up=bottom_up) is want


def test_a_rules_result_has_its_new_sources_rewritten_too() -> None:
    # NEG(x) -> EXP2(EXP2(x)): the new inner node must reach the fixed point as well
    pm = CHAIN + PatternMatcher(
        [(UPat(Ops.NEG, src=(UPat.var("x"),)), lambda x: unary(Ops.EXP2, unary(Ops.EXP2, x)))]
    )
    for bottom_up in (False, True):
        assert graph_rewrite(-v, pm, bottom_up=bottom_up) is unary(Ops.SIN, unary(Ops.SIN, v))


def test_walk_makes_one_pass() -> None:
    graph = unary(Ops.SQRT, unary(Ops.EXP2, v))
    # EXP2 -> LOG2 and no further: the result of a rule is not offered to the rules again
    assert graph_rewrite(graph, CHAIN, walk=True) is unary(Ops.SQRT, unary(Ops.LOG2, v))


def test_walk_rebuilds_parents_on_rewritten_sources() -> None:
    graph = UOp.sink(unary(Ops.EXP2, v), unary(Ops.EXP2, w))
    out = graph_rewrite(graph, CHAIN, walk=True)
    assert out is UOp.sink(unary(Ops.LOG2, v), unary(Ops.LOG2, w))


def test_nothing_to_rewrite_returns_the_same_graph() -> None:
    graph = unary(Ops.SQRT, v) + w
    assert graph_rewrite(graph, CHAIN) is graph
    assert graph_rewrite(graph, CHAIN, bottom_up=True) is graph
    assert graph_rewrite(graph, PatternMatcher([])) is graph


# -- memoization ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bottom_up", [False, True])
def test_a_shared_subgraph_is_rewritten_once(bottom_up: bool) -> None:
    calls: list[UOp] = []

    def count(a: UOp) -> UOp:
        calls.append(a)
        return a.replace(op=Ops.LOG2)

    shared = unary(Ops.EXP2, v)
    graph = UOp.sink(unary(Ops.SIN, shared), unary(Ops.SQRT, shared), shared + shared)
    out = graph_rewrite(
        graph, PatternMatcher([(UPat(Ops.EXP2, name="a"), count)]), bottom_up=bottom_up
    )
    assert calls == [shared]
    new = unary(Ops.LOG2, v)
    assert out is UOp.sink(unary(Ops.SIN, new), unary(Ops.SQRT, new), new + new)


def test_rules_see_ctx() -> None:
    def rename(ctx: dict[UOp, UOp], a: UOp) -> UOp | None:
        return ctx.get(a)

    pm = PatternMatcher([(UPat(Ops.DEFINE_VAR, name="a"), rename)])
    assert graph_rewrite(v + w, pm, ctx={v: w}) is w + w


# -- deep graphs ------------------------------------------------------------------------------------------------


def neg_chain(n: int, leaf: UOp) -> UOp:
    u = leaf
    for _ in range(n):
        u = UOp(Ops.NEG, dtypes.float32, (u,))
    return u


@pytest.fixture(scope="module")
def chain_200k() -> UOp:
    return neg_chain(200_000, v)


def test_a_200k_node_chain_rewrites_without_recursion(chain_200k: UOp) -> None:
    # NEG(NEG(x)) -> x collapses the whole (even-length) chain
    collapse = PatternMatcher([(UPat(Ops.NEG, src=(-UPat.var("x"),)), lambda x: x)])
    assert graph_rewrite(chain_200k, collapse) is v


@pytest.mark.parametrize("bottom_up", [False, True])
def test_a_100k_deep_nesting_is_rewritten_at_every_level(chain_200k: UOp, bottom_up: bool) -> None:
    # every NEG becomes a TRUNC: 100k new nodes, each built on the rewritten one below it
    chain = chain_200k
    for _ in range(100_000):
        chain = chain.src[0]
    to_trunc = PatternMatcher([(UPat(Ops.NEG, name="a"), lambda a: a.replace(op=Ops.TRUNC))])
    out = graph_rewrite(chain, to_trunc, bottom_up=bottom_up)
    depth = 0
    while out.src:
        assert out.op is Ops.TRUNC
        out = out.src[0]
        depth += 1
    assert depth == 100_000 and out is v


def test_walk_and_substitute_handle_deep_chains() -> None:
    chain, want = neg_chain(20_000, v), neg_chain(20_000, w)
    to_w = PatternMatcher([(UPat(Ops.DEFINE_VAR), lambda: w)])
    assert graph_rewrite(chain, to_w, walk=True) is want
    assert substitute(chain, {v: w}) is want


# -- rules that never converge ---------------------------------------------------------------------------------


def test_a_rule_growing_forever_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rewrite_module, "MAX_REWRITES", 1000)
    grow = PatternMatcher([(UPat.cvar("c"), lambda c: UOp.const(c.arg + 1, c.dtype))])
    for bottom_up in (False, True):
        with pytest.raises(RewriteNotConverging, match="more than 1000 rewrites"):
            graph_rewrite(UOp.const(0, dtypes.weakint), grow, bottom_up=bottom_up, name="grow")


def test_two_rules_undoing_each_other_raise() -> None:
    flip = PatternMatcher(
        [(UPat(Ops.EXP2, name="a"), retag(Ops.LOG2)), (UPat(Ops.LOG2, name="a"), retag(Ops.EXP2))]
    )
    with pytest.raises(RewriteNotConverging, match="cycle"):
        graph_rewrite(unary(Ops.EXP2, v), flip)


def test_a_rule_wrapping_its_node_raises() -> None:
    wrap = PatternMatcher([(UPat(Ops.DEFINE_VAR, name="a"), lambda a: unary(Ops.NEG, a))])
    with pytest.raises(RewriteNotConverging, match="cycle"):
        graph_rewrite(v + w, wrap)


def test_a_flip_flop_in_bottom_up_order_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rewrite_module, "MAX_REWRITES", 1000)
    flip = PatternMatcher(
        [(UPat(Ops.EXP2, name="a"), retag(Ops.LOG2)), (UPat(Ops.LOG2, name="a"), retag(Ops.EXP2))]
    )
    with pytest.raises(RewriteNotConverging):
        graph_rewrite(unary(Ops.EXP2, v), flip, bottom_up=True)


# -- tracing ---------------------------------------------------------------------------------------------------


def test_tracer_receives_every_rewrite_with_rule_before_and_after() -> None:
    events: list[RewriteEvent] = []
    add_tracer(events.append)
    try:
        graph = unary(Ops.SQRT, unary(Ops.EXP2, v))
        out = graph_rewrite(graph, CHAIN, name="chain")
    finally:
        remove_tracer(events.append)
    log2 = unary(Ops.LOG2, v)
    assert [(e.before, e.after) for e in events] == [
        (unary(Ops.EXP2, v), log2),
        (log2, unary(Ops.SIN, v)),
    ]
    assert all(e.rewrite_name == "chain" for e in events)
    assert events[0].rule.startswith("test_rewrite.py:")  # the rule's file:line
    assert events[0].rule != events[1].rule
    assert out is unary(Ops.SQRT, unary(Ops.SIN, v))
    graph_rewrite(graph, CHAIN)  # removed: no more events
    assert len(events) == 2


def test_untraced_rewrites_take_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def traced(*_: object) -> None:
        raise AssertionError("the traced path ran without a tracer")

    monkeypatch.setattr(PatternMatcher, "rewrite_traced", traced)
    assert graph_rewrite(unary(Ops.EXP2, v), CHAIN) is unary(Ops.SIN, v)


def test_match_stats_count_rule_firings() -> None:
    stats = rewrite_module.MatchStats()
    add_tracer(stats)
    try:
        graph_rewrite(UOp.sink(unary(Ops.EXP2, v), unary(Ops.EXP2, w)), CHAIN)
    finally:
        remove_tracer(stats)
    assert sorted(stats.fired.values()) == [2, 2]
    assert stats.report().splitlines()[0] == "rule firings (TRACK_MATCH_STATS):"


# -- graph_rewrite_map and substitute -------------------------------------------------------------------------


@pytest.mark.parametrize("bottom_up", [False, True])
def test_graph_rewrite_map_tells_what_each_node_became(bottom_up: bool) -> None:
    inner = unary(Ops.EXP2, v)
    graph = unary(Ops.SQRT, inner) + w
    mapping = graph_rewrite_map(graph, CHAIN, bottom_up=bottom_up)
    assert set(mapping) == set(graph.toposort())
    assert mapping[inner] is unary(Ops.SIN, v)
    assert mapping[graph] is unary(Ops.SQRT, unary(Ops.SIN, v)) + w
    assert mapping[v] is v


def test_graph_rewrite_map_covers_nodes_a_bottom_up_rule_skipped() -> None:
    # regression: x*0 -> 0 never visits x, and the map raised KeyError for it
    x = UOp.variable("x", 0, 10)
    inner = unary(Ops.NEG, x)
    zero = PatternMatcher(
        [
            (UPat.var("a") * 0, lambda a: a.const_like(0)),
            (UPat(Ops.NEG, name="a"), lambda a: a.src[0]),
        ]
    )
    mapping = graph_rewrite_map(inner * 0, zero, bottom_up=True)
    assert mapping[inner * 0] is UOp.const(0, dtypes.weakint)
    assert mapping[inner] is x


def test_substitute_replaces_without_rewriting_the_replacement() -> None:
    x = UOp.variable("x", 0, 10)
    y = UOp.variable("y", 0, 10)
    graph = (x + 1) * x
    assert substitute(graph, {x: y}) is (y + 1) * y
    assert graph.substitute({x + 1: x}) is x * x
    # the replacement itself is not substituted again
    assert substitute(x + 1, {x: x + 1}) is (x + 1) + 1
    assert substitute(graph, {}) is graph
