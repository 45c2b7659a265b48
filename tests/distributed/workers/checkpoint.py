"""Checkpoint round trips (run under mpiexec): ``checkpoint.py DIR`` writes DIR/single.safetensors
(rank 0) and the sharded checkpoints DIR/replicated and DIR/slices, and every rank loads them
back and compares."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from fusegrad import Tensor, dtypes
from fusegrad import distributed as dist


def state() -> dict[str, Tensor]:
    """The same values on every rank (a replicated model)."""
    return {
        "w": Tensor(np.arange(30, dtype=np.float32).reshape(10, 3) / 7),
        "b": Tensor([0.5, 1.5, -2.0, 3.25, 8.0], dtype=dtypes.bfloat16),
        "i": Tensor(np.arange(6, dtype=np.int64).reshape(3, 2) - 2**40),
        "s": Tensor(2.5),
        "few": Tensor(np.ones((1, 4), np.float16)),
    }


def same(got: dict[str, Tensor], want: dict[str, Any], what: str) -> None:
    assert set(got) == set(want), f"{what}: {sorted(got)} != {sorted(want)}"
    for k, v in want.items():
        expected = v.numpy() if isinstance(v, Tensor) else v
        assert got[k].dtype == (v.dtype if isinstance(v, Tensor) else got[k].dtype), k
        assert np.array_equal(got[k].numpy(), expected), f"{what} {k}: {got[k].numpy()}"


def main() -> None:
    dist.init()
    folder = Path(sys.argv[1])
    r, n = dist.rank(), dist.world_size()
    dist.save(state(), folder / "single.safetensors")
    same(dist.load(folder / "single.safetensors"), state(), "single file")
    dist.save_sharded(state(), folder / "replicated")
    if r == 0:
        files = sorted(p.name for p in (folder / "replicated").iterdir())
        assert files == ["index.json"] + [f"rank-{q:05d}-of-{n:05d}.safetensors" for q in range(n)]
    same(dist.load_sharded(folder / "replicated"), state(), "replicated")
    mine = {"part": Tensor(np.full((r + 1, 2), r, np.int32))}  # rank r holds r + 1 rows
    dist.save_sharded(mine, folder / "slices", replicated=False)
    whole = np.concatenate([np.full((q + 1, 2), q, np.int32) for q in range(n)])
    same(dist.load_sharded(folder / "slices"), {"part": whole}, "slices")
    dist.barrier(timeout=60)
    print(f"rank {r}: checkpoint ok")


if __name__ == "__main__":
    main()
