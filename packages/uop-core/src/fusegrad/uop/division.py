"""Integer division and remainder folding: the rule functions behind ``symbolic``'s div/mod
rules, for floor (``//``, ``%``) and truncating (``cdiv``, ``cmod``) forms.

Two kinds of facts are used, and each rule says which:

* **range facts** (any int dtype): the value range of the dividend, e.g. ``x//4 -> 0`` when
  ``0 <= x < 4``. Bounds are sound for fixed-width ints (they widen to the full range when a
  value may wrap), so these rules hold under wrap-around too.
* **linear facts** (``weakint`` only): rewriting ``(x*4+y)//4`` as ``x + y//4`` assumes the sum
  is the mathematical integer; a fixed-width sum may have wrapped, so these rules skip them.
"""

from __future__ import annotations

import math

from fusegrad.uop.alu import exec_alu
from fusegrad.uop.dtype import DType, dtypes
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.terms import build_sum, collect_terms, may_be_invalid
from fusegrad.uop.uop import UOp


def exact_ints(dt: DType) -> bool:
    """True for the dtype whose arithmetic never wraps (index math, ``weakint``)."""
    return dt.scalar() is dtypes.weakint


def _fits(dt: DType, value: int) -> bool:
    return exact_ints(dt) or dtypes.min(dt) <= value <= dtypes.max(dt)


def _positive(*consts: UOp) -> bool:
    """True when every constant is an int above 0 (not ``Invalid``)."""
    return all(type(c.arg) is int and c.arg > 0 for c in consts)


def _split_coefficient(k: int, c: int) -> tuple[int, int]:
    """``k = q*c + r`` with ``|r| < c`` and ``r`` of ``k``'s sign (q = 0 when ``|k| < c``)."""
    q = k // c if k >= 0 else -((-k) // c)
    return q, k - q * c


def _split_sum(x: UOp, c: int) -> tuple[UOp, UOp] | None:
    """``x`` as ``c*quotient + remainder`` with every remainder coefficient below ``c`` in
    magnitude; None when no coefficient (or the constant) reaches ``c``."""
    coefficients, const = collect_terms(x)
    quotient: dict[UOp, int] = {}
    remainder: dict[UOp, int] = {}
    for base, k in coefficients.items():
        q, r = _split_coefficient(k, c)
        if q:
            quotient[base] = q
        if r:
            remainder[base] = r
    q0, r0 = _split_coefficient(const, c)
    if not quotient and q0 == 0:
        return None
    return build_sum(x.dtype, quotient, q0), build_sum(x.dtype, remainder, r0)


def _common_factor(x: UOp, c: int) -> tuple[int, UOp, int] | None:
    """``(g, y, r)`` with ``x == g*y + r``, ``g = gcd(coefficients, c) > 1``, ``0 <= r < g``."""
    coefficients, const = collect_terms(x)
    if not coefficients:
        return None
    g = math.gcd(c, *coefficients.values())
    if g <= 1:
        return None
    divided = {base: k // g for base, k in coefficients.items()}
    return g, build_sum(x.dtype, divided, const // g), const % g


def _const(x: UOp, value: int) -> UOp:
    return UOp.const(value, x.dtype)


def fold_floordiv(x: UOp, d: UOp) -> UOp | None:
    """``x // c`` for a constant ``c``."""
    c = d.arg
    if type(c) is not int:
        return None
    if c < 0:
        # x // c == (-x) // (-c)                                 (linear fact)
        return (-x) // _const(x, -c) if exact_ints(x.dtype) else None
    if c == 0 or may_be_invalid(x):
        return None
    if x.vmin // c == x.vmax // c:
        return _const(x, x.vmin // c)  # one quotient over x's range      (range fact)
    if not exact_ints(x.dtype):
        return None
    if (split := _split_sum(x, c)) is not None:
        quotient, remainder = split  # (c*q + r) // c == q + r // c
        return quotient + remainder // d
    if (factored := _common_factor(x, c)) is not None:
        g, y, _ = factored  # (g*y + r) // (g*c') == y // c'  for 0 <= r < g
        return y // _const(x, c // g)
    return None


def fold_floormod(x: UOp, d: UOp) -> UOp | None:
    """``x % c`` for a constant ``c``."""
    c = d.arg
    if type(c) is not int:
        return None
    if c < 0:
        # x % c == -((-x) % (-c))                                (linear fact)
        return -((-x) % _const(x, -c)) if exact_ints(x.dtype) else None
    if c == 0 or may_be_invalid(x):
        return None
    if x.vmin // c == x.vmax // c:
        return x - _const(x, (x.vmin // c) * c)  # one period: x - q*c       (range fact)
    if not exact_ints(x.dtype):
        return None
    if (split := _split_sum(x, c)) is not None:
        return split[1] % d  # (c*q + r) % c == r % c
    if (factored := _common_factor(x, c)) is not None:
        g, y, r = factored  # (g*y + r) % (g*c') == g*(y % c') + r
        return (y % _const(x, c // g)) * g + r
    return None


def _truncating_by_sign(x: UOp, d: UOp, op: Ops) -> UOp | None:
    """cdiv/cmod by ``c > 0`` as floor forms when the dividend's sign is known."""
    if x.vmin >= 0:
        return UOp(Ops.FLOORDIV if op is Ops.CDIV else Ops.FLOORMOD, x.dtype, (x, d))
    if x.vmax <= 0 and exact_ints(x.dtype):
        floor = (-x) // d if op is Ops.CDIV else (-x) % d
        return -floor  # cdiv(x, c) == -((-x) // c) for x <= 0
    return None


def _exact_quotient(x: UOp, c: int) -> UOp | None:
    """``x / c`` when ``c`` divides every coefficient and the constant (weakint only)."""
    if not exact_ints(x.dtype):
        return None
    coefficients, const = collect_terms(x)
    if const % c or any(k % c for k in coefficients.values()):
        return None
    return build_sum(x.dtype, {b: k // c for b, k in coefficients.items()}, const // c)


def fold_cdiv(x: UOp, d: UOp) -> UOp | None:
    """``cdiv(x, c)`` for a constant ``c``."""
    c = d.arg
    if type(c) is not int:
        return None
    if c < 0:
        # cdiv(x, c) == -cdiv(x, -c)
        return -x.cdiv(_const(x, -c)) if _fits(x.dtype, -c) else None
    if c == 0 or may_be_invalid(x):
        return None
    low, high = exec_alu(Ops.CDIV, x.dtype, [x.vmin, c]), exec_alu(Ops.CDIV, x.dtype, [x.vmax, c])
    if low == high:
        return _const(x, low)  # truncation is monotone                  (range fact)
    if (same := _truncating_by_sign(x, d, Ops.CDIV)) is not None:
        return same
    return _exact_quotient(x, c)  # exact division rounds neither way


def fold_cmod(x: UOp, d: UOp) -> UOp | None:
    """``cmod(x, c)`` for a constant ``c``."""
    c = d.arg
    if type(c) is not int:
        return None
    if c < 0:
        # cmod(x, c) == cmod(x, -c): the sign follows the dividend
        return x.cmod(_const(x, -c)) if _fits(x.dtype, -c) else None
    if c == 0 or may_be_invalid(x):
        return None
    if -c < x.vmin and x.vmax < c:
        return x  # |x| < c                                                 (range fact)
    if (same := _truncating_by_sign(x, d, Ops.CMOD)) is not None:
        return same
    return None if _exact_quotient(x, c) is None else _const(x, 0)


def fold_nested_floordiv(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """``(x // a) // b -> x // (a*b)`` for ``a, b > 0``."""
    if not _positive(a, b) or not _fits(x.dtype, a.arg * b.arg):
        return None
    return x // _const(x, a.arg * b.arg)


def fold_shifted_floordiv(x: UOp, a: UOp, k: UOp, b: UOp) -> UOp | None:
    """``(x // a + k) // b -> (x + k*a) // (a*b)`` for ``a, b > 0`` (weakint)."""
    if not _positive(a, b) or type(k.arg) is not int or not exact_ints(x.dtype):
        return None
    return (x + _const(x, k.arg * a.arg)) // _const(x, a.arg * b.arg)


def fold_mod_then_div(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """``(x % a) // b -> (x // b) % (a // b)`` when ``b`` divides ``a`` (``a, b > 0``)."""
    if not _positive(a, b) or a.arg % b.arg:
        return None
    return (x // b) % _const(x, a.arg // b.arg)


def fold_mod_of_mod(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """``(x % a) % b -> x % b`` when ``b`` divides ``a`` (``a, b > 0``)."""
    if not _positive(a, b) or a.arg % b.arg:
        return None
    return x % b


def nonzero(u: UOp) -> bool:
    """True when ``u`` can't be 0 (by its range)."""
    return bool(u.vmin > 0 or u.vmax < 0)
