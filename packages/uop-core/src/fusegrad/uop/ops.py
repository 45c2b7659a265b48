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
from fusegrad.uop.flags import SPEC, TRACK_MATCH_STATS, VIZ, getenv
from fusegrad.uop.kernelinfo import KernelInfo
from fusegrad.uop.opcodes import AxisType, GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.rewrite import (
    consumer_map_from_toposort,
    do_unbind,
    graph_rewrite,
    graph_rewrite_map,
    match_stats,
    pm_unbind,
    remove_all_tags,
)
from fusegrad.uop.uop import (
    UOp,
    UOpMetaClass,
    broadcast_axes,
    get_location,
    promo_dtype,
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

PyConst = bool | int | float
"""A Python constant a UOp can hold."""
ConstLike = ConstType | tuple[ConstType, ...]
"""What ``UOp.const`` takes: a constant or a tuple of them (a vector)."""
DTypeLike = str | DType
"""A dtype or its name."""

Variable = UOp
"""A Variable is a UOp (``UOp.variable(...)``); the name is for annotations, as tinygrad's."""

__all__ = [
    "SPEC",
    "TRACK_MATCH_STATS",
    "TYPE_CHECKING",
    "VIZ",
    "AxisType",
    "ConstLike",
    "ConstType",
    "DTypeLike",
    "GroupOp",
    "Invalid",
    "KernelInfo",
    "Ops",
    "PatternMatcher",
    "PyConst",
    "UOp",
    "UOpMetaClass",
    "UPat",
    "Variable",
    "broadcast_axes",
    "consumer_map_from_toposort",
    "do_unbind",
    "dtypes",
    "exec_alu",
    "get_location",
    "getenv",
    "graph_rewrite",
    "graph_rewrite_map",
    "identity_element",
    "least_upper_dtype",
    "match_stats",
    "pm_unbind",
    "promo_dtype",
    "python_alu",
    "remove_all_tags",
    "resolve",
    "safe_exp2",
    "safe_pow",
    "sint",
    "sint_to_uop",
    "smax",
    "smin",
    "srender",
    "ssimplify",
    "sym_infer",
    "to_function_name",
    "to_max_shape",
    "truncate",
]
