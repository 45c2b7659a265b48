"""The state one run of the lowering pipeline threads through its stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.lower.walk import nodes
from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import AxisType, Invalid, Ops, UOp

# loops nest in this order of axis types (outermost first), then by axis id
_NESTING: dict[AxisType, int] = {
    AxisType.OUTER: 0,
    AxisType.GLOBAL: 1,
    AxisType.THREAD: 1,
    AxisType.LOCAL: 2,
    AxisType.LOOP: 3,
    AxisType.UPCAST: 4,
    AxisType.GROUP_REDUCE: 5,
    AxisType.REDUCE: 6,
    AxisType.UNROLL: 7,
}


def nesting_key(rng: UOp) -> tuple[int, int]:
    """Where a loop goes in a nest: outer loops have smaller keys."""
    axis, kind = rng.arg
    return _NESTING[kind], axis


def sorted_ranges(ranges: tuple[UOp, ...] | list[UOp]) -> list[UOp]:
    """``ranges`` outermost first."""
    return sorted(ranges, key=nesting_key)


def end_nested(effect: UOp, ranges: tuple[UOp, ...] | list[UOp]) -> UOp:
    """``effect`` closed by one END per range, innermost END first."""
    out = effect
    for rng in reversed(sorted_ranges(ranges)):
        out = out.end(rng)
    return out


@dataclass(frozen=True, slots=True)
class Census:
    """What a graph contains, found in one walk: stages look here to skip work they don't
    have (a stage that would rewrite nothing costs a whole graph rewrite otherwise)."""

    ops: frozenset[Ops]
    axis_types: frozenset[AxisType]
    max_axis: int
    vectors: bool  # some node has a vector dtype
    invalid: bool  # some index is masked with Invalid
    loose_ends: bool  # an END closes several ranges, or a range has several ENDs

    @staticmethod
    def of(sink: UOp) -> Census:
        """The census of ``sink``'s graph."""
        ops: set[Ops] = set()
        kinds: set[AxisType] = set()
        closed: set[UOp] = set()
        max_axis, vectors, invalid, loose = 0, False, False, False
        for u in nodes(sink):
            op = u.op
            ops.add(op)
            vectors = vectors or u.dtype.count > 1
            if op is Ops.RANGE:
                kinds.add(u.arg[1])
                max_axis = max(max_axis, u.arg[0])
            elif op is Ops.CONST and u.arg is Invalid:
                invalid = True
            elif op is Ops.END:
                loose = loose or len(u.src) != 2 or u.src[1] in closed
                closed.update(u.src[1:])
        return Census(frozenset(ops), frozenset(kinds), max_axis, vectors, invalid, loose)


@dataclass
class LowerContext:
    """What a lowering run knows and collects: the target, fresh-name counters, and the
    launch dimensions found while mapping axes to hardware ids."""

    renderer: Renderer
    global_size: list[Any] = field(default_factory=lambda: [1, 1, 1])
    local_size: list[Any] | None = None
    next_axis: int = 0
    next_buffer: int = 0
    claimed_ranges: set[UOp] = field(default_factory=set)
    applied_opts: tuple[Any, ...] = ()
    _census: tuple[UOp, Census] | None = None

    def census(self, sink: UOp) -> Census:
        """``Census.of(sink)``, kept for the next stage while the graph is unchanged."""
        if self._census is None or self._census[0] is not sink:
            self._census = (sink, Census.of(sink))
        return self._census[1]

    def fresh_axis(self) -> int:
        """An axis id no RANGE of the kernel uses yet."""
        self.next_axis += 1
        return self.next_axis

    def fresh_buffer(self) -> int:
        """A number for a new DEFINE_REG/DEFINE_LOCAL."""
        self.next_buffer += 1
        return self.next_buffer

    def note_axes(self, sink: UOp) -> None:
        """Start fresh axis ids above every axis id in ``sink``."""
        self.next_axis = max(self.next_axis, self.census(sink).max_axis) + 100
