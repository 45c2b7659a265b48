"""Tensor-core matmuls on a GPU device, checked against NumPy (issue #22's GPU check).

    python tools/gpu/tensor_cores.py [--device CUDA] [--quick] [--json FILE]

A matmul ``C[m, n] = sum_k A[m, k] * B[k, n]`` with float16 or bfloat16 inputs and float32
accumulation, as a kernel with explicit opts (``KernelInfo.opts_to_apply``: ``TC`` and, for
the larger shapes, ``LOCAL`` warps per block; ``PADTO`` first where a dimension is not a
multiple of the tensor core's) run through ``Tensor.custom_kernel``. Each case checks that
the rendered kernel has ``mma.sync`` and that the result equals NumPy's float32 matmul of
the same (rounded) inputs; with ``UPCAST`` opts after TC a warp runs several mmas sharing
fragments. A last case launches a grid over CUDA's 65535-block y/z limit (the lowering packs
it) and checks every element. ``--quick``: small shapes only, no big
grid (for the fake driver in the test suite). Exit status 1 when a case fails.

``tc_matmul`` is also what ``bench_cuda.py`` times for its tensor-core TFLOP/s figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: register blocking (2 x 2 mma per warp) and 4 warps per block
BLOCKED = (("UPCAST", 0, 2), ("UPCAST", 1, 2), ("LOCAL", 0, 2), ("LOCAL", 1, 2))
#: (m, k, n, dtype name, extra opts after TC as (op name, axis, amount))
CASES: tuple[tuple[int, int, int, str, tuple[tuple[str, int, int], ...]], ...] = (
    (64, 64, 64, "float16", ()),
    (20, 24, 12, "float16", ()),  # padded to 32 x 32 x 16
    (32, 48, 16, "bfloat16", ()),
    (256, 512, 128, "float16", (("LOCAL", 0, 2), ("LOCAL", 1, 2))),
    (256, 256, 256, "float16", BLOCKED),  # 2 x 2 mma per warp, 4 warps per block
)
QUICK = CASES[1:3]


def _cores(device: str) -> Any:
    from fusegrad.runtime import Device

    return getattr(Device[device].renderer, "tensor_cores", ())


def core_of(device: str, dtype: Any) -> tuple[int, Any] | None:
    """The index and TensorCore of ``device``'s renderer taking ``dtype`` inputs (None: no
    such core, e.g. bfloat16 on sm_75)."""
    for i, core in enumerate(_cores(device)):
        if core.dtype_in is dtype:
            return i, core
    return None


def tc_kernel(
    m: int, k: int, n: int, dtype: Any, device: str, extra: Sequence[tuple[str, int, int]] = ()
) -> Callable[..., Any]:
    """The custom-kernel function of the matmul: params (C float32, A, B of ``dtype``)."""
    from fusegrad.codegen import KernelInfo
    from fusegrad.codegen.opt import Opt, OptOps
    from fusegrad.uop import AxisType, Ops, UOp, dtypes

    found = core_of(device, dtype)
    if found is None:
        raise ValueError(f"tensor cores: {device} has none for {dtype!r} inputs")
    core, tc = found
    tn, tm, tk = tc.dims
    pads = [
        Opt(OptOps.PADTO, axis, size)
        for axis, (dim, size) in enumerate(((m, tm), (n, tn), (k, tk)))
        if dim % size
    ]
    opts = (*pads, Opt(OptOps.TC, core), *(Opt(OptOps[op], ax, amt) for op, ax, amt in extra))

    def fxn(c: UOp, a: UOp, b: UOp) -> UOp:
        i, j, r = UOp.range(m, 0), UOp.range(n, 1), UOp.range(k, 2, AxisType.REDUCE)
        x = a.index(i * k + r).load().cast(dtypes.float32)
        y = b.index(r * n + j).load().cast(dtypes.float32)
        store = c.index(i * n + j).store((x * y).reduce(r, arg=Ops.ADD)).end(i, j)
        return UOp.sink(store, arg=KernelInfo(f"tc_matmul_{m}_{k}_{n}", opts_to_apply=opts))

    return fxn


def tc_source(m: int, k: int, n: int, dtype: Any, device: str, extra: Sequence[Any] = ()) -> str:
    """The rendered kernel of ``tc_kernel`` for ``device`` (to check it has mma.sync)."""
    from fusegrad.codegen import to_program
    from fusegrad.runtime import Device
    from fusegrad.uop import UOp, dtypes

    params = (
        UOp.param(0, dtypes.float32.ptr(m * n)),
        UOp.param(1, dtype.ptr(m * k)),
        UOp.param(2, dtype.ptr(k * n)),
    )
    kernel = tc_kernel(m, k, n, dtype, device, extra)(*params)
    src = to_program(kernel, Device[device].renderer).src
    return src if isinstance(src, str) else src.decode(errors="replace")


def tc_matmul(
    a: Any, b: Any, device: str, extra: Sequence[tuple[str, int, int]] = ()
) -> Callable[[], Any]:
    """A function running the tensor-core matmul of realized Tensors ``a`` (m x k) and ``b``
    (k x n) on ``device``; it returns the float32 result Tensor (realized)."""
    from fusegrad import Tensor
    from fusegrad.uop import dtypes

    (m, k), (_, n) = a.shape, b.shape
    fxn = tc_kernel(m, k, n, a.dtype, device, extra)
    out = Tensor.zeros(m, n, dtype=dtypes.float32, device=device).contiguous().realize()

    def run() -> Any:
        return out.custom_kernel(a, b, fxn=fxn)[0].realize()

    return run


def _inputs(m: int, k: int, n: int, dtype: str, device: str) -> tuple[Any, Any]:
    from fusegrad import Tensor
    from fusegrad.uop import dtypes

    rng = np.random.default_rng(m * 7 + k * 3 + n)
    dt = getattr(dtypes, dtype)
    a = Tensor(rng.standard_normal((m, k)).astype(np.float32), device=device).cast(dt)
    b = Tensor(rng.standard_normal((k, n)).astype(np.float32), device=device).cast(dt)
    return a.realize(), b.realize()


def check_case(
    m: int, k: int, n: int, dtype: str, extra: Sequence[Any], device: str
) -> dict[str, Any]:
    """One matmul on tensor cores against NumPy: a dict with ``ok`` and the numbers."""
    from fusegrad.uop import dtypes

    a, b = _inputs(m, k, n, dtype, device)
    src = tc_source(m, k, n, getattr(dtypes, dtype), device, extra)
    got = tc_matmul(a, b, device, extra)().numpy()
    want = a.float().numpy() @ b.float().numpy()
    err = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
    out = {"m": m, "k": k, "n": n, "dtype": dtype, "opts": [list(x) for x in extra]}
    out.update(mma="mma.sync" in src, max_rel_err=err, ok="mma.sync" in src and err <= 1e-4)
    return out


def check_big_grid(device: str) -> dict[str, Any]:
    """A 70000 x 2 grid of single-thread blocks (y over 65535 unless packed) writes each
    element once."""
    from fusegrad import Tensor
    from fusegrad.codegen import KernelInfo
    from fusegrad.uop import UOp, dtypes

    rows, cols = 70000, 2

    def fxn(out: UOp) -> UOp:
        i, j = UOp.range(rows, 0), UOp.range(cols, 1)
        idx = i * cols + j
        store = out.index(idx).store(idx.cast(dtypes.int32) * 3 + 1).end(i, j)
        return UOp.sink(store, arg=KernelInfo("big_grid", opts_to_apply=()))

    buf = Tensor.full((rows * cols,), -1, dtype=dtypes.int32, device=device).contiguous()
    got = buf.realize().custom_kernel(fxn=fxn)[0].numpy()
    ok = bool(np.array_equal(got, np.arange(rows * cols) * 3 + 1))
    return {"grid": [rows, cols], "ok": ok}


def check(device: str = "CUDA", quick: bool = False) -> dict[str, Any]:
    """Every case (``QUICK`` ones with ``quick``); prints one line each."""
    results: dict[str, Any] = {"device": device, "cases": [], "grid": None, "ok": True}
    if not _cores(device):
        print(f"tensor cores: {device}'s renderer declares none; nothing to check")
        results["ok"] = False
        return results
    from fusegrad.uop import dtypes

    for m, k, n, dtype, extra in QUICK if quick else CASES:
        if core_of(device, getattr(dtypes, dtype)) is None:
            print(f"tc matmul {m}x{k}x{n} {dtype}: no tensor core for {dtype}, skipped")
            continue
        r = check_case(m, k, n, dtype, extra, device)
        results["cases"].append(r)
        results["ok"] &= r["ok"]
        print(f"tc matmul {m}x{k}x{n} {dtype} opts {list(extra)}: mma.sync {r['mma']}, "
              f"max rel err {r['max_rel_err']:.2e} {'ok' if r['ok'] else 'FAIL'}")  # fmt: skip
    if not quick:
        g = check_big_grid(device)
        results["grid"] = g
        results["ok"] &= g["ok"]
        print(f"grid 70000 x 2 (over 65535 in y unless packed): {'ok' if g['ok'] else 'FAIL'}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CUDA")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results = check(args.device, args.quick)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    print("OK" if results["ok"] else "FAIL")
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
