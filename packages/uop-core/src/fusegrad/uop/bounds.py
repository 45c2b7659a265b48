"""Value-range analysis: the smallest and largest value a UOp can take (``vmin``/``vmax``).

Bounds are sound (every value the UOp takes at run time lies within them) and exact where
cheap. Fixed-width integers fall back to the dtype's full range whenever an operation could
wrap around; ``weakint`` (index math) is unbounded, so its bounds are exact integer math.
For floats the bounds cover every non-NaN result. The empty range ``lo > hi`` belongs to the
poison value ``Invalid``: it contributes nothing to a WHERE it sits in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fusegrad.uop.dtype import Invalid, dtypes, truncate
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.uop import UOp

Bound = tuple[Any, Any]
RangeRule = Callable[["UOp", list[Bound]], Bound]


def _full(u: UOp) -> Bound:
    return dtypes.min(u.dtype), dtypes.max(u.dtype)


def _corners(f: Callable[[Any, Any], Any], a: Bound, b: Bound) -> list[Any]:
    return [f(x, y) for x in a for y in b]


def _span(values: list[Any]) -> Bound:
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        return -math.inf, math.inf
    return min(values), max(values)


def _mul(x: Any, y: Any) -> Any:
    # 0 * inf is NaN for floats; as a bound, 0 is what the finite values approach
    if (x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x)):
        return 0
    return x * y


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def _div_bound(u: UOp, a: Bound, b: Bound, div: Callable[[int, int], int]) -> Bound:
    # on each sign of the divisor the quotient is monotone in both operands: corners bound it
    values: list[Any] = []
    if b[1] >= 1:
        values += _corners(div, a, (max(b[0], 1), b[1]))
    if b[0] <= -1:
        values += _corners(div, a, (b[0], min(b[1], -1)))
    if b[0] <= 0 <= b[1]:
        values.append(0)  # x / 0 is 0 (exec_alu)
    return _span(values)


def _floordiv(u: UOp, r: list[Bound]) -> Bound:
    return _div_bound(u, r[0], r[1], lambda x, y: x // y)


def _cdiv(u: UOp, r: list[Bound]) -> Bound:
    return _div_bound(u, r[0], r[1], _trunc_div)


def _floormod(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    if blo == bhi and blo > 0 and alo // blo == ahi // blo:
        return alo % blo, ahi % blo  # one period: the remainder is monotone
    if blo > 0:
        return 0, (bhi - 1 if alo < 0 else min(bhi - 1, ahi))
    if bhi < 0:
        return blo + 1, 0
    m = max(abs(blo), abs(bhi), 1) - 1  # x % 0 is 0 (exec_alu)
    return -m, m


def _cmod(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    m = max(abs(blo), abs(bhi), 1) - 1  # cmod(x, 0) is 0 (exec_alu)
    if blo == bhi and blo != 0 and alo >= 0 and alo // abs(blo) == ahi // abs(blo):
        return alo % abs(blo), ahi % abs(blo)
    if alo >= 0:
        return 0, min(ahi, m)
    if ahi <= 0:
        return max(alo, -m), 0
    return max(alo, -m), min(ahi, m)


def _may_be_nan(u: UOp) -> bool:
    """False when a float node surely holds no NaN (a constant, or a cast from an int/bool);
    float bounds otherwise only cover the non-NaN results."""
    if not dtypes.is_float(u.dtype):
        return False
    if u.op is Ops.CONST:
        return isinstance(u.arg, float) and math.isnan(u.arg)
    return not (u.op is Ops.CAST and not dtypes.is_float(u.src[0].dtype))


def _cmplt(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    if alo >= bhi:
        return False, False  # NaN < y and x < NaN are False too
    if ahi < blo:
        return (False, True) if any(_may_be_nan(s) for s in u.src) else (True, True)
    return False, True


def _cmpne(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    if ahi < blo or bhi < alo:
        return True, True  # NaN != y is True too
    if alo == ahi == blo == bhi and not any(_may_be_nan(s) for s in u.src):
        return False, False
    return False, True


def _cmpeq(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = _cmpne(u, r)
    return not hi, not lo


def _bits_above(x: int) -> int:
    """The all-ones mask covering every set bit of non-negative ``x``."""
    return (1 << x.bit_length()) - 1


def _twos_complement_span(*bounds: Bound) -> Bound:
    """[-2**k, 2**k) holding every bound: AND/OR/XOR of two's-complement values of k+1 bits
    is again one of them."""
    k = max(max(int(hi).bit_length(), (-int(lo) - 1).bit_length()) for lo, hi in bounds)
    return -(1 << k), (1 << k) - 1


def _and(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    if u.dtype.scalar() is dtypes.bool:
        return alo and blo, ahi and bhi
    if alo >= 0 and blo >= 0:
        return 0, min(ahi, bhi)
    if alo >= 0:
        return 0, ahi  # x & y clears bits of a non-negative x
    if blo >= 0:
        return 0, bhi
    return _twos_complement_span(r[0], r[1])


def _or(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    if u.dtype.scalar() is dtypes.bool:
        return alo or blo, ahi or bhi
    if alo >= 0 and blo >= 0:
        return max(alo, blo), _bits_above(max(ahi, bhi))
    return _twos_complement_span(r[0], r[1])


def _xor(u: UOp, r: list[Bound]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    if u.dtype.scalar() is dtypes.bool:
        if alo == ahi and blo == bhi:
            return alo != blo, alo != blo
        return False, True
    if alo >= 0 and blo >= 0:
        return 0, _bits_above(max(ahi, bhi))
    return _twos_complement_span(r[0], r[1])


# exec_alu shifts by [0, 4096) and gives 0 (or -1 for a negative x >> s) outside
_SHIFT_LIMIT = 4096


def _shift(r: list[Bound], f: Callable[[int, int], int], outside: list[int]) -> Bound:
    (alo, ahi), (blo, bhi) = r
    slo, shi = max(blo, 0), min(bhi, _SHIFT_LIMIT - 1)
    values = _corners(f, (alo, ahi), (slo, shi)) if slo <= shi else []
    if blo < 0 or bhi >= _SHIFT_LIMIT:
        values += outside
    return _span(values)


def _shl(u: UOp, r: list[Bound]) -> Bound:
    # x << s is monotone in x, and in s on each sign of x: the corners bound it
    return _shift(r, lambda x, s: x << s, [0])


def _shr(u: UOp, r: list[Bound]) -> Bound:
    return _shift(r, lambda x, s: x >> s, [0, -1] if r[0][0] < 0 else [0])


def _where(u: UOp, r: list[Bound]) -> Bound:
    (clo, chi), x, y = r
    if clo and chi:
        return x
    if not clo and not chi:
        return y
    if y[0] > y[1]:  # idx.valid(cond): only values where cond holds count
        return _narrowed_by(u.src[0], u.src[1], x)
    return _union([x, y])


def _narrowed_by(cond: UOp, idx: UOp, b: Bound) -> Bound:
    """``b`` intersected with the bounds the clauses ``idx < c`` / ``c < idx`` of the AND
    chain ``cond`` put on ``idx``."""
    lo, hi = b
    stack = [cond]
    while stack:
        c = stack.pop()
        if c.op is Ops.AND:
            stack.extend(c.src)
            continue
        if c.op is not Ops.CMPLT:
            continue
        a, k = c.src
        if a is idx and k.op is Ops.CONST and type(k.arg) is int:
            hi = min(hi, k.arg - 1)
        elif k is idx and a.op is Ops.CONST and type(a.arg) is int:
            lo = max(lo, a.arg + 1)
    return lo, hi


def _union(bounds: list[Bound]) -> Bound:
    return min(b[0] for b in bounds), max(b[1] for b in bounds)


def _cast(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = r[0]
    dt = u.dtype
    if dt.scalar() is dtypes.bool:
        return _cast_to_bool(u, lo, hi)
    if dtypes.is_float(dt):
        conv = truncate(dt)  # rounding is monotone: the ends bound the rest
        return conv(lo), conv(hi)
    if dtypes.is_float(u.src[0].dtype):
        return _float_to_int_bounds(u, lo, hi)
    if dt.scalar() is dtypes.weakint or dtypes.min(dt) <= lo <= hi <= dtypes.max(dt):
        return int(lo), int(hi)
    return _full(u)  # the value may wrap around


def _cast_to_bool(u: UOp, lo: Any, hi: Any) -> Bound:
    if lo > 0 or hi < 0:
        return True, True  # NaN is truthy too
    if lo == hi == 0 and not _may_be_nan(u.src[0]):
        return False, False
    return False, True


def _float_to_int_bounds(u: UOp, lo: Any, hi: Any) -> Bound:
    """float -> int truncates toward zero; NaN, inf and out-of-range values become int64's
    minimum wrapped to the width (see ``truncate``)."""
    conv = truncate(u.dtype)
    indefinite = conv(math.nan)
    finite = math.isfinite(lo) and math.isfinite(hi) and -(2.0**63) < lo <= hi < 2.0**63
    ilo, ihi = (math.trunc(lo), math.trunc(hi)) if finite else (0, 0)
    fits = u.dtype.scalar() is dtypes.weakint or dtypes.min(u.dtype) <= ilo <= ihi <= dtypes.max(
        u.dtype
    )
    if not finite or not fits:
        return _full(u)
    if _may_be_nan(u.src[0]):
        return min(ilo, indefinite), max(ihi, indefinite)
    return ilo, ihi


def _float_unary(f: Callable[[float], float]) -> RangeRule:
    """A monotone increasing float function applied to the bounds."""

    def rule(u: UOp, r: list[Bound]) -> Bound:
        lo, hi = r[0]
        return f(lo), f(hi)

    return rule


def _exp2(x: float) -> float:
    try:
        return float(2.0**x)
    except OverflowError:
        return math.inf


def _log2(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = r[0]
    if hi <= 0:
        return -math.inf, math.inf if hi < 0 else -math.inf
    return (math.log2(lo) if lo > 0 else -math.inf), (math.log2(hi) if hi < math.inf else hi)


def _sqrt(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = r[0]
    if hi < 0:
        return -math.inf, math.inf
    return (math.sqrt(lo) if lo > 0 else 0.0), (math.sqrt(hi) if hi < math.inf else hi)


def _reciprocal(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = r[0]
    if lo > 0 or hi < 0:
        return _span([1.0 / hi if hi else -math.inf, 1.0 / lo if lo else math.inf])
    return -math.inf, math.inf


def _fdiv(u: UOp, r: list[Bound]) -> Bound:
    return _mul_rule(u, [r[0], _reciprocal(u, [r[1]])])


def _mul_rule(u: UOp, r: list[Bound]) -> Bound:
    return _span(_corners(_mul, r[0], r[1]))


def _mulacc(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = _mul_rule(u, r)
    return lo + r[2][0], hi + r[2][1]


def _trunc_float(v: Any) -> Any:
    return float(math.trunc(v)) if math.isfinite(v) else v


def _trunc(u: UOp, r: list[Bound]) -> Bound:
    lo, hi = r[0]
    return _trunc_float(lo), _trunc_float(hi)


def _range_like(u: UOp, r: list[Bound]) -> Bound:
    return 0, max(r[0][1] - 1, 0)


def _vector(u: UOp, r: list[Bound]) -> Bound:
    return _union(r) if r else _full(u)


RANGE_RULES: dict[Ops, RangeRule] = {
    Ops.ADD: lambda u, r: (r[0][0] + r[1][0], r[0][1] + r[1][1]),
    Ops.SUB: lambda u, r: (r[0][0] - r[1][1], r[0][1] - r[1][0]),
    Ops.MUL: _mul_rule,
    Ops.NEG: lambda u, r: (-r[0][1], -r[0][0]),
    Ops.MULACC: _mulacc,
    Ops.FLOORDIV: _floordiv,
    Ops.CDIV: _cdiv,
    Ops.FLOORMOD: _floormod,
    Ops.CMOD: _cmod,
    Ops.MAX: lambda u, r: (max(r[0][0], r[1][0]), max(r[0][1], r[1][1])),
    Ops.CMPLT: _cmplt,
    Ops.CMPNE: _cmpne,
    Ops.CMPEQ: _cmpeq,
    Ops.AND: _and,
    Ops.OR: _or,
    Ops.XOR: _xor,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.WHERE: _where,
    Ops.CAST: _cast,
    Ops.EXP2: _float_unary(_exp2),
    Ops.LOG2: _log2,
    Ops.SQRT: _sqrt,
    Ops.SIN: lambda u, r: (-1.0, 1.0),
    Ops.RECIPROCAL: _reciprocal,
    Ops.FDIV: _fdiv,
    Ops.TRUNC: _trunc,
    Ops.RANGE: _range_like,
    Ops.SPECIAL: _range_like,
    Ops.VECTORIZE: _vector,
    Ops.GEP: lambda u, r: r[0],
    Ops.AFTER: lambda u, r: r[0],
}


def _leaf_bounds(u: UOp) -> Bound | None:
    """Bounds of nodes whose value is in their arg, or None."""
    if u.op is Ops.CONST:
        if u.arg is Invalid:
            return dtypes.max(u.dtype), dtypes.min(u.dtype)  # empty: Invalid has no value
        return u.arg, u.arg
    if u.op is Ops.VCONST:
        vals = [v for v in u.arg if v is not Invalid]
        return (min(vals), max(vals)) if vals else _full(u)
    if u.op is Ops.DEFINE_VAR or (u.op is Ops.PARAM and isinstance(u.arg, tuple)):
        if len(u.arg) > 3:  # multiple_of m: the nearest multiples inside the range
            m = u.arg[3]
            return -(-u.arg[1] // m) * m, u.arg[2] // m * m
        return u.arg[1], u.arg[2]
    return None


def _fit(u: UOp, b: Bound) -> Bound:
    """Clamp computed bounds to what the dtype can hold: fixed-width integers that might have
    wrapped get the full range; floats round outward-safely to the dtype."""
    s = u.dtype.scalar()
    if s is dtypes.weakint:
        return b  # index math is unbounded: nothing to clamp
    lo, hi = b
    if s is dtypes.bool:
        return bool(lo), bool(hi)
    if s in _FIXED_INTS:
        if isinstance(lo, float) or isinstance(hi, float):
            return _full(u)
        if lo < dtypes.min(s) or hi > dtypes.max(s):
            return _full(u)
        return lo, hi
    if s in _FLOATS:
        conv = truncate(s)
        return conv(lo), conv(hi)
    return lo, hi


_LEAF_OPS = frozenset({Ops.CONST, Ops.VCONST, Ops.DEFINE_VAR, Ops.PARAM})
_VALUE_DTYPES = frozenset(dtypes.all)
_FIXED_INTS = frozenset(dtypes.ints) - {dtypes.weakint}
_FLOATS = frozenset(dtypes.floats)


def min_max(u: UOp) -> Bound:
    """(vmin, vmax) of ``u`` computed from its sources' cached bounds."""
    op = u.op
    if op in _LEAF_OPS and (leaf := _leaf_bounds(u)) is not None:
        return leaf
    if u.dtype.scalar() not in _VALUE_DTYPES:
        return 0, 0  # void, pointers: no values
    rule = RANGE_RULES.get(op)
    if rule is None:
        return _full(u)
    src_bounds = [s._min_max for s in u.src]
    # an Invalid operand (empty range) makes the result Invalid too, except through WHERE
    # (a NaN bound compares False, so float bounds with NaN never count as empty)
    if op is not Ops.WHERE:
        for lo, hi in src_bounds:
            if lo > hi:
                return dtypes.max(u.dtype), dtypes.min(u.dtype)
    if op is Ops.RANGE or op is Ops.SPECIAL:
        return rule(u, src_bounds)
    return _fit(u, rule(u, src_bounds))
