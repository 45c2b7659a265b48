"""3x3 convolution (NCHW, fp32) on the CPU device: NumPy vs heuristics vs BEAM, in GFLOP/s.

    .venv/bin/python tools/bench/conv.py [--shape 8 32 32 66] [--beam 2] [--tensor-only]

``--shape B CIN COUT HW``: batch, input/output channels, input height=width (valid conv, the
output is HW-2 square). The NumPy reference is an im2col matmul (BLAS), PyTorch's is
``torch.nn.functional.conv2d``. The ``kernel`` rows time a hand-built kernel AST; the
``tensor`` rows time ``x.conv2d(w).realize()`` end to end, with the heuristics and with
``BEAM`` set as a user sets it (``Context(BEAM=n)``: the first call searches every kernel on
the CPU device's own timer; its time is the search time).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
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


def torch_conv(x: np.ndarray, w: np.ndarray) -> Callable[[], object] | None:
    """PyTorch's conv2d on the CPU (None without torch)."""
    try:
        import torch
    except ImportError:
        return None
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    return lambda: torch.nn.functional.conv2d(tx, tw)


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        time.sleep(0.05)  # BLAS threads of the previous call stop spinning
        fn()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def run_tensor(k: object, x: np.ndarray, w: np.ndarray, beam: int, repeats: int) -> None:
    """``x.conv2d(w)`` on Tensors, heuristics and BEAM, next to NumPy and PyTorch."""
    from fusegrad import Tensor
    from fusegrad.codegen import clear_programs
    from fusegrad.engine import programs
    from fusegrad.engine.launch import synchronize
    from fusegrad.uop import Context

    b, cin, hw, _ = x.shape
    cout, oh = w.shape[0], hw - 2
    flops = 2 * b * cout * oh * oh * cin * 9
    tx, tw = Tensor(x).realize(), Tensor(w).realize()
    want = im2col_conv(x, w)

    def ours() -> np.ndarray:
        out = tx.conv2d(tw).realize()
        synchronize()
        return out  # type: ignore[no-any-return]

    refs: dict[str, Callable[[], object]] = {"numpy": lambda: im2col_conv(x, w)}
    if (torch_fn := torch_conv(x, w)) is not None:
        refs["torch"] = torch_fn
    label = f"tensor conv3x3 {b}x{cin}->{cout} {hw}"
    print(f"{label}: load average {k.load_average()}")  # type: ignore[attr-defined]
    ref_g = {r: flops / _median_seconds(fn, repeats) / 1e9 for r, fn in refs.items()}
    gflops: dict[str, float] = {}
    for name, width in {"heuristics": 0, **({f"BEAM={beam}": beam} if beam else {})}.items():
        programs.clear_kernels()
        clear_programs()
        with Context(BEAM=width):
            start = time.perf_counter()
            got = ours().numpy()
            first = time.perf_counter() - start
            gflops[name] = flops / _median_seconds(ours, repeats) / 1e9
        err = float(np.abs(got - want).max())
        others = "  ".join(f"{r} {g:7.1f}" for r, g in ref_g.items())
        print(
            f"{label} {name:11s} {gflops[name]:7.1f} GFLOP/s vs {others}  "
            f"max err {err:.1e}  (first call {first:.2f}s)"
        )
    if len(gflops) == 2:
        print(f"{label} BEAM/heuristics {gflops[f'BEAM={beam}'] / gflops['heuristics']:.2f}x")
    print(f"{label}: load average {k.load_average()}")  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[8, 32, 32, 66])
    parser.add_argument("--beam", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tensor-only", action="store_true", help="only the Tensor rows")
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
    run_tensor(k, x, w, args.beam, args.repeats)
    if args.tensor_only:
        return
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
