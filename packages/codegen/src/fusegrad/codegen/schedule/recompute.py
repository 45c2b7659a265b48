"""The recompute cost model: which computed intermediates get a buffer so they aren't recomputed.

Fusing a node into its consumer is free when the consumer evaluates it once per element. It
is not when the node would be evaluated more than once per element of its own:

* **repeated**: it is broadcast (a size-1 dim EXPANDed) on the way to its consumer — inside a
  matmul's reduce loop every broadcast copy recomputes it (layernorm's output feeding the
  next matmul, softmax's max, a GELU before a matmul);
* **reused**: it is read at more than one index — by two kernels, or at two places of one
  kernel through different views (a value and its flip in a sorting network);
* **padded** (reductions only): it is read through a PAD of at least ``PAD_MIN_SIZE``
  elements — a piece of a large concatenation. Fused, the concatenation's loop would run
  every piece's reduction under a mask at every element and lose the reduction's own loop
  structure (a weight gradient's matmul flattened into a bucket of gradients); realized,
  each reduction is its own kernel and the concatenation copies. (A small concatenation of
  reductions, two counters, stays one kernel.)

Two walks decide it. **Usage** (users first, ``usage``): for every node, the largest
broadcast factor on a path from a realized consumer, and up to two distinct *access keys*
(which kernel, through which chain of views and reductions). A computed node that is repeated
or reused is a *candidate*; candidates cut the walk like realized nodes do. **Cost**
(sources first, ``decide``): a candidate's cost is the ALU work of evaluating one element of
it with every kept source read from memory — a region holding a reduction costs
``REDUCE_COST`` (always too much to recompute). A candidate is kept when

* repeated, with ``cost >= BROADCAST_MIN_COST`` and ``cost * (factor - 1) >= BROADCAST_WORK``;
* or reused, with ``cost >= REUSE_MIN_COST``;
* or a padded reduction.

**Row-uniform** nodes are never candidates: a node whose every dim of size > 1 is one of the
*identity* leading dims of its single consumer kernel — dims indexed by that kernel's
outermost loops in order, as an elementwise chain from the kernel's output keeps them, and
as a broadcast or a reduction keeps those before its first broadcast or reduced dim — depends
only on those outer loops, so the linearizer hoists it out of every inner loop and it is
evaluated once per element of its own however broadcast. Softmax's max and sum and
layernorm's mean and variance (reductions over trailing axes, broadcast back over them) are
row-uniform: they stay in the consumer kernel as sequential reductions over the row (loop 1
the max, loop 2 the sum, loop 3 the output), and the row is read from cache, not DRAM, by
loops 2 and 3. A row-uniform reduction over more than ``ROW_BYTES`` of its source is still a
candidate: its row would not stay in cache between the loops, and a kernel of its own can
split it over cores. A row-uniform node costs its consumers nothing (one value per row).
Identity depths depend on which candidates get a buffer (a kept candidate is a kernel's
output, a dropped one is read where its consumer reads it), so the two walks run twice: the
first takes every candidate as kept, the second only the first's kept ones, and both rounds'
kept candidates get buffers (a node is only ever row-uniform under a boundary that exists).

A region that reads no memory (an ``arange``, index math over constants) costs nothing and
is never kept: inlined, the kernel optimizer folds it (a one-hot compare against an arange
becomes a gather, which a buffer in between would prevent).

A dropped candidate is inlined; its cost (which includes every inlined source) is part of
each consumer's cost, so recomputing it is accounted for by the consumers' decisions. Cheap
elementwise producers (a scale, a relu, a cast before a matmul; a padded input of a conv)
still fuse.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from fusegrad.codegen.schedule.indexing import is_one, same_size
from fusegrad.uop import GroupOp, Ops, UOp, sint, sint_to_uop

REDUCE_COST = 1 << 30  # a reduction in the region: never recompute it
BROADCAST_MIN_COST = 2  # ALU ops a broadcast node needs before it is worth a buffer
BROADCAST_WORK = 64  # ... and the extra ALU ops per element recomputing it would cost
REUSE_MIN_COST = 8  # ALU ops a node read at two indices needs before it is worth a buffer
PAD_MIN_SIZE = 1024  # elements a PAD must have to realize the reductions padded into it
MAX_KEYS = 2  # access keys kept per node: two already means "read at more than one index"
MAX_FACTOR = 1 << 20
# Bytes of one row a row-uniform reduction may read and still be fused into its consumer
# (see the module docstring): one core's L2 here (2 MiB for 2 cores), so loops 2 and 3 read
# the row from cache. Measured on a 64 MiB float32 array, rows of 16 KiB / 128 KiB / 1 MiB /
# 4 MiB, fused vs its own kernels, process CPU time (the 2-core VM was at load 10, so wall
# times were noise): layernorm 0.72 / 0.70 / 0.69 / 0.75x, softmax 1.01 / 0.99 / 0.99 / 0.94x
# (it is bound by its two exp2 passes). No cliff up to 4 MiB on this machine; past L2 the
# fused loops re-read DRAM like separate kernels do, and a kernel of its own can be split.
ROW_BYTES = 1 << 20
# Device name prefixes whose kernels get row-uniform reductions: CPUs. On a GPU a thread per
# output element would compute its row's reductions again, so ``opt.kernel.finish`` gives each
# thread a whole row instead (a workgroup of rows), correct but a row apart from its
# neighbours' loads, which a GPU's memory does not coalesce. Mesa's llvmpipe (the NIR renderer
# on the CPU device, which shares its name) runs it as fast as three kernels: 256x1024 softmax
# 2.5-4.2 vs 3.8-4.0 ms. TODO(#25): GPUs need the row's reductions split over a workgroup.
ROW_DEVICES = ("CPU",)

# ALU ops that take several instructions (approximated transcendentals, divisions).
ALU_COST: dict[Ops, int] = {
    Ops.EXP2: 4,
    Ops.LOG2: 4,
    Ops.SIN: 4,
    Ops.SQRT: 2,
    Ops.RECIPROCAL: 2,
    Ops.FDIV: 2,
    Ops.POW: 8,
    Ops.THREEFRY: 8,
}

# The nodes a buffer may be inserted after (the rest are views, leaves or realized anyway).
CANDIDATE_OPS = GroupOp.ALU | {Ops.CAST, Ops.REDUCE_AXIS}


def broadcast_factor(u: UOp) -> int:
    """How many times an EXPAND repeats each element of its source (1: not a broadcast)."""
    if u.op is not Ops.EXPAND:
        return 1
    factor = 1
    for old, new in zip(u.src[0].shape, u.arg, strict=True):
        if is_one(old) and not same_size(old, new):
            factor *= _size_max(new)
    return min(factor, MAX_FACTOR)


def _pad_size(u: UOp) -> int:
    """Elements of a PAD's result (0 for other nodes)."""
    if u.op is not Ops.PAD:
        return 0
    n = 1
    for d in u.shape:
        n *= _size_max(d)
    return n


def _size_max(n: sint) -> int:
    return n if isinstance(n, int) else max(2, int(sint_to_uop(n).vmax))


@dataclass
class Usage:
    """How a node is evaluated by its consumers (see the module docstring)."""

    factor: int = 1  # largest broadcast factor on a path from a realized consumer
    keys: tuple[int, ...] = ()  # distinct access keys (at most MAX_KEYS)
    pad: int = 0  # elements of the largest PAD on a path from a realized consumer
    depth: int | None = None  # fewest identity leading dims on a path (None: no path yet)
    roots: tuple[int, ...] = ()  # distinct consumer kernels (at most MAX_KEYS)

    def add(
        self,
        factor: int,
        keys: Sequence[int],
        pad: int = 0,
        depth: int = 0,
        roots: Sequence[int] = (),
    ) -> None:
        """Merge one consumer's evaluation into this usage."""
        self.factor = max(self.factor, factor)
        self.pad = max(self.pad, pad)
        self.depth = depth if self.depth is None else min(self.depth, depth)
        self.keys = _merge(self.keys, keys)
        self.roots = _merge(self.roots, roots)

    @property
    def recomputed(self) -> bool:
        """True when the node would be evaluated more than once per element."""
        return self.factor > 1 or len(self.keys) > 1

    @property
    def padded(self) -> bool:
        """True when the node is read through a large PAD."""
        return self.pad >= PAD_MIN_SIZE

    def row_uniform(self, u: UOp) -> bool:
        """True when ``u`` is evaluated once per element of its own by its one consumer kernel:
        its dims of size > 1 are all identity leading dims there, and a reduction reads at
        most ``ROW_BYTES`` per element."""
        shape = u.st_shape
        if len(self.roots) != 1 or self.depth is None or shape is None:
            return False
        if not str(u.device).upper().startswith(ROW_DEVICES):
            return False
        if any(not is_one(d) for d in shape[self.depth :]):
            return False
        return u.op is not Ops.REDUCE_AXIS or _row_bytes(u) <= ROW_BYTES

    def candidate(self, u: UOp) -> bool:
        """True when ``u`` may be worth a buffer under this usage."""
        if self.padded and u.op is Ops.REDUCE_AXIS:
            return True
        return self.recomputed and not self.row_uniform(u)


def _merge(have: tuple[int, ...], new: Sequence[int]) -> tuple[int, ...]:
    for k in new:
        if k not in have and len(have) < MAX_KEYS:
            have = (*have, k)
    return have


def _row_bytes(r: UOp) -> int:
    """Bytes of its source one element of the reduction ``r`` reads."""
    src = r.src[0]
    n = src.dtype.itemsize
    for a in r.arg[1]:
        n *= _size_max(src.shape[a])
    return n


def _source_depth(u: UOp, depth: int) -> int:
    """The identity depth of ``u``'s sources, ``u`` read at ``depth``: an elementwise op keeps
    it, a broadcast, reduction or reshape keeps its dims before the first one it changes, any
    other view mixes dims (0)."""
    if u.op in GroupOp.Elementwise:
        return depth
    if u.op is Ops.REDUCE_AXIS:
        return min(depth, *(int(a) for a in u.arg[1]))
    if u.op is Ops.EXPAND:
        old = u.src[0].shape
        changed = [
            d for d, (a, b) in enumerate(zip(old, u.arg, strict=True)) if not same_size(a, b)
        ]
        return min(depth, *changed) if changed else depth
    if u.op is Ops.RESHAPE:  # row-major: the dims of a common leading run map one to one
        old, new = u.src[0].shape, u.shape
        same = 0
        while same < min(len(old), len(new)) and same_size(old[same], new[same]):
            same += 1
        return min(depth, same)
    return 0


@dataclass
class UsageWalk:
    """State of the users-first walk."""

    boundary_key: dict[UOp, object]  # realized node -> the key its kernel reads sources with
    # the candidates kept by an earlier walk (None: this is the first walk, which takes every
    # candidate as kept when it computes identity depths: the module docstring says why)
    kept: Collection[UOp] | None = None
    usage: dict[UOp, Usage] = field(default_factory=dict)
    key_ids: dict[object, int] = field(default_factory=dict)
    candidates: list[UOp] = field(default_factory=list)
    uniform: set[UOp] = field(default_factory=set)  # row-uniform nodes (cost nothing)

    def key(self, k: object) -> int:
        """A small int for an access key (nested keys stay small)."""
        return self.key_ids.setdefault(k, len(self.key_ids))

    def visit(self, u: UOp) -> None:
        """Decide whether ``u`` is a candidate, then pass its usage to its sources."""
        use = self.usage.get(u, Usage())
        root = self.boundary_key.get(u)
        uniform = root is None and use.row_uniform(u)
        if uniform:
            self.uniform.add(u)
        if root is None and u.op in CANDIDATE_OPS and use.candidate(u):
            self.candidates.append(u)
            root = u
        roots: tuple[int, ...] = use.roots
        depth = 0 if use.depth is None else use.depth
        if u in self.boundary_key or (u is root if self.kept is None else u in self.kept):
            depth, roots = len(u.st_shape or ()), (self.key(self.boundary_key.get(u, u)),)
        depth = _source_depth(u, depth)
        keys: tuple[int, ...]
        pad = 0 if root is not None else max(use.pad, _pad_size(u))
        # a row-uniform reduction reads each source element once per element of its own; an
        # elementwise node passes its broadcast on (to a reduction over ``ROW_BYTES`` below it)
        factor = 1 if uniform and u.op is Ops.REDUCE_AXIS else use.factor
        if root is not None:
            factor, keys = 1, (self.key(root),)
        elif u.op in GroupOp.Elementwise:
            keys = use.keys
        else:  # a view or a reduction reads its source at other indices
            factor = min(factor * broadcast_factor(u), MAX_FACTOR)
            keys = tuple(self.key((u, k)) for k in use.keys)
        for s in dict.fromkeys(u.src):
            self.usage.setdefault(s, Usage()).add(factor, keys, pad, depth, roots)


def usage(
    order: Sequence[UOp], boundary_key: dict[UOp, object], kept: Collection[UOp] | None = None
) -> UsageWalk:
    """The users-first walk over ``order`` (a toposort) from the realized nodes (and, for
    identity depths, ``kept``: the first walk's kept candidates)."""
    walk = UsageWalk(boundary_key, kept)
    for u in reversed(order):
        walk.visit(u)
    return walk


def _own_cost(u: UOp) -> int:
    if u.op is Ops.REDUCE_AXIS:
        return REDUCE_COST
    if u.op in GroupOp.ALU:
        return ALU_COST.get(u.op, 1)
    return 0


def _keep(u: UOp, cost: int, use: Usage) -> bool:
    if use.padded and u.op is Ops.REDUCE_AXIS:
        return True
    if use.factor > 1 and cost >= BROADCAST_MIN_COST and cost * (use.factor - 1) >= BROADCAST_WORK:
        return True
    return len(use.keys) > 1 and cost >= REUSE_MIN_COST


def decide(order: Sequence[UOp], realized: Collection[UOp], walk: UsageWalk) -> set[UOp]:
    """The candidates of ``walk`` worth a buffer: one sources-first walk of region costs."""
    candidates = set(walk.candidates)
    kept: set[UOp] = set()
    cost: dict[UOp, int] = {}
    loads: set[UOp] = set()  # nodes whose region reads memory
    for u in order:
        c = _own_cost(u)
        for s in dict.fromkeys(u.src):
            if s in kept or s in realized or s.op is Ops.BUFFER:
                loads.add(u)
                continue
            if s in loads:  # index math over constants folds away: it costs nothing
                c = min(REDUCE_COST, c + cost[s])
                loads.add(u)
        if u.op is Ops.REDUCE_AXIS:  # a reduction is never free, even over constants
            loads.add(u)
        cost[u] = 0 if u in walk.uniform else c
        if u in candidates and u in loads and _keep(u, c, walk.usage[u]):
            kept.add(u)
    return kept
