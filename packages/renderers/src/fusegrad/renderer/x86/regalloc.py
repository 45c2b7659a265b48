"""Register allocation: linear scan over live intervals, spilling to the stack.

The machine IR is one straight list of instructions with forward jumps (IF blocks, gated
memory, guarded division) and backward jumps (loops). A virtual register's interval runs
from its first to its last mention; a value live into a loop — mentioned before the loop
and inside it, a loop counter, a loop-carried accumulator, a loop bound — is extended to the
loop's back edge, so it keeps its register for every iteration.

Linear scan (Poletto & Sarkar) per register class: intervals by start, a register freed when
its interval ended (an instruction reads its sources before it writes, so a value dying at
an instruction hands its register to the value it defines). With every register taken, the
interval with the fewest mentions per instruction still ahead (the longest-lived among
equals) is spilled to a stack slot; instructions then load spilled sources into a scratch
register before and store a spilled result after (``isa.SCRATCH``).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from fusegrad.renderer.x86.isa import (
    ALLOCATABLE,
    SCRATCH,
    Inst,
    Label,
    Mem,
    Operand,
    Reg,
    RegClass,
    VReg,
    roles,
)


@dataclass
class Allocation:
    """Where every virtual register went: a physical register or a spill slot."""

    registers: dict[VReg, Reg] = field(default_factory=dict)
    spills: dict[VReg, int] = field(default_factory=dict)
    #: bytes a spilled vector register takes (32: ymm, 64: zmm)
    vector_bytes: int = 32

    @property
    def used(self) -> set[Reg]:
        return set(self.registers.values())


def _mentions(op: Operand) -> list[VReg]:
    if isinstance(op, VReg):
        return [op]
    if isinstance(op, Mem):
        return [r for r in (op.base, op.idx) if isinstance(r, VReg)]
    return []


def live_intervals(code: list[Inst]) -> dict[VReg, tuple[int, int]]:
    """[first, last] instruction index of every virtual register, loops accounted for."""
    return _walk(code)[0]


def _walk(code: list[Inst]) -> tuple[dict[VReg, tuple[int, int]], dict[VReg, int]]:
    """(live intervals, how many instructions mention each virtual register)."""
    first: dict[VReg, int] = {}
    last: dict[VReg, int] = {}
    uses: dict[VReg, int] = {}
    labels: dict[str, int] = {}
    loops: list[tuple[int, int]] = []
    for i, inst in enumerate(code):
        if inst.op == "label":
            assert isinstance(inst.args[0], Label)
            labels[inst.args[0].name] = i
        elif inst.op.startswith("j") and isinstance(inst.args[0], Label):
            target = labels.get(inst.args[0].name)
            if target is not None:  # a backward jump closes a loop
                loops.append((target, i))
        for op in inst.args:
            kind = type(op)
            if kind is Mem:
                mentioned = [r for r in (op.base, op.idx) if type(r) is VReg]  # type: ignore[union-attr]
            elif kind is VReg:
                mentioned = [op]  # type: ignore[list-item]
            else:
                continue
            for v in mentioned:
                if v not in first:
                    first[v] = i
                last[v] = i
                uses[v] = uses.get(v, 0) + 1
    _extend_into_loops(first, last, loops)
    return {v: (first[v], last[v]) for v in first}, uses


def _extend_into_loops(
    first: dict[VReg, int], last: dict[VReg, int], loops: list[tuple[int, int]]
) -> None:
    """A value mentioned before a loop and inside it lives until the loop's back edge (until
    nothing changes: extending into an inner loop's end may reach into an outer loop)."""
    changed = True
    while changed:
        changed = False
        for start, end in loops:
            for v, lo in first.items():
                if lo < start <= last[v] < end:
                    last[v] = end
                    changed = True


def linear_scan(code: list[Inst], vector_bytes: int = 32) -> Allocation:
    """Assign registers to the virtual registers of ``code`` (vector registers spill
    ``vector_bytes`` each: 64 where zmm values are used)."""
    out = Allocation(vector_bytes=vector_bytes)
    intervals, uses = _walk(code)
    for cls in ALLOCATABLE:
        mine = sorted(
            ((lo, hi, v) for v, (lo, hi) in intervals.items() if v.cls is cls),
            key=lambda t: (t[0], t[2]),
        )
        _scan(mine, list(ALLOCATABLE[cls]), out, uses)
    return out


def _victim(active: list[tuple[int, VReg]], lo: int, uses: dict[VReg, int]) -> int:
    """Index in ``active`` of the interval to spill: the fewest mentions per instruction
    still ahead of it (each mention of a spilled value costs a reload or a store), the
    longest-lived among equals."""
    return min(
        range(len(active)),
        key=lambda k: (uses[active[k][1]] / (active[k][0] - lo + 1), -active[k][0]),
    )


def _scan(
    intervals: list[tuple[int, int, VReg]], free: list[Reg], out: Allocation, uses: dict[VReg, int]
) -> None:
    active: list[tuple[int, VReg]] = []  # (end, vreg), sorted by end
    order = {r: i for i, r in enumerate(free)}
    available = list(range(len(free)))  # a heap of free registers' positions in ``free``
    for lo, hi, v in intervals:
        while active and active[0][0] <= lo:
            heapq.heappush(available, order[out.registers[active.pop(0)[1]]])
        if available:
            out.registers[v] = free[heapq.heappop(available)]
            bisect.insort(active, (hi, v))
            continue
        active.append((hi, v))
        k = _victim(active, lo, uses)
        victim = active.pop(k)[1]
        out.spills[victim] = len(out.spills)
        if victim is not v:  # v takes the spilled interval's register
            out.registers[v] = out.registers.pop(victim)
        active.sort()


def _spill_slot(n: int) -> Mem:
    return Mem(frame=("spill", n))


def _substitute(op: Operand, regs: dict[VReg, Reg], place: Callable[[Mem], Mem]) -> Operand:
    """``op`` with physical registers and its frame slot placed."""
    kind = type(op)
    if kind is VReg:
        return regs[op]  # type: ignore[index]
    if kind is not Mem:
        return op
    assert isinstance(op, Mem)
    if op.frame is not None:
        return place(op)
    base, index = op.base, op.idx
    if type(base) is not VReg and type(index) is not VReg:
        return op
    base = regs[base] if type(base) is VReg else base
    index = regs[index] if type(index) is VReg else index
    return Mem(base, index, op.scale, op.disp, op.label, op.frame, op.broadcast)


def _unplaced(m: Mem) -> Mem:
    return m


def _reload(reg: Reg, slot: Mem, size: int = 32) -> Inst:
    if reg.cls is RegClass.GPR:
        return Inst("mov", (reg, slot))
    return Inst("vmovups", (reg, slot), vlen=size)  # the whole register, whatever it holds


def _spill(reg: Reg, slot: Mem, size: int = 32) -> Inst:
    if reg.cls is RegClass.GPR:
        return Inst("store", (slot, reg))
    return Inst("vmovups_st", (slot, reg), vlen=size)


def _borrow(inst: Inst, alloc: Allocation, cls: RegClass, taken: set[Reg]) -> Reg:
    """A register of ``cls`` that ``inst`` doesn't use, to stand in as one more scratch
    (saved around the instruction)."""
    used = {alloc.registers[v] for op in inst.args for v in _mentions(op) if v in alloc.registers}
    used |= {op for op in inst.args if isinstance(op, Reg)}
    return next(r for r in ALLOCATABLE[cls] if r not in used and r not in taken)


def _move(reg: Reg, slot: Mem, load: bool, size: int) -> Inst:
    return _reload(reg, slot, size) if load else _spill(reg, slot, size)


def _spilled_memory(m: Mem, spills: dict[VReg, int]) -> bool:
    return m.base in spills or m.idx in spills


def _spilled_operands(
    inst: Inst, alloc: Allocation
) -> tuple[dict[VReg, Reg], list[Reg], list[VReg], list[VReg]]:
    """(scratch register of each spilled operand, the borrowed ones among them, spilled
    operands read, spilled operands written)."""
    spilled: dict[VReg, Reg] = {}
    borrowed: list[Reg] = []
    reads: list[VReg] = []
    writes: list[VReg] = []
    for role, op in zip(roles(inst), inst.args, strict=True):
        for v in _mentions(op):
            if v not in alloc.spills:
                continue
            if v not in spilled:
                taken = sum(1 for s in spilled if s.cls is v.cls)
                if taken < len(SCRATCH[v.cls]):
                    spilled[v] = SCRATCH[v.cls][taken]
                else:
                    spilled[v] = _borrow(inst, alloc, v.cls, set(spilled.values()))
                    borrowed.append(spilled[v])
            if isinstance(op, Mem) or role in ("R", "X"):
                reads.append(v)
            if isinstance(op, VReg) and role in ("W", "X"):
                writes.append(v)
    return spilled, borrowed, list(dict.fromkeys(reads)), list(dict.fromkeys(writes))


def _self_move(i: Inst) -> bool:
    """A copy the allocator made pointless (both sides got one register; a 32-bit ``mov``
    still zero-extends, so it stays)."""
    return i.op in ("mov", "vmovaps") and i.width == 8 and i.args[0] == i.args[1]


def rewrite(
    code: list[Inst], alloc: Allocation, place: Callable[[Mem], Mem] = _unplaced
) -> list[Inst]:
    """``code`` with physical registers and frame slots placed by ``place``; spilled values
    go through scratch registers (and, when an instruction has more spilled operands than
    there are scratch registers, through registers it doesn't use, saved and restored
    around it). Copies that became self-moves are dropped."""
    out: list[Inst] = []
    spills = alloc.spills
    regs = alloc.registers
    touched = _spilled_positions(code, spills) if spills else set()
    for at, inst in enumerate(code):
        if at in touched:
            out += _rewrite_spilled(inst, alloc, place)
            continue
        args = tuple([regs[op] if type(op) is VReg else _substitute(op, regs, place) for op in inst.args])  # fmt: skip
        new = Inst(inst.op, args, inst.width, inst.vlen)
        if not _self_move(new):
            out.append(new)
    return out


def _spilled_positions(code: list[Inst], spills: dict[VReg, int]) -> set[int]:
    """Indices of the instructions that mention a spilled virtual register."""
    out = set()
    for at, inst in enumerate(code):
        for op in inst.args:
            kind = type(op)
            if (kind is VReg and op in spills) or (kind is Mem and _spilled_memory(op, spills)):  # type: ignore[arg-type]
                out.add(at)
                break
    return out


def _rewrite_spilled(inst: Inst, alloc: Allocation, place: Callable[[Mem], Mem]) -> list[Inst]:
    """``inst`` with spilled operands: reloads before it, spill stores after it."""
    spilled, borrowed, reads, writes = _spilled_operands(inst, alloc)
    regs = _Overlay(alloc.registers, spilled)
    saves = [place(Mem(frame=("borrow", k))) for k in range(len(borrowed))]
    size = alloc.vector_bytes
    out = [_move(r, m, False, size) for r, m in zip(borrowed, saves, strict=True)]
    out += [_reload(spilled[v], place(_spill_slot(alloc.spills[v])), size) for v in reads]
    args = tuple(_substitute(op, regs, place) for op in inst.args)
    out.append(Inst(inst.op, args, inst.width, inst.vlen))
    out += [_spill(spilled[v], place(_spill_slot(alloc.spills[v])), size) for v in writes]
    out += [_move(r, m, True, size) for r, m in zip(borrowed, saves, strict=True)]
    return out


class _Overlay(dict[VReg, Reg]):
    """The scratch registers of an instruction's spilled operands over the allocation
    (without copying the allocation: it has a register per virtual register)."""

    def __init__(self, base: dict[VReg, Reg], top: dict[VReg, Reg]) -> None:
        super().__init__(top)
        self.base = base

    def __missing__(self, key: VReg) -> Reg:
        return self.base[key]
