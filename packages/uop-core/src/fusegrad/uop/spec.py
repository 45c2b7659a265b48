"""``fusegrad.uop.spec``: what a legal UOp looks like, as tinygrad writes it: a PatternMatcher
whose rules return True (legal) or False (illegal) for the nodes they match; a node no rule
matches is illegal.

* ``spec_shared``: the nodes every stage shares (constants, ALU with consistent dtypes, casts,
  vectors, Variables, ranges, SINK/GROUP/AFTER)
* ``spec_tensor``: ``spec_shared`` + the tensor-level nodes (buffers, devices, movement ops whose
  shapes infer, REDUCE_AXIS, COPY, CONTIGUOUS, DETACH, assignment)
* ``spec_kernel``: ``spec_shared`` + the kernel-level nodes (PARAM, INDEX, LOAD, STORE, END,
  REDUCE); codegen's stage specs (``fusegrad.codegen.spec``) pin these down further

``type_verify(uops, extra_specs=())`` checks a list of nodes and raises a RuntimeError naming the
first illegal one.

>>> from fusegrad.uop import UOp, dtypes
>>> x = UOp.variable("x", 0, 9)
>>> type_verify((x * 2 + 1).toposort())
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from fusegrad.uop.dtype import Invalid, PtrDType, dtypes
from fusegrad.uop.opcodes import GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.uop import UOp


def _alu_ok(a: UOp) -> bool:
    """Operands of one dtype (the result's; comparisons give bool, WHERE a bool condition)."""
    if a.op is Ops.WHERE:
        c, x, y = a.src
        return c.dtype.scalar() is dtypes.bool and x.dtype is y.dtype is a.dtype
    if a.op in GroupOp.Comparison:
        x, y = a.src
        return x.dtype is y.dtype and a.dtype.scalar() is dtypes.bool
    if a.op is Ops.THREEFRY:
        return a.dtype.scalar() is dtypes.uint64
    return all(s.dtype is a.dtype for s in a.src)


def _const_ok(c: UOp) -> bool:
    if c.arg is Invalid:
        return True
    value = c.arg
    return bool(value == dtypes.as_const(value, c.dtype.scalar()) or math.isnan(value))


def _variable_ok(v: UOp) -> bool:
    arg = v.arg
    return isinstance(arg, tuple) and len(arg) in (3, 4) and arg[1] <= arg[2]


def _spec(rules: list[tuple[UPat, Callable[..., bool]]]) -> PatternMatcher:
    """A spec table: a PatternMatcher whose rules answer True/False instead of rewriting."""
    table: list[Any] = rules
    return PatternMatcher(table)


def _has_shape(x: UOp) -> bool:
    try:
        return x.st_shape is not None
    except (ValueError, TypeError):
        return False


spec_shared = _spec(
    [
        (UPat(Ops.CONST, src=(), name="c"), _const_ok),
        (UPat(Ops.VCONST, name="c"), lambda c: len(c.arg) == c.dtype.count),
        (UPat(GroupOp.ALU, name="a"), _alu_ok),
        (UPat((Ops.CAST, Ops.BITCAST), src=(UPat(),)), lambda: True),
        (UPat(Ops.VECTORIZE, name="v"), lambda v: len(v.src) == v.dtype.count > 1),
        (UPat(Ops.GEP, src=(UPat(),), name="g"), lambda g: len(g.arg) == g.dtype.count),
        (UPat(Ops.DEFINE_VAR, src=(), name="v"), _variable_ok),
        (UPat((Ops.RANGE, Ops.SPECIAL), src=(UPat(),), allow_any_len=True), lambda: True),
        (UPat((Ops.SINK, Ops.GROUP), dtypes.void), lambda: True),
        (UPat(Ops.AFTER, src=(UPat(),), allow_any_len=True), lambda: True),
        (UPat((Ops.UNIQUE, Ops.DEVICE), src=()), lambda: True),
    ]
)

spec_tensor = spec_shared + _spec(
    [
        (UPat(Ops.BUFFER, src=(UPat(Ops.UNIQUE), UPat(Ops.DEVICE)), name="b"),
         lambda b: isinstance(b.arg, int) and b.arg >= 0),
        (UPat(Ops.CONST, src=(UPat(Ops.DEVICE),)), lambda: True),
        (UPat(GroupOp.Movement, src=(UPat(),), name="x"), _has_shape),
        (UPat(Ops.REDUCE_AXIS, src=(UPat(),), name="x"), _has_shape),
        (UPat(Ops.COPY, src=(UPat(), UPat(Ops.DEVICE))), lambda: True),
        (UPat((Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH), src=(UPat(),)), lambda: True),
        # a custom-gradient node: the value, then the inputs its gradient rule (the arg) feeds
        (UPat(Ops.CONTIGUOUS_BACKWARD, src=(UPat(),), allow_any_len=True, name="x"),
         lambda x: x.arg is not None),
        (UPat(Ops.STORE, dtypes.void, src=(UPat(), UPat())), lambda: True),
    ]
)  # fmt: skip

spec_kernel = spec_shared + _spec(
    [
        (UPat(Ops.PARAM, src=(), name="p"),
         lambda p: isinstance(p.arg, int) if isinstance(p.dtype, PtrDType) else _variable_ok(p)),
        (UPat(Ops.INDEX, src=(UPat(),), allow_any_len=True, name="i"), lambda i: len(i.src) >= 2),
        (UPat(Ops.LOAD, src=(UPat(Ops.INDEX),), allow_any_len=True), lambda: True),
        (UPat(Ops.STORE, dtypes.void, src=(UPat(), UPat()), allow_any_len=True), lambda: True),
        (UPat(Ops.END, dtypes.void, src=(UPat(),), allow_any_len=True), lambda: True),
        (UPat(Ops.REDUCE, src=(UPat(),), allow_any_len=True, name="r"),
         lambda r: r.arg in GroupOp.Reduce and all(s.op is Ops.RANGE for s in r.src[1:])),
    ]
)  # fmt: skip


def type_verify(uops: Iterable[UOp], extra_specs: Sequence[PatternMatcher] = ()) -> None:
    """Check every node of ``uops`` against ``spec_shared`` and ``extra_specs`` (a node is legal
    when the first spec with an opinion says True); RuntimeError naming the first illegal
    node."""
    specs = (*extra_specs, spec_shared)
    for i, u in enumerate(uops):
        verdicts: Iterable[Any] = (pm.rewrite(u) for pm in specs)
        verdict = next((r for r in verdicts if r is not None), None)
        if verdict is not True:
            raise RuntimeError(f"type_verify: node {i} is not legal ({verdict=}):\n{u!r}")


__all__ = ["spec_kernel", "spec_shared", "spec_tensor", "type_verify"]
