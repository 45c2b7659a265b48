"""3x3 convolution (NCHW, fp32) on the CPU device: NumPy vs heuristics vs BEAM, in GFLOP/s.

    .venv/bin/python tools/bench/conv.py [--shape 8 32 32 66] [--beam 4]

``--shape B CIN COUT HW``: batch, input/output channels, input height=width (valid conv, the
output is HW-2 square). The NumPy reference is an im2col matmul (BLAS).
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


def im2col_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Valid 3x3 convolution through one matmul."""
    b, cin, hw, _ = x.shape
    oh = hw - 2
    cols = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))  # b cin oh oh 3 3
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(b * oh * oh, cin * 9)
    out = cols @ w.reshape(w.shape[0], -1).T  # (b oh oh) cout
    return out.reshape(b, oh, oh, -1).transpose(0, 3, 1, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[8, 32, 32, 66])
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    b, cin, cout, hw = args.shape
    k = _kernels()
    rs = np.random.default_rng(0)
    x = rs.random((b, cin, hw, hw), np.float32)
    w = rs.random((cout, cin, 3, 3), np.float32)
    oh = hw - 2
    arrays = [
        k.aligned(v)
        for v in (np.zeros(b * cout * oh * oh, np.float32), x.reshape(-1), w.reshape(-1))
    ]
    flops = 2 * b * cout * oh * oh * cin * 9
    label = f"conv3x3 {b}x{cin}->{cout} {hw}"
    k.bench(
        label,
        k.conv_ast(b, cin, cout, hw),
        arrays,
        lambda: im2col_conv(x, w),
        flops,
        args.beam,
        args.repeats,
    )  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
