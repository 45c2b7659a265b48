"""Buffer views: a movement of a buffer that reads a contiguous run of its elements, in order,
is that run itself, a ``BUFFER_VIEW`` (arg ``(size, offset)`` in elements) of the buffer.

``pm_contiguous_view_offset`` rewrites ``SHRINK(RESHAPE(BUFFER))`` (a Tensor's slice of its
storage) into ``RESHAPE(BUFFER_VIEW)`` when the slice is contiguous: leading dims select one
index, one dim selects a run, the dims after it are whole. Such a view needs no copy kernel
(the runtime aliases the memory); any other shrink stays as it is.

>>> from fusegrad.uop import UOp, Ops, dtypes, graph_rewrite
>>> buf = UOp.new_buffer("CPU", 24, dtypes.float32, num=7)
>>> row = buf.reshape((4, 6)).shrink(((2, 3), (0, 6)))
>>> view = graph_rewrite(row, pm_contiguous_view_offset)
>>> view.op, view.src[0].op, view.src[0].arg
(Ops.RESHAPE, Ops.BUFFER_VIEW, (6, 12))
"""

from __future__ import annotations

from fusegrad.uop.helpers import prod
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.uop import UOp


def contiguous_offset(shape: tuple[int, ...], bounds: tuple[tuple[int, int], ...]) -> int | None:
    """The element offset of the shrink ``bounds`` of a row-major ``shape`` when it selects
    one contiguous run of elements; None when it does not (or a size is symbolic)."""
    if not all(isinstance(v, int) for v in (*shape, *(b for pair in bounds for b in pair))):
        return None
    sizes = [e - b for b, e in bounds]
    not_whole = [
        i for i, (s, (b, e)) in enumerate(zip(shape, bounds, strict=True)) if (b, e) != (0, s)
    ]
    # contiguous: the dims after the last partial one are whole, the ones before it pick one index
    if not_whole and any(sizes[i] != 1 for i in range(not_whole[-1])):
        return None
    offset, stride = 0, 1
    for s, (b, _) in zip(reversed(shape), reversed(bounds), strict=True):
        offset += b * stride
        stride *= s
    return offset


def _view_of_shrink(buf: UOp, rs: UOp, sh: UOp) -> UOp | None:
    if rs.arg is None or not all(isinstance(s, int) for s in rs.arg):
        return None
    offset = contiguous_offset(tuple(rs.arg), tuple(sh.arg))
    if offset is None:
        return None
    size = prod(e - b for b, e in sh.arg)
    base, base_offset = buf, 0
    if buf.op is Ops.BUFFER_VIEW:
        base, base_offset = buf.src[0], buf.arg[1]
    view = UOp(Ops.BUFFER_VIEW, buf.dtype, (base,), (size, base_offset + offset))
    # built directly: a BUFFER_VIEW has no tensor-level shape, the RESHAPE gives it the slice's
    return UOp(Ops.RESHAPE, buf.dtype, (view,), tuple(e - b for b, e in sh.arg))


_BUF = UPat((Ops.BUFFER, Ops.BUFFER_VIEW), name="buf")

pm_contiguous_view_offset = PatternMatcher(
    [
        (
            UPat(Ops.SHRINK, src=(UPat(Ops.RESHAPE, src=(_BUF,), name="rs"),), name="sh"),
            _view_of_shrink,
        ),
    ]
)
"""``SHRINK(RESHAPE(buffer))`` -> ``RESHAPE(BUFFER_VIEW(buffer))`` for a contiguous slice."""
