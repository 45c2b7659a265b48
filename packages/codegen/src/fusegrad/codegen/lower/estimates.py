"""Work estimates of a linear program: ALU ops, bytes loaded+stored, buffer bytes touched
(per buffer the smaller of its size and the bytes accessed in it).

Counts are exact for one launch: each node is counted once per iteration of the loops around
it and once per launched thread (``SPECIAL`` sizes), vector ops once per lane. A WMMA (a
warp-wide matrix multiply-accumulate of ``dims = (N, M, K)``, executed by each of its threads)
counts ``2 * K`` ops (a multiply and an add) per result lane a thread holds: over the warp
``N * M * K * 2``, the instruction's work. Index and gate
arithmetic is not counted as ops (it is addressing, not the kernel's work). Loop sizes with
Variables give symbolic counts (in ``weakint`` over the Variables).
"""

from __future__ import annotations

from typing import Any

from fusegrad.codegen.lower.walk import toposort
from fusegrad.codegen.renderer import BufferParam, Estimates
from fusegrad.uop import GroupOp, Ops, UOp, dtypes


def _weak(x: UOp) -> UOp:
    """Integer expression ``x`` of the linear program rebuilt in weakint over DEFINE_VARs."""
    new: dict[UOp, UOp] = {}
    for u in toposort(x):
        if u.op is Ops.PARAM:
            new[u] = UOp(Ops.DEFINE_VAR, dtypes.weakint, (), u.arg)
        elif u.op is Ops.CONST:
            new[u] = UOp.const(u.arg, dtypes.weakint)
        elif u.op is Ops.CAST:
            new[u] = new[u.src[0]]
        else:
            new[u] = u.replace(dtype=dtypes.weakint, src=tuple(new[s] for s in u.src))
    return new[x]


def _size(x: UOp) -> Any:
    s = _weak(x).simplify()
    return s.arg if s.op is Ops.CONST else s


def _addressing(uops: list[UOp]) -> set[UOp]:
    """Nodes that only compute addresses, gates and loop bounds."""
    roots = [s for u in uops if u.op is Ops.INDEX for s in u.src[1:]]
    roots += [u.src[0] for u in uops if u.op in (Ops.RANGE, Ops.SPECIAL, Ops.IF)]
    out: set[UOp] = set()
    while roots:  # one walk for all roots (they share most of their index math)
        u = roots.pop()
        if u not in out:
            out.add(u)
            roots.extend(u.src)
    data = [u.src[1] for u in uops if u.op is Ops.STORE]
    data += [u for u in uops if u.op in GroupOp.ALU and u.dtype.scalar() not in dtypes.ints]
    for d in data:  # a value both stored and used as an address counts as work
        if d in out and d.op not in (Ops.RANGE, Ops.SPECIAL):
            out.discard(d)
    return out


def _ops_of(u: UOp) -> int:
    if u.op is Ops.WMMA:  # arg (name, (N, M, K), dtype_in, dtype_out): K MULACCs per lane
        return 2 * int(u.arg[1][2]) * u.dtype.count
    return (2 if u.op is Ops.MULACC else 1) * u.dtype.count


def _global_access(u: UOp) -> tuple[int, int] | None:
    """(buffer slot, bytes) of a LOAD/STORE of a kernel buffer; None for registers/locals."""
    idx = u.src[0]
    ptr = idx.src[0]
    while ptr.op is Ops.AFTER:
        ptr = ptr.src[0]
    if ptr.op is not Ops.PARAM:
        return None
    value = u if u.op is Ops.LOAD else u.src[1]
    return ptr.arg, int(value.dtype.itemsize)


def _touched(buffer: BufferParam, accessed: Any) -> Any:
    """Distinct bytes of ``buffer`` a run touches: at most its size, at most what it
    accesses (a gather reads a few rows of a big table)."""
    size = buffer.size * buffer.dtype.itemsize
    return min(size, accessed) if isinstance(accessed, int) else size


def estimate(uops: list[UOp], buffers: tuple[BufferParam, ...]) -> Estimates:
    """Estimates of linear program ``uops`` with buffer parameters ``buffers``."""
    skip = _addressing(uops)
    threads: Any = 1
    # with gidx ids too, a core split shares the grid's workgroups: it adds no threads
    grid = any(u.op is Ops.SPECIAL and str(u.arg).startswith("gidx") for u in uops)
    for u in uops:
        if u.op is Ops.SPECIAL and not (grid and u.arg == "core"):
            threads = threads * _size(u.src[0])
    ops: Any = 0
    lds: Any = 0
    accessed: dict[int, Any] = {}
    mult: Any = threads
    stack: list[Any] = []
    for u in uops:
        if u.op is Ops.RANGE:
            stack.append(mult)
            mult = mult * _size(u.src[0])
        elif u.op is Ops.END:
            mult = stack.pop()
        elif (u.op in GroupOp.ALU or u.op is Ops.WMMA) and u not in skip:
            ops = ops + mult * _ops_of(u)
        elif u.op in (Ops.LOAD, Ops.STORE) and (access := _global_access(u)) is not None:
            slot, nbytes = access
            accessed[slot] = accessed.get(slot, 0) + mult * nbytes
            lds = lds + mult * nbytes
    mem = sum(_touched(b, accessed.get(b.slot, 0)) for b in buffers)
    return Estimates(ops, lds, mem).simplify()
