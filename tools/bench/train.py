"""Training steps: an MLP 784-512-512-10 at batch 256, fusegrad next to PyTorch in one run.

    .venv/bin/python tools/bench/train.py [--quick] [--steps 20] [--opt SGD,Adam]
                                          [--no-torch] [--json FILE]

For each optimizer (SGD with momentum 0.9, Adam) and each way of running the step
(``plain``: one realize per step; ``jit``: the step under ``TinyJit``), with the optimizer's
``fused=`` off and on, it prints the kernels one step launches (``GlobalCounters``), the
kernels of the optimizer update alone (``opt.step()`` after realizing the gradients, the
second time: the first creates the optimizer state) and steps/s (the median over
``--steps`` timed steps, after two warm-up steps).
PyTorch (``torch.optim``, its default thread count) runs the same model and update.
``Tensor.training`` is on for the whole run. ``--quick``: 3 timed steps, a 784-64-64-10 MLP.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BATCH = 256


def _data(batch: int, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((batch, n_in)).astype(np.float32),
        rng.integers(0, 10, batch).astype(np.int32),
    )


def _timed(step: Callable[[], Any], steps: int) -> float:
    """Steps/s: the median of ``steps`` timed calls of ``step`` (which waits for its result)."""
    step()
    step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1.0 / statistics.median(times)


def fusegrad_row(
    opt_name: str, sizes: tuple[int, ...], steps: int, fused: bool, mode: str
) -> dict[str, Any]:
    """Kernels per step, kernels of the update alone and steps/s of one configuration."""
    from fusegrad import TinyJit, nn
    from fusegrad.engine import GlobalCounters
    from fusegrad.tensor import Tensor

    Tensor.training = True
    xs, ys = _data(BATCH, sizes[0])
    Tensor.manual_seed(0)
    layers = [nn.Linear(a, b) for a, b in itertools.pairwise(sizes)]
    params: list[Tensor] = [t for lin in layers for t in (lin.weight, lin.bias) if t is not None]
    kw: dict[str, Any] = {"momentum": 0.9} if opt_name == "SGD" else {}
    opt = getattr(nn.optim, opt_name)(params, lr=1e-3, fused=fused, **kw)
    x, y = Tensor(xs).realize(), Tensor(ys).realize()

    def forward() -> Tensor:
        h = x
        for i, lin in enumerate(layers):
            h = lin(h)
            h = h.relu() if i < len(layers) - 1 else h
        return h.sparse_categorical_crossentropy(y)

    # the update alone (its second time: the first creates the state): realize the
    # gradients first, then count opt.step()
    update_kernels = 0
    for _ in range(2):
        opt.zero_grad()
        loss = forward()
        loss.backward()
        Tensor.realize(loss, *[g for g in (p.grad for p in params) if g is not None])
        GlobalCounters.reset()
        opt.step()
        update_kernels = GlobalCounters.kernel_count

    def train_step() -> Tensor:
        opt.zero_grad()
        loss = forward()
        loss.backward()
        # the loss (of the weights before the update) with the gradients, then the update
        # (realized after it, the loss would be computed again from the new weights)
        Tensor.realize(loss, *[g for g in (p.grad for p in params) if g is not None])
        opt.step()
        return loss

    run = TinyJit(train_step) if mode == "jit" else train_step
    for _ in range(3):  # warm up (and capture for the jit)
        run().item()
    GlobalCounters.reset()
    run().item()
    step_kernels = GlobalCounters.kernel_count
    rate = _timed(lambda: run().item(), steps)
    return {
        "opt": opt_name,
        "fused": fused,
        "mode": mode,
        "step_kernels": step_kernels,
        "update_kernels": update_kernels,
        "steps_per_s": rate,
    }


def torch_rate(opt_name: str, sizes: tuple[int, ...], steps: int) -> float | None:
    """PyTorch's steps/s for the same model and optimizer (None when torch is missing)."""
    try:
        import torch
    except ImportError:
        return None
    xs, ys = _data(BATCH, sizes[0])
    torch.manual_seed(0)
    mods: list[Any] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        mods.append(torch.nn.Linear(a, b))
        if i < len(sizes) - 2:
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods)
    opt: Any = (
        torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        if opt_name == "SGD"
        else torch.optim.Adam(model.parameters(), lr=1e-3)
    )
    x, y = torch.from_numpy(xs), torch.from_numpy(ys.astype(np.int64))

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # type: ignore[no-untyped-call]
        opt.step()
        return float(loss.item())

    return _timed(step, steps)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small MLP, 3 timed steps")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per row")
    ap.add_argument("--opt", default="SGD,Adam", help="comma-separated: SGD, Adam")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch reference")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    sizes = (784, 64, 64, 10) if args.quick else (784, 512, 512, 10)
    steps = 3 if args.quick else args.steps
    if steps < 1:
        ap.error("--steps must be at least 1")
    names = [n.strip() for n in args.opt.split(",") if n.strip()]
    for n in names:
        if n not in {"SGD", "Adam"}:
            ap.error(f"--opt: unknown optimizer {n!r} (SGD, Adam)")
    print(f"MLP {'-'.join(map(str, sizes))}, batch {BATCH}, {steps} timed steps (median)")
    print(f"{'opt':<5} {'fused':<6} {'mode':<6} {'kernels/step':>12} {'update':>7} {'steps/s':>9}")
    out = []
    for name in names:
        rows = [
            fusegrad_row(name, sizes, steps, fused, mode)
            for fused in (False, True)
            for mode in ("plain", "jit")
        ]
        ref = None if args.no_torch else torch_rate(name, sizes, steps)
        for r in rows:
            print(
                f"{r['opt']:<5} {r['fused']!s:<6} {r['mode']:<6} {r['step_kernels']:>12} "
                f"{r['update_kernels']:>7} {r['steps_per_s']:>9.1f}"
            )
        if ref is not None:
            print(f"{name:<5} {'torch':<6} {'eager':<6} {'':>12} {'':>7} {ref:>9.1f}")
        out.extend(rows)
        if ref is not None:
            out.append({"opt": name, "mode": "torch", "steps_per_s": ref})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
