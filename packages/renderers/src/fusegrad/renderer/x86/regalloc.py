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
    CONDITIONS,
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


#: jump mnemonics (a backward one closes a loop)
_JUMPS = frozenset({"jmp", *(f"j{c}" for c in CONDITIONS)})


def _loops(code: list[Inst]) -> list[tuple[int, int]]:
    """(target, jump) of every backward jump: the loops."""
    labels: dict[str, int] = {}
    loops: list[tuple[int, int]] = []
    for i, inst in enumerate(code):
        if inst.op == "label":
            labels[inst.args[0].name] = i  # type: ignore[union-attr,index]
        elif inst.op in _JUMPS and type(inst.args[0]) is Label:
            target = labels.get(inst.args[0].name)
            if target is not None:
                loops.append((target, i))
    return loops


def _walk(code: list[Inst]) -> tuple[dict[VReg, tuple[int, int]], dict[VReg, int]]:
    """(live intervals, how many instructions mention each virtual register)."""
    first: dict[VReg, int] = {}
    last: dict[VReg, int] = {}
    uses: dict[VReg, int] = {}
    for i, inst in enumerate(code):
        for op in inst[1]:  # args
            if type(op) is VReg:
                if op in last:
                    uses[op] += 1
                else:
                    first[op] = i
                    uses[op] = 1
                last[op] = i
            elif type(op) is Mem:
                for v in op[:2]:  # base, idx
                    if type(v) is not VReg:
                        continue
                    if v in last:
                        uses[v] += 1
                    else:
                        first[v] = i
                        uses[v] = 1
                    last[v] = i
    return _extend_into_loops(first, last, _loops(code)), uses


def _extend_into_loops(
    first: dict[VReg, int], last: dict[VReg, int], loops: list[tuple[int, int]]
) -> dict[VReg, tuple[int, int]]:
    """The intervals: a value mentioned before a loop and inside it lives until the loop's
    back edge. Loops by end, innermost first: extending into an inner loop's end may
    reach into an outer loop, which comes later (no loop before it can apply again: its end
    is not past the new one)."""
    by_end = sorted(loops, key=lambda loop: loop[1])
    out: dict[VReg, tuple[int, int]] = {}
    for v, lo in first.items():
        hi = last[v]
        for start, end in by_end:
            if lo < start <= hi < end:
                hi = end
        out[v] = (lo, hi)
    return out


def linear_scan(code: list[Inst], vector_bytes: int = 32) -> Allocation:
    """Assign registers to the virtual registers of ``code`` (vector registers spill
    ``vector_bytes`` each: 64 where zmm values are used)."""
    out = Allocation(vector_bytes=vector_bytes)
    intervals, uses = _walk(code)
    for cls in ALLOCATABLE:
        mine = sorted([(lo, v, hi) for v, (lo, hi) in intervals.items() if v.cls is cls])
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
    intervals: list[tuple[int, VReg, int]], free: list[Reg], out: Allocation, uses: dict[VReg, int]
) -> None:
    """Linear scan over ``intervals`` (start, register, end), by start."""
    active: list[tuple[int, VReg]] = []  # (end, vreg), sorted by end
    order = {r: i for i, r in enumerate(free)}
    available = list(range(len(free)))  # a heap of free registers' positions in ``free``
    for lo, v, hi in intervals:
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


def _spilled_operands(
    inst: Inst, alloc: Allocation
) -> tuple[dict[VReg, Reg], list[Reg], list[VReg], list[VReg]]:
    """(scratch register of each spilled operand, the borrowed ones among them, spilled
    operands read, spilled operands written)."""
    spilled: dict[VReg, Reg] = {}
    borrowed: list[Reg] = []
    reads: list[VReg] = []
    writes: list[VReg] = []
    spills = alloc.spills
    for role, op in zip(roles(inst), inst.args, strict=True):
        if type(op) is VReg:
            mentioned: tuple[VReg, ...] = (op,)
            read, write = role in _READS, role in _WRITES
        elif type(op) is Mem:
            mentioned = tuple(v for v in op[:2] if type(v) is VReg)
            read, write = True, False
        else:
            continue
        for v in mentioned:
            if v not in spills:
                continue
            if v not in spilled:
                taken = sum(1 for s in spilled if s.cls is v.cls)
                if taken < len(SCRATCH[v.cls]):
                    spilled[v] = SCRATCH[v.cls][taken]
                else:
                    spilled[v] = _borrow(inst, alloc, v.cls, set(spilled.values()))
                    borrowed.append(spilled[v])
            if read and v not in reads:
                reads.append(v)
            if write and v not in writes:
                writes.append(v)
    return spilled, borrowed, reads, writes


_READS, _WRITES = frozenset({"R", "X"}), frozenset({"W", "X"})


def rewrite(
    code: list[Inst], alloc: Allocation, place: Callable[[Mem], Mem] = _unplaced
) -> list[Inst]:
    """``code`` with physical registers and frame slots placed by ``place``; spilled values
    go through scratch registers (and, when an instruction has more spilled operands than
    there are scratch registers, through registers it doesn't use, saved and restored
    around it). Copies that became self-moves are dropped. One pass: an instruction is
    rewritten until an operand turns out to be spilled, then goes the spilled way."""
    out: list[Inst] = []
    regs = alloc.registers
    get = regs.get
    for inst in code:
        args: list[Operand] = []
        for op in inst[1]:
            kind = type(op)
            if kind is VReg:
                reg = get(op)  # type: ignore[arg-type]
                if reg is None:
                    break
                args.append(reg)
            elif kind is Mem:
                m = _allocated_memory(op, regs, place)  # type: ignore[arg-type]
                if m is None:
                    break
                args.append(m)
            else:
                args.append(op)
        else:
            name = inst[0]
            if name not in _COPIES or inst[2] != 8 or args[0] != args[1]:
                out.append(_new(Inst, (name, tuple(args), inst[2], inst[3])))
            # else a copy the allocator made pointless (a 32-bit mov still zero-extends: kept)
            continue
        out += _rewrite_spilled(inst, alloc, place)
    return out


_COPIES = frozenset({"mov", "vmovaps"})
_new = tuple.__new__


def _allocated_memory(m: Mem, regs: dict[VReg, Reg], place: Callable[[Mem], Mem]) -> Mem | None:
    if m.frame is not None:
        return place(m)
    base, index = m.base, m.idx
    if type(base) is VReg and (base := regs.get(base)) is None:
        return None
    if type(index) is VReg and (index := regs.get(index)) is None:
        return None
    if base is m.base and index is m.idx:
        return m
    return _new(Mem, (base, index, m.scale, m.disp, m.label, None, m.broadcast))


def _rewrite_spilled(inst: Inst, alloc: Allocation, place: Callable[[Mem], Mem]) -> list[Inst]:
    """``inst`` with spilled operands: reloads before it, spill stores after it."""
    spilled, borrowed, reads, writes = _spilled_operands(inst, alloc)
    size = alloc.vector_bytes
    slots = {v: place(_spill_slot(alloc.spills[v])) for v in spilled}
    out: list[Inst] = []
    saves = [place(Mem(frame=("borrow", k))) for k in range(len(borrowed))]
    for r, m in zip(borrowed, saves, strict=True):
        out.append(_spill(r, m, size))
    for v in reads:
        out.append(_reload(spilled[v], slots[v], size))
    regs = alloc.registers
    args: list[Operand] = []
    for op in inst[1]:
        if type(op) is VReg:
            args.append(spilled[op] if op in spilled else regs[op])
        elif type(op) is Mem:
            args.append(_substitute(op, _Overlay(regs, spilled), place))
        else:
            args.append(op)
    out.append(_new(Inst, (inst[0], tuple(args), inst[2], inst[3])))
    for v in writes:
        out.append(_spill(spilled[v], slots[v], size))
    for r, m in zip(borrowed, saves, strict=True):
        out.append(_reload(r, m, size))
    return out


class _Overlay(dict[VReg, Reg]):
    """The scratch registers of an instruction's spilled operands over the allocation
    (without copying the allocation: it has a register per virtual register)."""

    def __init__(self, base: dict[VReg, Reg], top: dict[VReg, Reg]) -> None:
        super().__init__(top)
        self.base = base

    def __missing__(self, key: VReg) -> Reg:
        return self.base[key]
