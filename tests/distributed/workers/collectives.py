"""Every collective on every dtype, checked against NumPy on each rank (run under mpiexec)."""

from __future__ import annotations

from typing import Any

import numpy as np
from fusegrad import Tensor, dtypes
from fusegrad import distributed as dist
from fusegrad.distributed.hostmem import host_view
from fusegrad.uop import DType

DTYPES = [
    dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32,
    dtypes.uint32, dtypes.int64, dtypes.uint64, dtypes.float16, dtypes.bfloat16,
    dtypes.float32, dtypes.float64, dtypes.fp8e4m3, dtypes.fp8e5m2,
]  # fmt: skip
SHAPE = (4, 6)


def values(r: int, dt: DType) -> np.ndarray[Any, Any]:
    """Rank r's data: small integers (exact in every dtype, sums too), or bools."""
    rng = np.random.default_rng(100 + r)
    if dt == dtypes.bool:
        return rng.integers(0, 2, SHAPE).astype(bool)
    return rng.integers(0, 4, SHAPE).astype(np.float64)


def as_dtype(x: np.ndarray[Any, Any], dt: DType) -> np.ndarray[Any, Any]:
    """``x`` rounded to ``dt`` the way a Tensor stores it, read back."""
    return Tensor(x.astype(np.float32) if dtypes.is_float(dt) else x, dtype=dt).numpy()


def tensor(r: int, dt: DType) -> Tensor:
    return Tensor(values(r, dt), dtype=dt)


def check(name: str, got: np.ndarray[Any, Any], want: np.ndarray[Any, Any], exact: bool) -> None:
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if exact:
        assert np.array_equal(got, want), f"{name}: {got} != {want}"
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, err_msg=name)


def reduced(n: int, dt: DType, op: str) -> np.ndarray[Any, Any]:
    every = np.stack([values(r, dt) for r in range(n)])
    if dt == dtypes.bool:
        return {"sum": every.any(0), "max": every.any(0), "min": every.all(0)}[op]
    return {"sum": every.sum(0), "max": every.max(0), "min": every.min(0), "mean": every.mean(0)}[
        op
    ]


def main() -> None:
    dist.init()
    r, n = dist.rank(), dist.world_size()
    for dt in DTYPES:
        ops = ["sum", "max", "min"] + (["mean"] if dtypes.is_float(dt) else [])
        for op in ops:
            t = tensor(r, dt)
            assert dist.all_reduce(t, op=op) is t
            want = as_dtype(reduced(n, dt, op), dt)
            check(f"all_reduce {op} {dt}", t.numpy(), want, exact=op != "mean")
            for axis in (0, 1):
                part = dist.reduce_scatter(_rs_input(r, n, dt, axis), axis=axis, op=op)
                name = f"reduce_scatter axis={axis} {op} {dt}"
                check(name, part.numpy(), as_dtype(reduced(n, dt, op), dt), op != "mean")
        t = tensor(r, dt)
        dist.broadcast(t, root=n - 1)
        check(f"broadcast {dt}", t.numpy(), as_dtype(values(n - 1, dt), dt), exact=True)
        for axis in (0, 1):
            g = dist.all_gather(tensor(r, dt), axis=axis)
            want = np.concatenate([as_dtype(values(q, dt), dt) for q in range(n)], axis=axis)
            check(f"all_gather axis={axis} {dt}", g.numpy(), want, exact=True)
    # on the CPU, MPI works on the buffer's own memory: no copy in or out
    t = Tensor(np.ones(8, np.float32)).realize()
    before = host_view(t)
    dist.all_reduce(t)
    after = host_view(t)
    assert before.zero_copy and after.zero_copy
    assert before.array.ctypes.data == after.array.ctypes.data
    assert np.array_equal(before.array, np.full(8, float(n), np.float32))
    # a view (not a buffer of its own) and a lazy result reduce too
    base = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = base[1:, ::2]
    dist.all_reduce(view)
    check("all_reduce view", view.numpy(), n * np.arange(12.0).reshape(3, 4)[1:, ::2], True)
    lazy = Tensor.ones(5) * (r + 1)
    dist.all_reduce(lazy, op="max")
    check("all_reduce lazy", lazy.numpy(), np.full(5, float(n)), True)
    print(f"rank {r}: collectives ok")


def _rs_input(r: int, n: int, dt: DType, axis: int) -> Tensor:
    """The rank's values repeated n times along ``axis``: every part reduces to the same."""
    return Tensor(np.concatenate([values(r, dt)] * n, axis=axis), dtype=dt)


if __name__ == "__main__":
    main()
