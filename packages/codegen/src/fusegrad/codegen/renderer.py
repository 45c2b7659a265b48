"""The Renderer interface: what a target can do, and how it prints a linear program.

A backend is a ``Renderer`` subclass (capabilities + ``render``) and a ``Compiler`` subclass
(source -> binary); the runtime pairs them with a device. Everything the lowering pipeline
needs to know about a target is a field here, so the pipeline never asks "which backend is
this?" — it asks "does the target have local memory?", "which vector widths?", and so on.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from fusegrad.codegen.flags import CACHELEVEL, FUSEGRAD_CACHE_DIR, XDG_CACHE_HOME
from fusegrad.uop import DType, Ops, PatternMatcher, UOp, dtypes, prod, sym_infer


@dataclass(frozen=True, slots=True)
class TensorCore:
    """A matrix instruction the target has: ``dims = (N, M, K)``, C[M,N] += A[M,K] @ B[K,N] per
    ``threads`` lanes, with the given input and accumulator dtypes."""

    dims: tuple[int, int, int]
    threads: int
    dtype_in: DType
    dtype_out: DType
    elements_per_thread: tuple[int, int, int]
    opts: tuple[str, ...] = ()
    swizzle: tuple[Any, ...] = ()

    def __repr__(self) -> str:
        n, m, k = self.dims
        return f"TensorCore({n}x{m}x{k}, {self.dtype_in.name}->{self.dtype_out.name})"


class DTypeSet(frozenset[DType]):
    """A frozenset of dtypes that can also be called: ``renderer.supported_dtypes`` is a set
    (``dt in r.supported_dtypes``) and, as in tinygrad, a method (``r.supported_dtypes()``)."""

    def __call__(self) -> frozenset[DType]:
        return self


class Renderer:
    """A target's capabilities and its printer. Subclass and override the class attributes.

    Capabilities (class attributes):

    * ``device``: the device kind this renders for (``"CPU"``, ``"CUDA"``...)
    * ``suffix``: a short name for the renderer (``"LLVM"``, ``"C"``)
    * ``vector_widths``: element counts the target has vector types for, per scalar dtype;
      UPCAST axes become vectors of these widths, others are split (devectorized)
    * ``has_local``: GPU-style workgroups with local ids; ``has_shared``: workgroup memory
    * ``has_threads``: CPU-style cores that split a kernel's outer loop (THREAD opt)
    * ``global_max`` / ``local_max``: size limits of the launch grid per axis
    * ``shared_max``: bytes of workgroup memory; ``max_threads``: cores for THREAD
    * ``supported_dtypes``: scalar dtypes the target handles natively (others are emulated);
      a subclass may assign any frozenset, it is made a callable ``DTypeSet``
    * ``code_for_op``: ALU ops it renders natively (the pipeline decomposes the rest)
    * ``vector_approximated``: ops in ``code_for_op`` that it renders natively for scalars only;
      on vectors the lowering approximates them (a libm-backed op would be called lane by lane)
    * ``tensor_cores``: matrix instructions, for the TC opt
    * ``group_top``: the hand-coded heuristics split a grouped reduction with GROUPTOP (each
      thread sums one contiguous run: coalesced on GPUs, where a warp's loads at one step fall
      on adjacent elements) rather than GROUP (threads interleaved element by element). False
      where a workgroup's invocations are SIMD lanes of one CPU core (llvmpipe): there GROUP
      keeps a gather's lanes on adjacent elements where GROUPTOP puts them a run apart
    * ``simd_lanes``: a workgroup's invocations are the SIMD lanes of one CPU core (llvmpipe):
      the hand-coded heuristics give the lanes the innermost part of an axis (LOCAL before
      UPCAST: neighbouring lanes on neighbouring elements, one vector load instead of a
      gather) and block a matmul for one core's registers
    * ``extra_matcher``: target-specific rewrite rules run at the end of lowering
    * ``index_dtype_32``: whether 32-bit index math is preferred where provably in range
    * ``no_int64_alu``: the target has no 64-bit integer ALU (a 32-bit target): the lowering
      computes int64/uint64 as pairs of uint32 words (``lower/int64_emulation.py`` lists what
      is supported); buffers of them are still int64/uint64 to the runtime
    """

    device: str = ""
    suffix: str = ""
    vector_widths: ClassVar[dict[DType, tuple[int, ...]]] = {}
    has_local: bool = False
    has_shared: bool = False
    has_threads: bool = False
    global_max: tuple[int, ...] | None = (0x8FFFFFFF, 65535, 65535)
    local_max: tuple[int, ...] | None = (1024, 1024, 64)
    shared_max: int = 32768
    max_threads: int = 1
    supported_dtypes: frozenset[DType] = DTypeSet(
        frozenset(dtypes.all) - {dtypes.weakint, dtypes.weakfloat}
    )
    code_for_op: ClassVar[dict[Ops, Callable[..., str]]] = {}
    vector_approximated: ClassVar[frozenset[Ops]] = frozenset()
    tensor_cores: tuple[TensorCore, ...] = ()
    group_top: bool = True
    simd_lanes: bool = False
    extra_matcher: PatternMatcher | None = None
    index_dtype_32: bool = True
    no_int64_alu: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("supported_dtypes")
        if isinstance(own, frozenset) and not isinstance(own, DTypeSet):
            cls.supported_dtypes = DTypeSet(own)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "supported_dtypes" and isinstance(value, frozenset):
            value = DTypeSet(value)
        super().__setattr__(name, value)

    def render(self, uops: list[UOp], name: str | None = None) -> str | bytes:
        """Print a linear program (see ``fusegrad.codegen.spec`` for its form) as one kernel
        function called ``name`` (the ProgramSpec's name; the renderer's default if None)."""
        raise NotImplementedError(f"{type(self).__name__} must implement render()")

    @property
    def target_key(self) -> str:
        """What makes this renderer's output differ from another instance's (cache key)."""
        return f"{type(self).__module__}.{type(self).__qualname__}:{self.device}:{self.suffix}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.device}:{self.suffix})"


@dataclass(frozen=True, slots=True)
class Estimates:
    """Work of one kernel run: ALU ops, bytes loaded+stored (``lds``), and distinct bytes of
    memory touched (``mem``). Symbolic when the kernel has Variables."""

    ops: Any = 0
    lds: Any = 0
    mem: Any = 0

    def __add__(self, other: Estimates) -> Estimates:
        return Estimates(self.ops + other.ops, self.lds + other.lds, self.mem + other.mem)

    def simplify(self) -> Estimates:
        """Each field simplified when it is symbolic."""

        def simple(x: Any) -> Any:
            return x.ssimplify() if isinstance(x, UOp) else x

        return Estimates(simple(self.ops), simple(self.lds), simple(self.mem))

    def at(self, var_vals: Mapping[Any, int]) -> Estimates:
        """The numbers for particular Variable values."""
        return Estimates(*(sym_infer(x, var_vals) for x in (self.ops, self.lds, self.mem)))


@dataclass(frozen=True, slots=True)
class BufferParam:
    """A buffer parameter of a program: its slot, dtype and element count, and whether the
    kernel reads and/or writes it."""

    slot: int
    dtype: DType
    size: int
    read: bool
    written: bool


@dataclass(frozen=True)
class ProgramSpec:
    """A rendered kernel ready to compile and launch.

    ``global_size``/``local_size`` may contain Variables (``launch_dims`` fills them in);
    ``variables`` are the scalar parameters after the buffers, in order.
    """

    name: str
    src: str | bytes
    device: str
    ast: UOp
    uops: tuple[UOp, ...] = ()
    buffers: tuple[BufferParam, ...] = ()
    variables: tuple[UOp, ...] = ()
    global_size: tuple[Any, ...] = (1, 1, 1)
    local_size: tuple[Any, ...] | None = None
    estimates: Estimates = field(default_factory=Estimates)
    applied_opts: tuple[Any, ...] = ()

    @property
    def outs(self) -> list[int]:
        """Slots of the buffers the kernel writes."""
        return [b.slot for b in self.buffers if b.written]

    @property
    def ins(self) -> list[int]:
        """Slots of the buffers the kernel reads."""
        return [b.slot for b in self.buffers if b.read]

    def launch_dims(
        self, var_vals: dict[str, int]
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """(global size, local size) as ints for the given Variable values."""
        gs = tuple(int(sym_infer(g, var_vals)) for g in self.global_size)
        ls = (
            None
            if self.local_size is None
            else tuple(int(sym_infer(x, var_vals)) for x in self.local_size)
        )
        return gs, ls

    @property
    def function_name(self) -> str:
        """The symbol name of the kernel in the compiled code."""
        return self.name

    @property
    def work_items(self) -> Any:
        """Total launched threads (symbolic if sizes are)."""
        return prod(self.global_size) * (prod(self.local_size) if self.local_size else 1)


# -- compilers ------------------------------------------------------------------------------------


class CompileError(RuntimeError):
    """A kernel failed to compile: carries the kernel name, the compiler's message and the
    offending source lines. ``CompileError("text")`` (tinygrad's form: one message) is the
    message alone, with no kernel name."""

    def __init__(
        self, kernel: str, message: str | None = None, source: str = "", lines: Sequence[int] = ()
    ) -> None:
        if message is None:
            self.kernel, self.compiler_message, self.source = "", kernel, source
            super().__init__(kernel)
            return
        self.kernel = kernel
        self.compiler_message = message
        self.source = source
        shown = _source_excerpt(source, lines)
        super().__init__(
            f"compiling {kernel} failed:\n{message.strip()}" + (f"\n{shown}" if shown else "")
        )


def _source_excerpt(source: str, lines: Sequence[int], context: int = 2) -> str:
    if not source or not lines:
        return ""
    src_lines = source.splitlines()
    keep: set[int] = set()
    for n in lines:
        keep.update(range(max(1, n - context), min(len(src_lines), n + context) + 1))
    return "\n".join(f"{i:5d} | {src_lines[i - 1]}" for i in sorted(keep))


def cache_dir() -> Path:
    """Where fusegrad keeps its on-disk caches (``FUSEGRAD_CACHE_DIR`` overrides; else the
    user cache folder)."""
    if FUSEGRAD_CACHE_DIR.value:
        return Path(FUSEGRAD_CACHE_DIR.value)
    base = XDG_CACHE_HOME.value or str(Path.home() / ".cache")
    return Path(base) / "fusegrad"


class DiskCache:
    """A small persistent key -> bytes table in sqlite, safe across threads and processes."""

    def __init__(self, table: str, path: Path | None = None) -> None:
        self.table = table
        self.path = path or cache_dir() / "cache.db"
        self._local = threading.local()

    def _db(self) -> sqlite3.Connection | None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn  # type: ignore[no-any-return]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, val BLOB)"
            )
        except (OSError, sqlite3.Error):
            return None  # a read-only home: run without the cache
        self._local.conn = conn
        return conn

    def get(self, key: str) -> bytes | None:
        """The stored value, or None."""
        if CACHELEVEL.value < 1 or (db := self._db()) is None:
            return None
        row = db.execute(f"SELECT val FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key: str, val: bytes) -> None:
        """Store a value (silently skipped when caching is off or impossible)."""
        if CACHELEVEL.value < 1 or (db := self._db()) is None:
            return
        with db:
            db.execute(f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?)", (key, val))


class Compiler:
    """Turns rendered source into a loadable binary, with a persistent cache keyed by
    (source, compiler, flags, target) so a second process compiles nothing."""

    #: a name for the cache key; include the flags and target that change the output
    cache_key: str = ""

    #: whether ``compile_cached`` may run in a worker thread while the caller goes on: it is
    #: thread-safe and spends its time outside the GIL (in C or a subprocess), so a plan
    #: lowers its next kernel meanwhile (``engine.programs``, ``COMPILE_THREADS``)
    threaded: bool = False

    def __init__(self, cachekey: str | None = None, *, cache_key: str | None = None) -> None:
        # ``cachekey`` is tinygrad's name; ``cache_key=`` fusegrad's compilers pass
        key = cachekey if cachekey is not None else cache_key
        if key is not None:
            self.cache_key = key
        self.disk = DiskCache("compile")

    def compile(self, src: str) -> bytes:
        """Source -> binary (override). Raise CompileError on failure."""
        raise NotImplementedError(f"{type(self).__name__} must implement compile()")

    def compile_cached(self, src: str) -> bytes:
        """``compile`` through the on-disk cache."""
        if not self.cache_key:
            return self.compile(src)
        key = hashlib.sha256(f"{self.cache_key}\0{src}".encode()).hexdigest()
        if (hit := self.disk.get(key)) is not None:
            return hit
        lib = self.compile(src)
        self.disk.put(key, lib)
        return lib

    def disassemble(self, lib: bytes) -> str:
        """A readable form of a binary, where the compiler can give one."""
        return f"<{len(lib)} bytes>"


@functools.cache
def host_cpu_count() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
