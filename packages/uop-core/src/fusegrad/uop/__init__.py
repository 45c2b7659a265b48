"""fusegrad.uop: the IR every fusegrad layer speaks.

Public names: ``UOp``, ``Ops``, ``GroupOp``, ``AxisType``, ``dtypes``, ``DType``,
``PtrDType``, ``AddrSpace``, ``Invalid``, ``least_upper_dtype``, ``UPat``, ``PatternMatcher``,
``graph_rewrite``, ``graph_rewrite_map``, ``sym_infer``, the rule sets ``symbolic_simple``,
``symbolic``, ``sym``, ``commutative``, the z3 proofs (``uops_to_z3``, ``prove_equal``,
``prove_simplify``, ``validate_index``, ``Proof``; z3 optional), and ``Context``, ``ContextVar``, ``getenv``, ``DEBUG``
with the small helpers (``prod``, ``dedup``...).

>>> from fusegrad.uop import UOp
>>> x = UOp.variable("x", 0, 100)
>>> (x * 4 + 2).vmax
402
"""

from fusegrad.uop.version import __version__ as __version__  # first: mismatched sets fail here

# isort: split
from fusegrad.uop.alu import exec_alu, threefry2x32
from fusegrad.uop.dtype import (
    AddrSpace,
    ConstType,
    DType,
    Invalid,
    InvalidType,
    PtrDType,
    bitcast,
    commit_weak,
    dtypes,
    least_upper_dtype,
    least_upper_float,
    promoted_dtype,
    sum_acc_dtype,
    to_dtype,
    truncate,
)
from fusegrad.uop.flags import (
    DEBUG,
    DEFAULT_FLOAT,
    DEFAULT_INT,
    SPEC,
    TRACK_MATCH_STATS,
    VIZ,
    Context,
    ContextVar,
    getenv,
)
from fusegrad.uop.helpers import (
    all_int,
    all_same,
    argfix,
    argsort,
    ceildiv,
    dedup,
    flatten,
    merge_dicts,
    partition,
    prod,
    round_down,
    round_up,
)
from fusegrad.uop.opcodes import AxisType, GroupOp, Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.prove import Proof, prove_equal, prove_simplify, uops_to_z3, validate_index
from fusegrad.uop.rewrite import (
    RewriteEvent,
    RewriteNotConverging,
    add_tracer,
    graph_rewrite,
    graph_rewrite_map,
    remove_tracer,
    substitute,
)
from fusegrad.uop.shape import broadcast_shapes
from fusegrad.uop.symbolic import commutative, sym, symbolic, symbolic_simple
from fusegrad.uop.uop import UOp, resolve, sint, sint_to_uop, smax, smin, ssimplify, sym_infer

Variable = UOp.variable

__all__ = [
    "DEBUG",
    "DEFAULT_FLOAT",
    "DEFAULT_INT",
    "SPEC",
    "TRACK_MATCH_STATS",
    "VIZ",
    "AddrSpace",
    "AxisType",
    "ConstType",
    "Context",
    "ContextVar",
    "DType",
    "GroupOp",
    "Invalid",
    "InvalidType",
    "Ops",
    "PatternMatcher",
    "Proof",
    "PtrDType",
    "RewriteEvent",
    "RewriteNotConverging",
    "UOp",
    "UPat",
    "Variable",
    "add_tracer",
    "all_int",
    "all_same",
    "argfix",
    "argsort",
    "bitcast",
    "broadcast_shapes",
    "ceildiv",
    "commit_weak",
    "commutative",
    "dedup",
    "dtypes",
    "exec_alu",
    "flatten",
    "getenv",
    "graph_rewrite",
    "graph_rewrite_map",
    "least_upper_dtype",
    "least_upper_float",
    "merge_dicts",
    "partition",
    "prod",
    "promoted_dtype",
    "prove_equal",
    "prove_simplify",
    "remove_tracer",
    "resolve",
    "round_down",
    "round_up",
    "sint",
    "sint_to_uop",
    "smax",
    "smin",
    "ssimplify",
    "substitute",
    "sum_acc_dtype",
    "sym",
    "sym_infer",
    "symbolic",
    "symbolic_simple",
    "threefry2x32",
    "to_dtype",
    "truncate",
    "uops_to_z3",
    "validate_index",
]
