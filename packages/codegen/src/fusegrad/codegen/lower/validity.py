"""Index validity -> gates.

A masked index ``idx.valid(cond)`` (``WHERE(cond, idx, Invalid)``) becomes a gated INDEX
``INDEX(ptr, idx, cond)``; a load through a gated index reads ``alt`` (0) where the gate is
false (``LOAD(index, alt=0)``), a store through one writes nothing there. A gate that is
always true disappears; one that is never true turns the load into 0 and drops the store.

``gate_bounds`` and ``given`` are the value ranges an address has *where its gate holds*
(``0 <= e < 10`` bounds ``e * 4`` to [0, 36]): the address of a gated access is only used
there, so later stages may size its math by that range (``lower index dtype``).
"""

from __future__ import annotations

from fusegrad.codegen.lower.simplify import pm_simplify
from fusegrad.uop import Invalid, Ops, PatternMatcher, UOp, UPat, dtypes

Bounds = dict[UOp, tuple[int, int]]

_invalid = UPat(Ops.CONST, arg=Invalid)
_noop = UOp(Ops.NOOP)


def _gate_index(buf: UOp, cond: UOp, idx: UOp) -> UOp:
    """INDEX(buf, cond ? idx : Invalid) -> INDEX(buf, idx, cond)."""
    return buf.index(idx, gate=cond)


def _never(buf: UOp) -> UOp:
    """INDEX(buf, Invalid) -> an index whose gate is never true."""
    return buf.index(UOp.const(0, dtypes.weakint), gate=UOp.const(False, dtypes.bool))


def _zero(x: UOp) -> UOp:
    """0 of ``x``'s dtype (a VCONST for a vector: a CONST is one scalar)."""
    count = x.dtype.count
    return UOp.vconst((0,) * count, x.dtype) if count > 1 else UOp.const(0, x.dtype)


def _gated_load(ld: UOp) -> UOp | None:
    idx = ld.src[0]
    if len(ld.src) != 1 or idx.op is not Ops.INDEX or len(idx.src) != 3:
        return None
    gate = idx.src[2]
    if gate.op is Ops.CONST:
        return _zero(ld) if not gate.arg else ld.replace(src=(idx.replace(src=idx.src[:2]),))
    return ld.replace(src=(idx, _zero(ld)))


def _gated_store(st: UOp) -> UOp | None:
    idx = st.src[0]
    if idx.op is not Ops.INDEX or len(idx.src) != 3 or idx.src[2].op is not Ops.CONST:
        return None
    return (
        _noop if not idx.src[2].arg else st.replace(src=(idx.replace(src=idx.src[:2]), st.src[1]))
    )


def _select_of_gated_load(c: UOp, ld: UOp, other: UOp) -> UOp | None:
    """where(g, LOAD(INDEX(b, i, g), alt), alt) -> the load: it reads ``alt`` where ``g`` is
    false already (a gather's ``ok ? table[e] : 0``)."""
    idx = ld.src[0]
    if len(ld.src) != 2 or len(idx.src) != 3 or ld.src[1] is not other:
        return None
    gate = idx.src[2]
    same = c is gate or (gate.dtype.count == 1 and _scalar_gate(c) is gate)
    return ld if same and c.dtype.count == ld.dtype.count else None


def _drop_noops(x: UOp) -> UOp | None:
    if not any(s.op is Ops.NOOP for s in x.src):
        return None
    return x.replace(src=tuple(s for s in x.src if s.op is not Ops.NOOP))


pm_validity = (
    PatternMatcher(
        [
            (
                UPat(
                    Ops.INDEX,
                    src=(UPat.var("buf"), UPat.var("cond").where(UPat.var("idx"), _invalid)),
                ),
                _gate_index,
            ),  # INDEX(b, c ? i : Invalid) -> INDEX(b, i, c)
            (UPat(Ops.INDEX, src=(UPat.var("buf"), _invalid)), _never),  # INDEX(b, Invalid)
            (UPat(Ops.LOAD, name="ld"), _gated_load),  # gated LOAD -> LOAD(idx, alt=0)
            (UPat(Ops.STORE, name="st"), _gated_store),  # STORE gated by a constant
            (
                UPat.var("c").where(UPat(Ops.LOAD, name="ld"), UPat.var("other")),
                _select_of_gated_load,
            ),  # g ? LOAD(b[i] if g, alt) : alt -> the load
            (
                UPat(Ops.END, src=(UPat(Ops.NOOP),), allow_any_len=True),
                lambda: _noop,
            ),  # nothing to loop
            (UPat((Ops.GROUP, Ops.SINK), name="x"), _drop_noops),  # drop removed effects
        ]
    )
    + pm_simplify
)


# -- value ranges where a gate holds ---------------------------------------------------------------


def _scalar_gate(gate: UOp) -> UOp | None:
    """``gate`` as one scalar bool (a vector gate of one repeated scalar: that scalar)."""
    if gate.dtype.count == 1:
        return gate
    if gate.op is Ops.VECTORIZE and all(s is gate.src[0] for s in gate.src):
        return gate.src[0]
    return None


def _clause_bound(clause: UOp) -> tuple[UOp, int | None, int | None] | None:
    """``x < c``, ``c < x``, ``!(x < c)``, ``!(c < x)`` as ``(x, lo, hi)`` (int ``x``)."""
    negated = clause.op is Ops.CMPNE and clause.src[1].op is Ops.CONST and clause.src[1].arg is True
    cmp = clause.src[0] if negated else clause
    if cmp.op is not Ops.CMPLT or cmp.dtype.count != 1:
        return None
    x, y = cmp.src
    if not dtypes.is_int(x.dtype) or (x.op is Ops.CONST and y.op is Ops.CONST):
        return None
    if y.op is Ops.CONST and type(y.arg) is int:  # x < c, or !(x < c): x >= c
        return (x, y.arg, None) if negated else (x, None, y.arg - 1)
    if x.op is Ops.CONST and type(x.arg) is int:  # c < y, or !(c < y): y <= c
        return (y, None, x.arg) if negated else (y, x.arg + 1, None)
    return None


def conjuncts(cond: UOp) -> list[UOp]:
    """The clauses of bool ``cond`` (nested ANDs flattened, in order)."""
    if cond.op is Ops.AND and cond.dtype is dtypes.bool:
        return conjuncts(cond.src[0]) + conjuncts(cond.src[1])
    return [cond]


def gate_bounds(gate: UOp) -> Bounds:
    """The value range of each int expression that ``gate``'s clauses bound, where the gate
    holds (empty: it bounds nothing, or no value satisfies it)."""
    scalar = _scalar_gate(gate)
    if scalar is None:
        return {}
    out: Bounds = {}
    for clause in conjuncts(scalar):
        found = _clause_bound(clause)
        if found is None:
            continue
        x, lo, hi = found
        old_lo, old_hi = out.get(x, (int(x.vmin), int(x.vmax)))
        out[x] = (
            old_lo if lo is None else max(old_lo, lo),
            old_hi if hi is None else min(old_hi, hi),
        )
    return {x: r for x, r in out.items() if r[0] <= r[1] and r != (x.vmin, x.vmax)}


def given(u: UOp, bounds: Bounds, memo: dict[UOp, UOp]) -> UOp:
    """``u`` with every bounded expression replaced by a Variable over its narrowed range:
    the result's vmin/vmax are ``u``'s range where the gate holds (``memo``: per gate)."""
    if (hit := memo.get(u)) is not None:
        return hit
    if u in bounds:
        lo, hi = bounds[u]
        out = UOp.variable(f"__gate{len(memo)}__", lo, hi, u.dtype)
    else:
        srcs = tuple(given(s, bounds, memo) for s in u.src)
        out = u if all(a is b for a, b in zip(srcs, u.src, strict=True)) else u.replace(src=srcs)
    memo[u] = out
    return out
