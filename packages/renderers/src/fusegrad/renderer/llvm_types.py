"""How fusegrad dtypes live in LLVM IR, and the IR for what LLVM has no instruction for.

Registers: bool is ``i1``, integers ``iN`` (signedness is in the instructions), float32 and
float64 are ``float``/``double``. float16 and bfloat16 are *computed as float32*: a register
holds a float32 that is exactly representable in the narrow type, every arithmetic result is
rounded back to it (round-to-nearest-even, ``round_narrow``), and memory holds the 16-bit
pattern (``i16``). For + - * / and sqrt this gives the correctly rounded narrow result,
because float32 has more than twice the narrow types' precision plus two bits.

The conversions are written with integer instructions rather than LLVM's ``half``/``bfloat``
types, so they need no runtime library (``__truncdfhf2``, ``__truncsfbf2``...) and give the
same bits on every machine. Every sequence here is polymorphic in the lane count: ``n > 1``
uses vector types and ``splat`` constants.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from fusegrad.uop import AddrSpace, DType, PtrDType, dtypes

NARROW_FLOATS = (dtypes.float16, dtypes.bfloat16)


def vec(scalar: str, n: int) -> str:
    """The LLVM type of ``n`` lanes of ``scalar`` (the scalar itself for one lane)."""
    return scalar if n == 1 else f"<{n} x {scalar}>"


def float_literal(v: float) -> str:
    """An exact LLVM float literal (the hex form of the double, valid for float when the
    value is representable, which every fusegrad constant of a float type is)."""
    bits = struct.unpack("<Q", struct.pack("<d", float(v)))[0]
    return f"0x{bits:016X}"


def scalar_literal(scalar: str, v: object) -> str:
    """A literal of LLVM scalar type ``scalar`` (integers in two's complement)."""
    if scalar == "i1":
        return "true" if v else "false"
    if scalar in ("float", "double"):
        return float_literal(float(v))  # type: ignore[arg-type]
    bits = int(scalar[1:])
    value = int(v) & ((1 << bits) - 1)  # type: ignore[call-overload]
    return str(value - (1 << bits) if value >> (bits - 1) else value)


def splat(scalar: str, v: object, n: int) -> str:
    """A constant operand: ``v`` in every one of ``n`` lanes."""
    lit = scalar_literal(scalar, v)
    return lit if n == 1 else f"splat ({scalar} {lit})"


@dataclass(frozen=True, slots=True)
class LLType:
    """A dtype as it lives in registers: LLVM scalar type, kind (``b`` bool, ``s`` signed,
    ``u`` unsigned, ``f`` float), lane count, and the fast-math flags float ops carry."""

    scalar: str
    kind: str
    count: int = 1
    fmf: str = ""

    @property
    def ty(self) -> str:
        """The full LLVM type."""
        return vec(self.scalar, self.count)

    @property
    def bits(self) -> int:
        """Bits per lane."""
        return {"float": 32, "double": 64}.get(self.scalar) or int(self.scalar[1:])

    @property
    def sfx(self) -> str:
        """The intrinsic name suffix (``f32``, ``v8i32``...)."""
        base = f"f{self.bits}" if self.kind == "f" else self.scalar
        return base if self.count == 1 else f"v{self.count}{base}"

    @property
    def cond(self) -> str:
        """The matching bool (mask) type."""
        return vec("i1", self.count)

    def const(self, v: object) -> str:
        """A constant of this type."""
        return splat(self.scalar, v, self.count)

    def with_scalar(self, scalar: str, kind: str) -> LLType:
        """The same lane count with another scalar type."""
        return LLType(scalar, kind, self.count, self.fmf)


def ll_type(dt: DType, fmf: str = "") -> LLType:
    """The register type of ``dt``."""
    s = dt.scalar()
    if s is dtypes.bool:
        return LLType("i1", "b", dt.count)
    if s in dtypes.ints and s is not dtypes.weakint:
        return LLType(f"i{s.bitsize}", "u" if s in dtypes.uints else "s", dt.count)
    if s in (*NARROW_FLOATS, dtypes.float32):
        return LLType("float", "f", dt.count, fmf)
    if s is dtypes.float64:
        return LLType("double", "f", dt.count, fmf)
    raise NotImplementedError(f"LLVM renderer: no register type for {dt!r}")


def memory_scalar(dt: DType) -> str:
    """How one element of ``dt`` is stored in a global buffer."""
    s = dt.scalar()
    if s is dtypes.bool:
        return "i8"
    if s in NARROW_FLOATS:
        return "i16"
    return ll_type(s).scalar


def element_scalar(ptr: PtrDType) -> str:
    """The element type a pointer steps over: memory form for global buffers, register form
    for accumulators and locals (which never leave the kernel)."""
    if ptr.addrspace is AddrSpace.GLOBAL:
        return memory_scalar(ptr.base)
    return ll_type(ptr.base.scalar()).scalar


# -- float16 / bfloat16 conversions -------------------------------------------------------


def _splatter(scalar: str, n: int) -> Callable[[int], str]:
    def const(v: int) -> str:
        return splat(scalar, v, n)

    return const


def bf16_decode(o: str, bits: str, n: int) -> list[str]:
    """i16 bfloat16 bits -> float (exact: the bits are the top half of a float32)."""
    i16, i32 = vec("i16", n), vec("i32", n)
    return [
        f"{o}.w = zext {i16} {bits} to {i32}",
        f"{o}.s = shl {i32} {o}.w, {splat('i32', 16, n)}",
        f"{o} = bitcast {i32} {o}.s to {vec('float', n)}",
    ]


def bf16_encode(o: str, x: str, n: int) -> list[str]:
    """float -> i16 bfloat16 bits, round-to-nearest-even; NaN keeps its sign, becomes quiet."""
    i32, f = vec("i32", n), vec("float", n)
    return [
        f"{o}.b = bitcast {f} {x} to {i32}",
        f"{o}.h = lshr {i32} {o}.b, {splat('i32', 16, n)}",
        f"{o}.odd = and {i32} {o}.h, {splat('i32', 1, n)}",
        f"{o}.r = add {i32} {o}.b, {splat('i32', 0x7FFF, n)}",
        f"{o}.r2 = add {i32} {o}.r, {o}.odd",
        f"{o}.hi = lshr {i32} {o}.r2, {splat('i32', 16, n)}",
        f"{o}.sg = and {i32} {o}.h, {splat('i32', 0x8000, n)}",
        f"{o}.qn = or {i32} {o}.sg, {splat('i32', 0x7FC0, n)}",
        f"{o}.nan = fcmp uno {f} {x}, {x}",
        f"{o}.sel = select {vec('i1', n)} {o}.nan, {i32} {o}.qn, {i32} {o}.hi",
        f"{o} = trunc {i32} {o}.sel to {vec('i16', n)}",
    ]


def f16_decode(o: str, bits: str, n: int) -> list[str]:
    """i16 float16 bits -> float (exact), subnormals through an exact multiply by 2**-24."""
    i32, c, m = vec("i32", n), vec("i1", n), _splatter("i32", n)
    return [
        f"{o}.w = zext {vec('i16', n)} {bits} to {i32}",
        f"{o}.a = and {i32} {o}.w, {m(0x7FFF)}",
        f"{o}.sg = and {i32} {o}.w, {m(0x8000)}",
        f"{o}.sg2 = shl {i32} {o}.sg, {m(16)}",
        f"{o}.sh = shl {i32} {o}.a, {m(13)}",
        f"{o}.nrm = add {i32} {o}.sh, {m(0x38000000)}",
        f"{o}.inf = or {i32} {o}.sh, {m(0x7F800000)}",
        f"{o}.ex = lshr {i32} {o}.a, {m(10)}",
        f"{o}.sf = uitofp {i32} {o}.a to {vec('float', n)}",
        f"{o}.sm = fmul {vec('float', n)} {o}.sf, {splat('float', 2.0**-24, n)}",
        f"{o}.sb = bitcast {vec('float', n)} {o}.sm to {i32}",
        f"{o}.isz = icmp eq {i32} {o}.ex, {m(0)}",
        f"{o}.isi = icmp eq {i32} {o}.ex, {m(31)}",
        f"{o}.t = select {c} {o}.isi, {i32} {o}.inf, {i32} {o}.nrm",
        f"{o}.t2 = select {c} {o}.isz, {i32} {o}.sb, {i32} {o}.t",
        f"{o}.o = or {i32} {o}.t2, {o}.sg2",
        f"{o} = bitcast {i32} {o}.o to {vec('float', n)}",
    ]


_F16_OVERFLOW = struct.unpack("<Q", struct.pack("<d", 65520.0))[0]  # rounds to inf from here
_F16_MIN_NORMAL = 2.0**-14


def f16_encode(o: str, x: str, n: int) -> list[str]:
    """double -> i16 float16 bits, round-to-nearest-even (one rounding, from double).

    Normal results round the 52-bit mantissa to 10 bits in integers (a carry into the
    exponent is the correct result); subnormal ones scale by 2**24 and round with the
    2**52 trick, exact in double; 65520 and above become inf; NaN becomes 0x7E00."""
    i64, d, c, m = vec("i64", n), vec("double", n), vec("i1", n), _splatter("i64", n)
    return [
        f"{o}.b = bitcast {d} {x} to {i64}",
        f"{o}.a = and {i64} {o}.b, {m(0x7FFFFFFFFFFFFFFF)}",
        f"{o}.sg = lshr {i64} {o}.b, {m(48)}",
        f"{o}.sg2 = and {i64} {o}.sg, {m(0x8000)}",
        f"{o}.m = sub {i64} {o}.a, {m(1008 << 52)}",
        f"{o}.h0 = lshr {i64} {o}.m, {m(42)}",
        f"{o}.odd = and {i64} {o}.h0, {m(1)}",
        f"{o}.r = add {i64} {o}.m, {m((1 << 41) - 1)}",
        f"{o}.r2 = add {i64} {o}.r, {o}.odd",
        f"{o}.h = lshr {i64} {o}.r2, {m(42)}",
        f"{o}.abs = bitcast {i64} {o}.a to {d}",
        f"{o}.ism = fcmp olt {d} {o}.abs, {splat('double', _F16_MIN_NORMAL, n)}",
        f"{o}.sx = select {c} {o}.ism, {d} {o}.abs, {d} zeroinitializer",
        f"{o}.sp = fmul {d} {o}.sx, {splat('double', 2.0**24, n)}",
        f"{o}.sq = fadd {d} {o}.sp, {splat('double', 2.0**52, n)}",
        f"{o}.sr = fsub {d} {o}.sq, {splat('double', 2.0**52, n)}",
        f"{o}.si = fptoui {d} {o}.sr to {i64}",
        f"{o}.t = select {c} {o}.ism, {i64} {o}.si, {i64} {o}.h",
        f"{o}.ov = icmp uge {i64} {o}.a, {m(_F16_OVERFLOW)}",
        f"{o}.t2 = select {c} {o}.ov, {i64} {m(0x7C00)}, {i64} {o}.t",
        f"{o}.isn = icmp ugt {i64} {o}.a, {m(0x7FF0000000000000)}",
        f"{o}.t3 = select {c} {o}.isn, {i64} {m(0x7E00)}, {i64} {o}.t2",
        f"{o}.o = or {i64} {o}.t3, {o}.sg2",
        f"{o} = trunc {i64} {o}.o to {vec('i16', n)}",
    ]


_F16_OVERFLOW_F32 = struct.unpack("<I", struct.pack("<f", 65520.0))[0]


def f16_encode_float(o: str, x: str, n: int) -> list[str]:
    """float -> i16 float16 bits, round-to-nearest-even, in 32-bit lanes (the same steps as
    ``f16_encode``: 23-bit mantissa rounded to 10 bits; subnormals via 2**23 in float)."""
    i32, f, c, m = vec("i32", n), vec("float", n), vec("i1", n), _splatter("i32", n)
    return [
        f"{o}.b = bitcast {f} {x} to {i32}",
        f"{o}.a = and {i32} {o}.b, {m(0x7FFFFFFF)}",
        f"{o}.sg = lshr {i32} {o}.b, {m(16)}",
        f"{o}.sg2 = and {i32} {o}.sg, {m(0x8000)}",
        f"{o}.m = sub {i32} {o}.a, {m(112 << 23)}",
        f"{o}.h0 = lshr {i32} {o}.m, {m(13)}",
        f"{o}.odd = and {i32} {o}.h0, {m(1)}",
        f"{o}.r = add {i32} {o}.m, {m(0xFFF)}",
        f"{o}.r2 = add {i32} {o}.r, {o}.odd",
        f"{o}.h = lshr {i32} {o}.r2, {m(13)}",
        f"{o}.ism = icmp ult {i32} {o}.a, {m(0x38800000)}",
        f"{o}.abs = bitcast {i32} {o}.a to {f}",
        f"{o}.sx = select {c} {o}.ism, {f} {o}.abs, {f} zeroinitializer",
        f"{o}.sp = fmul {f} {o}.sx, {splat('float', 2.0**24, n)}",
        f"{o}.sq = fadd {f} {o}.sp, {splat('float', 2.0**23, n)}",
        f"{o}.sr = fsub {f} {o}.sq, {splat('float', 2.0**23, n)}",
        f"{o}.si = fptoui {f} {o}.sr to {i32}",
        f"{o}.t = select {c} {o}.ism, {i32} {o}.si, {i32} {o}.h",
        f"{o}.ov = icmp uge {i32} {o}.a, {m(_F16_OVERFLOW_F32)}",
        f"{o}.t2 = select {c} {o}.ov, {i32} {m(0x7C00)}, {i32} {o}.t",
        f"{o}.isn = icmp ugt {i32} {o}.a, {m(0x7F800000)}",
        f"{o}.t3 = select {c} {o}.isn, {i32} {m(0x7E00)}, {i32} {o}.t2",
        f"{o}.o = or {i32} {o}.t3, {o}.sg2",
        f"{o} = trunc {i32} {o}.o to {vec('i16', n)}",
    ]


def narrow_encode(o: str, x: str, src: str, dt: DType, n: int) -> list[str]:
    """A float/double register value -> the 16-bit pattern of ``dt`` (float16/bfloat16)."""
    if dt.scalar() is dtypes.bfloat16:
        if src == "double":
            narrowed = f"{o}.f = fptrunc {vec('double', n)} {x} to {vec('float', n)}"
            return [narrowed, *bf16_encode(o, f"{o}.f", n)]
        return bf16_encode(o, x, n)
    return f16_encode(o, x, n) if src == "double" else f16_encode_float(o, x, n)


def narrow_decode(o: str, bits: str, dt: DType, n: int) -> list[str]:
    """The 16-bit pattern of ``dt`` -> its float value."""
    if dt.scalar() is dtypes.bfloat16:
        return bf16_decode(o, bits, n)
    return f16_decode(o, bits, n)


def round_narrow(o: str, x: str, src: str, dt: DType, n: int) -> list[str]:
    """A float/double value rounded to ``dt``'s value set, as a float register."""
    return narrow_encode(f"{o}.rn", x, src, dt, n) + narrow_decode(o, f"{o}.rn", dt, n)
