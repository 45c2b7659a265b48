"""HCQ: hardware command queues and timeline signals.

Work reaches a device as a *queue*: a list of commands (exec a program, copy bytes, set a
signal, wait for a signal, write a timestamp) built on the host and submitted in one go.
``submit`` only appends the queue to a device *ring*; a ring's thread (the device's engine)
executes queues in submission order. A ``Signal`` is a 64-bit timeline value in memory: a
``signal`` command raises it, a ``wait`` command (or the host) blocks until it reaches a
value. Dependencies between rings (a compute ring and a copy ring, two devices) are explicit
waits; the host blocks only on signals.

>>> sig = Signal()
>>> sig.value = 3
>>> sig.wait(2)  # already reached: returns at once
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.runtime.flags import PROFILE

# Where the OS offers futexes (Linux), a waiter sleeps in the kernel on the signal's value word
# and a writer (a Python thread or a compiled ring) wakes it: nothing needs the GIL to signal.
# Elsewhere every signal change notifies one condition (signals are cheap, waiters few).
_SIGNALED = threading.Condition()
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}.get(platform.machine())
_FUTEX_WAIT, _FUTEX_WAKE = 128, 129  # FUTEX_WAIT / FUTEX_WAKE | FUTEX_PRIVATE_FLAG
_WAKE_ALL = 0x7FFFFFFF
#: busy checks of a signal before a host thread sleeps on it (a kernel often ends sooner)
SPIN_CHECKS = 64


class _Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


def _futex_syscall() -> Any:
    if not sys.platform.startswith("linux") or _SYS_FUTEX is None:
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_long
    fn.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_long, ctypes.c_long,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]  # fmt: skip
    return fn


_FUTEX = _futex_syscall()
_waiters_lock = threading.Lock()

#: rings holding published commands whose worker sleeps un-woken (``ring_doorbell()`` wakes
#: it): compiled rings don't pay a wake-up for cheap work until someone waits for a signal
UNRUNG: set[Any] = set()


def ring_doorbells() -> None:
    """Wake every ring with published commands its worker wasn't woken for."""
    while UNRUNG:
        try:
            ring = UNRUNG.pop()
        except KeyError:
            return
        ring.ring_doorbell()


def futex_available() -> bool:
    """Whether signals sleep on futexes (then compiled code may set and wait on them)."""
    return _FUTEX is not None


class Signal:
    """A timeline signal: ``value`` (uint64) and ``timestamp`` (ns) in host memory, readable
    by the host and by device engines alike.

    Memory layout (four uint64 words at ``address``, shared with compiled rings): value,
    timestamp, host threads sleeping on it, device engines sleeping on it. A writer wakes
    sleepers only when one of the last two is nonzero.
    """

    __slots__ = ("_mem", "address", "name")

    def __init__(self, value: int = 0, name: str = "") -> None:
        self._mem = (ctypes.c_uint64 * 4)(value, 0, 0, 0)
        #: where the value lives (the timestamp and the sleeper counts follow it)
        self.address: int = ctypes.addressof(self._mem)
        self.name = name

    @property
    def value(self) -> int:
        """The current timeline value."""
        return int(self._mem[0])

    @value.setter
    def value(self, new: int) -> None:
        mem = self._mem
        if _FUTEX is None:
            with _SIGNALED:
                mem[0] = new
                _SIGNALED.notify_all()
            return
        mem[0] = new
        if mem[2] or mem[3]:
            _FUTEX(_SYS_FUTEX, self.address, _FUTEX_WAKE, _WAKE_ALL, None, None, 0)

    @property
    def timestamp(self) -> int:
        """The last time a ``timestamp`` command wrote here (``time.perf_counter_ns``)."""
        return int(self._mem[1])

    @timestamp.setter
    def timestamp(self, ns: int) -> None:
        self._mem[1] = ns

    def wait(
        self, value: int, timeout: float | None = None, abort: Callable[[], bool] | None = None
    ) -> None:
        """Block until ``value`` is reached. Raises TimeoutError after ``timeout`` seconds;
        returns early (silently) once ``abort()`` is true."""
        mem = self._mem
        if mem[0] >= value:
            return
        if UNRUNG:
            ring_doorbells()  # the work this wait depends on may not have started yet
        for _ in range(SPIN_CHECKS):
            if mem[0] >= value:
                return
        deadline = None if timeout is None else time.monotonic() + timeout
        sleep = self._sleep_futex if _FUTEX is not None else self._sleep_condition
        while self._mem[0] < value:
            if abort is not None and abort():
                return
            left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            if left <= 0:
                raise TimeoutError(
                    f"signal {self.name or hex(self.address)}: waited {timeout}s for "
                    f"value {value}, it is {self.value}"
                )
            sleep(value, left)

    def _sleep_futex(self, value: int, seconds: float) -> None:
        mem = self._mem
        with _waiters_lock:
            mem[2] += 1
        try:
            seen = mem[0]
            if seen < value:  # the kernel compares the word again: a change now returns at once
                ts = _Timespec(int(seconds), int((seconds % 1) * 1e9))
                expected = seen & 0xFFFFFFFF
                _FUTEX(_SYS_FUTEX, self.address, _FUTEX_WAIT, expected,
                       ctypes.byref(ts), None, 0)  # fmt: skip
        finally:
            with _waiters_lock:
                mem[2] -= 1

    def _sleep_condition(self, value: int, seconds: float) -> None:
        with _SIGNALED:
            if self._mem[0] < value:
                _SIGNALED.wait(seconds)

    def __repr__(self) -> str:
        return f"Signal({self.name!r}, value={self.value})"


def wake_waiters() -> None:
    """Wake everything blocked on a signal through the condition (futex sleepers wake on
    their own within 0.1 s and check their abort condition)."""
    with _SIGNALED:
        _SIGNALED.notify_all()


# -- commands -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExecCmd:
    """Run ``program`` over buffer handles with scalar values and a launch size."""

    program: Any
    bufs: tuple[Any, ...]
    vals: tuple[int, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    #: the compiled ring's encoding of this command, once made (see native.exec_record)
    native: list[tuple[bytes | None, int]] = field(default_factory=list, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CopyCmd:
    """Copy ``nbytes`` from one host-visible byte view to another."""

    dest: memoryview
    src: memoryview


@dataclass(frozen=True, slots=True)
class SignalCmd:
    """Set ``signal`` to ``value``."""

    signal: Signal
    value: int


@dataclass(frozen=True, slots=True)
class WaitCmd:
    """Block the ring until ``signal`` reaches ``value``."""

    signal: Signal
    value: int


@dataclass(frozen=True, slots=True)
class TimestampCmd:
    """Write the engine's clock into ``signal.timestamp``."""

    signal: Signal


Command = ExecCmd | CopyCmd | SignalCmd | WaitCmd | TimestampCmd


class HWQueue:
    """A list of commands for one engine of a device, built with chained calls and handed
    over with ``submit``:

    >>> q = HWQueue()
    >>> sig = Signal()
    >>> len(q.signal(sig, 1).timestamp(sig).commands)
    2
    """

    #: which ring of the device runs this queue
    engine: str = "compute"

    def __init__(self, engine: str | None = None) -> None:
        self.commands: list[Command] = []
        if engine is not None:
            self.engine = engine

    def exec(
        self,
        program: Any,
        bufs: Sequence[Any],
        vals: Sequence[int] = (),
        global_size: Sequence[int] = (1, 1, 1),
        local_size: Sequence[int] | None = None,
    ) -> HWQueue:
        """Launch ``program`` (a device Program) over buffer handles."""
        ls = None if local_size is None else tuple(local_size)
        cmd = ExecCmd(program, tuple(bufs), tuple(vals), tuple(global_size), ls)
        self.commands.append(cmd)
        return self

    def copy(self, dest: memoryview, src: memoryview) -> HWQueue:
        """Copy host-visible bytes (equal sizes)."""
        if dest.nbytes != src.nbytes:
            raise ValueError(f"copy: sizes differ, {dest.nbytes} bytes <- {src.nbytes} bytes")
        self.commands.append(CopyCmd(dest, src))
        return self

    def signal(self, signal: Signal, value: int) -> HWQueue:
        """Set ``signal`` to ``value`` once everything before it in this queue is done."""
        self.commands.append(SignalCmd(signal, value))
        return self

    def wait(self, signal: Signal, value: int) -> HWQueue:
        """Hold the rest of this queue until ``signal`` reaches ``value``."""
        self.commands.append(WaitCmd(signal, value))
        return self

    def timestamp(self, signal: Signal) -> HWQueue:
        """Record the time at this point in ``signal.timestamp``."""
        self.commands.append(TimestampCmd(signal))
        return self

    def submit(self, device: Any) -> HWQueue:
        """Hand the queue to ``device``'s ring for this queue's engine (asynchronous)."""
        device.ring(self.engine).submit(self.commands)
        return self


# -- graphs ---------------------------------------------------------------------------------------


class HCQGraph:
    """A device's batched submission of a fixed list of kernel launches (a launch plan's
    kernels): built once from exec commands; each submission replaces only the launches that
    change (per-call buffers, Variable values) and hands the whole batch, between ``head``
    and ``tail`` commands, to the device's compute ring as one queue: one ring write and one
    signal for N kernels. A device offers one through its ``graph`` attribute (None: it has
    none); this base class keeps the commands, a device's own may keep an encoded form.

    >>> g = HCQGraph(None, [ExecCmd("prg", (1, 2), (), (1,), None)])
    >>> g.set_buffers(0, (3, 4))
    >>> g.commands[0].bufs
    (3, 4)
    """

    def __init__(self, device: Any, commands: Sequence[ExecCmd]) -> None:
        self.device = device
        self.commands: list[ExecCmd] = list(commands)

    def __len__(self) -> int:
        return len(self.commands)

    def append(self, cmd: ExecCmd) -> None:
        """Add a launch at the end."""
        self.commands.append(cmd)

    def update(self, index: int, cmd: ExecCmd) -> None:
        """Replace launch ``index`` (new Variable values, launch size or buffers)."""
        self.commands[index] = cmd

    def set_buffers(self, index: int, bufs: tuple[Any, ...]) -> None:
        """Launch ``index`` over other buffer handles (the same program and values)."""
        old = self.commands[index]
        if old.bufs != bufs:
            self.commands[index] = ExecCmd(
                old.program, bufs, old.vals, old.global_size, old.local_size
            )

    def submit(self, head: Sequence[Command], tail: Sequence[Command]) -> None:
        """Hand ``head``, every launch, then ``tail`` to the compute ring as one queue."""
        if PROFILE.value:  # the batch's launches are kept as one ProfileGraphEvent
            from fusegrad.runtime.profiler import watch_graph  # the profiler imports hcq

            watch_graph(self.device.device, self.commands)
        self.device.ring("compute").submit([*head, *self.commands, *tail])

    def submit_timed(
        self,
        start: Signal,
        end: Signal,
        signal: Signal,
        value: int,
        updates: Sequence[tuple[int, tuple[Any, ...]]] = (),
    ) -> None:
        """``submit`` between a timestamp into ``start`` and one into ``end``, then ``signal``
        set to ``value`` (what an engine's launch of a plan adds around it; a device's graph
        may encode these without building the commands). ``updates``: ``set_buffers`` of
        these (index, buffer handles) first, in the same call (an engine's launch over new
        buffers)."""
        for index, bufs in updates:
            self.set_buffers(index, bufs)
        self.submit([TimestampCmd(start)], [TimestampCmd(end), SignalCmd(signal, value)])


# -- rings ----------------------------------------------------------------------------------------


class RingClosed(RuntimeError):
    """Submitting to a ring (device) that was closed."""


class RingForked(RuntimeError):
    """Submitting, in a forked child process, to a ring the parent started: its worker thread
    did not survive ``os.fork()``, so the work would never run."""


#: the id of this process, refreshed in a forked child: a ring made by another process refuses
#: work (with a clear error) instead of queueing it for a worker that no longer exists
_PROCESS = [os.getpid()]
os.register_at_fork(after_in_child=lambda: _PROCESS.__setitem__(0, os.getpid()))


def forked_error(name: str) -> RingForked:
    """The error of a ring used in a forked child."""
    return RingForked(
        f"{name}: this device was opened before os.fork() and its worker threads did not "
        "survive it; use fusegrad in a child started with multiprocessing's 'spawn' or "
        "'forkserver' method (or fork before the first Tensor is realized)"
    )


Executor = Callable[[ExecCmd], None]
Observer = Callable[[str, ExecCmd | CopyCmd, int, int], None]


class Ring:
    """One engine of a device: a thread that runs submitted queues in order.

    ``execute`` runs an ExecCmd (the device decides how: a ctypes call, a pool of cores, the
    emulator). An exception in a command is kept and raised by ``check``; the failed queue's
    remaining exec and copy commands are skipped but its signals still fire, so nobody
    waits forever.
    """

    def __init__(self, name: str, execute: Executor, observe: Observer | None = None) -> None:
        self.name = name
        self.execute = execute
        self.observe = observe
        self.pending: deque[list[Command]] = deque()
        self.errors: list[BaseException] = []
        self.closing = False
        self._cv = threading.Condition()
        self._process = _PROCESS[0]
        self._thread = threading.Thread(target=self._loop, name=f"fusegrad-{name}", daemon=True)
        self._thread.start()

    def submit(self, commands: list[Command]) -> None:
        """Append one queue; returns at once."""
        if self._process != _PROCESS[0]:
            raise forked_error(self.name)
        if PROFILE.value:
            from fusegrad.runtime.profiler import hook_exit

            hook_exit()  # the trace waits for this work at exit
        with self._cv:
            if self.closing:
                raise RingClosed(f"{self.name}: the device was closed")
            self.pending.append(commands)
            self._cv.notify()

    def check(self) -> None:
        """Raise the first error a command hit since the last check."""
        if not self.errors:
            return
        err, self.errors = self.errors[0], []
        raise err

    def close(self, timeout: float = 5.0) -> None:
        """Stop: the command running now finishes, queues not started are dropped."""
        with self._cv:
            self.closing = True
            self.pending.clear()
            self._cv.notify_all()
        wake_waiters()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """Whether the ring's thread still runs."""
        return self._thread.is_alive()

    def _next(self) -> list[Command] | None:
        with self._cv:
            while not self.pending and not self.closing:
                self._cv.wait()
            return None if self.closing else self.pending.popleft()

    def _loop(self) -> None:
        while (commands := self._next()) is not None:
            failed = False
            for cmd in commands:
                if self.closing:
                    return
                failed = self._run(cmd, failed)

    def _run(self, cmd: Command, failed: bool) -> bool:
        if failed and isinstance(cmd, (ExecCmd, CopyCmd)):
            return True
        try:
            self._dispatch(cmd)
        except Exception as e:
            self.errors.append(e)
            return True
        return failed

    def _dispatch(self, cmd: Command) -> None:
        if isinstance(cmd, SignalCmd):
            cmd.signal.value = cmd.value
        elif isinstance(cmd, WaitCmd):
            cmd.signal.wait(cmd.value, abort=lambda: self.closing)
        elif isinstance(cmd, TimestampCmd):
            cmd.signal.timestamp = time.perf_counter_ns()
        else:
            start = time.perf_counter_ns()
            if isinstance(cmd, ExecCmd):
                self.execute(cmd)
            else:
                cmd.dest[:] = cmd.src
            if self.observe is not None:
                self.observe(self.name, cmd, start, time.perf_counter_ns())


# -- the worker pool of a multi-core device -------------------------------------------------------


class WorkerPool:
    """``threads`` workers that run the slices of a job together with the calling thread.

    ``run(fn, n)`` calls ``fn(0) .. fn(n - 1)`` spread over the workers and the caller and
    returns when all are done (raising the first exception one of them raised). The workers
    sleep on a condition between jobs.
    """

    def __init__(self, threads: int, name: str = "fusegrad-worker") -> None:
        self._cv = threading.Condition()
        self._job: Callable[[int], None] | None = None
        self._count = self._next = self._pending = 0
        self._generation = 0
        self._errors: list[BaseException] = []
        self._stop = False
        self.threads = [
            threading.Thread(target=self._worker, name=f"{name}-{i}", daemon=True)
            for i in range(threads)
        ]
        for t in self.threads:
            t.start()

    def run(self, fn: Callable[[int], None], n: int) -> None:
        """Run ``fn`` on slices ``0 .. n-1`` in parallel; the caller works too."""
        if n <= 1 or not self.threads:
            for i in range(n):
                fn(i)
            return
        with self._cv:
            self._job, self._count, self._next, self._pending = fn, n, 0, n
            self._errors = []
            self._generation += 1
            self._cv.notify_all()
        self._work()
        with self._cv:
            while self._pending:
                self._cv.wait()
            self._job = None
            if self._errors:
                raise self._errors[0]

    def _take(self) -> tuple[Callable[[int], None], int] | None:
        with self._cv:
            if self._job is None or self._next >= self._count:
                return None
            self._next += 1
            return self._job, self._next - 1

    def _work(self) -> None:
        while (task := self._take()) is not None:
            fn, i = task
            try:
                fn(i)
            except Exception as e:
                self._errors.append(e)
            with self._cv:
                self._pending -= 1
                if not self._pending:
                    self._cv.notify_all()

    def _worker(self) -> None:
        seen = 0
        while True:
            with self._cv:
                while self._generation == seen and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                seen = self._generation
            self._work()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the workers (a slice running now finishes first)."""
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        for t in self.threads:
            t.join(timeout)
