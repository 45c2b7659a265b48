"""Symbolic simplification rule sets, each a PatternMatcher composed by name.

* ``symbolic_simple``: constant folding with exact dtype semantics and cheap identities
* ``commutative``: canonical operand order, so ``a+b`` and ``b+a`` are the same node
* ``symbolic``: ``symbolic_simple`` + ``commutative`` + algebra (grown by the symbolic issue)
* ``sym``: ``symbolic`` + index-validity rules; what ``UOp.simplify`` uses
"""

from __future__ import annotations

import math

from fusegrad.uop.alu import exec_alu
from fusegrad.uop.dtype import Invalid, dtypes
from fusegrad.uop.ops import GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.uop import UOp


def _fold_constants(a: UOp) -> UOp | None:
    """ALU op on constants -> the constant (computed exactly as the dtype would)."""
    if a.op is Ops.BITCAST or any(
        s.op is not Ops.CONST or s.arg is Invalid or s.src for s in a.src
    ):
        return None
    if a.dtype.count > 1:
        return None
    return UOp.const(a.dtype, exec_alu(a.op, a.dtype, [s.arg for s in a.src]))


def _is_neg_zero(c: UOp) -> bool:
    return isinstance(c.arg, float) and c.arg == 0 and math.copysign(1.0, c.arg) < 0


def _add_zero(x: UOp, c: UOp) -> UOp | None:
    # x + 0.0 is not x for x = -0.0 (the sum is +0.0); x + -0.0 is always x
    if dtypes.is_float(x.dtype) and not _is_neg_zero(c):
        return None
    return x


symbolic_simple = PatternMatcher(
    [
        (UPat(GroupOp.ALU, name="a"), _fold_constants),  # op(consts) -> const
        (
            UPat.var("x") + UPat.cvar("c", vec=False).named("c"),
            lambda x, c: _add_zero(x, c) if c.arg == 0 else None,
        ),
        (UPat.var("x") * 1, lambda x: x),  # x * 1 -> x
        (
            UPat.var("x", dtypes.ints) * 0,
            lambda x: x.const_like(0),
        ),  # x * 0 -> 0 (ints: NaN*0 is NaN)
        (UPat.var("x") // 1, lambda x: x),  # x // 1 -> x
        (UPat.var("x").cdiv(1), lambda x: x),  # cdiv(x, 1) -> x
        (UPat.var("x", dtypes.ints) % 1, lambda x: x.const_like(0)),  # x % 1 -> 0
    ]
)


def _canonical_order(a: UOp) -> UOp | None:
    if len(a.src) != 2 or not _swap_key(a.src[1]) < _swap_key(a.src[0]):
        return None
    return a.replace(src=(a.src[1], a.src[0]))


def _swap_key(u: UOp) -> tuple[int, int, str]:
    # constants last; otherwise a stable, hash-independent order of the operands
    return (1 if u.op is Ops.CONST else 0, u.op.value, _stable_text(u))


def _stable_text(u: UOp) -> str:
    from fusegrad.uop.render import render_uop

    return render_uop(u)


commutative = PatternMatcher([(UPat(GroupOp.Commutative, name="a"), _canonical_order)])

symbolic = symbolic_simple + commutative
sym = symbolic
