"""BEAM search over opt sequences, timed by a callback, with a persistent cache.

``beam_search(ast, renderer, width, timer)`` starts from the kernel with the heuristics' opts
(and without opts, when that is cheap to time) and, round by round, extends every sequence in the beam
by every action that applies (``actions``, TILE included on CPUs), lowers the new
candidates (in worker threads, with the timer's optional ``compile`` step there too),
times them one after another through ``timer`` and keeps the ``width`` fastest.
It stops when a round is not faster than the best so far by ``BEAM_MARGIN``; the two fastest
of the start and of every round, with the heuristics' sequence, are then timed again
round-robin (``CONFIRM_RUNS``) and the fastest of them wins, so one noisy measurement on a
busy machine does not decide; it must beat the heuristics by ``BEAM_MARGIN`` to replace
them. Candidates that fail to lower or compile, exceed ``BEAM_UPCAST_MAX`` lanes or
``BEAM_MAX_UOPS`` uops, or that the timer rejects (raises, returns inf) are skipped.

The result is stored in a ``DiskCache`` table keyed by the AST's structure, the renderer's
``target_key`` and capabilities, the host architecture and the width, so a second search for
the same kernel returns at once without timing anything. ``IGNORE_BEAM_CACHE=1`` skips the
lookup; ``CACHELEVEL=0`` turns the cache off.

Codegen never imports the runtime: the runtime (or a benchmark) supplies the ``Timer``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import platform
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fusegrad.codegen.lower import to_program
from fusegrad.codegen.opt.flags import (
    BEAM_MARGIN,
    BEAM_MAX_UOPS,
    BEAM_UPCAST_MAX,
    IGNORE_BEAM_CACHE,
)
from fusegrad.codegen.opt.kernel import (
    KernelOptError,
    Opt,
    OptOps,
    apply_opt,
    const_size,
    finish,
    kernel_axes,
    lane_count,
)
from fusegrad.codegen.renderer import DiskCache, ProgramSpec, Renderer, host_cpu_count
from fusegrad.uop import DEBUG, AxisType, UOp


class Timer(Protocol):
    """Runs a lowered kernel and returns its time in seconds (``math.inf``, or raising, to
    reject it). A timer may also have a ``compile(spec)`` method: BEAM then calls it for the
    candidates in worker threads before timing them one by one."""

    def __call__(self, spec: ProgramSpec) -> float:
        """Seconds one run of ``spec`` takes (the timer decides how to measure)."""
        ...


_UPCASTS = (0, 2, 3, 4, 6, 8, 16)  # 6: the 6-row register block of a matmul (heuristics)
_UNROLLS = (0, 2, 4, 8)
_LOCALS = (2, 4, 8, 16, 32)
_GROUPS = (4, 8, 16, 32)
_PADS = (6, 8, 12, 16, 32)  # 6, 12: a matmul's rows to 6-row blocks (times 2 cores)
_PARTIALS = (4, 8)
_TILES = (4, 16, 32, 64, 128)  # 4: small kernels (the fuzz corpus) get tiled too
_LOOP_TILES = (2, 4, 8, 16)  # blocks of a matmul's 6-row blocks kept in L2 (A's rows)


def _axis_actions(pos: int, kind: AxisType, renderer: Renderer) -> list[Opt]:
    if kind in (AxisType.LOOP, AxisType.GLOBAL):
        opts = [Opt(OptOps.UPCAST, pos, a) for a in _UPCASTS]
        opts += [Opt(OptOps.PADTO, pos, a) for a in _PADS]
        if renderer.has_local:
            opts += [Opt(OptOps.LOCAL, pos, a) for a in _LOCALS]
        if renderer.has_threads:
            opts += [Opt(OptOps.THREAD, pos, a) for a in range(2, renderer.max_threads + 1)]
        if not renderer.has_local and kind is AxisType.LOOP:
            opts += [Opt(OptOps.TILE, pos, a) for a in _LOOP_TILES]
        return opts
    if kind is AxisType.REDUCE:
        opts = [Opt(OptOps.UNROLL, pos, a) for a in _UNROLLS]
        opts += [Opt(OptOps.PARTIALS, pos, a) for a in _PARTIALS]
        if not renderer.has_local:
            opts += [Opt(OptOps.TILE, pos, a) for a in _TILES]
        if renderer.has_local and renderer.has_shared:
            opts += [Opt(op, pos, a) for op in (OptOps.GROUP, OptOps.GROUPTOP) for a in _GROUPS]
        return opts
    return []


def actions(ast: UOp, renderer: Renderer) -> list[Opt]:
    """Every opt BEAM tries next on ``ast`` (not all of them apply)."""
    axes = kernel_axes(ast)
    out: list[Opt] = []
    for pos, rng in enumerate(axes):
        out += _axis_actions(pos, rng.arg[1], renderer)
    outputs = [p for p, r in enumerate(axes) if r.arg[1] in (AxisType.LOOP, AxisType.GLOBAL)]
    out += [Opt(OptOps.SWAP, a, b) for a in outputs for b in outputs if a < b]
    if renderer.has_local:
        out.append(Opt(OptOps.NOLOCALS))
    if renderer.tensor_cores:
        out += [Opt(OptOps.TC, i) for i in range(len(renderer.tensor_cores))]
    return out


# -- the cache -------------------------------------------------------------------------------------

_cache = DiskCache("beam_opts")


def ast_key(ast: UOp) -> str:
    """A stable text form of the AST's structure (the SINK's KernelInfo left out)."""
    nodes = ast.replace(arg=None).toposort()
    pos = {u: i for i, u in enumerate(nodes)}
    lines = [f"{u.op.name} {u.dtype!r} {u.arg!r} {[pos[s] for s in u.src]}" for u in nodes]
    return "\n".join(lines)


@functools.cache
def codegen_fingerprint() -> str:
    """A hash of fusegrad.codegen's own source: opts chosen by an older lowering pipeline or
    optimizer are not reused after either changes."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_key(ast: UOp, renderer: Renderer, width: int) -> str:
    """The BEAM cache key: AST, renderer identity and capabilities, host arch, width, and the
    codegen source it was searched with."""
    caps = (
        sorted((d.name, w) for d, w in renderer.vector_widths.items()),
        renderer.has_local, renderer.has_shared, renderer.has_threads, renderer.max_threads,
        renderer.local_max, renderer.shared_max, renderer.tensor_cores,
    )  # fmt: skip
    text = f"{ast_key(ast)}\0{renderer.target_key}\0{caps!r}\0{platform.machine()}\0{width}"
    text += f"\0{codegen_fingerprint()}"
    return hashlib.sha256(text.encode()).hexdigest()


def cached_opts(ast: UOp, renderer: Renderer, width: int) -> list[Opt] | None:
    """The opts an earlier search stored for this kernel, if any (and allowed)."""
    if IGNORE_BEAM_CACHE:
        return None
    hit = _cache.get(cache_key(ast, renderer, width))
    if hit is None:
        return None
    return [Opt.from_tuple(t) for t in json.loads(hit.decode())]


def store_opts(ast: UOp, renderer: Renderer, width: int, opts: Sequence[Opt]) -> None:
    """Remember the search's result for this kernel."""
    data = json.dumps([o.to_tuple() for o in opts]).encode()
    _cache.put(cache_key(ast, renderer, width), data)


# -- the search ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """An opt sequence, the AST it gives (before ``finish``), and its time once measured."""

    opts: tuple[Opt, ...]
    ast: UOp
    seconds: float = math.inf


def _extend(c: Candidate, renderer: Renderer) -> list[Candidate]:
    out = []
    for opt in actions(c.ast, renderer):
        try:
            ast = apply_opt(c.ast, opt, renderer)
        except KernelOptError:
            continue
        if lane_count(ast) <= int(BEAM_UPCAST_MAX.value):
            out.append(Candidate((*c.opts, opt), ast))
    return out


def _lower(c: Candidate, renderer: Renderer, timer: Timer) -> ProgramSpec | None:
    try:
        spec = to_program(finish(c.ast, renderer, c.opts), renderer)
        spec = dataclasses.replace(spec, applied_opts=c.opts)
        if len(spec.uops) > int(BEAM_MAX_UOPS.value):
            return None
        compile_fn: Callable[[ProgramSpec], object] | None = getattr(timer, "compile", None)
        if compile_fn is not None:
            compile_fn(spec)
    except Exception as e:  # a candidate that fails to lower/compile is skipped
        if DEBUG >= 4:
            print(f"BEAM: skipped {list(c.opts)}: {type(e).__name__}: {e}")
        return None
    return spec


def _time(spec: ProgramSpec | None, timer: Timer) -> float:
    if spec is None:
        return math.inf
    try:
        return float(timer(spec))
    except Exception as e:  # a kernel that fails to run is skipped
        if DEBUG >= 4:
            print(f"BEAM: timing {spec.name} failed: {type(e).__name__}: {e}")
        return math.inf


class _Progress:
    """A one-line progress bar on stderr (only on a terminal with DEBUG>=1)."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self.on = DEBUG >= 1 and sys.stderr.isatty()

    def step(self) -> None:
        self.done += 1
        if self.on:
            bar = "#" * (30 * self.done // max(self.total, 1))
            sys.stderr.write(f"\r{self.label} [{bar:30s}] {self.done}/{self.total}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\n")


def _measure(
    cands: list[Candidate], renderer: Renderer, timer: Timer, label: str
) -> list[Candidate]:
    workers = max(1, min(host_cpu_count(), len(cands)))
    bar = _Progress(label, len(cands))
    with ThreadPoolExecutor(workers) as pool:
        specs = list(pool.map(lambda c: _lower(c, renderer, timer), cands))
    out = []
    for c, spec in zip(cands, specs, strict=True):
        out.append(Candidate(c.opts, c.ast, _time(spec, timer)))
        bar.step()
    bar.close()
    return sorted((c for c in out if math.isfinite(c.seconds)), key=lambda c: c.seconds)


#: rounds of timing every finalist (the two fastest of every round, and the heuristics'
#: sequence) again, round-robin, before BEAM picks one
CONFIRM_RUNS = 3


def _confirm(
    finalists: list[Candidate], renderer: Renderer, timer: Timer, baseline: Candidate
) -> Candidate:
    """The fastest of ``finalists`` (and ``baseline``: the heuristics' opts) after
    ``CONFIRM_RUNS`` more rounds of timing, round-robin (a noisy stretch of a busy machine
    slows every finalist alike), each keeping its fastest time. A candidate must beat the
    baseline by ``BEAM_MARGIN`` to be chosen over it."""
    unique = {c.ast: c for c in [baseline, *finalists]}
    specs = [(c, _lower(c, renderer, timer)) for c in unique.values()]
    times = [[c.seconds] for c, _ in specs]
    for _ in range(CONFIRM_RUNS):
        for (_, spec), seen in zip(specs, times, strict=True):
            seen.append(_time(spec, timer))
    out = [Candidate(c.opts, c.ast, min(t)) for (c, _), t in zip(specs, times, strict=True)]
    best, base = min(out, key=lambda c: c.seconds), out[0]
    if best.seconds > base.seconds * (1 - float(BEAM_MARGIN.value)):
        return base
    return best


def _unique(cands: list[Candidate], seen: set[UOp]) -> list[Candidate]:
    out = []
    for c in cands:
        if c.ast not in seen:
            seen.add(c.ast)
            out.append(c)
    return out


#: BEAM starts from the kernel without opts too only when it has at most this many loop
#: iterations: unoptimized, a 1024^3 matmul runs for seconds (25 s on a loaded machine), and so
#: do all its one-opt extensions, so a search from there takes hours
BASE_MAX_ITERATIONS = 1 << 24
_LANE_OPS = (OptOps.UPCAST, OptOps.UNROLL, OptOps.PARTIALS)


def _starts(ast: UOp, renderer: Renderer) -> list[Candidate]:
    """The first beam: the kernel with the prefixes of the hand-coded heuristics' opts that
    have all their lanes (UPCAST/UNROLL/PARTIALS: the search returns nothing slower than the
    heuristics, and the rounds can redo their later steps) and, for kernels small enough to
    time unoptimized (``BASE_MAX_ITERATIONS``) or without heuristic opts, the kernel without
    opts."""
    from fusegrad.codegen.opt.heuristics import hand_coded_optimizations

    opts = hand_coded_optimizations(ast, renderer)
    lanes = [i for i, o in enumerate(opts) if o.op in _LANE_OPS]
    first = lanes[-1] if lanes else 0  # prefixes without all the lanes run as slow as none
    seeded, cur = [], ast
    for i, opt in enumerate(opts):
        cur = apply_opt(cur, opt, renderer)
        if i >= first:
            seeded.append(Candidate(tuple(opts[: i + 1]), cur))
    iterations = math.prod(const_size(r) or 16 for r in kernel_axes(ast))
    if not seeded or iterations <= BASE_MAX_ITERATIONS:
        return [Candidate((), ast), *seeded]
    return seeded


def beam_search(
    ast: UOp, renderer: Renderer, width: int, timer: Timer, max_rounds: int = 8
) -> list[Opt]:
    """The fastest opt sequence found for ``ast`` by a beam of ``width`` (see the module
    docstring); cached on disk."""
    if width < 1:
        raise ValueError(f"beam_search: width must be >= 1, got {width}")
    if (hit := cached_opts(ast, renderer, width)) is not None:
        return hit
    start = _measure(_starts(ast, renderer), renderer, timer, "BEAM base")
    if not start:
        raise RuntimeError("beam_search: the kernel does not run with this timer")
    best, beam, seen = start[0], start, {ast}
    finalists = start[:2]
    for rnd in range(max_rounds):
        cands = _unique([n for c in beam for n in _extend(c, renderer)], seen)
        timed = _measure(cands, renderer, timer, f"BEAM round {rnd + 1}")
        finalists += timed[:2]
        if not timed or timed[0].seconds >= best.seconds * (1 - float(BEAM_MARGIN.value)):
            break
        best, beam = timed[0], timed[:width]
    baseline = max(start, key=lambda c: len(c.opts))  # the heuristics' whole sequence
    best = _confirm(finalists, renderer, timer, baseline)
    if DEBUG >= 2:
        print(f"BEAM: {list(best.opts)} in {best.seconds * 1e6:.1f} us")
    store_opts(ast, renderer, width, best.opts)
    return list(best.opts)
