"""tinygrad's rewrite tracking, on fusegrad's engine: groups of graph_rewrite calls, each
recorded with the rules that fired in it.

A function decorated with ``rewrite_group()`` opens a group per call while tracking is on
(``TRACK_MATCH_STATS >= 2`` or ``VIZ``): its key goes to ``tracked_keys`` and every
``graph_rewrite`` run inside appends a ``TrackedGraphRewrite`` to the group's list in
``tracked_ctxs``: where it was called, the sink, each match as (node before, node after, rule
location, seconds since the rewrite began), its name, nesting depth and mode. Nodes are recorded
by number (``ucount``); ``uop_fields`` maps a number to the node's fields with its sources as
numbers, so a ``RewriteTrace`` (keys, rewrites, fields) is plain data that pickles without the
graph. Off (the default), ``rewrite_group`` calls the function and records nothing.

(``fusegrad.uop.viztrace`` is fusegrad's own stage trace behind the visualizer; this module is
the record tinygrad's tools read.)

>>> from fusegrad.uop import UOp, graph_rewrite, symbolic, Context
>>> @rewrite_group(name=lambda x: f"simplify {x.render(simplify=False)}")
... def simplify(x: UOp) -> UOp:
...     return graph_rewrite(x, symbolic, name="sym")
>>> with Context(TRACK_MATCH_STATS=2):
...     _ = simplify(UOp.variable("a", 0, 9) + 0)
>>> tracked_keys[-1], tracked_ctxs[-1][0].name, len(tracked_ctxs[-1][0].matches)
('simplify a+0', 'sym', 1)
"""

from __future__ import annotations

import functools
import itertools
import pickle
import sys
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from fusegrad.uop.flags import CAPTURE_PROCESS_REPLAY, TRACK_MATCH_STATS, VIZ
from fusegrad.uop.pattern import PatternMatcher, RewriteFn, UPat
from fusegrad.uop.uop import UOp

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class TrackedGraphRewrite:
    """One graph_rewrite inside a tracked group. ``loc``: (file, line) of the call; ``sink``:
    the input's number; ``matches``: (before, after, rule location, seconds) per rule firing,
    nodes as numbers; ``depth``: how many tracked rewrites were open around it."""

    loc: tuple[str, int]
    sink: int
    matches: list[tuple[int, int, tuple[str, int], float]]
    name: str
    depth: int
    bottom_up: bool
    walk: bool
    enter_calls: bool
    started: float = field(default=0.0, repr=False)  # perf_counter() at the start


@dataclass
class RewriteTrace:
    """A snapshot of everything tracked: group keys, their rewrites, the numbered nodes."""

    keys: list[Any]
    rewrites: list[list[TrackedGraphRewrite]]
    uop_fields: dict[int, tuple[Any, ...]] = field(default_factory=dict)

    @staticmethod
    def capture() -> RewriteTrace:
        """The current tracked state, copied."""
        return RewriteTrace(list(tracked_keys), [list(r) for r in tracked_ctxs], dict(uop_fields))


tracked_keys: list[Any] = []
"""The key of each tracked group, in order (a name or what ``rewrite_group``'s name made)."""
tracked_ctxs: list[list[TrackedGraphRewrite]] = []
"""The rewrites of each tracked group, parallel to ``tracked_keys``."""
active_group: list[Any] = []
"""The keys of the groups open now (innermost last)."""
active_rewrites: list[TrackedGraphRewrite] = []
"""The tracked graph_rewrites running now (innermost last)."""
ucount = itertools.count()
"""Numbers for nodes seen by the tracker (in ``uop_fields``)."""
uop_fields: dict[int, tuple[Any, ...]] = {}
"""Node number -> (op, dtype, source numbers, arg, tag) of each node the tracker recorded."""
replay_captures: list[tuple[str, bytes]] = []
"""(function name, pickled (args, kwargs, result)) of each ``rewrite_group(replay=True)`` call
made under ``CAPTURE_PROCESS_REPLAY``."""

_numbers: weakref.WeakKeyDictionary[UOp, int] = weakref.WeakKeyDictionary()


def tracking() -> bool:
    """Whether groups are recorded now (``TRACK_MATCH_STATS >= 2`` or ``VIZ``)."""
    return bool(TRACK_MATCH_STATS.value >= 2 or VIZ.value)


def uop_number(u: UOp) -> int:
    """``u``'s tracking number; ``u`` and the nodes below it not numbered yet are numbered and
    their fields recorded in ``uop_fields``."""
    known = _numbers.get(u)
    if known is not None:
        return known
    for n in u.toposort(gate=lambda x: x not in _numbers):
        if n in _numbers:
            continue
        num = _numbers[n] = next(ucount)
        uop_fields[num] = (n.op, n.dtype, tuple(_numbers[s] for s in n.src), n.arg, n.tag)
    return _numbers[u]


def add_trace_group(kt: Any) -> None:
    """Start a new tracked group with key ``kt`` (later rewrites record into it)."""
    tracked_keys.append(kt)
    tracked_ctxs.append([])


def rewrite_group(
    name: Callable[..., Any] | bool = True, replay: bool = False, new_ctx: bool = True
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator: while tracking is on, each call of the function is a tracked group.

    ``name``: True keys the group by the function's name, a callable by
    ``name(*args, **kwargs)``, False records nothing; ``new_ctx=False`` adds to the current
    group instead of opening one; ``replay=True`` under ``CAPTURE_PROCESS_REPLAY`` pickles the
    call's arguments and result into ``replay_captures``.
    """

    def decorator(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            if not name or not tracking():
                return _replayed(fn, replay, args, kwargs)
            key = name(*args, **kwargs) if callable(name) else fn.__name__
            if new_ctx or not tracked_ctxs:
                add_trace_group(key)
            active_group.append(key)
            try:
                return _replayed(fn, replay, args, kwargs)
            finally:
                active_group.pop()

        return wrapper

    return decorator


def _replayed(fn: Callable[..., R], replay: bool, args: Any, kwargs: Any) -> R:
    ret = fn(*args, **kwargs)
    if replay and CAPTURE_PROCESS_REPLAY.value:
        replay_captures.append((fn.__name__, pickle.dumps((args, kwargs, ret))))
    return ret


def begin_rewrite(
    sink: UOp, name: str | None, bottom_up: bool, walk: bool, depth: int = 2
) -> TrackedGraphRewrite:
    """Record a graph_rewrite starting in the open group, called from ``depth`` frames up
    (the engine calls this; ``end_rewrite`` closes it)."""
    caller = sys._getframe(depth)
    tracked = TrackedGraphRewrite(
        (caller.f_code.co_filename, caller.f_lineno),
        uop_number(sink),
        [],
        name or "graph_rewrite",
        len(active_rewrites),
        bottom_up,
        walk,
        True,
        time.perf_counter(),
    )
    tracked_ctxs[-1].append(tracked)
    active_rewrites.append(tracked)
    return tracked


def end_rewrite(tracked: TrackedGraphRewrite) -> None:
    """Close a rewrite opened by ``begin_rewrite``."""
    active_rewrites.remove(tracked)


def record_match(tracked: TrackedGraphRewrite, rule: str, before: UOp, after: UOp) -> None:
    """A rule (``file:line``, as ``rule_name`` gives it) fired inside ``tracked``."""
    path, _, line = rule.rpartition(":")
    loc = (path, int(line)) if line.isdigit() else (rule, 0)
    seconds = time.perf_counter() - tracked.started
    tracked.matches.append((uop_number(before), uop_number(after), loc, seconds))


class TrackedPatternMatcher(PatternMatcher):
    """A PatternMatcher that counts, per pattern, how often it was tried, how often it matched
    and the seconds spent (``match_stats[upat] = [matches, tries, seconds]``)."""

    def __init__(self, patterns: Sequence[tuple[UPat, RewriteFn]], compiled: bool = True) -> None:
        super().__init__(patterns, compiled)
        self.match_stats: dict[UPat, list[Any]] = {}

    def __add__(self, more: PatternMatcher) -> TrackedPatternMatcher:
        return TrackedPatternMatcher(self.patterns + more.patterns, self.compiled and more.compiled)

    def rewrite(self, uop: UOp, ctx: Any = None) -> UOp | None:
        """``PatternMatcher.rewrite``, counted."""
        entries = self.pdict.get(uop.op, ())
        for (match, fn), (pat, _, _, _) in zip(self.rules[uop.op], entries, strict=True):
            stats = self.match_stats.setdefault(pat, [0, 0, 0.0])
            start = time.perf_counter()
            ret = match(uop, ctx, fn)
            stats[1] += 1
            stats[2] += time.perf_counter() - start
            if ret is not None:
                stats[0] += 1
                return ret
        return None
