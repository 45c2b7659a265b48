"""The x86-64 renderer (``DEV=CPU:X86``): linear UOps -> machine code, no compiler at all.

``X86Renderer().render(uops)`` selects instructions (``select``), allocates registers
(``regalloc``), encodes (``encode``) and returns the listing — offsets, machine code in hex,
assembly (``listing=True`` or ``DEBUG>=4``; else only the code in hex) — which is the
kernel's "source" (golden files are listings). ``X86Compiler``
reads the bytes back and wraps them in an ELF relocatable object, so the kernel loads
through ``load_elf`` like the LLVM and C paths (read-write, copied, then read-execute) and
runs with their calling convention (``signature``).

Capabilities: float32 x8/x4, float64 x4/x2, int32x8 and bool masks in xmm/ymm registers
(``vector_widths``; other vectors are selected lane by lane), every integer dtype, bool,
float32 and float64 native; float16 native where the CPU has F16C (held as float32 in
registers, float16x8/x4 as float32 lanes of a ymm/xmm register, converted at loads and stores,
each arithmetic result rounded to float16 by ``vcvtps2ph``/``vcvtph2ps``), else emulated by
the lowering like bfloat16/fp8 over integer storage; EXP2/LOG2/SIN/RECIPROCAL and floor
division are decomposed by the lowering.
Where the CPU has AVX-512F (and the OS saves zmm state), float32x16 and float64x8 are held
in zmm registers too (EVEX; gated accesses become opmask-masked loads and stores; a
float32x16 compare writes an opmask, kept as a 16-lane mask in a zmm register, and a where
blends under it); float64x8 compares and wheres and the casts of 16 lanes are selected lane
by lane. Gated loads and stores of
the AVX2 path pick a safe address with a cmov: no branches.
Needs AVX2 and FMA (``unavailable`` says why not, from the CPUID instruction: ``cpuid``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

from fusegrad.codegen import CompileError, Compiler, Renderer
from fusegrad.renderer.host import host_cores
from fusegrad.renderer.signature import kernel_signature
from fusegrad.renderer.x86.assemble import ListingError, assemble, code_of
from fusegrad.renderer.x86.context import FLOATS, INTS
from fusegrad.renderer.x86.cpuid import FEATURE_BITS, cpu_features
from fusegrad.renderer.x86.objfile import elf_object
from fusegrad.renderer.x86.select import SELECTED_OPS, select
from fusegrad.uop import DEBUG, DType, Ops, UOp, dtypes

#: the CPU features the emitted code uses
REQUIRED_FEATURES = ("avx", "avx2", "fma")
#: optional features that change the code when present
USED_FEATURES = frozenset({"f16c", "avx512f"})


def unavailable() -> str | None:
    """Why x86 kernels can't run on this machine (None: they can), from CPUID."""
    feats = cpu_features()
    if not feats:
        return "the x86 renderer needs an x86-64 CPU"
    missing = [f for f in ("osxsave", *REQUIRED_FEATURES) if not feats.get(f)]
    if missing:
        return f"the x86 renderer needs an x86-64 CPU with {', '.join(missing)}"
    return None


def _not_printed(*args: object) -> str:
    raise NotImplementedError("the x86 renderer prints machine code, not per-op source")


class X86Renderer(Renderer):
    """Renders linear programs as x86-64 machine code (see the module docstring)."""

    device = "CPU"
    suffix = "X86"
    has_local = False
    has_shared = False
    has_threads = True
    global_max = None
    local_max = None
    max_threads = host_cores()
    vector_widths: ClassVar[dict[DType, tuple[int, ...]]] = {
        dtypes.float32: (8,),
        dtypes.float64: (4,),
        dtypes.int32: (8,),
        dtypes.bool: (8, 4),
    }
    supported_dtypes = frozenset({dtypes.bool, *INTS, *FLOATS})
    #: index math in 64 bits: registers are 64-bit and addresses take them directly, where
    #: int32 index math would re-extend after every add and multiply
    index_dtype_32 = False
    code_for_op: ClassVar[dict[Ops, Callable[..., str]]] = dict.fromkeys(SELECTED_OPS, _not_printed)

    def __init__(self, features: Iterable[str] | None = None, listing: bool = False) -> None:
        """``features``: the CPU features to render for (CPUID names as in
        ``cpuid.FEATURE_BITS``); None: this CPU's. Code for features the CPU lacks can be
        rendered and listed, not run. ``listing``: ``render`` lists every instruction's
        assembly (always with ``DEBUG>=4``); else it gives the machine code as one line of
        hex, which is all the compiler reads (formatting the assembly would take a third
        of the compile time)."""
        self.listing = listing
        if features is None:
            features = (name for name, present in cpu_features().items() if present)
        self.features = frozenset(features)
        unknown = self.features - FEATURE_BITS.keys()
        if unknown:
            raise ValueError(
                f"X86Renderer: unknown CPU features {sorted(unknown)}; "
                f"expected some of {sorted(FEATURE_BITS)}"
            )
        widths = dict(self.vector_widths)
        if "f16c" in self.features:  # float16x8 as float32 lanes of a ymm register
            widths[dtypes.float16] = (8,)
        else:  # no F16C: the lowering emulates float16
            self.supported_dtypes = self.supported_dtypes - {dtypes.float16}
        if "avx512f" in self.features:  # zmm: 16 float32 / 8 float64 lanes, 16-lane masks
            widths |= {dtypes.float32: (16, 8), dtypes.float64: (8, 4), dtypes.bool: (16, 8, 4)}
        vars(self)["vector_widths"] = widths  # (per instance: the class attribute is AVX2's)

    @property
    def target_key(self) -> str:
        """The renderer and the features its code uses (code differs with them)."""
        used = sorted(self.features & USED_FEATURES)
        return f"{super().target_key}:{'+'.join(used)}"

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        """The listing of the machine code of a linear program (see ``listing``)."""
        sig = kernel_signature(uops, name)
        sel = select(uops, sig, wide="avx512f" in self.features)
        nargs = len(sig.buffers) + len(sig.variables) + (sig.core is not None)
        listing = self.listing or DEBUG.value >= 4
        return assemble(sig.name, sel, nargs, listing).listing


class X86Compiler(Compiler):
    """The x86 renderer's listing -> an ELF relocatable object (the bytes are already
    there: this only reads them back and wraps them)."""

    def __init__(self) -> None:
        super().__init__(cache_key="x86-listing-v1")

    def compile(self, src: str) -> bytes:
        try:
            name, code = code_of(src)
        except ListingError as exc:
            raise CompileError("<x86 kernel>", str(exc), src) from None
        return elf_object(name, code)

    def compile_cached(self, src: str) -> bytes:
        """No disk cache: reading the listing is faster than a cache lookup."""
        return self.compile(src)
