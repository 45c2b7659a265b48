"""3x3 convolution (NCHW, fp32) on the CPU device: NumPy vs heuristics vs BEAM, in GFLOP/s.

    .venv/bin/python tools/bench/conv.py [--shape 8 32 32 66] [--beam 2] [--tensor-only]
    .venv/bin/python tools/bench/conv.py --cases [3x3_pad1 ...] [--batch 32] [--beam 0] [--direct]

``--shape B CIN COUT HW``: batch, input/output channels, input height=width (valid conv, the
output is HW-2 square). The NumPy reference is an im2col matmul (BLAS), PyTorch's is
``torch.nn.functional.conv2d``. The ``kernel`` rows time a hand-built kernel AST; the
``tensor`` rows time ``x.conv2d(w).realize()`` end to end, with the heuristics and with
``BEAM`` set as a user sets it (``Context(BEAM=n)``: the first call searches every kernel on
the CPU device's own timer; its time is the search time).

``--cases`` runs the issue's table instead (``CASES``: 3x3 pad 1, stride 2, 1x1, depthwise,
and the 3x3's input + weight gradients) through Tensor code next to PyTorch in interleaved
rounds; no cases named: all of them. ``--direct`` adds the direct form (``WINO=0``, no
Winograd) to the same rounds, so the Winograd rule's gain is a same-run ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


#: the issue's table (#25): name -> (cin, cout, hw, kernel, stride, padding, groups), NCHW
#: float32 on ``--batch`` images; ``_bwd`` cases time the input and weight gradients
CASES: dict[str, tuple[int, int, int, int, int, int, int]] = {
    "3x3_pad1": (64, 64, 56, 3, 1, 1, 1),
    "3x3_stride2": (64, 128, 56, 3, 2, 1, 1),
    "1x1": (64, 256, 56, 1, 1, 0, 1),
    "depthwise": (64, 64, 56, 3, 1, 1, 64),
    "3x3_pad1_bwd": (64, 64, 56, 3, 1, 1, 1),
}


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds of each function per round, the functions called round-robin (each timed call
    after a pause and one untimed call)."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            time.sleep(0.05)
            fn()
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def run_case(k: Any, name: str, batch: int, beam: int, repeats: int, direct: bool = False) -> None:
    """One case of ``CASES`` through Tensor code (heuristics, and BEAM when ``beam``) next to
    PyTorch in the same rounds: GFLOP/s of the medians, and ``paired``: the median over
    rounds of PyTorch's time / ours (cancels load drifts between rounds)."""
    import torch
    from fusegrad import Tensor
    from fusegrad.engine.launch import synchronize

    cin, cout, hw, ks, stride, pad, groups = CASES[name]
    backward = name.endswith("_bwd")
    rs = np.random.default_rng(0)
    x = rs.standard_normal((batch, cin, hw, hw)).astype(np.float32)
    w = (rs.standard_normal((cout, cin // groups, ks, ks)) / ks).astype(np.float32)
    oh = (hw + 2 * pad - ks) // stride + 1
    flops = 2 * batch * cout * oh * oh * (cin // groups) * ks * ks * (2 if backward else 1)
    px, pw = torch.from_numpy(x), torch.from_numpy(w)

    def conv(a: Any, b: Any, f: Any) -> Any:
        return f(a, b, stride=stride, padding=pad, groups=groups)

    if backward:
        gy = torch.from_numpy(rs.standard_normal((batch, cout, oh, oh)).astype(np.float32))

        def theirs() -> object:
            ta, tb = px.clone().requires_grad_(), pw.clone().requires_grad_()
            return torch.autograd.grad(conv(ta, tb, torch.nn.functional.conv2d), (ta, tb), gy)
    else:

        def theirs() -> object:
            return conv(px, pw, torch.nn.functional.conv2d)

    tx, tw = Tensor(x).realize(), Tensor(w).realize()
    tgy = Tensor(gy.numpy()).realize() if backward else None

    def ours() -> object:
        if tgy is None:
            out = conv(tx, tw, Tensor.conv2d).realize()
        else:
            a, b = tx.detach().requires_grad_(), tw.detach().requires_grad_()
            (conv(a, b, Tensor.conv2d) * tgy).sum().backward()
            assert a.grad is not None and b.grad is not None
            out = Tensor.realize(a.grad, b.grad)
        synchronize()
        return out

    label = f"conv {name} {batch}x{cin}->{cout} {hw}^2"
    _report(label, flops, ours, theirs, backward, beam, repeats, direct)


def _report(
    label: str,
    flops: int,
    ours: Callable[[], Any],
    theirs: Callable[[], Any],
    backward: bool,
    beam: int,
    repeats: int,
    direct: bool = False,
) -> None:
    """Print one case's rows (heuristics, BEAM, and with ``direct`` the direct form: WINO=0)
    with the error of the forward output; all modes and PyTorch timed in the same rounds."""
    from fusegrad.uop import Context

    modes: dict[str, dict[str, int]] = {"heuristics": {"BEAM": 0}}
    if beam > 0:
        modes[f"BEAM={beam}"] = {"BEAM": beam}
    if direct:
        modes["WINO=0"] = {"BEAM": 0, "WINO": 0}

    def under(knobs: dict[str, int]) -> Callable[[], Any]:
        def run() -> Any:
            with Context(**knobs):
                return ours()

        return run

    fns: dict[str, Callable[[], Any]] = {"torch": theirs}
    errors: dict[str, float] = {}
    for mode, knobs in modes.items():
        fns[mode] = under(knobs)
        got = fns[mode]()  # the first call compiles (and searches, with BEAM)
        errors[mode] = (
            float("nan") if backward else float(np.abs(got.numpy() - theirs().numpy()).max())
        )
    secs = _interleaved(fns, repeats)
    med = {m: float(np.median(v)) for m, v in secs.items()}
    for mode in modes:
        paired = float(np.median(np.array(secs["torch"]) / np.array(secs[mode])))
        print(
            f"{label:32s} {mode:10s} {flops / med[mode] / 1e9:7.1f} GFLOP/s  torch "
            f"{flops / med['torch'] / 1e9:7.1f}  x{med['torch'] / med[mode]:5.2f} torch  "
            f"paired x{paired:5.2f}  max err {errors[mode]:.1e}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[8, 32, 32, 66])
    parser.add_argument("--beam", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tensor-only", action="store_true", help="only the Tensor rows")
    parser.add_argument(
        "--cases", nargs="*", choices=list(CASES),
        help="the issue's table instead of --shape: these cases through Tensor code vs PyTorch",
    )  # fmt: skip
    parser.add_argument("--batch", type=int, default=32, help="images per --cases case")
    parser.add_argument(
        "--direct", action="store_true",
        help="--cases: also time the direct form (WINO=0: no Winograd) in the same rounds",
    )  # fmt: skip
    args = parser.parse_args()
    if args.cases is not None:
        k = _kernels()
        print(f"load average {k.load_average()}  batch {args.batch}")  # type: ignore[attr-defined]
        for name in args.cases or list(CASES):
            run_case(k, name, args.batch, args.beam, args.repeats, args.direct)
        print(f"load average {k.load_average()}")  # type: ignore[attr-defined]
        return
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
