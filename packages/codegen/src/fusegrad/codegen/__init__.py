"""fusegrad.codegen: scheduler, kernel optimizer, lowering pipeline, and the Renderer interface.

Public names: ``Renderer``, ``TensorCore``, ``ProgramSpec``, ``BufferParam``, ``Estimates``,
``Compiler``, ``CompileError``, ``DiskCache``, ``KernelInfo``, ``SpecError``,
``verify_linear``, ``verify_kernel_ast``; the program pipeline: ``to_program`` (kernel AST
-> ProgramSpec: ``render(lower(optimize(ast)))``, see ``fusegrad.codegen.program``),
``clear_programs``, ``STAGES``, ``format_linear``; the scheduler: ``get_kernel_graph``
(tensor graph -> ``KernelGraph``), ``ScheduleError``; the kernel optimizer
(``fusegrad.codegen.opt``): ``Opt``, ``OptOps``, ``KernelOptError``, ``apply_opts``,
``hand_coded_optimizations``, ``beam_search``, ``Timer``.
"""

from fusegrad.codegen.version import __version__ as __version__  # first: mismatched sets fail here

# isort: split
from fusegrad.codegen.lower import STAGES, format_linear
from fusegrad.codegen.opt import (
    KernelOptError,
    Opt,
    OptOps,
    Timer,
    apply_opts,
    beam_search,
    hand_coded_optimizations,
)
from fusegrad.codegen.program import clear_programs, to_program
from fusegrad.codegen.renderer import (
    BufferParam,
    CompileError,
    Compiler,
    DiskCache,
    Estimates,
    ProgramSpec,
    Renderer,
    TensorCore,
    cache_dir,
    host_cpu_count,
)
from fusegrad.codegen.schedule import KernelGraph, ScheduleError, get_kernel_graph
from fusegrad.codegen.spec import KernelInfo, SpecError, verify_kernel_ast, verify_linear

__all__ = [
    "STAGES",
    "BufferParam",
    "CompileError",
    "Compiler",
    "DiskCache",
    "Estimates",
    "KernelGraph",
    "KernelInfo",
    "KernelOptError",
    "Opt",
    "OptOps",
    "ProgramSpec",
    "Renderer",
    "ScheduleError",
    "SpecError",
    "TensorCore",
    "Timer",
    "apply_opts",
    "beam_search",
    "cache_dir",
    "clear_programs",
    "format_linear",
    "get_kernel_graph",
    "hand_coded_optimizations",
    "host_cpu_count",
    "to_program",
    "verify_kernel_ast",
    "verify_linear",
]
