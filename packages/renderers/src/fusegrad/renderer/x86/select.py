"""Instruction selection: the linear program -> machine IR with virtual registers.

``pm_select`` is a rule table over the linear program's nodes (the pattern language of every
other pass); each rule emits the instructions of one node into the ``Selection`` context
(``context.py``) and returns ``SELECTED``. ``select`` runs it over the program in order.
Rules by kind: parameters, loops, IF blocks and memory in ``memory.py``; ALU and
conversions in ``alu.py``.
"""

from __future__ import annotations

from fusegrad.renderer.signature import KernelSignature
from fusegrad.renderer.x86 import alu, memory
from fusegrad.renderer.x86.context import FLOATS, INTS, Selection
from fusegrad.uop import Ops, PatternMatcher, UOp, UPat, dtypes

_INTS_BOOL = (*INTS, dtypes.bool)
_COMPARE = (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ)


pm_select = PatternMatcher(
    [
        # structure and memory
        (UPat((Ops.PARAM, Ops.SPECIAL), name="x"), memory.param),
        (UPat(Ops.RANGE, name="x"), memory.range_start),
        (UPat(Ops.END, name="x"), memory.range_end),
        (UPat(Ops.IF, name="x"), memory.if_start),
        (UPat(Ops.ENDIF, name="x"), memory.if_end),
        (UPat(Ops.LOAD, name="x"), memory.load),
        (UPat(Ops.STORE, name="x"), memory.store),
        (UPat(Ops.AFTER, name="x"), memory.after),
        (UPat((Ops.CONST, Ops.INDEX, Ops.DEFINE_REG, Ops.SINK, Ops.BARRIER), name="x"), memory.nothing),
        # floats
        (UPat((Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV), FLOATS, name="x"), alu.float_binary),
        (UPat((Ops.SQRT, Ops.TRUNC, Ops.NEG), FLOATS, name="x"), alu.float_unary),
        (UPat(Ops.MULACC, FLOATS, name="x"), alu.float_mulacc),
        (UPat(Ops.MAX, FLOATS, name="x"), alu.float_max),
        (UPat(_COMPARE, name="x"), alu.compare),
        # integers and bools
        (UPat((Ops.ADD, Ops.SUB, Ops.MUL, Ops.AND, Ops.OR, Ops.XOR, Ops.MAX), _INTS_BOOL, name="x"), alu.int_alu),
        (UPat(Ops.MULACC, _INTS_BOOL, name="x"), alu.int_mulacc),
        (UPat(Ops.NEG, _INTS_BOOL, name="x"), alu.int_neg),
        (UPat(Ops.TRUNC, INTS, name="x"), alu.int_identity),
        (UPat((Ops.SHL, Ops.SHR), INTS, name="x"), alu.int_shift),
        (UPat((Ops.CDIV, Ops.CMOD), INTS, name="x"), alu.int_divide),
        (UPat(Ops.WHERE, name="x"), alu.where),
        # conversions
        (UPat(Ops.CAST, name="x"), alu.cast),
        (UPat(Ops.BITCAST, name="x"), alu.bitcast),
    ]
)  # fmt: skip

#: the ALU ops some rule selects (the renderer's ``code_for_op``)
SELECTED_OPS = frozenset(
    {
        *(Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.CDIV, Ops.CMOD, Ops.MAX),
        *(Ops.SHL, Ops.SHR, Ops.AND, Ops.OR, Ops.XOR, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ),
        *(Ops.NEG, Ops.SQRT, Ops.TRUNC, Ops.WHERE, Ops.MULACC),
    }
)


def select(uops: list[UOp], sig: KernelSignature) -> Selection:
    """The machine IR of a linear program (virtual registers, frame slots unplaced)."""
    ctx = Selection(sig)
    for u in uops:
        if u.dtype.count > 1:
            raise NotImplementedError(f"x86 renderer: vector value {u.op!r} {u.dtype!r}")
        if pm_select.rewrite(u, ctx) is None:
            raise NotImplementedError(
                f"x86 renderer: no instruction selection for {u.op!r} {u.dtype!r}"
            )
    return ctx
