"""Training steps: an MLP 784-512-512-10 at batch 256, fusegrad next to PyTorch and JAX in one
run.

    .venv/bin/python tools/bench/train.py [--quick] [--steps 20] [--opt SGD,Adam]
                                          [--no-torch] [--no-jax] [--json FILE]

For each optimizer (SGD with momentum 0.9, Adam) and each way of running the step
(``plain``: one realize per step; ``jit``: the step under ``TinyJit``), with the optimizer's
``fused=`` off and on, it prints the kernels one step launches (``GlobalCounters``), the
kernels of the optimizer update alone (``opt.step()`` after realizing the gradients, the
second time: the first creates the optimizer state), the first call (the row's first step:
scheduling, compiling and running it; a later row reuses the kernels an earlier one compiled,
so the first row's is the cold figure) and steps/s.

PyTorch (``torch.optim``, eager, its default thread count) and JAX (when installed: the step
in ``jax.numpy``, ``jax.value_and_grad`` and the same update written out, jitted; its first
call is trace + compile + first run) train the same model from the same initial weights
(drawn with NumPy from ``torch.nn.Linear``'s distribution); their losses over the first
``CHECK_STEPS`` steps must agree within ``CURVE_RTOL``, else the run exits with status 1.

Steps/s of every row come from the same rounds (``jaxref.rounds``: the step functions called
round-robin ``--steps`` times, each timed step after a pause and 50 ms of untimed steps):
1 / the median. Ratios are fusegrad's steps/s over the reference's (above 1: fusegrad is
faster). ``Tensor.training`` is on for the whole run. ``--quick``: 3 timed steps, a
784-64-64-10 MLP.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import itertools
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

BATCH = 256
LR = 1e-3
MOMENTUM = 0.9
#: Adam's defaults (torch.optim.Adam's)
BETAS, EPS = (0.9, 0.999), 1e-8
#: steps of PyTorch's and JAX's loss curves compared before timing
CHECK_STEPS = 5
#: their largest relative difference allowed (float32, summed in different orders)
CURVE_RTOL = 1e-4


@functools.cache
def _jaxref() -> Any:
    sys.path.insert(0, str(Path(__file__).parent))  # the sibling module tools/bench/jaxref.py
    return importlib.import_module("jaxref")


def _data(batch: int, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((batch, n_in)).astype(np.float32),
        rng.integers(0, 10, batch).astype(np.int32),
    )


def initial_weights(sizes: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each Linear's weight [out, in] and bias, uniform in +-1/sqrt(in) as ``torch.nn.Linear``
    draws them, from a seeded NumPy generator: PyTorch and JAX start from these."""
    rng = np.random.default_rng(1)
    out = []
    for n_in, n_out in itertools.pairwise(sizes):
        bound = 1 / math.sqrt(n_in)
        w = rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32)
        out.append((w, rng.uniform(-bound, bound, n_out).astype(np.float32)))
    return out


def _first(step: Callable[[], float]) -> tuple[float, float]:
    """Seconds of the first call of ``step`` (which waits for its result) and its loss."""
    start = time.perf_counter()
    loss = step()
    return time.perf_counter() - start, loss


def fusegrad_row(
    opt_name: str, sizes: tuple[int, ...], fused: bool, mode: str
) -> tuple[dict[str, Any], Callable[[], float]]:
    """Kernels per step, kernels of the update alone and the first call of one configuration,
    and its step (warmed up: captured for the jit)."""
    from fusegrad import TinyJit, nn
    from fusegrad.engine import GlobalCounters
    from fusegrad.tensor import Tensor

    Tensor.training = True
    xs, ys = _data(BATCH, sizes[0])
    Tensor.manual_seed(0)
    layers = [nn.Linear(a, b) for a, b in itertools.pairwise(sizes)]
    params: list[Tensor] = [t for lin in layers for t in (lin.weight, lin.bias) if t is not None]
    kw: dict[str, Any] = {"momentum": MOMENTUM} if opt_name == "SGD" else {}
    opt = getattr(nn.optim, opt_name)(params, lr=LR, fused=fused, **kw)
    x, y = Tensor(xs).realize(), Tensor(ys).realize()

    def forward() -> Tensor:
        h = x
        for i, lin in enumerate(layers):
            h = lin(h)
            h = h.relu() if i < len(layers) - 1 else h
        return h.sparse_categorical_crossentropy(y)

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
    first, _ = _first(lambda: run().item())
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
    for _ in range(3):  # warm up (and capture for the jit)
        run().item()
    GlobalCounters.reset()
    run().item()
    row = {"opt": opt_name, "fused": fused, "mode": mode, "first_s": first,
           "step_kernels": GlobalCounters.kernel_count, "update_kernels": update_kernels}  # fmt: skip
    return row, lambda: run().item()


def torch_step(opt_name: str, sizes: tuple[int, ...]) -> Callable[[], float] | None:
    """PyTorch's step for the same model and optimizer, returning the loss (None when torch
    is missing)."""
    try:
        import torch
    except ImportError:
        return None
    xs, ys = _data(BATCH, sizes[0])
    linears = [torch.nn.Linear(a, b) for a, b in itertools.pairwise(sizes)]
    with torch.no_grad():
        for lin, (w, b) in zip(linears, initial_weights(sizes), strict=True):
            lin.weight.copy_(torch.from_numpy(w))
            lin.bias.copy_(torch.from_numpy(b))
    mods: list[Any] = []
    for lin in linears:
        mods += [lin, torch.nn.ReLU()]
    model = torch.nn.Sequential(*mods[:-1])
    opt: Any = (
        torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
        if opt_name == "SGD"
        else torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, eps=EPS)
    )
    x, y = torch.from_numpy(xs), torch.from_numpy(ys.astype(np.int64))

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # type: ignore[no-untyped-call]
        opt.step()
        return float(loss.item())

    return step


# -- the JAX reference: torch.optim's updates written out -------------------------------------


def _sgd_init(params: Any) -> Any:
    jax, jnp = _jaxref().jax, _jaxref().jnp
    return jax.tree.map(jnp.zeros_like, params)


def _sgd(params: Any, grads: Any, bufs: Any) -> tuple[Any, Any]:
    """torch.optim.SGD with momentum (its buffer starts as the first gradient: 0.9 * 0 + g)."""
    jax = _jaxref().jax
    bufs = jax.tree.map(lambda b, g: MOMENTUM * b + g, bufs, grads)
    return jax.tree.map(lambda p, b: p - LR * b, params, bufs), bufs


def _adam_init(params: Any) -> Any:
    jax, jnp = _jaxref().jax, _jaxref().jnp
    # two trees: the state is donated to the next call, and one buffer can't be donated twice
    return (jnp.zeros((), jnp.float32), jax.tree.map(jnp.zeros_like, params),
            jax.tree.map(jnp.zeros_like, params))  # fmt: skip


def _adam(params: Any, grads: Any, state: Any) -> tuple[Any, Any]:
    """torch.optim.Adam: moments, bias corrections, ``p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) +
    eps)``."""
    jax, jnp = _jaxref().jax, _jaxref().jnp
    (b1, b2), (t, m, v) = BETAS, state
    t = t + 1
    m = jax.tree.map(lambda m, g: m + (1 - b1) * (g - m), m, grads)  # torch's lerp
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    step_size, bc2_sqrt = LR / (1 - b1**t), jnp.sqrt(1 - b2**t)

    def update(p: Any, m: Any, v: Any) -> Any:
        return p - step_size * m / (jnp.sqrt(v) / bc2_sqrt + EPS)

    return jax.tree.map(update, params, m, v), (t, m, v)


JAX_OPTIMIZERS = {"SGD": (_sgd_init, _sgd), "Adam": (_adam_init, _adam)}


def jax_step(opt_name: str, sizes: tuple[int, ...]) -> Callable[[], float] | None:
    """JAX's step (jitted, the state donated to the next call) for the same model and
    optimizer, returning the loss (None when JAX is missing)."""
    jax, jnp = _jaxref().jax, _jaxref().jnp
    if jax is None:
        return None
    init, update = JAX_OPTIMIZERS[opt_name]

    def loss_fn(params: Any, x: Any, y: Any) -> Any:
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            h = jax.nn.relu(h) if i < len(params) - 1 else h
        logp = jax.nn.log_softmax(h)
        return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()

    def train(state: Any, x: Any, y: Any) -> Any:
        params, opt_state = state
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return update(params, grads, opt_state), loss

    params = jax.device_put(initial_weights(sizes))
    xs, ys = _data(BATCH, sizes[0])
    x, y = jax.device_put(xs), jax.device_put(ys)
    jitted = jax.jit(train, donate_argnums=0)
    carry = [(params, init(params))]

    def step() -> float:
        carry[0], loss = jax.block_until_ready(jitted(carry[0], x, y))
        return float(loss)

    return step


def _curve_diff(a: list[float], b: list[float]) -> float:
    return max(abs(u - v) / max(abs(v), 1e-12) for u, v in zip(a, b, strict=True))


def bench_optimizer(
    name: str, sizes: tuple[int, ...], steps: int, args: Any
) -> list[dict[str, Any]]:
    """Every row of one optimizer, timed in the same rounds; prints them."""
    rows, fns = [], {}
    for fused, mode in itertools.product((False, True), ("plain", "jit")):
        row, fn = fusegrad_row(name, sizes, fused, mode)
        rows.append(row)
        fns[f"{fused} {mode}"] = fn
    refs: dict[str, dict[str, Any]] = {}
    makers = {"torch": (torch_step, args.no_torch, "eager"), "jax": (jax_step, args.no_jax, "jit")}
    for ref, (make, skip, mode) in makers.items():
        step = None if skip else make(name, sizes)
        if step is None:
            continue
        first, loss = _first(step)
        curve = [loss] + [step() for _ in range(CHECK_STEPS - 1)]
        refs[ref] = {"opt": name, "mode": ref, "how": mode, "first_s": first, "curve": curve}
        fns[ref] = step
    secs = _jaxref().rounds(fns, steps)
    rate = {k: 1.0 / statistics.median(v) for k, v in secs.items()}
    for r in rows:
        r["steps_per_s"] = rate[f"{r['fused']} {r['mode']}"]
        ratios = "".join(f" {r['steps_per_s'] / rate[ref]:>7.2f}x" for ref in refs)
        print(
            f"{r['opt']:<5} {r['fused']!s:<6} {r['mode']:<6} {r['step_kernels']:>12} "
            f"{r['update_kernels']:>7} {r['first_s']:>9.2f} {r['steps_per_s']:>9.1f}{ratios}"
        )
    for ref, r in refs.items():
        r["steps_per_s"] = rate[ref]
        print(f"{name:<5} {ref:<6} {r['how']:<6} {'':>12} {'':>7} {r['first_s']:>9.2f} "
              f"{r['steps_per_s']:>9.1f}")  # fmt: skip
    if {"torch", "jax"} <= refs.keys():
        diff = _curve_diff(refs["jax"]["curve"], refs["torch"]["curve"])
        refs["jax"]["curve_rel_diff"] = diff
        print(f"{name:<5} loss curve ({CHECK_STEPS} steps), jax vs torch: max rel diff {diff:.1e}")
    return rows + list(refs.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small MLP, 3 timed steps")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per row")
    ap.add_argument("--opt", default="SGD,Adam", help="comma-separated: SGD, Adam")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch reference")
    ap.add_argument("--no-jax", action="store_true", help="skip the JAX reference")
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
    jax_line = None if args.no_jax else _jaxref().configure()
    print(f"MLP {'-'.join(map(str, sizes))}, batch {BATCH}, {steps} timed steps (median)")
    if jax_line is not None:
        print(jax_line)
    elif not args.no_jax:
        print("jax: not installed (pip install jax jaxlib), no JAX rows")
    no_torch = args.no_torch or importlib.util.find_spec("torch") is None
    refs = [r for r, off in (("torch", no_torch), ("jax", jax_line is None)) if not off]
    print(f"{'opt':<5} {'fused':<6} {'mode':<6} {'kernels/step':>12} {'update':>7} "
          f"{'first (s)':>9} {'steps/s':>9}" + "".join(f" {'x ' + r:>8}" for r in refs))  # fmt: skip
    out = [row for name in names for row in bench_optimizer(name, sizes, steps, args)]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    worst = max((r.get("curve_rel_diff", 0.0) for r in out), default=0.0)
    if not math.isfinite(worst) or worst > CURVE_RTOL:
        print(f"FAIL: JAX's and PyTorch's loss curves differ by {worst:.1e} (> {CURVE_RTOL})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
