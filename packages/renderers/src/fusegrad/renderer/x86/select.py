"""Instruction selection: the linear program -> machine IR with virtual registers.

``pm_select`` is a rule table over the linear program's nodes (the pattern language of every
other pass); each rule emits the instructions of one node into the ``Selection`` context
(``context.py``) and returns ``SELECTED``. ``select`` runs it over the program in order.
Rules by kind: parameters, loops, IF blocks and memory in ``memory.py``; ALU and
conversions in ``alu.py``.
"""

from __future__ import annotations

from fusegrad.renderer.signature import KernelSignature
from fusegrad.renderer.x86 import alu, lanes, masked, memory, vector
from fusegrad.renderer.x86.context import FLOATS, INTS, SELECTED, Selection
from fusegrad.uop import GroupOp, Ops, PatternMatcher, UOp, UPat, dtypes

_INTS_BOOL = (*INTS, dtypes.bool)
_COMPARE = (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ)
_MASK_LOGIC = (Ops.AND, Ops.OR, Ops.XOR, Ops.ADD, Ops.MUL, Ops.SUB, Ops.MAX)
_NOT_INT_VECTOR = frozenset({Ops.WHERE, *_COMPARE})


def _int_vector(ctx: Selection, x: UOp) -> UOp | None:
    if x.dtype.count == 1 or x.op in _NOT_INT_VECTOR:
        return None
    return vector.int_op(ctx, x)


def _vector_conversion(ctx: Selection, x: UOp) -> UOp | None:
    return vector.conversion(ctx, x) if x.dtype.count > 1 else None


def _vector_compare(ctx: Selection, x: UOp) -> UOp | None:
    return vector.compare(ctx, x) if x.dtype.count > 1 else None


def _vector_where(ctx: Selection, x: UOp) -> UOp | None:
    return vector.where(ctx, x) if x.dtype.count > 1 else None


def _mask_logic(ctx: Selection, x: UOp) -> UOp | None:
    return vector.mask_logic(ctx, x) if x.dtype.count > 1 else None


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
        (UPat((Ops.CONST, Ops.VCONST, Ops.INDEX, Ops.DEFINE_REG, Ops.SINK, Ops.BARRIER), name="x"), memory.nothing),
        (UPat(Ops.GROUP), lambda: SELECTED),
        # vectors
        (UPat(GroupOp.ALU, dtypes.int32, name="x"), _int_vector),
        (UPat((Ops.CAST, Ops.BITCAST), name="x"), _vector_conversion),
        (UPat(_COMPARE, name="x"), _vector_compare),
        (UPat(Ops.WHERE, name="x"), _vector_where),
        (UPat(_MASK_LOGIC, dtypes.bool, name="x"), _mask_logic),
        (UPat(Ops.VECTORIZE, name="x"), vector.vectorize),
        (UPat(Ops.GEP, name="x"), vector.gep),
        # floats (float16 rounds its float32 results)
        (UPat((Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.SQRT, Ops.MULACC), dtypes.float16, name="x"), alu.half_alu),
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


_LANE_OPS = GroupOp.ALU | {Ops.CAST, Ops.BITCAST, Ops.LOAD, Ops.VECTORIZE, Ops.CONST, Ops.VCONST}


def _select_one(ctx: Selection, u: UOp) -> None:
    if pm_select.rewrite(u, ctx) is None:
        raise NotImplementedError(
            f"x86 renderer: no instruction selection for {u.op!r} {u.dtype!r}"
        )


def _in_lanes(u: UOp, wide: bool) -> bool:
    """A vector the renderer holds as scalar lanes (see ``lanes``)."""
    if u.op is Ops.GEP:
        return len(u.arg) > 1
    return u.dtype.count > 1 and u.op in _LANE_OPS and not lanes.native_node(u, wide)


def _stored_in_lanes(ctx: Selection, u: UOp) -> bool:
    if u.op is not Ops.STORE or u.src[1].dtype.count == 1:
        return False
    if memory.register_array(u.src[0]) is not None:
        return False
    return u.src[1] in ctx.lanes or not lanes.reg_vector(u.src[1].dtype, ctx.wide)


def select(uops: list[UOp], sig: KernelSignature, wide: bool = False) -> Selection:
    """The machine IR of a linear program (virtual registers, frame slots unplaced);
    ``wide``: float32x16/float64x8 in zmm registers (AVX-512)."""
    ctx = Selection(sig, uops, wide)
    memory.index_slots(ctx, uops)
    fused, taken = masked.fused_loads(uops, ctx.users)
    for u in uops:
        if u in taken:
            continue
        if u in fused:
            masked.masked_load(ctx, u)
        elif _in_lanes(u, ctx.wide):
            lanes.split(ctx, u, lambda node: _select_one(ctx, node))
        elif _stored_in_lanes(ctx, u):
            lanes.store_lanes(ctx, u)
        else:
            _select_one(ctx, u)
    return ctx
