"""The host CPU's features, read with the CPUID instruction — by machine code this package
encodes itself (``encode``), loaded like a kernel. x86 kernels need AVX, AVX2 and FMA;
AVX-512 is reported too (the renderer emits no zmm code yet)."""

from __future__ import annotations

import ctypes
import functools
import platform

from fusegrad.renderer.x86.encode import encode
from fusegrad.renderer.x86.isa import R8, RAX, RBX, RCX, RDI, RDX, RSI, Inst, Mem
from fusegrad.renderer.x86.objfile import elf_object

#: (leaf, register, bit) of each feature (Intel SDM vol. 2A, CPUID)
FEATURE_BITS: dict[str, tuple[int, int, int]] = {
    "fma": (1, 2, 12),
    "osxsave": (1, 2, 27),
    "avx": (1, 2, 28),
    "f16c": (1, 2, 29),
    "avx2": (7, 1, 5),
    "bmi2": (7, 1, 8),
    "avx512f": (7, 1, 16),
}


def _cpuid_function() -> bytes:
    """void cpuid(uint32 leaf, uint32 subleaf, uint32 out[4]): eax, ebx, ecx, edx."""
    body = [
        Inst("push", (RBX,)),
        Inst("mov", (R8, RDX)),
        Inst("mov", (RAX, RDI), width=4),
        Inst("mov", (RCX, RSI), width=4),
        Inst("cpuid"),
        *(
            Inst("store", (Mem(base=R8, disp=4 * k), r), width=4)
            for k, r in enumerate((RAX, RBX, RCX, RDX))
        ),
        Inst("pop", (RBX,)),
        Inst("ret"),
    ]
    return b"".join(encode(i)[0] for i in body)


@functools.cache
def cpu_features() -> dict[str, bool]:
    """Feature name -> present (empty when this is not an x86-64 machine)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    from fusegrad.renderer.elf import load_elf

    code = load_elf(elf_object("fusegrad_cpuid", _cpuid_function()), "fusegrad_cpuid")
    fn = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p)(code.address)
    regs: dict[int, tuple[int, ...]] = {}
    for leaf in (0, 1, 7):
        out = (ctypes.c_uint32 * 4)()
        fn(leaf, 0, ctypes.addressof(out))
        regs[leaf] = tuple(out)
    top = regs[0][0]
    found = {}
    for name, (leaf, reg, bit) in FEATURE_BITS.items():
        found[name] = leaf <= top and bool(regs[leaf][reg] >> bit & 1)
    code.free()
    return found
