"""fusegrad.renderer: code generators for fusegrad's targets, and loading CPU code.

Public names:

* ``LLVMRenderer`` / ``LLVMCompiler`` — LLVM IR, compiled in process with llvmlite (the
  default CPU path); ``CRenderer`` / ``CCompiler`` — C11 for the system C compiler
  (``find_c_compiler``; ``CCompilerNotFoundError`` when there is none);
* ``load_elf(obj, symbol) -> LoadedCode`` — loads a compiled CPU kernel (an ELF relocatable
  object, what both CPU compilers produce) into shared executable code pages
  (``codepages``: written through a separate writable view, never W+X);
  ``LoadedCode.address`` is the function's entry point, ``LoadedCode.free()`` (or garbage
  collection) gives its bytes back, and a chunk left empty is unmapped; ``ElfLoadError``;
* ``CPUProgram`` — a loaded kernel callable from Python over buffer-protocol objects;
* ``X86Renderer`` / ``X86Compiler`` — x86-64 machine code with no compiler at all
  (``DEV=CPU:X86``): the renderer's output is the listing, the compiler wraps its bytes in
  an ELF object for ``load_elf``;
* ``KernelSignature`` / ``kernel_signature(uops)`` — the CPU calling convention of a linear
  program (buffers by slot, int32 Variables, core id last);
* ``PTXRenderer(arch)`` / ``PTXCompiler(arch)`` — PTX for NVIDIA GPUs (``sm_75`` .. ``sm_90``),
  assembled by ``ptxas`` when on PATH (``find_ptxas``), else left as PTX for the driver;
  ``ptx_signature(uops)`` — a PTX kernel's parameters in launch order;
* ``NIRRenderer`` / ``LVPCompiler`` — Mesa NIR compute shaders run on the CPU by llvmpipe
  (``DEV=CPU:LVP``; needs ``fusegrad-renderers[nir]``, else the option says what to install).

The conformance suite (``fusegrad.renderer.conformance``, corpus in
``fusegrad.renderer.corpus``) is importable by other packages to register their renderers.
"""

from fusegrad.renderer.version import __version__ as __version__  # first: mismatched sets fail here

# isort: split
from fusegrad.codegen import Renderer  # tinygrad's path: ``from tinygrad.renderer import Renderer``
from fusegrad.renderer.c import CCompiler, CCompilerNotFoundError, CRenderer, find_c_compiler
from fusegrad.renderer.elf import ElfLoadError, ElfSection, ElfSymbol, LoadedCode, TinyELF, load_elf
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.llvm import LLVMCompiler, LLVMRenderer
from fusegrad.renderer.nir import LVPCompiler, NIRRenderer
from fusegrad.renderer.ptx import PTXCompiler, PTXRenderer, find_ptxas, ptx_signature
from fusegrad.renderer.signature import KernelSignature, kernel_signature
from fusegrad.renderer.x86 import X86Compiler, X86Renderer, x86_unavailable

__all__ = [
    "CCompiler",
    "CCompilerNotFoundError",
    "CPUProgram",
    "CRenderer",
    "ElfLoadError",
    "ElfSection",
    "ElfSymbol",
    "KernelSignature",
    "LLVMCompiler",
    "LLVMRenderer",
    "LVPCompiler",
    "LoadedCode",
    "NIRRenderer",
    "PTXCompiler",
    "PTXRenderer",
    "Renderer",
    "TinyELF",
    "X86Compiler",
    "X86Renderer",
    "find_c_compiler",
    "find_ptxas",
    "kernel_signature",
    "load_elf",
    "ptx_signature",
    "x86_unavailable",
]
