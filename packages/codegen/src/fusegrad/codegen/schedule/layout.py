"""Layout copies: a reduction operand whose rows alias in a CPU's L1 is read from a copy
with padded rows.

A matmul kernel's register block (6 rows x 16 columns of C) reads, per step of K, one line
of each of 6 rows of A and one row of B, walking B along K. When a row is a multiple of
4 KiB long (N = 1024, 2048 in float32), all rows start in the same L1 set (64 sets x 64 B:
the set index repeats every 4 KiB), so the lines the block keeps re-reading evict each other
and the loop runs from L2 (BLAS libraries pack A and B for this reason). Measured at 1024,
one thread: plain 32-42 GFLOP/s, B padded 43-44, A and B padded 48-53 (NumPy: 64).

``add_layout_copies`` finds such operands and makes the kernel read a copy whose rows are
``LAYOUT_PAD_BYTES`` longer: the flat buffer ``b`` becomes
``b.reshape(rows, s).pad(((0, 0), (0, pad))).contiguous().shrink(((0, rows), (0, s)))``
(flattened again), ``s`` the aliasing stride in elements. The copy is exact (the padding is
never read), costs one pass over ``b`` (2-5% of a 1024 matmul), and is only made when it
is amortised: an operand

* of a sum (``REDUCE_AXIS(ADD)``) on a CPU device, read directly from an input BUFFER
  (through views only) of at least ``LAYOUT_MIN_BYTES``,
* with an axis (reduced or not) of at least ``LAYOUT_MIN_ROWS`` elements whose stride in
  bytes is a multiple of ``ALIAS_BYTES``,
* broadcast along an output axis of at least ``LAYOUT_MIN_REUSE`` elements (each element
  is read that many times: the copy costs a small fraction of the reads it speeds up).

Graphs that assign to buffers are left alone (the copy would have to be ordered against the
writes).
"""

from __future__ import annotations

from collections.abc import Sequence

from fusegrad.codegen.schedule.rangeify import MOVEMENT_INDEX
from fusegrad.codegen.schedule.realize import is_assign, view_base
from fusegrad.uop import GroupOp, Ops, UOp, dtypes

LAYOUT_MIN_BYTES = 256 * 1024  # smaller operands stay in L2 whatever their layout
ALIAS_BYTES = 4096  # the L1 set period (64 sets x 64-byte lines)
LAYOUT_PAD_BYTES = 64  # one cache line more per row: successive rows in successive sets
LAYOUT_MIN_ROWS = 64  # fewer rows than this: the operand is small along that axis
# output-axis broadcast needed to amortise the copy: (M, 1024) @ (1024, 1024) with M <= 256
# measured no faster with the copy, M = 16 twice as slow (copy 1.35 ms vs 1.6 ms matmul)
LAYOUT_MIN_REUSE = 256


def _leaves(src: UOp) -> list[UOp]:
    """The view chains over BUFFERs that the elementwise tree ``src`` reads."""
    out: dict[UOp, None] = {}
    stack, seen = [src], set()
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.op in GroupOp.Movement:
            base = view_base(u)
            if base is not None and base.op is Ops.BUFFER:
                out[u] = None
        elif u.op in GroupOp.Elementwise:
            stack.extend(u.src)
    return list(out)


def _flat_index(leaf: UOp, idx: Sequence[UOp]) -> UOp | None:
    """The BUFFER index ``leaf`` reads at ``idx`` (None through an unsupported view)."""
    u, cur = leaf, tuple(idx)
    while u.op is not Ops.BUFFER:
        rule = MOVEMENT_INDEX.get(u.op)
        if rule is None:
            return None
        cur = rule(u, cur)
        u = u.src[0]
    return cur[0] if len(cur) == 1 else None


def strides(leaf: UOp) -> list[int] | None:
    """The element stride of each dim of ``leaf`` (a view chain over a BUFFER) at the origin,
    or None when a shape or stride is not a plain int."""
    shape = leaf.shape
    if not all(isinstance(d, int) for d in shape):
        return None

    def at(point: Sequence[int]) -> int | None:
        flat = _flat_index(leaf, [UOp.const(dtypes.weakint, p) for p in point])
        if flat is None:
            return None
        value = flat.simplify()
        return value.arg if value.op is Ops.CONST and isinstance(value.arg, int) else None

    origin = at([0] * len(shape))
    if origin is None:
        return None
    out = []
    for d in range(len(shape)):
        one = at([1 if i == d else 0 for i in range(len(shape))])
        if one is None:
            return None
        out.append(one - origin)
    return out


def _large_cpu_buffer(leaf: UOp) -> UOp | None:
    """The BUFFER under ``leaf`` when it is a CPU buffer of at least LAYOUT_MIN_BYTES."""
    buf = view_base(leaf)
    if buf is None or buf.op is not Ops.BUFFER or not isinstance(buf.arg, int):
        return None
    big = buf.arg * buf.dtype.itemsize >= LAYOUT_MIN_BYTES
    return buf if big and str(buf.device).upper().startswith("CPU") else None


def _aliases(stride: int, rows: int, buf: UOp) -> bool:
    """True when ``rows`` reads ``stride`` elements apart fall into the same L1 sets."""
    return (
        stride > 0
        and rows >= LAYOUT_MIN_ROWS
        and (stride * buf.dtype.itemsize) % ALIAS_BYTES == 0
        and buf.arg % stride == 0
    )


def aliased_stride(leaf: UOp, axes: Sequence[int]) -> int | None:
    """The reduce stride (elements) of ``leaf`` worth a layout copy, or None (see the module
    docstring for the conditions)."""
    buf = _large_cpu_buffer(leaf)
    st = strides(leaf) if buf is not None else None
    if buf is None or st is None:
        return None
    shape = leaf.shape
    outputs = [d for d in range(len(shape)) if d not in axes]
    if not any(st[d] == 0 and int(shape[d]) >= LAYOUT_MIN_REUSE for d in outputs):
        return None  # not re-read along an output axis: the copy is not amortised
    return next((s for s, d in zip(st, shape, strict=True) if _aliases(s, int(d), buf)), None)


def padded_copy(buf: UOp, stride: int) -> UOp:
    """``buf`` (flat) read from a copy whose rows of ``stride`` elements are padded."""
    rows, pad = buf.arg // stride, max(1, LAYOUT_PAD_BYTES // buf.dtype.itemsize)
    padded = buf.reshape((rows, stride)).pad(((0, 0), (0, pad)))
    copy = UOp(Ops.CONTIGUOUS, buf.dtype, (padded,))
    return copy.shrink(((0, rows), (0, stride))).reshape((buf.arg,))


def layout_copies(order: Sequence[UOp]) -> dict[UOp, UOp]:
    """Operand view -> the same view over a padded copy, for every aliased operand in
    ``order`` (a toposort of the tensor graph)."""
    if any(is_assign(u) for u in order):
        return {}
    out: dict[UOp, UOp] = {}
    copies: dict[tuple[UOp, int], UOp] = {}
    for u in order:
        if u.op is not Ops.REDUCE_AXIS or u.arg[0] is not Ops.ADD:
            continue
        for leaf in _leaves(u.src[0]):
            stride = aliased_stride(leaf, u.arg[1])
            if leaf in out or stride is None:
                continue
            buf = view_base(leaf)
            assert buf is not None
            key = (buf, stride)
            if key not in copies:
                copies[key] = padded_copy(buf, stride)
            out[leaf] = leaf.substitute({buf: copies[key]})
    return out


def add_layout_copies(sink: UOp) -> UOp:
    """``sink`` with the aliased reduction operands read from padded copies."""
    mapping = layout_copies(sink.toposort())
    return sink.substitute(mapping) if mapping else sink
