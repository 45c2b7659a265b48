"""Rule functions and tables ``tinygrad.uop.symbolic`` exports by name that fusegrad's
simplifier tables (``symbolic``, ``sym``) do not run: each is usable on its own (called
directly or put in a PatternMatcher), with tinygrad's contract on fusegrad's IR. Re-exported
from ``fusegrad.uop.symbolic``.

* ``canonicalize_simplex``, ``fold_add_divmod_recombine``, ``fold_bitcast``,
  ``fold_const_where``, ``fold_where_closure``, ``reduce_mul_chain``: rule functions;
* ``mop_cleanup``: stacked movement ops merged; ``pm_clean_up_group_sink`` with
  ``REMOVE_FROM_SINK_LIKE``: SINK/GROUP sources tidied.
"""

from __future__ import annotations

from fusegrad.uop.dtype import Invalid, bitcast, dtypes
from fusegrad.uop.opcodes import GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.terms import _merge_divmod_pairs, build_sum, collect_terms, flatten
from fusegrad.uop.uop import UOp

BOOL = dtypes.bool


def _is_int(c: UOp) -> bool:
    return type(c.arg) is int


REMOVE_FROM_SINK_LIKE = frozenset({Ops.NOOP, Ops.CONST, Ops.VCONST, Ops.DEVICE, Ops.UNIQUE})
"""Ops a SINK or GROUP need not keep among its sources: they have no effect to order."""


def _clean_group_sink(x: UOp) -> UOp | None:
    """A SINK/GROUP without its effect-free sources (REMOVE_FROM_SINK_LIKE), with its plain
    GROUP sources spliced in and repeated sources dropped."""
    flat: list[UOp] = []
    for s in x.src:
        if s.op is Ops.GROUP and s.arg is None and s.tag is None:
            flat.extend(s.src)
        elif s.op not in REMOVE_FROM_SINK_LIKE:
            flat.append(s)
    new_src = tuple(dict.fromkeys(u for u in flat if u.op not in REMOVE_FROM_SINK_LIKE))
    return None if new_src == x.src else x.replace(src=new_src)


pm_clean_up_group_sink = PatternMatcher(
    [(UPat((Ops.SINK, Ops.GROUP), name="x"), _clean_group_sink)]
)
"""SINK/GROUP sources cleaned: nested plain GROUPs flattened, effect-free and repeated
sources dropped."""


def _merged_movement(outer: UOp) -> UOp | None:
    """Two stacked movement ops of one kind as one (reshape of a reshape, permute of a
    permute, expand of an expand), and a movement op that changes nothing as its source."""
    from fusegrad.uop.shape import check_movement

    inner = outer.src[0]
    if (same := check_movement(inner, outer.op, outer.arg)) is not None:
        return same
    if inner.op is not outer.op or outer.op not in (Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND):
        return None
    base = inner.src[0]
    if outer.op is Ops.PERMUTE:
        return base._mop(Ops.PERMUTE, tuple(inner.arg[i] for i in outer.arg))
    return base._mop(outer.op, outer.arg)


mop_cleanup = PatternMatcher([(UPat(GroupOp.Movement, name="outer"), _merged_movement)])
"""Movement ops tidied: a no-op movement is its source; a reshape of a reshape, a permute
of a permute and an expand of an expand are one op."""


def canonicalize_simplex(X: UOp) -> UOp | None:
    """For ``X = a0*x0 + a1*x1 + ... + c`` with positive int coefficients ``ai`` and
    non-negative atoms ``xi`` (Variables, ranges, constants): ``x0 + x1 + ... + c``, which is
    positive exactly when ``X`` is (both are sums of non-negative terms, zero together);
    None when ``X`` has another form or no coefficient to drop. Only for ``weakint`` sums
    (fixed-width sums may wrap).

    >>> from fusegrad.uop import UOp
    >>> a, b = UOp.variable("a", 0, 9), UOp.variable("b", 0, 9)
    >>> canonicalize_simplex(a * 3 + b * 2).render(simplify=False)
    'a+b'
    """
    if X.dtype is not dtypes.weakint:
        return None
    terms: list[UOp] = []
    changed = False
    for term in flatten(X, Ops.ADD):
        u = term
        if u.op is Ops.MUL and u.src[1].op is Ops.CONST and _is_int(u.src[1]) and u.src[1].arg > 0:
            changed, u = True, u.src[0]
        if u.op not in GroupOp.Irreducible or not (isinstance(u.vmin, int) and u.vmin >= 0):
            return None
        terms.append(u)
    if not changed:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def fold_add_divmod_recombine(x: UOp) -> UOp | None:
    """The sum ``x`` with each pair ``(y//c)*c*k + (y%c)*k`` (floor or truncating, ``c`` a
    nonzero constant) recombined into ``y*k`` and its terms collected (the term collector's
    own merge); None when ``x`` has no such pair.

    >>> from fusegrad.uop import UOp
    >>> y, z = UOp.variable("y", -9, 9), UOp.variable("z", 0, 3)
    >>> fold_add_divmod_recombine((y // 4) * 8 + (y % 4) * 2 + z).render(simplify=False)
    'y*2+z'
    """
    if x.op is not Ops.ADD or not dtypes.is_int(x.dtype):
        return None
    coefficients, const = collect_terms(x)
    merged = dict(coefficients)
    _merge_divmod_pairs(merged)
    if len(merged) == len(coefficients):
        return None
    return build_sum(x.dtype, merged, const)


def fold_bitcast(root: UOp, c: UOp) -> UOp | None:
    """``bitcast(c)`` of a scalar constant as the constant with the same bits in ``root``'s
    dtype (None for Invalid, vectors, or sizes that differ).

    >>> from fusegrad.uop import UOp
    >>> c = UOp.const(1.0, dtypes.float32)
    >>> fold_bitcast(c.bitcast(dtypes.uint32), c).arg == 0x3F800000
    True
    """
    if c.op is not Ops.CONST or c.arg is Invalid or c.dtype.count > 1 or root.dtype.count > 1:
        return None
    if c.dtype.itemsize != root.dtype.itemsize:
        return None
    return UOp.const(bitcast(c.arg, c.dtype, root.dtype), root.dtype)


def fold_const_where(gate: UOp, c0: UOp, c1: UOp, w: UOp) -> UOp:
    """``w = where(gate, c0, c1)`` of two integer (or bool) constants without the select:
    ``gate*(c0-c1) + c1`` for ints (exact under wrap-around too: the bool is 0 or 1), ``gate``
    or ``!gate`` for bools, the constant when both are equal; ``w`` itself otherwise.

    >>> from fusegrad.uop import UOp
    >>> i = UOp.variable("i", 0, 9)
    >>> w = (i < 3).where(5, 2)
    >>> fold_const_where(i < 3, w.src[1], w.src[2], w).render(simplify=False)
    'cast(i<3, weakint)*3+2'
    """
    if c0.op is not Ops.CONST or c1.op is not Ops.CONST or Invalid in (c0.arg, c1.arg):
        return w
    if c0.arg == c1.arg and type(c0.arg) is type(c1.arg):
        return c0
    if w.dtype is BOOL:
        return gate if c0.arg else gate.logical_not()
    if not (dtypes.is_int(w.dtype) and _is_int(c0) and _is_int(c1)) or gate.dtype is not BOOL:
        return w
    out: UOp = gate.cast(w.dtype) * (c0.arg - c1.arg) + c1.arg
    return out


def fold_where_closure(cond: UOp, t: UOp, f: UOp) -> UOp | None:
    """``where(cond, t, f)`` with ``cond`` as True inside ``t`` and as False inside ``f`` (each
    branch is only used where ``cond`` has that value); None when neither branch uses it.

    >>> from fusegrad.uop import UOp
    >>> i = UOp.variable("i", 0, 9)
    >>> out = fold_where_closure(i < 3, (i < 3).where(i, 0), (i < 3).where(1, i))
    >>> out.render(simplify=False), out.simplify().render()
    ('((i if True else 0) if i<3 else (1 if False else i))', 'i')
    """
    new_t = t.substitute({cond: cond.const_like(True)})
    new_f = f.substitute({cond: cond.const_like(False)})
    if new_t is t and new_f is f:
        return None
    return cond.where(new_t, new_f)


def reduce_mul_chain(r: UOp) -> UOp | None:
    """A REDUCE of a product with factors that vary with none of the reduced ranges, those
    factors taken out: ``sum_r(x*c) = sum_r(x)*c``; for MAX only non-negative integer factors
    (``max_r(x*c) = max_r(x)*c`` for ``c >= 0``). None when no factor moves (ADD of floats
    rounds differently once the factor is outside, as tinygrad accepts).

    >>> from fusegrad.uop import UOp, AxisType
    >>> r, c = UOp.range(4, 0, AxisType.REDUCE), UOp.variable("c", 0, 9)
    >>> reduce_mul_chain((r * c).reduce(r)).render(simplify=False)
    'REDUCE(r0, r0)*c'
    """
    if r.op is not Ops.REDUCE or r.src[0].op is not Ops.MUL or r.arg not in (Ops.ADD, Ops.MAX):
        return None
    ranges = set(r.src[1:])
    inside: list[UOp] = []
    outside: list[UOp] = []
    for factor in flatten(r.src[0], Ops.MUL):
        moves = not any(rng in ranges for rng in factor.ranges)
        if r.arg is Ops.MAX:
            moves = moves and dtypes.is_int(factor.dtype) and factor.vmin >= 0
        (outside if moves else inside).append(factor)
    if not outside or not inside:
        return None
    value = inside[0]
    for f in inside[1:]:
        value = value * f
    out = value.reduce(*r.src[1:], arg=r.arg)
    for f in outside:
        out = out * f
    return out


__all__ = [
    "REMOVE_FROM_SINK_LIKE",
    "canonicalize_simplex",
    "fold_add_divmod_recombine",
    "fold_bitcast",
    "fold_const_where",
    "fold_where_closure",
    "mop_cleanup",
    "pm_clean_up_group_sink",
    "reduce_mul_chain",
]
