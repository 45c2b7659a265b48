"""The rewrite engine: apply a PatternMatcher to a whole graph until nothing matches.

``graph_rewrite`` is iterative (an explicit stack, no Python recursion), so 100k-deep graphs
rewrite fine, and memoized within one call, so a shared subgraph is rewritten once.

Two orders:

* ``bottom_up=False`` (default, "top-down" in the tracker's words): a node is rewritten
  *after* its sources. The sources are rewritten first, the node is rebuilt on the new
  sources, then rules are applied to it; when a rule returns a new node, that node is
  processed the same way (its own new sources first) until no rule matches.
* ``bottom_up=True``: rules are tried on a node *before* its sources, repeatedly until none
  matches, then the sources of the result are processed, and the rebuilt node is tried again.
  This sees the original structure above a node before the node is rewritten.

``walk=True`` makes one pass instead of a fixed point: every node is rebuilt on its rewritten
sources and offered to the rules once; a rule's result is not revisited.

Tracing: ``add_tracer(fn)`` registers a callback ``fn(event)`` receiving every rewrite (which
rule, before, after) of every graph_rewrite; with no tracer the engine runs its untraced
loop. ``TRACK_MATCH_STATS``/``VIZ`` install the built-in tracers.
"""

from __future__ import annotations

import atexit
import inspect
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ParamSpec

from fusegrad.uop import tracking
from fusegrad.uop.flags import REWRITE_STACK_LIMIT, TRACK_MATCH_STATS, VIZ
from fusegrad.uop.opcodes import GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, RewriteFn, UPat, rule_name
from fusegrad.uop.uop import UOp
from fusegrad.uop.viztrace import ACTIVE as _TRACE
from fusegrad.uop.viztrace import Step, Trace, source_of

MAX_REWRITES = 2_000_000
P = ParamSpec("P")


class RewriteNotConverging(RuntimeError):
    """A rule set kept producing new nodes: it has no fixed point on this graph."""


class BottomUpGate(Exception):
    """Raised by a rule of a bottom-up rewrite to keep the node it was given as it is and not
    descend into its sources (``graph_rewrite(..., bottom_up=True)``; a rule that already
    replaced the node keeps the replacement)."""


@dataclass(frozen=True, slots=True)
class RewriteEvent:
    """One rule firing inside a graph_rewrite."""

    rewrite_name: str | None
    rule: str
    before: UOp
    after: UOp


Tracer = Callable[[RewriteEvent], None]
_tracers: list[Tracer] = []


def add_tracer(fn: Tracer) -> None:
    """Receive every RewriteEvent from now on."""
    _tracers.append(fn)


def remove_tracer(fn: Tracer) -> None:
    """Stop receiving RewriteEvents."""
    _tracers.remove(fn)


@dataclass
class MatchStats:
    """Counts of rule firings per rule, kept while TRACK_MATCH_STATS is on."""

    fired: dict[str, int] = field(default_factory=dict)

    def __call__(self, event: RewriteEvent) -> None:
        self.fired[event.rule] = self.fired.get(event.rule, 0) + 1

    def report(self) -> str:
        lines = [f"{n:8d}  {rule}" for rule, n in sorted(self.fired.items(), key=lambda kv: -kv[1])]
        return "\n".join(["rule firings (TRACK_MATCH_STATS):", *lines])


@dataclass
class RewriteLog:
    """Every rewrite step, grouped by graph_rewrite call, for the visualizer (VIZ=1)."""

    steps: list[RewriteEvent] = field(default_factory=list)

    def __call__(self, event: RewriteEvent) -> None:
        self.steps.append(event)


match_stats = MatchStats()
rewrite_log = RewriteLog()
if TRACK_MATCH_STATS:
    add_tracer(match_stats)
    atexit.register(lambda: print(match_stats.report()))
if VIZ:
    add_tracer(rewrite_log)
if VIZ or TRACK_MATCH_STATS:  # the stage trace (fusegrad.uop.viztrace), shown by fusegrad.viz
    _TRACE.append(Trace())
if VIZ:

    def _viz_at_exit() -> None:
        import importlib

        try:
            viz = importlib.import_module("fusegrad.viz")
        except ImportError:
            return
        if _TRACE:
            viz.at_exit(_TRACE[0])

    atexit.register(_viz_at_exit)


class _Marker:
    """A stack marker of the rewrite walks."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_SOURCES_DONE = _Marker("SOURCES_DONE")
_RESULT_DONE = _Marker("RESULT_DONE")
SENTINEL = _SOURCES_DONE
"""The rewrite walks' stack marker (tinygrad's name): below it lies a node whose sources were
pushed above it, so meeting it again means they are rewritten."""


class RewriteContext:
    """State of one graph_rewrite call: the matcher, the ``ctx`` its rules get, the memo
    (``done``: original or intermediate node -> its final form) and the rule application,
    traced or not.

    As tinygrad's: ``pm`` rewrites top-down (sources first), ``bpm`` bottom-up (node first);
    fusegrad's engine walks with one of them. ``enter_calls``: the engine always rewrites a
    CALL's callee with the rest (False is refused). ``unified_rewrite(root)`` runs it.
    """

    def __init__(
        self,
        pm: PatternMatcher | None,
        bpm: PatternMatcher | None = None,
        ctx: Any = None,
        enter_calls: bool = True,
        name: str | None = None,
    ) -> None:
        if (pm is None) == (bpm is None):
            raise ValueError(
                "RewriteContext: give one matcher, pm (top-down) or bpm (bottom-up); "
                f"got pm={pm is not None}, bpm={bpm is not None}"
            )
        if not enter_calls:
            raise ValueError("RewriteContext: enter_calls=False is not supported by fusegrad")
        matcher = pm if pm is not None else bpm
        assert matcher is not None
        self.pm: PatternMatcher = matcher
        self.is_bottom_up = bpm is not None
        self.ctx = ctx
        self.name = name
        self.done: dict[UOp, UOp] = {}
        self.count = 0
        self.stack_limit: int = REWRITE_STACK_LIMIT.value
        # nodes waiting for a rule's result to be rewritten: meeting one again is a cycle
        self.waiting: set[UOp] = set()
        traced = _tracers or _TRACE
        self.apply: Callable[[UOp, Any], UOp | None] = (
            matcher.rewrite if not traced else self._traced
        )

    def _traced(self, u: UOp, ctx: Any) -> UOp | None:
        return self.pm.rewrite_traced(u, ctx, self._report)

    def _report(self, pat: UPat, fn: RewriteFn, before: UOp, after: UOp) -> None:
        event = RewriteEvent(self.name, rule_name(fn), before, after)
        for t in list(_tracers):
            t(event)
        if _TRACE:
            _TRACE[0].step(Step(event.rule, source_of(fn), before, after, self.name))

    def unified_rewrite(self, root: UOp) -> UOp:
        """``root``'s graph rewritten (top-down with ``pm``, bottom-up with ``bpm``)."""
        return self.bottom_up(root) if self.is_bottom_up else self.top_down(root)

    def _count(self, depth: int = 0) -> None:
        self.count += 1
        if self.count > MAX_REWRITES:
            raise RewriteNotConverging(
                f"graph_rewrite {self.name or ''}: more than {MAX_REWRITES} rewrites, the rules loop"
            )
        if depth > self.stack_limit:
            raise RewriteNotConverging(
                f"graph_rewrite {self.name or ''}: {depth} pending stack entries exceed "
                f"REWRITE_STACK_LIMIT={self.stack_limit}, the rules keep growing the graph"
            )

    def _cycle(self, node: UOp) -> RewriteNotConverging:
        return RewriteNotConverging(
            f"graph_rewrite {self.name or ''}: a rule's result contains the node it rewrites "
            f"({node.op!r}), the rules make a cycle"
        )

    def rebuild(self, u: UOp) -> UOp:
        """``u`` on its sources' rewritten versions (``u`` itself if none changed)."""
        new_src = tuple(map(self.done.__getitem__, u.src))
        if new_src == u.src:  # element identity: UOp equality is identity
            return u
        return UOp(u.op, u.dtype, new_src, u.arg, u.tag)

    # The walks keep an explicit stack of UOps and two markers instead of (node, stage) tuples:
    # allocating a tuple per step made the garbage collector rescan the whole graph often
    # (it halved the speed of a 100k-node rewrite). Below a marker lie the nodes it refers to.
    # Sources are pushed unfiltered (one already done is skipped when popped), a node is
    # rebuilt inline (``map`` over the memo), and the rules are applied only to a node whose
    # op has some (``pm.rules[op]`` is empty otherwise).

    def top_down(self, root: UOp) -> UOp:
        """Sources first: a node is rebuilt on its rewritten sources, then offered to the rules;
        a rule's result is rewritten the same way, until no rule matches."""
        done, waiting, apply, ctx, rules = (
            self.done,
            self.waiting,
            self.apply,
            self.ctx,
            self.pm.rules,
        )
        memo = done.__getitem__
        stack: list[Any] = [root]
        pop, push = stack.pop, stack.extend
        while stack:
            node = pop()
            if node is _SOURCES_DONE:  # [..., node, _SOURCES_DONE]
                node = pop()
                src = node.src
                new_src = tuple(map(memo, src))
                rebuilt = (
                    node
                    if new_src == src
                    else UOp(node.op, node.dtype, new_src, node.arg, node.tag)
                )
                ret = apply(rebuilt, ctx) if rules[rebuilt.op] else None
                if ret is None:
                    done[node] = done[rebuilt] = rebuilt
                    continue
                self._count(len(stack))
                waiting.add(node)
                push((node, ret, _RESULT_DONE, ret))
            elif node is _RESULT_DONE:  # [..., node, result, _RESULT_DONE]
                result = pop()
                node = pop()
                done[node] = done[result]
                waiting.discard(node)
            elif node not in done:
                if node in waiting:
                    raise self._cycle(node)
                push((node, _SOURCES_DONE, *reversed(node.src)))
        return done[root]

    def _settle(self, node: UOp, depth: int) -> UOp:
        """Apply rules to ``node`` until none matches (bottom-up's first step). A rule raising
        BottomUpGate settles the node as it is: it is marked done, its sources untouched."""
        cur, done, rules, apply, ctx = node, self.done, self.pm.rules, self.apply, self.ctx
        try:
            while cur not in done and rules[cur.op] and (ret := apply(cur, ctx)) is not None:
                self._count(depth)
                cur = ret
        except BottomUpGate:
            done[cur] = cur
        return cur

    def bottom_up(self, root: UOp) -> UOp:
        """Node first: rules are applied to a node until none matches, then its sources are
        rewritten, and the node rebuilt on them is offered to the rules again."""
        done, settle, rules = self.done, self._settle, self.pm.rules
        memo = done.__getitem__
        stack: list[Any] = [root]
        pop, push = stack.pop, stack.extend
        while stack:
            node = pop()
            if node is _SOURCES_DONE:  # [..., node, settled, _SOURCES_DONE]
                settled = pop()
                node = pop()
                src = settled.src
                new_src = tuple(map(memo, src))
                if new_src == src:
                    done[node] = done[settled] = settled
                    continue
                rebuilt = UOp(settled.op, settled.dtype, new_src, settled.arg, settled.tag)
                push((node, rebuilt, _RESULT_DONE, rebuilt))
            elif node is _RESULT_DONE:  # [..., node, result, _RESULT_DONE]
                result = pop()
                done[pop()] = done[result]
            elif node not in done:
                settled = settle(node, len(stack)) if rules[node.op] else node
                if settled in done:
                    done[node] = done[settled]
                    continue
                push((node, settled, _SOURCES_DONE, *reversed(settled.src)))
        return done[root]

    def walk(self, root: UOp) -> UOp:
        """One pass: every node rebuilt on its sources' results and offered to the rules once."""
        done, rules, apply, ctx = self.done, self.pm.rules, self.apply, self.ctx
        for node in root.toposort():
            rebuilt = self.rebuild(node)
            ret = apply(rebuilt, ctx) if rules[rebuilt.op] else None
            done[node] = rebuilt if ret is None else ret
        return done[root]


def _tracked(fn: Callable[P, UOp]) -> Callable[P, UOp]:
    """``fn`` (the engine's entry) recorded as a ``TrackedGraphRewrite`` when it runs inside an
    open ``rewrite_group`` (tinygrad's tracking wrapper: the wrapper takes ``*args, **kwargs``
    and passes them on)."""
    signature = inspect.signature(fn)

    def graph_rewrite(*args: P.args, **kwargs: P.kwargs) -> UOp:
        if not tracking.active_group:
            return fn(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        tracked = tracking.begin_rewrite(a["sink"], a["name"], a["bottom_up"], a["walk"])

        def on_event(event: RewriteEvent) -> None:
            if tracking.active_rewrites and tracking.active_rewrites[-1] is tracked:
                tracking.record_match(tracked, event.rule, event.before, event.after)

        add_tracer(on_event)
        try:
            return fn(*args, **kwargs)
        finally:
            remove_tracer(on_event)
            tracking.end_rewrite(tracked)

    graph_rewrite.__doc__ = fn.__doc__
    graph_rewrite.__module__ = fn.__module__
    return graph_rewrite


@_tracked
def graph_rewrite(
    sink: UOp,
    pm: PatternMatcher,
    ctx: Any = None,
    bottom_up: bool = False,
    name: str | None = None,
    walk: bool = False,
) -> UOp:
    """``sink``'s graph rewritten with ``pm`` (see the module docstring for the orders).

    Parameters: ``graph_rewrite(sink, pm, ctx=None, bottom_up=False, name=None, walk=False)``
    (the callable takes ``*args, **kwargs``: a tracking wrapper, as tinygrad's, records the
    call inside an open ``rewrite_group``)."""
    rw = (
        RewriteContext(None, pm, ctx, name=name)
        if bottom_up
        else RewriteContext(pm, None, ctx, name=name)
    )
    if _TRACE:  # VIZ / TRACK_MATCH_STATS: the call is a stage of the trace
        trace, out = _TRACE[0], sink
        stage = trace.begin(name or "graph_rewrite", sink)
        try:
            out = rw.walk(sink) if walk else rw.bottom_up(sink) if bottom_up else rw.top_down(sink)
        finally:
            trace.end(stage, out)
        return out
    if walk:
        return rw.walk(sink)
    return rw.bottom_up(sink) if bottom_up else rw.top_down(sink)


def graph_rewrite_map(
    sink: UOp,
    pm: PatternMatcher,
    ctx: Any = None,
    bottom_up: bool = False,
    name: str | None = None,
) -> dict[UOp, UOp]:
    """Like graph_rewrite, but returns what every original node of ``sink``'s graph became.

    A bottom-up rule can replace a node without visiting its sources (``x*0 -> 0``); such a
    source is rewritten on its own (sharing the call's memo), so every node has an entry.
    """
    rw = (
        RewriteContext(None, pm, ctx, name=name)
        if bottom_up
        else RewriteContext(pm, None, ctx, name=name)
    )
    run = rw.bottom_up if bottom_up else rw.top_down
    stage = _TRACE[0].begin(name or "graph_rewrite_map", sink) if _TRACE else None
    out = sink
    try:
        out = run(sink)
    finally:
        if stage is not None:
            _TRACE[0].end(stage, out)
    return {u: rw.done[u] if u in rw.done else run(u) for u in sink.toposort()}


def substitute(root: UOp, mapping: Mapping[UOp, UOp], enter_calls: bool = True) -> UOp:
    """``root`` with each key of ``mapping`` replaced by its value (one pass, no rules;
    ``enter_calls=False`` leaves the callee of a CALL as it is)."""
    done: dict[UOp, UOp] = {}
    memo = done.__getitem__
    order = root.toposort(gate=lambda u: u not in mapping, enter_calls=enter_calls)
    if not enter_calls:
        for call in (u for u in order if u.op is Ops.CALL and u not in mapping):
            done.setdefault(call.src[0], call.src[0])
    for node in order:
        if node in mapping:
            done[node] = mapping[node]
            continue
        src = node.src
        new_src = tuple(map(memo, src))
        done[node] = (
            node if new_src == src else UOp(node.op, node.dtype, new_src, node.arg, node.tag)
        )
    return done[root]


def timed_rewrite(sink: UOp, pm: PatternMatcher, **kwargs: Any) -> tuple[UOp, float]:
    """graph_rewrite and the seconds it took (for benchmarks and DEBUG timing lines)."""
    start = time.perf_counter()
    out = graph_rewrite(sink, pm, **kwargs)
    return out, time.perf_counter() - start


# -- graph helpers tinygrad keeps in tinygrad.uop.ops ---------------------------------------------
remove_all_tags = PatternMatcher(
    [(UPat(GroupOp.All, name="x"), lambda x: x.replace(tag=None) if x.tag is not None else None)]
)
"""A rewrite table that clears every node's tag (``graph_rewrite(sink, remove_all_tags)``)."""


def consumer_map_from_toposort(lst: Iterable[UOp]) -> dict[UOp, dict[UOp, None]]:
    """Each node of ``lst`` (sources before users, as ``toposort`` lists them) to its users
    among ``lst``, in order."""
    users: dict[UOp, dict[UOp, None]] = {}
    for u in lst:
        users.setdefault(u, {})
        for s in u.src:
            users.setdefault(s, {})[u] = None
    return users


def do_unbind(ctx: dict[UOp, int], x: UOp) -> UOp | None:
    """A bound Variable as its Variable, its value recorded in ``ctx`` (the rule of
    ``pm_unbind``); None for any other node."""
    if not x.is_bound_var:
        return None
    var, value = x.unbind()
    ctx[var] = value
    return var


pm_unbind = PatternMatcher([(UPat(Ops.AFTER, name="x"), do_unbind)])
"""Every bound Variable replaced by its Variable, the values collected in the ``ctx`` dict
(``graph_rewrite(sink, pm_unbind, ctx=values)``)."""
