"""``fusegrad.uop.ops``: the names tinygrad users import from ``tinygrad.uop.ops``, re-exported
from where fusegrad keeps them (the UOp, the op enums, the pattern language, the rewrite
engine, the size helpers). No implementation lives here.

>>> from fusegrad.uop.ops import UOp, Ops, resolve
>>> i = UOp.variable("i", 0, 4)
>>> resolve(i < 5), UOp.const(5, dtypes.int32).op is Ops.CONST
(True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fusegrad.uop.alu import exec_alu, identity_element, python_alu, safe_exp2, safe_pow
from fusegrad.uop.dtype import ConstType, DType, Invalid, dtypes, least_upper_dtype, truncate
from fusegrad.uop.flags import (
    CAPTURE_PROCESS_REPLAY,
    DISALLOW_BROADCAST,
    PROFILE,
    REWRITE_STACK_LIMIT,
    SPEC,
    TRACEMETA,
    TRACK_MATCH_STATS,
    VIZ,
    getenv,
)
from fusegrad.uop.kernelinfo import CallInfo, KernelInfo, ParamArg, ProgramInfo, gate_kernel_sink
from fusegrad.uop.opcodes import AxisType, GroupOp, Ops
from fusegrad.uop.pattern import (
    PatternMatcher,
    UPat,
    deconstruct_function,
    upat_deferred_compile,
    upat_interpret,
)
from fusegrad.uop.render import (
    axis_colors,
    axis_letters,
    axis_to_pos,
    multirange_str,
    range_start,
    range_str,
)
from fusegrad.uop.rewrite import (
    SENTINEL,
    BottomUpGate,
    RewriteContext,
    consumer_map_from_toposort,
    do_unbind,
    graph_rewrite,
    graph_rewrite_map,
    match_stats,
    pm_unbind,
    remove_all_tags,
)
from fusegrad.uop.shape import shape_to_shape_arg
from fusegrad.uop.tracking import (
    RewriteTrace,
    TrackedGraphRewrite,
    TrackedPatternMatcher,
    active_group,
    active_rewrites,
    add_trace_group,
    rewrite_group,
    tracked_ctxs,
    tracked_keys,
    ucount,
    uop_fields,
)
from fusegrad.uop.uop import (
    UOp,
    UOpMetaClass,
    all_metadata,
    broadcast_axes,
    buffers,
    dtype_from_uop,
    get_location,
    promo_dtype,
    recursive_property,
    resolve,
    sint,
    sint_to_uop,
    smax,
    smin,
    srender,
    ssimplify,
    sym_infer,
    to_function_name,
    to_max_shape,
)
from fusegrad.uop.views import pm_contiguous_view_offset

PyConst = bool | int | float
"""A Python constant a UOp can hold."""
ConstLike = ConstType | tuple[ConstType, ...]
"""What ``UOp.const`` takes: a constant or a tuple of them (a vector)."""
DTypeLike = str | DType
"""A dtype or its name."""

Variable = UOp
"""A Variable is a UOp (``UOp.variable(...)``); the name is for annotations, as tinygrad's."""

__all__ = [
    "CAPTURE_PROCESS_REPLAY",
    "DISALLOW_BROADCAST",
    "PROFILE",
    "REWRITE_STACK_LIMIT",
    "SENTINEL",
    "SPEC",
    "TRACEMETA",
    "TRACK_MATCH_STATS",
    "TYPE_CHECKING",
    "VIZ",
    "AxisType",
    "BottomUpGate",
    "CallInfo",
    "ConstLike",
    "ConstType",
    "DTypeLike",
    "GroupOp",
    "Invalid",
    "KernelInfo",
    "Ops",
    "ParamArg",
    "PatternMatcher",
    "ProgramInfo",
    "PyConst",
    "RewriteContext",
    "RewriteTrace",
    "TrackedGraphRewrite",
    "TrackedPatternMatcher",
    "UOp",
    "UOpMetaClass",
    "UPat",
    "Variable",
    "active_group",
    "active_rewrites",
    "add_trace_group",
    "all_metadata",
    "axis_colors",
    "axis_letters",
    "axis_to_pos",
    "broadcast_axes",
    "buffers",
    "consumer_map_from_toposort",
    "deconstruct_function",
    "do_unbind",
    "dtype_from_uop",
    "dtypes",
    "exec_alu",
    "gate_kernel_sink",
    "get_location",
    "getenv",
    "graph_rewrite",
    "graph_rewrite_map",
    "identity_element",
    "least_upper_dtype",
    "match_stats",
    "multirange_str",
    "pm_contiguous_view_offset",
    "pm_unbind",
    "promo_dtype",
    "python_alu",
    "range_start",
    "range_str",
    "recursive_property",
    "remove_all_tags",
    "resolve",
    "rewrite_group",
    "safe_exp2",
    "safe_pow",
    "shape_to_shape_arg",
    "sint",
    "sint_to_uop",
    "smax",
    "smin",
    "srender",
    "ssimplify",
    "sym_infer",
    "to_function_name",
    "to_max_shape",
    "tracked_ctxs",
    "tracked_keys",
    "truncate",
    "ucount",
    "uop_fields",
    "upat_deferred_compile",
    "upat_interpret",
]
