"""Emulate the float dtypes a target lacks (float16, bfloat16, fp8e4m3, fp8e5m2) in float32.

Global buffers of such a dtype are passed as unsigned integers of the same width (the runtime
still sees the real dtype in ``ProgramSpec.buffers``); a load converts the bits to float32
exactly, every operation runs in float32 and its result is rounded to the narrow type's
values (what ``exec_alu`` does: an ALU op of a dtype rounds with ``truncate(dtype)``), and a
store encodes the (already rounded) value. Register and local buffers of these dtypes simply
hold float32 values of the narrow type.

Rounding is round-to-nearest-even as ``fusegrad.uop.truncate`` defines it:

* float16: subnormals, overflow to infinity, NaN kept;
* bfloat16: through float32 (a float64 rounds to float32 first, as hardware converts);
* fp8e4m3 (the "FN" variant: no infinities, only S.1111.111 is NaN, max 448) and fp8e5m2
  (IEEE-style inf/NaN, max 57344): subnormals, *saturating* — a finite overflow and +-inf
  give +-max — and NaN encodes as the canonical positive code (0x7F / 0x7E);
* fp8e4m3fnuz / fp8e5m2fnuz (AMD's: bias 8 / 16, every code finite except 0x80, which is
  NaN; no -0, so a value rounding to zero encodes as 0x00): saturating to +-max (240 / 57344)
  like the other fp8s, NaN encodes as 0x80.

``EMULATED_DTYPES`` (a comma-separated list of dtype names, e.g. ``bfloat16,half``) sends
those dtypes through this stage even where the target has them natively.

A float64 value is converted to float16/fp8 with a single rounding: it is first narrowed to
float32 rounding to odd (exact for the final rounding, which keeps far fewer bits), then
rounded once. Integers of 64 bits convert through float64, as ``truncate`` does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fusegrad.codegen.flags import EMULATED_DTYPES
from fusegrad.codegen.lower.build import lt, ne, where
from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import DType, GroupOp, Ops, PtrDType, UOp, bitcast, dtypes

F32, F64, U32 = dtypes.float32, dtypes.float64, dtypes.uint32
_STORAGE = {
    dtypes.float16: dtypes.uint16,
    dtypes.bfloat16: dtypes.uint16,
    dtypes.fp8e4m3: dtypes.uint8,
    dtypes.fp8e5m2: dtypes.uint8,
    dtypes.fp8e4m3fnuz: dtypes.uint8,
    dtypes.fp8e5m2fnuz: dtypes.uint8,
}
# ALU ops whose result is one of their operands' values (no rounding needed); TRUNC of a
# narrow float is an integer small enough to be one of the type's values
_CLOSED = frozenset({Ops.NEG, Ops.MAX, Ops.WHERE, Ops.TRUNC})


def _u32(v: int) -> UOp:
    return UOp.const(v, U32)


# -- bits <-> float32 ---------------------------------------------------------------------------


def bf16_to_f32(bits: UOp) -> UOp:
    """bfloat16 bits (uint16) -> float32, exact."""
    return (bits.cast(U32) << 16).bitcast(F32)


def f32_to_bf16(f: UOp) -> UOp:
    """float32 -> bfloat16 bits, round to nearest even; NaN -> quiet NaN with its sign."""
    b = f.bitcast(U32)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    nan = ((b >> 16) & 0x8000) | 0x7FC0
    return where(ne(f, f), nan, rounded).cast(dtypes.uint16)


def f16_to_f32(bits: UOp) -> UOp:
    """float16 bits (uint16) -> float32, exact (subnormals, inf, NaN)."""
    h = bits.cast(U32)
    sign, exp, man = (h & 0x8000) << 16, (h >> 10) & 0x1F, h & 0x3FF
    normal = sign | ((exp + 112) << 23) | (man << 13)
    special = sign | 0x7F800000 | (man << 13)
    tiny = (man.cast(F32) * 2.0**-24).bitcast(U32) | sign
    out = where(ne(exp, _u32(31)), normal, special)
    return where(ne(exp, _u32(0)), out, tiny).bitcast(F32)


def f32_to_f16(f: UOp) -> UOp:
    """float32 -> float16 bits, round to nearest even (subnormals, overflow to inf, NaN)."""
    b = f.bitcast(U32)
    sign, a = (b >> 16) & 0x8000, b & 0x7FFFFFFF
    normal = ((a + 0xFFF + ((a >> 13) & 1)) - 0x38000000) >> 13
    half = UOp.const(0.5, F32)
    sub = (a.bitcast(F32) + half).bitcast(U32) - half.bitcast(U32)
    out = where(lt(a, _u32(0x38800000)), sub, normal)
    out = where(lt(a, _u32(0x477FF000)), out, _u32(0x7C00))
    out = where(lt(_u32(0x7F800000), a), _u32(0x7E00), out)
    return (out | sign).cast(dtypes.uint16)


@dataclass(frozen=True, slots=True)
class Fp8Format:
    """An 8-bit float's layout and special codes (``truncate``'s saturating conversion)."""

    mbits: int
    bias: int
    max_code: int  # the largest finite magnitude's code (saturation)
    nan_code: int  # what NaN encodes to (no sign)
    ieee: bool  # e5m2: the top exponent is inf/NaN; e4m3fn: only 0x7F/0xFF is NaN
    fnuz: bool = False  # AMD's variants: every code finite but 0x80 (NaN), no -0

    @property
    def quantum(self) -> float:
        """The smallest subnormal (the spacing of subnormals)."""
        return 2.0 ** (1 - self.bias - self.mbits)

    def decode(self, bits: UOp) -> UOp:
        """fp8 bits (uint8) -> float32, exact; NaN is the canonical float32 NaN 0x7FC00000."""
        h = bits.cast(U32)
        sign, mag = (h & 0x80) << 24, h & 0x7F
        normal = sign | ((mag << (23 - self.mbits)) + ((127 - self.bias) << 23))
        tiny = ((h & ((1 << self.mbits) - 1)).cast(F32) * self.quantum).bitcast(U32) | sign
        out = where(lt(mag, _u32(1 << self.mbits)), tiny, normal)
        nan = _u32(0x7FC00000)
        if self.fnuz:
            return where(ne(h, _u32(0x80)), out, nan).bitcast(F32)
        if not self.ieee:
            return where(ne(mag, _u32(0x7F)), out, nan).bitcast(F32)
        inf = where(ne(mag, _u32(0x7C)), nan, sign | 0x7F800000)
        return where(lt(mag, _u32(0x7C)), out, inf).bitcast(F32)

    def encode(self, f: UOp) -> UOp:
        """float32 -> fp8 bits, round to nearest even, saturating, NaN canonical."""
        b = f.bitcast(U32)
        sign, a = (b >> 24) & 0x80, b & 0x7FFFFFFF
        shift = 23 - self.mbits
        rounded = a + ((1 << (shift - 1)) - 1) + ((a >> shift) & 1)
        normal = (rounded - ((127 - self.bias) << 23)) >> shift
        # below the smallest normal: adding 2**k whose float32 ulp is the fp8 quantum rounds
        magic = UOp.const(self.quantum * 2.0**23, F32)
        sub = (a.bitcast(F32) + magic).bitcast(U32) - magic.bitcast(U32)
        out = where(lt(a, _u32((128 - self.bias) << 23)), sub, normal)
        out = where(lt(_u32(self.max_code), out), _u32(self.max_code), out)
        # fnuz has no -0: a magnitude rounded to zero keeps no sign
        out = out | (where(ne(out, _u32(0)), sign, _u32(0)) if self.fnuz else sign)
        out = where(lt(_u32(0x7F800000), a), _u32(self.nan_code), out)
        return out.cast(dtypes.uint8)


FP8E4M3 = Fp8Format(mbits=3, bias=7, max_code=0x7E, nan_code=0x7F, ieee=False)
FP8E5M2 = Fp8Format(mbits=2, bias=15, max_code=0x7B, nan_code=0x7E, ieee=True)
FP8E4M3FNUZ = Fp8Format(mbits=3, bias=8, max_code=0x7F, nan_code=0x80, ieee=False, fnuz=True)
FP8E5M2FNUZ = Fp8Format(mbits=2, bias=16, max_code=0x7F, nan_code=0x80, ieee=False, fnuz=True)

_DECODE = {
    dtypes.float16: f16_to_f32,
    dtypes.bfloat16: bf16_to_f32,
    dtypes.fp8e4m3: FP8E4M3.decode,
    dtypes.fp8e5m2: FP8E5M2.decode,
    dtypes.fp8e4m3fnuz: FP8E4M3FNUZ.decode,
    dtypes.fp8e5m2fnuz: FP8E5M2FNUZ.decode,
}
_ENCODE = {
    dtypes.float16: f32_to_f16,
    dtypes.bfloat16: f32_to_bf16,
    dtypes.fp8e4m3: FP8E4M3.encode,
    dtypes.fp8e5m2: FP8E5M2.encode,
    dtypes.fp8e4m3fnuz: FP8E4M3FNUZ.encode,
    dtypes.fp8e5m2fnuz: FP8E5M2FNUZ.encode,
}


def f64_to_f32_odd(x: UOp) -> UOp:
    """float64 -> float32 rounding to odd: truncated toward zero, the last bit set when
    inexact. Rounding that once more to a format of at most 22 significant bits gives the
    correctly rounded result (no double-rounding error). NaN and inf stay."""
    t = x.cast(F32)
    back = t.cast(F64)
    too_far = where(lt(x, UOp.const(0.0, F64)), lt(back, x), lt(x, back))
    bits = t.bitcast(U32)
    bits = where(too_far, bits - 1, bits)
    return where(ne(back, x), bits | 1, bits).bitcast(F32)


def to_f32(dt: DType, x: UOp) -> UOp:
    """``x`` (any scalar dtype) as a float32 from which rounding to ``dt`` gives what
    ``truncate(dt)`` gives for ``x``'s value."""
    src = x.dtype.scalar()
    if src in (dtypes.int64, dtypes.uint64):
        x, src = x.cast(F64), F64
    if src is F64 and dt is not dtypes.bfloat16:
        return f64_to_f32_odd(x)
    return x if src is F32 else x.cast(F32)


def round_to(dt: DType, f: UOp) -> UOp:
    """float32 ``f`` rounded to ``dt``'s values (still a float32)."""
    return _DECODE[dt](_ENCODE[dt](f))


def encode_const(dt: DType, value: float) -> UOp:
    """The storage bits of a constant of narrow dtype ``dt``."""
    return UOp.const(bitcast(value, dt, _STORAGE[dt]), _STORAGE[dt])


def emulated_dtypes() -> frozenset[DType]:
    """The dtypes ``EMULATED_DTYPES`` names (ValueError naming a bad one)."""
    return _parse_emulated(str(EMULATED_DTYPES.value or ""))


@functools.cache
def _parse_emulated(value: str) -> frozenset[DType]:
    out = set()
    for name in (n.strip() for n in value.split(",") if n.strip()):
        dt = dtypes.fields().get(name)
        if dt is None or dt not in _STORAGE:
            raise ValueError(
                f"EMULATED_DTYPES: {name!r} is not an emulable dtype; "
                f"expected some of {sorted(d.name for d in _STORAGE)} (or half)"
            )
        out.add(dt)
    return frozenset(out)


# -- the stage -----------------------------------------------------------------------------------


class _Emulator:
    def __init__(self, ctx: LowerContext) -> None:
        forced = emulated_dtypes()
        self.lacking = {
            dt for dt in _STORAGE if dt not in ctx.renderer.supported_dtypes or dt in forced
        }
        self.bits: dict[tuple[DType, UOp], UOp] = {}  # (dtype, rounded float32) -> its bits

    def narrow(self, dt: DType) -> bool:
        return dt.scalar() in self.lacking

    def pointee(self, ptr: UOp) -> DType | None:
        """The emulated dtype a (global) pointer source points to, if any."""
        while ptr.op is Ops.AFTER:
            ptr = ptr.src[0]
        if ptr.op is Ops.PARAM and isinstance(ptr.dtype, PtrDType) and self.narrow(ptr.dtype.base):
            return ptr.dtype.base
        return None

    def rounded(self, dt: DType, f: UOp) -> UOp:
        """float32 ``f`` rounded to narrow ``dt``; the bits are kept for a store of it."""
        bits = _ENCODE[dt](f)
        out = _DECODE[dt](bits)
        self.bits[(dt, out)] = bits
        return out

    def encoded(self, dt: DType, f: UOp) -> UOp:
        """The bits of a float32 holding a value of narrow ``dt``."""
        if (bits := self.bits.get((dt, f))) is not None:
            return bits
        if f.op is Ops.CONST:
            return encode_const(dt, f.arg)
        return _ENCODE[dt](f)

    def rebuild(self, u: UOp, srcs: list[UOp]) -> UOp:
        if u.op in (Ops.PARAM, Ops.DEFINE_REG, Ops.DEFINE_LOCAL) and isinstance(u.dtype, PtrDType):
            return self._buffer(u)
        if u.op in (Ops.LOAD, Ops.STORE) and (dt := self.pointee(u.src[0].src[0])) is not None:
            return self._memory(u, dt, srcs)
        if u.op in (Ops.INDEX, Ops.AFTER):
            return u.replace(dtype=srcs[0].dtype, src=tuple(srcs))
        if u.op is Ops.BITCAST and (self.narrow(u.dtype) or self.narrow(u.src[0].dtype)):
            return self._bitcast(u, srcs[0])
        if self.narrow(u.dtype) and not isinstance(u.dtype, PtrDType):
            return self._value(u, srcs)
        if u.op is Ops.CAST and srcs[0].dtype is u.dtype:  # a narrow value to float32
            return srcs[0]
        return u if tuple(srcs) == u.src else u.replace(src=tuple(srcs))

    def _value(self, u: UOp, srcs: list[UOp]) -> UOp:
        """A value of a narrow dtype, as float32 holding one of the dtype's values."""
        dt = u.dtype.scalar()
        if u.op is Ops.CAST:
            src = srcs[0] if self.narrow(u.src[0].dtype) else to_f32(dt, srcs[0])
            return self.rounded(dt, src)
        if u.op is Ops.CONST:
            return UOp.const(u.arg, F32)
        out = u.replace(dtype=F32.vec(u.dtype.count), src=tuple(srcs))
        if u.op in GroupOp.ALU and u.op not in _CLOSED and u.dtype.count == 1:
            return self.rounded(dt, out)
        return out

    def _memory(self, u: UOp, dt: DType, srcs: list[UOp]) -> UOp:
        """A load or store of a global buffer of narrow ``dt`` (held as its bits)."""
        if u.op is Ops.STORE:
            return u.replace(src=(srcs[0], self.encoded(dt, srcs[1])))
        alt = [self.encoded(dt, srcs[1])] if len(srcs) > 1 else []  # a masked load's value
        return _DECODE[dt](u.replace(dtype=_STORAGE[dt], src=(srcs[0], *alt)))

    def _bitcast(self, u: UOp, x: UOp) -> UOp:
        """A BITCAST to or from a narrow dtype: through the storage bits."""
        src, dst = u.src[0].dtype.scalar(), u.dtype.scalar()
        if self.narrow(src):
            bits = self.encoded(src, x)
        else:
            bits = x.cast(_STORAGE[dst]) if dtypes.is_int(src) else x.bitcast(_STORAGE[dst])
        if self.narrow(dst):
            return _DECODE[dst](bits.cast(_STORAGE[dst]))
        return bits.cast(dst) if dtypes.is_int(dst) else bits.bitcast(dst)

    def _buffer(self, u: UOp) -> UOp:
        dt = u.dtype
        assert isinstance(dt, PtrDType)
        if not self.narrow(dt.base):
            return u
        store = _STORAGE[dt.base] if u.op is Ops.PARAM else F32
        return u.replace(dtype=store.ptr(dt.size, dt.addrspace))


def emulate_dtypes(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: float16/bfloat16/fp8 the target lacks computed in float32."""
    em = _Emulator(ctx)
    if not em.lacking:
        return sink
    new: dict[UOp, UOp] = {}
    for u in toposort(sink):
        new[u] = em.rebuild(u, [new[s] for s in u.src])
    return new[sink]
