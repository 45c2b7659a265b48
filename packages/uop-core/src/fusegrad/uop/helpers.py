"""Small pure functions the other layers share: products, dedup, partitions, rounding."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
U = TypeVar("U")


def prod(x: Iterable[T], start: Any = 1) -> Any:
    """Product of the items, ``start`` for an empty iterable (works on UOps too).

    >>> prod([2, 3, 4])
    24
    """
    return functools.reduce(operator.mul, x, start)


def dedup(x: Iterable[T]) -> list[T]:
    """The items without repeats, in first-seen order.

    >>> dedup([3, 1, 3, 2, 1])
    [3, 1, 2]
    """
    return list(dict.fromkeys(x))


def all_same(items: Sequence[Any]) -> bool:
    """True if every item equals the first (and for an empty sequence)."""
    return all(x == items[0] for x in items[1:])


def all_int(xs: Iterable[Any]) -> bool:
    """True if every item is a Python int (bools excluded)."""
    return all(isinstance(x, int) and not isinstance(x, bool) for x in xs)


def flatten(l: Iterable[Iterable[T]]) -> list[T]:  # noqa: E741 - tinygrad's parameter name
    """One level of nesting removed.

    >>> flatten([[1, 2], [], [3]])
    [1, 2, 3]
    """
    return [x for xs in l for x in xs]


def argsort(x: Sequence[Any]) -> list[int]:
    """Indices that sort ``xs`` (stable).

    >>> argsort([30, 10, 20])
    [1, 2, 0]
    """
    return sorted(range(len(x)), key=x.__getitem__)


def argfix(*x: Any) -> tuple[Any, ...]:
    """Accept both ``f(1, 2)`` and ``f((1, 2))`` call styles (shapes, axes)."""
    if len(x) == 1 and isinstance(x[0], (tuple, list)):
        return tuple(x[0])
    return tuple(x)


def partition(itr: Iterable[T], fxn: Callable[[T], bool]) -> tuple[list[T], list[T]]:
    """Split into (items where pred holds, the rest), each in order.

    >>> partition([1, 2, 3, 4], lambda x: x % 2 == 0)
    ([2, 4], [1, 3])
    """
    yes: list[T] = []
    no: list[T] = []
    for x in itr:
        (yes if fxn(x) else no).append(x)
    return yes, no


def ceildiv(num: Any, amt: Any) -> Any:
    """Division rounded up; works for ints and for symbolic UOps.

    >>> ceildiv(7, 2), ceildiv(-7, 2)
    (4, -3)
    """
    return -(num // -amt)


def round_up(num: Any, amt: int) -> Any:
    """``num`` rounded up to a multiple of ``amt``.

    >>> round_up(10, 4)
    12
    """
    return ceildiv(num, amt) * amt


def round_down(num: int, amt: int) -> int:
    """``num`` rounded down to a multiple of ``amt``."""
    return num - num % amt


def merge_dicts(ds: Iterable[dict[T, U]]) -> dict[T, U]:
    """Union of dicts; raises ValueError if two dicts disagree on a key."""
    out: dict[T, U] = {}
    for d in ds:
        for k, v in d.items():
            if k in out and out[k] != v:
                raise ValueError(f"merge_dicts: key {k!r} has two values, {out[k]!r} and {v!r}")
            out[k] = v
    return out
