"""Simplify ranges: give each axis a type the target can run, drop loops of one iteration,
and simplify the index math over what remains."""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.simplify import pm_simplify
from fusegrad.uop import AxisType, Ops, PatternMatcher, UOp, UPat, dtypes


def _target_axis(kind: AxisType, ctx: LowerContext) -> AxisType:
    """The axis type ``kind`` runs as on this target (GPU axes are loops on a CPU...)."""
    r = ctx.renderer
    if not r.has_local and kind in (AxisType.GLOBAL, AxisType.LOCAL):
        return AxisType.LOOP
    if not r.has_local and kind is AxisType.GROUP_REDUCE:
        return AxisType.REDUCE
    if not r.has_threads and kind is AxisType.THREAD:
        return AxisType.LOOP
    return kind


def _retype(ctx: LowerContext, rng: UOp) -> UOp | None:
    kind = _target_axis(rng.arg[1], ctx)
    return rng.replace(arg=(rng.arg[0], kind)) if kind is not rng.arg[1] else None


def _one_iteration(rng: UOp) -> UOp | None:
    end = rng.src[0]
    if end.op is not Ops.CONST or end.arg != 1:
        return None
    return UOp.const(dtypes.weakint, 0)


def _drop_closed_consts(x: UOp) -> UOp | None:
    """END/REDUCE over ranges that became constants: keep only real ranges."""
    keep = tuple(s for s in x.src[1:] if s.op is Ops.RANGE)
    if len(keep) == len(x.src) - 1:
        return None
    if not keep:
        return x.src[0]
    return x.replace(src=(x.src[0], *keep))


pm_simplify_ranges = (
    PatternMatcher(
        [
            (UPat(Ops.RANGE, name="rng"), _retype),  # axis type -> what the target runs
            (UPat(Ops.RANGE, name="rng"), _one_iteration),  # RANGE(1) -> 0
            (UPat((Ops.END, Ops.REDUCE), name="x"), _drop_closed_consts),  # over no range -> x
        ]
    )
    + pm_simplify
)
