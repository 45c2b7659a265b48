"""Benchmark of the CPU compilers: median time to render and compile one kernel, with a cold
and a warm compile cache, for each renderer available here (LLVM; C with gcc and clang).

* ``render``: linear program -> source text;
* ``cold``: ``compile_cached`` on an empty on-disk cache — the real compile plus storing the
  object (each repeat gets a fresh, empty cache file); wall time and CPU time (this process
  plus the C compiler's), which is what wall time would be on an idle machine;
* ``warm``: ``compile_cached`` of the same source again — a cache lookup, no compiler.

``--lower`` adds the lowering pipeline: ``to_program`` (optimize, lower, render) of the kernels
the scheduler makes for small frontend workloads and, when the weights package is installed,
for MiniLM's first call: CPU time per kernel, the first lowering of each kernel (cold: nothing
cached yet) and the best of the repeats (warm: the simplifier's per-node caches are filled), and
how much of it the optimizer (``optimize``: choosing and applying the opts) takes.

Kernels: ``elementwise`` is a typical fused elementwise kernel (``relu(a * b + c)`` over
float32.vec(4) lanes in a loop, the shape the optimizer gives), the others are conformance
corpus kernels of growing size. The compiler objects (LLVM's target machine) are built once
before timing, and each renderer compiles one warm-up kernel first. Targets for LLVM's
elementwise kernel: cold < 20 ms, warm < 1 ms. Run with ``tools/dev bench compile``;
``--repeats N`` changes the repeat count.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from fusegrad.codegen import Compiler, DiskCache, Renderer
from fusegrad.renderer import CCompiler, CRenderer, LLVMCompiler, LLVMRenderer
from fusegrad.renderer.corpus import (
    Builder,
    alu,
    alu_case,
    c32,
    cast_case,
    end,
    index,
    load,
    reduce_case,
    rng,
    store,
)
from fusegrad.uop import Ops, UOp, dtypes

if TYPE_CHECKING:
    from fusegrad.tensor import Tensor


def elementwise(width: int = 4, n: int = 4096) -> list[UOp]:
    """out = max(a * b + c, 0) over ``n`` float32s, ``width`` lanes per iteration."""
    p = Builder()
    vdt = dtypes.float32.vec(width)
    out, a, b, c = (p.buffer(dtypes.float32, [0.0] * n) for _ in range(4))
    i = p.add(rng(n // width))
    at = alu(Ops.MUL, i, c32(width))
    x = alu(
        Ops.ADD,
        alu(Ops.MUL, load(index(a, at), vdt), load(index(b, at), vdt)),
        load(index(c, at), vdt),
    )
    zero = UOp.const((0.0,) * width if width > 1 else 0.0, vdt)
    p.add(store(index(out, at), alu(Ops.MAX, x, zero)), end(i))
    return p.uops


def kernels(renderer: Renderer) -> dict[str, list[UOp]]:
    """The benchmark kernels, by name."""
    out = {
        "elementwise f32x4": elementwise(),
        "reduce-sum f32": list(reduce_case(dtypes.float32, Ops.ADD).uops),
        "cast-from-f16 (13 outputs)": list(cast_case(renderer, dtypes.float16).uops),
    }
    alu32 = alu_case(renderer, dtypes.float32)
    if alu32 is not None:
        out["alu f32 (17 ops)"] = list(alu32.uops)
    return out


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the C compiler)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def median_ms(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median (wall, CPU) time of ``fn`` in milliseconds. CPU time is what an idle machine's
    wall time would be; on a shared, loaded machine wall time waits for a core too."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), _cpu_seconds()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(_cpu_seconds() - start_cpu)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def bench_renderer(
    label: str, renderer: Renderer, compiler: Compiler, repeats: int, folder: Path
) -> None:
    """Print one line per kernel: render, cold and warm compile times."""
    compiler.compile(str(renderer.render(elementwise(8), "warmup")))
    for name, uops in kernels(renderer).items():
        src = str(renderer.render(uops, "bench"))
        render, _ = median_ms(functools.partial(renderer.render, uops, "bench"), repeats)
        fresh = iter(range(10**6))

        def cold(src: str = src, fresh: Iterator[int] = fresh) -> None:
            compiler.disk = DiskCache("compile", folder / f"cold{next(fresh)}.db")
            compiler.compile_cached(src)

        cold_ms, cold_cpu = median_ms(cold, repeats)
        compiler.disk = DiskCache("compile", folder / "warm.db")
        compiler.compile_cached(src)
        warm_ms, _ = median_ms(functools.partial(compiler.compile_cached, src), repeats * 10)
        print(
            f"{label:8s} {name:28s} render {render:6.2f} ms  cold {cold_ms:7.2f} ms "
            f"(cpu {cold_cpu:7.2f} ms)  warm {warm_ms:6.3f} ms  [{len(src.splitlines())} lines]"
        )


def _workloads() -> dict[str, Callable[[], list[UOp]]]:
    """Kernel ASTs of small frontend programs, by name."""
    import numpy as np
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.tensor import Tensor

    rs = np.random.default_rng(0)

    def asts(out: Tensor) -> list[UOp]:
        kg = get_kernel_graph(UOp.sink(out.uop), cache=None)
        return [k.src[0] for k in kg.kernels]

    def t(*shape: int) -> Tensor:
        return Tensor(rs.standard_normal(shape).astype(np.float32))

    ids = Tensor(rs.integers(0, 1000, (4, 16)).astype(np.int32))
    return {
        "matmul 256": lambda: asts(t(256, 256) @ t(256, 256)),
        "softmax 64x512": lambda: asts(t(64, 512).softmax(-1)),
        "layernorm 64x384": lambda: asts(t(64, 384).layernorm()),
        "conv2d 8x16x32x32": lambda: asts(t(8, 16, 32, 32).conv2d(t(32, 16, 3, 3)).relu()),
        "conv2d winograd 8x64x28x28": lambda: _winograd_asts(t(8, 64, 28, 28), t(64, 64, 3, 3)),
        "embedding 1000x64": lambda: asts(t(1000, 64)[ids]),
        "minilm first call": _minilm_asts,
    }


def _winograd_asts(x: Tensor, w: Tensor) -> list[UOp]:
    """The kernels of a 3x3 conv2d with padding 1 as Winograd (``WINO=1``)."""
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.uop import Context

    with Context(WINO=1):
        out = x.conv2d(w, padding=1)
    kg = get_kernel_graph(UOp.sink(out.uop), cache=None)
    return [k.src[0] for k in kg.kernels]


def _minilm_asts() -> list[UOp]:
    """MiniLM's kernels for 4 short sentences (empty without the weights package)."""
    try:
        from fusegrad.examples import embed
    except ImportError:
        return []
    try:
        model, tok = embed.load_model(), embed.load_tokenizer()
    except (FileNotFoundError, ImportError):
        return []
    import numpy as np
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.tensor import Tensor

    sentences = ["A man is playing a guitar.", "Someone plays an instrument on stage."]
    sentences += ["The stock market fell sharply today.", "Shares dropped as investors worried."]
    ids, mask = embed.tokenize(tok, sentences)
    out = model(Tensor(ids), Tensor(np.asarray(mask)))
    kg = get_kernel_graph(UOp.sink(out.uop), cache=None)
    return list(dict.fromkeys(k.src[0] for k in kg.kernels))


def bench_lowering(repeats: int) -> None:
    """Print per workload: kernels, median cold and warm ``to_program`` ms per kernel."""
    from fusegrad.codegen import program
    from fusegrad.codegen.opt import optimize
    from fusegrad.runtime import Device

    renderer = Device["CPU"].renderer
    for name, make in _workloads().items():
        kernels = make()
        if not kernels:
            print(f"lower    {name:28s} (skipped: not available here)")
            continue
        cold = []
        for ast in kernels:
            start = _cpu_seconds()
            program.to_program(ast, renderer)
            cold.append(_cpu_seconds() - start)
        warm = [float("inf")] * len(kernels)
        for _ in range(repeats):
            program.clear_programs()
            for i, ast in enumerate(kernels):
                start = _cpu_seconds()
                program.to_program(ast, renderer)
                warm[i] = min(warm[i], _cpu_seconds() - start)
        opts = 0.0
        for ast in kernels:
            start = _cpu_seconds()
            optimize(ast, renderer)
            opts += _cpu_seconds() - start
        print(
            f"lower    {name:28s} {len(kernels):3d} kernels  cold median "
            f"{statistics.median(cold) * 1e3:7.2f} ms (total {sum(cold) * 1e3:7.1f} ms)  warm median "
            f"{statistics.median(warm) * 1e3:7.2f} ms  [optimize {opts * 1e3:6.1f} ms in all]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--lower", action="store_true", help="also time the lowering pipeline")
    args = parser.parse_args()
    targets: list[tuple[str, Renderer, Callable[[], Compiler]]] = [
        ("LLVM", LLVMRenderer(fast_math=False), LLVMCompiler)
    ]
    for cc in ("gcc", "clang"):
        if shutil.which(cc):
            targets.append((f"C-{cc}", CRenderer(), lambda cc=cc: CCompiler(cc)))  # type: ignore[misc]
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(
        f"median of {args.repeats} repeats (warm: {args.repeats * 10}) per kernel; "
        f"load average {load} on {os.cpu_count()} cpus"
    )
    if args.lower:
        bench_lowering(max(1, args.repeats // 3))
    with tempfile.TemporaryDirectory(prefix="fusegrad-bench-") as tmp:
        for label, renderer, make in targets:
            bench_renderer(label, renderer, make(), args.repeats, Path(tmp))


if __name__ == "__main__":
    main()
