"""The host CPU's features, read with the CPUID instruction — by machine code this package
encodes itself (``encode``), loaded like a kernel. x86 kernels need AVX, AVX2 and FMA; F16C
makes float16 native and AVX-512F selects zmm code. A vector extension counts only when the
OS saves its registers too (XCR0, read with XGETBV): ymm state for AVX and what builds on
it, opmask and zmm state for AVX-512."""

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


#: XCR0 bits the OS must set: SSE+AVX state (xmm, ymm upper halves); AVX-512 adds opmask,
#: zmm upper halves and zmm16-31
_XCR0_AVX = 0b110
_XCR0_AVX512 = 0b11100110
_NEEDS_AVX_STATE = ("avx", "avx2", "fma", "f16c")


def _xgetbv_function() -> bytes:
    """void xgetbv(uint32 out[2]): XCR0's low and high words."""
    body = [
        Inst("xor", (RCX, RCX), width=4),
        Inst("xgetbv"),
        Inst("store", (Mem(base=RDI), RAX), width=4),
        Inst("store", (Mem(base=RDI, disp=4), RDX), width=4),
        Inst("ret"),
    ]
    return b"".join(encode(i)[0] for i in body)


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
    xcr0 = _xcr0() if found["osxsave"] else 0
    for name in _NEEDS_AVX_STATE:
        found[name] &= xcr0 & _XCR0_AVX == _XCR0_AVX
    found["avx512f"] &= xcr0 & _XCR0_AVX512 == _XCR0_AVX512
    return found


def _xcr0() -> int:
    from fusegrad.renderer.elf import load_elf

    code = load_elf(elf_object("fusegrad_xgetbv", _xgetbv_function()), "fusegrad_xgetbv")
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(code.address)
    out = (ctypes.c_uint32 * 2)()
    fn(ctypes.addressof(out))
    code.free()
    return int(out[0]) | int(out[1]) << 32
