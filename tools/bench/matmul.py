"""fp32 matmul on the CPU device: NumPy vs fusegrad's heuristics vs BEAM, in GFLOP/s.

    .venv/bin/python tools/bench/matmul.py [--sizes 512 1024 2048] [--beam 4] [--beam-max 1024]
    .venv/bin/python tools/bench/matmul.py --transformer [--rows 36 1024] [--beam 0]
    .venv/bin/python tools/bench/matmul.py --shapes 12x128x32x128t 1x1024x384x1536

Kernel ASTs are built by hand (what the scheduler emits for ``a @ b``). BEAM runs for sizes
up to ``--beam-max`` (a search at 2048 times hundreds of multi-second candidates); its result
is cached on disk, so a second run is quick (IGNORE_BEAM_CACHE=1 searches again).

``--transformer`` benchmarks MiniLM's matmul shapes instead: ``x[rows, 384] @ W[384, 1536]``
and ``x[rows, 1536] @ W[1536, 384]`` (with W stored as [K, N], and transposed as a Linear
layer keeps it: ``x @ W.T``), and 12-head attention ``q[n, 32] @ k.T`` and ``p[n, n] @ v``.
A shape ``BxMxKxN`` is a batched ``[B, M, K] @ [B, K, N]``; a trailing ``t`` stores B as
``[B, N, K]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np


def _kernels() -> object:
    spec = importlib.util.spec_from_file_location(
        "_bench_kernels", Path(__file__).with_name("kernels.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_bench_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


def transformer_shapes(rows: list[int], seqs: list[int]) -> list[str]:
    """MiniLM's matmul shapes (see the module docstring) as ``BxMxKxN[t]`` specs."""
    out = []
    for m in rows:
        out += [f"1x{m}x384x1536", f"1x{m}x384x1536t", f"1x{m}x1536x384", f"1x{m}x1536x384t"]
    for n in seqs:
        out += [f"12x{n}x32x{n}t", f"12x{n}x{n}x32"]
    return out


def run_shape(k: object, shape: str, beam: int, repeats: int) -> None:
    """Benchmark one ``BxMxKxN[t]`` shape."""
    transposed = shape.endswith("t")
    batch, m, kk, n = (int(x) for x in shape.rstrip("t").split("x"))
    rs = np.random.default_rng(m * n)
    a = rs.random((batch, m, kk), np.float32)
    b = rs.random((batch, n, kk) if transposed else (batch, kk, n), np.float32)
    bt = b.transpose(0, 2, 1) if transposed else b
    arrays = [np.zeros(batch * m * n, np.float32), a.reshape(-1), b.reshape(-1)]
    ast = k.batched_matmul_ast(batch, m, kk, n, transposed)  # type: ignore[attr-defined]
    reference = (lambda: a[0] @ bt[0]) if batch == 1 else (lambda: a @ bt)
    want_shape = (m, n) if batch == 1 else (batch, m, n)
    k.bench(  # type: ignore[attr-defined]
        f"mm {shape}", ast, arrays, lambda: reference().reshape(want_shape),
        2 * batch * m * n * kk, beam, repeats,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--shapes", nargs="+", default=[])
    parser.add_argument("--transformer", action="store_true")
    parser.add_argument("--rows", type=int, nargs="+", default=[36, 1024])
    parser.add_argument("--seqs", type=int, nargs="+", default=[128])
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--beam-max", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    k = _kernels()
    shapes = list(args.shapes)
    if args.transformer:
        shapes += transformer_shapes(args.rows, args.seqs)
    if shapes:
        for shape in shapes:
            run_shape(k, shape, args.beam, args.repeats)
        return
    for n in args.sizes:
        rs = np.random.default_rng(n)
        a, b = rs.random((n, n), np.float32), rs.random((n, n), np.float32)
        arrays = [np.zeros(n * n, np.float32), a.reshape(-1), b.reshape(-1)]
        beam = args.beam if n <= args.beam_max else 0
        k.bench(
            f"matmul {n}",
            k.matmul_ast(n),
            arrays,
            lambda a=a, b=b: a @ b,
            2 * n**3,
            beam,
            args.repeats,
        )  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
