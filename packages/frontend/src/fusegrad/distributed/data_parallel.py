"""Data-parallel training: every rank runs the model on its part of the batch, the gradients
are averaged over the ranks, and every rank applies the same update.

``DistributedOptimizer(opt)`` wraps any optimizer. At construction the parameters (and the
optimizer's buffers, e.g. BatchNorm statistics) are broadcast from rank 0, so every rank
starts from the same model, and the ranks check that they hold the same parameter list.

Gradients travel in *buckets*: parameters are grouped in reverse order (the order backward
produces their gradients) into buckets of about ``bucket_bytes`` (25 MB by default) of one
dtype; each bucket is one persistent contiguous buffer, and the kernel computing a gradient
writes it straight into its slice of the bucket (the flatten costs no copy; an assign of the
concatenated gradients instead fused the gradient reductions into one kernel and made the
digits example's step 14x slower). All buckets' reductions are started as non-blocking
``Iallreduce`` (in place, sum) back to back, so they progress together, and waited for
before the update; the division by the world size is folded into the optimizer's update
kernels (each parameter's ``.grad`` becomes a view of its bucket divided by the number of
ranks). The result equals single-process training on the
concatenated batch (tested to 1e-6 in float32).

The three phases are separate so a training step can run under ``TinyJit``: the kernels of
``flatten_gradients`` and of ``schedule_step`` replay, and the MPI call in between runs in
Python each step (see docs/distributed.md)::

    grads = TinyJit(lambda x, y: fill(x, y))   # forward, backward, flatten_gradients
    update = TinyJit(lambda: Tensor.realize(*dopt.schedule_step()))
    loss = grads(x, y); dopt.all_reduce_gradients(); update()
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.distributed.collectives import all_reduce, broadcast, check_agreement
from fusegrad.distributed.hostmem import HostView, host_view
from fusegrad.distributed.world import comm, mpi, wait, world_size
from fusegrad.engine import has_numpy_type
from fusegrad.nn.optim import Optimizer
from fusegrad.tensor import Tensor
from fusegrad.uop import DType, prod

BUCKET_BYTES = 25 * 2**20
"""Default gradient bucket size (25 MiB), as in PyTorch's DistributedDataParallel."""


@dataclass(slots=True)
class Bucket:
    """Parameters whose gradients travel together in one contiguous buffer."""

    params: list[Tensor]
    dtype: DType
    offsets: list[int] = field(default_factory=list)
    buffer: Tensor | None = None
    view: HostView | None = None

    @property
    def size(self) -> int:
        """Elements in the bucket."""
        return sum(int(prod(p.shape)) for p in self.params)


def plan_buckets(params: Sequence[Tensor], bucket_bytes: int = BUCKET_BYTES) -> list[Bucket]:
    """Group ``params`` into buckets: reverse order, one dtype and device per bucket, each at
    most ``bucket_bytes`` unless a single parameter is larger."""
    if bucket_bytes <= 0:
        raise ValueError(f"bucket_bytes must be > 0, got {bucket_bytes}")
    buckets: list[Bucket] = []
    open_by_kind: dict[tuple[DType, str], Bucket] = {}
    for p in reversed(params):
        kind = (p.dtype, str(p.device))
        nbytes = int(prod(p.shape)) * p.dtype.itemsize
        current = open_by_kind.get(kind)
        if current is None or (current.size * p.dtype.itemsize + nbytes > bucket_bytes):
            current = Bucket([], p.dtype)
            open_by_kind[kind] = current
            buckets.append(current)
        current.offsets.append(current.size)
        current.params.append(p)
    return buckets


def _layout(params: Sequence[Tensor]) -> str:
    text = ";".join(f"{p.dtype!r}{tuple(p.shape)}" for p in params)
    return f"{len(params)} parameters (layout {hashlib.sha256(text.encode()).hexdigest()[:12]})"


class DistributedOptimizer:
    """``optimizer`` made data-parallel over the MPI world (see the module docstring).

    ``step()`` = ``flatten_gradients`` realized, ``all_reduce_gradients()``, then the wrapped
    optimizer's update. ``timeout`` (seconds) bounds every wait on the other ranks."""

    def __init__(
        self,
        optimizer: Optimizer,
        bucket_bytes: int = BUCKET_BYTES,
        timeout: float | None = None,
    ) -> None:
        self.optimizer = optimizer
        self.params: list[Tensor] = list(optimizer.params)
        self.timeout = timeout
        check_agreement("DistributedOptimizer", _layout(self.params), timeout)
        for t in [*self.params, *optimizer.buffers]:
            broadcast(t, root=0, timeout=timeout)
        self.buckets = plan_buckets(self.params, bucket_bytes)
        for b in self.buckets:
            device = b.params[0].device
            b.buffer = Tensor.zeros(b.size, dtype=b.dtype, device=device).contiguous().realize()
            b.view = host_view(b.buffer) if has_numpy_type(b.dtype) else None

    @property
    def lr(self) -> Tensor:
        """The wrapped optimizer's learning rate tensor."""
        lr: Tensor = self.optimizer.lr
        return lr

    def zero_grad(self) -> None:
        """Forget the gradients (the wrapped optimizer's ``zero_grad``)."""
        self.optimizer.zero_grad()

    def flatten_gradients(self) -> list[Tensor]:
        """Assign every parameter's gradient to its slice of its bucket (lazily); returns the
        assigns to realize. The flatten is fused into the gradient kernels: each writes its
        slice of the bucket directly, no copy. A parameter without a gradient counts 0."""
        out = []
        for b in self.buckets:
            assert b.buffer is not None
            for p, offset in zip(b.params, b.offsets, strict=True):
                size = int(prod(p.shape))
                out.append(b.buffer[offset : offset + size].assign(_flat_grad(p)))
        return out

    def all_reduce_gradients(self) -> None:
        """Sum the realized buckets over the ranks, in place (every bucket's reduction in
        flight at once, then waited for)."""
        c, MPI = comm(), mpi()
        pending: list[tuple[HostView, Any]] = []
        for b in self.buckets:
            assert b.buffer is not None
            if b.view is None:  # bfloat16/fp8: MPI has no type for them, reduced as float32
                all_reduce(b.buffer, "sum", timeout=self.timeout, check=False)
                continue
            b.view = view = host_view(b.buffer)  # waits for the kernel that filled it
            pending.append((view, c.Iallreduce(MPI.IN_PLACE, view.array, op=MPI.SUM)))
        for view, request in pending:
            wait(request, self.timeout, "all_reduce_gradients")
            view.commit()

    def schedule_step(self) -> list[Tensor]:
        """Point every parameter's ``.grad`` at its reduced bucket (divided by the world
        size) and build the wrapped optimizer's update; returns the tensors to realize."""
        n = world_size()
        for b in self.buckets:
            assert b.buffer is not None
            for p, offset in zip(b.params, b.offsets, strict=True):
                size = int(prod(p.shape))
                p.grad = (b.buffer[offset : offset + size] / n).reshape(p.shape)
        return self.optimizer.schedule_step()

    def step(self) -> None:
        """Average the gradients over the ranks and update the parameters."""
        Tensor.realize(*self.flatten_gradients())
        self.all_reduce_gradients()
        Tensor.realize(*self.schedule_step())


def _flat_grad(p: Tensor) -> Tensor:
    if p.grad is None:
        return Tensor.zeros(int(prod(p.shape)), dtype=p.dtype, device=p.device)
    return p.grad.detach().cast(p.dtype).reshape(-1)


def broadcast_parameters(tensors: Sequence[Tensor], root: int = 0) -> None:
    """Overwrite ``tensors`` on every rank with rank ``root``'s values (in place)."""
    check_agreement("broadcast_parameters", _layout(tensors), None)
    for t in tensors:
        broadcast(t, root=root)
