"""Compiled rings: the CPU device's HCQ engine as a loop in machine code.

A ``NativeRing`` is a ring buffer of fixed-size command slots in host memory and one thread
that spends its life inside the compiled ``fg_worker`` (``native_ir.py``), with the GIL
released: it runs kernels through their function pointers, copies with ``memcpy``, sets and
waits on signals with futexes and writes timestamps, and sleeps on a doorbell when the ring is
empty. Python only encodes commands into slots and publishes the new head; the host never
blocks except on signals. THREAD-split kernels run their slices on a pool of helper threads
that also live in compiled code.

Commands the loop can't run itself (a Python ``Program``, arguments that aren't plain
addresses and ints, a read-only copy source) become *callbacks*: the worker calls back into
Python (taking the GIL) to run them with the device's ``_execute``; an exception there marks
the queue failed — its remaining exec/copy commands are skipped, its signals still fire — and
is raised by ``check``, exactly like the Python ``Ring``.

Per-command start and end times are written into the slots; ``DEBUG=2`` lines and
``PROFILE`` events are reported when the host learns a command finished (``check``, which
``synchronize`` calls, or the next submission).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from fusegrad.runtime.flags import PROFILE
from fusegrad.runtime.hcq import (
    _PROCESS,
    UNRUNG,
    Command,
    CopyCmd,
    ExecCmd,
    HCQGraph,
    RingClosed,
    Signal,
    SignalCmd,
    TimestampCmd,
    WaitCmd,
    forked_error,
    futex_available,
    ring_doorbells,
)
from fusegrad.runtime.native_ir import (
    ARG_WORD,
    KIND_BEGIN,
    KIND_CALLBACK,
    KIND_COPY,
    KIND_EXEC,
    KIND_SIGNAL,
    KIND_TIMESTAMP,
    KIND_WAIT,
    MAX_ARGS,
    NAP_MIN_NS,
    NO_CORE,
    SLOT_BYTES,
    SLOT_WORDS,
    TIMED_SLICES,
    worker_ir,
)
from fusegrad.runtime.profiler import hook_exit
from fusegrad.uop import DEBUG

CAPACITY = 4096  # slots per ring (1 MiB)
BATCH_SLOTS = 64  # unstarted slots of cheap work that wake the worker anyway
_U64 = (1 << 64) - 1
_HEADER = struct.Struct(f"<4Q{SLOT_BYTES - 32}x")
_BEGIN = _HEADER.pack(KIND_BEGIN, 0, 0, 0)
_STOPPED: list[Any] = []  # rings whose thread outlived close(): their memory must stay mapped
_MASK = CAPACITY - 1
_WAITING = [0]  # queues with WAIT commands not known to be done, over every compiled ring

_VOID_P = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PUBLISH = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int32)
_WAKE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32)
# fg_submit copies slots and at most wakes a futex, never blocks: called holding the GIL
# (a ctypes call that releases and takes it back costs more than the call itself)
_SUBMIT = ctypes.PYFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int32
)
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint64)


class NativeLibrary:
    """The loaded worker code: ctypes entry points (calls release the GIL)."""

    def __init__(self, code: Any) -> None:
        self.code = code  # keeps the mapping alive
        sym = code.symbols
        self.worker = _VOID_P(sym["fg_worker"])
        self.helper = _VOID_P(sym["fg_helper"])
        self.publish = _PUBLISH(sym["fg_publish"])
        self.wake = _WAKE(sym["fg_futex_wake"])
        self.doorbell = _VOID_P(sym["fg_doorbell"])
        self.submit = _SUBMIT(sym["fg_submit"])


@functools.cache
def native_library() -> NativeLibrary | None:
    """The compiled worker loop, or None where it can't be built (no futexes, no LLVM, a CPU
    the ELF loader doesn't map): the CPU device then uses Python rings."""
    src = worker_ir()
    if src is None or not futex_available():
        return None
    try:
        import fusegrad.renderer as renderers

        obj = renderers.LLVMCompiler(opt_level=2).compile_cached(src)
        code = renderers.load_elf(obj, "fg_worker")
    except Exception:
        return None
    return NativeLibrary(code)


def exec_record(cmd: ExecCmd) -> tuple[bytes | None, int]:
    """(the slot of an exec the compiled loop runs itself, or None; flags: whether the work is
    worth waking the worker for at once, whether it is split over cores). The loop runs
    programs with a native ``address`` (CPU kernels) over buffers with an ``address`` and int
    values. Cached on the command (TinyJit replays the same commands)."""
    if cmd.native:
        return cmd.native[0]
    record = _exec_slot(cmd)
    flags = _WAKE_FLAG if record is None or _heavy(cmd.program) else 0
    if record is not None and int.from_bytes(record[24:32], "little") > 1:
        flags |= _SPLIT_FLAG
    found = (record, flags)
    cmd.native.append(found)
    return found


#: kernels estimated below both are "cheap": the worker isn't woken for them alone (a wake-up
#: costs about as much as running them); the first wait for a signal wakes it
CHEAP_OPS, CHEAP_BYTES = 1 << 20, 1 << 20


def _heavy(prg: Any) -> bool:
    known = getattr(prg, "_heavy", None)
    if known is not None:
        return bool(known)
    est = getattr(getattr(prg, "spec", None), "estimates", None)
    ops, mem = getattr(est, "ops", None), getattr(est, "mem", None)
    if not (isinstance(ops, int) and isinstance(mem, int)):
        heavy = True  # unknown or symbolic
    else:
        heavy = ops >= CHEAP_OPS or mem >= CHEAP_BYTES or prg.core_size is not None
    with contextlib.suppress(AttributeError):  # a program with __slots__: decide every time
        prg._heavy = heavy
    return heavy


def _exec_slot(cmd: ExecCmd) -> bytes | None:
    prg = cmd.program
    address = getattr(prg, "address", None)
    if not isinstance(address, int) or not address:
        return None
    words = [getattr(b, "address", None) for b in cmd.bufs]
    if cmd.vals:
        words += [v & _U64 if isinstance(v, int) else None for v in cmd.vals]
    if None in words:
        return None  # not a plain pointer or int: the Python path raises the right error
    split = getattr(prg, "core_size", None) is not None
    if not split and len(words) <= MAX_ARGS:
        return _exec_struct(len(words)).pack(KIND_EXEC, address, 0, 1, NO_CORE, 0, 0, 0, *words)
    if len(words) + split > MAX_ARGS:
        return None
    slices = prg.slices(cmd.vals) if split else 1
    if not 0 < slices < 1 << 16:
        return None
    pos = len(words) if split else NO_CORE
    return _exec_struct(len(words)).pack(KIND_EXEC, address, 0, slices, pos, 0, 0, 0, *words)


@functools.cache
def _exec_struct(nargs: int) -> struct.Struct:
    return struct.Struct(f"<{ARG_WORD + nargs}Q{(MAX_ARGS - nargs) * 8}x")


def _writable_address(view: memoryview) -> int | None:
    if view.readonly or not view.contiguous:
        return None
    if view.nbytes == 0:
        return 0
    return ctypes.addressof(ctypes.c_char.from_buffer(view.cast("B")))


class _Pool:
    """The helper threads running slices of split kernels with the worker."""

    def __init__(self, lib: NativeLibrary, helpers: int, name: str) -> None:
        self.lib = lib
        self.mem = (ctypes.c_uint64 * 8)()
        self.threads = [
            threading.Thread(target=self._help, name=f"{name}-{i}", daemon=True)
            for i in range(helpers)
        ]
        for t in self.threads:
            t.start()

    @property
    def address(self) -> int:
        """The pool's control words."""
        return ctypes.addressof(self.mem)

    def _help(self) -> None:
        self.lib.helper(self.address)  # returns once stopped

    def stop(self) -> None:
        """Ask the helpers to leave (they finish the slice they run)."""
        self.mem[2] = 1
        self.lib.wake(self.address + 8, 0x7FFFFFFF)


_Report = tuple[int, Command, int, int]  # slot index, command, DEBUG and PROFILE at submission


class _Flight:
    """What a published stretch of slots needs until the worker passed it: the commands
    (programs and memory must stay alive) and the commands to report to the profiler."""

    __slots__ = ("end", "keep", "report", "waits")

    def __init__(self, end: int, keep: list[Any], report: list[_Report], waits: bool) -> None:
        self.end = end
        self.keep = keep
        self.report = report
        self.waits = int(waits)


class NativeRing:
    """A ring run by compiled code; same contract as ``hcq.Ring`` plus the device timeline
    (``timeline``/``submitted``) of the device's Python rings."""

    def __init__(
        self,
        name: str,
        lib: NativeLibrary,
        execute: Callable[[ExecCmd], None],
        observe: Callable[..., None] | None = None,
        helpers: int = 0,
    ) -> None:
        self.name = name
        self.lib = lib
        self._submit = lib.submit
        self.execute = execute
        self.observe = observe
        self.errors: list[BaseException] = []
        self.closing = False
        self.timeline = Signal(name=f"{name} timeline")
        self.submitted = 0
        self.head = 0
        self._lock = threading.Lock()
        self._process = _PROCESS[0]
        self._slots = (ctypes.c_uint64 * (SLOT_WORDS * CAPACITY))()
        self._base = ctypes.addressof(self._slots)
        self.control = (ctypes.c_uint64 * 16)()
        self.control[5], self.control[6] = CAPACITY - 1, self._base
        self.control[9] = NAP_MIN_NS
        self._control = ctypes.addressof(self.control)
        self._callback = CALLBACK(self._run_callback)
        self.control[7] = ctypes.cast(self._callback, ctypes.c_void_p).value or 0
        self._calls: dict[int, Command] = {}
        self._tokens = 0
        self._flights: deque[_Flight] = deque()
        self._helpers = helpers
        self.pool: _Pool | None = None
        self._slice_times: Any = None  # the slice-time table, made when PROFILE first is on
        # the thread's target is a bound method: the ring (its memory) lives while it runs
        self._thread = threading.Thread(target=self._work, name=f"fusegrad-{name}", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        self.lib.worker(self._control)  # returns once stopped

    # -- the host side ------------------------------------------------------------------------
    def submit(self, commands: list[Command]) -> None:
        """Encode one queue (followed by a step of the timeline) and publish it."""
        if self._process != _PROCESS[0]:  # before the lock: a fork may have left it held
            raise forked_error(self.name)
        with self._lock:
            if self.closing:
                raise RingClosed(f"{self.name}: the device was closed")
            step = self.submitted + 1  # counted once published: a failed submit isn't waited for
            cmds = [*commands, SignalCmd(self.timeline, step)]
            records, flags = self._encode(cmds)
            self._publish(records, flags, cmds, step)

    def submit_encoded(
        self,
        head: Sequence[Command],
        body: Sequence[bytes | bytearray],
        body_flags: int,
        tail: Sequence[Command],
    ) -> None:
        """Publish ``head``, already encoded exec slots ``body`` (a ``NativeGraph``) and
        ``tail`` as one queue (followed by a step of the timeline): one ring write."""
        if self._process != _PROCESS[0]:  # before the lock: a fork may have left it held
            raise forked_error(self.name)
        with self._lock:
            if self.closing:
                raise RingClosed(f"{self.name}: the device was closed")
            step = self.submitted + 1
            cmds = [*head, *tail, SignalCmd(self.timeline, step)]
            records, flags = self._encode(cmds)
            n = len(head) + 1  # after the BEGIN and the head
            records[n:n] = body
            self._publish(records, flags | body_flags, cmds, step, False)

    def submit_slots(
        self,
        start: Signal,
        body: Sequence[bytes | bytearray],
        body_flags: int,
        end: Signal,
        signal: Signal,
        value: int,
    ) -> None:
        """``submit_encoded`` of a timestamp into ``start``, the slots ``body``, a timestamp
        into ``end`` and ``signal`` set to ``value``: the slots packed directly (a graph
        launch on a schedule-cache hit or a TinyJit replay: the dispatch hot path, so the
        common case — no WAIT, no split kernel, no DEBUG/PROFILE — skips ``_publish``)."""
        if self._process != _PROCESS[0]:  # before the lock: a fork may have left it held
            raise forked_error(self.name)
        with self._lock:
            if self.closing:
                raise RingClosed(f"{self.name}: the device was closed")
            step = self.submitted + 1
            stamps = _TIMESTAMP_RECORDS
            first = stamps.get(start.address) or _timestamp_record(start.address)
            last = stamps.get(end.address) or _timestamp_record(end.address)
            flags = body_flags | (_WAKE_FLAG if _WAITING[0] else 0)
            records = [
                _BEGIN,
                first,
                *body,
                last,
                _HEADER.pack(KIND_SIGNAL, signal.address, value & _U64, 0),
                _HEADER.pack(KIND_SIGNAL, self.timeline.address, step, 0),
            ]
            # the flight keeps the signals the worker writes alive
            if flags & (_WAIT_FLAG | _SPLIT_FLAG) or DEBUG.value >= 2 or PROFILE.value:
                self._publish(records, flags, [start, end, signal], step, False)
                return
            self._write(records, bool(flags & _WAKE_FLAG))
            self.submitted = step
            self._flights.append(_Flight(self.head, [start, end, signal], [], False))

    def _publish(
        self, records: list[Any], flags: int, cmds: list[Any], step: int, report: bool = True
    ) -> None:
        debug, profile = int(DEBUG.value), int(PROFILE.value)
        reports = (
            self._to_report(cmds, debug, profile) if report and (debug >= 2 or profile) else []
        )
        if profile:
            hook_exit()  # the trace waits for this work at exit
            if self._slice_times is None and self._helpers:
                self._slice_times = (ctypes.c_uint64 * (CAPACITY * TIMED_SLICES * 4))()
                self.control[10] = ctypes.addressof(self._slice_times)
        if flags & _WAIT_FLAG:
            _WAITING[0] += 1  # rings may wait on each other now: wake every worker
            ring_doorbells()
        if flags & _SPLIT_FLAG and self.pool is None and self._helpers:
            self.pool = _Pool(self.lib, self._helpers, f"fusegrad-{self.name}-core")
            self.control[8] = self.pool.address
        self._write(records, bool(flags & _WAKE_FLAG))
        self.submitted = step
        self._flights.append(_Flight(self.head, cmds, reports, bool(flags & _WAIT_FLAG)))

    def _encode(self, cmds: list[Command]) -> tuple[list[Any], int]:
        """The slots of a queue (after its BEGIN) and the OR of their flags."""
        records: list[Any] = [_BEGIN]
        flags = _WAKE_FLAG if _WAITING[0] else 0
        append, encoders, stamps = records.append, _ENCODERS, _TIMESTAMP_RECORDS
        for cmd in cmds:
            if type(cmd) is TimestampCmd:  # the commonest command: its slot is fixed per signal
                address = cmd.signal.address
                record = stamps.get(address)
                if record is None:
                    record = _timestamp_record(address)
                append(record)
                continue
            if type(cmd) is SignalCmd:
                append(_HEADER.pack(KIND_SIGNAL, cmd.signal.address, cmd.value & _U64, 0))
                continue
            cached = cmd.native if type(cmd) is ExecCmd else None
            if cached and cached[0][0] is not None:  # an exec encoded before (a TinyJit replay)
                record, f = cached[0]
            else:
                record, f = (encoders.get(type(cmd)) or _encode_subclass(cmd))(self, cmd)
            append(record)
            flags |= f
        return records, flags

    def _to_report(self, cmds: list[Command], debug: int, profile: int) -> list[_Report]:
        first = self.head + 1  # after the queue's BEGIN
        return [
            (first + i, c, debug, profile)
            for i, c in enumerate(cmds)
            if isinstance(c, (ExecCmd, CopyCmd))
        ]

    def callback_record(self, cmd: Command) -> bytes:
        """A slot that makes the worker call back into Python to run ``cmd``."""
        self._tokens += 1
        self._calls[self._tokens] = cmd
        return _HEADER.pack(KIND_CALLBACK, 0, 0, self._tokens)

    def _write(self, records: list[Any], wake: bool) -> None:
        n, tail = len(records), int(self.control[1])
        if self._flights and self._flights[0].end <= tail:
            self._reap()
        if n > CAPACITY // 2 or self.head + n - tail > CAPACITY:
            self._write_in_chunks(records, wake)
            return
        # cheap work waits for a wait, but not long: held-up slots hold memory (and fill the ring)
        wake = wake or self.head + n - tail > BATCH_SLOTS
        if self._submit(self._control, b"".join(records), n, wake):
            UNRUNG.add(self)  # the worker sleeps: woken by the next wait for a signal
        self.head += n

    def _write_in_chunks(self, records: list[Any], wake: bool) -> None:
        """A queue longer than the free slots: publish it piece by piece as slots free up."""
        start = 0
        while start < len(records):
            chunk = records[start : start + min(self._room(), CAPACITY // 2)]
            start += len(chunk)
            self._write(chunk, wake)

    def ring_doorbell(self) -> None:
        """Wake the worker (it runs what was published without waking it)."""
        self.lib.doorbell(self._control)

    def _room(self) -> int:
        """Free slots (waits for at least one; reports what finished first)."""
        while True:
            self._reap()
            free = CAPACITY - (self.head - self.tail)
            if free > 0:
                return free
            if not self.alive:
                raise RingClosed(f"{self.name}: the ring's thread stopped")
            self.ring_doorbell()
            time.sleep(50e-6)

    @property
    def tail(self) -> int:
        """Commands the worker has finished."""
        return int(self.control[1])

    def _reap(self) -> None:
        """Drop finished flights, reporting their commands' times."""
        tail = self.tail
        while self._flights and self._flights[0].end <= tail:
            flight = self._flights.popleft()
            _WAITING[0] -= flight.waits
            for report in flight.report:
                self._report(*report)
        if self._flights and self._flights[0].report:
            flight = self._flights[0]
            done = [r for r in flight.report if r[0] < tail]
            flight.report = [r for r in flight.report if r[0] >= tail]
            for report in done:
                self._report(*report)

    def _report(self, index: int, cmd: Command, debug: int, profile: int) -> None:
        if self.observe is None:
            return
        at = (index & (CAPACITY - 1)) * SLOT_WORDS
        start, end = int(self._slots[at + 5]), int(self._slots[at + 6])
        n = int(self._slots[at + 3])
        if profile and n > 1 and self._slice_times is not None and isinstance(cmd, ExecCmd):
            slices = self._slices(index & (CAPACITY - 1), n, start, end)
            if slices:
                self.observe(self.name, cmd, start, end, debug, profile, slices=slices)
                return
        self.observe(self.name, cmd, start, end, debug, profile)

    def _slices(self, slot: int, n: int, start: int, end: int) -> list[tuple[int, int, int, int]]:
        """The times the worker noted for the slices of the split kernel in ``slot`` (those
        inside the command's own times: a row written before the table was on is stale)."""
        row, out = slot * TIMED_SLICES * 4, []
        for k in range(min(n, TIMED_SLICES)):
            at = row + 4 * k
            index, core, t0, t1 = (int(w) for w in self._slice_times[at : at + 4])
            if index == k and start <= t0 <= t1 <= end:
                out.append((k, core, t0, t1))
        return out

    def check(self) -> None:
        """Report finished commands, then raise the first error a command hit since the
        last check."""
        with self._lock:
            self._reap()
        if not self.errors:
            return
        err, self.errors = self.errors[0], []
        raise err

    # -- the worker's callbacks -----------------------------------------------------------------
    def _run_callback(self, token: int) -> int:
        cmd = self._calls.pop(token, None)
        try:
            if isinstance(cmd, ExecCmd):
                self.execute(cmd)
            elif isinstance(cmd, CopyCmd):
                cmd.dest[:] = cmd.src
            return 0
        except Exception as e:
            self.errors.append(e)
            return 1

    # -- shutdown -------------------------------------------------------------------------------
    def close(self, timeout: float = 5.0) -> None:
        """Stop: the command running now finishes, commands not started are dropped."""
        with self._lock:
            self.closing = True
        self.control[4] = 1
        self.ring_doorbell()
        UNRUNG.discard(self)
        if self.pool is not None:
            self.pool.stop()
        threads = [self._thread, *(self.pool.threads if self.pool is not None else ())]
        deadline = time.monotonic() + timeout
        for t in threads:
            if t is not threading.current_thread():
                t.join(max(deadline - time.monotonic(), 0.0))
        if any(t.is_alive() for t in threads):
            _STOPPED.append(self)  # a kernel still runs: keep its memory and code mapped
        with self._lock:
            self._reap()
        self._calls.clear()

    @property
    def alive(self) -> bool:
        """Whether the ring's thread still runs."""
        return self._thread.is_alive()


# -- encoding commands into slots -------------------------------------------------------------

_WAKE_FLAG, _SPLIT_FLAG, _WAIT_FLAG = 1, 2, 4  # wake the worker; a split kernel; a WAIT
Encoded = tuple[bytes, int]


def _encode_exec(ring: NativeRing, cmd: ExecCmd) -> Encoded:
    record, flags = exec_record(cmd)
    return (record, flags) if record is not None else (ring.callback_record(cmd), _WAKE_FLAG)


def _encode_signal(ring: NativeRing, cmd: SignalCmd) -> Encoded:
    return _HEADER.pack(KIND_SIGNAL, cmd.signal.address, cmd.value & _U64, 0), 0


def _encode_wait(ring: NativeRing, cmd: WaitCmd) -> Encoded:
    record = _HEADER.pack(KIND_WAIT, cmd.signal.address, cmd.value & _U64, 0)
    return record, _WAKE_FLAG | _WAIT_FLAG


def _encode_timestamp(ring: NativeRing, cmd: TimestampCmd) -> Encoded:
    return _HEADER.pack(KIND_TIMESTAMP, cmd.signal.address, 0, 0), 0


#: timestamp slots by signal address (the engine reuses its timestamp signals); bounded
_TIMESTAMP_RECORDS: dict[int, bytes] = {}


def _timestamp_record(address: int) -> bytes:
    if len(_TIMESTAMP_RECORDS) >= 4096:
        _TIMESTAMP_RECORDS.clear()
    record = _TIMESTAMP_RECORDS[address] = _HEADER.pack(KIND_TIMESTAMP, address, 0, 0)
    return record


def _encode_copy(ring: NativeRing, cmd: CopyCmd) -> Encoded:
    dest, src = _writable_address(cmd.dest), _writable_address(cmd.src)
    if dest is None or src is None:
        return ring.callback_record(cmd), _WAKE_FLAG
    wake = _WAKE_FLAG if cmd.dest.nbytes >= CHEAP_BYTES else 0
    return _HEADER.pack(KIND_COPY, dest, src, cmd.dest.nbytes), wake


_ENCODERS: dict[type, Callable[[NativeRing, Any], Encoded]] = {
    ExecCmd: _encode_exec,
    SignalCmd: _encode_signal,
    WaitCmd: _encode_wait,
    TimestampCmd: _encode_timestamp,
    CopyCmd: _encode_copy,
}


class NativeGraph(HCQGraph):
    """The CPU device's graph: the launches encoded once into compiled-ring slots; a
    submission re-packs only the buffer words of launches whose buffers changed and
    publishes every slot with one ring write and one timeline signal. ``DEBUG>=2`` and
    ``PROFILE`` (per-launch reports) and a Python ring submit the commands instead."""

    def __init__(self, device: Any, commands: Sequence[ExecCmd]) -> None:
        super().__init__(device, [])
        # one mutable slot per launch: new buffer words are packed into it in place (the
        # ring copies the slots when a submission is published)
        self.records: list[bytearray] = []
        self.flags = 0
        # launches whose command lags behind its slot -> the buffers packed into the slot
        self.stale: dict[int, tuple[Any, ...]] = {}
        for cmd in commands:
            self.append(cmd)

    @staticmethod
    def _encoded(cmd: ExecCmd) -> tuple[bytearray, int]:
        record, flags = exec_record(cmd)
        if record is None:  # a callback slot runs once: it can't be submitted again
            raise ValueError(f"graph: {cmd.program!r} can't run in the compiled ring")
        return bytearray(record), flags

    def append(self, cmd: ExecCmd) -> None:
        """Add a launch at the end (encoded now)."""
        record, flags = self._encoded(cmd)
        self.commands.append(cmd)
        self.records.append(record)
        self.flags |= flags

    def update(self, index: int, cmd: ExecCmd) -> None:
        """Replace launch ``index`` (its slot encoded again)."""
        record, flags = self._encoded(cmd)
        self.commands[index], self.records[index] = cmd, record
        self.flags |= flags
        self.stale.pop(index, None)

    def set_buffers(self, index: int, bufs: tuple[Any, ...]) -> None:
        """Launch ``index`` over other buffers: their addresses written into its slot."""
        try:
            words = [b.address for b in bufs]
        except AttributeError:
            words = [None]
        if None in words:
            super().set_buffers(index, bufs)
            self.update(index, self.commands[index])
            return
        _words(len(words)).pack_into(self.records[index], ARG_WORD * 8, *words)
        self.stale[index] = bufs

    def submit(self, head: Sequence[Command], tail: Sequence[Command]) -> None:
        """One ring write: ``head``, the encoded launches, ``tail``."""
        ring = self.device.ring("compute")
        if type(ring) is not NativeRing or DEBUG.value >= 2 or PROFILE.value:
            for i, bufs in self.stale.items():
                super().set_buffers(i, bufs)
            self.stale.clear()
            super().submit(head, tail)
            return
        ring.submit_encoded(head, self.records, self.flags, tail)

    def submit_timed(
        self,
        start: Signal,
        end: Signal,
        signal: Signal,
        value: int,
        updates: Sequence[tuple[int, tuple[Any, ...]]] = (),
    ) -> None:
        """``submit`` between two timestamps, then ``signal`` set to ``value``: the ring's
        slots packed without building commands (see ``HCQGraph.submit_timed``); the buffer
        words of ``updates`` are packed into their slots first."""
        ring = self.device.ring("compute")
        if type(ring) is not NativeRing or DEBUG.value >= 2 or PROFILE.value:
            super().submit_timed(start, end, signal, value, updates)
            return
        records, stale = self.records, self.stale
        for index, bufs in updates:
            try:
                words = [b.address for b in bufs]
            except AttributeError:
                words = [None]
            if None in words:
                self.set_buffers(index, bufs)  # re-encoded from the command
                continue
            _words(len(words)).pack_into(records[index], ARG_WORD * 8, *words)
            stale[index] = bufs
        ring.submit_slots(start, records, self.flags, end, signal, value)


@functools.cache
def _words(n: int) -> struct.Struct:
    return struct.Struct(f"<{n}Q")


def _encode_subclass(cmd: Command) -> Callable[[NativeRing, Any], Encoded]:
    for kind, encode in _ENCODERS.items():
        if isinstance(cmd, kind):
            return encode
    raise TypeError(f"HCQ: unknown command {cmd!r}")
