"""Out-of-range Tensor indices raise ``IndexError`` instead of silently selecting nothing.

Python ints, slices and lists are checked where they are used. A Tensor index's values are
data, so:

* when it is backed by host data (made from a list or a NumPy array), it is checked at the
  call, like PyTorch;
* otherwise the check is *deferred*: the result tensor (and every tensor computed from it)
  carries an ``IndexCheck``; ``realize()`` (so ``numpy()``, ``item()``, ``tolist()``...) puts
  the index's min and max into the same schedule, reads them, and raises before the result
  is handed out (the tensors stay unrealized). A check that passed is not run again.

``CHECK_INDEX=0`` turns both off for speed: an out-of-range index then selects zeros (gather,
advanced indexing, one_hot) and writes nowhere (scatter, setitem). Inside a ``TinyJit``
capture the deferred checks are handed to the capture, which runs them (captured too) at its
end and again after every replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fusegrad.engine import HOST, buffer_of, get_executor
from fusegrad.tensor.flags import CHECK_INDEX
from fusegrad.uop import UOp, dtypes

if TYPE_CHECKING:
    from fusegrad.tensor.core import TensorCore


class TensorIndexError(IndexError, RuntimeError):
    """An index tensor holds a value outside its dimension: an ``IndexError`` (what PyTorch
    raises for ``x[idx]``) that is also a ``RuntimeError`` (what it raises for gather,
    scatter and one_hot)."""


class IndexCheck:
    """The values of ``index`` (an int tensor UOp) must lie in ``[low, size)``."""

    __slots__ = ("dim", "done", "index", "low", "op", "size")

    def __init__(self, index: UOp, size: int, dim: int, low: int, op: str) -> None:
        self.index = index
        self.size = size
        self.dim = dim
        self.low = low
        self.op = op
        self.done = False

    def verify(self, lo: int, hi: int) -> None:
        """Raise naming an out-of-range value (the largest, else the smallest); otherwise
        mark this check passed."""
        bad = hi if hi >= self.size else (lo if lo < self.low else None)
        if bad is None:
            self.done = True
            return
        if self.op == "one_hot":
            raise TensorIndexError(
                f"one_hot: class value {bad} is outside [0, {self.size}) (num_classes={self.size})"
            )
        where = "" if self.op == "index" else f"{self.op}: "
        raise TensorIndexError(
            f"{where}index {bad} is out of bounds for dimension {self.dim} with size {self.size}"
        )


def add_check(
    result: TensorCore, index: TensorCore, size: Any, dim: int, low: int, op: str
) -> None:
    """Check that ``index`` lies in ``[low, size)`` now (host data) or when ``result`` or a
    tensor computed from it is realized."""
    if not CHECK_INDEX.value or not isinstance(size, int) or not _numel(index):
        return
    check = IndexCheck(index.uop, size, dim, low, op)
    host = _host_values(index.uop)
    if host is not None:
        if host.size:
            check.verify(int(host.min()), int(host.max()))
        return
    result._checks = (*result._checks, check)


def _numel(t: TensorCore) -> bool:
    return all(isinstance(s, int) and s > 0 for s in t.shape)


def _host_values(u: UOp) -> np.ndarray[Any, Any] | None:
    """The values of a host-backed contiguous index (no device read), else None."""
    buf = buffer_of(u)
    if buf is None:
        return None
    host = HOST.get(buf)
    if host is None:
        return None
    return host[: int(u.size)]


def merge_checks(*groups: tuple[IndexCheck, ...]) -> tuple[IndexCheck, ...]:
    """The pending checks of several tensors, each once."""
    out: list[IndexCheck] = []
    for group in groups:
        out.extend(c for c in group if not c.done and all(c is not o for o in out))
    return tuple(out)


def pending(tensors: Iterable[TensorCore]) -> list[IndexCheck]:
    """The checks ``tensors`` still need (none while a TinyJit capture records: the capture
    takes them, through its ``defer_checks``, and runs them on every replay)."""
    found = merge_checks(*(t._checks for t in tensors))
    if not found:
        return []
    executor = get_executor()
    if found and getattr(executor, "capturing", False):
        defer = getattr(executor, "defer_checks", None)
        if defer is not None:
            defer(found)
        return []
    return list(found)


def stats_uops(checks: Sequence[IndexCheck], cls: type[TensorCore]) -> list[UOp]:
    """One UOp per check: its index's (min, max) as a 2-element int64 tensor."""
    out = []
    for c in checks:
        index: Any = cls(c.index)
        flat = index.flatten().cast(dtypes.int64)
        out.append(flat.min().reshape(1).cat(flat.max().reshape(1)).uop)
    return out


def verify_all(checks: Sequence[IndexCheck], values: Sequence[np.ndarray[Any, Any]]) -> None:
    """Raise TensorIndexError for the first failing check."""
    for c, v in zip(checks, values, strict=True):
        c.verify(int(v[0]), int(v[1]))
