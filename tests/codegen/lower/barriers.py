"""A race check for local memory in a linear program (the PYTHON emulator runs a workgroup in
lockstep, so a missing barrier never shows as a wrong number there)."""

from __future__ import annotations

from fusegrad.uop import Ops, UOp


def _base(ptr: UOp) -> UOp:
    while ptr.op is Ops.AFTER:
        ptr = ptr.src[0]
    return ptr


def races(uops: list[UOp]) -> list[tuple[int, int]]:
    """Positions (store, load) of local-memory accesses not separated by a BARRIER on some
    path between them (straight down the program, or around a loop holding both)."""
    pos = {u: n for n, u in enumerate(uops)}
    loops = [(pos[u.src[0]], n) for n, u in enumerate(uops) if u.op is Ops.END]
    barriers = [n for n, u in enumerate(uops) if u.op is Ops.BARRIER]
    access: dict[UOp, list[tuple[int, Ops]]] = {}
    for n, u in enumerate(uops):
        if u.op in (Ops.LOAD, Ops.STORE) and _base(u.src[0].src[0]).op is Ops.DEFINE_LOCAL:
            access.setdefault(_base(u.src[0].src[0]), []).append((n, u.op))

    def fenced(lo: int, hi: int) -> bool:
        return any(lo < b < hi for b in barriers)

    found = []
    for accesses in access.values():
        stores = [n for n, op in accesses if op is Ops.STORE]
        loads = [n for n, op in accesses if op is Ops.LOAD]
        for s in stores:
            for ld in loads:
                first, last = min(s, ld), max(s, ld)
                ok = fenced(first, last)
                around = [(r, e) for r, e in loops if r < first and last < e]
                if around:  # the innermost loop holding both: its back edge
                    r, e = max(around)
                    ok = ok and (fenced(last, e) or fenced(r, first))
                if not ok:
                    found.append((s, ld))
    return found
