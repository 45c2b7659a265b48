"""Benchmark of fusegrad.distributed: all-reduce bandwidth and data-parallel training speed.

* ``allreduce``: in-place sum all-reduce of 1, 4 and 64 MB float32 Tensors through
  ``distributed.all_reduce`` (with its agreement check, one small reduction before the data,
  and with ``check=False``) and of NumPy arrays through raw mpi4py
  (``comm.Allreduce(MPI.IN_PLACE, array)``), interleaved call by call in the same run
  with a barrier before each; median milliseconds, bandwidth (bytes / time) and fusegrad's
  share of the raw bandwidth (aim: >= 90%).
* ``digits``: steps per second of the train_digits example (TinyJit, batch 32) on 1 rank (the
  plain single-process step) and on 2 ranks (``--distributed``: each rank 16 images of every
  batch, gradients all-reduced), timed after the JIT capture.

Run with ``tools/dev bench distributed`` (needs mpi4py and mpiexec: ``pip install
'fusegrad[mpi]'``); ``--ranks N`` sets the all-reduce world size (default 2), ``--repeats``
the timed calls per size.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SIZES_MB = (1, 4, 64)


def _mpiexec() -> str:
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else "mpiexec"


def bench_allreduce(repeats: int) -> None:
    from fusegrad import Tensor
    from fusegrad import distributed as dist

    dist.init()
    MPI = dist.world.mpi()
    comm = dist.world.comm()
    rows = []
    for mb in SIZES_MB:
        n = mb * 2**20 // 4
        t = Tensor(np.ones(n, np.float32)).realize()
        raw = np.ones(n, np.float32)
        calls: dict[str, Callable[[], Any]] = {
            "checked": lambda t=t: dist.all_reduce(t),
            "unchecked": lambda t=t: dist.all_reduce(t, check=False),
            "raw": lambda raw=raw: comm.Allreduce(MPI.IN_PLACE, raw),
        }
        times: dict[str, list[float]] = {k: [] for k in calls}
        for i in range(repeats + 2):
            order = list(calls) if i % 2 else list(calls)[::-1]  # alternate who leads
            for name in order:
                comm.Barrier()
                start = time.perf_counter()
                calls[name]()
                if i >= 2:  # warm-up rounds untimed
                    times[name].append(time.perf_counter() - start)
        rows.append((mb, *(statistics.median(times[k]) for k in calls)))
    if dist.rank() == 0:
        print(f"all_reduce (sum, float32, {dist.world_size()} ranks, median of {repeats})")
        print(f"{'size':>6} {'fusegrad ms':>12} {'check=False':>12} {'mpi4py ms':>10} "
              f"{'GB/s':>6} {'raw GB/s':>9} {'share':>6} {'unchecked':>9}")  # fmt: skip
        for mb, checked, unchecked, raw_s in rows:
            gb = mb * 2**20 / 1e9
            print(
                f"{mb:>4}MB {1e3 * checked:>12.3f} {1e3 * unchecked:>12.3f} {1e3 * raw_s:>10.3f} "
                f"{gb / checked:>6.2f} {gb / raw_s:>9.2f} {100 * raw_s / checked:>5.0f}% "
                f"{100 * raw_s / unchecked:>8.0f}%"
            )


def bench_digits(steps: int, distributed: bool) -> None:
    from fusegrad import Tensor
    from fusegrad.examples import train_digits as td
    from fusegrad.nn.optim import Adam
    from fusegrad.nn.state import get_parameters

    x_train, y_train, _, _ = td.load_data(0)
    Tensor.manual_seed(0)
    part = slice(0, 32)
    if distributed:
        from fusegrad import distributed as dist

        dist.init()
        part = td.batch_part(32, dist.rank(), dist.world_size())
    net = td.DigitsNet()
    opt: Any = Adam(get_parameters(net), lr=0.003)
    if distributed:
        opt = dist.DistributedOptimizer(opt)
        step = td.make_distributed_step(net, opt, jit=True)
    else:
        step = td.make_step(net, opt, jit=True)
    order = np.random.default_rng(1).permutation(len(x_train))

    def batch(i: int) -> tuple[Tensor, Tensor]:
        idx = order[(i * 32) % 1408 : (i * 32) % 1408 + 32][part]
        return Tensor(x_train[idx]), Tensor(y_train[idx])

    for i in range(3):  # run, capture, first replay
        step(*batch(i)).item()
    start = time.perf_counter()
    for i in range(steps):
        step(*batch(i)).item()
    seconds = time.perf_counter() - start
    if not distributed or dist.rank() == 0:
        ranks = dist.world_size() if distributed else 1
        print(f"digits training: {ranks} rank(s): {steps / seconds:.1f} steps/s (batch 32)")


def launch(ranks: int, *args: str) -> None:
    cmd = [_mpiexec(), "-n", str(ranks), sys.executable, __file__, *args]
    subprocess.run(cmd, check=True, timeout=1200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--worker", choices=["allreduce", "digits", "digits-single"])
    args = parser.parse_args()
    if args.worker == "allreduce":
        bench_allreduce(args.repeats)
    elif args.worker == "digits":
        bench_digits(args.steps, distributed=True)
    elif args.worker == "digits-single":
        bench_digits(args.steps, distributed=False)
    else:
        launch(args.ranks, "--worker", "allreduce", "--repeats", str(args.repeats))
        subprocess.run(
            [sys.executable, __file__, "--worker", "digits-single", "--steps", str(args.steps)],
            check=True,
            timeout=1200,
        )
        launch(2, "--worker", "digits", "--steps", str(args.steps))


if __name__ == "__main__":
    main()
