"""``fusegrad.helpers``: tinygrad's ``tinygrad.helpers`` module path.

The settings (``DEBUG``, ``BEAM``, ``JIT``, ``TRAINING``, ...) are the ``ContextVar`` objects
the layers declare, re-exported here, so ``Context(NAME=...)`` and ``NAME.value`` act on the
one setting. The small pure functions are re-exported from ``fusegrad.uop``; the ones tinygrad
code uses that no layer needs (bit twiddling, text, memoryviews, progress bars) are written
here. tinygrad names with no meaning in fusegrad are listed in ``docs/compat.md``.

>>> from fusegrad.helpers import Context, DEBUG, prod, round_up
>>> with Context(DEBUG=2):
...     DEBUG.value
2
>>> prod((2, 3, 4)), round_up(10, 4)
(24, 12)
"""

from __future__ import annotations

import contextlib
import cProfile
import ctypes
import functools
import getpass
import gzip
import hashlib
import itertools
import os
import pickle
import pstats
import re
import shutil
import sqlite3
import string
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from fusegrad.codegen import DiskCache
from fusegrad.codegen import cache_dir as _cache_dir
from fusegrad.engine import GlobalCounters
from fusegrad.profiling import (
    ProfileEvent,
    ProfilePointEvent,
    ProfileRangeEvent,
    TracingKey,
    cpu_events,
    cpu_objdump,
    cpu_profile,
    get_stacktrace,
    perf_counter_us,
    printable,
    profile_marker,
)
from fusegrad.tensor.flags import CHECK_INDEX, FUSE_OPTIM
from fusegrad.uop import (
    DEBUG,
    DEFAULT_FLOAT,
    DEFAULT_INT,
    SPEC,
    TRACK_MATCH_STATS,
    VIZ,
    Context,
    ContextVar,
    all_same,
    argfix,
    argsort,
    ceildiv,
    dedup,
    flatten,
    getenv,
    merge_dicts,
    partition,
    prod,
    round_down,
    round_up,
)

# the settings the layers declare in their (private) flags modules: a ContextVar declared
# again by name is the same object
BEAM = ContextVar("BEAM", 0)
NOOPT = ContextVar("NOOPT", 0)
IGNORE_BEAM_CACHE = ContextVar("IGNORE_BEAM_CACHE", 0)
PARALLEL = ContextVar("PARALLEL", -1)
JIT = ContextVar("JIT", 1)
CACHELEVEL = ContextVar("CACHELEVEL", 2)
EMULATED_DTYPES = ContextVar("EMULATED_DTYPES", "")
CPU_THREADS = ContextVar("CPU_THREADS", 0)
DEV = ContextVar("DEV", "")
PROFILE = ContextVar("PROFILE", 0)
TRAINING = ContextVar("TRAINING", 0)
IMAGE = ContextVar("IMAGE", 0)
NO_MEMORY_PLANNER = ContextVar("NO_MEMORY_PLANNER", 0)
WINO = ContextVar("WINO", -1)
DISALLOW_BROADCAST = ContextVar("DISALLOW_BROADCAST", 0)
TRACEMETA = ContextVar("TRACEMETA", 1)
CAPTURE_PROCESS_REPLAY = ContextVar("CAPTURE_PROCESS_REPLAY", 0)
REWRITE_STACK_LIMIT = ContextVar("REWRITE_STACK_LIMIT", 5_000_000)

T = TypeVar("T")
U = TypeVar("U")

CHECK_OOB = CHECK_INDEX
"""tinygrad's name of the index check (``CHECK_INDEX``): one setting under two names."""
NUM_CPU_THREADS = CPU_THREADS.alias("NUM_CPU_THREADS")
"""tinygrad's name of the CPU device's worker-thread count (``CPU_THREADS``)."""
NO_COLOR = ContextVar("NO_COLOR", 0)
"""1: ``colored`` returns its text without ANSI color codes."""

OSX = sys.platform == "darwin"
WIN = sys.platform == "win32"
CI = os.getenv("CI", "") != ""
"""True when the ``CI`` environment variable is set (tests may be stricter or shorter)."""
BASEDIR = Path(__file__).parent
"""The folder of the installed ``fusegrad`` package."""
VERSION = 1
"""Version of fusegrad's on-disk cache formats."""
START_TIME = time.perf_counter()
"""``time.perf_counter()`` when fusegrad was imported."""
cache_dir = str(_cache_dir())
"""fusegrad's cache folder (``FUSEGRAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/fusegrad``)."""
CHUNK_SIZE = 1 << 20
"""Bytes per read when ``fetch`` downloads."""
CACHEDB = str(_cache_dir() / "cache.db")
"""The sqlite file of fusegrad's on-disk cache (compiled programs, BEAM results, diskcache)."""


# --- sequences ----------------------------------------------------------------------------------


def all_int(t: Sequence[Any]) -> bool:
    """True if every item is a Python int (bools excluded).

    >>> all_int((1, 2)), all_int((1, 2.0))
    (True, False)
    """
    return all(isinstance(x, int) and not isinstance(x, bool) for x in t)


def make_tuple(x: int | Sequence[int], cnt: int) -> tuple[int, ...]:
    """``x`` repeated ``cnt`` times when an int, else ``x`` as a tuple.

    >>> make_tuple(3, 2), make_tuple([1, 2], 2)
    ((3, 3), (1, 2))
    """
    return (x,) * cnt if isinstance(x, int) else tuple(x)


def fully_flatten(l: Any) -> list[Any]:  # noqa: E741 - tinygrad's parameter name
    """Every leaf of arbitrarily nested lists/tuples, in order.

    >>> fully_flatten([[1, [2, 3]], 4])
    [1, 2, 3, 4]
    """
    if not isinstance(l, (list, tuple)):
        return [l]
    return [leaf for item in l for leaf in fully_flatten(item)]


def get_shape(x: Any) -> tuple[int, ...]:
    """The shape of nested lists; ValueError when they are ragged.

    >>> get_shape([[1, 2, 3], [4, 5, 6]])
    (2, 3)
    """
    if not hasattr(x, "__len__") or isinstance(x, (str, bytes)) or not hasattr(x, "__getitem__"):
        return ()
    shapes = [get_shape(item) for item in x]
    if not all_same(shapes):
        raise ValueError(f"get_shape: inhomogeneous shape {shapes}")
    return (len(shapes), *(shapes[0] if shapes else ()))


def get_single_element(x: Sequence[T]) -> T:
    """The only item of ``x``; ValueError for zero or several."""
    if len(x) != 1:
        raise ValueError(f"get_single_element: expected one item, got {len(x)}: {x!r}")
    return x[0]


def unwrap(x: T | None) -> T:
    """``x``, which must not be None."""
    if x is None:
        raise ValueError("unwrap: got None")
    return x


def to_tuple(x: T | tuple[T, ...]) -> tuple[T, ...]:
    """``x`` as a tuple (a non-tuple becomes a 1-tuple)."""
    return x if isinstance(x, tuple) else (x,)


def get_child(obj: Any, key: str) -> Any:
    """``obj`` followed along a dotted path of attributes, int indices and dict keys.

    >>> get_child({"a": [10, {"b": 7}]}, "a.1.b")
    7
    """
    for k in key.split("."):
        if k.isnumeric():
            obj = obj[int(k)]
        elif isinstance(obj, dict):
            obj = obj[k]
        else:
            obj = getattr(obj, k)
    return obj


def strides_for_shape(shape: tuple[T, ...]) -> tuple[T, ...]:
    """Contiguous (row-major) strides of ``shape``, 0 for size-1 dims.

    >>> strides_for_shape((2, 3, 4)), strides_for_shape((3, 1))
    ((12, 4, 1), (1, 0))
    """
    if not shape:
        return ()
    out: list[Any] = [1]
    for dim in reversed(shape[1:]):
        out.insert(0, out[0] * dim)
    return canonicalize_strides(shape, tuple(out))


def canonicalize_strides(shape: tuple[T, ...], strides: tuple[T, ...]) -> tuple[T, ...]:
    """``strides`` with the stride of every size-1 dim set to 0."""
    return tuple(0 if s == 1 else st for s, st in zip(shape, strides, strict=True))  # type: ignore[misc]


def flat_to_grouped(padding: Sequence[T]) -> tuple[tuple[T, T], ...]:
    """PyTorch's flat padding (last dim first) as (before, after) pairs, first dim first.

    >>> flat_to_grouped((1, 2, 3, 4))
    ((3, 4), (1, 2))
    """
    return tuple(zip(padding[-2::-2], padding[::-2], strict=True))


def resolve_pool_pads(padding: int | Sequence[int], dims: int) -> Sequence[int]:
    """Pool/conv padding as the flat (before, after) form for ``dims`` spatial dims."""
    if not isinstance(padding, int) and len(padding) not in (2 * dims, dims):
        raise ValueError(f"padding must be an int or have {dims} or {2 * dims} entries: {padding}")
    if isinstance(padding, int):
        return [padding] * 2 * dims
    if len(padding) == 2 * dims:
        return padding
    return [p for p in reversed(padding) for _ in range(2)]


# --- numbers ------------------------------------------------------------------------------------


def cdiv(x: int, y: int) -> int:
    """Integer division truncating toward zero (C's ``/``).

    >>> cdiv(-7, 2), cdiv(7, -2)
    (-3, -3)
    """
    return abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) if y != 0 else 0


def cmod(x: int, y: int) -> int:
    """Remainder with the sign of ``x`` (C's ``%``).

    >>> cmod(-7, 2)
    -1
    """
    return x - cdiv(x, y) * y


def floordiv(x: int, y: int) -> int:
    """Python's ``//`` (rounds toward -inf)."""
    return x // y


def floormod(x: int, y: int) -> int:
    """Python's ``%`` (the sign of ``y``)."""
    return x % y


def next_power2(x: int) -> int:
    """The smallest power of two >= ``x`` (1 for ``x <= 1``).

    >>> next_power2(5), next_power2(8)
    (8, 8)
    """
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def polyN(x: T, p: list[float]) -> T:
    """The polynomial with coefficients ``p`` (highest first) at ``x`` (Horner).

    >>> polyN(2.0, [1.0, 0.0, -1.0])
    3.0
    """
    acc: Any = 0.0
    for c in p:
        acc = acc * x + c
    return acc  # type: ignore[no-any-return]


def getbits(value: int, start: int, end: int) -> int:
    """Bits ``start`` .. ``end`` (inclusive) of ``value``.

    >>> getbits(0b110100, 2, 4)
    5
    """
    return (value >> start) & ((1 << (end - start + 1)) - 1)


def i2u(bits: int, value: int) -> int:
    """A signed ``bits``-wide integer as its unsigned encoding.

    >>> i2u(8, -1)
    255
    """
    return value if value >= 0 else (1 << bits) + value


def lo32(x: Any) -> Any:
    """The low 32 bits."""
    return x & 0xFFFFFFFF


def hi32(x: Any) -> Any:
    """The high 32 bits (of a 64-bit value)."""
    return x >> 32


def data64(data: Any) -> tuple[Any, Any]:
    """A 64-bit value as (high 32, low 32)."""
    return (data >> 32, data & 0xFFFFFFFF)


def data64_le(data: Any) -> tuple[Any, Any]:
    """A 64-bit value as (low 32, high 32)."""
    return (data & 0xFFFFFFFF, data >> 32)


def to_be32(val: Any) -> Any:
    """A 32-bit value with its bytes reversed."""
    return int.from_bytes(int(val).to_bytes(4, "little"), "big")


def to_be64(val: Any) -> Any:
    """A 64-bit value with its bytes reversed."""
    return int.from_bytes(int(val).to_bytes(8, "little"), "big")


def pad_bytes(b: bytes, align: int) -> bytes:
    """``b`` padded with zero bytes to a multiple of ``align``."""
    return b + b"\x00" * ((align - len(b) % align) % align)


# --- memory -------------------------------------------------------------------------------------


def mv_address(mv: memoryview) -> int:
    """The address of a memoryview's first byte (read-only views too)."""
    return int(np.frombuffer(mv, dtype=np.uint8).ctypes.data)


def to_mv(ptr: int, sz: int) -> memoryview:
    """A byte memoryview of ``sz`` bytes at address ``ptr`` (no copy)."""
    return memoryview((ctypes.c_uint8 * sz).from_address(ptr)).cast("B")


def from_mv(mv: memoryview, to_type: type[Any] = ctypes.c_char) -> Any:
    """A ctypes array over a writable memoryview's bytes (no copy)."""
    return (to_type * len(mv)).from_buffer(mv)


def flat_mv(mv: memoryview) -> memoryview:
    """A memoryview as flat bytes."""
    return mv if len(mv) == 0 else mv.cast("B", shape=(mv.nbytes,))


def to_char_p_p(options: list[bytes], to_type: type[Any] = ctypes.c_char) -> Any:
    """A ``char **`` array of the given byte strings (kept alive by the result)."""
    bufs = [ctypes.create_string_buffer(o) for o in options]
    arr = (ctypes.POINTER(to_type) * len(options))()
    for i, b in enumerate(bufs):
        arr[i] = ctypes.cast(b, ctypes.POINTER(to_type))
    arr._keep = bufs  # type: ignore[attr-defined]
    return arr


# --- text ---------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[(K|.*?m)")
_COLORS = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]


def colored(st: str, color: str | None, background: bool = False) -> str:
    """``st`` in an ANSI color (``"red"``, ``"GREEN"`` bright...); plain under ``NO_COLOR``."""
    if color is None or NO_COLOR:
        return st
    if color.lower() not in _COLORS:
        raise ValueError(f"colored: unknown color {color!r}; known: {_COLORS}")
    code = 10 * background + 60 * (color.upper() == color) + 30 + _COLORS.index(color.lower())
    return f"\x1b[{code}m{st}\x1b[0m"


def colorize_float(x: float) -> str:
    """A speed ratio in green (< 0.75), yellow, or red (> 1.15)."""
    color = "green" if x < 0.75 else "red" if x > 1.15 else "yellow"
    return colored(f"{x:7.2f}x", color)


def ansistrip(s: str) -> str:
    """``s`` without ANSI escape codes."""
    return _ANSI.sub("", s)


def ansilen(s: str) -> int:
    """The printed width of ``s`` (escape codes excluded)."""
    return len(ansistrip(s))


def ansipad(s: str, w: int) -> str:
    """``s`` padded with spaces to printed width ``w``."""
    return s + " " * max(0, w - ansilen(s))


def strip_parens(fst: str) -> str:
    """``fst`` without one pair of enclosing parentheses (when they enclose all of it).

    >>> strip_parens("(a+b)"), strip_parens("(a)+(b)")
    ('a+b', '(a)+(b)')
    """
    if not (fst.startswith("(") and fst.endswith(")")):
        return fst
    depth = 0
    for ch in fst[1:-1]:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return fst
    return fst[1:-1]


def to_function_name(s: str) -> str:
    """``s`` (a kernel name, maybe colored) as a C identifier."""
    allowed = string.ascii_letters + string.digits + "_"
    return "".join(c if c in allowed else f"{ord(c):02X}" for c in ansistrip(s))


def pluralize(st: str, cnt: int) -> str:
    """``"3 kernels"`` / ``"1 kernel"``."""
    return f"{cnt} {st}" + ("" if cnt == 1 else "s")


def word_wrap(x: str, wrap: int = 80) -> str:
    """``x`` with lines longer than ``wrap`` printed columns split."""
    if len(ansistrip(x)) <= wrap and "\n" not in x:
        return x
    if "\n" in x:
        return "\n".join(word_wrap(line, wrap) for line in x.split("\n"))
    i = 0
    while len(ansistrip(x[:i])) < wrap and i < len(x):
        i += 1
    return x[:i] + "\n" + word_wrap(x[i:], wrap)


def size_to_str(s: int) -> str:
    """Bytes in human units (``"1.50 MB"``)."""
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if s >= div:
            return f"{s / div:.2f} {unit}"
    return f"{s} B"


def time_to_str(t: float, w: int = 8) -> str:
    """Seconds in human units, right-aligned to ``w`` (``"  1.50ms"``)."""
    if t > 10:
        return f"{t:{w}.2f}s"
    if t > 1e-2:
        return f"{t * 1e3:{w - 2}.2f}ms"
    return f"{t * 1e6:{w - 2}.2f}us"


def lines(fn: str | Path) -> list[str]:
    """The lines of a text file."""
    return Path(fn).read_text().splitlines()


def stderr_log(msg: str) -> None:
    """Write ``msg`` to stderr (no newline added)."""
    sys.stderr.write(msg)
    sys.stderr.flush()


# --- processes and modules ----------------------------------------------------------------------


def fromimport(mod: str, frm: str) -> Any:
    """``from mod import frm``."""
    return getattr(__import__(mod, fromlist=[frm]), frm)


def system(cmd: str, **kwargs: Any) -> str:
    """Run a shell command, return its stdout; CalledProcessError when it fails."""
    out = subprocess.check_output(cmd.split(), **kwargs)
    return str(out.decode().strip())


def panic(e: type[Exception] | None = None, *arg: Any) -> Any:
    """Raise ``e(*arg)`` (RuntimeError by default); for use inside expressions."""
    raise (e or RuntimeError)(*arg)


def wait_cond(
    cb: Callable[..., Any], *args: Any, value: Any = True, timeout_ms: int = 10000, msg: str = ""
) -> bool:
    """Poll ``cb(*args)`` until it equals ``value``; TimeoutError after ``timeout_ms``."""
    start = time.perf_counter()
    while (time.perf_counter() - start) * 1000 < timeout_ms:
        if cb(*args) == value:
            return True
        time.sleep(0.0001)
    raise TimeoutError(f"wait_cond: timed out after {timeout_ms} ms {msg}")


def select_by_name(
    candidates: Sequence[T], get_name: Callable[..., str], query: str, err_msg: str
) -> list[T]:
    """The candidates whose name (upper case) is ``query`` (comma-separated names allowed;
    empty: all); RuntimeError ``err_msg`` when none matches."""
    if not query:
        return list(candidates)
    wanted = [q.strip().upper() for q in query.split(",")]
    out = [c for c in candidates if get_name(c).upper() in wanted]
    if not out:
        raise RuntimeError(
            f"{err_msg}: {query!r} matches none of {[get_name(c) for c in candidates]}"
        )
    return out


def select_first_inited(
    candidates: Sequence[Callable[..., T]],
    err_msg: str,
    cache: dict[Any, Any] | None = None,
    *args: Any,
) -> T:
    """The result of the first candidate that constructs without an exception (cached per
    candidate in ``cache``); RuntimeError ``err_msg`` with every failure when none does."""
    errors = []
    for make in candidates:
        try:
            if cache is not None:
                if make not in cache:
                    cache[make] = make(*args)
                return cache[make]  # type: ignore[no-any-return]
            return make(*args)
        except Exception as e:
            errors.append(f"{getattr(make, '__name__', make)}: {e}")
    raise RuntimeError(f"{err_msg}: " + "; ".join(errors))


def suppress_finalizing(func: Callable[..., T]) -> Callable[..., T | None]:
    """``func``, ignoring errors raised while the interpreter shuts down (``__del__``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T | None:
        try:
            return func(*args, **kwargs)
        except (AttributeError, TypeError, ImportError):
            if sys.is_finalizing():
                return None
            raise

    return wrapper


class disable_gc:
    """A context (and decorator) with Python's garbage collector off."""

    def __enter__(self) -> disable_gc:
        import gc

        self._was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        import gc

        if self._was:
            gc.enable()

    def __call__(self, func: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> T:
            with disable_gc():
                return func(*args, **kwargs)

        return wrapper


# --- timing and profiling -----------------------------------------------------------------------


class Timing:
    """Prints how long its ``with`` block took: ``with Timing("step "): ...``."""

    def __init__(
        self, prefix: str = "", on_exit: Callable[[int], str] | None = None, enabled: bool = True
    ) -> None:
        self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
        self.st = self.et = 0

    def __enter__(self) -> Timing:
        self.st = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        self.et = time.perf_counter_ns() - self.st
        if self.enabled:
            extra = self.on_exit(self.et) if self.on_exit else ""
            print(f"{self.prefix}{self.et * 1e-6:6.2f} ms" + extra)


class Profiling:
    """cProfile over its ``with`` block; prints the top ``frac`` of functions by ``sort``."""

    def __init__(
        self,
        enabled: bool = True,
        sort: str = "cumtime",
        frac: float = 0.2,
        fn: str | None = None,
        ts: int = 1,
    ) -> None:
        self.enabled, self.sort, self.frac, self.fn, self.time_scale = enabled, sort, frac, fn, ts
        self.pr = cProfile.Profile()

    def __enter__(self) -> Profiling:
        if self.enabled:
            self.pr.enable()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        self.pr.disable()
        if self.fn:
            self.pr.dump_stats(self.fn)
        stats = pstats.Stats(self.pr).strip_dirs().sort_stats(self.sort)
        stats.print_stats(self.frac)


class tqdm(Iterator[T]):
    """A small progress bar over an iterable (written to stderr; ``disable`` silences it)."""

    def __init__(
        self,
        iterable: Iterable[T] | None = None,
        desc: str = "",
        disable: bool | None = False,
        unit: str = "it",
        unit_scale: bool = False,
        total: int | None = None,
        rate: int = 100,
    ) -> None:
        self.iterable = iter(iterable) if iterable is not None else None
        self.desc, self.disable, self.unit, self.unit_scale, self.rate = (
            desc,
            disable,
            unit,
            unit_scale,
            rate,
        )
        self.total = total if total is not None else _length(iterable)
        self.n, self.st = 0, time.perf_counter()

    def __iter__(self) -> tqdm[T]:
        return self

    def __next__(self) -> T:
        if self.iterable is None:
            raise StopIteration
        try:
            item = next(self.iterable)
        except StopIteration:
            self.close()
            raise
        self.update(1)
        return item

    def update(self, n: int = 0, close: bool = False) -> None:
        """Count ``n`` more items; redraw now and then."""
        self.n += n
        if not self.disable and (
            close or self.n % max(1, (self.total or 0) // self.rate or 1) == 0
        ):
            elapsed = time.perf_counter() - self.st
            of = f"/{self.total}" if self.total else ""
            speed = self.n / elapsed if elapsed > 0 else 0.0
            sys.stderr.write(f"\r{self.desc}{self.n}{of} {self.unit} [{speed:.2f} {self.unit}/s]")
            if close:
                sys.stderr.write("\n")

    def set_description(self, desc: str) -> None:
        """Change the text before the count."""
        self.desc = f"{desc}: " if desc else ""

    def close(self) -> None:
        """Final redraw and a newline."""
        self.update(close=True)


def _length(it: Any) -> int | None:
    try:
        return len(it)
    except TypeError:
        return None


def trange(n: int, **kwargs: Any) -> tqdm[int]:
    """``tqdm(range(n))``."""
    return tqdm(iter(range(n)), total=n, **kwargs)


def count(start: int = 0, step: int = 1) -> Iterator[int]:
    """``itertools.count``: ``start``, ``start + step``, ..."""
    return itertools.count(start, step)


# --- files --------------------------------------------------------------------------------------


def temp(x: str, append_user: bool = False) -> str:
    """A path named ``x`` in the system temp folder (``x.<user>`` with ``append_user``)."""
    name = f"{x}.{getpass.getuser()}"
    return str(Path(tempfile.gettempdir()) / (name if append_user else x))


def fetch(
    url: str,
    name: Path | str | None = None,
    subdir: str | None = None,
    gunzip: bool = False,
    allow_caching: bool = True,
    headers: dict[str, str] | None = None,
    sha256: str | None = None,
    extract: bool = False,
) -> Path:
    """The local path of ``url``'s content, downloaded once into fusegrad's cache folder.

    ``gunzip`` stores the decompressed content; ``sha256`` checks it (ValueError naming both
    hashes on a mismatch); ``extract`` unpacks a tar/zip archive into a folder and returns the
    folder; ``headers`` are sent with the request. ``file://`` URLs work too.
    """
    if isinstance(name, Path) and name.is_absolute():
        target = name
    else:
        key = hashlib.sha256((url + ("?gunzip" if gunzip else "")).encode()).hexdigest()
        target = _cache_dir() / "downloads" / (subdir or "") / (str(name) if name else key)
    if not (allow_caching and target.exists()):
        _download(url, target, gunzip, headers or {}, sha256)
    if not extract:
        return target
    folder = target.with_name(target.name + ".d")
    if not (allow_caching and folder.is_dir()):
        _extract(target, folder)
    return folder


def _download(
    url: str, target: Path, gunzip: bool, headers: dict[str, str], sha: str | None
) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".fetch-")
    try:
        digest = hashlib.sha256()
        request = urllib.request.Request(url, headers=headers)
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=60) as resp:
            stream = gzip.GzipFile(fileobj=resp) if gunzip else resp
            while chunk := stream.read(CHUNK_SIZE):
                digest.update(chunk)
                out.write(chunk)
        if sha is not None and digest.hexdigest() != sha.lower():
            raise ValueError(f"fetch {url}: sha256 {digest.hexdigest()} != expected {sha}")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _extract(archive: Path, folder: Path) -> None:
    tmp = Path(tempfile.mkdtemp(dir=archive.parent, prefix=".extract-"))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                z.extractall(tmp)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                t.extractall(tmp, filter="data")
        else:
            raise ValueError(f"fetch(extract=True): {archive} is neither a zip nor a tar archive")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- the on-disk cache ---------------------------------------------------------------------------


_TABLES: dict[tuple[str, Path], DiskCache] = {}


def _cache_table(table: str) -> DiskCache:
    """The table (one open table per name and cache folder: its connections are reused)."""
    key = ("user_" + re.sub(r"\W", "_", table), _cache_dir() / "cache.db")
    if key not in _TABLES:
        _TABLES[key] = DiskCache(*key)
    return _TABLES[key]


def _cache_key(key: dict[str, Any] | str | int) -> str:
    return repr(sorted(key.items())) if isinstance(key, dict) else repr(key)


def diskcache_get(table: str, key: dict[str, Any] | str | int) -> Any:
    """The value stored under ``key`` in ``table`` of fusegrad's on-disk cache (the sqlite
    file the compile cache uses), or None; None too under ``CACHELEVEL=0``."""
    raw = _cache_table(table).get(_cache_key(key))
    return None if raw is None else pickle.loads(raw)


def diskcache_put(
    table: str, key: dict[str, Any] | str | int, val: Any, prepickled: bool = False
) -> Any:
    """Store ``val`` (pickled, unless ``prepickled`` bytes) under ``key``; returns ``val``."""
    _cache_table(table).put(_cache_key(key), val if prepickled else pickle.dumps(val))
    return val


def diskcache(func: Callable[..., T]) -> Callable[..., T]:
    """``func`` with its results kept in the on-disk cache, keyed by its arguments."""
    table = f"cache_{func.__module__}_{func.__qualname__}"

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        key = hashlib.sha256(pickle.dumps((args, kwargs))).hexdigest()
        if (hit := diskcache_get(table, key)) is not None:
            return hit  # type: ignore[no-any-return]
        return diskcache_put(table, key, func(*args, **kwargs))  # type: ignore[no-any-return]

    return wrapper


_CONNECTIONS: dict[str, sqlite3.Connection] = {}


def db_connection() -> sqlite3.Connection:
    """A connection to the on-disk cache's sqlite file (``CACHEDB``), opened once."""
    conn = _CONNECTIONS.get(CACHEDB)
    if conn is None:
        Path(CACHEDB).parent.mkdir(parents=True, exist_ok=True)
        conn = _CONNECTIONS[CACHEDB] = sqlite3.connect(
            CACHEDB, timeout=30, isolation_level=None, check_same_thread=False
        )
    return conn


def diskcache_clear() -> None:
    """Empty fusegrad's on-disk cache: every table, compiled programs and BEAM results too."""
    path = _cache_dir() / "cache.db"
    if not path.exists():
        return
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as db, db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in tables:
            db.execute(f"DELETE FROM {t}")


# --- targets ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A parsed device string (``DEV=CPU:LLVM``): device kind, renderer, and the parts
    tinygrad's GPU targets add (arch, interface, device indices)."""

    device: str = ""
    renderer: str = ""
    arch: str = ""
    interface: str = ""
    indices: str = ""

    @staticmethod
    def parse(dev: str) -> Target:
        """``"CPU:LLVM"`` -> Target("CPU", "LLVM"); ``"NULL:PTX:sm_80"`` -> arch ``sm_80``."""
        kind, _, rest = dev.partition(":")
        if kind.upper() == "DISK":
            return Target(device="DISK", indices=rest)
        parts = rest.split(":") if rest else []
        indices = parts.pop(0) if parts and parts[0].replace(",", "").isdigit() else ""
        renderer = parts.pop(0).upper() if parts else ""
        arch = parts.pop(0) if parts else ""
        return Target(kind.upper(), renderer, arch, ":".join(parts), indices)


__all__ = [
    "BASEDIR",
    "BEAM",
    "CACHEDB",
    "CACHELEVEL",
    "CAPTURE_PROCESS_REPLAY",
    "CHECK_INDEX",
    "CHECK_OOB",
    "CHUNK_SIZE",
    "CI",
    "CPU_THREADS",
    "DEBUG",
    "DEFAULT_FLOAT",
    "DEFAULT_INT",
    "DEV",
    "DISALLOW_BROADCAST",
    "EMULATED_DTYPES",
    "FUSE_OPTIM",
    "IGNORE_BEAM_CACHE",
    "IMAGE",
    "JIT",
    "NOOPT",
    "NO_COLOR",
    "NO_MEMORY_PLANNER",
    "NUM_CPU_THREADS",
    "OSX",
    "PARALLEL",
    "PROFILE",
    "REWRITE_STACK_LIMIT",
    "SPEC",
    "START_TIME",
    "TRACEMETA",
    "TRACK_MATCH_STATS",
    "TRAINING",
    "VERSION",
    "VIZ",
    "WIN",
    "WINO",
    "_ANSI",
    "_COLORS",
    "Context",
    "ContextVar",
    "GlobalCounters",
    "ProfileEvent",
    "ProfilePointEvent",
    "ProfileRangeEvent",
    "Profiling",
    "Target",
    "Timing",
    "TracingKey",
    "all_int",
    "all_same",
    "ansilen",
    "ansipad",
    "ansistrip",
    "argfix",
    "argsort",
    "cache_dir",
    "canonicalize_strides",
    "cdiv",
    "ceildiv",
    "cmod",
    "colored",
    "colorize_float",
    "count",
    "cpu_events",
    "cpu_objdump",
    "cpu_profile",
    "data64",
    "data64_le",
    "db_connection",
    "dedup",
    "disable_gc",
    "diskcache",
    "diskcache_clear",
    "diskcache_get",
    "diskcache_put",
    "fetch",
    "flat_mv",
    "flat_to_grouped",
    "flatten",
    "floordiv",
    "floormod",
    "from_mv",
    "fromimport",
    "fully_flatten",
    "get_child",
    "get_shape",
    "get_single_element",
    "get_stacktrace",
    "getbits",
    "getenv",
    "hi32",
    "i2u",
    "lines",
    "lo32",
    "make_tuple",
    "merge_dicts",
    "mv_address",
    "next_power2",
    "pad_bytes",
    "panic",
    "partition",
    "perf_counter_us",
    "pluralize",
    "polyN",
    "printable",
    "prod",
    "profile_marker",
    "resolve_pool_pads",
    "round_down",
    "round_up",
    "select_by_name",
    "select_first_inited",
    "size_to_str",
    "stderr_log",
    "strides_for_shape",
    "strip_parens",
    "suppress_finalizing",
    "system",
    "temp",
    "time_to_str",
    "to_be32",
    "to_be64",
    "to_char_p_p",
    "to_function_name",
    "to_mv",
    "to_tuple",
    "tqdm",
    "trange",
    "unwrap",
    "wait_cond",
    "word_wrap",
]
