"""fusegrad.codegen: scheduler, kernel optimizer, lowering pipeline, and the Renderer interface.

Public names: ``Renderer``, ``TensorCore``, ``ProgramSpec``, ``BufferParam``, ``Estimates``,
``Compiler``, ``CompileError``, ``DiskCache``, ``KernelInfo``, ``SpecError``,
``verify_linear``, ``verify_kernel_ast`` (more arrive with the scheduler, optimizer and
lowering pipeline).
"""

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
from fusegrad.codegen.spec import KernelInfo, SpecError, verify_kernel_ast, verify_linear

__all__ = [
    "BufferParam",
    "CompileError",
    "Compiler",
    "DiskCache",
    "Estimates",
    "KernelInfo",
    "ProgramSpec",
    "Renderer",
    "SpecError",
    "TensorCore",
    "cache_dir",
    "host_cpu_count",
    "verify_kernel_ast",
    "verify_linear",
]
