"""fusegrad.codegen: scheduler, kernel optimizer, lowering pipeline, and the Renderer interface.

Public names: ``Renderer``, ``TensorCore``, ``ProgramSpec``, ``BufferParam``, ``Estimates``,
``Compiler``, ``CompileError``, ``DiskCache``, ``KernelInfo``, ``SpecError``,
``verify_linear``, ``verify_kernel_ast``; the lowering pipeline: ``to_program`` (kernel AST
-> ProgramSpec), ``STAGES``, ``register_opts_applier``, ``OptsApplier``, ``format_linear``;
the scheduler: ``get_kernel_graph`` (tensor graph -> ``KernelGraph``), ``ScheduleError``;
the kernel optimizer (``fusegrad.codegen.opt``, installed as the pipeline's opts hook on
import): ``Opt``, ``OptOps``, ``KernelOptError``, ``apply_opts``,
``hand_coded_optimizations``, ``beam_search``, ``Timer``, ``register_beam_timer``.
"""

from fusegrad.codegen.lower import (
    STAGES,
    OptsApplier,
    format_linear,
    register_opts_applier,
    to_program,
)
from fusegrad.codegen.opt import (
    KernelOptError,
    Opt,
    OptOps,
    Timer,
    apply_opts,
    beam_search,
    hand_coded_optimizations,
    register_beam_timer,
)
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
    "OptsApplier",
    "ProgramSpec",
    "Renderer",
    "ScheduleError",
    "SpecError",
    "TensorCore",
    "Timer",
    "apply_opts",
    "beam_search",
    "cache_dir",
    "format_linear",
    "get_kernel_graph",
    "hand_coded_optimizations",
    "host_cpu_count",
    "register_beam_timer",
    "register_opts_applier",
    "to_program",
    "verify_kernel_ast",
    "verify_linear",
]
