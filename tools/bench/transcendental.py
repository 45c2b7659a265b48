"""Transcendentals over 4M float32 elements: fusegrad next to NumPy and PyTorch, in one run.

    .venv/bin/python tools/bench/transcendental.py [--n 4194304] [--repeats 9] [--no-native]
                                                   [--no-torch] [--json FILE]
    .venv/bin/python tools/bench/transcendental.py --ulp [--n 262144]
    .venv/bin/python tools/bench/transcendental.py --vs-old [--n 16777216] [--repeats 15]

``--ulp`` prints the Tensor-API accuracy table instead: each method in float32 against NumPy
in float64, max ulps over the sweeps (uniform over the function's range and log-uniform
magnitudes) and over the edge values (0, -0, +-inf, NaN, subnormals, the overflow thresholds),
per renderer (LLVM, C, the PYTHON emulator: one child process each, DEV selects it).

``--vs-old`` times the accurate Tensor methods against the formulations they replaced (exp as
2**(x log2 e), sigmoid as 1/(1 + 2**(-x log2 e)), tanh as 2 sigmoid(2x) - 1, cos as
sin(pi/2 - x)) on the default device: TinyJit replays, old and new interleaved in each round,
medians of wall and process CPU time (every thread) and the median of the per-round ratios.

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
        jitted: Any = TinyJit(functools.partial(_apply, name))
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


# -- the Tensor-API accuracy table (--ulp) ---------------------------------------------------------

ULP_TARGETS = {"exp": 2, "exp2": 2, "log": 2, "log2": 2, "sqrt": 2, "sin": 4, "cos": 4,
               "tanh": 8, "sigmoid": 8, "erf": 8, "expm1": 4, "log1p": 4, "sinh": 4,
               "cosh": 4, "atanh": 4, "asinh": 4, "acosh": 4, "asin": 4, "acos": 4, "atan": 4,
               "softplus": 4}  # fmt: skip
ULP_RANGES = {"exp": (-104, 89), "exp2": (-150, 128), "log": (0, 3e38), "log2": (0, 3e38),
              "sqrt": (0, 3e38), "sin": (-1e4, 1e4), "cos": (-1e4, 1e4), "tanh": (-20, 20),
              "sigmoid": (-104, 89), "erf": (-6, 6), "expm1": (-104, 89), "log1p": (0, 3e38),
              "sinh": (-89, 89), "cosh": (-89, 89), "atanh": (-1, 1), "asinh": (-3e38, 3e38),
              "acosh": (1, 3e38), "asin": (-1, 1), "acos": (-1, 1), "atan": (-3e38, 3e38),
              "softplus": (-120, 120)}  # fmt: skip
ULP_EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1e-38, -1e-38, 88.72283,
             88.72284, -87.33654, -103.97208, 127.99, -149.5, 1.5707964, 3.1415927, 0.625]  # fmt: skip
RENDERERS = {"LLVM": "CPU:LLVM", "C": "CPU:C", "PYTHON": "PYTHON"}


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in float32 ulps of ref (NaN = NaN and equal infinities are 0 ulp)."""
    got = got.astype(np.float64)
    r32 = ref.astype(np.float32)
    spacing = np.spacing(np.abs(r32)).astype(np.float64)
    spacing = np.where(spacing == 0, float(np.spacing(np.float32(0))), spacing)
    same = (np.isnan(got) & np.isnan(ref)) | (np.isinf(got) & np.isinf(r32) & (got == r32))
    err = np.where(same, 0.0, np.abs(got - ref) / spacing)
    return np.where(np.isnan(err), np.inf, err)


NUMPY_NAMES = {"atanh": "arctanh", "asinh": "arcsinh", "acosh": "arccosh", "asin": "arcsin",
               "acos": "arccos", "atan": "arctan"}  # fmt: skip


def _reference(name: str, d: np.ndarray) -> np.ndarray:
    if name == "sigmoid":
        e = np.exp(-np.abs(d))
        return np.asarray(np.where(d >= 0, 1 / (1 + e), e / (1 + e)))
    if name == "erf":
        return np.asarray(np.vectorize(math.erf)(d))
    if name == "softplus":
        return np.asarray(np.logaddexp(0, d))
    return np.asarray(getattr(np, NUMPY_NAMES.get(name, name))(d))


def ulp_errors(n: int) -> dict[str, tuple[float, float]]:
    """Per function: (max ulps over the sweeps, max ulps over the edge values) on the default
    device. Sweeps: n uniform points over the range and n log-uniform magnitudes."""
    from fusegrad import Tensor

    rs = np.random.default_rng(0)
    out = {}
    for name, (lo, hi) in ULP_RANGES.items():
        mags = np.exp(rs.uniform(-80, math.log(max(abs(lo), hi)), n))
        signs = np.sign(rs.uniform(-1, 1, n)) if lo < 0 else 1.0
        sweep = np.concatenate([rs.uniform(lo, hi, n), mags * signs]).astype(np.float32)
        edge = np.array(ULP_EDGES, np.float32)
        row = []
        for points in (sweep, edge):
            x = points[~(points < lo)] if lo >= 0 else points
            got = getattr(Tensor(x), name)().numpy()
            with np.errstate(all="ignore"):
                row.append(float(_ulps(got, _reference(name, x.astype(np.float64))).max()))
        out[name] = (row[0], row[1])
    return out


def ulp_table(n: int) -> str:
    """The Tensor-API accuracy table: float32 ulps per function and renderer (children)."""
    cols = {}
    for label, dev in RENDERERS.items():
        count = n if label != "PYTHON" else max(n // 64, 256)
        cmd = [sys.executable, __file__, "--child-ulp", "--n", str(count)]
        env = {**os.environ, "DEV": dev}
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
        cols[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    head = f"{'function':<10}{'target':>7}" + "".join(f"{c + ' sweep/edge':>22}" for c in cols)
    lines = [head]
    for name, target in ULP_TARGETS.items():
        cells = "".join(f"{cols[c][name][0]:>14.3g} /{cols[c][name][1]:>6.3g}" for c in cols)
        lines.append(f"{name:<10}{target:>7}{cells}")
    return "\n".join(lines)


# -- the accurate methods against the formulations they replaced (--vs-old) -----------------------

OLD_FORMS: dict[str, Callable[[Any], Any]] = {
    "exp": lambda t: (t * (1 / math.log(2))).exp2(),
    "sigmoid": lambda t: (1 + (t * (-1 / math.log(2))).exp2()).reciprocal(),
    "tanh": lambda t: 2.0 * OLD_FORMS["sigmoid"](2.0 * t) - 1.0,
    "cos": lambda t: (math.pi / 2 - t).sin(),
}


def _method(name: str, t: Any) -> Any:
    return getattr(t, name)()


def _realized(form: Callable[[Any], Any], t: Any) -> Any:
    return form(t).realize()


def _timed(fn: Callable[[], object]) -> Timing:
    start, start_cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - start) * 1e3, (time.process_time() - start_cpu) * 1e3


def vs_old(n: int, repeats: int) -> str:
    """Per function: medians (wall, CPU ms) of the old form and the Tensor method, interleaved
    round by round, and the median of the per-round new/old CPU-time ratios."""
    from fusegrad import Device, Tensor, TinyJit

    device = Device[Device.DEFAULT]
    x = Tensor(_inputs(n)["exp"]).realize()
    lines = [f"{'function':10s}{'old wall':>10s}{'new wall':>10s}{'old CPU':>10s}"
             f"{'new CPU':>10s}{'new/old CPU':>13s}"]  # fmt: skip
    for name, old in OLD_FORMS.items():
        forms: list[Callable[[Any], Any]] = [old, functools.partial(_method, name)]
        jits: list[Any] = [TinyJit(functools.partial(_realized, f)) for f in forms]

        def run(jit: Any) -> None:
            jit(x)
            device.synchronize()

        for jit in jits:  # capture and warm up
            for _ in range(3):
                run(jit)
        rounds: list[list[Timing]] = [[], []]
        for _ in range(repeats):
            for i, jit in enumerate(jits):
                rounds[i].append(_timed(functools.partial(run, jit)))
        med = [[statistics.median(t[k] for t in r) for k in (0, 1)] for r in rounds]
        ratio = statistics.median(b[1] / a[1] for a, b in zip(*rounds, strict=True))
        cells = f"{med[0][0]:10.2f}{med[1][0]:10.2f}{med[0][1]:10.2f}{med[1][1]:10.2f}"
        lines.append(f"{name:10s}{cells}{ratio:13.3f}")
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
    parser.add_argument("--ulp", action="store_true", help="only the Tensor-API ulp table")
    parser.add_argument("--child-ulp", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--vs-old", action="store_true", help="the accurate methods against the old forms"
    )
    args = parser.parse_args()
    if args.vs_old:
        n = args.n if args.n != 1 << 22 else 1 << 24
        print(f"{n} float32 elements, {args.repeats} interleaved rounds (ms); load {_load()}")
        print(vs_old(n, args.repeats))
        print(f"load {_load()}")
        return
    if args.child_ulp:
        print(json.dumps(ulp_errors(args.n)))
        return
    if args.ulp:
        n = args.n if args.n != 1 << 22 else 1 << 18
        print(f"float32 ulps against float64 NumPy ({n} uniform + {n} log-uniform points)")
        print(ulp_table(n))
        return
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
