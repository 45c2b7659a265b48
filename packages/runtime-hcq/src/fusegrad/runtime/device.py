"""Devices: ``Compiled`` (a device = allocator + renderer/compiler + program loader + HCQ
rings) and the registry ``Device`` (``Device["CPU"]``, ``Device.DEFAULT`` from ``DEV``,
third-party devices from the ``fusegrad.backends`` entry-point group).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.metadata
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fusegrad.codegen import Compiler, ProgramSpec, Renderer, Timer
from fusegrad.runtime.flags import DEV, PROFILE
from fusegrad.runtime.hcq import Command, ExecCmd, HWQueue, Ring, Signal, SignalCmd
from fusegrad.runtime.memory import Allocator
from fusegrad.runtime.profiler import (
    ProfileEvent,
    device_events,
    note_device,
    note_program,
    record,
)
from fusegrad.uop import DEBUG, Context, Ops, UOp, sym_infer

# -- programs -------------------------------------------------------------------------------------


class Program:
    """A loaded kernel. ``__call__`` runs one slice (core id) of a launch; ``slices(vals)``
    is how many slices a launch has (the core count of a THREAD-split kernel, else 1)."""

    def __init__(self, name: str, lib: bytes, spec: ProgramSpec | None = None) -> None:
        self.name = name
        self.lib = lib
        self.spec = spec
        self.core_size = _core_size(spec.uops if spec is not None else ())

    def slices(self, vals: Sequence[int]) -> int:
        """Core slices of one launch with these Variable values."""
        if self.core_size is None:
            return 1
        if isinstance(self.core_size, int):
            return self.core_size
        names = _variable_names(self.spec)
        return int(sym_infer(self.core_size, dict(zip(names, vals, strict=False))))

    def __call__(
        self,
        bufs: Sequence[Any],
        vals: Sequence[int],
        global_size: Sequence[int],
        local_size: Sequence[int] | None,
        core: int = 0,
    ) -> None:
        """Run slice ``core`` of a launch (override)."""
        raise NotImplementedError(f"{type(self).__name__} can't run programs")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _core_size(uops: Sequence[UOp]) -> int | UOp | None:
    core = next((u for u in uops if u.op is Ops.SPECIAL and u.arg == "core"), None)
    if core is None:
        return None
    end = core.src[0]
    return int(end.arg) if end.op is Ops.CONST else end


def _variable_names(spec: ProgramSpec | None) -> list[str]:
    if spec is None:
        return []
    return [str(v.arg[0]) for v in spec.variables]


# -- compiler options -----------------------------------------------------------------------------


class Unavailable(RuntimeError):
    """A renderer/compiler (or device) that can't be used on this machine; says why."""


@dataclass(frozen=True)
class CompilerOption:
    """One way a device can compile: a name (``LLVM``, ``C``) and a factory returning the
    renderer and compiler; the factory raises (ImportError, Unavailable...) when they can't
    be used here."""

    name: str
    factory: Callable[[], tuple[Renderer, Compiler]]


def _as_option(given: CompilerOption | tuple[Any, Any], index: int) -> CompilerOption:
    """One of ``Compiled``'s ``renderers`` as a ``CompilerOption`` (see ``Compiled``)."""
    if isinstance(given, CompilerOption):
        return given
    if not isinstance(given, tuple) or len(given) != 2:
        raise TypeError(
            f"Compiled: renderers[{index}] must be a CompilerOption or a (renderer, compiler) "
            f"pair, got {given!r} (a fusegrad renderer does not carry its compiler)"
        )
    renderer, compiler = given
    rclass = renderer if isinstance(renderer, type) else type(renderer)
    name = rclass.__name__.removesuffix("Renderer") or rclass.__name__

    def factory() -> tuple[Renderer, Compiler]:
        r = renderer() if isinstance(renderer, type) else renderer
        c = compiler() if isinstance(compiler, type) else compiler
        return r, c

    return CompilerOption(name, factory)


def _status(option: CompilerOption) -> tuple[Renderer, Compiler] | str:
    try:
        return option.factory()
    except Exception as e:
        return f"{type(e).__name__}: {e}"


# -- BEAM's timer --------------------------------------------------------------------------------


class DeviceTimer:
    """Times kernels on a device for BEAM (``Compiled.timer``, see ``fusegrad.codegen.Timer``).

    ``timer(spec, lib, limit)`` compiles ``spec`` unless BEAM passes its binary ``lib``
    (candidates are not put in the compile cache: there are hundreds), loads it, and runs it
    on zero-filled scratch buffers of the kernel's sizes and dtypes (Variables at the middle
    of their range) up to ``runs`` times; the seconds between the timestamps the device
    writes around the launch, fastest run. A first run slower than ``limit`` (BEAM's timeout)
    returns at once, and one slower than ``limit / 5`` (twice the best so far, with BEAM's
    default timeout) is not repeated: it cannot win.
    """

    runs = 3

    def __init__(self, device: Compiled) -> None:
        self.dev = device

    @property
    def device(self) -> str:
        """The device's name (part of BEAM's cache key)."""
        return self.dev.device

    @property
    def compiler(self) -> Compiler:
        """The device's compiler: BEAM builds candidates with its class in worker processes."""
        return self.dev.compiler

    def __call__(
        self, spec: ProgramSpec, lib: bytes | None = None, limit: float = math.inf
    ) -> float:
        """Seconds of the fastest run of ``spec`` (see the class docstring)."""
        binary = lib if lib is not None else self.dev.compiler.compile(_as_text(spec.src))
        program = self.dev.load(spec, binary)
        values = {str(v.arg[0]): (int(v.vmin) + int(v.vmax)) // 2 for v in spec.variables}
        gs, ls = spec.launch_dims(values)
        scratch = [self._scratch(b.size * b.dtype.itemsize) for b in spec.buffers]
        try:
            best = math.inf
            for _ in range(self.runs):
                seconds = self._run(program, scratch, list(values.values()), gs, ls)
                best = min(best, seconds)
                if seconds > limit / 5:
                    break
            return best
        finally:
            for opaque, nbytes in scratch:
                self.dev.allocator.free(opaque, nbytes)

    def _scratch(self, nbytes: int) -> tuple[Any, int]:
        nbytes = max(nbytes, 1)
        opaque = self.dev.allocator.alloc(nbytes)
        # memory the host can't write (no _copyin): the kernel reads what is there
        with contextlib.suppress(NotImplementedError):
            self.dev.allocator._copyin(opaque, memoryview(bytes(nbytes)))
        return opaque, nbytes

    def _run(
        self,
        program: Program,
        scratch: list[tuple[Any, int]],
        vals: list[int],
        gs: Sequence[int],
        ls: Sequence[int] | None,
    ) -> float:
        start, end = Signal(name="beam start"), Signal(name="beam end")
        bufs = [opaque for opaque, _ in scratch]
        queue = self.dev.queue().timestamp(start).exec(program, bufs, vals, gs, ls)
        with Context(DEBUG=0):  # BEAM's runs are not the program's launches (DEBUG=2 lines)
            queue.timestamp(end).submit(self.dev)
            self.dev.synchronize()
        return (end.timestamp - start.timestamp) / 1e9


# -- devices --------------------------------------------------------------------------------------

Runtime = Callable[[str, bytes, ProgramSpec | None], Program]


class Compiled:
    """A device: an allocator, ways to compile (``renderers``: renderer + compiler options,
    the first that works unless ``DEV`` names one), a program loader (``runtime``), and HCQ
    rings; ``graph`` (a batching class, see the ``graph`` attribute) and ``arch`` optional.

    Each of ``renderers`` is a ``CompilerOption`` (a name and a factory), or a (renderer,
    compiler) pair: instances, or classes made when the option is first chosen (its name
    then the renderer class's, less a ``Renderer`` suffix: ``(CRenderer, CCompiler)`` is
    ``C``). tinygrad passes renderer classes alone (its renderers know their compiler);
    a fusegrad renderer doesn't, so a bare class is refused with a ``TypeError``.

    A third-party backend subclasses this and ``Renderer`` (see docs/backends.md). Every queue
    submitted to a ring is followed by a step of that ring's timeline signal, so
    ``synchronize`` waits for everything submitted before it.
    """

    def __init__(
        self,
        device: str,
        allocator: Allocator[Any],
        renderers: Sequence[CompilerOption | tuple[Any, Any]],
        runtime: Runtime | None,
        graph: Any = None,
        arch: str | None = None,
    ) -> None:
        self.device = device
        self.allocator = allocator
        self.compilers = [_as_option(r, i) for i, r in enumerate(renderers)]
        self.runtime = runtime
        if graph is not None:
            self.graph = graph
        if arch is not None:  # a subclass may have set its own before calling this
            self.arch = arch
        self.choice: str | None = _dev_choice(device)
        self._rings: dict[str, Any] = {}  # engine -> Ring-like (submit/check/close)
        self._timelines: dict[str, tuple[Signal, list[int]]] = {}
        self._lock = threading.Lock()
        self._selected: tuple[Renderer, Compiler] | None = None
        self.closed = False
        self.timer: Timer = DeviceTimer(self)
        """What BEAM times this device's kernels with (a ``fusegrad.codegen.Timer``: compile,
        load, run on scratch buffers; ``DeviceTimer``). A device may set its own."""

    profile_events: list[ProfileEvent] = device_events
    """The typed records of ``PROFILE=1`` (tinygrad's ``Compiled.profile_events``): one list
    for every device (``fusegrad.runtime.profiler.device_events``)."""

    @property
    def renderers(self) -> list[CompilerOption]:
        """The ways this device can compile, default first (tinygrad's name; also
        ``compilers``)."""
        return self.compilers

    arch: Any = None
    """The device's architecture (``sm_80``...; None where it has one kind)."""

    graph: Any = None
    """The device's batched submission of a launch plan's kernels (an ``HCQGraph`` class,
    built as ``graph(device, exec_commands)``), or None where it offers none."""

    # -- compiling --------------------------------------------------------------------------
    def compiler_status(self) -> list[tuple[str, str]]:
        """(option name, ``"ok"`` or ``"unavailable: <reason>"``) for every option."""
        out = []
        for opt in self.compilers:
            st = _status(opt)
            out.append((opt.name, "ok" if isinstance(st, tuple) else f"unavailable: {st}"))
        return out

    def select_compiler(self, name: str | None) -> tuple[Renderer, Compiler]:
        """Use the option ``name`` (None: the first that works); raises Unavailable."""
        opts = [o for o in self.compilers if name is None or o.name.upper() == name.upper()]
        if not opts:
            known = [o.name for o in self.compilers]
            raise Unavailable(f"{self.device}: no renderer {name!r} (has {known})")
        reasons = []
        for opt in opts:
            st = _status(opt)
            if isinstance(st, tuple):
                self._selected = st
                return st
            reasons.append(f"{opt.name}: {st}")
        raise Unavailable(f"{self.device}: no renderer available ({'; '.join(reasons)})")

    @property
    def renderer(self) -> Renderer:
        """The renderer kernels for this device are printed with."""
        return (self._selected or self.select_compiler(self.choice))[0]

    @property
    def compiler(self) -> Compiler:
        """The compiler paired with ``renderer``."""
        return (self._selected or self.select_compiler(self.choice))[1]

    def compile(self, src: str) -> bytes:
        """Rendered source -> binary, through the on-disk cache."""
        return self.compiler.compile_cached(src)

    def load(self, spec: ProgramSpec, lib: bytes | None = None) -> Program:
        """A runnable Program for ``spec`` (compiled now unless ``lib`` is given)."""
        if self.runtime is None:
            raise Unavailable(f"{self.device}: this device runs no programs")
        binary = lib if lib is not None else self.compile(_as_text(spec.src))
        program = self.runtime(spec.function_name, binary, spec)
        if PROFILE.value:
            note_device(self.device, self.profile_props())
            note_program(self.device, program.name, binary, getattr(program, "address", None))
        return program

    def profile_props(self) -> dict[str, Any]:
        """What the ``ProfileDeviceEvent`` of this device says it is."""
        props: dict[str, Any] = {"device": type(self).__name__, "arch": self.arch}
        if self._selected is not None:
            props["renderer"] = type(self._selected[0]).__name__
            props["compiler"] = type(self._selected[1]).__name__
        return props

    # -- HCQ ----------------------------------------------------------------------------------
    def ring(self, engine: str = "compute") -> Any:
        """The ring (engine thread) running queues of kind ``engine``, started on first use."""
        ring = self._rings.get(engine)
        if ring is not None:
            return ring
        with self._lock:
            if self.closed:
                raise RuntimeError(f"{self.device}: the device was closed")
            if engine not in self._rings:
                self._rings[engine] = self._new_ring(f"{self.device}:{engine}")
                if PROFILE.value:
                    note_device(self.device, self.profile_props())
            return self._rings[engine]

    def _new_ring(self, name: str) -> Any:
        """A ring for engine ``name`` (a Python ring; the CPU device runs compiled ones)."""
        return _TimelineRing(name, self._execute, record)

    def _execute(self, cmd: ExecCmd) -> None:
        """Run every slice of a launch (devices with cores override to run them in parallel)."""
        for core in range(cmd.program.slices(cmd.vals)):
            cmd.program(cmd.bufs, cmd.vals, cmd.global_size, cmd.local_size, core)

    def queue(self, engine: str = "compute") -> HWQueue:
        """A new, empty command queue for ``engine``."""
        return HWQueue(engine)

    def exec(
        self,
        program: Program,
        bufs: Sequence[Any],
        vals: Sequence[int] = (),
        global_size: Sequence[int] = (1, 1, 1),
        local_size: Sequence[int] | None = None,
        wait: bool = False,
    ) -> None:
        """Submit one launch (asynchronous unless ``wait``; DEBUG>=2 waits to report it)."""
        self.queue().exec(program, bufs, vals, global_size, local_size).submit(self)
        if wait or DEBUG.value >= 2:
            self.synchronize()

    def synchronize(self) -> None:
        """Wait until every queue submitted so far is done; raise the first error any of them
        hit (a failed kernel's exception)."""
        for ring in list(self._rings.values()):
            ring.timeline.wait(ring.submitted, abort=lambda r=ring: not r.alive)
            ring.check()

    def close(self) -> None:
        """Stop the rings (work not started yet is dropped); idempotent."""
        with self._lock:
            self.closed = True
            rings, self._rings = list(self._rings.values()), {}
        for ring in rings:
            ring.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.device}>"


def _as_text(src: str | bytes) -> str:
    return src if isinstance(src, str) else src.decode()


class _TimelineRing(Ring):
    """A ring that appends a step of its own timeline signal to every submitted queue."""

    def __init__(self, name: str, execute: Callable[[ExecCmd], None], observe: Any) -> None:
        self.timeline = Signal(name=f"{name} timeline")
        self.submitted = 0
        self._count_lock = threading.Lock()
        super().__init__(name, execute, observe)

    def submit(self, commands: list[Command]) -> None:
        with self._count_lock:
            self.submitted += 1
            super().submit([*commands, SignalCmd(self.timeline, self.submitted)])


# -- the registry ---------------------------------------------------------------------------------

BUILTIN_DEVICES: dict[str, str] = {
    "CPU": "fusegrad.runtime.device_cpu:CPUDevice",
    "PYTHON": "fusegrad.runtime.device_python:PythonDevice",
    "NULL": "fusegrad.runtime.device_null:NullDevice",
    "DISK": "fusegrad.runtime.device_disk:DiskDevice",
    "CUDA": "fusegrad.runtime.device_cuda:CUDADevice",
}
BACKENDS_GROUP = "fusegrad.backends"
DEFAULT_ORDER = ("CPU", "PYTHON")


def parse_dev(dev: str) -> tuple[str, str, str | None]:
    """``DEV`` split into (device name, kind, renderer): ``CPU:LLVM`` -> ("CPU", "CPU",
    "LLVM"); ``CPU:1`` -> ("CPU:1", "CPU", None)."""
    kind, _, rest = dev.partition(":")
    kind = kind.upper()
    if not rest or rest.isdigit() or kind == "DISK":
        return canonicalize(dev), kind, None
    return kind, kind, rest.upper()


def _dev_choice(device: str) -> str | None:
    if not DEV.value:
        return None
    _, kind, renderer = parse_dev(str(DEV.value))
    return renderer if kind == device.partition(":")[0] else None


def canonicalize(name: str) -> str:
    """``cpu`` -> ``CPU``, ``CPU:0`` -> ``CPU``, ``disk:/x`` -> ``DISK:/x``."""
    found = _CANONICAL.get(name) if isinstance(name, str) else None
    if found is not None:
        return found
    canon = _canonicalize(name)
    if len(_CANONICAL) < 4096:
        _CANONICAL[name] = canon
    return canon


_CANONICAL: dict[str, str] = {}


def _canonicalize(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"device name must be a non-empty str, got {name!r}")
    kind, sep, rest = name.partition(":")
    kind = kind.upper()
    if kind == "DISK":
        return f"DISK:{rest}"
    if sep and not rest.isdigit():
        raise ValueError(f"device {name!r}: expected KIND or KIND:index (e.g. CPU:1)")
    return kind if not sep or int(rest) == 0 else f"{kind}:{int(rest)}"


def _plugins() -> dict[str, importlib.metadata.EntryPoint]:
    eps = importlib.metadata.entry_points(group=BACKENDS_GROUP)
    return {ep.name.upper(): ep for ep in eps if ep.name.upper() not in BUILTIN_DEVICES}


def _load_class(kind: str) -> Callable[[str], Compiled]:
    if kind in BUILTIN_DEVICES:
        module, _, attr = BUILTIN_DEVICES[kind].partition(":")
        cls: Any = getattr(importlib.import_module(module), attr)
        return cls  # type: ignore[no-any-return]
    plugin = _plugins().get(kind)
    if plugin is None:
        known = sorted(set(BUILTIN_DEVICES) | set(_plugins()))
        raise KeyError(f"no device kind {kind!r}; known: {known}")
    return plugin.load()  # type: ignore[no-any-return]


def check_known(name: str) -> str:
    """``name`` in canonical form, after checking that its kind is one the registry can open
    (built in or a plugin): ``ValueError`` listing the known kinds otherwise."""
    canon = canonicalize(name)
    kind = canon.partition(":")[0]
    if kind in BUILTIN_DEVICES or kind in _plugins():
        return canon
    known = sorted(set(BUILTIN_DEVICES) | set(_plugins()))
    raise ValueError(f"unknown device {name!r}: known device kinds are {known}")


class DeviceRegistry:
    """``Device[name]``: the opened device of that name (opened on first use, then cached).

    Names are ``KIND[:index]`` (``CPU``, ``CPU:1``, ``PYTHON``, ``NULL``) or ``DISK:<path>``;
    kinds come built in or from packages registering under the ``fusegrad.backends``
    entry-point group (name = kind, value = a Compiled subclass taking the device name).
    """

    def __init__(self) -> None:
        self._opened: dict[str, Compiled] = {}
        self._lock = threading.RLock()
        self._default: str | None = None

    def canonicalize(self, name: str) -> str:
        """The canonical form of a device name."""
        return canonicalize(name)

    def check_known(self, name: str) -> str:
        """The canonical form of ``name``; ``ValueError`` listing the known kinds when no
        device of its kind can be opened (see ``check_known``)."""
        return check_known(name)

    def __getitem__(self, name: str) -> Compiled:
        key = canonicalize(name)
        dev = self._opened.get(key)
        if dev is not None and not dev.closed:
            return dev  # opened already: no lock needed to read the table
        with self._lock:
            dev = self._opened.get(key)
            if dev is None or dev.closed:
                dev = self._opened[key] = _load_class(key.partition(":")[0])(key)
            return dev

    def kinds(self) -> list[str]:
        """Every device kind: built in, then plugins."""
        return [*BUILTIN_DEVICES, *sorted(_plugins())]

    @property
    def DEFAULT(self) -> str:
        """The default device: ``DEV``'s device, else the first of CPU, PYTHON that has a
        working renderer."""
        if self._default is not None:
            return self._default
        if DEV.value:
            return parse_dev(str(DEV.value))[0]
        for kind in DEFAULT_ORDER:
            if any(st == "ok" for _, st in self[kind].compiler_status()):
                return kind
        return "PYTHON"

    @DEFAULT.setter
    def DEFAULT(self, name: str | None) -> None:
        # None removes the override: the default follows DEV again
        self._default = None if name is None else check_known(name)

    @property
    def default_override(self) -> str | None:
        """The device set with ``Device.DEFAULT = name`` (None: the default follows DEV)."""
        return self._default

    def opened(self) -> list[Compiled]:
        """The devices opened so far."""
        return list(self._opened.values())

    def close_all(self) -> None:
        """Close every opened device (runs at interpreter exit)."""
        with self._lock:
            devs, self._opened = list(self._opened.values()), {}
        for dev in devs:
            dev.close()


Device = DeviceRegistry()
atexit.register(Device.close_all)
