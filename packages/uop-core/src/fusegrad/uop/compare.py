"""Comparison folding for ``weakint`` sums: constants move to one side, a common factor is
divided out, and negated sums flip the comparison. The rule functions behind the comparison
rules of ``symbolic``; ranges fold comparisons to constants elsewhere (a generic rule)."""

from __future__ import annotations

import math

from fusegrad.uop.dtype import DType, dtypes
from fusegrad.uop.ops import Ops
from fusegrad.uop.terms import build_sum, collect_terms, may_be_invalid
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
        return UOp.const(x.dtype, bound // g) < y
    return y < UOp.const(x.dtype, -(-bound // g))


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
        return y < UOp.const(x.dtype, -(-bound // g))
    return UOp.const(x.dtype, bound // g) < y


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
        return UOp.const(dtypes.bool, cmp.op is Ops.CMPNE)
    y = _scaled(x.dtype, coefficients, g)
    return UOp(cmp.op, dtypes.bool, (y, UOp.const(x.dtype, bound // g)))


def fold_div_lt(x: UOp, d: UOp, c: UOp) -> UOp | None:
    """``x // d < c -> x < c*d`` for ``d > 0`` (floor(x/d) < c iff x < c*d)."""
    if not _weak(x) or not _ints(c, d) or d.arg <= 0:
        return None
    return x < UOp.const(x.dtype, c.arg * d.arg)


def fold_const_lt_div(c: UOp, x: UOp, d: UOp) -> UOp | None:
    """``c < x // d -> (c+1)*d - 1 < x`` for ``d > 0``."""
    if not _weak(x) or not _ints(c, d) or d.arg <= 0:
        return None
    return UOp.const(x.dtype, (c.arg + 1) * d.arg - 1) < x


def fold_not_lt(x: UOp, c: UOp) -> UOp | None:
    """``!(x < c) -> c-1 < x`` for ints (``c-1`` must exist in the dtype)."""
    if not isinstance(c.arg, int) or (c.arg <= dtypes.min(x.dtype) and not x.dtype.weak):
        return None
    return UOp.const(x.dtype, c.arg - 1) < x


def fold_not_gt(c: UOp, x: UOp) -> UOp | None:
    """``!(c < x) -> x < c+1`` for ints (``c+1`` must exist in the dtype)."""
    if not isinstance(c.arg, int) or (c.arg >= dtypes.max(x.dtype) and not x.dtype.weak):
        return None
    return x < UOp.const(x.dtype, c.arg + 1)
