"""JAX (jit) references for the benchmarks: a workload written in ``jax.numpy``, jitted, timed
next to fusegrad, NumPy and PyTorch in the same run.

JAX is optional (``pip install jax jaxlib``: CPU wheels; neither the tests nor ``tools/dev``
install it): without it ``jax`` and ``jnp`` are None and ``jit_call`` returns None, so a
script prints its other rows. A script loads this file by path (as it loads ``kernels.py``)::

    jaxref = _jaxref()
    print(jaxref.configure())             # CPU, before the first JAX computation
    call = jaxref.jit_call(lambda a, b: a @ b, a, b)   # None without JAX
    call.first                            # seconds: trace + compile + first run
    call()                                # one run, waiting for it (block_until_ready)
    secs = jaxref.rounds({"numpy": lambda: a @ b, "jax": call, "ours": ours}, repeats)

Threads: XLA's CPU client runs its intra-op pool with one thread per core the process may
run on (its size is read from the CPU affinity; no flag sets it), as PyTorch's default is one
per physical core: both use this machine's 2 cores. Run under ``taskset`` to give it fewer.

Timing convention (``rounds``, as ``matmul.py`` and ``reduce.py``): the functions run
round-robin ``repeats`` times (load drifts alike for all), each timed call after a pause
(BLAS and PyTorch threads spin a while after a call) and ``WARM`` seconds of untimed calls
(this VM's cores run slow for a while after idling); read medians, and ratios of the same
rounds.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the benchmarks print their other rows
    jax = None
    jnp = None

#: seconds of sleep before each timed call (OpenBLAS/PyTorch threads spin after a call)
PAUSE = 0.1
#: seconds of untimed calls before each timed call (the VM's cores run slow after idling)
WARM = 0.05


def configure() -> str | None:
    """Put JAX on the CPU (float32, no accelerator plugin); a line saying so, or None without
    JAX. Call it before the first JAX computation: the platform is fixed then."""
    if jax is None:
        return None
    jax.config.update("jax_platforms", "cpu")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    device = jax.devices()[0]
    return f"jax {jax.__version__} (jit) on {device.platform}, {cores} threads (one per core)"


def first_call(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """Seconds of ``fn(*args)`` waiting for its result (``block_until_ready``), and the
    result: for a fresh ``jax.jit`` function, trace + compile + first run."""
    assert jax is not None, "first_call needs JAX"
    start = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    return time.perf_counter() - start, out


@dataclasses.dataclass
class JaxCall:
    """A jitted function bound to its arguments (on the device): calling it runs it once and
    waits for the result, like a timed call of the other rows."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    #: seconds of the first call: trace + compile + first run
    first: float
    #: the first call's result as NumPy arrays (a pytree of them), for checking
    out: Any

    def __call__(self) -> Any:
        assert jax is not None
        return jax.block_until_ready(self.fn(*self.args))


def jit_call(fn: Callable[..., Any], *arrays: Any) -> JaxCall | None:
    """``jax.jit(fn)`` bound to ``arrays`` (NumPy arrays or pytrees of them, put on the device
    once, as ``torch.from_numpy`` wraps them outside the timed call) and called once; None
    without JAX."""
    if jax is None:
        return None
    args = tuple(jax.device_put(a) for a in arrays)
    jitted = jax.jit(fn)
    first, out = first_call(jitted, *args)
    return JaxCall(jitted, args, first, jax.tree.map(np.asarray, out))


def rounds(
    fns: dict[str, Callable[[], object]],
    repeats: int,
    clock: Callable[[], float] = time.perf_counter,
    pause: float = PAUSE,
    warm: float = WARM,
) -> dict[str, list[float]]:
    """``clock`` seconds of each of ``fns`` (each waits for its result), called round-robin
    ``repeats`` times, each timed call after ``pause`` seconds of sleep and ``warm`` seconds of
    untimed calls (at least one)."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            time.sleep(pause)
            until = time.perf_counter() + warm
            fn()
            while time.perf_counter() < until:
                fn()
            start = clock()
            fn()
            out[name].append(clock() - start)
    return out
