"""Instruction selection: the linear program -> machine IR with virtual registers.

``pm_select`` is a rule table over the linear program's nodes (the pattern language of every
other pass); each rule emits the instructions of one node into the ``Selection`` context
(``context.py``) and returns ``SELECTED``. ``select`` runs it over the program in order.
Rules by kind: parameters, loops, IF blocks and memory in ``memory.py``; ALU and
conversions in ``alu.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from fusegrad.renderer.signature import KernelSignature
from fusegrad.renderer.x86 import alu, lanes, masked, memory, vector
from fusegrad.renderer.x86.context import FLOATS, INTS, SELECTED, Op, Selection
from fusegrad.uop import DType, GroupOp, Ops, PatternMatcher, UOp, UPat, dtypes

_INTS_BOOL = (*INTS, dtypes.bool)
_COMPARE = (Op.CMPLT, Op.CMPNE, Op.CMPEQ)
_MASK_LOGIC = (Op.AND, Op.OR, Op.XOR, Op.ADD, Op.MUL, Op.SUB, Op.MAX)
_NOT_INT_VECTOR = frozenset({Op.WHERE, *_COMPARE})


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
        (UPat((Op.PARAM, Op.SPECIAL), name="x"), memory.param),
        (UPat(Op.RANGE, name="x"), memory.range_start),
        (UPat(Op.END, name="x"), memory.range_end),
        (UPat(Op.IF, name="x"), memory.if_start),
        (UPat(Op.ENDIF, name="x"), memory.if_end),
        (UPat(Op.LOAD, name="x"), memory.load),
        (UPat(Op.STORE, name="x"), memory.store),
        (UPat(Op.AFTER, name="x"), memory.after),
        (UPat((Op.CONST, Op.VCONST, Op.INDEX, Op.DEFINE_REG, Op.SINK, Op.BARRIER), name="x"), memory.nothing),
        (UPat(Op.GROUP), lambda: SELECTED),
        # vectors
        (UPat(GroupOp.ALU, dtypes.int32, name="x"), _int_vector),
        (UPat((Op.CAST, Op.BITCAST), name="x"), _vector_conversion),
        (UPat(_COMPARE, name="x"), _vector_compare),
        (UPat(Op.WHERE, name="x"), _vector_where),
        (UPat(_MASK_LOGIC, dtypes.bool, name="x"), _mask_logic),
        (UPat(Op.VECTORIZE, name="x"), vector.vectorize),
        (UPat(Op.GEP, name="x"), vector.gep),
        # floats (float16 rounds its float32 results)
        (UPat((Op.ADD, Op.SUB, Op.MUL, Op.FDIV, Op.SQRT, Op.MULACC), dtypes.float16, name="x"), alu.half_alu),
        (UPat((Op.ADD, Op.SUB, Op.MUL, Op.FDIV), FLOATS, name="x"), alu.float_binary),
        (UPat((Op.SQRT, Op.TRUNC, Op.NEG), FLOATS, name="x"), alu.float_unary),
        (UPat(Op.MULACC, FLOATS, name="x"), alu.float_mulacc),
        (UPat(Op.MAX, FLOATS, name="x"), alu.float_max),
        (UPat(_COMPARE, name="x"), alu.compare),
        # integers and bools
        (UPat((Op.ADD, Op.SUB, Op.MUL, Op.AND, Op.OR, Op.XOR, Op.MAX), _INTS_BOOL, name="x"), alu.int_alu),
        (UPat(Op.MULACC, _INTS_BOOL, name="x"), alu.int_mulacc),
        (UPat(Op.NEG, _INTS_BOOL, name="x"), alu.int_neg),
        (UPat(Op.TRUNC, INTS, name="x"), alu.int_identity),
        (UPat((Op.SHL, Op.SHR), INTS, name="x"), alu.int_shift),
        (UPat((Op.CDIV, Op.CMOD), INTS, name="x"), alu.int_divide),
        (UPat(Op.WHERE, name="x"), alu.where),
        # conversions
        (UPat(Op.CAST, name="x"), alu.cast),
        (UPat(Op.BITCAST, name="x"), alu.bitcast),
    ]
)  # fmt: skip

#: the ALU ops some rule selects (the renderer's ``code_for_op``)
SELECTED_OPS = frozenset(
    {
        *(Op.ADD, Op.SUB, Op.MUL, Op.FDIV, Op.CDIV, Op.CMOD, Op.MAX),
        *(Op.SHL, Op.SHR, Op.AND, Op.OR, Op.XOR, Op.CMPLT, Op.CMPNE, Op.CMPEQ),
        *(Op.NEG, Op.SQRT, Op.TRUNC, Op.WHERE, Op.MULACC),
    }
)


_LANE_OPS = GroupOp.ALU | {Op.CAST, Op.BITCAST, Op.LOAD, Op.VECTORIZE, Op.CONST, Op.VCONST}


def _rules_for(op: Ops, dt: DType) -> tuple[Callable[[Selection, UOp], UOp | None], ...]:
    """The rule functions of ``pm_select`` whose pattern accepts ``op`` and ``dt``, in table
    order (every pattern there tests only the op and the dtype, so this is the whole
    match: ``_check_rules``)."""
    out: list[Callable[[Selection, UOp], UOp | None]] = []
    for pat, fn in pm_select.patterns:
        if pat.op is not None and op not in pat.op:
            continue
        if pat.dtype is not None and dt not in pat.dtype and dt.scalar() not in pat.dtype:
            continue
        out.append(fn if pat.name == "x" else _no_capture(fn))
    return tuple(out)


def _no_capture(fn: Callable[[], UOp | None]) -> Callable[[Selection, UOp], UOp | None]:
    return lambda ctx, x: fn()


def _check_rules() -> None:
    """``_rules_for`` reads a pattern's op and dtype only: the table must ask nothing else."""
    for pat, fn in pm_select.patterns:
        bare = pat.src is None and pat.arg is None and pat.tag is None
        if not bare or pat.custom_reject or pat.name not in ("x", None):
            raise AssertionError(f"x86 pm_select: {pat} matches more than an op and dtype")
        params = list(inspect.signature(fn).parameters)
        if params != (["ctx", "x"] if pat.name == "x" else []):
            raise AssertionError(f"x86 pm_select: {fn} must take (ctx, x), or nothing")


_check_rules()
#: per (op, dtype): the rules to try, first to last (``pm_select.rewrite`` without running
#: each pattern's matcher on every node)
_DISPATCH: dict[tuple[Ops, DType], tuple[Callable[[Selection, UOp], UOp | None], ...]] = {}


def _select_one(ctx: Selection, u: UOp) -> None:
    key = (u.op, u.dtype)
    rules = _DISPATCH.get(key)
    if rules is None:
        rules = _DISPATCH[key] = _rules_for(u.op, u.dtype)
    for fn in rules:
        if fn(ctx, u) is not None:
            return
    raise NotImplementedError(f"x86 renderer: no instruction selection for {u.op!r} {u.dtype!r}")


def _in_lanes(u: UOp, wide: bool) -> bool:
    """A vector the renderer holds as scalar lanes (see ``lanes``)."""
    if u.op is Op.GEP:
        return len(u.arg) > 1
    return u.dtype.count > 1 and u.op in _LANE_OPS and not lanes.native_node(u, wide)


def _stored_in_lanes(ctx: Selection, u: UOp) -> bool:
    if u.op is not Op.STORE or u.src[1].dtype.count == 1:
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
    gep, store, dispatch = Op.GEP, Op.STORE, _DISPATCH
    for u in uops:
        if u in taken:
            continue
        op = u.op
        if u in fused:
            masked.masked_load(ctx, u)
        elif (op is gep or u.dtype.count > 1) and _in_lanes(u, wide):
            lanes.split(ctx, u, lambda node: _select_one(ctx, node))
        elif op is store and _stored_in_lanes(ctx, u):
            lanes.store_lanes(ctx, u)
        else:  # _select_one, inlined (once per node)
            rules = dispatch.get((op, u.dtype))
            if rules is None:
                rules = dispatch[(op, u.dtype)] = _rules_for(op, u.dtype)
            for fn in rules:
                if fn(ctx, u) is not None:
                    break
            else:
                raise NotImplementedError(
                    f"x86 renderer: no instruction selection for {op!r} {u.dtype!r}"
                )
    return ctx
