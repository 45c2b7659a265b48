"""Index validity -> gates.

A masked index ``idx.valid(cond)`` (``WHERE(cond, idx, Invalid)``) becomes a gated INDEX
``INDEX(ptr, idx, cond)``; a load through a gated index reads ``alt`` (0) where the gate is
false (``LOAD(index, alt=0)``), a store through one writes nothing there. A gate that is
always true disappears; one that is never true turns the load into 0 and drops the store.
"""

from __future__ import annotations

from fusegrad.codegen.lower.simplify import pm_simplify
from fusegrad.uop import Invalid, Ops, PatternMatcher, UOp, UPat, dtypes

_invalid = UPat(Ops.CONST, arg=Invalid)
_noop = UOp(Ops.NOOP)


def _gate_index(buf: UOp, cond: UOp, idx: UOp) -> UOp:
    """INDEX(buf, cond ? idx : Invalid) -> INDEX(buf, idx, cond)."""
    return buf.index(idx, gate=cond)


def _never(buf: UOp) -> UOp:
    """INDEX(buf, Invalid) -> an index whose gate is never true."""
    return buf.index(UOp.const(dtypes.weakint, 0), gate=UOp.const(dtypes.bool, False))


def _zero(x: UOp) -> UOp:
    """0 of ``x``'s dtype (a VCONST for a vector: a CONST is one scalar)."""
    count = x.dtype.count
    return UOp.const(x.dtype, (0,) * count if count > 1 else 0)


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
                UPat(Ops.END, src=(UPat(Ops.NOOP),), allow_any_len=True),
                lambda: _noop,
            ),  # nothing to loop
            (UPat((Ops.GROUP, Ops.SINK), name="x"), _drop_noops),  # drop removed effects
        ]
    )
    + pm_simplify
)
