"""Bitcasts that change the element size, done as buffer aliases.

The scheduler fuses only same-size BITCASTs into kernels (it raises ScheduleError for
``uint8 -> float16`` and the like, even straight over a BUFFER). A bitcast of contiguous bytes
is a reinterpretation of memory, so the engine does what the runtime can: it realizes the
bitcast's source into a buffer, makes a new BUFFER of the target dtype, and backs it with a
view of the same device memory (``Buffer.view``). The graph then reads the alias like any
buffer. TODO(#5): drop once the scheduler handles size-changing bitcasts itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fusegrad.engine.buffers import adopt, buffer_device, runtime_buffer
from fusegrad.uop import Ops, UOp

Realize = Callable[[Sequence[UOp]], list[UOp]]


def resizing_bitcasts(u: UOp) -> list[UOp]:
    """The BITCASTs in ``u``'s graph that change the element size (sources first)."""
    return [
        n
        for n in u.toposort(lambda n: n.op is not Ops.BUFFER)
        if n.op is Ops.BITCAST and n.dtype.itemsize != n.src[0].dtype.itemsize
    ]


def _alias(cast: UOp, view: UOp) -> UOp:
    """A BUFFER of ``cast``'s dtype over the memory of ``view`` (``BUFFER.reshape(shape)``),
    shaped like ``cast``."""
    base = view if view.op is Ops.BUFFER else view.src[0]
    nbytes = int(base.arg) * base.dtype.itemsize
    alias = UOp.new_buffer(buffer_device(base), nbytes // cast.dtype.itemsize, cast.dtype)
    memory = runtime_buffer(base)
    adopt(alias, memory.view(int(alias.arg), cast.dtype, 0))
    return alias.reshape(tuple(cast.shape))


def alias_bitcasts(targets: Sequence[UOp], realize: Realize) -> list[UOp]:
    """``targets`` with every size-changing bitcast replaced by an alias of its realized
    source (``realize`` computes sources into ``BUFFER.reshape(shape)`` views)."""
    out = list(targets)
    while casts := [c for t in out for c in resizing_bitcasts(t)]:
        cast = casts[0]
        if not all(isinstance(s, int) for s in cast.shape):
            raise NotImplementedError(f"engine: bitcast of a symbolic shape {cast.shape}")
        (view,) = realize([cast.src[0]])
        alias = _alias(cast, view)
        out = [t.substitute({cast: alias}) for t in out]
    return out
