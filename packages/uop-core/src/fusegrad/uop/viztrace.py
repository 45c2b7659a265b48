"""The stage trace behind VIZ: every graph-changing stage with its input, output and rules.

While a ``Trace`` is active (``VIZ=1`` or ``TRACK_MATCH_STATS>=1`` at import, or
``with capture() as trace:``), each ``graph_rewrite``, each hand walk (``lower.walk.rebuild``)
and each stage of the scheduler and the lowering pipeline records a ``Stage``: its name, the
graph it got, the graph it made and the rule firings in between (``Step``: rule, its
``file:line``, the node before and after). Stages are grouped (``Group``): one per schedule
and one per kernel lowering; a stage that runs inside another (a graph_rewrite inside a
pipeline stage) gives its firings to the outer one, so each pipeline stage is one record.

When no trace is active (``ACTIVE`` empty) every hook is one falsy-list test.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fusegrad.uop.uop import UOp


@dataclass(slots=True)
class Step:
    """One rule firing: ``rule`` is its readable name, ``source`` its ``path:line``."""

    rule: str
    source: str
    before: UOp
    after: UOp
    rewrite: str | None = None


@dataclass
class Stage:
    """One graph-changing stage: name, input graph, output graph, the firings within."""

    name: str
    input: UOp
    output: UOp | None = None
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0
    kind: str = "rewrite"
    _start: float = 0.0


@dataclass
class Group:
    """The stages of one schedule, one kernel lowering, or loose rewrites; ``info`` holds
    text the page shows next to them (the generated source, the linear program)."""

    name: str
    kind: str
    key: Any = None
    stages: list[Stage] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    root: UOp | None = None  # the graph the group's work started from


@dataclass
class Trace:
    """Everything recorded while active."""

    groups: list[Group] = field(default_factory=list)
    open_groups: list[Group] = field(default_factory=list)
    open_stages: list[Stage] = field(default_factory=list)

    def _current(self) -> Group:
        if self.open_groups:
            return self.open_groups[-1]
        if not self.groups or self.groups[-1].kind != "rewrites":
            self.groups.append(Group(f"rewrites {len(self.groups)}", "rewrites"))
        return self.groups[-1]

    def begin(self, name: str, graph: UOp, kind: str = "rewrite") -> Stage | None:
        """Open a stage (None inside another stage: its firings go to the outer one)."""
        if self.open_stages:
            return None
        stage = Stage(name, graph, kind=kind, _start=time.perf_counter())
        self.open_stages.append(stage)
        return stage

    def end(self, stage: Stage | None, graph: UOp) -> None:
        """Close ``stage`` (from ``begin``) with its output graph."""
        if stage is None:
            return
        self.open_stages.remove(stage)
        stage.output = graph
        stage.seconds = time.perf_counter() - stage._start
        self._current().stages.append(stage)

    def step(self, step: Step) -> None:
        """A rule fired; it belongs to the open stage (dropped when none is open)."""
        if self.open_stages:
            self.open_stages[-1].steps.append(step)

    def attach(self, key: Any, **info: str) -> None:
        """Text for the last group opened with ``key`` (a kernel's source, its program;
        ``name`` renames the group)."""
        for g in reversed(self.groups):
            if g.key is key:
                g.info.update(info)
                g.name = info.get("name", g.name)
                return

    def optimized(self, key: Any, ast: UOp, opts: tuple[Any, ...]) -> None:
        """Lead the group of ``key`` with the stage that made its ``root`` from ``ast`` (the
        kernel's opts applied: the heuristics' or BEAM's choice)."""
        for g in reversed(self.groups):
            if g.key is key:
                if g.root is not None and g.root is not ast:
                    text = ", ".join(map(str, opts)) or "none"
                    g.stages.insert(0, Stage(f"apply opts: {text}", ast, g.root, kind="opts"))
                return


ACTIVE: list[Trace] = []
"""The trace being recorded (at most one; empty: tracing off)."""


def source_of(fn: Callable[..., Any]) -> str:
    """``path:line`` of a function's definition ('' for a builtin)."""
    code = getattr(fn, "__code__", None)
    return "" if code is None else f"{code.co_filename}:{code.co_firstlineno}"


@contextmanager
def group(name: str, kind: str, key: Any = None) -> Iterator[Group | None]:
    """Record the stages run inside under a group (nothing when tracing is off)."""
    if not ACTIVE:
        yield None
        return
    trace = ACTIVE[0]
    g = Group(name, kind, key)
    trace.groups.append(g)
    trace.open_groups.append(g)
    try:
        yield g
    finally:
        trace.open_groups.remove(g)


def begin(name: str, graph: UOp, kind: str = "stage") -> Stage | None:
    """Open a stage on the active trace (None when off or nested)."""
    return ACTIVE[0].begin(name, graph, kind) if ACTIVE else None


def end(stage: Stage | None, graph: UOp) -> None:
    """Close a stage opened by ``begin``."""
    if stage is not None and ACTIVE:
        ACTIVE[0].end(stage, graph)


def attach(key: Any, **info: str) -> None:
    """Text for the group of ``key`` on the active trace (no-op when off)."""
    if ACTIVE:
        ACTIVE[0].attach(key, **info)


@contextmanager
def capture() -> Iterator[Trace]:
    """Record a fresh trace while inside (for tests and tools)."""
    trace = Trace()
    saved = list(ACTIVE)
    ACTIVE[:] = [trace]
    try:
        yield trace
    finally:
        ACTIVE[:] = saved
