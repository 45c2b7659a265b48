"""Symbolic simplification rule sets, each a PatternMatcher composed by name.

* ``symbolic_simple``: constant folding with exact dtype semantics and cheap identities
* ``commutative``: canonical operand order, so ``a+b`` and ``b+a`` are the same node
* ``symbolic``: the two above + algebra: term collection, div/mod folding, comparisons,
  ``where``/``max`` folding, boolean algebra, masks and shifts, cast chains
* ``sym``: ``symbolic`` + index-validity rules; what ``UOp.simplify`` uses

Soundness: every rule holds for every value its operands can take, under the executable
semantics of ``exec_alu`` (wrap-around fixed-width ints, IEEE floats, integer division by
zero is 0). Ring identities (term collection, constant gathering) hold under wrap-around;
rules that need the mathematical integers (div/mod of sums, moving constants across ``<``)
are restricted to ``weakint``. Rules that read ranges (``vmin``/``vmax``) are sound for every
dtype because the bounds are. A rule that would drop an operand that may be ``Invalid``
doesn't fire (``sym`` first lifts ``Invalid`` out of the expression).

>>> from fusegrad.uop import UOp
>>> x, y = UOp.variable("x", 0, 10), UOp.variable("y", 0, 3)
>>> ((x*4 + y) // 4).simplify().render()
'x'
>>> (x*2 + y + x*3).simplify().render()
'x*5+y'
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from fusegrad.uop.alu import exec_alu
from fusegrad.uop.compare import (
    fold_const_lt,
    fold_const_lt_div,
    fold_div_lt,
    fold_eq_const,
    fold_lt_const,
    fold_not_gt,
    fold_not_lt,
    merge_bound_clauses,
)
from fusegrad.uop.division import (
    exact_ints,
    fold_cdiv,
    fold_cmod,
    fold_floordiv,
    fold_floormod,
    fold_mod_of_mod,
    fold_mod_then_div,
    fold_nested_floordiv,
    fold_shifted_floordiv,
    nonzero,
)
from fusegrad.uop.dtype import ConstType, DType, Invalid, dtypes, truncate
from fusegrad.uop.exported_rules import (
    REMOVE_FROM_SINK_LIKE,
    canonicalize_simplex,
    fold_add_divmod_recombine,
    fold_bitcast,
    fold_const_where,
    fold_where_closure,
    mop_cleanup,
    pm_clean_up_group_sink,
    reduce_mul_chain,
)
from fusegrad.uop.flags import IMAGE
from fusegrad.uop.opcodes import GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.terms import (
    bounds,
    flatten,
    may_be_invalid,
    normalize_bitwise_chain,
    normalize_product,
    normalize_sum,
    operand_key,
    scale_canonical_sum,
)
from fusegrad.uop.uop import UOp
from fusegrad.uop.validity import (
    _bound_clause,
    _simplify_valid,
    pm_validity,
    simplify_valid,
    uop_given_valid,
)

INTS = dtypes.ints
BOOL = dtypes.bool
_INTS_AND_BOOL = frozenset((*INTS, BOOL))


def _cint(name: str) -> UPat:
    """A scalar integer constant (an Invalid constant is rejected by the rule functions)."""
    return UPat(Ops.CONST, INTS, src=(), name=name)


def _is_int(c: UOp) -> bool:
    return type(c.arg) is int


# -- symbolic_simple -----------------------------------------------------------------------------


def _fold_constants(a: UOp) -> UOp | None:
    """ALU op on constants -> the constant (computed exactly as the dtype would)."""
    if a.dtype.count > 1:
        return None
    for s in a.src:
        if s.op is not Ops.CONST or s.arg is Invalid or s.src:
            return None
    if a.op is Ops.POW and _is_int(a.src[1]) and abs(a.src[1].arg) > 4096:
        return None  # an exponent this big is a mistake; folding it would take forever
    return UOp.const(exec_alu(a.op, a.dtype, [s.arg for s in a.src]), a.dtype)


def _fold_cast(x: UOp, a: UOp) -> UOp | None:
    """cast(const) -> const, converted exactly; cast to the same dtype -> the operand."""
    if x.dtype is a.dtype:
        return x
    if x.op is not Ops.CONST or x.arg is Invalid or x.src or a.dtype.count > 1:
        return None
    return UOp.const(x.arg, a.dtype)


def _is_neg_zero(c: UOp) -> bool:
    return isinstance(c.arg, float) and c.arg == 0 and math.copysign(1.0, c.arg) < 0


def _add_zero(x: UOp, c: UOp) -> UOp | None:
    # x + 0.0 is not x for x = -0.0 (the sum is +0.0); x + -0.0 is always x
    if c.arg is Invalid or c.arg != 0 or (dtypes.is_float(x.dtype) and not _is_neg_zero(c)):
        return None
    return x


def _sub_zero(x: UOp, c: UOp) -> UOp | None:
    # x - 0.0 is x (even -0.0 - 0.0 == -0.0); x - -0.0 is not (-0.0 - -0.0 == +0.0)
    if c.arg is Invalid or c.arg != 0 or _is_neg_zero(c):
        return None
    return x


def _zero_like(x: UOp, *dropped: UOp) -> UOp | None:
    """0 of ``x``'s dtype, unless an operand being dropped (``x`` too) may be Invalid."""
    if may_be_invalid(x) or any(may_be_invalid(d) for d in dropped):
        return None
    return x.const_like(0)


def _const_of(dt: DType, value: bool, *dropped: UOp) -> UOp | None:
    """``value`` as ``dt`` with the lanes of the (compared) operands: x < x of a vector is a
    vector of False."""
    if any(may_be_invalid(d) for d in dropped):
        return None
    lanes = dropped[0].dtype.count if dropped else 1
    return UOp.const(value, dt.vec(lanes) if lanes > 1 else dt)


def _where_const(c: UOp, a: UOp, b: UOp) -> UOp | None:
    if c.arg is Invalid:
        return None
    return a if c.arg else b


def _where_same(c: UOp, x: UOp) -> UOp | None:
    return None if may_be_invalid(c) else x


def _zero_dropping(x: UOp, y: UOp) -> UOp | None:
    return _zero_like(x, y)


_X, _Y, _A, _B, _C = (UPat.var(n) for n in "xyabc")
_XI = UPat.var("x", INTS)
_ZERO = UPat.const(0, INTS).named("x")
_CONST = UPat.cvar("c", vec=False)

const_folding_pat = UPat(GroupOp.ALU, name="a")
"""The pattern of the constant-folding rule (any ALU node ``a``: the rule folds it when every
source is a scalar constant)."""

symbolic_simple = PatternMatcher(
    [
        (const_folding_pat, _fold_constants),  # op(consts) -> const
        (_X.cast(name="a"), _fold_cast),  # cast(c) -> c; cast(x: dt, dt) -> x
        (_X + _CONST, _add_zero),  # x + 0 -> x (floats: only x + -0.0)
        (_X - _CONST, _sub_zero),  # x - 0 -> x (floats: only x - 0.0)
        (_X * 1, lambda x: x),  # x * 1 -> x (exact for floats too)
        (_XI * 0, _zero_like),  # x * 0 -> 0 (ints only: NaN*0 is NaN)
        (_X / 1.0, lambda x: x),  # x / 1.0 -> x
        (_X // 1, lambda x: x),  # x // 1 -> x
        (_X.cdiv(1), lambda x: x),  # cdiv(x, 1) -> x
        (_XI // 0, _zero_like),  # x // 0 -> 0 (exec_alu: integer division by zero is 0)
        (_XI.cdiv(0), _zero_like),  # cdiv(x, 0) -> 0
        (_XI // -1, lambda x: -x),  # x // -1 -> -x
        (_XI.cdiv(-1), lambda x: -x),  # cdiv(x, -1) -> -x
        (_XI % 1, _zero_like),  # x % 1 -> 0
        (_XI % -1, _zero_like),  # x % -1 -> 0
        (_XI.cmod(1), _zero_like),  # cmod(x, 1) -> 0
        (_XI.cmod(-1), _zero_like),  # cmod(x, -1) -> 0
        (_XI % _X, _zero_like),  # x % x -> 0 (x % 0 is 0 too)
        (_XI.cmod(_X), _zero_like),  # cmod(x, x) -> 0
        (_ZERO // _Y, _zero_dropping),  # 0 // y -> 0
        (_ZERO % _Y, _zero_dropping),  # 0 % y -> 0
        (_ZERO.cdiv(_Y), _zero_dropping),  # cdiv(0, y) -> 0
        (_ZERO.cmod(_Y), _zero_dropping),  # cmod(0, y) -> 0
        (UPat(Ops.NEG, src=(UPat(Ops.NEG, src=(_X,)),)), lambda x: x),  # -(-x) -> x
        (_X & _X, lambda x: x),  # x & x -> x
        (_X | _X, lambda x: x),  # x | x -> x
        (_X.maximum(_X), lambda x: x),  # max(x, x) -> x
        (UPat.var("x", (*INTS, BOOL)) ^ _X, _zero_like),  # x ^ x -> 0
        (UPat(Ops.CMPLT, src=(_X, _X)), lambda x: _const_of(BOOL, False, x)),  # x < x -> False (NaN < NaN too)
        (UPat.var("x", (*INTS, BOOL)).ne(_X), lambda x: _const_of(BOOL, False, x)),  # x != x -> False (not for NaN)
        (UPat.var("x", (*INTS, BOOL)).eq(_X), lambda x: _const_of(BOOL, True, x)),  # x == x -> True (not for NaN)
        (UPat.var("x", BOOL).ne(False), lambda x: x),  # x != False -> x
        (UPat.var("x", BOOL).eq(True), lambda x: x),  # x == True -> x
        (UPat.var("x", BOOL).eq(False), lambda x: x.logical_not()),  # x == False -> !x
        (UPat.var("x", BOOL).logical_not().logical_not(), lambda x: x),  # !!x -> x
        (_XI << 0, lambda x: x),  # x << 0 -> x
        (_XI >> 0, lambda x: x),  # x >> 0 -> x
        (_CONST.where(_A, _B), _where_const),  # where(True, a, b) -> a; where(False, a, b) -> b
        (_C.where(_X, _X), _where_same),  # where(c, x, x) -> x
    ]
)  # fmt: skip


# -- commutative ---------------------------------------------------------------------------------


def _canonical_order(a: UOp) -> UOp | None:
    """Swap the two operands when the second sorts first (see ``terms.operand_key``)."""
    if len(a.src) != 2 or not operand_key(a.src[1], a.op) < operand_key(a.src[0], a.op):
        return None
    return a.replace(src=(a.src[1], a.src[0]))


commutative = PatternMatcher(
    [(UPat(GroupOp.Commutative, name="a"), _canonical_order)]
)  # a op b -> b op a


# -- symbolic ------------------------------------------------------------------------------------


def _fold_by_range(a: UOp) -> UOp | None:
    """An int/bool node whose range is one value -> that value."""
    if a.dtype.count > 1 or a.dtype.scalar() not in _INTS_AND_BOOL:
        return None
    lo, hi = bounds(a)
    if lo != hi or may_be_invalid(a):
        return None
    return UOp.const(lo, a.dtype)


def _sum(a: UOp) -> UOp | None:
    return None if may_be_invalid(a) else normalize_sum(a)


def _product(a: UOp) -> UOp | None:
    return None if may_be_invalid(a) else normalize_product(a)


def _chain(a: UOp) -> UOp | None:
    if may_be_invalid(a) or (dtypes.is_float(a.dtype) and a.op is not Ops.MAX):
        return None
    return normalize_bitwise_chain(a)


def _distribute(s: UOp, c: UOp) -> UOp | None:
    """``(a + b) * c -> a*c + b*c`` for an int constant ``c`` (a ring identity)."""
    if not _is_int(c) or may_be_invalid(s):
        return None
    if (scaled := scale_canonical_sum(s, c.arg)) is not None:
        return scaled  # all terms at once: a chain of n terms costs O(n), not O(n**2)
    out = s.src[0] * c
    return out + s.src[1] * c


def _max_by_range(x: UOp, y: UOp) -> UOp | None:
    """``max(x, y) -> x`` when ``x >= y`` over their ranges (ints/bools: floats may be NaN)."""
    if dtypes.is_float(x.dtype) or may_be_invalid(y):
        return None
    return x if x.vmin >= y.vmax else None


def _shl_to_mul(x: UOp, c: UOp) -> UOp | None:
    """``x << c -> x * 2**c`` (ints, ``0 <= c < bits``: a ring identity)."""
    if not _is_int(c) or not 0 <= c.arg < x.dtype.scalar().bitsize:
        return None
    return x * UOp.const(1 << c.arg, x.dtype)


def _shr_to_div(x: UOp, c: UOp) -> UOp | None:
    """``x >> c -> x // 2**c`` (ints; arithmetic shift is floor division)."""
    if not _is_int(c) or not 0 <= c.arg < x.dtype.scalar().bitsize:
        return None
    if not exact_ints(x.dtype) and (1 << c.arg) > dtypes.max(x.dtype):
        return None
    return x // UOp.const(1 << c.arg, x.dtype)


def _fold_mask(x: UOp, c: UOp) -> UOp | None:
    """``x & c`` with ``0 <= x < 2**j``: ``x`` when ``c`` keeps the low j bits, 0 when it
    clears them; on weakint ``x & (2**k-1) -> x % 2**k``."""
    if not _is_int(c) or may_be_invalid(x):
        return None
    if x.vmin >= 0:
        low = (1 << int(x.vmax).bit_length()) - 1
        if c.arg & low == low:
            return x
        if c.arg & low == 0:
            return x.const_like(0)
    if exact_ints(x.dtype) and c.arg > 0 and (c.arg + 1) & c.arg == 0:
        return x % UOp.const(c.arg + 1, x.dtype)
    return None


def _holds_exactly(inner: DType, x: UOp) -> bool:
    """True when casting ``x`` to ``inner`` keeps its value (NaN, inf and -0.0 included)."""
    if x.dtype.scalar() is BOOL:
        return True
    if dtypes.is_int(inner) and dtypes.is_int(x.dtype):
        return exact_ints(inner) or dtypes.min(inner) <= x.vmin <= x.vmax <= dtypes.max(inner)
    if not dtypes.is_float(inner):
        return False
    e_in, m_in = dtypes.finfo(inner)
    if dtypes.is_int(x.dtype):
        limit = 1 << (m_in + 1)
        return bool(-limit <= x.vmin and x.vmax <= limit)
    if inner.scalar() in dtypes.fp8s or x.dtype.scalar() in dtypes.fp8s:
        return False  # fp8 formats have no inf / other NaNs; keep them out
    e_x, m_x = dtypes.finfo(x.dtype)
    return e_in >= e_x and m_in >= m_x


def _fold_cast_chain(x: UOp, mid: UOp, a: UOp) -> UOp | None:
    """``cast(cast(x, mid), out) -> cast(x, out)`` when ``mid`` holds every value of ``x``."""
    if not _holds_exactly(mid.dtype, x) or may_be_invalid(x):
        return None
    return x.cast(a.dtype)


def _flip_where(c: UOp, a: UOp, b: UOp) -> UOp | None:
    """``where(!c, a, b) -> where(c, b, a)``, keeping ``Invalid`` in the else branch."""
    if b.op is Ops.CONST and b.arg is Invalid:
        return None
    return c.where(b, a)


def _invalid_to_else(c: UOp, a: UOp, x: UOp) -> UOp | None:
    """``where(c, Invalid, x) -> where(!c, x, Invalid)`` (the ``x.valid(cond)`` form)."""
    if a.arg is not Invalid or (x.op is Ops.CONST and x.arg is Invalid):
        return None
    return c.logical_not().where(x, a)


def _where_to_max(x: UOp, y: UOp) -> UOp | None:
    """``where(x < y, y, x) -> max(x, y)`` (ints: for floats a NaN y would differ)."""
    return None if dtypes.is_float(x.dtype) else x.maximum(y)


def _not_lt(x: UOp, c: UOp) -> UOp | None:
    return fold_not_lt(x, c) if _is_int(c) else None


def _not_gt(c: UOp, x: UOp) -> UOp | None:
    return fold_not_gt(c, x) if _is_int(c) else None


def _x_div_x(x: UOp) -> UOp | None:
    """``x // x -> 1`` when ``x`` can't be 0 (floor and truncating)."""
    return x.const_like(1) if nonzero(x) and not may_be_invalid(x) else None


def _cancel_factor(x: UOp, y: UOp) -> UOp | None:
    """``(x*y) // y -> x`` when ``y`` can't be 0 (weakint: the product must not wrap)."""
    if not exact_ints(x.dtype) or not nonzero(y) or may_be_invalid(y):
        return None
    return x


def _multiple_mod(x: UOp, y: UOp) -> UOp | None:
    """``(x*y) % y -> 0`` (weakint; also for y == 0, where x % 0 is 0)."""
    if not exact_ints(x.dtype) or may_be_invalid(x) or may_be_invalid(y):
        return None
    return x.const_like(0)


def _known_factor(x: UOp) -> int:
    """An int known to divide ``x``: ``const_factor`` for index math (weakint never wraps), a
    Variable's ``multiple_of`` for fixed-width ints (wrap-around keeps only that)."""
    return x.const_factor() if exact_ints(x.dtype) else x.multiple_of


def _mod_of_multiple(x: UOp, d: UOp) -> UOp | None:
    """``x % c -> 0`` when ``c`` divides ``x`` (``multiple_of`` Variables, ``x*4 % 2``)."""
    c = d.arg
    if type(c) is not int or c <= 0 or may_be_invalid(x) or _known_factor(x) % c:
        return None
    return x.const_like(0)


def _mod_drop_multiple(x: UOp, y: UOp, d: UOp) -> UOp | None:
    """``(x + y) % c -> y % c`` when ``c`` divides ``x`` (weakint)."""
    c = d.arg
    if type(c) is not int or c <= 0 or not exact_ints(x.dtype) or x.const_factor() % c:
        return None
    return None if may_be_invalid(x) else y % d


def _div_split_multiple(x: UOp, y: UOp, d: UOp) -> UOp | None:
    """``(x + y) // c -> x // c + y // c`` when ``c`` divides ``x`` (weakint; exact: x/c is
    an integer)."""
    c = d.arg
    if type(c) is not int or c <= 1 or not exact_ints(x.dtype) or x.multiple_of % c:
        return None
    return None if may_be_invalid(x) or may_be_invalid(y) else x // d + y // d


def _div_mul_multiple(x: UOp, d: UOp) -> UOp | None:
    """``(x // c) * c -> x`` when ``c`` divides ``x``."""
    c = d.arg
    if type(c) is not int or c <= 0 or may_be_invalid(x) or _known_factor(x) % c:
        return None
    return x


def _where_same_cond_then(c: UOp, a: UOp, b: UOp, d: UOp) -> UOp:
    return c.where(a, d)  # where(c, where(c, a, b), d) -> where(c, a, d)


def _where_same_cond_else(c: UOp, a: UOp, b: UOp, d: UOp) -> UOp:
    return c.where(a, d)  # where(c, a, where(c, b, d)) -> where(c, a, d)


def _where_and(a: UOp, b: UOp, x: UOp, y: UOp) -> UOp:
    return (a & b).where(x, y)  # where(a, where(b, x, y), y) -> where(a & b, x, y)


def _where_or(a: UOp, b: UOp, x: UOp, y: UOp) -> UOp:
    return (a | b).where(x, y)  # where(a, x, where(b, x, y)) -> where(a | b, x, y)


_x, _y, _c, _d = UPat.var("x", INTS), UPat.var("y", INTS), _cint("c"), _cint("d")
_a, _b = _cint("a"), _cint("b")
_D = UPat.var("d")
_CAST_CHAIN = UPat(Ops.CAST, src=(UPat(Ops.CAST, src=(_X,), name="mid"),), name="a")

div_and_mod_symbolic = PatternMatcher(
    [
        ((_x // _a) // _b, fold_nested_floordiv),  # (x//a)//b -> x//(a*b)
        ((_x // _a + _cint("k")) // _b, fold_shifted_floordiv),  # (x//a + k)//b -> (x + k*a)//(a*b)
        ((_x % _a) // _b, fold_mod_then_div),  # (x%a)//b -> (x//b)%(a//b) when b | a
        ((_x % _a) % _b, fold_mod_of_mod),  # (x%a)%b -> x%b when b | a
        (_x % _d, _mod_of_multiple),  # x % c -> 0 when c | x (multiple_of Variables)
        ((_x + _y) % _d, _mod_drop_multiple),  # (x + y) % c -> y % c when c | x
        ((_x + _y) // _d, _div_split_multiple),  # (x + y) // c -> x//c + y//c (x multiple_of c)
        ((_x // _d) * _d, _div_mul_multiple),  # (x // c) * c -> x when c | x
        (_x // _d, fold_floordiv),  # (c*q + r)//c -> q + r//c, ranges, gcd
        (_x % _d, fold_floormod),  # (c*q + r)%c -> r%c, ranges, gcd
        (_x.cdiv(_d), fold_cdiv),  # cdiv by sign, ranges, exact quotients
        (_x.cmod(_d), fold_cmod),  # cmod by sign, ranges, exact quotients
        (_x // _x, _x_div_x),  # x // x -> 1 (x != 0)
        (_x.cdiv(_x), _x_div_x),  # cdiv(x, x) -> 1 (x != 0)
        ((_x * _y) // _y, _cancel_factor),  # (x*y) // y -> x (y != 0)
        ((_x * _y).cdiv(_y), _cancel_factor),  # cdiv(x*y, y) -> x (y != 0)
        ((_x * _y) % _y, _multiple_mod),  # (x*y) % y -> 0
        ((_x * _y).cmod(_y), _multiple_mod),  # cmod(x*y, y) -> 0
    ]
)  # fmt: skip
"""Integer division and remainder folding (by constants, ranges, gcds, ``multiple_of``)."""

pm_algebra = PatternMatcher(
    [
        (UPat(GroupOp.ALU | {Ops.CAST}, name="a"), _fold_by_range),  # range is one value -> const
        (_x - _Y, lambda x, y: x + y * -1),  # a - b -> a + b*(-1) (ints)
        (-_x, lambda x: x * -1),  # -x -> x*(-1) (ints)
        (UPat(Ops.ADD, INTS, name="s") * _c, _distribute),  # (a+b)*c -> a*c + b*c
        (UPat(Ops.ADD, INTS, name="a"), _sum),  # x*2 + x*3 + 1 + 2 -> x*5 + 3
        (UPat(Ops.MUL, INTS, name="a"), _product),  # (x*2)*(y*3) -> (x*y)*6
    ]
) + div_and_mod_symbolic + PatternMatcher(
    [
        ((_x < _c).ne(True), _not_lt),  # !(x < c) -> c-1 < x
        ((_c < _x).ne(True), _not_gt),  # !(c < x) -> x < c+1
        ((_x // _d) < _c, fold_div_lt),  # x//d < c -> x < c*d
        (_c < (_x // _d), fold_const_lt_div),  # c < x//d -> (c+1)*d-1 < x
        (_x < _c, fold_lt_const),  # y + k < c -> y < c-k; g*y < c -> y < ceil(c/g)
        (_c < _x, fold_const_lt),  # c < y + k -> c-k < y; c < g*y -> c//g < y
        (_x.ne(_c).named("cmp"), fold_eq_const),  # y + k != c -> y != c-k
        (_x.eq(_c).named("cmp"), fold_eq_const),  # y + k == c -> y == c-k
        (_x << _c, _shl_to_mul),  # x << c -> x * 2**c
        (_x >> _c, _shr_to_div),  # x >> c -> x // 2**c
        (_x & _c, _fold_mask),  # x & mask -> x, 0, or x % 2**k
        (UPat((Ops.AND, Ops.OR, Ops.XOR, Ops.MAX), name="a"), _chain),  # flatten, dedup, fold
        (UPat((Ops.AND, Ops.OR), BOOL, name="a"), merge_bound_clauses),  # x<5 & x<3 -> x<3; x<5 & 6<x -> False
        (_X.maximum(_Y), _max_by_range),  # max(x, y) -> x when x >= y
        (UPat.var("c", BOOL).logical_not().where(_A, _B), _flip_where),  # where(!c, a, b) -> where(c, b, a)
        (_C.where(UPat.cvar("a", vec=False), _X), _invalid_to_else),  # where(c, Invalid, x) -> where(!c, x, Invalid)
        (_C.where(_C.where(_A, _B), _D), _where_same_cond_then),  # where(c, where(c, a, b), d) -> where(c, a, d)
        (_C.where(_A, _C.where(_B, _D)), _where_same_cond_else),  # where(c, a, where(c, b, d)) -> where(c, a, d)
        (_A.where(_B.where(_X, _Y), _Y), _where_and),  # where(a, where(b, x, y), y) -> where(a & b, x, y)
        (_A.where(_X, _B.where(_X, _Y)), _where_or),  # where(a, x, where(b, x, y)) -> where(a | b, x, y)
        ((_X < _Y).where(_Y, _X), _where_to_max),  # where(x < y, y, x) -> max(x, y)
        (_C.where(True, False), lambda c: c),  # where(c, True, False) -> c
        (_C.where(False, True), lambda c: c.logical_not()),  # where(c, False, True) -> !c
        (_CAST_CHAIN, _fold_cast_chain),  # cast(cast(x, a), b) -> cast(x, b) when a holds x
        (UPat.var("x", (*INTS, *dtypes.floats)).cast(BOOL), lambda x: x.ne(0)),  # cast(x, bool) -> x != 0
    ]
)  # fmt: skip

symbolic = symbolic_simple + pm_algebra + commutative
sym = pm_validity + symbolic


def simplify_together(roots: Iterable[UOp]) -> dict[UOp, UOp]:
    """Each of ``roots`` -> ``root.simplify()``, all in one rewrite with ``sym``: expressions
    that share subexpressions (the addresses of a kernel) have each of those simplified once,
    not once per expression. A node's result does not depend on what else is rewritten with
    it (the rules are pure), so each is what ``simplify`` alone gives; and each is remembered
    as ``simplify`` remembers it (a later ``root.simplify()`` is a lookup).

    >>> x = UOp.variable("x", 0, 7)
    >>> simplify_together([(x * 8 + 3) // 8, x + 0]) == {(x * 8 + 3) // 8: x, x + 0: x}
    True
    """
    from fusegrad.uop.rewrite import graph_rewrite_map

    wanted = list(dict.fromkeys(roots))
    if not wanted:
        return {}
    done = graph_rewrite_map(UOp.sink(*wanted), sym, name="simplify")
    out: dict[UOp, UOp] = {}
    for root in wanted:
        simple = out[root] = done[root]
        # UOp.simplify's cache (a node that is its own result stores True: no cycle)
        root.__dict__["_simplified"] = True if simple is root else simple
        simple.__dict__["_simplified"] = True
    return out


# -- the other names tinygrad exports from tinygrad.uop.symbolic ----------------------------------

pm_simplify_valid = pm_validity
"""``where(cond, idx, Invalid)`` with ``idx`` simplified given ``cond`` (and ops pushed inside
such a gate)."""

invalid_pat = UPat(Ops.CONST, arg=Invalid, name="i")
"""The ``Invalid`` constant, captured as ``i``."""
invalid_gate = UPat.var("cond").where(UPat.var("x"), invalid_pat)
"""``where(cond, x, Invalid)``: ``x`` where ``cond`` holds, no value elsewhere."""


def _drop_gate(cond: UOp, x: UOp, i: UOp) -> UOp:
    """``where(cond, x, Invalid) -> x``: where the value is used, the gate held."""
    return x


pm_remove_invalid = PatternMatcher(
    [
        (invalid_gate, _drop_gate),  # where(cond, x, Invalid) -> x (the gate is gone)
    ]
)

_DATA = tuple(dt for dt in (*dtypes.ints, *dtypes.floats, BOOL) if dt is not dtypes.weakint)

pm_data_invalid = PatternMatcher(
    [
        (UPat.var("cond").where(UPat.var("x", _DATA), invalid_pat), _drop_gate),
    ]
)
"""``where(cond, x, Invalid) -> x`` for data (a value dtype, not a ``weakint`` index): a
data value is only read where it is valid, so its gate can go; an index keeps its gate (it
masks the memory access)."""


def drop_and_clauses(cond: UOp, x: UOp, i: UOp) -> UOp | None:
    """``where(c1 & c2 & ..., x, Invalid)`` without the clauses that depend on no range ``x``
    depends on (they gate something around ``x``, e.g. a whole load, not ``x``'s own
    iterations); None when every clause is about ``x``'s ranges. The result is valid wherever
    the original was, with the same value.

    >>> from fusegrad.uop import UOp, AxisType
    >>> r, v = UOp.range(8, 0), UOp.variable("v", 0, 9)
    >>> drop_and_clauses((r < 4) & (v < 5), r * 2, UOp.invalid()).render(simplify=False)
    '(r0*2 if r0<4 else Invalid)'
    """
    clauses = flatten(cond, Ops.AND)
    ranges = x.ranges
    kept = [c for c in clauses if any(r in ranges for r in c.ranges)]
    if len(kept) == len(clauses):
        return None
    if not kept:
        return x
    out = kept[0]
    for c in kept[1:]:
        out = out & c
    return out.where(x, i)


pm_drop_and_clauses = PatternMatcher([(invalid_gate, drop_and_clauses)])
"""``drop_and_clauses`` as a rule: gates keep only the clauses about their value's ranges."""


def _where_on_load(cond: UOp, ld: UOp, zero: UOp) -> UOp | None:
    """``where(cond, load(buf[idx]), 0) -> load(buf[idx if cond else Invalid])``: a masked
    load reads 0, so the gate moves into the address (the load is then skipped, not done and
    discarded). Only when ``cond`` depends on nothing the load computes."""
    index = ld.src[0]
    if len(ld.src) != 1 or index.op is not Ops.INDEX or len(index.src) != 2:
        return None
    if zero.arg != 0 or ld in cond.toposort():
        return None
    buf, idx = index.src
    return ld.replace(src=(index.replace(src=(buf, cond.where(idx, UOp.invalid(idx.dtype)))),))


def where_on_load(cond: UOp, buf: UOp, idx: UOp, or_cast: UOp) -> UOp | None:
    """The rule of ``pm_move_where_on_load`` with tinygrad's captures: ``or_cast`` is the
    ``load(buf[idx])`` (or a cast of it) selected by ``where(cond, or_cast, 0)``; the result
    is the load with ``cond`` moved into its index (cast again), None when it can't move.

    >>> from fusegrad.uop import UOp, dtypes
    >>> buf, i = UOp.param(0, dtypes.float32.ptr(8)), UOp.variable("i", 0, 7)
    >>> out = where_on_load(i < 4, buf, i, buf.index(i).load())
    >>> out.src[0].src[1].render(simplify=False)
    '(i if i<4 else Invalid)'
    """
    ld = or_cast.src[0] if or_cast.op is Ops.CAST else or_cast
    if ld.op is not Ops.LOAD or not ld.src or ld.src[0].src[:2] != (buf, idx):
        return None
    moved = _where_on_load(cond, ld, UOp.const(0, ld.dtype))
    if moved is None or or_cast is ld:
        return moved
    return or_cast.replace(src=(moved,))


pm_move_where_on_load = PatternMatcher(
    [
        (UPat.var("cond").where(UPat(Ops.LOAD, name="ld"), UPat.cvar("zero", vec=False)),
         _where_on_load),  # where(c, load(b[i]), 0) -> load(b[i if c else Invalid])
    ]
)  # fmt: skip

PyConst = bool | int | float
"""A Python constant a UOp can hold."""


def gated_given_valid(cond: UOp, x: UOp, i: UOp) -> UOp | None:
    """``where(cond, x, Invalid)`` with ``x`` simplified given ``cond`` (the rule of
    ``pm_simplify_valid``)."""
    return _simplify_valid(cond, x, i)


# -- tinygrad.uop.symbolic's helper functions (used on their own; the rule sets above are
# unchanged by them) ------------------------------------------------------------------------------
_SIGNIFICAND = {dtypes.float16: 11, dtypes.bfloat16: 8, dtypes.float32: 24, dtypes.float64: 53}


def can_lossless_cast(dt0: DType, dt1: DType) -> bool:
    """Whether every value of ``dt0`` is a value of ``dt1`` (a cast there and back is exact).

    >>> can_lossless_cast(dtypes.int16, dtypes.float32), can_lossless_cast(dtypes.int32, dtypes.float32)
    (True, False)
    """
    a, b = dt0.scalar(), dt1.scalar()
    if a == b or a is dtypes.bool:
        return True
    if b is dtypes.bool:
        return False
    if dtypes.is_int(a) and dtypes.is_int(b):
        return bool(dtypes.min(b) <= dtypes.min(a) and dtypes.max(a) <= dtypes.max(b))
    if dtypes.is_int(a) and b in _SIGNIFICAND:
        bits = max(int(dtypes.max(a)).bit_length(), (-int(dtypes.min(a))).bit_length())
        return bits <= _SIGNIFICAND[b]
    if a in _SIGNIFICAND and b in _SIGNIFICAND:
        return bool(_SIGNIFICAND[a] <= _SIGNIFICAND[b] and dtypes.max(a) <= dtypes.max(b))
    return False


def const_arg(u: UOp) -> ConstType | tuple[ConstType, ...] | None:
    """The value of a constant node: a CONST's arg, a vector constant's values (VCONST, or a
    VECTORIZE of CONSTs) as a tuple; None for anything else."""
    if u.op is Ops.CONST:
        value: ConstType = u.arg
        return value
    if u.op is Ops.VCONST:
        return tuple(u.arg)
    if u.op is Ops.VECTORIZE and all(s.op is Ops.CONST for s in u.src):
        return tuple(s.arg for s in u.src)
    return None


def fold_const_alu(a: UOp) -> UOp | None:
    """An ALU node over constants as the constant it computes (None when a source isn't one)."""
    if a.op not in GroupOp.ALU:
        return None
    return _fold_constants(a)


def lt_folding(x: UOp, c: int) -> UOp | None:
    """``x < c`` with a common factor ``d`` of ``c`` and the terms of ``x`` that have one, when
    the other terms stay in [0, d): ``(those terms / d) < c // d``. None when it doesn't apply.

    >>> i, j = UOp.variable("i", 0, 9), UOp.variable("j", 0, 3)
    >>> lt_folding(i * 4 + j, 8).render()
    'i<2'
    """
    terms = list(x.split_uop(Ops.ADD))
    scaled = [t for t in terms if t.const_factor() != 1]
    rest = [t for t in terms if t.const_factor() == 1]
    if not scaled or not dtypes.is_int(x.dtype):
        return None
    d = math.gcd(c, *(t.const_factor() for t in scaled))
    if d <= 1 or sum(t.vmin for t in rest) < 0 or sum(t.vmax for t in rest) >= d:
        return None
    total = scaled[0]
    for t in scaled[1:]:
        total = total + t
    q = total.divides(d)
    return None if q is None else q < c // d


def simplify_pow(x: UOp, c: UOp) -> UOp | None:
    """``x ** c`` for a constant integer exponent as multiplications (squaring), a negative
    one as the reciprocal; None for any other exponent.

    >>> f = UOp.variable("f", 0, 1, dtypes.float32)
    >>> simplify_pow(f, f.const_like(3)) is f * (f * f)
    True
    """
    if c.op is not Ops.CONST or isinstance(c.arg, bool) or c.arg != int(c.arg):
        return None
    n = int(c.arg)
    if n < 0:
        inv = simplify_pow(x, c.const_like(-n))
        return None if inv is None else inv.reciprocal()
    if n == 0:
        return x.const_like(1)
    out: UOp | None = None
    base = x
    while n:
        if n & 1:
            out = base if out is None else out * base
        n >>= 1
        if n:
            base = base * base
    return out


def parse_valid(v: UOp) -> tuple[UOp, bool, int] | None:
    """A bound clause as ``(x, is_upper, c)``: ``x <= c`` when ``is_upper``, else ``x >= c``
    (``x < c``, ``c < x`` and their negations, for int ``x``); None for anything else.

    >>> i = UOp.variable("i", 0, 9)
    >>> parse_valid(i < 5)[1:], parse_valid((i < 5).logical_not())[1:]
    ((True, 4), (False, 5))
    """
    negated = v.op is Ops.CMPNE and v.src[1].op is Ops.CONST and v.src[1].arg is True
    clause = v.src[0] if negated else v
    bound = _bound_clause(clause)
    if bound is None:
        return None
    x, lo, hi = bound
    if hi is not None:  # x < hi + 1
        return (x, False, hi + 1) if negated else (x, True, hi)
    assert lo is not None  # lo - 1 < x
    return (x, True, lo - 1) if negated else (x, False, lo)


__all__ = [
    "IMAGE",
    "REMOVE_FROM_SINK_LIKE",
    "ConstType",
    "Invalid",
    "PyConst",
    "can_lossless_cast",
    "canonicalize_simplex",
    "commutative",
    "const_arg",
    "const_folding_pat",
    "div_and_mod_symbolic",
    "drop_and_clauses",
    "dtypes",
    "fold_add_divmod_recombine",
    "fold_bitcast",
    "fold_const_alu",
    "fold_const_where",
    "fold_where_closure",
    "gated_given_valid",
    "invalid_gate",
    "invalid_pat",
    "lt_folding",
    "mop_cleanup",
    "parse_valid",
    "pm_clean_up_group_sink",
    "pm_data_invalid",
    "pm_drop_and_clauses",
    "pm_move_where_on_load",
    "pm_remove_invalid",
    "pm_simplify_valid",
    "reduce_mul_chain",
    "simplify_pow",
    "simplify_valid",
    "sym",
    "symbolic",
    "symbolic_simple",
    "truncate",
    "uop_given_valid",
    "where_on_load",
]
