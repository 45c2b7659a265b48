"""Rangeify: a tensor node evaluated at loop indices becomes kernel-level index math and loads.

The marker ``INDEX(x, *idx, gate)`` on a *tensor* node ``x`` (``idx``: one weakint per dim of
``x``, ``gate``: a bool under which the element is needed) reads "the value of ``x`` at
``idx``". ``pm_rangeify`` pushes the marker down the tensor graph, bottom-up (a node before
its sources), until every marker has become kernel IR:

* movement ops rewrite the indices (``indexing.py``), PAD adds a validity condition that
  both selects 0 and masks the loads below it;
* elementwise ops apply to their sources' markers;
* REDUCE_AXIS opens one REDUCE-typed RANGE per reduced dim and becomes a ``REDUCE``;
* a realized node (not one this kernel computes) is read through its buffer view, and a
  BUFFER becomes ``LOAD(INDEX(PARAM, idx.valid(gate)))``.

A marker that reaches a realized node stops there, so a kernel's rewrite visits only the
nodes the kernel computes: scheduling stays linear in the graph size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from fusegrad.codegen.schedule.indexing import (
    TRUE,
    Index,
    expand_index,
    flip_index,
    logical_and,
    pad_index,
    permute_index,
    range_size,
    reshape_index,
    shrink_index,
)
from fusegrad.uop import AxisType, GroupOp, Ops, PatternMatcher, UOp, UPat, prod

VIEW_TAG = "schedule:view"  # a BUFFER reached through a realized node (its new value)
STORE_TAG = "schedule:store"  # the BUFFER a kernel stores into


class ScheduleError(ValueError):
    """A tensor graph the scheduler can't turn into kernels (names the node and why)."""


@dataclass
class KernelContext:
    """State of rangeifying one kernel: what it reads and the parameters it needs."""

    views: Mapping[UOp, UOp]  # realized node -> its buffer view (movement ops on a BUFFER)
    roots: frozenset[UOp]  # the nodes this kernel computes (never read as leaves)
    next_axis: int = 0  # the next RANGE axis id
    snapshots: Mapping[UOp, UOp] = field(default_factory=dict)  # leaf -> its realized copy
    params: dict[UOp, UOp] = field(default_factory=dict)  # BUFFER -> PARAM, in slot order
    deps: dict[UOp, None] = field(default_factory=dict)  # realized nodes read
    raw_reads: dict[UOp, None] = field(default_factory=dict)  # BUFFERs read as they were
    # (root, indices, gate) of every marker that reached one of the kernel's roots: a
    # multi-output kernel computes a root another root reads inline, which is only right (and
    # only free) at the index the root itself is stored at (``order.merge_outputs``)
    root_reads: set[tuple[UOp, Index, UOp]] = field(default_factory=set)
    inline_failed: bool = False  # a root was read that can't be computed inline
    # marker -> its REDUCE: a reduction read twice at one index (softmax's max, by the sum
    # and by the output) is one reduction of the kernel, not two with ranges of their own
    reduces: dict[UOp, UOp] = field(default_factory=dict)

    def param(self, buf: UOp) -> UOp:
        """The PARAM of ``buf`` (a BUFFER or a BUFFER_VIEW; slots in order of first use)."""
        if (p := self.params.get(buf)) is None:
            size = buf.arg[0] if buf.op is Ops.BUFFER_VIEW else buf.arg
            p = UOp.param(len(self.params), buf.dtype.ptr(size))
            self.params[buf] = p
        return p

    def new_range(self, size: UOp | int, axis_type: AxisType) -> UOp:
        """A fresh RANGE of this kernel."""
        self.next_axis += 1
        return UOp.range(range_size(size), self.next_axis - 1, axis_type)


def at(x: UOp, idx: Index, gate: UOp = TRUE) -> UOp:
    """The marker: tensor node ``x`` evaluated at ``idx`` (needed where ``gate`` holds)."""
    return UOp(Ops.INDEX, x.dtype, (x, *idx, gate))


def _parts(i: UOp) -> tuple[Index, UOp]:
    return i.src[1:-1], i.src[-1]


# -- leaves -------------------------------------------------------------------------------------


def _read_snapshot(ctx: KernelContext, i: UOp, x: UOp) -> UOp | None:
    copy = ctx.snapshots.get(x)
    return None if copy is None else i.replace(src=(copy, *i.src[1:]))


def _read_realized(ctx: KernelContext, i: UOp, x: UOp) -> UOp | None:
    if x in ctx.roots:
        ctx.root_reads.add((x, *_parts(i)))
        return None
    if x.op is Ops.PARAM or x not in ctx.views:
        return None
    ctx.deps[x] = None
    return i.replace(src=(ctx.views[x], *i.src[1:]))


def _inline_assign(ctx: KernelContext, i: UOp, x: UOp) -> UOp | None:
    """An assign this kernel performs, read by another of its roots: its stored value (a
    multi-output kernel). Only an assign of its whole target has one value at each index."""
    if x not in ctx.roots:
        return None
    store = x.src[1] if len(x.src) == 2 else None
    if store is None or store.op is not Ops.STORE or store.src[0] is not x.src[0]:
        ctx.inline_failed = True
        return UOp.const(0, x.dtype)  # the kernel is thrown away: merge_outputs checks the flag
    return i.replace(src=(store.src[1], *i.src[1:]))


def _load_buffer(ctx: KernelContext, i: UOp, b: UOp) -> UOp:
    (idx,), gate = _parts(i)
    if b.arg == 0 and b.tag != STORE_TAG:
        # an empty buffer is never read (every index is masked off): no parameter, no load
        return UOp.const(0, b.dtype)
    base = b.replace(tag=None) if b.tag is not None else b
    if b.tag is None:
        ctx.raw_reads[base] = None
    flat = idx if gate is TRUE else idx.valid(gate)
    return ctx.param(base).index(flat).load()


def _const(i: UOp, x: UOp) -> UOp:
    return UOp.vconst(x.arg, x.dtype) if x.op is Ops.VCONST else UOp.const(x.arg, x.dtype)


# -- movement -----------------------------------------------------------------------------------

MOVEMENT_INDEX: dict[Ops, Callable[[UOp, Index], Index]] = {
    Ops.RESHAPE: lambda x, idx: reshape_index(idx, x.arg, x.src[0].shape),
    Ops.PERMUTE: lambda x, idx: permute_index(idx, x.arg),
    Ops.EXPAND: lambda x, idx: expand_index(idx, x.src[0].shape),
    Ops.SHRINK: lambda x, idx: shrink_index(idx, x.arg),
    Ops.FLIP: lambda x, idx: flip_index(idx, x.arg, x.shape),
}


def _move(i: UOp, x: UOp) -> UOp:
    idx, gate = _parts(i)
    return at(x.src[0], MOVEMENT_INDEX[x.op](x, idx), gate)


def _pad(i: UOp, x: UOp) -> UOp:
    idx, gate = _parts(i)
    inner, cond = pad_index(idx, x.arg, x.src[0].shape)
    value = at(x.src[0], inner, logical_and(gate, cond))
    return value if cond is TRUE else cond.where(value, UOp.const(0, x.dtype))


# -- compute ------------------------------------------------------------------------------------


def _reduce(ctx: KernelContext, i: UOp, x: UOp) -> UOp:
    if (done := ctx.reduces.get(i)) is not None:
        return done
    idx, gate = _parts(i)
    op, axes = x.arg
    src = x.src[0]
    ranges = [ctx.new_range(src.shape[a], AxisType.REDUCE) for a in axes]
    inner = list(idx)
    for a, rng in zip(axes, ranges, strict=True):
        inner[a] = rng
    ctx.reduces[i] = at(src, tuple(inner), gate).reduce(*ranges, arg=op)
    return ctx.reduces[i]


def _elementwise(i: UOp, x: UOp) -> UOp:
    idx, gate = _parts(i)
    return x.replace(src=tuple(at(s, idx, gate) for s in x.src))


def resizes(u: UOp) -> bool:
    """True for a BITCAST that changes the element size (``uint8 -> float16``)."""
    return u.op is Ops.BITCAST and u.dtype.itemsize != u.src[0].dtype.itemsize


def buffer_window(view: UOp) -> tuple[UOp, int] | None:
    """(BUFFER, first element) when ``view`` is a run of a buffer's elements in order (its
    reshapes, or a 1-D shrink of it), else None."""
    while view.op is Ops.RESHAPE:
        view = view.src[0]
    start = 0
    if view.op is Ops.SHRINK and view.src[0].op is Ops.BUFFER and isinstance(view.arg[0][0], int):
        start, view = view.arg[0][0], view.src[0]
    return (view, start) if view.op is Ops.BUFFER else None


def _source_bytes(ctx: KernelContext, src: UOp) -> tuple[UOp, int]:
    """(untagged BUFFER, byte offset) of the bytes of ``src`` (recording the read), for
    reinterpreting them."""
    while src.op is Ops.RESHAPE and src not in ctx.views:
        src = src.src[0]  # bytes in order: a reshape changes nothing
    view = src
    if src in ctx.views and src not in ctx.roots:
        ctx.deps[src] = None
        view = ctx.views[src]
    if (window := buffer_window(view)) is None:
        raise ScheduleError(f"bitcast: the source {src.op!r} is not realized into a buffer")
    buf, start = window
    base = buf.replace(tag=None) if buf.tag is not None else buf
    if buf.tag is None:
        ctx.raw_reads[base] = None
    return base, start * base.dtype.itemsize


def _resizing_bitcast(ctx: KernelContext, i: UOp, x: UOp) -> UOp | None:
    if not resizes(x):
        return None
    if not all(isinstance(d, int) for d in x.shape):
        raise ScheduleError(f"bitcast to {x.dtype!r} of a symbolic shape {x.shape}")
    size = prod(x.shape)
    buf, offset = _source_bytes(ctx, x.src[0])
    view = UOp(Ops.BUFFER_VIEW, x.dtype, (buf,), (size, offset // x.dtype.itemsize))
    idx, gate = _parts(i)
    (flat,) = reshape_index(idx, x.shape, (size,))
    return ctx.param(view).index(flat if gate is TRUE else flat.valid(gate)).load()


def _unsupported(i: UOp, x: UOp) -> UOp | None:
    if x.op is Ops.PARAM:
        return None
    raise ScheduleError(f"rangeify: no rule for {x.op!r} {x.dtype!r} arg={x.arg!r}")


def _marker(ops: Ops | frozenset[Ops] | tuple[Ops, ...] | None, name: str = "x") -> UPat:
    return UPat(Ops.INDEX, src=(UPat(ops, name=name),), allow_any_len=True, name="i")


pm_rangeify = PatternMatcher(
    [
        (_marker(None), _read_snapshot),  # old value of an assigned buffer -> its copy
        (_marker(None), _read_realized),  # realized x[idx] -> its buffer view [idx]
        (_marker(Ops.AFTER), _inline_assign),  # own assign read by another root -> its value
        (_marker(Ops.BUFFER, "b"), _load_buffer),  # buf[idx] -> LOAD(INDEX(PARAM, idx))
        (_marker(tuple(MOVEMENT_INDEX)), _move),  # view(x)[idx] -> x[f(idx)]
        (_marker(Ops.PAD), _pad),  # pad(x)[idx] -> valid ? x[idx-before] : 0
        (_marker(Ops.REDUCE_AXIS), _reduce),  # sum(x)[idx] -> REDUCE(x[idx, rng], rng)
        (_marker(Ops.BITCAST), _resizing_bitcast),  # bytes reinterpreted: a BUFFER_VIEW load
        (_marker(GroupOp.Elementwise), _elementwise),  # f(a, b)[idx] -> f(a[idx], b[idx])
        (_marker((Ops.CONST, Ops.VCONST)), _const),  # c[idx] -> c
        (_marker(Ops.DEFINE_VAR), lambda i, x: x),  # v[idx] -> v
        (
            _marker((Ops.CONTIGUOUS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD)),
            lambda i, x: i.replace(src=(x.src[0], *i.src[1:])),
        ),  # contiguous(x)[idx] -> x[idx] in the kernel that realizes it
        (_marker(None), _unsupported),  # anything else is a scheduler bug or unsupported op
        (
            UPat(Ops.STORE, src=(UPat(Ops.LOAD, name="ld"), UPat.var("v"))),
            lambda ld, v: ld.src[0].store(v),
        ),  # STORE(LOAD(INDEX), v) -> STORE(INDEX, v): a lowered store target
        (
            UPat(Ops.STORE, src=(UPat(Ops.BITCAST, name="b"), UPat.var("v"))),
            lambda b, v: b.src[0].store(v.bitcast(b.src[0].dtype)),
        ),  # STORE(BITCAST(t), v) -> STORE(t, BITCAST(v)): assign through a bitcast view
    ]
)
