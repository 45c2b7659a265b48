"""fusegrad.renderer.x86: the x86-64 machine-code renderer (``DEV=CPU:X86``).

Pipeline, one module each: ``select`` (instruction selection, a rule table over the linear
UOps: ``context``, ``memory``, ``alu``, ``vector``, ``lanes``; ``masked`` takes lane-gated
loads as one masked vector load) -> ``regalloc`` (linear scan with spilling) ->
``assemble`` (frame, labels, constant pool, listing) with ``encode`` (REX/VEX, ModRM/SIB)
and ``evex`` (AVX-512); ``objfile`` wraps the code as an ELF object for ``load_elf``.
``isa`` is the machine IR; ``cpuid`` reads the CPU's features, which pick the code paths
(F16C: native float16; AVX-512F: zmm vectors), or ``X86Renderer(features=...)`` names them.

Public: ``X86Renderer``, ``X86Compiler``, ``x86_unavailable``, ``clear_caches`` (cold
compile-time measurements).
"""

from fusegrad.renderer.x86.assemble import clear_caches
from fusegrad.renderer.x86.renderer import X86Compiler, X86Renderer
from fusegrad.renderer.x86.renderer import unavailable as x86_unavailable

__all__ = ["X86Compiler", "X86Renderer", "clear_caches", "x86_unavailable"]
