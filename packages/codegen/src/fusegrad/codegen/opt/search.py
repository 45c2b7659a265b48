"""BEAM search over opt sequences, timed on the device, with a persistent cache.

``beam_search(ast, renderer, width, timer)`` starts from the kernel with the heuristics' opts
(and without opts, when that is cheap to time) and, round by round, extends every sequence in
the beam by every action that applies (``actions``, TILE included on CPUs), builds the new
candidates (lowered, rendered and compiled in ``PARALLEL`` worker processes, see
``parallel.py``), times them one after another through ``timer`` (the device's: timings stay
on the device) and keeps the ``width`` fastest. It stops when a round is not faster than the
best so far by ``BEAM_MARGIN``; the two fastest of the start and of every round, with the
heuristics' sequence, are then timed again round-robin (``CONFIRM_RUNS``) and the fastest of
them wins, so one noisy measurement on a busy machine does not decide; it must beat the
heuristics by ``BEAM_MARGIN`` to replace them, so BEAM never ends slower than the heuristics.

Candidates that fail to lower or compile, exceed ``BEAM_UPCAST_MAX`` lanes or
``BEAM_MAX_UOPS`` uops, or that the timer rejects (raises, returns inf) are dropped and
counted as failed; those whose first run exceeds ``BEAM_TIMEOUT_S`` (default: ten times the
fastest so far) are dropped and counted as timed out (``SearchStats``). ``DEBUG>=1`` shows a
tqdm progress bar per search (round, best time, candidates left), ``DEBUG>=2`` the result.

The result is stored in a ``DiskCache`` table keyed by the AST's structure, the renderer's
``target_key`` and capabilities, the device the timer runs on (and its compiler), the host
architecture and the width, so a second search for the same kernel — in this process or a
later one — returns at once without timing anything. ``IGNORE_BEAM_CACHE=1`` skips the
lookup; ``CACHELEVEL=0`` turns the cache off.

Codegen never imports the runtime: the runtime (or a benchmark) supplies the ``Timer``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fusegrad.codegen.opt.flags import (
    BEAM_MARGIN,
    BEAM_TIMEOUT_S,
    BEAM_UPCAST_MAX,
    IGNORE_BEAM_CACHE,
)
from fusegrad.codegen.opt.kernel import (
    KernelOptError,
    Opt,
    OptOps,
    apply_opt,
    const_size,
    kernel_axes,
    lane_count,
)
from fusegrad.codegen.opt.parallel import Build, Job, build_all, knobs
from fusegrad.codegen.renderer import Compiler, DiskCache, ProgramSpec, Renderer
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import DEBUG, AxisType, UOp
from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]


class Timer(Protocol):
    """Times a kernel on its device (the runtime's ``Compiled.timer``; tests use fakes).

    ``timer(spec, lib, limit)`` loads ``spec`` (``lib``: its binary when BEAM compiled it
    already, else the timer compiles ``spec.src``), runs it on scratch buffers and returns the
    seconds of its fastest run; ``math.inf`` or raising rejects the kernel. A first run slower
    than ``limit`` seconds is a timeout: the timer may return that run's time at once.

    Optional attributes BEAM reads when present: ``device`` (a name for the device timed on,
    part of the BEAM cache key) and ``compiler`` (a ``Compiler`` whose class, built again in
    worker processes, compiles the candidates there: see ``PARALLEL``).
    """

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf
    ) -> float:
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


def cache_key(ast: UOp, renderer: Renderer, width: int, device: str = "") -> str:
    """The BEAM cache key: AST, renderer identity and capabilities, the device timed on (see
    ``timer_device``), host arch, width, and the codegen source it was searched with."""
    caps = (
        sorted((d.name, w) for d, w in renderer.vector_widths.items()),
        renderer.has_local, renderer.has_shared, renderer.has_threads, renderer.max_threads,
        renderer.local_max, renderer.shared_max, renderer.tensor_cores,
    )  # fmt: skip
    text = f"{ast_key(ast)}\0{renderer.target_key}\0{caps!r}\0{platform.machine()}\0{width}"
    text += f"\0{device}\0{codegen_fingerprint()}"
    return hashlib.sha256(text.encode()).hexdigest()


def timer_device(timer: Timer) -> str:
    """The device a timer runs on, for the cache key: its ``device`` name and its compiler's
    ``cache_key`` (CPU model and flags) when it has them."""
    compiler = getattr(timer, "compiler", None)
    return f"{getattr(timer, 'device', '')}:{getattr(compiler, 'cache_key', '')}"


def cached_opts(ast: UOp, renderer: Renderer, width: int, device: str = "") -> list[Opt] | None:
    """The opts an earlier search stored for this kernel, if any (and allowed)."""
    if IGNORE_BEAM_CACHE:
        return None
    hit = _cache.get(cache_key(ast, renderer, width, device))
    if hit is None:
        return None
    return [Opt.from_tuple(t) for t in json.loads(hit.decode())]


def store_opts(
    ast: UOp, renderer: Renderer, width: int, opts: Sequence[Opt], device: str = ""
) -> None:
    """Remember the search's result for this kernel."""
    data = json.dumps([o.to_tuple() for o in opts]).encode()
    _cache.put(cache_key(ast, renderer, width, device), data)


# -- the search ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """An opt sequence, the AST it gives (before ``finish``), and its time once measured."""

    opts: tuple[Opt, ...]
    ast: UOp
    seconds: float = math.inf


@dataclass(slots=True)
class SearchStats:
    """What a search did: candidates ``timed``, dropped as ``failed`` (did not build or run)
    or ``timed_out``, ``rounds`` run, and whether the cache answered (``cached``)."""

    timed: int = 0
    failed: int = 0
    timed_out: int = 0
    rounds: int = 0
    cached: bool = False


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


class _Search:
    """One search's state: what it builds with, the fastest time so far, the counts, the
    progress bar."""

    def __init__(self, root: UOp, renderer: Renderer, timer: Timer, stats: SearchStats) -> None:
        self.root, self.renderer, self.timer, self.stats = root, renderer, timer, stats
        self.best = math.inf
        self.name = root.arg.name if isinstance(root.arg, KernelInfo) else "kernel"
        self.bar = tqdm(total=0, desc=f"BEAM {self.name}", disable=DEBUG < 1, file=sys.stderr)

    def limit(self) -> float:
        """A first run slower than this is a timeout (``BEAM_TIMEOUT_S``)."""
        given = float(BEAM_TIMEOUT_S.value)
        return given if given > 0 else 10 * self.best

    def build(self, cands: Sequence[Candidate]) -> list[Build]:
        """Lower, render and compile ``cands`` (in worker processes, see ``parallel``)."""
        compiler = getattr(self.timer, "compiler", None)
        cls = type(compiler) if isinstance(compiler, Compiler) else None
        key = compiler.cache_key if isinstance(compiler, Compiler) else ""
        flags = knobs()
        jobs = [Job(self.root, c.ast, c.opts, self.renderer, cls, key, flags) for c in cands]
        return build_all(jobs)

    def drop(self, opts: Sequence[Opt], why: str, timed_out: bool = False) -> float:
        """Count a dropped candidate; its time is inf."""
        if timed_out:
            self.stats.timed_out += 1
        else:
            self.stats.failed += 1
        if DEBUG >= 4:
            print(f"BEAM: dropped {list(opts)}: {why}")
        return math.inf

    def time(self, built: Build, opts: Sequence[Opt], limit: float | None = None) -> float:
        """Seconds of one candidate on the device (inf: dropped and counted)."""
        if built.spec is None:
            return self.drop(opts, built.error)
        limit = self.limit() if limit is None else limit
        try:
            seconds = float(self.timer(built.spec, built.lib, limit))
        except Exception as e:  # a kernel that fails to run is dropped
            return self.drop(opts, f"{type(e).__name__}: {e}")
        if not math.isfinite(seconds):
            return self.drop(opts, "the timer rejected it")
        if seconds > limit:
            return self.drop(opts, f"{seconds:.3g} s > {limit:.3g} s", timed_out=True)
        self.stats.timed += 1
        self.best = min(self.best, seconds)
        return seconds

    def measure(self, cands: list[Candidate], label: str) -> list[Candidate]:
        """``cands`` built and timed, the ones that ran sorted fastest first."""
        self.bar.set_description_str(f"BEAM {self.name} {label}")
        self.bar.total += len(cands)
        builds = self.build(cands)
        out = []
        for i, (c, built) in enumerate(zip(cands, builds, strict=True)):
            out.append(Candidate(c.opts, c.ast, self.time(built, c.opts)))
            self.bar.set_postfix_str(f"best {self.best * 1e6:.1f} us, {len(cands) - i - 1} left")
            self.bar.update(1)
        return sorted((c for c in out if math.isfinite(c.seconds)), key=lambda c: c.seconds)

    def confirm(self, finalists: list[Candidate], baseline: Candidate) -> Candidate:
        """The fastest of ``finalists`` (and ``baseline``: the heuristics' opts) after
        ``CONFIRM_RUNS`` more rounds of timing, round-robin (a noisy stretch of a busy
        machine slows every finalist alike), each keeping its fastest time. A candidate must
        beat the baseline by ``BEAM_MARGIN`` to be chosen over it."""
        unique = list({c.ast: c for c in [baseline, *finalists]}.values())
        builds = self.build(unique)
        times = [[c.seconds] for c in unique]
        for _ in range(CONFIRM_RUNS):
            for c, built, seen in zip(unique, builds, times, strict=True):
                seen.append(self.time(built, c.opts, math.inf))
        out = [Candidate(c.opts, c.ast, min(t)) for c, t in zip(unique, times, strict=True)]
        best, base = min(out, key=lambda c: c.seconds), out[0]
        if best.seconds > base.seconds * (1 - float(BEAM_MARGIN.value)):
            return base
        return best


#: rounds of timing every finalist (the two fastest of every round, and the heuristics'
#: sequence) again, round-robin, before BEAM picks one
CONFIRM_RUNS = 3


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


def _starts(ast: UOp, renderer: Renderer) -> tuple[list[Candidate], tuple[Opt, ...]]:
    """The first beam: the kernel with the prefixes of the hand-coded heuristics' opts that
    have all their lanes (UPCAST/UNROLL/PARTIALS: the search returns nothing slower than the
    heuristics, and the rounds can redo their later steps), the kernel with just TC for each
    of the renderer's tensor cores that takes it (a big kernel, not started from without
    opts, could otherwise reach TC only if the heuristics chose it) and, for kernels small
    enough to time unoptimized (``BASE_MAX_ITERATIONS``) or without heuristic opts, the
    kernel without opts; and the heuristics' opts."""
    from fusegrad.codegen.opt.heuristics import hand_coded_optimizations

    opts = hand_coded_optimizations(ast, renderer)
    lanes = [i for i, o in enumerate(opts) if o.op in _LANE_OPS]
    first = lanes[-1] if lanes else 0  # prefixes without all the lanes run as slow as none
    seeded, cur = [], ast
    for i, opt in enumerate(opts):
        cur = apply_opt(cur, opt, renderer)
        if i >= first:
            seeded.append(Candidate(tuple(opts[: i + 1]), cur))
    for core in range(len(renderer.tensor_cores)):
        tc = Opt(OptOps.TC, core)
        try:
            tiled = apply_opt(ast, tc, renderer)
        except KernelOptError:
            continue
        if all(c.opts != (tc,) for c in seeded):
            seeded.append(Candidate((tc,), tiled))
    iterations = math.prod(const_size(r) or 16 for r in kernel_axes(ast))
    if not opts or iterations <= BASE_MAX_ITERATIONS:
        return [Candidate((), ast), *seeded], tuple(opts)
    return seeded, tuple(opts)


def _rounds(
    search: _Search,
    start: list[Candidate],
    width: int,
    max_rounds: int,
    heuristic: tuple[Opt, ...] = (),
) -> Candidate:
    """Extend the beam round by round from ``start``; the confirmed winner (it must beat
    the heuristics' sequence ``heuristic`` by the margin)."""
    best, beam, seen = start[0], start, {search.root, *(c.ast for c in start)}
    finalists = start[:2]
    for rnd in range(max_rounds):
        cands = _unique([n for c in beam for n in _extend(c, search.renderer)], seen)
        search.stats.rounds = rnd + 1
        timed = search.measure(cands, f"round {rnd + 1}")
        finalists += timed[:2]
        if not timed or timed[0].seconds >= best.seconds * (1 - float(BEAM_MARGIN.value)):
            break
        best, beam = timed[0], timed[:width]
    # the heuristics' whole sequence (the longest start when it did not run)
    whole = [c for c in start if c.opts == heuristic]
    baseline = whole[0] if whole else max(start, key=lambda c: len(c.opts))
    search.bar.set_description_str(f"BEAM {search.name} confirm")
    return search.confirm(finalists, baseline)


def beam_search(
    ast: UOp,
    renderer: Renderer,
    width: int,
    timer: Timer,
    max_rounds: int = 8,
    stats: SearchStats | None = None,
) -> list[Opt]:
    """The fastest opt sequence found for ``ast`` by a beam of ``width`` (see the module
    docstring); cached on disk. ``stats``, when given, is filled with what the search did."""
    if width < 1:
        raise ValueError(f"beam_search: width must be >= 1, got {width}")
    stats = SearchStats() if stats is None else stats
    device = timer_device(timer)
    if (hit := cached_opts(ast, renderer, width, device)) is not None:
        stats.cached = True
        return hit
    search = _Search(ast, renderer, timer, stats)
    try:
        starts, heuristic = _starts(ast, renderer)
        start = search.measure(starts, "start")
        if not start:
            raise RuntimeError("beam_search: the kernel does not run with this timer")
        best = _rounds(search, start, width, max_rounds, heuristic)
    finally:
        search.bar.close()
    if DEBUG >= 2:
        print(
            f"BEAM {search.name}: {list(best.opts)} in {best.seconds * 1e6:.1f} us "
            f"({stats.timed} timed, {stats.failed} failed, {stats.timed_out} timed out)"
        )
    store_opts(ast, renderer, width, best.opts, device)
    return list(best.opts)
