"""Collectives on Tensors: all_reduce, broadcast, all_gather, reduce_scatter.

Each works on the realized host memory of the tensor (``hostmem``): MPI reads and writes the
buffer itself where the device is host-visible. ``all_reduce`` and ``broadcast`` are in
place (the tensor's buffer holds the result; the tensor is returned; a tensor that was a
view or a lazy graph is a buffer afterwards, cut off from autograd); ``all_gather`` and
``reduce_scatter`` return new tensors. Before the data moves, every rank's call is checked
against every other's (collective, op, dtype, shape, root/axis): a mismatch raises
ValueError on every rank naming both sides, instead of a hang or silently mixed bytes.

MPI has no bfloat16 or fp8 type: those are reduced as float32 (decoded, reduced, rounded back
once), which gives every rank the same bits. ``timeout=`` (seconds) turns a peer that never
joins into a DistributedTimeoutError.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from fusegrad.distributed.hostmem import HostView, empty_like_host, host_view, int_shape
from fusegrad.distributed.world import comm, mpi, wait, world_size
from fusegrad.engine import decode_floats, encode_floats, has_numpy_type
from fusegrad.tensor import Tensor
from fusegrad.uop import DType, dtypes

REDUCE_OPS = ("sum", "mean", "max", "min")
_MPI_OPS = {"sum": "SUM", "mean": "SUM", "max": "MAX", "min": "MIN"}
_BOOL_OPS = {"sum": "LOR", "max": "LOR", "min": "LAND"}  # bool: sum/max is any, min is all
_DESCRIPTOR_BYTES = 512


def mpi_op(op: str, dtype: DType, what: str) -> Any:
    """The MPI reduction for ``op`` on ``dtype`` (ValueError/TypeError naming the problem)."""
    if op not in REDUCE_OPS:
        raise ValueError(f"{what}: op must be one of {REDUCE_OPS}, got {op!r}")
    if op == "mean" and not dtypes.is_float(dtype):
        raise TypeError(f"{what}: op='mean' needs a floating-point dtype, got {dtype!r}")
    name = _BOOL_OPS[op] if dtype == dtypes.bool else _MPI_OPS[op]
    return getattr(mpi(), name)


def check_agreement(what: str, descriptor: str, timeout: float | None) -> None:
    """Raise ValueError on every rank unless every rank passed the same ``descriptor``.

    One small reduction compares 64-bit digests (the max and the min over the ranks differ
    exactly when some rank's differs); only then are the descriptors themselves gathered to
    name both sides."""
    raw = descriptor.encode()
    digest = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little", signed=True)
    both = np.array([digest, ~digest], np.int64)  # max of ~d is ~(min of d)
    wait(comm().Iallreduce(mpi().IN_PLACE, both, op=mpi().MAX), timeout, what)
    if both[0] == ~both[1]:
        return
    if len(raw) > _DESCRIPTOR_BYTES:
        raw = raw[: _DESCRIPTOR_BYTES - 3] + b"..."
    mine = np.zeros(_DESCRIPTOR_BYTES, np.uint8)
    mine[: len(raw)] = np.frombuffer(raw, np.uint8)
    every = np.empty((world_size(), _DESCRIPTOR_BYTES), np.uint8)
    wait(comm().Iallgather(mine, every), timeout, what)
    seen = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in every]
    other = next((r for r, d in enumerate(seen) if d != seen[0]), 0)
    raise ValueError(
        f"{what}: ranks disagree: rank 0 called {seen[0]}, rank {other} called {seen[other]}"
    )


def _describe(kind: str, t: Tensor, **args: Any) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in args.items())
    return f"{kind}(dtype={t.dtype!r}, shape={tuple(t.shape)}{extra})"


def _decoded(view: HostView, dtype: DType) -> np.ndarray[Any, Any]:
    """The values MPI works on: the storage itself, or float32 for bfloat16/fp8."""
    if has_numpy_type(dtype):
        return view.array
    return np.ascontiguousarray(decode_floats(view.array, dtype), dtype=np.float32)


def _store(view: HostView, values: np.ndarray[Any, Any], dtype: DType) -> None:
    if values is not view.array:
        view.array[:] = encode_floats(values, dtype).reshape(-1)
    view.commit()


def _reduce_in_place(
    arr: np.ndarray[Any, Any], op: str, dtype: DType, timeout: float | None, what: str
) -> None:
    c, MPI = comm(), mpi()
    reduction = mpi_op(op, dtype, what)
    if timeout is None:
        c.Allreduce(MPI.IN_PLACE, arr, op=reduction)
    else:
        wait(c.Iallreduce(MPI.IN_PLACE, arr, op=reduction), timeout, what)
    if op == "mean":
        np.divide(arr, world_size(), out=arr, casting="unsafe")


def all_reduce(
    t: Tensor, op: str = "sum", timeout: float | None = None, check: bool = True
) -> Tensor:
    """Reduce ``t`` over every rank, in place: afterwards every rank's ``t`` holds the
    elementwise ``op`` ("sum", "mean", "max", "min") of all ranks' values. Returns ``t``.
    ``check=False`` skips the agreement check (one small message) when the caller knows
    every rank passes the same shape and dtype."""
    what = "all_reduce"
    mpi_op(op, t.dtype, what)
    if check:
        check_agreement(what, _describe(what, t, op=op), timeout)
    view = host_view(t)
    values = _decoded(view, t.dtype)
    _reduce_in_place(values, op, t.dtype, timeout, what)
    _store(view, values, t.dtype)
    return t


def broadcast(t: Tensor, root: int = 0, timeout: float | None = None) -> Tensor:
    """Overwrite ``t`` on every rank with rank ``root``'s value, in place; returns ``t``."""
    what = "broadcast"
    if not 0 <= root < world_size():
        raise ValueError(f"{what}: root must be a rank in [0, {world_size()}), got {root}")
    check_agreement(what, _describe(what, t, root=root), timeout)
    view = host_view(t)
    c = comm()
    if timeout is None:
        c.Bcast(view.array, root=root)
    else:
        wait(c.Ibcast(view.array, root=root), timeout, what)
    view.commit()
    return t


def _axis(t: Tensor, axis: int, what: str) -> int:
    if not -t.ndim <= axis < max(t.ndim, 1) or t.ndim == 0:
        raise ValueError(f"{what}: axis {axis} is out of range for a {t.ndim}-d tensor")
    return axis % t.ndim


def all_gather(t: Tensor, axis: int = 0, timeout: float | None = None) -> Tensor:
    """Every rank's ``t`` concatenated along ``axis`` in rank order (a new tensor, the same
    on every rank): shape ``t.shape`` with ``axis`` multiplied by ``world_size()``."""
    what = "all_gather"
    axis = _axis(t, axis, what)
    check_agreement(what, _describe(what, t, axis=axis), timeout)
    n = world_size()
    mine = host_view(t)
    stacked, out = empty_like_host((n, *int_shape(t)), t)
    c = comm()
    if timeout is None:
        c.Allgather(mine.array, out.array)
    else:
        wait(c.Iallgather(mine.array, out.array), timeout, what)
    out.commit()
    shape = list(int_shape(t))
    shape[axis] *= n
    if axis == 0:
        return stacked.reshape(*shape)
    order = [*range(1, axis + 1), 0, *range(axis + 1, t.ndim + 1)]
    return stacked.permute(*order).reshape(*shape).contiguous().realize()


def reduce_scatter(
    t: Tensor, axis: int = 0, op: str = "sum", timeout: float | None = None
) -> Tensor:
    """``all_reduce(t, op)`` split into ``world_size()`` equal parts along ``axis``: rank r
    gets part r (a new tensor; ``t`` is unchanged). ``t.shape[axis]`` must divide evenly."""
    what = "reduce_scatter"
    axis = _axis(t, axis, what)
    mpi_op(op, t.dtype, what)
    n = world_size()
    if t.shape[axis] % n:
        raise ValueError(
            f"{what}: axis {axis} of {tuple(t.shape)} does not split into {n} equal parts"
        )
    check_agreement(what, _describe(what, t, axis=axis, op=op), timeout)
    part = list(int_shape(t))
    part[axis] //= n
    # rank r's part must be contiguous block r: move the split to the front (one kernel)
    blocks = t if axis == 0 else _split_front(t, axis, n)
    send = host_view(blocks)
    result, recv = empty_like_host(tuple(part), t)
    src, dst = _decoded(send, t.dtype), _decoded(recv, t.dtype)
    c = comm()
    reduction = mpi_op(op, t.dtype, what)
    if timeout is None:
        c.Reduce_scatter_block(src, dst, op=reduction)
    else:
        wait(c.Ireduce_scatter_block(src, dst, op=reduction), timeout, what)
    if op == "mean":
        np.divide(dst, n, out=dst, casting="unsafe")
    _store(recv, dst, t.dtype)
    return result


def _split_front(t: Tensor, axis: int, n: int) -> Tensor:
    shape = [*t.shape[:axis], n, t.shape[axis] // n, *t.shape[axis + 1 :]]
    order = [axis, *range(axis), *range(axis + 1, t.ndim + 1)]
    return t.reshape(*shape).permute(*order).contiguous().realize()
