"""Dtype emulation (placeholder)."""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.uop import UOp


def emulate_dtypes(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: dtypes the target lacks computed in float32."""
    return sink
