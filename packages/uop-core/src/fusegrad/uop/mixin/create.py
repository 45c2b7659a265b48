"""Creation helpers shared by ``UOp`` and ``Tensor``: the index range ``0..n-1`` as a graph.

``index_uop`` builds the range from constants and movement ops only (no data from the host):
the index ``i`` of a length-2**k range is the sum over bits j of ``2**j`` placed on axis j of
a ``(2,)*k`` view, so a kernel computes it with k selects instead of reading memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fusegrad.uop.dtype import DType
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.uop import UOp


class DefaultDevice:
    """Where tensor-level UOps are created when no ``device=`` is given. uop-core knows no
    devices: the frontend sets ``DefaultDevice.get`` to its ``Device.DEFAULT`` lookup; alone,
    creation without a device is a ValueError."""

    get: Callable[[], str] | None = None

    @classmethod
    def of(cls, device: Any) -> Any:
        """``device``, or the default one when None."""
        if device is not None:
            return device
        if cls.get is None:
            raise ValueError("no device given, and uop-core alone has no default device")
        return cls.get()


def index_uop(n: int, dtype: DType, device: Any) -> UOp:
    """The values 0..n-1 as a tensor-level UOp of ``dtype`` on ``device``."""
    from fusegrad.uop.uop import UOp

    if n <= 1:
        return UOp.const(0, dtype, device, (n,))
    bits = max(1, math.ceil(math.log2(n)))
    total: UOp | None = None
    for j in range(bits):
        pair = UOp.const(2**j, dtype, device, (1,))._mop(Ops.PAD, ((1, 0),))
        view = [1] * bits
        view[bits - 1 - j] = 2
        term = pair._mop(Ops.RESHAPE, tuple(view))._mop(Ops.EXPAND, (2,) * bits)
        total = term if total is None else UOp(Ops.ADD, dtype, (total, term))
    assert total is not None
    return total._mop(Ops.RESHAPE, (2**bits,))._mop(Ops.SHRINK, ((0, n),))


def arange_uop(start: Any, stop: Any, step: Any, dtype: DType | None, device: Any) -> UOp:
    """``start, start+step, ...`` below ``stop`` as a tensor-level UOp (ints give the default
    int, floats the default float): what ``UOp.arange`` and ``Tensor.arange`` build."""
    from fusegrad.uop.dtype import dtypes

    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    is_float = any(isinstance(v, float) for v in (start, stop, step))
    n = max(0, math.ceil((stop - start) / step))
    ints = dtypes.default_int
    if (
        not is_float
        and n
        and not all(
            dtypes.min(ints) <= v <= dtypes.max(ints) for v in (start, start + (n - 1) * step)
        )
    ):
        ints = dtypes.int64  # values past int32 (arange(2**33)) are int64, not wrapped
    dt = dtype if dtype is not None else (dtypes.default_float if is_float else ints)
    idx_dt = dtypes.int32 if n < 2**31 else dtypes.int64
    idx = index_uop(n, idx_dt, device)
    if start == 0 and step == 1:
        return idx.cast(dt)
    if dtypes.is_float(dt) and dt is dtypes.float64:
        compute = dtypes.float64
    else:
        wide = dtypes.int64 if ints is dtypes.int64 else idx_dt
        compute = dtypes.default_float if dtypes.is_float(dt) or is_float else wide
    out: UOp = (idx.cast(compute) * step + start).cast(dt)
    return out
