"""What the host CPU can do: its SIMD register width and core count, for renderer
capabilities (``vector_widths``, ``max_threads``)."""

from __future__ import annotations

import functools
import platform

import llvmlite.binding as llvm
from fusegrad.codegen import host_cpu_count
from fusegrad.uop import DType, dtypes

#: the scalar dtypes CPU renderers have vector types for (fp8 is not rendered at all)
VECTOR_DTYPES: tuple[DType, ...] = (
    dtypes.bool,
    *(d for d in dtypes.ints if d is not dtypes.weakint),
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.float64,
)


@functools.cache
def host_features() -> dict[str, bool]:
    """The host CPU's feature flags as LLVM names them (``avx2``, ``avx512f``, ``neon``...)."""
    try:
        return {k: bool(v) for k, v in llvm.get_host_cpu_features().items()}
    except RuntimeError:  # LLVM can't tell on this platform
        return {}


@functools.cache
def simd_bytes() -> int:
    """Bytes in one SIMD register of the host: 64 with AVX-512, 32 with AVX, else 16."""
    feats = host_features()
    if feats.get("avx512f"):
        return 64
    if feats.get("avx"):
        return 32
    if platform.machine() in ("x86_64", "AMD64", "aarch64", "arm64") or feats:
        return 16
    return 8


def compute_itemsize(dt: DType) -> int:
    """Bytes one lane of ``dt`` takes in a register (float16/bfloat16 compute as float32)."""
    return 4 if dt in (dtypes.float16, dtypes.bfloat16) else dt.itemsize


def vector_widths_for(width_bytes: int) -> dict[DType, tuple[int, ...]]:
    """Vector element counts per dtype for SIMD registers of ``width_bytes``: every power of
    two from the full register down to 2, widest first."""
    out: dict[DType, tuple[int, ...]] = {}
    for dt in VECTOR_DTYPES:
        most = width_bytes // compute_itemsize(dt)
        out[dt] = tuple(n for n in (64, 32, 16, 8, 4, 2) if n <= most)
    return out


def host_vector_widths() -> dict[DType, tuple[int, ...]]:
    """``vector_widths_for`` the host's SIMD width."""
    return vector_widths_for(simd_bytes())


def host_cores() -> int:
    """Cores this process may run kernels on."""
    return host_cpu_count()
