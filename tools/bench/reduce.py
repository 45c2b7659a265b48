"""Reductions and normalizations on the CPU device through Tensor code, in GB/s of input read,
next to NumPy and PyTorch in the same rounds, as ratios.

    .venv/bin/python tools/bench/reduce.py [--size 4096] [--repeats 5] [--cases sum_last softmax]
    .venv/bin/python tools/bench/reduce.py --beam 2      # BEAM rows too (searched on first call)

Cases: sum/mean/max over the last, the first and a middle axis ([64, 64, n] summed over axis
1), the full sum, argmax over the last axis, softmax/log-softmax/layernorm over the last axis,
and a reduction fused after elementwise work (``(x * 2 + 1).sum(-1)``), on an ``n x n`` float32
array. Each timed call is ``f(x).realize()`` and waiting for it (every kernel the scheduler
makes, their launches). The functions run round-robin (interleaved) ``--repeats`` times, each
timed call after a pause and 50 ms of untimed calls (as ``matmul.py``); the medians are
printed, and ``paired``: the median over rounds of (best other's time / ours), which cancels
load drifts between rounds; then the max error against NumPy in float64 and how many kernels
the scheduler makes. The host arrays are 64-byte aligned (``kernels.aligned``). The
machine is shared: read the numbers next to the load averages printed.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: seconds of sleep before each timed call (OpenBLAS/PyTorch threads spin after a call)
PAUSE = 0.1
#: seconds of untimed calls before each timed call (the VM's cores run slow after idling)
WARM = 0.05


@functools.cache
def _kernels() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_bench_kernels", Path(__file__).with_name("kernels.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_bench_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


def _np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_layernorm(a: np.ndarray) -> np.ndarray:
    mean = a.mean(-1, keepdims=True)
    return (a - mean) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)


#: name -> (fusegrad on a Tensor, NumPy on an array, PyTorch on a tensor; shape as [n, n] or
#: [64, 64, n*n/4096] for the middle-axis case)
CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[Any], Any]]] = {
    "sum_last": (lambda t: t.sum(-1), lambda a: a.sum(-1), lambda t: t.sum(-1)),
    "sum_first": (lambda t: t.sum(0), lambda a: a.sum(0), lambda t: t.sum(0)),
    "sum_middle": (lambda t: t.sum(1), lambda a: a.sum(1), lambda t: t.sum(1)),
    "sum_all": (lambda t: t.sum(), lambda a: a.sum(), lambda t: t.sum()),
    "mean_last": (lambda t: t.mean(-1), lambda a: a.mean(-1), lambda t: t.mean(-1)),
    "max_last": (lambda t: t.max(-1), lambda a: a.max(-1), lambda t: t.amax(-1)),
    "max_first": (lambda t: t.max(0), lambda a: a.max(0), lambda t: t.amax(0)),
    "argmax_last": (lambda t: t.argmax(-1), lambda a: a.argmax(-1), lambda t: t.argmax(-1)),
    "fused_sum": (
        lambda t: (t * 2 + 1).sum(-1),
        lambda a: (a * 2 + 1).sum(-1),
        lambda t: (t * 2 + 1).sum(-1),
    ),
    "softmax": (lambda t: t.softmax(-1), _np_softmax, lambda t: t.softmax(-1)),
    "log_softmax": (
        lambda t: t.log_softmax(-1),
        lambda a: np.log(_np_softmax(a)),
        lambda t: t.log_softmax(-1),
    ),
    "layernorm": (
        lambda t: t.layernorm(),
        _np_layernorm,
        lambda t: __import__("torch").nn.functional.layer_norm(t, t.shape[-1:]),
    ),
}


def _rounds(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            time.sleep(PAUSE)
            warm = time.perf_counter() + WARM
            while True:
                fn()
                if time.perf_counter() >= warm:
                    break
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def _kernel_count(t: Any) -> int:
    """Kernels the scheduler makes for ``t`` (scheduled afresh, not run)."""
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.uop import UOp

    return len(get_kernel_graph(UOp.sink(t.uop), cache=None).calls)


def run_case(name: str, n: int, repeats: int, beam: int) -> None:
    from fusegrad import Tensor
    from fusegrad.engine.launch import synchronize
    from fusegrad.uop import Context

    ours_fn, np_fn, torch_fn = CASES[name]
    shape = (64, 64, n * n // 4096) if name == "sum_middle" else (n, n)
    a = _kernels().aligned(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    x = Tensor(a).realize()
    fns: dict[str, Callable[[], object]] = {"numpy": lambda: np_fn(a)}
    try:
        import torch

        ta = torch.from_numpy(a)
        fns["torch"] = lambda: torch_fn(ta)
    except ImportError:
        pass
    modes = {"heuristics": 0, **({f"BEAM={beam}": beam} if beam > 0 else {})}
    for mode, width in modes.items():

        def ours(width: int = width) -> None:
            with Context(BEAM=width):
                ours_fn(x).realize()
                synchronize()

        got = ours_fn(x).numpy() if width == 0 else None
        if got is not None:
            want = np_fn(a.astype(np.float64))
            err = float(np.max(np.abs(got - want))) if name != "argmax_last" else 0.0
        ours()  # compiles (BEAM searches here)
        secs = _rounds({**fns, mode: ours}, repeats)
        med = {k: float(np.median(v)) for k, v in secs.items()}
        best = min((k for k in fns), key=lambda k: med[k])
        paired = float(np.median(np.array(secs[best]) / np.array(secs[mode])))
        gbs = {k: a.nbytes / v / 1e9 for k, v in med.items()}
        others = "  ".join(f"{k} {gbs[k]:6.1f}" for k in fns)
        note = (
            f"  max err {err:.1e}  kernels {_kernel_count(ours_fn(x))}" if got is not None else ""
        )
        print(
            f"{name:12s} {mode:10s} {gbs[mode]:6.1f} GB/s   {others}   "
            f"x{gbs[mode] / gbs['numpy']:5.2f} numpy"
            + (f"  x{gbs[mode] / gbs['torch']:5.2f} torch" if "torch" in gbs else "")
            + f"  paired vs {best} x{paired:5.2f}{note}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--beam", type=int, default=0)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()
    if args.size % 64:
        parser.error(f"--size {args.size} must be a multiple of 64 (the middle-axis case)")
    print(f"load average {_kernels().load_average()}  size {args.size}")
    for name in args.cases:
        run_case(name, args.size, args.repeats, args.beam)
    print(f"load average {_kernels().load_average()}")


if __name__ == "__main__":
    main()
