"""Fault scenarios (run under mpiexec): ``raise`` (rank 1 raises while rank 0 waits),
``mismatch`` (shapes and dtypes differ across ranks), ``timeout`` (rank 1 never joins)."""

from __future__ import annotations

import sys
import time

import numpy as np
from fusegrad import Tensor, dtypes
from fusegrad import distributed as dist


def mismatch(r: int) -> None:
    for kwargs in ({"shape": (4, 4 + r)}, {"dtype": dtypes.float32 if r else dtypes.float16}):
        shape = kwargs.get("shape", (3,))
        dtype = kwargs.get("dtype", dtypes.float32)
        try:
            dist.all_reduce(Tensor.ones(*shape, dtype=dtype), timeout=20)  # type: ignore[misc]
        except ValueError as e:
            print(f"rank {r} ValueError: {e}", flush=True)
        else:
            raise AssertionError("mismatched all_reduce did not raise")
    try:  # one rank calls broadcast, the other all_gather
        t = Tensor(np.zeros(2, np.float32))
        dist.broadcast(t, timeout=20) if r == 0 else dist.all_gather(t, timeout=20)
    except ValueError as e:
        print(f"rank {r} ValueError: {e}", flush=True)
    dist.barrier(timeout=20)
    print(f"rank {r}: mismatch ok", flush=True)


def main() -> None:
    dist.init()
    r = dist.rank()
    scenario = sys.argv[1]
    if scenario == "raise":
        if r == 1:
            raise ValueError("boom from rank 1")
        dist.barrier()  # never completes: the abort must end this rank
    elif scenario == "timeout":
        if r == 1:
            time.sleep(300)
        dist.all_reduce(Tensor.ones(3), timeout=1.0)
    elif scenario == "mismatch":
        mismatch(r)


if __name__ == "__main__":
    main()
