"""The lowering pipeline: an (optimized) kernel AST to a linear program and a ProgramSpec.

``to_program(ast, renderer)`` runs ``STAGES`` (see ``pipeline.py``) and fills the ProgramSpec.
"""

from fusegrad.codegen.lower.opts import OptsApplier, apply_opts, register_opts_applier
from fusegrad.codegen.lower.pipeline import (
    STAGES,
    Stage,
    format_linear,
    kernel_name,
    lower,
    to_program,
)

__all__ = [
    "STAGES",
    "OptsApplier",
    "Stage",
    "apply_opts",
    "format_linear",
    "kernel_name",
    "lower",
    "register_opts_applier",
    "to_program",
]
