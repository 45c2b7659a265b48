"""The lowering pipeline: an optimized kernel AST to a linear program and a ProgramSpec.

``lower(ast, renderer)`` runs ``STAGES`` (see ``pipeline.py``); ``render`` prints the result
as a ProgramSpec. ``to_program`` (optimize, lower, render; defined in
``fusegrad.codegen.program``) is re-exported here for the lowering tests' convenience.
"""

from fusegrad.codegen.lower.pipeline import (
    STAGES,
    Stage,
    format_linear,
    kernel_name,
    lower,
    render,
)

__all__ = ["STAGES", "Stage", "format_linear", "kernel_name", "lower", "render", "to_program"]

# last: fusegrad.codegen.program imports the optimizer, which imports the modules above
from fusegrad.codegen.program import to_program
