"""Emulate the float dtypes a target lacks (float16, bfloat16) in float32.

Global buffers of such a dtype are passed as unsigned integers of the same width (the runtime
still sees the real dtype in ``ProgramSpec.buffers``); a load converts the bits to float32
exactly, every operation runs in float32, a store (and an explicit CAST to the narrow type)
rounds to the narrow format with round-to-nearest-even, overflow to infinity, subnormals and
NaN as IEEE. Register and local buffers of these dtypes simply hold float32.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import DType, Ops, PtrDType, UOp, dtypes

_STORAGE = {dtypes.float16: dtypes.uint16, dtypes.bfloat16: dtypes.uint16}
F32, U32 = dtypes.float32, dtypes.uint32


def _u32(v: int) -> UOp:
    return UOp.const(U32, v)


def _where(c: UOp, a: UOp, b: UOp) -> UOp:
    return UOp(Ops.WHERE, a.dtype, (c, a, b))


def _lt(a: UOp, b: UOp) -> UOp:
    return UOp(Ops.CMPLT, dtypes.bool, (a, b))


# -- bits <-> float32 ---------------------------------------------------------------------------


def bf16_to_f32(bits: UOp) -> UOp:
    """bfloat16 bits (uint16) -> float32, exact."""
    return (bits.cast(U32) << 16).bitcast(F32)


def f32_to_bf16(f: UOp) -> UOp:
    """float32 -> bfloat16 bits, round to nearest even; NaN -> quiet NaN with its sign."""
    b = f.bitcast(U32)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    nan = ((b >> 16) & 0x8000) | 0x7FC0
    return _where(UOp(Ops.CMPNE, dtypes.bool, (f, f)), nan, rounded).cast(dtypes.uint16)


def f16_to_f32(bits: UOp) -> UOp:
    """float16 bits (uint16) -> float32, exact (subnormals, inf, NaN)."""
    h = bits.cast(U32)
    sign, exp, man = (h & 0x8000) << 16, (h >> 10) & 0x1F, h & 0x3FF
    normal = sign | ((exp + 112) << 23) | (man << 13)
    special = sign | 0x7F800000 | (man << 13)
    tiny = (man.cast(F32) * 2.0**-24).bitcast(U32) | sign
    out = _where(UOp(Ops.CMPNE, dtypes.bool, (exp, _u32(31))), normal, special)
    return _where(UOp(Ops.CMPNE, dtypes.bool, (exp, _u32(0))), out, tiny).bitcast(F32)


def f32_to_f16(f: UOp) -> UOp:
    """float32 -> float16 bits, round to nearest even (subnormals, overflow to inf, NaN)."""
    b = f.bitcast(U32)
    sign, a = (b >> 16) & 0x8000, b & 0x7FFFFFFF
    normal = ((a + 0xFFF + ((a >> 13) & 1)) - 0x38000000) >> 13
    half = UOp.const(F32, 0.5)
    sub = (a.bitcast(F32) + half).bitcast(U32) - half.bitcast(U32)
    out = _where(_lt(a, _u32(0x38800000)), sub, normal)
    out = _where(_lt(a, _u32(0x477FF000)), out, _u32(0x7C00))
    out = _where(_lt(_u32(0x7F800000), a), _u32(0x7E00), out)
    return (out | sign).cast(dtypes.uint16)


_DECODE = {dtypes.float16: f16_to_f32, dtypes.bfloat16: bf16_to_f32}
_ENCODE = {dtypes.float16: f32_to_f16, dtypes.bfloat16: f32_to_bf16}


def round_to(dt: DType, f: UOp) -> UOp:
    """float32 ``f`` rounded to ``dt``'s values (still a float32)."""
    return _DECODE[dt](_ENCODE[dt](f))


# -- the stage -----------------------------------------------------------------------------------


class _Emulator:
    def __init__(self, ctx: LowerContext) -> None:
        self.lacking = {dt for dt in _STORAGE if dt not in ctx.renderer.supported_dtypes}

    def narrow(self, dt: DType) -> bool:
        return dt.scalar() in self.lacking

    def pointee(self, ptr: UOp) -> DType | None:
        """The emulated dtype a (global) pointer source points to, if any."""
        while ptr.op is Ops.AFTER:
            ptr = ptr.src[0]
        if ptr.op is Ops.PARAM and isinstance(ptr.dtype, PtrDType) and self.narrow(ptr.dtype.base):
            return ptr.dtype.base
        return None

    def rebuild(self, u: UOp, srcs: list[UOp]) -> UOp:
        if u.op in (Ops.PARAM, Ops.DEFINE_REG, Ops.DEFINE_LOCAL) and isinstance(u.dtype, PtrDType):
            return self._buffer(u)
        if u.op is Ops.LOAD and (dt := self.pointee(u.src[0].src[0])) is not None:
            alt = [UOp.const(_STORAGE[dt], 0)] if len(srcs) > 1 else []  # a masked load reads 0
            return _DECODE[dt](u.replace(dtype=_STORAGE[dt], src=(srcs[0], *alt)))
        if u.op is Ops.STORE and (dt := self.pointee(u.src[0].src[0])) is not None:
            return u.replace(src=(srcs[0], _ENCODE[dt](srcs[1])))
        if u.op in (Ops.INDEX, Ops.AFTER):
            return u.replace(dtype=srcs[0].dtype, src=tuple(srcs))
        if u.op is Ops.CAST and self.narrow(u.dtype):
            return round_to(u.dtype.scalar(), srcs[0].cast(F32))
        if u.op is Ops.CONST and self.narrow(u.dtype):
            return UOp.const(F32, u.arg)
        if self.narrow(u.dtype) and not isinstance(u.dtype, PtrDType):
            return u.replace(dtype=F32.vec(u.dtype.count), src=tuple(srcs))
        return u if tuple(srcs) == u.src else u.replace(src=tuple(srcs))

    def _buffer(self, u: UOp) -> UOp:
        dt = u.dtype
        assert isinstance(dt, PtrDType)
        if not self.narrow(dt.base):
            return u
        store = _STORAGE[dt.base] if u.op is Ops.PARAM else F32
        return u.replace(dtype=store.ptr(dt.size, dt.addrspace))


def emulate_dtypes(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: float16/bfloat16 the target lacks computed in float32."""
    em = _Emulator(ctx)
    if not em.lacking:
        return sink
    new: dict[UOp, UOp] = {}
    for u in toposort(sink):
        new[u] = em.rebuild(u, [new[s] for s in u.src])
    return new[sink]
