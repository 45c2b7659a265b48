"""fusegrad.renderer: code generators for fusegrad's targets, and loading CPU code.

Public names:

* ``LLVMRenderer`` / ``LLVMCompiler`` — LLVM IR, compiled in process with llvmlite (the
  default CPU path); ``CRenderer`` / ``CCompiler`` — C11 for the system C compiler
  (``find_c_compiler``; ``CCompilerNotFoundError`` when there is none);
* ``load_elf(obj, symbol) -> LoadedCode`` — maps a compiled CPU kernel (an ELF relocatable
  object, what both CPU compilers produce) into executable memory; ``LoadedCode.address``
  is the function's entry point, ``LoadedCode.free()`` unmaps it; ``ElfLoadError``;
* ``CPUProgram`` — a loaded kernel callable from Python over buffer-protocol objects;
* ``KernelSignature`` / ``kernel_signature(uops)`` — the CPU calling convention of a linear
  program (buffers by slot, int32 Variables, core id last).

The conformance suite (``fusegrad.renderer.conformance``, corpus in
``fusegrad.renderer.corpus``) is importable by other packages to register their renderers.
"""

from fusegrad.renderer.c import CCompiler, CCompilerNotFoundError, CRenderer, find_c_compiler
from fusegrad.renderer.elf import ElfLoadError, LoadedCode, load_elf
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.llvm import LLVMCompiler, LLVMRenderer
from fusegrad.renderer.signature import KernelSignature, kernel_signature

__all__ = [
    "CCompiler",
    "CCompilerNotFoundError",
    "CPUProgram",
    "CRenderer",
    "ElfLoadError",
    "KernelSignature",
    "LLVMCompiler",
    "LLVMRenderer",
    "LoadedCode",
    "find_c_compiler",
    "kernel_signature",
    "load_elf",
]
