"""Knobs: every environment variable fusegrad.uop reads is declared here, once.

A ``ContextVar`` reads its environment variable when it is declared and can be overridden in a
scope with ``Context``::

    >>> from fusegrad.uop import Context, DEBUG
    >>> with Context(DEBUG=3):
    ...     DEBUG.value
    3
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def getenv(key: str, default: Any = 0) -> Any:
    """The environment variable ``key`` converted to the type of ``default`` (cached). A bool
    reads as an int, so ``X=0`` is False (``bool("0")`` would be True)."""
    raw = os.environ.get(key)
    if raw is None:
        return default
    kind = int if isinstance(default, bool) else type(default)
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(
            f"environment variable {key}={raw!r}: expected {kind.__name__}"
            f" (like {key}={int(default) if kind is int else default!r})"
        ) from None
    return bool(value) if isinstance(default, bool) else value


class ContextVar:
    """A named, scoped setting with an environment-variable default.

    Declaring one twice returns the same object, so packages can share a knob by name.
    """

    _registry: ClassVar[dict[str, ContextVar]] = {}
    key: str
    value: Any

    def __new__(cls, key: str, default_value: Any) -> ContextVar:
        if (existing := cls._registry.get(key)) is not None:
            return existing
        instance = super().__new__(cls)
        instance.key = key
        instance.value = getenv(key, default_value)
        cls._registry[key] = instance
        return instance

    def alias(self, key: str) -> ContextVar:
        """Make ``key`` another name of this setting: ``Context(key=...)`` and the
        environment variable ``key`` (when set) change this one. Returns ``self``.

        >>> v = ContextVar("FG_DOCTEST_KNOB", 1).alias("FG_DOCTEST_OTHER")
        >>> with Context(FG_DOCTEST_OTHER=5):
        ...     v.value
        5
        """
        existing = ContextVar._registry.get(key)
        if existing is not None and existing is not self:
            raise ValueError(f"ContextVar.alias: {key!r} already names {existing!r}")
        ContextVar._registry[key] = self
        if key in os.environ:
            self.value = getenv(key, self.value)
        return self

    def __bool__(self) -> bool:
        return bool(self.value)

    def __ge__(self, other: Any) -> bool:
        return bool(self.value >= other)

    def __gt__(self, other: Any) -> bool:
        return bool(self.value > other)

    def __le__(self, other: Any) -> bool:
        return bool(self.value <= other)

    def __lt__(self, other: Any) -> bool:
        return bool(self.value < other)

    def __repr__(self) -> str:
        return f"ContextVar({self.key!r}, {self.value!r})"


class Context(contextlib.ContextDecorator):
    """Scoped overrides of ContextVars by name; usable as ``with`` and as a decorator.

    >>> from fusegrad.uop import Context, DEBUG
    >>> @Context(DEBUG=2)
    ... def show() -> int:
    ...     return DEBUG.value
    >>> show()
    2
    """

    def __init__(self, **kwargs: Any) -> None:
        overrides = kwargs
        unknown = [k for k in overrides if k not in ContextVar._registry]
        if unknown:
            raise KeyError(
                f"Context: unknown setting(s) {unknown}; known: {sorted(ContextVar._registry)}"
            )
        self.overrides = overrides
        self._saved: list[dict[str, Any]] = []

    def __enter__(self) -> Context:
        self._saved.append({k: ContextVar._registry[k].value for k in self.overrides})
        for k, v in self.overrides.items():
            ContextVar._registry[k].value = v
        return self

    def __exit__(self, *exc: object) -> None:
        for k, v in self._saved.pop().items():
            ContextVar._registry[k].value = v


DEBUG = ContextVar("DEBUG", 0)
"""Verbosity 0-7: 1 schedule summary, 2 per-kernel lines, 4 source, 5 AST, 6 linear uops."""
TRACK_MATCH_STATS = ContextVar("TRACK_MATCH_STATS", 0)
"""1: count pattern matches and time per rule, printed at exit; 2: also record every rewrite."""
VIZ = ContextVar("VIZ", 0)
"""1: record every graph_rewrite step for the visualizer."""
SPEC = ContextVar("SPEC", 0)
"""1: check every IR stage against its spec (on under pytest)."""
DEFAULT_FLOAT = ContextVar("DEFAULT_FLOAT", "float32")
"""The dtype Python floats become (name of a float dtype)."""
DEFAULT_INT = ContextVar("DEFAULT_INT", "int32")
"""The dtype Python ints become (name of an int dtype)."""
TRAINING = ContextVar("TRAINING", 0)
"""1: training mode (dropout active, BatchNorm batch statistics, optimizers allowed); the same
state as ``Tensor.training``."""
IMAGE = ContextVar("IMAGE", 0)
"""tinygrad's image-dtype switch: accepted for compatibility; fusegrad has no image dtypes, so
any value computes with ordinary buffers."""
WINO = ContextVar("WINO", -1)
"""Winograd conv2d for 3x3, stride-1, dilation-1, groups-1 float convolutions: -1 (unset) the
measured rule decides, 0 the direct form always, 1 or 4 forces F(4x4,3x3), 2 forces F(2x2,3x3)."""
DISALLOW_BROADCAST = ContextVar("DISALLOW_BROADCAST", 0)
"""1: elementwise ops on operands of different shapes raise instead of broadcasting (a Python
scalar or a one-element operand still spreads); for finding unintended broadcasts."""
TRACEMETA = ContextVar("TRACEMETA", 1)
"""0: ``UOp(..., metadata=...)`` drops the metadata instead of recording it in
``all_metadata``."""
PROFILE = ContextVar("PROFILE", 0)
"""The runtime's profiling switch (declared by name: the same object as
``fusegrad.runtime.flags.PROFILE``)."""
CAPTURE_PROCESS_REPLAY = ContextVar("CAPTURE_PROCESS_REPLAY", 0)
"""1: a ``rewrite_group(replay=True)`` function records its inputs and output, pickled, in
``fusegrad.uop.tracking.replay_captures`` (to rerun and compare them after a change)."""
REWRITE_STACK_LIMIT = ContextVar("REWRITE_STACK_LIMIT", 5_000_000)
"""The most entries graph_rewrite's explicit work stack may hold when a rule fires; beyond it
the rules are taken to loop (``RewriteNotConverging``)."""
