"""Per-command device times: the ``DEBUG=2`` launch line and the ``PROFILE=1`` trace.

Rings call ``record`` after every exec and copy command with the engine's start and end
clock (``time.perf_counter_ns``). With ``DEBUG>=2`` each kernel prints one line: device,
name, launch size, time, GFLOP/s and GB/s from its ProgramSpec's estimates. With
``PROFILE=1`` the events are kept and written at exit as a Chrome trace (open it in
https://ui.perfetto.dev or chrome://tracing): device spans per command (``pid`` the device,
``tid`` its engine, ``cat`` ``kernel`` or ``copy``) and host spans (``pid`` ``host``, ``tid``
the thread, ``cat`` ``host``) of scheduling, lowering, compiling and launching, which the
engine opens with ``host_span`` (a no-op object when PROFILE is off).

A THREAD-split kernel runs as slices on several cores; where the ring reports their times
(``record(..., slices=...)``, or ``record_slice`` from a Python pool before the command's
``record``), each slice is a span (``cat`` ``slice``) on its core's own track (``tid``
``"<engine> core <n>"``) of the device, within the kernel's span; kernel and slices share
``args["launch"]``.

Under ``PROFILE=1`` the profiler also keeps tinygrad's typed records in ``device_events``
(tinygrad's ``Compiled.profile_events``): a ``ProfileDeviceEvent`` the first time a device
reports, a ``ProfileProgramEvent`` for every program a device loads (its binary and load
address), and a ``ProfileGraphEvent`` for every batched submission of a device graph
(``watch_graph``: its launches as ``ProfileGraphEntry`` rows indexing into the timestamps).
"""

from __future__ import annotations

import atexit
import decimal
import itertools
import json
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from fusegrad.runtime.flags import PROFILE, PROFILE_PATH
from fusegrad.runtime.hcq import CopyCmd, ExecCmd
from fusegrad.uop import DEBUG

_events: list[dict[str, Any]] = []
_lock = threading.Lock()
_launches = itertools.count(1)
_profiled = itertools.count(1)  # the launch numbers of the trace's kernels
Slice = tuple[int, "int | str", int, int]
"""One slice of a split kernel: (slice index, core (a number, or a thread's name), start ns,
end ns)."""
_pending: dict[int, tuple[Any, list[Slice]]] = {}  # id(cmd) -> (cmd, slices), from record_slice


# -- tinygrad's typed records -------------------------------------------------------------------


class ProfileEvent:
    """Base class of the typed profile records (``device_events``; the frontend's
    ``fusegrad.helpers.cpu_events`` keeps the host ones)."""


@dataclass
class ProfileDeviceEvent(ProfileEvent):
    """A device took part in the profile: ``tdiff`` (microseconds) is added to its clock to
    get host time (0 here: every ring stamps with the host's ``perf_counter``), ``props``
    what the device is (renderer, compiler, architecture)."""

    device: str
    tdiff: decimal.Decimal = decimal.Decimal(0)
    props: dict[str, Any] | None = None


@dataclass
class ProfileProgramEvent(ProfileEvent):
    """``device`` loaded program ``name``: its binary ``lib``, the address its code was
    loaded at (``base``, None where the device doesn't say) and ``tag``, a number unique
    per loaded program."""

    device: str
    name: str
    lib: bytes | None
    base: int | None
    tag: int | None = None
    profile_key: bytes | None = None


@dataclass(frozen=True)
class ProfileGraphEntry:
    """One launch of a graph submission: it ran on ``device`` from timestamp ``sigs[st_id]``
    to ``sigs[en_id]`` of its ``ProfileGraphEvent``."""

    device: str
    name: Any  # str, or the frontend's TracingKey
    st_id: int
    en_id: int
    profile_key: bytes | None = None


@dataclass
class ProfileGraphEvent(ProfileEvent):
    """A batched submission of a device graph: its launches ``ents`` in order, ``deps[i]``
    the entries launch ``i`` waited for (the one before it: a ring runs in order), and the
    timestamps ``sigs`` (microseconds of ``perf_counter``) the entries index."""

    ents: list[ProfileGraphEntry]
    deps: list[list[int]]
    sigs: list[decimal.Decimal]


device_events: list[ProfileEvent] = []
"""The typed records kept under ``PROFILE=1``, in the order they happened."""

_devices_seen: dict[str, None] = {}
_program_tags = itertools.count(1)


def note_device(device: str, props: dict[str, Any] | None = None) -> None:
    """Keep a ``ProfileDeviceEvent`` for ``device`` the first time it is noted (profiling
    only)."""
    if device in _devices_seen:
        return
    with _lock:
        if device in _devices_seen:
            return
        _devices_seen[device] = None
        device_events.append(ProfileDeviceEvent(device, decimal.Decimal(0), props))


def note_program(device: str, name: str, lib: bytes | None, base: int | None) -> None:
    """Keep a ``ProfileProgramEvent`` for a program ``device`` just loaded (profiling only:
    the caller checks ``PROFILE``)."""
    note_device(device)
    with _lock:
        device_events.append(ProfileProgramEvent(device, name, lib, base, next(_program_tags)))


@dataclass
class _GraphRun:
    device: str
    names: list[str]
    times: list[tuple[int, int] | None] = field(default_factory=list)
    left: int = 0


_graph_cmds: dict[int, list[tuple[Any, _GraphRun, int]]] = {}  # id(cmd) -> pending runs


def watch_graph(device: str, commands: Sequence[ExecCmd]) -> None:
    """A graph is about to submit ``commands`` (in this order) to ``device``'s ring: once
    every one of them is recorded, keep their times as one ``ProfileGraphEvent``. Call it
    for each submission, before the commands can run (profiling only)."""
    if not commands:
        return
    names = [str(getattr(c.program, "name", "exec")) for c in commands]
    run = _GraphRun(device, names, [None] * len(commands), len(commands))
    with _lock:
        for i, cmd in enumerate(commands):
            _graph_cmds.setdefault(id(cmd), []).append((cmd, run, i))


def _graph_recorded(cmd: ExecCmd, start_ns: int, end_ns: int) -> None:
    """Note a recorded command's times in the oldest pending graph run that holds it."""
    with _lock:
        pending = _graph_cmds.get(id(cmd))
        if not pending or pending[0][0] is not cmd:
            return
        _, run, index = pending.pop(0)
        if not pending:
            del _graph_cmds[id(cmd)]
        run.times[index] = (start_ns, end_ns)
        run.left -= 1
        if run.left == 0:
            device_events.append(_graph_event(run))


def _graph_event(run: _GraphRun) -> ProfileGraphEvent:
    sigs: list[decimal.Decimal] = []
    ents = []
    for i, (name, times) in enumerate(zip(run.names, run.times, strict=True)):
        assert times is not None
        sigs += [decimal.Decimal(times[0]) / 1000, decimal.Decimal(times[1]) / 1000]
        ents.append(ProfileGraphEntry(run.device, name, 2 * i, 2 * i + 1))
    deps = [[] if i == 0 else [i - 1] for i in range(len(ents))]
    return ProfileGraphEvent(ents, deps, sigs)


def _rates(cmd: ExecCmd, seconds: float) -> tuple[float, float]:
    spec = getattr(cmd.program, "spec", None)
    if spec is None or seconds <= 0:
        return 0.0, 0.0
    names = [str(v.arg[0]) for v in spec.variables]
    est = spec.estimates.at(dict(zip(names, cmd.vals, strict=False)))
    return float(est.ops) / seconds * 1e-9, float(est.mem) / seconds * 1e-9


def launch_line(ring: str, cmd: ExecCmd, seconds: float, number: int) -> str:
    """The DEBUG=2 line of one kernel launch."""
    gflops, gbs = _rates(cmd, seconds)
    name = getattr(cmd.program, "name", type(cmd.program).__name__)
    return (
        f"*** {ring:<14s} {number:5d} {name:<28s} arg {len(cmd.bufs):2d} "
        f"tm {seconds * 1e6:10.2f}us ({gflops:8.2f} GFLOP/s {gbs:7.2f} GB/s) "
        f"global {cmd.global_size} local {cmd.local_size}"
    )


def record(
    ring: str,
    cmd: ExecCmd | CopyCmd,
    start_ns: int,
    end_ns: int,
    debug: int | None = None,
    profile: int | None = None,
    slices: Sequence[Slice] = (),
) -> None:
    """Report one finished command (called on the ring's thread, or by a compiled ring's host
    side once it knows the command finished: then with the ``DEBUG``/``PROFILE`` values from
    when it was submitted). ``slices``: the times of a split kernel's slices, if known (those
    given to ``record_slice`` for this command are added)."""
    found = _pending.pop(id(cmd), None) if _pending else None  # dict.pop: atomic under the GIL
    if found is not None and found[0] is cmd:
        slices = [*slices, *found[1]]
    if (DEBUG.value if debug is None else debug) >= 2 and isinstance(cmd, ExecCmd):
        with _lock:
            number = next(_launches)
        print(launch_line(ring, cmd, (end_ns - start_ns) * 1e-9, number), flush=True)
    if PROFILE.value if profile is None else profile:
        if not _HOOKED:
            hook_exit()
        name = getattr(cmd.program, "name", "exec") if isinstance(cmd, ExecCmd) else "copy"
        device, _, engine = ring.rpartition(":")
        note_device(device)
        if _graph_cmds and isinstance(cmd, ExecCmd):
            _graph_recorded(cmd, start_ns, end_ns)
        event: dict[str, Any] = {
            "name": name,
            "cat": "kernel" if isinstance(cmd, ExecCmd) else "copy",
            "ph": "X",
            "ts": start_ns / 1e3,
            "dur": (end_ns - start_ns) / 1e3,
            "pid": device,
            "tid": engine,
            "args": _event_args(cmd),
        }
        with _lock:
            if slices and isinstance(cmd, ExecCmd):
                launch = next(_profiled)
                event["args"]["launch"] = launch
                _events.append(event)
                _events.extend(_slice_event(name, device, engine, launch, len(slices), s)
                               for s in slices)  # fmt: skip
            else:
                _events.append(event)


def _slice_event(name: str, device: str, engine: str, launch: int, n: int, s: Slice) -> Any:
    index, core, start, end = s
    return {"name": name, "cat": "slice", "ph": "X", "ts": start / 1e3, "dur": (end - start) / 1e3,
            "pid": device, "tid": f"{engine} core {core}",
            "args": {"launch": launch, "slice": index, "slices": n}}  # fmt: skip


def record_slice(cmd: ExecCmd, index: int, start_ns: int, end_ns: int,
                 core: int | str | None = None) -> None:  # fmt: skip
    """Note the time of slice ``index`` of a split kernel (for the PROFILE trace) before its
    ``record``: a Python pool calls this from the thread that ran the slice (``core`` None:
    the thread's name). Only while profiling: the caller times slices only then."""
    who = threading.current_thread().name if core is None else core
    with _lock:
        found = _pending.get(id(cmd))
        if found is None or found[0] is not cmd:
            found = _pending[id(cmd)] = (cmd, [])
        found[1].append((index, who, start_ns, end_ns))


class _NoSpan:
    """``host_span`` while PROFILE is off: entering and leaving do nothing."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


class HostSpan:
    """A host span of the PROFILE trace (``with host_span("compile", kernel=name):``)."""

    __slots__ = ("args", "name", "start")

    def __init__(self, name: str, args: dict[str, Any]) -> None:
        self.name, self.args, self.start = name, args, 0

    def __enter__(self) -> None:
        self.start = time.perf_counter_ns()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        end = time.perf_counter_ns()
        if not _HOOKED:
            hook_exit()
        event = {
            "name": self.name,
            "cat": "host",
            "ph": "X",
            "ts": self.start / 1e3,
            "dur": (end - self.start) / 1e3,
            "pid": "host",
            "tid": threading.current_thread().name,
            "args": self.args if kind is None else {**self.args, "error": kind.__name__},
        }
        with _lock:
            _events.append(event)


def host_span(name: str, **args: Any) -> HostSpan | _NoSpan:
    """A context manager timing a host step (schedule, lower, compile, launch) into the
    PROFILE trace; a shared no-op object when PROFILE is off."""
    return HostSpan(name, args) if PROFILE.value else _NO_SPAN


def _event_args(cmd: ExecCmd | CopyCmd) -> dict[str, Any]:
    if isinstance(cmd, CopyCmd):
        return {"bytes": cmd.dest.nbytes}
    ops, mem = _estimates(cmd)
    return {"global": list(cmd.global_size), "local": cmd.local_size, "vals": list(cmd.vals),
            "ops": ops, "mem": mem}  # fmt: skip


def _estimates(cmd: ExecCmd) -> tuple[int, int]:
    """The launch's operation count and bytes moved, from its ProgramSpec (0 without one)."""
    spec = getattr(cmd.program, "spec", None)
    if spec is None:
        return 0, 0
    names = [str(v.arg[0]) for v in spec.variables]
    est = spec.estimates.at(dict(zip(names, cmd.vals, strict=False)))
    return int(est.ops), int(est.mem)


def events() -> list[dict[str, Any]]:
    """The profile events recorded so far."""
    with _lock:
        return list(_events)


def trace_path() -> Path:
    """Where the PROFILE trace goes."""
    if PROFILE_PATH.value:
        return Path(str(PROFILE_PATH.value))
    return Path(tempfile.gettempdir()) / "fusegrad_trace.json"


def write_trace(path: Path | None = None) -> Path:
    """Write the recorded events as Chrome trace JSON; returns the path."""
    out = path or trace_path()
    recorded = events()
    meta = [
        {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": pid}}
        for pid in sorted({e["pid"] for e in recorded})
    ]
    tmp = out.with_suffix(out.suffix + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"traceEvents": meta + recorded, "displayTimeUnit": "ns"}))
    tmp.replace(out)
    return out


def finish_in_flight() -> None:
    """Wait for the work every opened device still runs, so its commands are reported (a
    compiled ring reports a command once the host learns it finished)."""
    from fusegrad.runtime.device import Device

    for dev in Device.opened():
        try:
            dev.synchronize()
        except Exception as e:  # a failed kernel: its error was the program's to raise
            print(f"fusegrad: PROFILE: {dev.device}: {e}")


def _write_at_exit() -> None:
    if not PROFILE.value:
        return
    finish_in_flight()
    if events():
        print(f"fusegrad: PROFILE trace written to {write_trace()}")


_HOOKED: list[bool] = []


def hook_exit() -> None:
    """Write the trace at exit, after in-flight work finished and before the devices close
    (exit hooks run last-registered first: this one is registered after the registry's)."""
    if not _HOOKED:
        _HOOKED.append(True)
        atexit.register(_write_at_exit)
