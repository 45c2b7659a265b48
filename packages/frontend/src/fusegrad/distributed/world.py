"""The MPI world: starting it, who this process is, and what happens when one rank fails.

mpi4py is imported on first use, so ``import fusegrad.distributed`` works without it and only
a call that needs MPI raises (an ImportError saying what to install). ``init()`` reads the
world MPI started (``mpiexec -n N python train.py``), picks this rank's device and installs
an exception hook: an uncaught exception on any rank prints that rank's traceback and aborts
the whole job (``MPI.COMM_WORLD.Abort``) instead of leaving the other ranks waiting forever.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any

from fusegrad.uop import ContextVar

_CPU_THREADS = ContextVar("CPU_THREADS", 0)
"""The runtime's knob (declared again by name: one object): worker threads of the CPU device."""
# seconds an aborting rank waits after printing its message, before MPI_Abort ends the job
ABORT_GRACE_S = 0.5


class DistributedTimeoutError(TimeoutError):
    """A collective did not complete within its ``timeout=`` (a peer is dead or stuck)."""


def mpi() -> ModuleType:
    """``mpi4py.MPI``; ImportError naming the package to install when mpi4py is missing."""
    try:
        return importlib.import_module("mpi4py.MPI")
    except ImportError as e:
        raise ImportError(
            "fusegrad.distributed needs mpi4py and an MPI library: "
            "pip install 'fusegrad[mpi]' (mpi4py and mpich), then run with mpiexec -n N"
        ) from e


@dataclass(slots=True)
class _World:
    comm: Any = None
    local_comm: Any = None
    device: str = ""
    hook_installed: bool = False


_WORLD = _World()


def init(device: str | None = None, abort_on_exception: bool = True) -> str:
    """Join the MPI world and pick this rank's device; returns the device name.

    ``device`` None: the default device (``Device.DEFAULT``); a device kind with several
    units (``CUDA``, ``AMD``...) becomes ``KIND:local_rank`` (ranks on one host share its
    units round robin). On ``CPU`` every rank gets ``cores // ranks on this host`` worker
    threads unless ``CPU_THREADS`` is set. Calling ``init`` again returns the same device.
    ``abort_on_exception``: an uncaught exception on this rank aborts every rank."""
    if _WORLD.comm is not None:
        return _WORLD.device
    MPI = mpi()
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
    comm = MPI.COMM_WORLD
    _WORLD.local_comm = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    _WORLD.device = _pick_device(device, _WORLD.local_comm.Get_rank(), _WORLD.local_comm.size)
    _WORLD.comm = comm
    if abort_on_exception:
        install_abort_hook()
    return _WORLD.device


_ONE_UNIT_KINDS = ("CPU", "PYTHON", "NULL", "DISK")
"""Device kinds every rank on a host shares (no ``:N`` unit per rank)."""


def rank_device(default: str, local_rank: int) -> str:
    """The device a rank uses when ``init`` is given none: ``default`` itself, except that a
    kind with several units (``CUDA``, ``AMD``...) named without one becomes
    ``KIND:local_rank``.

    >>> rank_device("CUDA", 3), rank_device("CUDA:1", 3), rank_device("CPU:LLVM", 3)
    ('CUDA:3', 'CUDA:1', 'CPU:LLVM')
    """
    kind = default.split(":", maxsplit=1)[0].upper()
    if kind in _ONE_UNIT_KINDS or ":" in default:
        return default
    return f"{kind}:{local_rank}"


def threads_per_rank(cores: int, ranks_on_host: int) -> int:
    """CPU worker threads per rank: the host's cores shared out, at least one.

    >>> threads_per_rank(16, 4), threads_per_rank(2, 4)
    (4, 1)
    """
    return max(1, cores // max(1, ranks_on_host))


def _usable_cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _pick_device(device: str | None, local_rank: int, local_size: int) -> str:
    from fusegrad.runtime import Device

    name = device if device is not None else rank_device(Device.DEFAULT, local_rank)
    if name.split(":")[0].upper() == "CPU" and int(_CPU_THREADS.value) <= 0:
        _CPU_THREADS.value = threads_per_rank(_usable_cores(), local_size)
    Device.DEFAULT = name
    return name


def comm() -> Any:
    """The world communicator (``MPI.COMM_WORLD``); RuntimeError before ``init()``."""
    if _WORLD.comm is None:
        raise RuntimeError("fusegrad.distributed: call distributed.init() first")
    return _WORLD.comm


def is_initialized() -> bool:
    """True after ``init()``."""
    return _WORLD.comm is not None


def rank() -> int:
    """This process's rank in the world (0 ... world_size() - 1)."""
    return int(comm().Get_rank())


def world_size() -> int:
    """The number of processes in the world."""
    return int(comm().Get_size())


def local_rank() -> int:
    """This process's rank among the processes on its host."""
    comm()
    return int(_WORLD.local_comm.Get_rank())


def device() -> str:
    """The device ``init()`` picked for this rank."""
    comm()
    return _WORLD.device


def wait(request: Any, timeout: float | None, what: str) -> None:
    """Complete a non-blocking MPI request; after ``timeout`` seconds raise
    DistributedTimeoutError naming ``what`` (the request stays pending: abort the job)."""
    if timeout is None:
        request.Wait()
        return
    deadline = time.monotonic() + timeout
    pause = 1e-5
    while not request.Test():
        if time.monotonic() > deadline:
            raise DistributedTimeoutError(
                f"{what}: rank {rank()} waited {timeout:g} s and not every rank took part "
                "(a peer is dead, stuck, or called a different collective)"
            )
        time.sleep(pause)
        pause = min(pause * 2, 1e-3)


def barrier(timeout: float | None = None) -> None:
    """Wait until every rank has reached this barrier (DistributedTimeoutError after
    ``timeout`` seconds)."""
    wait(comm().Ibarrier(), timeout, "barrier")


def abort(message: str, code: int = 1) -> None:
    """Print ``message`` (prefixed with this rank) to stderr and abort every rank."""
    who = f"rank {rank()} of {world_size()}" if is_initialized() else "a rank"
    sys.stderr.write(f"fusegrad.distributed: {who} failed, aborting the job:\n{message}\n")
    sys.stderr.flush()
    # mpiexec forwards a rank's output from a pipe while it handles the abort on another
    # channel; on a busy machine it can take the abort first and drop the unread message, so
    # give it a moment to read the pipe (this rank is failing: the delay costs nothing)
    time.sleep(ABORT_GRACE_S)
    mpi().COMM_WORLD.Abort(code)


def _on_exception(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, tb)
    abort("".join(traceback.format_exception(kind, value, tb)).rstrip())


def _on_thread_exception(args: threading.ExceptHookArgs) -> None:
    _on_exception(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)


def install_abort_hook() -> None:
    """Make an uncaught exception (main thread or any other) abort every rank."""
    if _WORLD.hook_installed:
        return
    sys.excepthook = _on_exception
    threading.excepthook = _on_thread_exception
    _WORLD.hook_installed = True
