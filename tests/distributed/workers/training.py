"""Data-parallel training equals single-process training on the concatenated batch (run under
mpiexec): ``training.py sgd|adam [jit]``. Every rank trains its slice of each batch through
DistributedOptimizer (buckets small enough that there are several); rank 0 also trains a
copy of the model on the whole batch in one process; after 20 steps the parameters agree to
1e-6. The ranks start from different seeds: the broadcast from rank 0 makes them equal."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from fusegrad import Tensor, TinyJit, nn
from fusegrad import distributed as dist
from fusegrad.nn.optim import SGD, Adam, Optimizer
from fusegrad.nn.state import get_parameters

STEPS, PER_RANK = 20, 6


class Net:
    def __init__(self) -> None:
        self.l1 = nn.Linear(8, 16)
        self.l2 = nn.Linear(16, 16)
        self.l3 = nn.Linear(16, 4)

    def __call__(self, x: Tensor) -> Tensor:
        return self.l3(self.l2(self.l1(x).relu()).tanh())


def make_opt(kind: str, net: Net) -> Optimizer:
    params = get_parameters(net)
    if kind == "sgd":
        return SGD(params, lr=0.1, momentum=0.9)
    return Adam(params, lr=0.01)


def batches(n: int) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    rng = np.random.default_rng(7)
    return [
        (
            rng.standard_normal((n * PER_RANK, 8)).astype(np.float32),
            rng.integers(0, 4, n * PER_RANK).astype(np.int32),
        )
        for _ in range(STEPS)
    ]


def train_distributed(kind: str, jit: bool, data: list[Any]) -> list[np.ndarray[Any, Any]]:
    r = dist.rank()
    Tensor.manual_seed(1000 + r)  # different on every rank until the broadcast
    net = Net()
    opt = dist.DistributedOptimizer(make_opt(kind, net), bucket_bytes=1200, timeout=60)
    assert len(opt.buckets) >= 3, len(opt.buckets)

    def grads(x: Tensor, y: Tensor) -> Tensor:
        opt.zero_grad()
        loss = net(x).sparse_categorical_crossentropy(y)
        loss.backward()
        Tensor.realize(loss, *opt.flatten_gradients())
        return loss

    def update() -> Tensor:
        out = opt.schedule_step()
        Tensor.realize(*out)
        return out[0]

    grads_step = TinyJit(grads) if jit else grads
    update_step = TinyJit(update) if jit else update
    Tensor.training = True
    for x, y in data:
        part = slice(r * PER_RANK, (r + 1) * PER_RANK)
        if jit:
            grads_step(Tensor(x[part]), Tensor(y[part]))
            opt.all_reduce_gradients()
            update_step()
        else:
            grads(Tensor(x[part]), Tensor(y[part]))
            opt.step()
    return [p.numpy() for p in get_parameters(net)]


def train_single(kind: str, data: list[Any]) -> list[np.ndarray[Any, Any]]:
    Tensor.manual_seed(1000)
    net = Net()
    opt = make_opt(kind, net)
    Tensor.training = True
    for x, y in data:
        opt.zero_grad()
        net(Tensor(x)).sparse_categorical_crossentropy(Tensor(y)).backward()
        opt.step()
    return [p.numpy() for p in get_parameters(net)]


def main() -> None:
    dist.init()
    kind, jit = sys.argv[1], "jit" in sys.argv[2:]
    data = batches(dist.world_size())
    mine = train_distributed(kind, jit, data)
    every = dist.all_gather(Tensor(np.concatenate([p.reshape(-1) for p in mine]))[None])
    gathered = every.numpy()
    assert all(np.array_equal(gathered[0], row) for row in gathered), "ranks diverged"
    if dist.rank() == 0:
        reference = train_single(kind, data)
        worst = max(float(np.abs(a - b).max()) for a, b in zip(mine, reference, strict=True))
        moved = max(float(np.abs(a).max()) for a in reference)
        print(f"max |distributed - single| = {worst:.3g} (max |param| {moved:.3g})")
        for a, b in zip(mine, reference, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    dist.barrier(timeout=60)
    print(f"rank {dist.rank()}: training {kind} ok")


if __name__ == "__main__":
    main()
