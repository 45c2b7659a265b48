"""Per-command device times: the ``DEBUG=2`` launch line and the ``PROFILE=1`` trace.

Rings call ``record`` after every exec and copy command with the engine's start and end
clock (``time.perf_counter_ns``). With ``DEBUG>=2`` each kernel prints one line: device,
name, launch size, time, GFLOP/s and GB/s from its ProgramSpec's estimates. With
``PROFILE=1`` the events are kept and written at exit as a Chrome trace (open it in
https://ui.perfetto.dev or chrome://tracing): device spans per command (``pid`` the device,
``tid`` its engine, ``cat`` ``kernel`` or ``copy``) and host spans (``pid`` ``host``, ``tid``
the thread, ``cat`` ``host``) of scheduling, lowering, compiling and launching, which the
engine opens with ``host_span`` (a no-op object when PROFILE is off).
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from fusegrad.runtime.flags import PROFILE, PROFILE_PATH
from fusegrad.runtime.hcq import CopyCmd, ExecCmd
from fusegrad.uop import DEBUG

_events: list[dict[str, Any]] = []
_lock = threading.Lock()
_launches = itertools.count(1)


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
) -> None:
    """Report one finished command (called on the ring's thread, or by a compiled ring's host
    side once it knows the command finished: then with the ``DEBUG``/``PROFILE`` values from
    when it was submitted)."""
    if (DEBUG.value if debug is None else debug) >= 2 and isinstance(cmd, ExecCmd):
        with _lock:
            number = next(_launches)
        print(launch_line(ring, cmd, (end_ns - start_ns) * 1e-9, number), flush=True)
    if PROFILE.value if profile is None else profile:
        if not _HOOKED:
            hook_exit()
        name = getattr(cmd.program, "name", "exec") if isinstance(cmd, ExecCmd) else "copy"
        device, _, engine = ring.rpartition(":")
        event = {
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
            _events.append(event)


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
