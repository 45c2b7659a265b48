"""Kernelize: one kernel AST (or copy) per realized node, in topological order.

For each realized node the ``Kernelizer`` picks where its value lives (a new buffer, or the
assign target's buffer), opens one LOOP range per output dim, and rangeifies
``STORE(target[rngs], value[rngs])`` with ``pm_rangeify``. While building it also decides
the realizations that depend on lowered indices:

* **assign hazards**: an assign kernel whose value loads the target buffer at any index
  other than the one it stores to (a permutation, an overlapping shrink, a reduction of the
  target) would read values it already overwrote: its value is realized into a temporary
  first, and the assign becomes a copy from it;
* **buffer cap**: a kernel with more buffers than the target allows realizes the largest
  part of its graph that fits, and is built again.
* **two versions of a buffer**: a kernel reading a buffer both before and after an assign
  to it realizes the parts of its graph reading the old value first (those kernels run
  before the assign), and is built again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.schedule.indexing import (
    ZERO,
    Index,
    is_one,
    range_size,
    simplify_indices,
)
from fusegrad.codegen.schedule.rangeify import (
    STORE_TAG,
    VIEW_TAG,
    KernelContext,
    ScheduleError,
    at,
    pm_rangeify,
)
from fusegrad.codegen.schedule.realize import Kind, contiguous_buffer
from fusegrad.codegen.schedule.reuse import Rangeified, record, region_key, replay
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import AxisType, GroupOp, Ops, UOp, dtypes, graph_rewrite, prod, sint_to_uop

Version = UOp | None  # the assign/custom node whose result a buffer holds; None: as given
BufferCap = Callable[[Any], int | None]


@dataclass
class Call:
    """A kernel or copy before ordering and memory planning.

    ``reads``/``writes`` hold ``(BUFFER, version)`` pairs: the version is the realized
    assign (or custom kernel) whose result the buffer holds when read, None for its value as
    the schedule found it. A writer of ``(X, v)`` must run after every reader of ``(X, v)``.
    """

    id: int
    kind: Kind
    ast: UOp  # a kernel AST SINK, or the COPY marker
    buffers: list[UOp]  # PARAM slot order; for a copy (dst, src)
    roots: list[UOp]  # the realized nodes it computes
    deps: set[int] = field(default_factory=set)  # ids of calls whose results it reads
    reads: set[tuple[UOp, Version]] = field(default_factory=set)
    writes: set[tuple[UOp, Version]] = field(default_factory=set)  # in-place writes


def base_buffer(view: UOp) -> UOp:
    """The BUFFER at the bottom of a view (movement ops / BITCAST), untagged."""
    while view.op is not Ops.BUFFER:
        view = view.src[0]
    return view.replace(tag=None) if view.tag is not None else view


def retag(view: UOp, tag: str | None) -> UOp:
    """``view`` over its BUFFER carrying ``tag``."""
    bottom = view
    while bottom.op is not Ops.BUFFER:
        bottom = bottom.src[0]
    return view.substitute({bottom: bottom.replace(tag=tag)})


def max_size(shape: Sequence[Any]) -> int:
    """Elements a buffer needs for ``shape`` at its largest (symbolic dims at their max)."""
    n = prod(shape)
    return n if isinstance(n, int) else int(sint_to_uop(n).vmax)


def buffer_view(buf: UOp, shape: tuple[Any, ...]) -> UOp:
    """``buf`` seen as a contiguous tensor of ``shape`` (shrunk first when it is bigger)."""
    n = prod(shape)
    if isinstance(n, int) and n == buf.arg:
        return buf.reshape(shape)
    return buf.shrink(((0, n),)).reshape(shape)


def output_ranges(shape: tuple[Any, ...]) -> tuple[Index, list[UOp]]:
    """One LOOP range per dim of ``shape`` (axis = dim; size-1 dims index 0)."""
    idx = tuple(
        ZERO if is_one(s) else UOp.range(range_size(s), d, AxisType.LOOP)
        for d, s in enumerate(shape)
    )
    return idx, [i for i in idx if i.op is Ops.RANGE]


def kernel_name(ast: UOp) -> str:
    """``E_4_4`` (elementwise) / ``r_4_8`` (with reductions): the kernel's loop sizes."""
    rngs = sorted({u.arg: u for u in ast.toposort() if u.op is Ops.RANGE}.items())
    reduce = any(u.arg[1] is AxisType.REDUCE for _, u in rngs)
    dims = [u.src[0].render() for _, u in rngs]
    text = "_".join(["r" if reduce else "E", *dims])
    return "".join(c if c.isalnum() else "_" for c in text)


class Kernelizer:
    """Builds the calls of a schedule from the realize decisions."""

    def __init__(self, realizes: dict[UOp, Kind], cap: BufferCap) -> None:
        self.kinds = dict(realizes)
        self.cap = cap
        self.views: dict[UOp, UOp] = {}  # realized node -> view over its VIEW-tagged buffer
        self.producer: dict[UOp, int] = {}  # realized node -> id of the call computing it
        self.calls: dict[int, Call] = {}
        self.new_buffers: list[UOp] = []
        self.ids = 0
        # kernels rangeified so far, by region (``reuse.py``): repeated blocks rangeify once
        self.rangeified: dict[Hashable, Rangeified] = {}

    # -- buffers --------------------------------------------------------------------------------
    def new_buffer(self, device: Any, size: int, dtype: Any) -> UOp:
        """A buffer the schedule allocates (a placeholder until the template is instantiated)."""
        if device is None:
            raise ScheduleError("kernelize: a realized value has no device (no buffer or CONST)")
        unique = UOp(Ops.UNIQUE, arg=("new", len(self.new_buffers)))
        buf = UOp(Ops.BUFFER, dtype, (unique, UOp(Ops.DEVICE, arg=device)), size)
        self.new_buffers.append(buf)
        return buf

    def version(self, node: UOp) -> Version:
        """The version a read of realized ``node`` sees."""
        return node if self.kinds.get(node) in (Kind.ASSIGN, Kind.CUSTOM) else None

    def whole_buffer(self, u: UOp) -> tuple[UOp, Version, int | None]:
        """(BUFFER, version, producing call) of a node that holds a whole buffer."""
        if u in self.views:
            return base_buffer(self.views[u]), self.version(u), self.producer[u]
        buf = contiguous_buffer(u)
        if buf is None:
            raise ScheduleError(f"kernelize: {u.op!r} does not hold a whole buffer")
        return buf, None, None

    # -- building -------------------------------------------------------------------------------
    def run(self) -> None:
        """Build a call for every realized node, in topological order."""
        builders: dict[Kind, Callable[[UOp], None]] = {
            Kind.COMPUTE: self.compute,
            Kind.ASSIGN: self.assign,
            Kind.COPY: self.copy,
            Kind.CUSTOM: self.custom,
        }
        for node, kind in list(self.kinds.items()):
            if node not in self.producer:
                builders[kind](node)

    def add_call(self, call: Call) -> None:
        """Register ``call`` as the producer of its roots."""
        self.calls[call.id] = call
        for r in call.roots:
            self.producer[r] = call.id

    def next_id(self) -> int:
        """A fresh call id (ids grow in creation order, a topological order)."""
        self.ids += 1
        return self.ids - 1

    def compute(self, node: UOp) -> None:
        """A kernel computing ``node`` into a new buffer."""
        self.kinds[node] = Kind.COMPUTE
        buf = self.new_buffer(node.device, max_size(node.shape), node.dtype)
        self.views[node] = buffer_view(buf.rtag(VIEW_TAG), node.shape)
        self.add_call(self.lower([node], Kind.COMPUTE))

    def lower(self, roots: list[UOp], kind: Kind, split: bool = True) -> Call:
        """Rangeify the kernel storing ``roots``; over the buffer cap, first realize the parts
        of its graph that keep every kernel within the cap. A kernel reading two versions of
        a buffer (before and after an assign) first realizes its reads of the older one."""
        ast, ctx = self.rangeify(roots)
        if stale := self.stale_reads(roots, ctx):
            snapshots = {}
            for node in stale:
                if self.read_version(node, roots) is None:
                    self.compute(node)
                else:  # the old value is read as it is: copy it first
                    snapshots[node] = self.snapshot(node)
            ast, ctx = self.rangeify(roots, snapshots)
        cap = self.cap(roots[0].device)
        if cap is None or len(ctx.params) <= cap or not split:
            return self.make_call(ast, ctx, roots, kind)
        for node in self.split_points(roots, cap):
            self.compute(node)
        ast, ctx = self.rangeify(roots)
        return self.make_call(ast, ctx, roots, kind)

    def stored(self, root: UOp) -> tuple[UOp, UOp]:
        """(target view over the STORE-tagged buffer, value) of the kernel storing ``root``.

        An assign ``AFTER(x, STORE(target, value))`` stores ``value`` through ``target`` (which
        may be a view of ``x``: ``x[1:3] = v``); anything else stores itself into its buffer."""
        if self.kinds[root] is Kind.ASSIGN:
            store = root.src[1]
            return self.assign_target(store.src[0]), store.src[1]
        return retag(self.views[root], STORE_TAG), root

    def rangeify(
        self, roots: list[UOp], snapshots: dict[UOp, UOp] | None = None
    ) -> tuple[UOp, KernelContext]:
        """The kernel AST storing every root (all of one shape: they share their loops);
        ``snapshots``: leaves read through a realized copy instead."""
        stores = [self.stored(r) for r in roots]
        idx, ranges = output_ranges(stores[0][0].shape)
        ctx = KernelContext(self.views, frozenset(roots), len(idx), snapshots or {})
        if snapshots:
            return self._rangeify(stores, idx, ranges, ctx)
        region = region_key(stores, roots, self.views)
        if (done := self.rangeified.get(region.key)) is not None:
            return replay(done, region, roots, ctx), ctx
        ast, ctx = self._rangeify(stores, idx, ranges, ctx)
        if (kept := record(region, roots, ast, ctx)) is not None:
            self.rangeified[region.key] = kept
        return ast, ctx

    def _rangeify(
        self, stores: list[tuple[UOp, UOp]], idx: Index, ranges: list[UOp], ctx: KernelContext
    ) -> tuple[UOp, KernelContext]:
        effects = []
        for target, value in stores:
            ctx.param(base_buffer(target))
            if value.dtype is not target.dtype:
                raise ScheduleError(f"assign: {value.dtype!r} value into {target.dtype!r} target")
            store = at(target, idx).store(at(value, idx))
            effects.append(store.end(*ranges) if ranges else store)
        sink = graph_rewrite(
            UOp.sink(*effects), pm_rangeify, ctx, bottom_up=True, name="schedule: rangeify"
        )
        sink = simplify_indices(sink)
        return sink.replace(arg=KernelInfo(kernel_name(sink))), ctx

    def make_call(self, ast: UOp, ctx: KernelContext, roots: list[UOp], kind: Kind) -> Call:
        """The Call of a rangeified kernel, with what it reads and depends on."""
        call = Call(self.next_id(), kind, ast, list(ctx.params), roots)
        call.reads = {(b, None) for b in ctx.raw_reads}
        for d in ctx.deps:
            call.deps.add(self.producer[d])
            call.reads.add((base_buffer(self.views[d]), self.version(d)))
        return call

    def read_version(self, u: UOp, roots: list[UOp]) -> tuple[UOp, Version] | None:
        """(BUFFER, version) when ``u`` is a leaf of a kernel computing ``roots``, else None."""
        if u.op is Ops.BUFFER:
            return u, None
        if u in self.views and u not in roots:
            return base_buffer(self.views[u]), self.version(u)
        return None

    def stale_reads(self, roots: list[UOp], ctx: KernelContext) -> list[UOp]:
        """Nodes of the kernel's graph reading only an older version of a buffer the kernel
        also reads the newest version of: realized first, they run before the assign."""
        versions: dict[UOp, set[Version]] = {}
        for buf in ctx.raw_reads:
            versions.setdefault(buf, set()).add(None)
        for d in ctx.deps:
            versions.setdefault(base_buffer(self.views[d]), set()).add(self.version(d))
        newest = {b: max(vs, key=self._age) for b, vs in versions.items() if len(vs) > 1}
        if not newest:
            return []
        values = [self.stored(r)[1] for r in roots]
        region = UOp.sink(*values).toposort(gate=lambda u: u in roots or u not in self.views)
        stale: set[UOp] = set()
        fresh: set[UOp] = set()
        for u in region:
            if (read := self.read_version(u, roots)) is not None and read[0] in newest:
                (fresh if read[1] is newest[read[0]] else stale).add(u)
            stale.update((u,) if any(s in stale for s in u.src) else ())
            fresh.update((u,) if any(s in fresh for s in u.src) else ())
        chosen = {s: None for u in fresh for s in u.src if s in stale and s not in fresh}
        return list(chosen)

    def snapshot(self, leaf: UOp) -> UOp:
        """A realized copy of ``leaf`` (a buffer, or an earlier assign's result)."""
        copy = UOp(Ops.CONTIGUOUS, leaf.dtype, (leaf,))
        if copy not in self.views:
            self.compute(copy)
        return copy

    def _age(self, version: Version) -> int:
        return -1 if version is None else self.producer[version]

    def split_points(self, roots: list[UOp], cap: int) -> list[UOp]:
        """Nodes of the kernel's graph to realize so no kernel reads more than ``cap - 1``
        buffers (one slot is its output): one walk sources-first; where a node would read too
        many, its sources reading the most are realized until it fits."""
        region = UOp.sink(*roots).toposort(gate=lambda u: u in roots or u not in self.views)
        bufs: dict[UOp, frozenset[UOp]] = {}
        chosen: list[UOp] = []
        for u in region:
            if u.op is Ops.BUFFER or (u in self.views and u not in roots):
                bufs[u] = frozenset((u,))
                continue
            srcs = sorted(u.src, key=lambda s: -len(bufs.get(s, ())))
            while len(reads := frozenset().union(*(bufs.get(s, ()) for s in srcs))) >= cap:
                big = next((s for s in srcs if s.op in _SPLITTABLE and len(bufs[s]) > 1), None)
                if big is None:
                    raise ScheduleError(f"kernelize: can't split a kernel to {cap} buffers")
                chosen.append(big)
                bufs[big] = frozenset((big,))
                srcs = sorted(u.src, key=lambda s: -len(bufs.get(s, ())))
            bufs[u] = reads
        return chosen

    # -- assign ---------------------------------------------------------------------------------
    def assign_target(self, target: UOp) -> UOp:
        """An assign target (movement ops / BITCAST over a BUFFER or an earlier assign) as a
        view over the STORE-tagged BUFFER."""
        bottom = target
        while bottom.op in GroupOp.Movement or bottom.op is Ops.BITCAST:
            bottom = bottom.src[0]
        if bottom in self.views:
            return target.substitute({bottom: retag(self.views[bottom], STORE_TAG)})
        if bottom.op is not Ops.BUFFER:
            raise ScheduleError(f"assign: the target must be a view of a buffer, not {bottom.op!r}")
        return target.substitute({bottom: bottom.rtag(STORE_TAG)})

    def assign(self, node: UOp) -> None:
        """A kernel writing ``node``'s value into its target's buffer."""
        target = node.src[1].src[0]
        self.views[node] = retag(self.assign_target(node.src[0]), VIEW_TAG)
        call = self.lower([node], Kind.ASSIGN)
        if _has_hazard(call.ast):
            value = node.src[1].src[1]
            if value in self.views:
                raise ScheduleError("assign: the value still reads its own target")
            self.compute(value)
            call = self.lower([node], Kind.ASSIGN)
        buf = base_buffer(self.views[node])
        call.writes.add((buf, self.target_version(target)))
        for view in (target, node.src[0]):
            if (prev := self.target_version(view)) is not None:
                call.deps.add(self.producer[prev])
        self.add_call(call)

    def target_version(self, target: UOp) -> Version:
        """The realized assign/custom node a target view is over (None: the buffer itself)."""
        while target.op in GroupOp.Movement or target.op is Ops.BITCAST:
            target = target.src[0]
        return target if target in self.views else None

    # -- copies and custom kernels ----------------------------------------------------------------
    def copy(self, node: UOp) -> None:
        """A copy of a whole buffer to another device."""
        src, version, dep = self.whole_buffer(node.src[0])
        dst = self.new_buffer(node.src[1].arg, src.arg, src.dtype)
        self.views[node] = buffer_view(dst.rtag(VIEW_TAG), node.shape)
        marker = UOp(Ops.COPY, dtypes.void, (), src.arg * src.dtype.itemsize)
        call = Call(self.next_id(), Kind.COPY, marker, [dst, src], [node])
        call.reads.add((src, version))
        call.deps.update(() if dep is None else (dep,))
        self.add_call(call)

    def custom(self, node: UOp) -> None:
        """A user kernel: ``AFTER(t, CUSTOM_KERNEL(*srcs, arg=fxn))``, ``fxn(*params)`` -> AST."""
        kernel = node.src[1]
        afters = [u for u, k in self.kinds.items() if k is Kind.CUSTOM and u.src[1] is kernel]
        held = [self.whole_buffer(s) for s in kernel.src]
        call = Call(self.next_id(), Kind.CUSTOM, UOp.sink(), [b for b, _, _ in held], afters)
        params = [UOp.param(i, b.dtype.ptr(b.arg)) for i, b in enumerate(call.buffers)]
        call.ast = kernel.arg(*params) if callable(kernel.arg) else kernel.arg
        for buf, version, dep in held:
            call.reads.add((buf, version))
            call.writes.add((buf, version))
            call.deps.update(() if dep is None else (dep,))
        for after in afters:
            t = after.src[0]
            view = self.views[t] if t in self.views else retag(t, VIEW_TAG)
            self.views[after] = view
        self.add_call(call)


_SPLITTABLE = GroupOp.Elementwise | {Ops.REDUCE_AXIS}


def _has_hazard(ast: UOp) -> bool:
    """True when a load of a stored-to buffer reads another index than the store writes."""
    stores = {u.src[0].src[0]: u.src[0] for u in ast.toposort() if u.op is Ops.STORE}
    for u in ast.toposort():
        if u.op is not Ops.LOAD:
            continue
        idx = u.src[0]
        if idx.src[0] in stores and idx is not stores[idx.src[0]]:
            return True
    return False
