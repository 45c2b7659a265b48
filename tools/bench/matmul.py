"""fp32 matmul on the CPU device: NumPy vs fusegrad's heuristics vs BEAM, in GFLOP/s.

    .venv/bin/python tools/bench/matmul.py [--sizes 512 1024 2048] [--beam 4] [--beam-max 1024]

Kernel ASTs are built by hand (what the scheduler emits for ``a @ b``). BEAM runs for sizes
up to ``--beam-max`` (a search at 2048 times hundreds of multi-second candidates); its result
is cached on disk, so a second run is quick (IGNORE_BEAM_CACHE=1 searches again).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--beam-max", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    k = _kernels()
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
