"""The state one run of the lowering pipeline threads through its stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import AxisType, Ops, UOp

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
        axes = [u.arg[0] for u in sink.toposort() if u.op is Ops.RANGE]
        self.next_axis = max([self.next_axis, *axes]) + 100
