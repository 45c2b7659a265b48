"""Emulate int64/uint64 on targets without a 64-bit integer ALU (``Renderer.no_int64_alu``).

Every 64-bit integer value becomes a pair of uint32 words (low, high) and every operation on
it a handful of 32-bit ones, with ``exec_alu``'s semantics (two's-complement wrap-around):

* memory: a global, local or register buffer of int64/uint64 is a uint32 buffer of twice the
  size (little-endian: element ``i`` is words ``2i`` and ``2i+1``); a load or store is two;
* ADD/SUB/NEG with the carry, MUL (64x64 -> low 64: the low words' full 64-bit product from
  16-bit partial products, plus the two cross products' low words), AND/OR/XOR per word;
* SHL/SHR by a constant (folded) or by a variable amount (both words' shifts selected on
  ``amount >= 32``; amounts outside [0, 64) give ``exec_alu``'s 0 / sign fill), SHR is
  arithmetic for int64;
* CMPLT (signed/unsigned), CMPNE, CMPEQ, WHERE, MAX, MULACC;
* CDIV/CMOD (C truncation, by 0 gives 0): a power-of-two constant divisor is a shift, another
  constant a multiply-high by a magic number (about 150 32-bit ops in all); a variable divisor
  runs an unrolled 64-step shift-subtract division (about 1500 32-bit ops);
* CAST to/from bool, every narrower int, float32/float64 (a conversion to float goes
  through float64, as ``truncate`` converts; float -> int64 truncates toward zero and gives
  INT64_MIN for NaN/inf/out of range, as ``exec_alu`` does), BITCAST int64 <-> uint64;
* an INDEX by a 64-bit index uses its low word (a 32-bit target's addresses are 32-bit).

Anything else on a 64-bit integer (FLOORDIV/FLOORMOD/POW/THREEFRY a target lists natively,
so the decomposition kept them; a RANGE, SPECIAL or Variable of 64 bits; vectors; a BITCAST
to/from float64) raises ``NotImplementedError`` naming the op. Conversions between 64-bit
integers and floats use float64 ALU ops (a target without float64 can't convert them).

The stage runs after the op decomposition and emits only ADD, MUL, AND, OR, XOR, SHL, SHR,
CMPLT, CMPNE, WHERE, CAST and BITCAST, ops every target has.
"""

from __future__ import annotations

from collections.abc import Callable

from fusegrad.codegen.lower.build import lt, ne, where
from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import DType, Ops, PtrDType, UOp, dtypes

U32, I32, F64 = dtypes.uint32, dtypes.int32, dtypes.float64
WIDE = (dtypes.int64, dtypes.uint64)
M32 = 0xFFFFFFFF


class Pair:
    """A 64-bit integer as two uint32 words; ``signed`` for int64."""

    __slots__ = ("hi", "lo", "signed")

    def __init__(self, lo: UOp, hi: UOp, signed: bool) -> None:
        self.lo, self.hi, self.signed = lo, hi, signed

    @staticmethod
    def const(value: int, signed: bool) -> Pair:
        """The words of integer ``value`` (wrapped to 64 bits)."""
        v = value & ((1 << 64) - 1)
        return Pair(_u32(v & M32), _u32(v >> 32), signed)

    def words(self) -> tuple[UOp, UOp]:
        return self.lo, self.hi


def _u32(v: int) -> UOp:
    return UOp.const(v & M32, U32)


def _not(c: UOp) -> UOp:
    return UOp(Ops.XOR, dtypes.bool, (c, UOp.const(True, dtypes.bool)))


def _sel(c: UOp, a: Pair, b: Pair) -> Pair:
    return Pair(where(c, a.lo, b.lo), where(c, a.hi, b.hi), a.signed)


def _carry(c: UOp) -> UOp:
    return c.cast(U32)


# -- arithmetic ----------------------------------------------------------------------------------


def add(a: Pair, b: Pair) -> Pair:
    """a + b (mod 2**64)."""
    lo = a.lo + b.lo
    return Pair(lo, a.hi + b.hi + _carry(lt(lo, a.lo)), a.signed)


def invert(a: Pair) -> Pair:
    """~a."""
    return Pair(a.lo ^ M32, a.hi ^ M32, a.signed)


def neg(a: Pair) -> Pair:
    """-a (mod 2**64)."""
    lo = (a.lo ^ M32) + 1
    return Pair(lo, (a.hi ^ M32) + _carry(lt(lo, _u32(1))), a.signed)


def mul_wide(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """The full 64-bit product of two uint32 words, as (low, high) words, from 16-bit
    partial products (each fits 32 bits)."""
    a0, a1, b0, b1 = a & 0xFFFF, a >> 16, b & 0xFFFF, b >> 16
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> 16) + (p01 & 0xFFFF) + (p10 & 0xFFFF)
    lo = (mid << 16) | (p00 & 0xFFFF)
    return lo, p11 + (p01 >> 16) + (p10 >> 16) + (mid >> 16)


def mul(a: Pair, b: Pair) -> Pair:
    """a * b (mod 2**64)."""
    lo, hi = mul_wide(a.lo, b.lo)
    return Pair(lo, hi + a.lo * b.hi + a.hi * b.lo, a.signed)


def is_negative(a: Pair) -> UOp:
    """The sign bit of a signed pair (False for unsigned)."""
    if not a.signed:
        return UOp.const(False, dtypes.bool)
    return lt(a.hi.bitcast(I32), UOp.const(0, I32))


def less(a: Pair, b: Pair) -> UOp:
    """a < b, signed or unsigned by the pair's dtype."""
    hi_a, hi_b = (a.hi.bitcast(I32), b.hi.bitcast(I32)) if a.signed else (a.hi, b.hi)
    return where(ne(a.hi, b.hi), lt(hi_a, hi_b), lt(a.lo, b.lo))


def not_equal(a: Pair, b: Pair) -> UOp:
    """a != b."""
    return UOp(Ops.OR, dtypes.bool, (ne(a.lo, b.lo), ne(a.hi, b.hi)))


def is_zero(a: Pair) -> UOp:
    return _not(ne(a.lo | a.hi, _u32(0)))


# -- shifts --------------------------------------------------------------------------------------


def _fill(a: Pair, right: bool) -> UOp:
    """The word shifted in from the top: the sign for an arithmetic right shift, else 0."""
    if right and a.signed:
        return (a.hi.bitcast(I32) >> 31).bitcast(U32)
    return _u32(0)


def _shr_word(a: Pair, t: UOp | int) -> UOp:
    """The high word shifted right by ``t`` < 32 (arithmetic for int64)."""
    if a.signed:
        return (a.hi.bitcast(I32) >> t).bitcast(U32)
    return a.hi >> t


def shift_const(a: Pair, s: int, right: bool) -> Pair:
    """a << s or a >> s for a constant s."""
    fill = _fill(a, right)
    if not 0 <= s < 64:
        return Pair(fill, fill, a.signed)
    if s == 0:
        return a
    if s >= 32:
        moved = _shr_word(a, s - 32) if right else a.lo << (s - 32)
        return Pair(moved, fill, a.signed) if right else Pair(_u32(0), moved, a.signed)
    if right:
        return Pair((a.lo >> s) | (a.hi << (32 - s)), _shr_word(a, s), a.signed)
    return Pair(a.lo << s, (a.hi << s) | (a.lo >> (32 - s)), a.signed)


def shift(a: Pair, s: Pair, right: bool) -> Pair:
    """a << s or a >> s for a variable s (a pair): both words' shifts computed with the
    amount mod 32, selected on ``s >= 32``; ``s`` outside [0, 64) gives 0 / the sign fill."""
    t = s.lo & 31
    big = ne(s.lo & 32, _u32(0))
    fill = _fill(a, right)
    if right:
        small = Pair((a.lo >> t) | ((a.hi << 1) << (t ^ 31)), _shr_word(a, t), a.signed)
        large = Pair(_shr_word(a, t), fill, a.signed)
    else:
        small = Pair(a.lo << t, (a.hi << t) | ((a.lo >> 1) >> (t ^ 31)), a.signed)
        large = Pair(_u32(0), a.lo << t, a.signed)
    out = _sel(big, large, small)
    outside = UOp(Ops.OR, dtypes.bool, (ne(s.hi, _u32(0)), lt(_u32(63), s.lo)))
    return _sel(outside, Pair(fill, fill, a.signed), out)


# -- division ------------------------------------------------------------------------------------


def udivmod(a: Pair, b: Pair) -> tuple[Pair, Pair]:
    """Unsigned quotient and remainder, an unrolled 64-step shift-subtract division (b != 0
    is the caller's business)."""
    ua, ub = Pair(a.lo, a.hi, False), Pair(b.lo, b.hi, False)
    q, r = Pair.const(0, False), Pair.const(0, False)
    nb = neg(ub)
    for i in range(63, -1, -1):
        word = ua.hi if i >= 32 else ua.lo
        bit = (word >> (i % 32)) & 1
        r = Pair((r.lo << 1) | bit, (r.hi << 1) | (r.lo >> 31), False)
        fits = _not(less(r, ub))
        r = _sel(fits, add(r, nb), r)
        q_word = (q.hi if i >= 32 else q.lo) | (_carry(fits) << (i % 32))
        q = Pair(q.lo, q_word, False) if i >= 32 else Pair(q_word, q.hi, False)
    return q, r


def _power_of_two(b: UOp) -> int | None:
    if b.op is not Ops.CONST or b.arg <= 0 or b.arg & (b.arg - 1):
        return None
    return int(b.arg).bit_length() - 1


def divide_pow2(a: Pair, k: int, mod: bool) -> Pair:
    """a / 2**k or a % 2**k with C truncation (signed: add 2**k - 1 to a negative a)."""
    if a.signed:
        bias = _sel(is_negative(a), Pair.const((1 << k) - 1, True), Pair.const(0, True))
        a_biased = add(a, bias)
    else:
        a_biased = a
    q = shift_const(a_biased, k, right=True)
    return add(a, neg(shift_const(q, k, right=False))) if mod else q


def mul_high(a: Pair, b: Pair) -> Pair:
    """The high 64 bits of the unsigned 128-bit product a * b."""
    ll_hi = mul_wide(a.lo, b.lo)[1]
    lh_lo, lh_hi = mul_wide(a.lo, b.hi)
    hl_lo, hl_hi = mul_wide(a.hi, b.lo)
    hh_lo, hh_hi = mul_wide(a.hi, b.hi)
    s1 = ll_hi + lh_lo
    s2 = s1 + hl_lo
    carry = _carry(lt(s1, ll_hi)) + _carry(lt(s2, s1))  # into bit 64
    out = add(Pair(hh_lo, hh_hi, False), Pair(lh_hi, _u32(0), False))
    out = add(out, Pair(hl_hi, _u32(0), False))
    return add(out, Pair(carry, _u32(0), False))


def mul_high_signed(a: Pair, b: Pair) -> Pair:
    """The high 64 bits of the signed 128-bit product: the unsigned one minus b where a < 0
    and a where b < 0."""
    zero = Pair.const(0, True)
    out = add(mul_high(a, b), neg(_sel(is_negative(a), b, zero)))
    return add(out, neg(_sel(is_negative(b), a, zero)))


def divide_const(a: Pair, d: int, mod: bool) -> Pair:
    """a / d or a % d (C truncation) for a constant d != 0 by a multiply-high with a magic
    number and shifts (Granlund & Montgomery 1994, figures 4.1 and 5.1)."""
    if a.signed:
        ad = abs(d)
        shift_l = max((ad - 1).bit_length(), 1)
        magic = 1 + (1 << (63 + shift_l)) // ad - (1 << 64)
        q = add(a, mul_high_signed(Pair.const(magic, True), a))
        q = add(shift_const(q, shift_l - 1, right=True), neg(shift_const(a, 63, right=True)))
        q = neg(q) if d < 0 else q
    else:
        shift_l = (d - 1).bit_length()
        t = mul_high(a, Pair.const((1 << (64 + shift_l)) // d + 1 - (1 << 64), False))
        q = add(t, shift_const(add(a, neg(t)), 1, right=True))
        q = shift_const(q, shift_l - 1, right=True)
    return add(a, neg(mul(q, Pair.const(d, a.signed)))) if mod else q


def divide(a: Pair, b: Pair, mod: bool) -> Pair:
    """a / b or a % b with C truncation; by 0 gives 0."""
    if not a.signed:
        q, r = udivmod(a, b)
        out = r if mod else q
        return _sel(is_zero(b), Pair.const(0, False), out)
    sa, sb = is_negative(a), is_negative(b)
    q, r = udivmod(_sel(sa, neg(a), a), _sel(sb, neg(b), b))
    flip = sa if mod else UOp(Ops.XOR, dtypes.bool, (sa, sb))  # the remainder has a's sign
    out = _sel(flip, neg(r if mod else q), r if mod else q)
    return _sel(is_zero(b), Pair.const(0, a.signed), out)


# -- conversions ---------------------------------------------------------------------------------


def to_pair(x: UOp, signed: bool) -> Pair:
    """A narrower integer, bool or float ``x`` converted to a 64-bit pair."""
    src = x.dtype
    if dtypes.is_float(src):
        return from_float(x.cast(F64) if src is not F64 else x, signed)
    lo = x.cast(U32)
    if src is dtypes.bool or dtypes.is_unsigned(src):
        return Pair(lo, _u32(0), signed)
    return Pair(lo, where(lt(x, UOp.const(0, src)), _u32(M32), _u32(0)), signed)


def from_float(v: UOp, signed: bool) -> Pair:
    """float64 -> 64-bit integer, truncated toward zero; NaN, inf and out-of-range values
    give INT64_MIN's bits (uint64 also takes [2**63, 2**64)), as ``exec_alu`` converts."""
    top = UOp.const(2.0**63 if signed else 2.0**64, F64)
    inside = UOp(Ops.AND, dtypes.bool, (_not(lt(v, UOp.const(-(2.0**63), F64))), lt(v, top)))
    negative = lt(v, UOp.const(0.0, F64))
    # the magnitude, 0 where out of range (a float -> uint32 conversion of it would be undefined)
    m = where(inside, where(negative, v * -1.0, v), UOp.const(0.0, F64))
    hi = (m * 2.0**-32).cast(U32)
    lo = (m + hi.cast(F64) * -(2.0**32)).cast(U32)
    mag = Pair(lo, hi, signed)
    out = _sel(negative, neg(mag), mag)
    return _sel(inside, out, Pair.const(1 << 63, signed))


def from_pair(a: Pair, dst: DType) -> UOp:
    """A pair converted to a narrower integer, bool or float ``dst``."""
    if dst is dtypes.bool:
        return ne(a.lo | a.hi, _u32(0))
    if dtypes.is_float(dst):
        hi = a.hi.bitcast(I32).cast(F64) if a.signed else a.hi.cast(F64)
        f = hi * 2.0**32 + a.lo.cast(F64)  # exact parts, one rounding: int64 -> float64
        if dst is dtypes.bfloat16:  # truncate's bfloat16 rounds through float32
            f = f.cast(dtypes.float32)
        return f if dst is F64 else f.cast(dst)
    if dst is I32:
        return a.lo.bitcast(I32)
    return a.lo if dst is U32 else a.lo.cast(dst)


# -- the stage -----------------------------------------------------------------------------------

Value = UOp | Pair
Rule = Callable[[UOp, list[Value]], Value]


def _pairs(srcs: list[Value]) -> list[Pair]:
    assert all(isinstance(s, Pair) for s in srcs)
    return [s for s in srcs if isinstance(s, Pair)]


def _binary(fn: Callable[[Pair, Pair], Pair]) -> Rule:
    return lambda u, srcs: fn(*_pairs(srcs))


def _bitwise(op: Ops) -> Rule:
    def rule(u: UOp, srcs: list[Value]) -> Value:
        a, b = _pairs(srcs)
        return Pair(UOp(op, U32, (a.lo, b.lo)), UOp(op, U32, (a.hi, b.hi)), a.signed)

    return rule


def _shift_rule(right: bool) -> Rule:
    def rule(u: UOp, srcs: list[Value]) -> Value:
        (a,), amount = _pairs(srcs[:1]), srcs[1]
        s = amount if isinstance(amount, Pair) else to_pair(amount, False)
        if u.src[1].op is Ops.CONST:
            return shift_const(a, int(u.src[1].arg), right)
        return shift(a, s, right)

    return rule


def _div_rule(mod: bool) -> Rule:
    def rule(u: UOp, srcs: list[Value]) -> Value:
        a, b = _pairs(srcs)
        if (k := _power_of_two(u.src[1])) is not None:
            return divide_pow2(a, k, mod)
        if u.src[1].op is Ops.CONST and u.src[1].arg != 0:
            return divide_const(a, int(u.src[1].arg), mod)
        return divide(a, b, mod)

    return rule


def _compare(u: UOp, srcs: list[Value]) -> Value:
    a, b = _pairs(srcs)
    table = {Ops.CMPLT: less, Ops.CMPNE: not_equal}
    if u.op is Ops.CMPEQ:
        return _not(not_equal(a, b))
    return table[u.op](a, b)


def _where_rule(u: UOp, srcs: list[Value]) -> Value:
    c = srcs[0]
    assert isinstance(c, UOp)
    return _sel(c, *_pairs(srcs[1:]))


def _max(u: UOp, srcs: list[Value]) -> Value:
    a, b = _pairs(srcs)
    return _sel(less(a, b), b, a)


def _mulacc(u: UOp, srcs: list[Value]) -> Value:
    a, b, c = _pairs(srcs)
    return add(mul(a, b), c)


_RULES: dict[Ops, Rule] = {
    Ops.ADD: _binary(add),  # carry from the low words
    Ops.SUB: _binary(lambda a, b: add(a, neg(b))),  # a + (-b)
    Ops.MUL: _binary(mul),  # low words' wide product + cross products
    Ops.NEG: lambda u, srcs: neg(*_pairs(srcs)),  # ~a + 1
    Ops.AND: _bitwise(Ops.AND),  # per word
    Ops.OR: _bitwise(Ops.OR),  # per word
    Ops.XOR: _bitwise(Ops.XOR),  # per word
    Ops.SHL: _shift_rule(right=False),  # words exchange bits across 32
    Ops.SHR: _shift_rule(right=True),  # arithmetic for int64
    Ops.CMPLT: _compare,  # high words decide unless equal
    Ops.CMPNE: _compare,  # either word differs
    Ops.CMPEQ: _compare,  # neither word differs
    Ops.WHERE: _where_rule,  # per word
    Ops.MAX: _max,  # where(a < b, b, a)
    Ops.MULACC: _mulacc,  # a * b + c
    Ops.CDIV: _div_rule(mod=False),  # shift, or long division
    Ops.CMOD: _div_rule(mod=True),  # shift, or long division
}


def _wide(dt: DType) -> bool:
    return dt.scalar() in WIDE


class _Emulator:
    def __init__(self) -> None:
        self.new: dict[UOp, Value] = {}

    def uop(self, u: UOp) -> UOp:
        v = self.new[u]
        assert isinstance(v, UOp), u
        return v

    def rebuild(self, u: UOp) -> Value:
        srcs = [self.new[s] for s in u.src]
        if isinstance(u.dtype, PtrDType) and u.op in (Ops.PARAM, Ops.DEFINE_REG, Ops.DEFINE_LOCAL):
            return self._buffer(u)
        if u.op is Ops.INDEX:
            return self._index(u, srcs)
        if u.op in (Ops.LOAD, Ops.STORE) and _wide(_pointee(u.src[0])):
            return self._memory(u, srcs)
        if u.op in (Ops.CAST, Ops.BITCAST) and (_wide(u.dtype) or _wide(u.src[0].dtype)):
            return self._convert(u, srcs)
        if _wide(u.dtype) or any(isinstance(s, Pair) for s in srcs):
            return self._alu(u, srcs)
        plain = [s for s in srcs if isinstance(s, UOp)]
        if u.op is Ops.AFTER:
            return u.replace(dtype=plain[0].dtype, src=tuple(plain))
        return u if tuple(plain) == u.src else u.replace(src=tuple(plain))

    def _alu(self, u: UOp, srcs: list[Value]) -> Value:
        if u.op is Ops.CONST and u.dtype.count == 1:
            return Pair.const(int(u.arg), u.dtype is dtypes.int64)
        rule = _RULES.get(u.op)
        if rule is None or u.dtype.count > 1:
            raise NotImplementedError(
                f"int64 emulation: {u.op!r} of {u.dtype!r} on a target without a 64-bit "
                "integer ALU is not supported"
            )
        return rule(u, srcs)

    def _buffer(self, u: UOp) -> UOp:
        dt = u.dtype
        assert isinstance(dt, PtrDType)
        if not _wide(dt.base):
            return u
        size = dt.size * 2 if dt.size >= 0 else -1
        return u.replace(dtype=U32.ptr(size, dt.addrspace))

    def _index(self, u: UOp, srcs: list[Value]) -> Value:
        idx = srcs[1]
        if isinstance(idx, Pair):
            idx = idx.lo.bitcast(I32)
        rest = [s for s in srcs[2:] if isinstance(s, UOp)]
        base = srcs[0]
        assert isinstance(base, UOp)
        if not _wide(_pointee(u)):
            return u.replace(src=(base, idx, *rest))
        i2 = idx * 2
        return Pair(
            u.replace(dtype=base.dtype, src=(base, i2, *rest)),
            u.replace(dtype=base.dtype, src=(base, i2 + 1, *rest)),
            _pointee(u) is dtypes.int64,
        )

    def _memory(self, u: UOp, srcs: list[Value]) -> Value:
        ptr = srcs[0]
        assert isinstance(ptr, Pair)
        if u.op is Ops.STORE:
            (value,) = _pairs(srcs[1:])
            lo, hi = ptr.lo.store(value.lo), ptr.hi.store(value.hi)
            return UOp(Ops.GROUP, src=(lo, hi))
        alts = _pairs(srcs[1:])  # a masked load's value
        lo_alt, hi_alt = ((a.lo,), (a.hi,)) if (a := alts[0] if alts else None) else ((), ())
        lo = UOp(Ops.LOAD, U32, (ptr.lo, *lo_alt))
        return Pair(lo, UOp(Ops.LOAD, U32, (ptr.hi, *hi_alt)), u.dtype is dtypes.int64)

    def _convert(self, u: UOp, srcs: list[Value]) -> Value:
        x, src, dst = srcs[0], u.src[0].dtype, u.dtype
        if u.op is Ops.BITCAST and not (_wide(src) and _wide(dst)):
            raise NotImplementedError(
                f"int64 emulation: BITCAST {src!r} -> {dst!r} on a target without a 64-bit "
                "integer ALU is not supported"
            )
        if isinstance(x, Pair):
            return Pair(x.lo, x.hi, dst is dtypes.int64) if _wide(dst) else from_pair(x, dst)
        return to_pair(x, dst is dtypes.int64)


def _pointee(ptr: UOp) -> DType:
    while ptr.op in (Ops.AFTER, Ops.INDEX):
        ptr = ptr.src[0]
    dt = ptr.dtype
    return dt.base if isinstance(dt, PtrDType) else dt


def emulate_int64(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: int64/uint64 as pairs of uint32 words on a target without 64-bit
    integer ALU ops."""
    em = _Emulator()
    for u in toposort(sink):
        em.new[u] = em.rebuild(u)
    return em.uop(sink)
