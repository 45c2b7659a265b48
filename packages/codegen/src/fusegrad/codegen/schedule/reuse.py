"""Reuse of a kernel already rangeified: a model's repeated blocks (a transformer's layers, an
optimizer's per-parameter updates) schedule many kernels of one structure over other buffers.

Rangeifying a kernel (``Kernelizer.rangeify``) depends only on its *region*: the nodes it
computes, from its stores down to its leaves, each leaf seen only through what the rewrite
asks of it: a BUFFER's dtype, size, tag and device, a realized node's dtype, shape and buffer
view. ``region_key`` describes the region with the leaves numbered (one buffer, one number),
so two kernels of one structure get one key: a flat tuple of entries, holding the UOps of
leaf-free parts as they are (equal by identity thanks to hash-consing). On a hit the AST is
reused as it is (it holds PARAMs, never the buffers) and the context's records (parameters,
reads, dependencies, root reads) are carried over from the first kernel's leaves to the new
kernel's leaves of the same numbers.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from fusegrad.codegen.schedule.indexing import Index
from fusegrad.codegen.schedule.rangeify import KernelContext
from fusegrad.uop import Ops, UOp


@dataclass(frozen=True, slots=True)
class RegionKey:
    """A kernel's region over numbered leaves: ``key`` compares kernels, ``leaves[n]`` is
    leaf n of this kernel (an untagged BUFFER, or a realized node)."""

    key: Hashable
    leaves: tuple[UOp, ...]


@dataclass(frozen=True, slots=True)
class Rangeified:
    """A rangeified kernel with its context's records in leaf numbers (and root positions)."""

    ast: UOp
    params: tuple[tuple[Hashable, UOp], ...]  # (leaf spec, PARAM) in slot order
    deps: tuple[int, ...]  # realized leaves read
    raw_reads: tuple[int, ...]  # buffer leaves read as they were
    root_reads: frozenset[tuple[int, Index, UOp]]  # (root position, indices, gate)
    next_axis: int
    inline_failed: bool


def region_key(
    stores: Sequence[tuple[UOp, UOp]], roots: Sequence[UOp], views: Mapping[UOp, UOp]
) -> RegionKey:
    """The key of the kernel storing each ``(target, value)`` of ``stores`` for ``roots``
    (``views``: realized node -> its buffer view; a realized node other than a root is a
    leaf): one flat tuple, an entry per node with a leaf below (its op, dtype, arg, tag, root
    flag and sources: the entry number of a source with a leaf below, else the source itself,
    hash-consed: equal structure, same node)."""
    walk = _Walk(numbers={}, entries={}, flat=[])
    inside = set(roots)

    def enter(u: UOp) -> bool:
        return u.op is not Ops.BUFFER and (u in inside or u not in views)

    top = UOp.sink(*(x for pair in stores for x in pair), *roots)
    for u in top.toposort(gate=enter):
        if u in walk.entries:  # already entered as part of a realized leaf's view
            continue
        if u.op is Ops.BUFFER:
            walk.buffer(u)
        elif not enter(u):  # a realized leaf: read through its view
            view = walk.view(views[u])
            walk.add(u, ("realized", u.dtype, u.shape, walk.number(u), view))
        elif any(s in walk.entries for s in u.src):
            walk.add(u, (u.op, u.dtype, u.arg, u.tag, u in inside, walk.refs(u)))
    key = (*walk.flat, walk.ref(top), *(walk.ref(r) for r in roots))
    return RegionKey(key, tuple(walk.numbers))


@dataclass(slots=True)
class _Walk:
    """The key under construction: leaf numbers, and the entries of the nodes above leaves."""

    numbers: dict[UOp, int]  # leaf -> its number
    entries: dict[UOp, int]  # node with a leaf below -> its entry's position in ``flat``
    flat: list[Hashable]

    def number(self, leaf: UOp) -> int:
        return self.numbers.setdefault(leaf, len(self.numbers))

    def add(self, u: UOp, entry: Hashable) -> None:
        self.entries[u] = len(self.flat)
        self.flat.append(entry)

    def ref(self, u: UOp) -> Hashable:
        return self.entries.get(u, u)

    def refs(self, u: UOp) -> tuple[Hashable, ...]:
        return tuple(self.entries.get(s, s) for s in u.src)

    def buffer(self, b: UOp) -> None:
        """A BUFFER's entry: what a kernel sees of it, and its leaf number (one per buffer,
        whatever its tag)."""
        base = b.replace(tag=None) if b.tag is not None else b
        self.add(b, ("buffer", b.dtype, b.arg, b.tag, b.src[1:], self.number(base)))

    def view(self, view: UOp) -> Hashable:
        """The entries of a realized node's view (movement ops over a BUFFER)."""
        for v in view.toposort(gate=lambda v: v.op is not Ops.BUFFER):
            if v in self.entries:
                continue
            if v.op is Ops.BUFFER:
                self.buffer(v)
            elif any(s in self.entries for s in v.src):
                self.add(v, (v.op, v.dtype, v.arg, v.tag, False, self.refs(v)))
        return self.ref(view)


def _spec(buf: UOp, numbers: Mapping[UOp, int]) -> Hashable | None:
    """A parameter's buffer in leaf numbers: ``("buf", n)``, or ``("view", n, BUFFER_VIEW)``
    for a reinterpreting view of leaf n; None when it is not over a leaf."""
    if buf.op is Ops.BUFFER_VIEW:
        n = numbers.get(buf.src[0])
        return None if n is None else ("view", n, buf)
    n = numbers.get(buf)
    return None if n is None else ("buf", n)


def _unspec(spec: Hashable, leaves: Sequence[UOp]) -> UOp:
    assert isinstance(spec, tuple)
    if spec[0] == "view":
        view: UOp = spec[2]
        return view.replace(src=(leaves[spec[1]], *view.src[1:]))
    return leaves[spec[1]]


def record(
    region: RegionKey, roots: Sequence[UOp], ast: UOp, ctx: KernelContext
) -> Rangeified | None:
    """``ast`` and ``ctx`` in the leaf numbers of ``region`` (None where a record is over
    something that is not a leaf: then the kernel is not reused)."""
    numbers = {leaf: n for n, leaf in enumerate(region.leaves)}
    params = [(_spec(b, numbers), p) for b, p in ctx.params.items()]
    deps = [numbers.get(d) for d in ctx.deps]
    raw = [numbers.get(b) for b in ctx.raw_reads]
    position = {r: i for i, r in reversed(list(enumerate(roots)))}
    root_reads = frozenset((position[r], idx, gate) for r, idx, gate in ctx.root_reads)
    if any(s is None for s, _ in params) or None in deps or None in raw:
        return None
    return Rangeified(
        ast,
        tuple(params),
        tuple(n for n in deps if n is not None),
        tuple(n for n in raw if n is not None),
        root_reads,
        ctx.next_axis,
        ctx.inline_failed,
    )


def replay(done: Rangeified, region: RegionKey, roots: Sequence[UOp], ctx: KernelContext) -> UOp:
    """Fill ``ctx`` (fresh) with ``done``'s records over ``region``'s leaves; the AST."""
    leaves = region.leaves
    for spec, param in done.params:
        ctx.params[_unspec(spec, leaves)] = param
    ctx.deps.update(dict.fromkeys(leaves[n] for n in done.deps))
    ctx.raw_reads.update(dict.fromkeys(leaves[n] for n in done.raw_reads))
    ctx.root_reads.update((roots[i], idx, gate) for i, idx, gate in done.root_reads)
    ctx.next_axis, ctx.inline_failed = done.next_axis, done.inline_failed
    return done.ast
