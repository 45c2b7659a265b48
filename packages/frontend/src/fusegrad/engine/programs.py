"""Compiled kernels: kernel AST -> ProgramSpec (``to_program``) -> loaded device Program,
cached per (AST, renderer, ``BEAM``, ``NOOPT``) so a kernel compiles and loads once per
process (the compilers' disk cache makes the second process skip compiling as well).

Every path that launches kernels — plain realize, schedule-cache template hits, TinyJit
capture — gets them from ``get_kernel``, which hands ``to_program`` the device's BEAM timer:
under ``BEAM>=1`` a kernel's first compile searches its opts on the device (or finds them in
the on-disk BEAM cache, also in later processes).

Compiling shows a progress bar (tqdm, on stderr): with ``DEBUG>=1`` for every compile, and on
a terminal when a batch of compiles (``compiling``: a plan's kernels) runs longer than
``PROGRESS_DELAY_S``. Not on a non-terminal stderr (CI logs) unless ``DEBUG>=1`` asks for it;
kernels already loaded never touch it.

A plan's kernels not loaded yet go through ``preload`` first: each is lowered in the calling
thread while the kernel before it compiles in a small thread pool (``COMPILE_THREADS``
workers; 0: none), for compilers that release the GIL (``Compiler.threaded``: llvmlite's
LLVM). Then they load in order; a compile error is raised in the caller, the first in plan
order, as sequential compiling would. Under ``DEBUG>=1``, ``PROFILE`` or ``BEAM>=1`` every
kernel lowers, compiles and loads in turn (their output and records stay in that order)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from fusegrad.codegen import ProgramSpec, Renderer, host_cpu_count, to_program
from fusegrad.codegen.opt import BEAM, NOOPT
from fusegrad.runtime import Compiled, Program, host_span
from fusegrad.uop import DEBUG, ContextVar, UOp

#: the lowering's dtype-emulation setting, declared by codegen (the same object by name)
EMULATED_DTYPES = ContextVar("EMULATED_DTYPES", "")
#: the runtime's profiling setting (the same object by name; fusegrad.runtime.flags is private)
PROFILE = ContextVar("PROFILE", 0)

COMPILE_THREADS = ContextVar("COMPILE_THREADS", -1)
"""Worker threads compiling a plan's kernels while the caller lowers the next one: 0 compiles
each in turn in the caller; below 0 (the default), one per core."""


@dataclass(frozen=True, slots=True)
class Kernel:
    """A loaded kernel: its ProgramSpec, the device Program, the names of its Variables (in
    the order the launch takes their values), and — for kernels without Variables — the
    launch sizes and work estimates, worked out once."""

    spec: ProgramSpec
    program: Program
    var_names: tuple[str, ...]
    fixed: tuple[tuple[int, ...], tuple[int, ...] | None, int, int] | None

    def launch(self, values: dict[str, int]) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """(global size, local size) for these Variable values."""
        if self.fixed is not None:
            return self.fixed[0], self.fixed[1]
        return self.spec.launch_dims(values)

    def work(self, values: dict[str, int]) -> tuple[int, int]:
        """(ALU ops, bytes of memory touched) of one launch with these Variable values."""
        if self.fixed is not None:
            return self.fixed[2], self.fixed[3]
        est = self.spec.estimates.at(values)
        return int(est.ops), int(est.mem)


_KERNELS: dict[tuple[UOp, Renderer, tuple[object, ...]], Kernel] = {}


def program_knobs() -> tuple[object, ...]:
    """The settings besides the AST and the renderer that change a kernel's program:
    ``BEAM``, ``NOOPT`` (the opts) and ``EMULATED_DTYPES`` (the lowering)."""
    return (int(BEAM.value), bool(NOOPT.value), str(EMULATED_DTYPES.value or ""))


def raw_knobs() -> tuple[object, ...]:
    """The values behind ``program_knobs`` as set (not normalized): equal raw values mean
    equal knobs, so a check per launch compares these first."""
    return (BEAM.value, NOOPT.value, EMULATED_DTYPES.value)


RECIPES: dict[int, tuple[Any, Any]] = {}
"""id(schedule template) -> (the template, how it launches: ``launch.run_template``); the
launches hold loaded kernels, so ``clear_kernels`` clears this too."""


PROGRESS_DELAY_S = 1.0
"""Without ``DEBUG>=1``, a batch's bar appears (on a terminal) once compiling took this long."""
TICK_S = 0.5  # how often a terminal's batch bar redraws while a kernel compiles


class _Bars(threading.local):
    open: _Batch | None = None  # the batch this thread compiles, if any


_BARS = _Bars()


def _progress_bar(total: int, desc: str, batch: bool) -> Any:
    """A tqdm bar over ``total`` compiles, or None where none is shown: ``DEBUG>=1`` shows one
    at once; otherwise only a batch's, on a terminal, after ``PROGRESS_DELAY_S``."""
    if DEBUG >= 1:
        delay = 0.0
    elif batch and sys.stderr.isatty():
        delay = PROGRESS_DELAY_S
    else:
        return None
    from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]

    # under DEBUG every compile redraws (each takes milliseconds at least)
    return tqdm(total=total, desc=desc, unit="kernel", file=sys.stderr, leave=False, delay=delay,
                mininterval=0.0 if delay == 0 else 0.1)  # fmt: skip


class _Batch:
    """``compiling``'s context manager: opens the thread's batch bar, closes it on exit. On a
    terminal, the batch's first compile starts a thread that draws the bar once the batch ran
    ``PROGRESS_DELAY_S`` and redraws it every ``TICK_S`` (a slow kernel shows while it
    compiles, not only once it is done)."""

    __slots__ = ("bar", "start", "stop")

    def __init__(self, bar: Any) -> None:
        self.bar, self.start = bar, time.monotonic()
        self.stop: threading.Event | None = None

    def __enter__(self) -> None:
        _BARS.open = self

    def __exit__(self, *exc: object) -> None:
        _BARS.open = None
        if self.stop is not None:
            self.stop.set()
        self.bar.close()

    def compiles(self) -> None:
        """A compile of the batch starts."""
        if self.stop is None and sys.stderr.isatty():
            self.stop = threading.Event()
            tick = threading.Thread(target=self._tick, args=(self.stop,), daemon=True,
                                    name="fusegrad-compile-progress")  # fmt: skip
            tick.start()

    def _tick(self, stop: threading.Event) -> None:
        wait = max(0.0, self.start + float(self.bar.delay) - time.monotonic())
        while not stop.wait(wait):
            self.bar.refresh()  # a closed bar draws nothing
            wait = TICK_S


_NO_BATCH = nullcontext()


def compiling(total: int, desc: str = "compile") -> _Batch | nullcontext[None]:
    """A context manager: one progress bar over the next ``total`` kernel compiles of this
    thread (a plan's kernels: pass how many it may compile; kernels already loaded don't
    count, so the bar may end short). Nested batches join the outer bar; a shared no-op
    object where no bar is shown."""
    if total <= 0 or _BARS.open is not None:
        return _NO_BATCH
    bar = _progress_bar(total, desc, batch=True)
    return _NO_BATCH if bar is None else _Batch(bar)


def get_kernel(ast: UOp, device: Compiled) -> Kernel:
    """The loaded kernel of ``ast`` for ``device`` (compiled on first use; under ``BEAM>=1``
    with opts searched on ``device.timer``). Keyed on the renderer object (each device has
    its own, and selecting another compiler makes a new one) and the optimizer's knobs."""
    renderer = device.renderer
    key = (ast, renderer, program_knobs())
    hit = _KERNELS.get(key)
    if hit is not None:
        return hit
    batch = _BARS.open
    if batch is None:  # a compile outside a batch: its own bar, under DEBUG>=1 only
        own = _progress_bar(1, "compile", batch=False)
        if own is None:
            return _compile(key, ast, device, None)
        try:
            return _compile(key, ast, device, own)
        finally:
            own.close()
    batch.compiles()
    return _compile(key, ast, device, batch.bar)


def _compile(key: tuple[UOp, Renderer, tuple[object, ...]], ast: UOp, device: Compiled,
             bar: Any) -> Kernel:  # fmt: skip
    renderer = device.renderer
    beam = BEAM >= 1
    with host_span("lower"):
        spec = to_program(ast, renderer, timer=device.timer) if beam else to_program(ast, renderer)
    return _load(key, spec, device, bar, None)


def _load(key: tuple[UOp, Renderer, tuple[object, ...]], spec: ProgramSpec, device: Compiled,
          bar: Any, lib: Future[bytes] | None) -> Kernel:  # fmt: skip
    """Load ``spec`` (compiling it now, or taking the binary ``lib`` compiles) into the cache."""
    names = tuple(str(v.arg[0]) for v in spec.variables)
    fixed = None
    if not names:
        gs, ls = spec.launch_dims({})
        fixed = (gs, ls, int(spec.estimates.ops), int(spec.estimates.mem))
    if bar is not None:
        bar.set_postfix_str(f"{device.device} {spec.name}", refresh=DEBUG >= 1)
    with host_span("compile", kernel=spec.name, device=device.device):
        program = device.load(spec) if lib is None else device.load(spec, lib.result())
    kernel = _KERNELS[key] = Kernel(spec, program, names, fixed)
    if bar is not None:
        bar.update(1)
    return kernel


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def _compile_pool() -> ThreadPoolExecutor | None:
    """The compile threads (made on first use, again when ``COMPILE_THREADS`` changes), or
    None where it is 0."""
    n = int(COMPILE_THREADS.value)
    n = host_cpu_count() if n < 0 else n
    if n == 0:
        return None
    with _POOL_LOCK:
        if n not in _POOLS:
            for old in _POOLS.values():
                old.shutdown(wait=False)
            _POOLS.clear()
            _POOLS[n] = ThreadPoolExecutor(n, thread_name_prefix="fusegrad-compile")
        return _POOLS[n]


def _forget_pools() -> None:
    """In a forked child: the parent's compile threads aren't there (a pool would take work and
    never run it), so the child makes its own."""
    _POOLS.clear()


os.register_at_fork(after_in_child=_forget_pools)


SWITCH_S = 0.0005
"""The interpreter's thread switch interval while a plan lowers beside its compiles (then the
default returns): each llvmlite call of a compile thread gives the GIL up and waits to get it
back from the lowering thread, up to the interval (5 ms by default) each time."""
_SWITCHES = [0, 0.0]  # preloads running, the interval before the first
_SWITCH_LOCK = threading.Lock()


@contextmanager
def _short_switches() -> Iterator[None]:
    with _SWITCH_LOCK:
        if _SWITCHES[0] == 0:
            _SWITCHES[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_S, _SWITCHES[1]))
        _SWITCHES[0] += 1
    try:
        yield
    finally:
        with _SWITCH_LOCK:
            _SWITCHES[0] -= 1
            if _SWITCHES[0] == 0:
                sys.setswitchinterval(_SWITCHES[1])


def _as_text(src: str | bytes) -> str:
    return src if isinstance(src, str) else src.decode()


_Pending = tuple[tuple[UOp, Renderer, tuple[object, ...]], ProgramSpec, Compiled, "Future[bytes]"]


def preload(kernels: Iterable[tuple[UOp, Compiled]]) -> None:
    """Load the kernels of ``kernels`` (a plan's, in order) not loaded yet, lowering each in
    this thread while the compile pool compiles those before it; ``get_kernel`` then finds
    them. Kernels whose compiler isn't ``threaded`` are left to ``get_kernel`` (they compile
    in turn), as is everything under ``DEBUG>=1``, ``PROFILE``, ``BEAM>=1`` or
    ``COMPILE_THREADS=0``. Errors come in plan order: an error lowering (or listing) a
    kernel is raised after those before it loaded, or their compile error instead."""
    if DEBUG >= 1 or PROFILE.value or BEAM >= 1:
        return
    pending: list[_Pending] = []
    seen: set[tuple[UOp, Renderer, tuple[object, ...]]] = set()
    knobs = program_knobs()
    pool: ThreadPoolExecutor | None = None
    batch = _BARS.open
    with ExitStack() as switches:
        try:
            for ast, device in kernels:
                if not device.compiler.threaded:
                    continue
                key = (ast, device.renderer, knobs)
                if key in _KERNELS or key in seen:
                    continue
                seen.add(key)
                if pool is None:
                    if (pool := _compile_pool()) is None:
                        return
                    switches.enter_context(_short_switches())
                if batch is not None:
                    batch.compiles()  # a terminal's bar draws while this one lowers
                with host_span("lower"):
                    spec = to_program(ast, device.renderer)
                lib = pool.submit(device.compile, _as_text(spec.src))
                pending.append((key, spec, device, lib))
        except BaseException:
            _finish(pending)  # an earlier kernel's compile error comes first
            raise
        _finish(pending)


def _finish(pending: list[_Pending]) -> None:
    """Load the compiled kernels in order (the batch bar counts them)."""
    batch = _BARS.open
    for key, spec, device, lib in pending:
        _load(key, spec, device, None if batch is None else batch.bar, lib)


def clear_kernels() -> None:
    """Forget every loaded kernel (the next use compiles or hits the disk cache again). Waits
    for submitted work first: a worker still running a kernel whose code is freed crashes."""
    from fusegrad.engine.launch import synchronize

    synchronize()
    _KERNELS.clear()
    RECIPES.clear()
