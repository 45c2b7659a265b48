"""Collapse gathers: a sum of a one-hot select over a range becomes one indexed read.

The frontend builds every gather (indexing with a tensor, ``gather``, ``Embedding``) as a
one-hot mask over the indexed axis and a sum over it::

    sum over r in [0, R) of  where(arange(R)[r] == e, x[.., r, ..], 0)

Only the ``r`` with ``r == e`` contributes, so the sum is ``x[.., e, ..]`` when ``0 <= e < R``
and 0 otherwise; no loop over ``R`` is needed. As a rewrite of the kernel AST::

    REDUCE(ADD, where((r + c == e) & m, X(r), 0), r, *rest)
      -> REDUCE(ADD, where(ok & m[r:=e-c], X[r:=e-c], 0), *rest)    ok = 0 <= e-c < R

(no REDUCE at all when ``rest`` is empty), with every INDEX in ``X`` and ``m`` whose address
depends on ``r`` gated by ``ok``, so an out-of-range ``e`` reads nothing. ``e`` must not
depend on ``r``; the compare may cast ``r + c`` to a fixed-width int (when that is exact over
the range). The select may also be written ``cast(cmp) * X``, ``where(cmp, 1, 0) * X``,
``where(cmp, X, 0) * Y`` or ``cast(where(cmp, X, 0))``; those are read as ``where(cmp, X*Y, 0)``,
which differs only where ``X`` or ``Y`` is inf/NaN in a row the mask drops (0 * inf is NaN).

``arange(R)`` itself reaches the kernel as a sum of bits (``fusegrad.tensor`` builds it from
padded 2-element constants): ``sum over j of where((r // 2^j) % 2 >= 1, 2^j, 0)``. The rules of
``pm_arange`` fold that back to ``r``: each bit select becomes ``(x // m) * C``, casts of
index sums merge, and ``x % c + (x // c % d) * c`` is ``x % (c*d)``, ``x % c + (x // c) * c`` is
``x``.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.simplify import pm_simplify
from fusegrad.codegen.lower.walk import nodes
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import (
    DType,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    dtypes,
    graph_rewrite,
)

# -- arange as a sum of bits -> the range ---------------------------------------------------------


def _threshold(cond: UOp) -> tuple[UOp, int] | None:
    """``(x, m)`` when ``cond`` is ``x >= m`` on an int (written ``!(x < m)`` or ``m-1 < x``)."""
    if cond.op is Ops.CMPNE and cond.src[1].op is Ops.CONST and cond.src[1].arg is True:
        inner = cond.src[0]
        if inner.op is Ops.CMPLT and inner.src[1].op is Ops.CONST:
            return inner.src[0], inner.src[1].arg
    if cond.op is Ops.CMPLT and cond.src[0].op is Ops.CONST:
        return cond.src[1], cond.src[0].arg + 1
    return None


def _bit_select(cond: UOp, c: UOp, w: UOp) -> UOp | None:
    """where(x >= m, C, 0) -> (x // m) * C when 0 <= x < 2*m (then x // m is 0 or 1)."""
    if not dtypes.is_int(w.dtype) or type(c.arg) is not int:
        return None
    found = _threshold(cond)
    if found is None:
        return None
    x, m = found
    if x.dtype is not dtypes.weakint or type(m) is not int or m <= 0:
        return None
    if x.vmin < 0 or x.vmax >= 2 * m:
        return None
    return ((x // m) * c.arg).cast(w.dtype)


def _fits(x: UOp, dt: DType) -> bool:
    """Every value of ``x`` is a value of int dtype ``dt`` (a cast to it is exact)."""
    return bool(dt.min <= x.vmin and x.vmax <= dt.max)


def _merge_casts(a: UOp, b: UOp, s: UOp) -> UOp | None:
    """cast(a) + cast(b) -> cast(a + b) for index math a, b when a + b fits the int dtype."""
    if a.src[0].dtype is not dtypes.weakint or b.src[0].dtype is not dtypes.weakint:
        return None
    total = a.src[0] + b.src[0]
    return total.cast(s.dtype) if dtypes.is_int(s.dtype) and _fits(total, s.dtype) else None


def _mod_and_digit(x: UOp, c: UOp, d: UOp, c2: UOp) -> UOp | None:
    """x % c + (x // c % d) * c -> x % (c*d) (floor semantics, c, d > 0)."""
    if c.arg != c2.arg or not all(type(k.arg) is int and k.arg > 0 for k in (c, d)):
        return None
    out: UOp = x % (c.arg * d.arg)
    return out


def _mod_and_quotient(x: UOp, c: UOp, c2: UOp) -> UOp | None:
    """x % c + (x // c) * c -> x (floor semantics, c > 0)."""
    if c.arg != c2.arg or type(c.arg) is not int or c.arg <= 0:
        return None
    return x


_x = UPat.var("x", dtypes.weakint)
_c, _d, _c2 = (UPat.cvar(n, vec=False) for n in ("c", "d", "c2"))
_cast = UPat(Ops.CAST, src=(UPat.var(),))

pm_arange = PatternMatcher(
    [
        (
            UPat(Ops.WHERE, src=(UPat.var("cond"), _c, UPat.const(0, None)), name="w"),
            _bit_select,
        ),  # where(x >= m, C, 0) -> (x // m) * C  when 0 <= x < 2m
        (
            UPat(Ops.ADD, src=[_cast.named("a"), _cast.named("b")], name="s"),
            _merge_casts,
        ),  # cast(a) + cast(b) -> cast(a + b)  when it fits
        (
            UPat(Ops.ADD, src=[_x % _c, ((_x // _c2) % _d) * _c2]),
            _mod_and_digit,
        ),  # x%c + (x//c%d)*c -> x%(c*d)
        (
            UPat(Ops.ADD, src=[_x % _c, (_x // _c2) * _c2]),
            _mod_and_quotient,
        ),  # x%c + (x//c)*c -> x
    ]
)

# -- one-hot sums -> gated reads ----------------------------------------------------------------


def _and_terms(c: UOp) -> list[UOp]:
    """The conjuncts of bool ``c`` (nested ANDs flattened)."""
    if c.op is Ops.AND and c.dtype is dtypes.bool:
        return _and_terms(c.src[0]) + _and_terms(c.src[1])
    return [c]


def _is_zero(x: UOp) -> bool:
    return x.op is Ops.CONST and x.dtype is not dtypes.bool and x.arg == 0


def _is_one(x: UOp) -> bool:
    return x.op is Ops.CONST and x.dtype is not dtypes.bool and x.arg == 1


OneHot = tuple[list[UOp], UOp]


def _one_hot_product(a: UOp, b: UOp) -> OneHot | None:
    """a * b with ``a`` a one-hot select: cast(cond) * b, where(cond, X, 0) * b."""
    if a.op is Ops.CAST and a.src[0].dtype is dtypes.bool:
        return _and_terms(a.src[0]), b
    found = one_hot(a)
    if found is None:
        return None
    conds, value = found
    return conds, b if _is_one(value) else value * b


def one_hot(v: UOp) -> OneHot | None:
    """``(conditions, X)`` when ``v`` is ``where(c1 & c2 & ..., X, 0)`` in one of the forms the
    module docstring lists; None otherwise."""
    if v.op is Ops.WHERE and _is_zero(v.src[2]):
        return _and_terms(v.src[0]), v.src[1]
    if v.op is Ops.CAST and v.dtype.scalar() is not dtypes.bool:
        found = one_hot(v.src[0])
        return None if found is None else (found[0], found[1].cast(v.dtype))
    if v.op is Ops.MUL:
        return _one_hot_product(v.src[0], v.src[1]) or _one_hot_product(v.src[1], v.src[0])
    return None


def _affine_in(a: UOp, r: UOp) -> int | None:
    """``c`` when index expression ``a`` is ``r + c`` (``c`` an int constant)."""
    if a is r:
        return 0
    if a.op is Ops.ADD and a.src[0] is r and a.src[1].op is Ops.CONST:
        return a.src[1].arg if type(a.src[1].arg) is int else None
    return None


def _solve_side(a: UOp, e: UOp, r: UOp) -> UOp | None:
    """The value of ``r`` that makes ``a == e`` (``a`` built from ``r``, ``e`` free of it)."""
    if r in e.ranges or not dtypes.is_int(e.dtype):
        return None
    inner = a
    if a.op is Ops.CAST and dtypes.is_int(a.dtype):
        inner = a.src[0]
        if inner.dtype is not dtypes.weakint or not _fits(inner, a.dtype):
            return None
    offset = _affine_in(inner, r)
    if offset is None:
        return None
    at = e.cast(dtypes.weakint)
    return at + (-offset) if offset else at  # a sum: the index algebra reads sums


def solve(cond: UOp, r: UOp) -> UOp | None:
    """The one value of range ``r`` for which ``cond`` (an ``==``) can hold, or None."""
    if cond.op is not Ops.CMPEQ:
        return None
    a, b = cond.src
    return _solve_side(a, b, r) if r in a.ranges else _solve_side(b, a, r)


def substitute_gated(x: UOp, r: UOp, at: UOp, ok: UOp) -> UOp:
    """``x`` with ``r`` replaced by ``at``, each INDEX whose address used ``r`` gated by ``ok``."""
    mapping: dict[UOp, UOp] = {r: at}
    for u in x.toposort(gate=lambda u: r in u.ranges):
        if u.op is not Ops.INDEX or r not in u.ranges:
            continue
        idx = u.src[1]
        address = idx.get_idx().substitute(mapping)
        valid = idx.get_valid()
        gate = ok if valid.op is Ops.CONST else ok & valid.substitute(mapping)
        mapping[u] = u.replace(src=(u.src[0], address.valid(gate), *u.src[2:]))
    return x.substitute(mapping)


def _all(conds: list[UOp]) -> UOp:
    out = conds[0]
    for c in conds[1:]:
        out = out & c
    return out


def _collapse_range(red: UOp, conds: list[UOp], value: UOp, r: UOp) -> UOp | None:
    for i, cond in enumerate(conds):
        at = solve(cond, r)
        if at is None:
            continue
        ok = (at > -1) & (at < r.src[0])
        rest = [substitute_gated(c, r, at, ok) for j, c in enumerate(conds) if j != i]
        body = _all([ok, *rest]).where(substitute_gated(value, r, at, ok), value.const_like(0))
        left = tuple(x for x in red.src[1:] if x is not r)
        return body.reduce(*left, arg=Ops.ADD) if left else body
    return None


def collapse_one_hot_sum(red: UOp) -> UOp | None:
    """REDUCE(ADD, one-hot select over r, r, ...) -> the selected value, gated (see module)."""
    if red.arg is not Ops.ADD or red.dtype.count != 1:
        return None
    found = one_hot(red.src[0])
    if found is None:
        return None
    conds, value = found
    for r in red.src[1:]:
        if r.op is Ops.RANGE and (out := _collapse_range(red, conds, value, r)) is not None:
            return out
    return None


pm_gather = (
    PatternMatcher(
        [
            (UPat(Ops.REDUCE, name="red"), collapse_one_hot_sum),  # sum_r (r==e ? X(r) : 0) -> X(e)
        ]
    )
    + pm_arange
    + pm_simplify
)


def _candidate(u: UOp) -> bool:
    """A sum of a one-hot select with an ``==`` on one of the summed ranges."""
    if u.op is not Ops.REDUCE or u.arg is not Ops.ADD:
        return False
    found = one_hot(u.src[0])
    if found is None:
        return False
    summed = u.src[1:]
    return any(c.op is Ops.CMPEQ and any(r in c.ranges for r in summed) for c in found[0])


def collapse_gathers(sink: UOp, ctx: LowerContext) -> UOp:
    """The pipeline stage: ``pm_gather`` over a kernel that sums a select (others pass as they
    are). A kernel with explicit ``opts_to_apply`` keeps its ranges, which the opts name."""
    info = sink.arg
    if isinstance(info, KernelInfo) and info.opts_to_apply:
        return sink
    if not any(_candidate(u) for u in nodes(sink)):
        return sink
    return graph_rewrite(sink, pm_gather, name="collapse gathers")
