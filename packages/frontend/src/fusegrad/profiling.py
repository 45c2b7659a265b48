"""tinygrad's host-side profiling and debugging helpers (re-exported by ``fusegrad.helpers``).

* ``cpu_profile(name)``: a context manager timing a host range. Under ``PROFILE=1`` the
  range is kept in ``cpu_events`` (a ``ProfileRangeEvent``) and written into the PROFILE
  trace next to fusegrad's own host spans (``fusegrad.runtime.host_span``).
* ``profile_marker(name)``: a point in time, kept the same way (a ``ProfilePointEvent``).
* ``get_stacktrace(frame)``, ``printable((file, line))``: where Python code is.
* ``cpu_objdump(lib)``: the disassembly of a compiled CPU kernel (objdump).
"""

from __future__ import annotations

import contextlib
import decimal
import linecache
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from fusegrad.runtime import ProfileEvent, host_span
from fusegrad.uop import ContextVar

PROFILE = ContextVar("PROFILE", 0)  # the runtime's setting: the same object


def perf_counter_us() -> decimal.Decimal:
    """``time.perf_counter_ns()`` in microseconds, exactly."""
    return decimal.Decimal(time.perf_counter_ns()) / 1000


@dataclass(frozen=True)
class TracingKey:
    """The name of a profiled range: ``display_name`` shown, ``keys`` identifying it, ``ret``
    what it produced, ``tb`` where it was opened."""

    display_name: str
    keys: tuple[Any, ...] = ()
    ret: Any = None
    tb: tuple[tuple[Any, ...], ...] | None = field(default_factory=lambda: None)


@dataclass
class ProfileRangeEvent(ProfileEvent):
    """A timed range on ``device`` (``st``/``en`` in microseconds of ``perf_counter``)."""

    device: str
    name: str | TracingKey
    st: decimal.Decimal
    en: decimal.Decimal | None = None
    profile_key: bytes | None = None


@dataclass
class ProfilePointEvent(ProfileEvent):
    """A point in time on ``device`` (``ts`` in microseconds of ``perf_counter``)."""

    device: str
    name: str
    key: Any
    arg: dict[str, Any] = field(default_factory=dict)
    ts: decimal.Decimal = field(default_factory=perf_counter_us)


cpu_events: list[ProfileEvent] = []
"""The host events ``cpu_profile`` and ``profile_marker`` recorded under ``PROFILE=1``."""


@contextlib.contextmanager
def cpu_profile(
    name: str | TracingKey,
    device: str = "TINY",
    display: bool = True,
    profile_key: bytes | None = None,
) -> Iterator[ProfileRangeEvent]:
    """Time the ``with`` body as a ProfileRangeEvent; under ``PROFILE=1`` (and ``display``)
    it goes into ``cpu_events`` and the PROFILE trace."""
    event = ProfileRangeEvent(device, name, perf_counter_us(), profile_key=profile_key)
    label = name.display_name if isinstance(name, TracingKey) else str(name)
    span = host_span(label, device=device) if display else contextlib.nullcontext()
    try:
        with span:
            yield event
    finally:
        event.en = perf_counter_us()
        if PROFILE.value and display:
            cpu_events.append(event)


def profile_marker(name: str, color: str = "gray") -> None:
    """Mark this moment in the profile (``PROFILE=1``): a ProfilePointEvent in
    ``cpu_events`` and a zero-length span in the trace."""
    if not PROFILE.value:
        return
    cpu_events.append(ProfilePointEvent("TINY", "marker", None, {"name": name, "color": color}))
    with host_span(f"marker: {name}", color=color):
        pass


def get_stacktrace(frm: FrameType | None, max_frames: int = 30) -> tuple[tuple[Any, ...], ...]:
    """``(file, line, function, source line)`` of ``frm`` and its callers, innermost first, at
    most ``max_frames``."""
    out: list[tuple[Any, ...]] = []
    while frm is not None and len(out) < max_frames:
        code = frm.f_code
        line = frm.f_lineno or 0
        text = linecache.getline(code.co_filename, line).strip()
        out.append((code.co_filename, line, code.co_name, text))
        frm = frm.f_back
    return tuple(out)


def printable(loc: tuple[str, int]) -> str:
    """The source text at ``(file, line)``, stripped (``<missing>`` when it can't be read)."""
    text = linecache.getline(loc[0], loc[1]).strip()
    return text if text else "<missing>"


def cpu_objdump(lib: bytes, objdump_tool: str = "objdump") -> None:
    """Print the disassembly of ``lib`` (a compiled CPU kernel: an ELF object) with
    ``objdump_tool`` (FileNotFoundError when the tool isn't installed)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.o"
        path.write_bytes(lib)
        try:
            out = subprocess.run(
                [objdump_tool, "-d", str(path)], capture_output=True, text=True, check=False
            )
        except FileNotFoundError:
            raise FileNotFoundError(f"cpu_objdump: {objdump_tool!r} is not installed") from None
    if out.returncode != 0:
        raise ValueError(f"cpu_objdump: {objdump_tool} failed: {out.stderr.strip()}")
    print(out.stdout)


__all__ = [
    "ProfileEvent",
    "ProfilePointEvent",
    "ProfileRangeEvent",
    "TracingKey",
    "cpu_events",
    "cpu_objdump",
    "cpu_profile",
    "get_stacktrace",
    "perf_counter_us",
    "printable",
    "profile_marker",
]
