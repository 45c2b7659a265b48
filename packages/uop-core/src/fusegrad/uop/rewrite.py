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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fusegrad.uop.flags import TRACK_MATCH_STATS, VIZ
from fusegrad.uop.pattern import PatternMatcher, RewriteFn, UPat, rule_name
from fusegrad.uop.uop import UOp

MAX_REWRITES = 2_000_000


class RewriteNotConverging(RuntimeError):
    """A rule set kept producing new nodes: it has no fixed point on this graph."""


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


class _Rewriter:
    """State of one graph_rewrite call."""

    def __init__(self, pm: PatternMatcher, ctx: Any, name: str | None) -> None:
        self.pm = pm
        self.ctx = ctx
        self.name = name
        self.done: dict[UOp, UOp] = {}
        self.count = 0
        self.apply: Callable[[UOp], UOp | None] = (
            self._apply_plain if not _tracers else self._apply_traced
        )

    def _apply_plain(self, u: UOp) -> UOp | None:
        return self.pm.rewrite(u, self.ctx)

    def _apply_traced(self, u: UOp) -> UOp | None:
        return self.pm.rewrite_traced(u, self.ctx, self._report)

    def _report(self, pat: UPat, fn: RewriteFn, before: UOp, after: UOp) -> None:
        event = RewriteEvent(self.name, rule_name(fn), before, after)
        for t in list(_tracers):
            t(event)

    def _count(self) -> None:
        self.count += 1
        if self.count > MAX_REWRITES:
            raise RewriteNotConverging(
                f"graph_rewrite {self.name or ''}: more than {MAX_REWRITES} rewrites, the rules loop"
            )

    def rebuild(self, u: UOp) -> UOp:
        """``u`` on its sources' rewritten versions (``u`` itself if none changed)."""
        src = u.src
        new_src = tuple(self.done[s] for s in src)
        if all(a is b for a, b in zip(new_src, src, strict=True)):
            return u
        return u.replace(src=new_src)

    def top_down(self, root: UOp) -> UOp:
        done = self.done
        # frames: (node, stage, link); stage 0 visit, 1 sources done, 2 result of a rewrite done
        stack: list[tuple[UOp, int, UOp | None]] = [(root, 0, None)]
        active: set[UOp] = set()
        while stack:
            node, stage, link = stack.pop()
            if stage == 0:
                if node in done:
                    continue
                if node in active:
                    raise RewriteNotConverging(
                        f"graph_rewrite {self.name or ''}: a rule made a cycle"
                    )
                active.add(node)
                stack.append((node, 1, None))
                stack.extend((s, 0, None) for s in reversed(node.src) if s not in done)
            elif stage == 1:
                rebuilt = self.rebuild(node)
                ret = self.apply(rebuilt)
                if ret is None:
                    done[node] = done[rebuilt] = rebuilt
                    active.discard(node)
                    continue
                self._count()
                stack.append((node, 2, ret))
                stack.append((ret, 0, None))
            else:
                assert link is not None
                done[node] = done[link]
                active.discard(node)
        return done[root]

    def bottom_up(self, root: UOp) -> UOp:
        done = self.done
        stack: list[tuple[UOp, int, UOp | None]] = [(root, 0, None)]
        while stack:
            node, stage, link = stack.pop()
            if stage == 0:
                if node in done:
                    continue
                cur = node
                while (ret := self.apply(cur)) is not None:
                    self._count()
                    cur = ret
                    if cur in done:
                        break
                if cur in done:
                    done[node] = done[cur]
                    continue
                stack.append((node, 1, cur))
                stack.extend((s, 0, None) for s in reversed(cur.src) if s not in done)
            elif stage == 1:
                assert link is not None
                rebuilt = self.rebuild(link)
                if rebuilt is link:
                    done[node] = done[link] = link
                    continue
                stack.append((node, 2, rebuilt))
                stack.append((rebuilt, 0, None))
            else:
                assert link is not None
                done[node] = done[link]
        return done[root]

    def walk(self, root: UOp) -> UOp:
        for node in root.toposort():
            rebuilt = self.rebuild(node)
            ret = self.apply(rebuilt)
            self.done[node] = rebuilt if ret is None else ret
        return self.done[root]


def graph_rewrite(
    sink: UOp,
    pm: PatternMatcher,
    ctx: Any = None,
    bottom_up: bool = False,
    name: str | None = None,
    walk: bool = False,
) -> UOp:
    """``sink``'s graph rewritten with ``pm`` (see the module docstring for the orders)."""
    rw = _Rewriter(pm, ctx, name)
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
    """Like graph_rewrite, but returns what every original node of ``sink``'s graph became."""
    rw = _Rewriter(pm, ctx, name)
    if bottom_up:
        rw.bottom_up(sink)
    else:
        rw.top_down(sink)
    return {u: rw.done[u] for u in sink.toposort()}


def substitute(root: UOp, mapping: Mapping[UOp, UOp]) -> UOp:
    """``root`` with each key of ``mapping`` replaced by its value (one pass, no rules)."""
    done: dict[UOp, UOp] = {}
    for node in root.toposort(gate=lambda u: u not in mapping):
        if node in mapping:
            done[node] = mapping[node]
            continue
        new_src = tuple(done[s] for s in node.src)
        same = all(a is b for a, b in zip(new_src, node.src, strict=True))
        done[node] = node if same else node.replace(src=new_src)
    return done[root]


def timed_rewrite(sink: UOp, pm: PatternMatcher, **kwargs: Any) -> tuple[UOp, float]:
    """graph_rewrite and the seconds it took (for benchmarks and DEBUG timing lines)."""
    start = time.perf_counter()
    out = graph_rewrite(sink, pm, **kwargs)
    return out, time.perf_counter() - start
