"""Index-validity rules: ``idx.valid(cond)`` is ``cond.where(idx, Invalid)``, an index that
may only be used where ``cond`` holds.

* ``Invalid`` is lifted out of arithmetic: ``where(c, x, Invalid) + y -> where(c, x+y,
  Invalid)``, so the rest of the simplifier only sees valid operands.
* The index is simplified *given* its condition: every clause ``x < c`` / ``c < x`` of the
  condition narrows the range of ``x`` (a fresh Variable with the narrowed range stands in
  for ``x`` while the index is simplified), and a bool clause is True inside.
* Clauses implied by the other clauses (or by ranges) are dropped; contradicting clauses
  make the whole index ``Invalid``.
"""

from __future__ import annotations

from typing import cast

from fusegrad.uop.dtype import Invalid, dtypes
from fusegrad.uop.opcodes import GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.terms import flatten, may_be_invalid
from fusegrad.uop.uop import UOp

_TRUE = UOp.const(True, dtypes.bool)
_FALSE = UOp.const(False, dtypes.bool)


def _is_invalid(u: UOp) -> bool:
    return u.op is Ops.CONST and u.arg is Invalid


def _is_valid_form(u: UOp) -> bool:
    """``where(c, x, Invalid)``."""
    return u.op is Ops.WHERE and _is_invalid(u.src[2]) and not _is_invalid(u.src[1])


def _push_invalid(a: UOp) -> UOp | None:
    """``op(.., where(c, x, Invalid), ..) -> where(c, op(.., x, ..), Invalid)`` and
    ``op(.., Invalid, ..) -> Invalid`` (any operand Invalid makes the result Invalid)."""
    if not may_be_invalid(a):
        return None  # no operand is (or holds) Invalid
    # a WHERE selects between its branches: only its condition is lifted
    for i, s in enumerate(a.src[:1] if a.op is Ops.WHERE else a.src):
        if _is_invalid(s):
            return UOp.invalid(a.dtype)
        if _is_valid_form(s):
            inner = a.replace(src=(*a.src[:i], s.src[1], *a.src[i + 1 :]))
            return UOp(Ops.WHERE, a.dtype, (s.src[0], inner, UOp.invalid(a.dtype)))
    return None


def _bound_clause(clause: UOp) -> tuple[UOp, int | None, int | None] | None:
    """``x < c`` as ``(x, None, c-1)`` and ``c < x`` as ``(x, c+1, None)`` (int ``x``)."""
    if clause.op is not Ops.CMPLT:
        return None
    x, y = clause.src
    if not dtypes.is_int(x.dtype):
        return None
    if y.op is Ops.CONST and type(y.arg) is int and x.op is not Ops.CONST:
        return x, None, y.arg - 1
    if x.op is Ops.CONST and type(x.arg) is int and y.op is not Ops.CONST:
        return y, x.arg + 1, None
    return None


def _facts(clauses: list[UOp]) -> dict[UOp, UOp] | None:
    """The clauses as a substitution: a bounded expression -> a fresh Variable with the
    narrowed range (or the constant when one value is left); a bool clause -> True. None
    when the clauses contradict each other."""
    ranges: dict[UOp, list[int]] = {}
    mapping: dict[UOp, UOp] = {}
    for clause in clauses:
        bound = _bound_clause(clause)
        if bound is None:  # constants of the clause's own dtype (a vector clause: vectors)
            mapping[clause] = _TRUE if clause.dtype is dtypes.bool else clause.const_like(True)
            if clause.op is Ops.CMPNE and clause.src[1] is _TRUE:
                b = clause.src[0]  # !b holds: b is False
                mapping[b] = _FALSE if b.dtype is dtypes.bool else b.const_like(False)
            continue
        x, lo, hi = bound
        r = ranges.setdefault(x, [int(x.vmin), int(x.vmax)])
        r[0] = r[0] if lo is None else max(r[0], lo)
        r[1] = r[1] if hi is None else min(r[1], hi)
    for i, (x, (lo, hi)) in enumerate(ranges.items()):
        if lo > hi:
            return None
        if lo == hi:
            mapping[x] = UOp.const(lo, x.dtype)
        elif (lo, hi) != (x.vmin, x.vmax):
            mapping[x] = UOp.variable(f"__valid{i}__", lo, hi, x.dtype)
    return mapping


def _given(u: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """``u`` simplified where the facts in ``mapping`` hold. Remembered on ``u``: the engine
    offers a rewritten valid() to the rules again with the same clauses, and a kernel's
    addresses share clauses, so half the questions are asked before (Winograd conv and MLP
    kernels: 1539 calls, 754 different). (As in
    ``UOp.simplify``'s cache, a result that is ``u`` is stored as True, and nothing is stored
    when ``u`` is among the facts: no node's cache refers to the node itself.)"""
    if u in mapping:
        return _given_uncached(u, mapping)
    memo: dict[tuple[tuple[UOp, UOp], ...], UOp | bool]
    memo = u.__dict__.setdefault("_given", {})
    key = tuple(mapping.items())
    found = memo.get(key)
    if found is None:
        out = _given_uncached(u, mapping)
        memo[key] = True if out is u else out
        return out
    return u if found is True else cast(UOp, found)


def _given_uncached(u: UOp, mapping: dict[UOp, UOp]) -> UOp:
    narrowed = u.substitute(mapping)
    if narrowed is u:
        return u
    # UOp.simplify is graph_rewrite with sym (these rules included), its result cached on the
    # node: the engine offers a rewritten valid() to the rules again, and the clauses are
    # simplified given the same facts more than once, so the same narrowed forms recur
    simplified = narrowed.simplify()
    inverse = {v: x for x, v in mapping.items() if v.op is Ops.DEFINE_VAR}
    restored = simplified.substitute(inverse)
    if restored is simplified:
        return restored
    # the stand-ins sort differently from what they stand for: put operands back in order
    return restored.simplify()


def _drop_implied(clauses: list[UOp]) -> list[UOp] | None:
    """The clauses without those the others imply; None when they contradict."""
    kept = list(clauses)
    for clause in clauses:
        others = [c for c in kept if c is not clause]
        if not others:
            break
        facts = _facts(others)
        if facts is None:
            return None
        if _given(clause, facts) is _TRUE:
            kept.remove(clause)
    return kept


def _and_all(clauses: list[UOp]) -> UOp:
    out = clauses[0]
    for c in clauses[1:]:
        out = out & c
    return out


def _simplify_valid(cond: UOp, idx: UOp, invalid: UOp) -> UOp | None:
    """``where(cond, idx, Invalid)`` with ``idx`` simplified given ``cond`` and the clauses
    ``cond`` doesn't need dropped."""
    if not _is_invalid(invalid) or _is_invalid(idx):
        return None
    clauses = flatten(cond, Ops.AND)
    kept = _drop_implied(clauses) if len(clauses) > 1 else clauses
    facts = _facts(kept) if kept is not None else None
    if kept is None or facts is None:
        return invalid  # the condition never holds
    new_idx = _given(idx, facts)
    if not kept:
        return new_idx
    new_cond = cond if len(kept) == len(clauses) else _and_all(kept)
    if new_idx is idx and new_cond is cond:
        return None
    return new_cond.where(new_idx, invalid)


def uop_given_valid(valid: UOp, uop: UOp, try_simplex: bool = True) -> UOp:
    """``uop`` simplified where the clauses of ``valid`` (an AND of bounds) hold; ``uop``
    itself when they contradict or say nothing usable (``try_simplex`` is tinygrad's; the
    clauses are always used as bounds here).

    >>> from fusegrad.uop import UOp
    >>> i = UOp.variable("i", 0, 10)
    >>> uop_given_valid(i < 4, (i // 4) * 5 + i).render()
    'i'
    """
    facts = _facts(flatten(valid, Ops.AND))
    return uop if facts is None else _given(uop, facts)


def simplify_valid(valid: UOp) -> UOp | None:
    """``valid`` without the clauses the others imply (``Invalid``-free bool); None when
    nothing can be dropped, ``False`` when the clauses contradict."""
    clauses = flatten(valid, Ops.AND)
    if len(clauses) < 2:
        return None
    kept = _drop_implied(clauses)
    if kept is None:
        return valid.const_like(False)
    return None if len(kept) == len(clauses) else _and_all(kept)


_VALID_FORM = UPat.var("cond").where(UPat.var("idx"), UPat.cvar("invalid", vec=False))

pm_validity = PatternMatcher(
    [
        (UPat(GroupOp.ALU | {Ops.CAST}, name="a"), _push_invalid),  # op(valid(x, c), y) -> valid(op(x, y), c)
        (_VALID_FORM, _simplify_valid),  # valid(idx, cond): idx simplified given cond
    ]
)  # fmt: skip
