"""Comparison folding for ``weakint`` sums: constants move to one side, a common factor is
divided out, and negated sums flip the comparison. The rule functions behind the comparison
rules of ``symbolic``; ranges fold comparisons to constants elsewhere (a generic rule)."""

from __future__ import annotations

import math

from fusegrad.uop.dtype import DType, dtypes
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.terms import build_chain, build_sum, collect_terms, flatten, may_be_invalid
from fusegrad.uop.uop import UOp


def _weak(x: UOp) -> bool:
    return x.dtype.scalar() is dtypes.weakint and not may_be_invalid(x)


def _ints(*consts: UOp) -> bool:
    return all(type(c.arg) is int for c in consts)


def _linear(x: UOp) -> tuple[dict[UOp, int], int] | None:
    """The terms of a weakint sum that can't hold Invalid, or None."""
    if x.dtype.scalar() is not dtypes.weakint or may_be_invalid(x):
        return None
    coefficients, const = collect_terms(x)
    return (coefficients, const) if coefficients else None


def _scaled(dt: DType, coefficients: dict[UOp, int], factor: int) -> UOp:
    return build_sum(dt, {b: k // factor for b, k in coefficients.items()}, 0)


def _sign_and_gcd(coefficients: dict[UOp, int]) -> int:
    """The gcd of the coefficients, negative when every coefficient is negative."""
    g = math.gcd(*coefficients.values())
    return -g if all(k < 0 for k in coefficients.values()) else g


def fold_lt_const(x: UOp, c: UOp) -> UOp | None:
    """``sum + k < c``: ``y + k < c -> y < c-k``; ``g*y < c -> y < ceil(c/g)``;
    ``-y < c -> -c < y``."""
    if (lin := _linear(x)) is None or not isinstance(c.arg, int):
        return None
    coefficients, const = lin
    g = _sign_and_gcd(coefficients)
    if const == 0 and g == 1:
        return None
    bound = c.arg - const
    y = _scaled(x.dtype, coefficients, g)
    if g < 0:
        # (-|g|)*y < b  <=>  y > b/(-|g|)  <=>  floor(b / -|g|) < y
        return UOp.const(bound // g, x.dtype) < y
    return y < UOp.const(-(-bound // g), x.dtype)


def fold_const_lt(c: UOp, x: UOp) -> UOp | None:
    """``c < sum + k``: ``c < y + k -> c-k < y``; ``c < g*y -> floor(c/g) < y``;
    ``c < -y -> y < -c``."""
    if (lin := _linear(x)) is None or not isinstance(c.arg, int):
        return None
    coefficients, const = lin
    g = _sign_and_gcd(coefficients)
    if const == 0 and g == 1:
        return None
    bound = c.arg - const
    y = _scaled(x.dtype, coefficients, g)
    if g < 0:
        # b < (-|g|)*y  <=>  y < b/(-|g|)  <=>  y < ceil(b / -|g|)
        return y < UOp.const(-(-bound // g), x.dtype)
    return UOp.const(bound // g, x.dtype) < y


def fold_eq_const(x: UOp, c: UOp, cmp: UOp) -> UOp | None:
    """``sum + k == c`` / ``!=``: the constant moves right and ``g*y == c`` divides by ``g``
    (no solution when ``g`` doesn't divide ``c``)."""
    if (lin := _linear(x)) is None or not isinstance(c.arg, int):
        return None
    coefficients, const = lin
    g = _sign_and_gcd(coefficients)
    if const == 0 and g == 1:
        return None
    bound = c.arg - const
    if bound % g:
        return UOp.const(cmp.op is Ops.CMPNE, dtypes.bool)
    y = _scaled(x.dtype, coefficients, g)
    return UOp(cmp.op, dtypes.bool, (y, UOp.const(bound // g, x.dtype)))


def fold_div_lt(x: UOp, d: UOp, c: UOp) -> UOp | None:
    """``x // d < c -> x < c*d`` for ``d > 0`` (floor(x/d) < c iff x < c*d)."""
    if not _weak(x) or not _ints(c, d) or d.arg <= 0:
        return None
    return x < UOp.const(c.arg * d.arg, x.dtype)


def fold_const_lt_div(c: UOp, x: UOp, d: UOp) -> UOp | None:
    """``c < x // d -> (c+1)*d - 1 < x`` for ``d > 0``."""
    if not _weak(x) or not _ints(c, d) or d.arg <= 0:
        return None
    return UOp.const((c.arg + 1) * d.arg - 1, x.dtype) < x


def fold_not_lt(x: UOp, c: UOp) -> UOp | None:
    """``!(x < c) -> c-1 < x`` for ints (``c-1`` must exist in the dtype)."""
    if not isinstance(c.arg, int) or (c.arg <= dtypes.min(x.dtype) and not x.dtype.weak):
        return None
    return UOp.const(c.arg - 1, x.dtype) < x


def fold_not_gt(c: UOp, x: UOp) -> UOp | None:
    """``!(c < x) -> x < c+1`` for ints (``c+1`` must exist in the dtype)."""
    if not isinstance(c.arg, int) or (c.arg >= dtypes.max(x.dtype) and not x.dtype.weak):
        return None
    return x < UOp.const(c.arg + 1, x.dtype)


Interval = tuple[float, float]  # inclusive bounds; -inf/inf when open


def _clause_interval(clause: UOp) -> tuple[UOp, Interval] | None:
    """``x < c`` as ``(x, (-inf, c-1))`` and ``c < x`` as ``(x, (c+1, inf))`` (int ``x``)."""
    if clause.op is not Ops.CMPLT or not dtypes.is_int(clause.src[0].dtype):
        return None
    a, b = clause.src
    if b.op is Ops.CONST and type(b.arg) is int and a.op is not Ops.CONST:
        return a, (-math.inf, b.arg - 1)
    if a.op is Ops.CONST and type(a.arg) is int and b.op is not Ops.CONST:
        return b, (a.arg + 1, math.inf)
    return None


def _interval_clauses(x: UOp, lo: float, hi: float) -> list[UOp] | None:
    """``lo <= x <= hi`` as ``<`` clauses (None when a bound doesn't fit the dtype)."""
    out = []
    for value, upper in ((hi, True), (lo, False)):
        if math.isinf(value):
            continue
        bound = int(value) + 1 if upper else int(value) - 1
        if not x.dtype.weak and not dtypes.min(x.dtype) <= bound <= dtypes.max(x.dtype):
            return None
        c = UOp.const(bound, x.dtype)
        out.append(x < c if upper else c < x)
    return out


def _merge_and(x: UOp, intervals: list[Interval]) -> list[UOp] | bool | None:
    lo = max(i[0] for i in intervals)
    hi = min(i[1] for i in intervals)
    return False if lo > hi else _interval_clauses(x, lo, hi)


def _merge_or(x: UOp, intervals: list[Interval]) -> list[UOp] | bool | None:
    """Half-lines joined: ``x <= h1 | x <= h2 -> x <= max``; both sides meeting is True."""
    uppers = [hi for lo, hi in intervals if math.isinf(lo)]
    lowers = [lo for lo, hi in intervals if math.isinf(hi)]
    if uppers and lowers and min(lowers) <= max(uppers) + 1:
        return True
    clauses = []
    for bounds in (
        (-math.inf, max(uppers)) if uppers else None,
        (min(lowers), math.inf) if lowers else None,
    ):
        if bounds is not None:
            clauses += _interval_clauses(x, *bounds) or []
    return clauses


def merge_bound_clauses(a: UOp) -> UOp | None:
    """Bound clauses on the same ``x`` in an AND/OR chain merged: ``x<5 & x<3 -> x<3``,
    ``x<5 & 6<x -> False``, ``x<5 | 3<x -> True``."""
    if a.dtype.scalar() is not dtypes.bool or may_be_invalid(a):
        return None
    items = flatten(a, a.op)
    groups: dict[UOp, list[tuple[UOp, Interval]]] = {}
    for item in items:
        if (found := _clause_interval(item)) is not None:
            groups.setdefault(found[0], []).append((item, found[1]))
    merge = _merge_and if a.op is Ops.AND else _merge_or
    kept = list(items)
    for x, members in groups.items():
        if len(members) < 2:
            continue
        merged = merge(x, [interval for _, interval in members])
        if isinstance(merged, bool):
            return UOp.const(merged, dtypes.bool)
        if merged is None or len(merged) >= len(members):
            continue
        kept = [k for k in kept if all(k is not m for m, _ in members)] + merged
    if len(kept) == len(items):
        return None
    return build_chain(a.op, a.dtype, kept, None)
