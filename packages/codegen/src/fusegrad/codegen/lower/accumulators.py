"""Lower REDUCE to accumulators: a register buffer, initialised before its loops, updated in
them, read after them.

``REDUCE(value, *ranges, arg=op)`` becomes::

    reg  = DEFINE_REG(T.ptr(n, REG))
    init = reg.after(*outer_ranges)[lanes].store(identity)     once per output element
    acc  = reg.after(init, *ranges)[lanes].load()              inside the reduce loops
    END(reg[lanes].store(op(acc, value)), *ranges)             innermost END first
    out  = reg.after(END)[lanes].load()                        after the loops

``outer_ranges`` are the ranges the result varies with, so a reduction that does not depend on
an output loop is computed once, outside it. ``AFTER`` orders the reads of the register after
the effects; in the linear program it is an alias of its first source.

A reduction over GROUP_REDUCE axes (targets with workgroups) first reduces each thread's share
in a register, stores the partial results to a DEFINE_LOCAL, waits at a BARRIER, and then every
thread reduces the partials of its group from local memory. When that sits inside a loop (a
grouped reduce nested in another reduce, or under an output loop that is not a hardware id),
the next iteration's stores would overwrite partials other threads are still reading, so a
second BARRIER goes before the stores: every thread has finished the previous iteration's
reads before any thread writes again.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext, end_nested, sorted_ranges
from fusegrad.codegen.lower.walk import nodes, rebuild
from fusegrad.uop import (
    AddrSpace,
    AxisType,
    DType,
    Ops,
    PatternMatcher,
    PtrDType,
    UOp,
    UPat,
    dtypes,
    prod,
)

_IDENTITY = {Ops.ADD: 0, Ops.MUL: 1}


def identity_element(op: Ops, dt: DType) -> UOp:
    """The value ``x`` with ``op(x, y) == y`` for every ``y`` of dtype ``dt``."""
    value = _IDENTITY[op] if op in _IDENTITY else dtypes.min(dt.scalar())
    return UOp.const(value, dt) if dt.count == 1 else UOp.vconst((value,) * dt.count, dt)


def _lanes(count: int) -> UOp:
    if count == 1:
        return UOp.const(0, dtypes.weakint)
    return UOp.vconst(tuple(range(count)), dtypes.weakint.vec(count))


def _fresh_ranges(
    ctx: LowerContext, value: UOp, ranges: tuple[UOp, ...]
) -> tuple[UOp, tuple[UOp, ...]]:
    """Loop ranges this reduce may own: a range already closed elsewhere gets a new axis id."""
    fresh: dict[UOp, UOp] = {}
    for r in ranges:
        if r in ctx.claimed_ranges:
            fresh[r] = r.replace(arg=(ctx.fresh_axis(), r.arg[1]))
    ctx.claimed_ranges.update(fresh.get(r, r) for r in ranges)
    if not fresh:
        return value, ranges
    return value.substitute(fresh), tuple(fresh.get(r, r) for r in ranges)


def register_reduce(ctx: LowerContext, value: UOp, ranges: tuple[UOp, ...], op: Ops) -> UOp:
    """``op``-reduction of ``value`` over loop ``ranges`` in a register accumulator."""
    value, ranges = _fresh_ranges(ctx, value, ranges)
    dt = value.dtype
    reg = UOp(Ops.DEFINE_REG, dt.scalar().ptr(dt.count, AddrSpace.REG), (), ctx.fresh_buffer())
    lanes = _lanes(dt.count)
    outer = tuple(r for r in value.ranges if r not in ranges)
    start = reg.after(*outer) if outer else reg
    init = start.index(lanes).store(identity_element(op, dt))
    acc = reg.after(init, *ranges).index(lanes).load(dtype=dt)
    update = reg.index(lanes).store(UOp(op, dt, (acc, value)))
    done = end_nested(update, ranges)
    return reg.after(done).index(lanes).load(dtype=dt)


def _local_index(ranges: list[UOp], count: int) -> UOp:
    """Row-major position of a thread's ``count`` lanes among ``ranges`` (LOCAL/GROUP_REDUCE
    axes), built simplified (no later stage re-simplifies it when nothing else needs it)."""
    idx: UOp = ranges[0] if ranges else UOp.const(0, dtypes.weakint)
    for r in ranges[1:]:
        idx = idx * r.src[0].arg + r
    return idx if count == 1 else idx * count + _lanes(count)


_THREAD_IDS = (AxisType.GLOBAL, AxisType.LOCAL, AxisType.GROUP_REDUCE)


def _in_loop(value: UOp) -> bool:
    """``value`` varies with a range that stays a loop (not a workgroup/thread id): code that
    uses it runs once per iteration of that loop."""
    return any(r.arg[1] not in _THREAD_IDS for r in value.ranges)


def _group_reduce(ctx: LowerContext, value: UOp, groups: tuple[UOp, ...], op: Ops) -> UOp:
    """Partials of every thread of the group through local memory, then reduced again."""
    dt = value.dtype
    threads = sorted_ranges(
        [r for r in value.ranges if r.arg[1] in (AxisType.LOCAL, AxisType.GROUP_REDUCE)]
    )
    if not all(r.src[0].op is Ops.CONST for r in threads):
        raise ValueError("lower: LOCAL/GROUP_REDUCE axes need constant sizes")
    size = prod(r.src[0].arg for r in threads) * dt.count
    local = UOp(Ops.DEFINE_LOCAL, dt.scalar().ptr(size, AddrSpace.LOCAL), (), ctx.fresh_buffer())
    slot = _local_index(threads, dt.count)
    target = local.after(UOp(Ops.BARRIER, dtypes.void, (value,))) if _in_loop(value) else local
    stored = target.index(slot).store(value)
    barrier = UOp(Ops.BARRIER, dtypes.void, (stored,))
    again = {g: UOp.range(g.src[0], ctx.fresh_axis(), AxisType.REDUCE) for g in groups}
    partial = local.after(barrier).index(slot.substitute(again)).load(dtype=dt)
    return register_reduce(ctx, partial, tuple(again.values()), op)


def _lower_reduce(ctx: LowerContext, red: UOp) -> UOp:
    value, ranges = red.src[0], red.src[1:]
    if not ranges:
        return value
    grouped = ctx.renderer.has_local
    groups = tuple(r for r in ranges if grouped and r.arg[1] is AxisType.GROUP_REDUCE)
    loops = tuple(r for r in ranges if r not in groups)
    partial = register_reduce(ctx, value, loops, red.arg) if loops else value
    if not groups:
        return partial
    return _group_reduce(ctx, partial, groups, red.arg)


pm_lower_reduce = PatternMatcher(
    [
        (UPat(Ops.REDUCE, name="red"), _lower_reduce),  # REDUCE -> register accumulator loop
    ]
)


def lower_reduces(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: ``pm_lower_reduce`` in one pass (a REDUCE's value, nested REDUCEs included,
    is lowered before the REDUCE itself, and lowering makes no new REDUCE)."""
    return rebuild(sink, lambda u: _lower_reduce(ctx, u) if u.op is Ops.REDUCE else None)


def add_local_buffers(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: check the workgroup memory the kernel defines fits the target."""
    nbytes = sum(
        u.dtype.nbytes
        for u in nodes(sink)
        if u.op is Ops.DEFINE_LOCAL and isinstance(u.dtype, PtrDType)
    )
    if nbytes > ctx.renderer.shared_max:
        raise ValueError(
            f"lower: kernel needs {nbytes} bytes of local memory, target has {ctx.renderer.shared_max}"
        )
    return sink
