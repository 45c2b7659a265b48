"""Transcendentals over 4M float32 elements: fusegrad next to NumPy and PyTorch, in one run.

    .venv/bin/python tools/bench/transcendental.py [--n 4194304] [--repeats 9] [--no-native]
                                                   [--no-torch] [--json FILE]

Functions: exp, log, sin, cos, tanh, sigmoid, GELU (the tanh form) as the frontend builds
them (on EXP2/LOG2/SIN). Each column is the median over ``--repeats`` calls (wall time, ms):

* ``fusegrad``: ``Tensor`` ops through ``TinyJit`` (replays: no Python, no compiling) on the
  default CPU device, as configured (the LLVM renderer: EXP2, and LOG2/SIN on vectors,
  lowered to the vectorizable approximations of ``lower/transcendental.py``);
* ``native``: the same, in a child process where the LLVM renderer prints EXP2/LOG2/SIN
  itself everywhere (``llvm.exp2/log2/sin``: libm calls, one per vector lane) — what
  fusegrad did before;
* ``numpy``: NumPy in float32 (one thread); ``torch``: PyTorch in float32, its default
  thread count (when installed).

Each fusegrad result is compared with NumPy in float64: the max error (relative where the
result exceeds 1, absolute below) is printed, so a fast but wrong kernel shows. The machine is shared: the load
average is printed next to the numbers; read ratios within one run.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

NAMES = ("exp", "log", "sin", "cos", "tanh", "sigmoid", "gelu")
_SQRT_2_PI = math.sqrt(2 / math.pi)


def _inputs(n: int) -> dict[str, np.ndarray]:
    """Inputs per function: a range where the function is interesting (and log's positive)."""
    rs = np.random.default_rng(0)
    normal = (rs.standard_normal(n) * 4).astype(np.float32)
    return {
        "exp": normal,
        "log": (rs.random(n) * 100 + 1e-3).astype(np.float32),
        "sin": (rs.standard_normal(n) * 100).astype(np.float32),
        "cos": (rs.standard_normal(n) * 100).astype(np.float32),
        "tanh": normal,
        "sigmoid": normal,
        "gelu": normal,
    }


def _np_gelu(x: Any, xp: Any = np) -> Any:
    return 0.5 * x * (1 + xp.tanh(_SQRT_2_PI * (x + 0.044715 * x**3)))


NUMPY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "gelu": _np_gelu,
}


Timing = tuple[float, float]  # (wall ms, CPU ms of the whole process: every thread)


def _median_ms(fn: Callable[[], object], repeats: int) -> Timing:
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall) * 1e3, statistics.median(cpu) * 1e3


def _use_native_transcendentals() -> None:
    """The LLVM renderer as it was: EXP2/LOG2/SIN as LLVM intrinsics (libm calls)."""
    from fusegrad.renderer import LLVMRenderer
    from fusegrad.renderer.llvm_ops import CODE_FOR_OP

    LLVMRenderer.code_for_op = dict(CODE_FOR_OP)
    LLVMRenderer.vector_approximated = frozenset()


def _apply(name: str, t: Any) -> Any:
    return getattr(t, name)().realize()


def fusegrad_times(n: int, repeats: int) -> dict[str, tuple[Timing, float]]:
    """Per function: (medians of a TinyJit replay, max error against NumPy float64)."""
    from fusegrad import Device, Tensor, TinyJit

    device = Device[Device.DEFAULT]
    out: dict[str, tuple[Timing, float]] = {}
    for name, x in _inputs(n).items():
        jitted = TinyJit(functools.partial(_apply, name))
        xt = Tensor(x).realize()
        result: list[Any] = [None]

        def call(jitted: Any = jitted, xt: Tensor = xt, result: list[Any] = result) -> None:
            result[0] = jitted(xt)
            device.synchronize()

        ms = _median_ms(call, repeats)
        want = NUMPY[name](x.astype(np.float64))
        got = result[0].numpy().astype(np.float64)
        scale = np.maximum(np.abs(want), 1.0)  # relative above 1, absolute below
        out[name] = (ms, float(np.max(np.abs(got - want) / scale)))
    return out


def torch_times(n: int, repeats: int) -> dict[str, Timing] | None:
    """Median ms per function with PyTorch (None when it is not installed)."""
    try:
        import torch
    except ImportError:
        return None
    fns: dict[str, Callable[[Any], Any]] = {
        "exp": torch.exp,
        "log": torch.log,
        "sin": torch.sin,
        "cos": torch.cos,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "gelu": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    }
    out = {}
    with torch.inference_mode():
        for name, x in _inputs(n).items():
            t = torch.from_numpy(x)
            out[name] = _median_ms(functools.partial(fns[name], t), repeats)
    return out


def numpy_times(n: int, repeats: int) -> dict[str, Timing]:
    """Median ms per function with NumPy (float32)."""
    return {
        name: _median_ms(functools.partial(NUMPY[name], x), repeats)
        for name, x in _inputs(n).items()
    }


def _native_in_child(n: int, repeats: int) -> dict[str, tuple[Timing, float]]:
    """``fusegrad_times`` with native LLVM transcendentals, in a fresh process."""
    cmd = [sys.executable, __file__, "--child-native", "--n", str(n), "--repeats", str(repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=os.environ.copy())
    found = json.loads(done.stdout.splitlines()[-1])
    return {k: ((v[0][0], v[0][1]), v[1]) for k, v in found.items()}


def _load() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


COLUMNS = ("fusegrad", "native", "numpy", "torch")


def _table(rows: dict[str, dict[str, Timing | None]], errors: dict[str, float]) -> str:
    """Wall ms per column, then CPU ms per column, the libm/approximation ratio (wall) and
    fusegrad's max error."""
    head = "".join(f"{c:>10s}" for c in COLUMNS)
    lines = [f"{'':10s}{'wall ms':^40s}{'CPU ms':^40s}", f"{'function':10s}{head}{head}"]
    lines[-1] += f"{'native/fg':>10s}{'max err':>10s}"
    for name, row in rows.items():
        cells = ""
        for k in (0, 1):
            cells += "".join(
                f"{t[k]:10.2f}" if (t := row[c]) is not None else f"{'-':>10s}" for c in COLUMNS
            )
        fg, native = row["fusegrad"], row["native"]
        ratio = f"{native[0] / fg[0]:10.2f}" if fg and native else f"{'-':>10s}"
        lines.append(f"{name:10s}{cells}{ratio}{errors[name]:10.1e}")
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark and print the table (ms, medians)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 22)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--no-native", action="store_true", help="skip the libm (before) run")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--json", type=str, default="")
    parser.add_argument("--child-native", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_native:
        _use_native_transcendentals()
        print(json.dumps(fusegrad_times(args.n, args.repeats)))
        return
    load_before = _load()
    fused = fusegrad_times(args.n, args.repeats)
    native = None if args.no_native else _native_in_child(args.n, args.repeats)
    numpy_ms = numpy_times(args.n, args.repeats)
    torch_ms = None if args.no_torch else torch_times(args.n, args.repeats)
    rows: dict[str, dict[str, Timing | None]] = {
        name: {
            "fusegrad": fused[name][0],
            "native": native[name][0] if native else None,
            "numpy": numpy_ms[name],
            "torch": torch_ms[name] if torch_ms else None,
        }
        for name in NAMES
    }
    print(
        f"{args.n} float32 elements, median of {args.repeats} (ms); load {load_before} -> {_load()}"
    )
    print(_table(rows, {name: fused[name][1] for name in NAMES}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "load": _load(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
