"""Building BEAM's candidates: lower, render and compile, here or in worker processes.

A ``Job`` is one candidate: the kernel AST with its opts applied, the opts, the renderer, the
compiler class to build it with (None: the timer compiles), and the knobs in force (the
``Context`` of the searching process). ``build(job)`` returns a ``Build`` (the ProgramSpec and
binary, or why it failed); ``build_all(jobs)`` runs them in ``PARALLEL`` worker processes.

Workers are plain Python processes running ``fusegrad.codegen.opt.worker``, fed pickled jobs
over a pipe, not ``multiprocessing``: they never import the user's ``__main__`` (a script without
an ``if __name__ == "__main__"`` guard would run again in every worker), and nothing is
forked from a process whose device threads may hold locks. They start once per process (importing
fusegrad.codegen and the renderer, not the frontend) and stay until it exits; a pool whose
workers keep dying is given up on (builds then run in the searching process). Timing stays in the searching
process, on the device.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from fusegrad.codegen.lower.pipeline import lower, render
from fusegrad.codegen.opt.flags import BEAM_MAX_UOPS, PARALLEL
from fusegrad.codegen.opt.kernel import Opt, finish
from fusegrad.codegen.renderer import Compiler, ProgramSpec, Renderer, host_cpu_count
from fusegrad.uop import Context, ContextVar, UOp


@dataclass(frozen=True)
class Job:
    """One candidate to build (see the module docstring). ``root`` is the kernel AST the
    search started from (the program's name and buffers come from it)."""

    root: UOp
    ast: UOp
    opts: tuple[Opt, ...]
    renderer: Renderer
    compiler: type[Compiler] | None = None
    compiler_key: str = ""
    flags: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Build:
    """A built candidate: its ProgramSpec and binary (None: the timer compiles), or the
    reason it could not be built in ``error``."""

    spec: ProgramSpec | None
    lib: bytes | None = None
    error: str = ""


def knobs() -> dict[str, Any]:
    """Every declared knob's value in this process (what a worker sets before building)."""
    registry: dict[str, ContextVar] = ContextVar._registry
    return {k: v.value for k, v in registry.items() if isinstance(v.value, int | float | str)}


_compilers: dict[type[Compiler], Compiler] = {}


def _compile(job: Job, src: str | bytes) -> bytes | None:
    if job.compiler is None:
        return None
    compiler = _compilers.get(job.compiler)
    if compiler is None:
        compiler = _compilers[job.compiler] = job.compiler()
    if compiler.cache_key != job.compiler_key:
        return None  # built with other arguments than the searcher's: the timer compiles
    return compiler.compile(src if isinstance(src, str) else src.decode())


def build(job: Job) -> Build:
    """Lower, render and (with ``job.compiler``) compile one candidate; failures are
    returned, never raised."""
    try:
        spec = render(job.root, lower(finish(job.ast, job.renderer, job.opts), job.renderer))
        spec = dataclasses.replace(spec, applied_opts=job.opts)
        if len(spec.uops) > int(BEAM_MAX_UOPS.value):
            return Build(None, None, f"{len(spec.uops)} uops > BEAM_MAX_UOPS")
        return Build(spec, _compile(job, spec.src))
    except Exception as e:  # a candidate that fails to lower or compile is dropped
        return Build(None, None, f"{type(e).__name__}: {e}")


def build_in_worker(job: Job) -> Build:
    """``build`` with the searching process's knobs (in a worker process)."""
    known = {k: v for k, v in job.flags.items() if k in ContextVar._registry}
    with Context(**{**known, "DEBUG": 0, "VIZ": 0, "TRACK_MATCH_STATS": 0}):
        return build(job)


# -- worker processes ------------------------------------------------------------------------------


def send(stream: IO[bytes], obj: object) -> None:
    """Write one pickled message (8-byte length, then the pickle)."""
    send_bytes(stream, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def send_bytes(stream: IO[bytes], data: bytes) -> None:
    """Write one message already pickled."""
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """Read one message written by ``send`` (EOFError when the other side is gone)."""
    return pickle.loads(receive_bytes(stream))


def receive_bytes(stream: IO[bytes]) -> bytes:
    """Read one message's pickle, not unpickled (EOFError when the other side is gone)."""
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other side of the pipe closed")
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other side of the pipe closed mid-message")
    return data


# A worker needs fusegrad.codegen and the renderer's package only: it makes ``fusegrad`` a bare
# namespace over the parent's folders instead of running fusegrad/__init__.py, which imports
# the whole frontend (a second of start-up per worker)
_BOOTSTRAP = (
    "import sys, types; root = types.ModuleType('fusegrad'); root.__path__ = sys.argv[1:]; "
    "sys.modules['fusegrad'] = root; from fusegrad.codegen.opt.worker import main; main()"
)


def worker_command() -> list[str]:
    """The command line of a worker process."""
    return [sys.executable, "-c", _BOOTSTRAP, *sys.modules["fusegrad"].__path__]


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        cmd = worker_command()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        with contextlib.suppress(OSError):  # a worker that died at once: ``alive`` says so
            send(self.stdin, list(sys.path))  # test helpers' and scripts' folders import there

    def run(self, job: bytes) -> Build | None:
        """The build of one pickled job (None: the worker could not unpickle it)."""
        send_bytes(self.stdin, job)
        result: Build | None = receive(self.stdout)
        return result

    @property
    def alive(self) -> bool:
        """The process still runs."""
        return self.proc.poll() is None

    def close(self) -> None:
        """Close the pipes (the worker then exits) and wait for it."""
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):  # a dead worker's pipe
                stream.close()
        self.proc.wait()


class WorkerPool:
    """``size`` worker processes; ``map`` hands each the next job as soon as it is free."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.workers = [_Worker() for _ in range(size)]
        self.deaths = 0

    @property
    def broken(self) -> bool:
        """Workers keep dying (fusegrad does not import in a fresh process, say): BEAM then
        builds in the searching process."""
        return self.deaths > 2 * self.size

    def map(self, jobs: Sequence[Job]) -> list[Build]:
        """The builds of ``jobs``, in order (a job that does not pickle, or that a worker
        died on, is built here; a dead worker is replaced on the next call)."""
        kept = []
        for w in self.workers:
            if w.alive:
                kept.append(w)
                continue
            w.close()  # one alive test per worker: one that dies between two is not leaked
            self.deaths += 1
            kept.append(_Worker())
        self.workers = kept
        out: list[Build | None] = [None] * len(jobs)
        todo = iter(range(len(jobs)))
        lock = threading.Lock()

        def drive(worker: _Worker) -> None:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                try:
                    data = pickle.dumps(jobs[i], protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # e.g. a renderer holding a lock: built here
                    out[i] = build(jobs[i])
                    continue
                try:
                    out[i] = worker.run(data) or build(jobs[i])
                except (EOFError, OSError):
                    out[i] = build(jobs[i])
                    return  # this worker is unusable (replaced next time); the others go on

        threads = [threading.Thread(target=drive, args=(w,)) for w in self.workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return [b if b is not None else build(jobs[i]) for i, b in enumerate(out)]

    def close(self) -> None:
        """Stop the workers."""
        for w in self.workers:
            w.close()
        self.workers = []


_pool: list[WorkerPool] = []


def workers() -> int:
    """How many worker processes ``PARALLEL`` asks for (1: build in this process)."""
    n = int(PARALLEL.value)
    return host_cpu_count() if n < 0 else max(n, 1)


def _shared_pool(size: int) -> WorkerPool:
    if _pool and (_pool[0].size == size or _pool[0].broken):
        return _pool[0]
    close_pool()
    _pool.append(WorkerPool(size))
    return _pool[0]


def close_pool() -> None:
    """Stop the worker processes (started again by the next parallel build)."""
    while _pool:
        _pool.pop().close()


atexit.register(close_pool)


def build_all(jobs: Sequence[Job]) -> list[Build]:
    """``build`` for every job: in ``workers()`` processes, or here when that is 1 or there
    is one job."""
    size = min(workers(), len(jobs))
    pool = _shared_pool(workers()) if size > 1 else None
    if pool is None or pool.broken:
        return [build(j) for j in jobs]
    return pool.map(jobs)
