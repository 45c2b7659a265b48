"""Layout copies: a matmul operand is read from a copy laid out for the CPU's caches, as
BLAS libraries pack theirs.

A matmul kernel's register block (6 rows x 16 columns of C) reads, per step of K, one value
from each of 6 rows of A (broadcast) and 16 consecutive values of B's row k. Two layouts of
the inputs make those reads slow:

* B walked along K touches one line of every row: K lines a row length apart, which no
  prefetcher follows across pages and which share L1 sets when the row length is a multiple
  of 4 KiB. **Panels** fix it: the copy stores column block ``c // P`` of every row one
  after another (``P`` columns = one 64-byte line), so the block streams a contiguous
  ``K x 64``-byte panel. 1024^3 float32: 1.5-2x the tiled kernel over padded rows, on a
  par with NumPy (OpenBLAS) for the kernel alone;
* A's 6 rows, a multiple of 4 KiB apart (N = 1024, 2048 in float32), all start in the same
  L1 set and evict each other. **Padded rows** fix it: the copy's rows are
  ``LAYOUT_PAD_BYTES`` longer (measured at 1024, one thread, before panels: plain 32-42
  GFLOP/s, B padded 43-44, A and B padded 48-53, NumPy 64).

``add_layout_copies`` finds such operands and makes the kernel read a copy:

* an operand whose rows the output's contiguous (last) axis walks with stride 1 (B: the
  block's vector lanes), a multiple of ``P`` long and starting at a multiple of ``P``, and
  no reduce axis of stride 1, is read from **panels** of rows ``s`` elements long (``s``:
  a reduce axis' stride, a multiple of ``P``):
  ``b.reshape(rows, s // P, P).permute(1, 0, 2).contiguous()`` viewed back as ``(rows, s)``;
* an operand walked by the reduction along its rows (stride 1) and across them by the
  output's contiguous axis (``x @ W.T``'s W, as a Linear layer stores it), the rows a
  multiple of ``P`` in number, is read from **transposed panels** of ``P`` rows:
  ``w.reshape(rows // P, P, s).permute(0, 2, 1).contiguous()`` viewed back as ``(rows, s)``
  (the same layout as B's panels, so the same kernel reads it). x[1024, 1024] @ W.T:
  0.68-0.78 of NumPy end to end, was 0.51 with vectors along K (PARTIALS);
* when no operand of the sum goes to panels, an operand with an axis (reduced or not) of
  at least ``LAYOUT_MIN_ROWS`` elements whose stride in bytes is a multiple of
  ``ALIAS_BYTES`` is read from **padded rows**:
  ``b.reshape(rows, s).pad(((0, 0), (0, pad))).contiguous().shrink(...)``. With B in panels
  A's 6 aliased rows take 6 of the 8 ways of one L1 set and padding them measured no faster
  (its copy costs 3% of a 1024 matmul).

Every copy is exact, costs one pass over the operand (2-8% of a 1024 matmul's time), and
is only made when amortised: for an operand

* of a sum (``REDUCE_AXIS(ADD)``) on a CPU device, read directly from an input BUFFER
  (through views only) of at least ``LAYOUT_MIN_BYTES``,
* broadcast along an output axis of at least ``LAYOUT_MIN_REUSE`` elements (each element
  is read that many times: the copy costs a small fraction of the reads it speeds up).

The optimizer's heuristics see a panel operand by its stride along K (one block of lanes,
``opt/heuristics.py``) and loop over panels outside the row blocks instead of tiling K.
Graphs that assign to buffers are left alone (the copy would have to be ordered against the
writes).
"""

from __future__ import annotations

from collections.abc import Sequence

from fusegrad.codegen.schedule.rangeify import MOVEMENT_INDEX
from fusegrad.codegen.schedule.realize import is_assign, view_base
from fusegrad.uop import DType, GroupOp, Ops, UOp, dtypes, prod

LAYOUT_MIN_BYTES = 256 * 1024  # smaller operands stay in L2 whatever their layout
ALIAS_BYTES = 4096  # the L1 set period (64 sets x 64-byte lines)
LAYOUT_PAD_BYTES = 64  # one cache line more per row: successive rows in successive sets
LAYOUT_MIN_ROWS = 64  # fewer rows than this: the operand is small along that axis
# output-axis broadcast needed to amortise the copy: (M, 1024) @ (1024, 1024) with M <= 256
# measured no faster with the copy, M = 16 twice as slow (copy 1.35 ms vs 1.6 ms matmul)
LAYOUT_MIN_REUSE = 256
PANEL_BYTES = 64  # a panel row: one cache line per step of the reduction


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


def strides(leaf: UOp) -> tuple[int, list[int]] | None:
    """The buffer element ``leaf`` (a view chain over a BUFFER) reads at its origin, and the
    element stride of each dim there; None when a shape or stride is not a plain int."""
    shape = leaf.shape
    if not all(isinstance(d, int) for d in shape):
        return None

    def at(point: Sequence[int]) -> int | None:
        flat = _flat_index(leaf, [UOp.const(p, dtypes.weakint) for p in point])
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
    return origin, out


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


def _reused(leaf: UOp, st: Sequence[int], axes: Sequence[int]) -> bool:
    """Whether ``leaf`` is broadcast along an output axis of at least LAYOUT_MIN_REUSE."""
    shape = leaf.shape
    return any(
        st[d] == 0 and int(shape[d]) >= LAYOUT_MIN_REUSE for d in range(len(shape)) if d not in axes
    )


def aliased_stride(leaf: UOp, axes: Sequence[int]) -> int | None:
    """The reduce stride (elements) of ``leaf`` worth a layout copy, or None (see the module
    docstring for the conditions)."""
    buf = _large_cpu_buffer(leaf)
    found = strides(leaf) if buf is not None else None
    if buf is None or found is None or not _reused(leaf, found[1], axes):
        return None  # small, unsupported view, or not amortised
    st, shape = found[1], leaf.shape
    return next((s for s, d in zip(st, shape, strict=True) if _aliases(s, int(d), buf)), None)


def panel_width(dtype: DType) -> int:
    """Elements of ``dtype`` in one panel row: a cache line (16 float32)."""
    return max(1, PANEL_BYTES // dtype.itemsize)


def _panel_view(leaf: UOp, axes: Sequence[int]) -> tuple[UOp, int, list[int], int] | None:
    """(BUFFER, origin, strides, the output's contiguous dim) of an operand that might go to
    panels: a large CPU buffer, re-read along an output axis, with an output axis of a
    multiple of ``P`` elements last (the register block's lanes); else None."""
    buf = _large_cpu_buffer(leaf)
    found = strides(leaf) if buf is not None else None
    if buf is None or found is None or not _reused(leaf, found[1], axes):
        return None
    shape = leaf.shape
    outputs = [d for d in range(len(shape)) if d not in axes and shape[d] != 1]
    if not outputs or int(shape[outputs[-1]]) % panel_width(buf.dtype):
        return None
    return buf, found[0], found[1], outputs[-1]


def panel_stride(leaf: UOp, axes: Sequence[int]) -> int | None:
    """The row length (elements) of ``leaf``'s buffer when the operand is worth reading from
    panels (see the module docstring), else None."""
    view = _panel_view(leaf, axes)
    if view is None:
        return None
    buf, origin, st, vector = view
    width = panel_width(buf.dtype)
    if st[vector] != 1 or origin % width:
        return None  # the lanes do not walk whole panel rows of the buffer
    if any(st[d] == 1 for d in axes):
        return None  # the reduction walks the rows itself (x @ W.T's W, a convolution's x)
    row, shape = int(leaf.shape[vector]), leaf.shape
    walks = [
        st[d]
        for d in axes
        if st[d] >= row and st[d] % width == 0 and int(shape[d]) >= LAYOUT_MIN_ROWS
        and buf.arg % st[d] == 0
    ]  # fmt: skip
    return min(walks) if walks else None


def panel_copy(buf: UOp, row: int) -> UOp:
    """``buf`` (flat, rows of ``row`` elements, a multiple of ``P = panel_width``) read from
    a copy stored as panels: column block ``c // P`` of every row, one block after another,
    so element ``(r, c)`` lives at ``(c // P) * rows * P + r * P + c % P``."""
    rows, width = buf.arg // row, panel_width(buf.dtype)
    blocks = buf.reshape((rows, row // width, width)).permute((1, 0, 2))
    copy = UOp(Ops.CONTIGUOUS, buf.dtype, (blocks,))
    return copy.permute((1, 0, 2)).reshape((buf.arg,))


def transposed_panel_stride(leaf: UOp, axes: Sequence[int]) -> int | None:
    """The row length (elements) of ``leaf``'s buffer when the operand is read along its rows
    by the reduction and across them by the output's contiguous axis (``x @ W.T``'s W), and
    worth reading from panels of ``P`` rows transposed (see the module docstring)."""
    view = _panel_view(leaf, axes)
    if view is None:
        return None
    buf, origin, st, vector = view
    along = [d for d in axes if st[d] == 1]
    row = st[vector]
    if len(along) != 1 or not row > 1 or not row >= int(leaf.shape[along[0]]) >= LAYOUT_MIN_ROWS:
        return None  # a broadcast operand, or a reduction longer than a row (or short)
    block = panel_width(buf.dtype) * row
    return row if origin % block == 0 and buf.arg % block == 0 else None


def transposed_panel_copy(buf: UOp, row: int) -> UOp:
    """``buf`` (flat, rows of ``row`` elements, a multiple of ``P = panel_width`` rows) read
    from a copy stored as panels of ``P`` rows transposed: element ``(r, c)`` lives at
    ``(r // P) * row * P + c * P + r % P``."""
    width = panel_width(buf.dtype)
    blocks = buf.reshape((buf.arg // (row * width), width, row)).permute((0, 2, 1))
    copy = UOp(Ops.CONTIGUOUS, buf.dtype, (blocks,))
    return copy.permute((0, 2, 1)).reshape((buf.arg,))


def padded_copy(buf: UOp, stride: int) -> UOp:
    """``buf`` (flat) read from a copy whose rows of ``stride`` elements are padded."""
    rows, pad = buf.arg // stride, max(1, LAYOUT_PAD_BYTES // buf.dtype.itemsize)
    padded = buf.reshape((rows, stride)).pad(((0, 0), (0, pad)))
    copy = UOp(Ops.CONTIGUOUS, buf.dtype, (padded,))
    return copy.shrink(((0, rows), (0, stride))).reshape((buf.arg,))


def _plan(leaves: list[UOp], axes: Sequence[int]) -> list[tuple[UOp, str, int]]:
    """(operand, "panels" or "padded", row length) for the operands of one sum worth a copy:
    panels where they apply; padded rows only when no operand goes to panels (with B in
    panels, A padded measured no faster, and its copy costs 3% of a 1024 matmul)."""
    panels = [(leaf, "panels", row) for leaf in leaves if (row := panel_stride(leaf, axes))]
    panels += [
        (leaf, "transposed", row) for leaf in leaves if (row := transposed_panel_stride(leaf, axes))
    ]
    if panels:
        return panels
    return [(leaf, "padded", st) for leaf in leaves if (st := aliased_stride(leaf, axes))]


def layout_copies(order: Sequence[UOp]) -> dict[UOp, UOp]:
    """Operand view -> the same view over a panel or padded copy, for every such operand in
    ``order`` (a toposort of the tensor graph)."""
    if any(is_assign(u) for u in order):
        return {}
    out: dict[UOp, UOp] = {}
    copies: dict[tuple[UOp, str, int], UOp] = {}
    for u in order:
        if u.op is not Ops.REDUCE_AXIS or u.arg[0] is not Ops.ADD:
            continue
        leaves = [leaf for leaf in _leaves(u.src[0]) if leaf not in out]
        for leaf, kind, row in _plan(leaves, u.arg[1]):
            buf = view_base(leaf)
            assert buf is not None
            key = (buf, kind, row)
            if key not in copies:
                copies[key] = _COPIES[kind](buf, row)
            out[leaf] = leaf.substitute({buf: copies[key]})
    return out


_COPIES = {"panels": panel_copy, "transposed": transposed_panel_copy, "padded": padded_copy}


#: a full reduction (every axis reduced to one value) of at least this many elements on a CPU
#: device is split in two kernels: ``SPLIT_PARTS`` partial results over contiguous chunks,
#: then their reduction, so the first kernel's output loop can be split across the cores
#: (one kernel with no output axis runs on one core). The split costs a launch and a 1 KiB
#: second kernel (0.5 us); from 1 MiB of float32 on, that is under 5% of a pass at STREAM
#: speed. Measured on the loaded 2-core VM (load 8-12): the split's first kernel ran at the
#: single-core rate with 2 threads (3.8 vs 4.1 GB/s, bandwidth-bound under the other jobs),
#: so the gain is the idle machine's second core (STREAM 34 GB/s with 2 threads), not shown
SPLIT_MIN_ELEMENTS = 1 << 18
#: partial results of a split full reduction: a multiple of the cores, each chunk still long
#: enough for whole vector accumulators; the second kernel reads 1 KiB
SPLIT_PARTS = 256


def _split_full_reduce(u: UOp) -> UOp | None:
    """A CPU full reduction ``u`` as two: ``SPLIT_PARTS`` partial reductions of contiguous
    chunks (their own kernel), then one over the parts; None when it does not apply."""
    shape = u.src[0].st_shape
    if shape is None or not all(isinstance(s, int) for s in shape):
        return None
    if not str(u.device).upper().startswith("CPU") or len(u.arg[1]) != len(shape):
        return None
    numel = int(prod(shape))
    if numel < SPLIT_MIN_ELEMENTS or numel % SPLIT_PARTS:
        return None
    parts = u.src[0].reshape((SPLIT_PARTS, numel // SPLIT_PARTS)).r(u.arg[0], (1,))
    return parts.contiguous().r(u.arg[0], (0,)).reshape((1,) * len(shape))


def split_full_reduces(order: Sequence[UOp]) -> dict[UOp, UOp]:
    """Full reduction -> its split form (``_split_full_reduce``), for every one in ``order``."""
    if any(is_assign(u) for u in order):
        return {}
    out: dict[UOp, UOp] = {}
    for u in order:
        if u.op is Ops.REDUCE_AXIS and (split := _split_full_reduce(u)) is not None:
            out[u] = split
    return out


def add_layout_copies(sink: UOp) -> UOp:
    """``sink`` with its large matmul operands read from panel or padded copies, and large
    full reductions on the CPU split in two kernels."""
    mapping = layout_copies(sink.toposort())
    if mapping:
        sink = sink.substitute(mapping)
    splits = split_full_reduces(sink.toposort())
    return sink.substitute(splits) if splits else sink
