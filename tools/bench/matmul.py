"""fp32 matmul on the CPU device: fusegrad's heuristics and BEAM next to NumPy (and PyTorch and
JAX, when installed), in GFLOP/s.

    .venv/bin/python tools/bench/matmul.py [--sizes 256 512 1024 2048] [--beam 2]
                                           [--beam-max 1024]
    .venv/bin/python tools/bench/matmul.py --sizes 1024 --beam 2 --tensor-only
    .venv/bin/python tools/bench/matmul.py --transformer [--rows 36 1024] [--beam 0]
    .venv/bin/python tools/bench/matmul.py --shapes 12x128x32x128t 1x1024x384x1536

Kernel ASTs are built by hand (what the scheduler emits for ``a @ b``). BEAM runs for sizes
up to ``--beam-max`` (a search at 2048 times hundreds of multi-second candidates); its result
is cached on disk, so a second run is quick (IGNORE_BEAM_CACHE=1 searches again).

For each ``--sizes`` entry the kernels the scheduler makes for ``a @ b`` are benchmarked too
when they differ from the hand-built one: from 512 on it reads B from panels and, at 1024
and 2048, A from a row-padded copy (``codegen/schedule/layout.py``); the copy kernels' time
is printed next to them (``packed`` rows: the matmul kernel alone; ``interleaved``: copies
and matmul, wall and one-thread CPU time). ``tensor`` rows time the whole ``(x @ y).realize()``
end to end, heuristics and ``BEAM`` set as a user sets it (``Context(BEAM=n)``: every kernel
searched on the CPU device's own timer on the first call, whose time is the search time),
next to NumPy, PyTorch and JAX (``jax.jit``, its first call printed: trace + compile + run;
``jaxref.py``) in the same rounds, as shares of each: the number a user sees.
``--tensor-only`` prints only those.

Every timed call follows a pause (``PAUSE``: OpenBLAS's threads spin for a while after
NumPy's call, and would share the cores with the next kernel) and 50 ms of untimed calls
(``WARM``: this VM's cores run slow for a while after idling).

``--transformer`` benchmarks MiniLM's matmul shapes instead: ``x[rows, 384] @ W[384, 1536]``
and ``x[rows, 1536] @ W[1536, 384]`` (with W stored as [K, N], and transposed as a Linear
layer keeps it: ``x @ W.T``), and 12-head attention ``q[n, 32] @ k.T`` and ``p[n, n] @ v``.
A shape ``BxMxKxN`` is a batched ``[B, M, K] @ [B, K, N]``; a trailing ``t`` stores B as
``[B, N, K]``.
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
from fusegrad.codegen import to_program
from fusegrad.codegen.opt import OptOps, hand_coded_optimizations
from fusegrad.codegen.schedule import get_kernel_graph
from fusegrad.runtime import Device
from fusegrad.uop import Ops, UOp, dtypes


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


def transformer_shapes(rows: list[int], seqs: list[int]) -> list[str]:
    """MiniLM's matmul shapes (see the module docstring) as ``BxMxKxN[t]`` specs."""
    out = []
    for m in rows:
        out += [f"1x{m}x384x1536", f"1x{m}x384x1536t", f"1x{m}x1536x384", f"1x{m}x1536x384t"]
    for n in seqs:
        out += [f"12x{n}x32x{n}t", f"12x{n}x{n}x32"]
    return out


def run_shape(k: object, shape: str, beam: int, repeats: int) -> None:
    """Benchmark one ``BxMxKxN[t]`` shape."""
    transposed = shape.endswith("t")
    batch, m, kk, n = (int(x) for x in shape.rstrip("t").split("x"))
    rs = np.random.default_rng(m * n)
    a = rs.random((batch, m, kk), np.float32)
    b = rs.random((batch, n, kk) if transposed else (batch, kk, n), np.float32)
    bt = b.transpose(0, 2, 1) if transposed else b
    arrays = [
        k.aligned(x) for x in (np.zeros(batch * m * n, np.float32), a.reshape(-1), b.reshape(-1))
    ]  # type: ignore[attr-defined]
    ast = k.batched_matmul_ast(batch, m, kk, n, transposed)  # type: ignore[attr-defined]
    reference = (lambda: a[0] @ bt[0]) if batch == 1 else (lambda: a @ bt)
    want_shape = (m, n) if batch == 1 else (batch, m, n)
    k.bench(  # type: ignore[attr-defined]
        f"mm {shape}", ast, arrays, lambda: reference().reshape(want_shape),
        2 * batch * m * n * kk, beam, repeats,
    )  # fmt: skip


def scheduled_matmul(n: int) -> tuple[list[UOp], list[list[UOp]], UOp, UOp]:
    """The scheduler's kernels for ``a @ b`` (n x n float32): ASTs, their buffers, and the
    BUFFERs of a and b."""
    a = UOp.new_buffer("CPU", n * n, dtypes.float32)
    b = UOp.new_buffer("CPU", n * n, dtypes.float32)
    x, y = a.reshape((n, n)), b.reshape((n, n))
    prod = x.reshape((n, 1, n)).expand((n, n, n)) * y.permute((1, 0)).reshape((1, n, n)).expand(
        (n, n, n)
    )
    kg = get_kernel_graph(UOp.sink(prod.r(Ops.ADD, (2,)).reshape((n, n))), cache=None)
    return [c.src[0] for c in kg.kernels], [list(c.src[1:]) for c in kg.kernels], a, b


def _resolve(buf: UOp, memory: dict[UOp, np.ndarray]) -> np.ndarray:
    if buf.op is Ops.BUFFER_VIEW:
        size, offset = buf.arg
        item = buf.dtype.itemsize
        raw = _resolve(buf.src[0], memory).view(np.uint8)[offset * item : (offset + size) * item]
        return raw.view(np.float32)
    if buf not in memory:
        zeros = np.zeros(buf.arg * buf.dtype.itemsize, np.uint8)
        memory[buf] = (
            _kernels().aligned(zeros).view(np.float32 if buf.dtype.itemsize == 4 else np.uint8)
        )
    return memory[buf]


def _runner(k: Any, ast: UOp, opts: list[Any], arrays: list[np.ndarray]) -> Callable[[], None]:
    renderer = Device["CPU"].renderer
    spec = to_program(k.with_opts(ast, opts), renderer)
    timer = k.CPUTimer(runs=1)
    prg = timer.load(spec)
    bufs = [k.HostBuffer(x) for x in arrays]
    gs, ls = spec.launch_dims({})
    return lambda: timer.dev.exec(prg, bufs, [], gs, ls, wait=True)


def _heuristics(ast: UOp, one_thread: bool) -> list[Any]:
    opts = hand_coded_optimizations(ast, Device["CPU"].renderer)
    return [o for o in opts if o.op is not OptOps.THREAD] if one_thread else opts


def interleaved(k: Any, n: int, a: np.ndarray, b: np.ndarray, repeats: int) -> None:
    """Unpacked vs packed (copy + matmul) vs NumPy, heuristics, all threads and one thread,
    run round-robin (load drifts alike for all); GFLOP/s by wall time, and for the one-thread
    rows per CPU-second of the calling thread (``time.thread_time``: what another process
    takes of the core doesn't count; the process's CPU time would count OpenBLAS's spinning
    idle threads)."""
    asts, bufs, abuf, bbuf = scheduled_matmul(n)
    if len(asts) == 1:
        return
    memory = {abuf: k.aligned(a.reshape(-1)), bbuf: k.aligned(b.reshape(-1))}
    plain_arrays = [
        k.aligned(x) for x in (np.zeros(n * n, np.float32), a.reshape(-1), b.reshape(-1))
    ]
    plain = k.matmul_ast(n)
    fns: dict[str, Callable[[], object]] = {"numpy": lambda: a @ b}
    try:
        from threadpoolctl import threadpool_limits

        def numpy_1t() -> object:
            with threadpool_limits(limits=1):
                return a @ b

        fns["numpy 1T"] = numpy_1t
    except ImportError:
        pass
    for one in (False, True):
        tag = " 1T" if one else ""
        fns[f"unpacked{tag}"] = _runner(k, plain, _heuristics(plain, one), plain_arrays)
        steps = [
            _runner(k, ast, _heuristics(ast, one), [_resolve(x, memory) for x in bl])
            for ast, bl in zip(asts, bufs, strict=True)
        ]
        fns[f"packed{tag}"] = lambda steps=steps: [s() for s in steps]
    flops = 2 * n**3
    print(f"interleaved {n} ({len(asts)} kernels packed): load average {k.load_average()}")
    wall = _rounds(fns, repeats, time.perf_counter)
    time.sleep(0.5)  # OpenBLAS's idle threads spin a while after a call: let them sleep
    one = {name: fn for name, fn in fns.items() if "1T" in name}
    cpu = _rounds(one, repeats, time.process_time)
    ref = "numpy 1T" if "numpy 1T" in one else "unpacked 1T"
    ref_cpu = flops / float(np.median(cpu[ref])) / 1e9
    for name in fns:
        g_wall = flops / float(np.median(wall[name])) / 1e9
        per_cpu = ""
        if name in cpu:
            g_cpu = flops / float(np.median(cpu[name])) / 1e9
            per_cpu = f"{g_cpu:7.1f} GFLOP/CPU-s  {g_cpu / ref_cpu:6.1%} of {ref}"
        print(f"interleaved {n:5d} {name:12s} {g_wall:7.1f} GFLOP/s wall  {per_cpu}")
    print(f"interleaved {n}: load average {k.load_average()}")


#: seconds between two functions' calls (untimed): OpenBLAS's worker threads spin for a while
#: after a call, and a fusegrad kernel started meanwhile shares its cores with them (a 1024
#: matmul measured 2x slower right after NumPy's)
PAUSE = 0.15
#: seconds of untimed calls after the pause: after the process idles a few tenths of a second
#: this VM's cores run the next ~40 ms of work up to 2x slower (a 512 matmul: 4-6 ms per call
#: for its first 10-20 calls after a 0.3-2 s sleep, 1.9 ms back to back; longer helper spins
#: did not change it), so NumPy and fusegrad are both timed warm
WARM = 0.05


def _rounds(
    fns: dict[str, Callable[[], object]], repeats: int, clock: Callable[[], float]
) -> dict[str, list[float]]:
    """``clock`` seconds of each of ``fns``, called round-robin ``repeats`` times, each timed
    call after a pause (``PAUSE``) and ``WARM`` seconds of untimed calls."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            time.sleep(PAUSE)
            warm = time.perf_counter() + WARM  # after the pause: warm as in a run of calls
            while True:
                fn()
                if time.perf_counter() >= warm:
                    break
            start = clock()
            fn()
            out[name].append(clock() - start)
    return out


def run_packed(k: object, n: int, a: np.ndarray, b: np.ndarray, beam: int, repeats: int) -> None:
    """Benchmark the scheduler's kernels for ``a @ b`` when it packs B (else nothing)."""
    asts, bufs, abuf, bbuf = scheduled_matmul(n)
    if len(asts) == 1:
        print(f"matmul {n}: the scheduler makes one kernel (no layout copy)")
        return
    memory = {abuf: k.aligned(a.reshape(-1)), bbuf: k.aligned(b.reshape(-1))}
    renderer = Device["CPU"].renderer
    copy_secs: list[float] = []
    for ast, bl in zip(asts[:-1], bufs[:-1], strict=True):
        spec = to_program(k.with_opts(ast, hand_coded_optimizations(ast, renderer)), renderer)  # type: ignore[attr-defined]
        secs = k.run_kernel(spec, [_resolve(x, memory) for x in bl], repeats)  # type: ignore[attr-defined]
        copy_secs.append(float(np.median(secs)))
    arrays = [_resolve(x, memory) for x in bufs[-1]]
    k.bench(f"packed {n}", asts[-1], arrays, lambda: a @ b, 2 * n**3, beam, repeats)  # type: ignore[attr-defined]
    np_secs = float(np.median(k.timings(lambda: a @ b, repeats)))  # type: ignore[attr-defined]
    copy_ms = sum(copy_secs) * 1e3
    print(
        f"packed {n}: layout copy {copy_ms:.2f} ms median = {copy_ms / 1e3 / np_secs:.1%} of "
        f"numpy's matmul ({np_secs * 1e3:.2f} ms)"
    )


def torch_matmul(a: np.ndarray, b: np.ndarray) -> Callable[[], object] | None:
    """PyTorch's ``a @ b`` on the CPU (None without torch)."""
    try:
        import torch
    except ImportError:
        return None
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    return lambda: ta @ tb


@functools.cache
def _jaxref() -> Any:
    sys.path.insert(0, str(Path(__file__).parent))  # the sibling module tools/bench/jaxref.py
    return importlib.import_module("jaxref")


def jax_matmul(a: np.ndarray, b: np.ndarray) -> Callable[[], object] | None:
    """JAX's jitted ``a @ b`` on the CPU, after its first call (None without JAX); prints the
    first call (trace + compile + run) and the result's largest error relative to NumPy's."""
    call = _jaxref().jit_call(lambda x, y: x @ y, a, b)
    if call is None:
        return None
    want = a @ b
    err = float(np.abs(call.out - want).max() / np.abs(want).max())
    print(f"tensor {a.shape[0]:5d} jax: first call {call.first:.3f}s, max rel err {err:.1e}")
    return call  # type: ignore[no-any-return]


def run_tensor(n: int, a: np.ndarray, b: np.ndarray, beam: int, repeats: int) -> None:
    """End to end: ``(x @ y).realize()`` on Tensors and waiting for it (the scheduler's
    kernels: layout copies and matmul, their launches), with the heuristics and with
    ``BEAM=beam`` (set the way a user sets it: the search runs on the first call, on the CPU
    device's own timer, ``IGNORE_BEAM_CACHE=1`` makes it search again), next to NumPy's,
    PyTorch's and JAX's (jitted) ``a @ b`` in the same rounds, with our GFLOP/s as a share of
    each. ``paired``: the median over rounds of NumPy's time / ours (each pair ran back to
    back, so load drifts cancel)."""
    from fusegrad import Tensor
    from fusegrad.codegen import clear_programs
    from fusegrad.engine import programs
    from fusegrad.engine.launch import synchronize
    from fusegrad.uop import Context

    x, y = Tensor(a).realize(), Tensor(b).realize()

    def ours() -> None:
        (x @ y).realize()
        synchronize()

    flops = 2 * n**3
    modes = {"heuristics": 0, **({f"BEAM={beam}": beam} if beam > 0 else {})}
    refs: dict[str, Callable[[], object]] = {"numpy": lambda: a @ b}
    if (torch_fn := torch_matmul(a, b)) is not None:
        refs["torch"] = torch_fn
    if (jax_fn := jax_matmul(a, b)) is not None:
        refs["jax"] = jax_fn
    print(f"tensor {n}: load average {_kernels().load_average()}")
    gflops: dict[str, float] = {}
    for name, width in modes.items():
        programs.clear_kernels()
        clear_programs()
        with Context(BEAM=width):
            start = time.perf_counter()
            ours()  # compiles (BEAM searches here, or finds its on-disk cache)
            first = time.perf_counter() - start
            secs = _rounds({**refs, name: ours}, repeats, time.perf_counter)
        gflops[name] = flops / float(np.median(secs[name])) / 1e9
        ref_g = {r: flops / float(np.median(secs[r])) / 1e9 for r in refs}
        paired = float(np.median(np.array(secs["numpy"]) / np.array(secs[name])))
        others = "  ".join(f"{r} {g:7.1f}" for r, g in ref_g.items())
        shares = ", ".join(f"{gflops[name] / g:6.1%} of {r}" for r, g in ref_g.items())
        print(
            f"tensor {n:5d} {name:11s} {gflops[name]:7.1f} GFLOP/s vs {others}: "
            f"{shares}, paired {paired:6.1%}  (first call {first:.2f}s)"
        )
    if len(gflops) == 2:
        print(f"tensor {n:5d} BEAM/heuristics {gflops[f'BEAM={beam}'] / gflops['heuristics']:.2f}x")
    print(f"tensor {n}: load average {_kernels().load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    parser.add_argument("--shapes", nargs="+", default=[])
    parser.add_argument("--transformer", action="store_true")
    parser.add_argument("--rows", type=int, nargs="+", default=[36, 1024])
    parser.add_argument("--seqs", type=int, nargs="+", default=[128])
    parser.add_argument("--beam", type=int, default=2)
    parser.add_argument("--beam-max", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-packed", action="store_true", help="skip the scheduler's kernels")
    parser.add_argument("--no-tensor", action="store_true", help="skip the end-to-end Tensor rows")
    parser.add_argument(
        "--tensor-only", action="store_true", help="only the end-to-end Tensor rows"
    )
    args = parser.parse_args()
    if (jax_line := _jaxref().configure()) is not None:
        print(jax_line)
    k = _kernels()
    shapes = list(args.shapes)
    if args.transformer:
        shapes += transformer_shapes(args.rows, args.seqs)
    if shapes:
        for shape in shapes:
            run_shape(k, shape, args.beam, args.repeats)
        return
    for n in args.sizes:
        rs = np.random.default_rng(n)
        a, b = rs.random((n, n), np.float32), rs.random((n, n), np.float32)
        if args.tensor_only:
            run_tensor(n, a, b, args.beam if n <= args.beam_max else 0, args.repeats)
            continue
        arrays = [k.aligned(x) for x in (np.zeros(n * n, np.float32), a.reshape(-1), b.reshape(-1))]  # type: ignore[attr-defined]
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
        if not args.no_packed:
            run_packed(k, n, a, b, beam, args.repeats)
            interleaved(k, n, a, b, args.repeats)
        if not args.no_tensor:
            run_tensor(n, a, b, beam, args.repeats)


if __name__ == "__main__":
    main()
