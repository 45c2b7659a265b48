"""PTX instructions for each ALU op and for CAST/BITCAST, with ``exec_alu``'s semantics.

An op's entry takes ``(emitter, dtype, *operands)`` — the operands' scalar dtype and their
registers — emits the instructions and returns the result's register. Where PTX differs
from ``exec_alu`` the sequence says so: integer division by zero gives 0 (PTX leaves it
unspecified), shift amounts are clamped to the width (``shl``/``shr`` clamp only 32-bit
amounts, so 64-bit ones are clamped first), float MAX lets NaN win and orders -0.0 below
+0.0, float -> int conversions give the integer minimum for NaN and out-of-range values
(x86's "integer indefinite"; PTX's ``cvt.rzi`` saturates), and float arithmetic carries an
explicit ``.rn`` so ptxas never contracts a multiply and an add into one rounding.
"""

from __future__ import annotations

from collections.abc import Callable

from fusegrad.renderer.ptx_emit import (
    NARROW_FLOATS,
    Emitter,
    bit_type,
    immediate,
    op_type,
    reg_class,
)
from fusegrad.uop import DType, Ops, dtypes

PtxOp = Callable[..., str]


def _is_float(dt: DType) -> bool:
    return dtypes.is_float(dt.scalar())


def _signed(dt: DType) -> bool:
    return dt.scalar() in dtypes.sints


def _out(e: Emitter, dt: DType) -> str:
    return e.reg(dt)


# -- bool ------------------------------------------------------------------------------------

_PRED_BINARY = {
    Ops.ADD: "or",
    Ops.MAX: "or",
    Ops.OR: "or",
    Ops.SUB: "xor",
    Ops.XOR: "xor",
    Ops.CMPNE: "xor",
    Ops.MUL: "and",
    Ops.AND: "and",
}


def _pred_op(e: Emitter, op: Ops, args: list[str]) -> str:
    out = e.new("p")
    if op in _PRED_BINARY:
        e.emit(f"{_PRED_BINARY[op]}.pred {out}, {args[0]}, {args[1]};")
    elif op is Ops.NEG:
        e.emit(f"not.pred {out}, {args[0]};")
    elif op is Ops.CMPEQ:
        e.emit(f"xor.pred {out}, {args[0]}, {args[1]};")
        e.emit(f"not.pred {out}, {out};")
    elif op is Ops.CMPLT:  # a < b: !a and b
        e.emit(f"not.pred {out}, {args[0]};")
        e.emit(f"and.pred {out}, {out}, {args[1]};")
    elif op is Ops.MULACC:  # (a and b) or c
        e.emit(f"and.pred {out}, {args[0]}, {args[1]};")
        e.emit(f"or.pred {out}, {out}, {args[2]};")
    else:
        raise NotImplementedError(f"PTX renderer: {op!r} on bool")
    return out


def _where(e: Emitter, dt: DType, cond: str, a: str, b: str) -> str:
    out = _out(e, dt)
    if reg_class(dt) != "p":
        e.emit(f"selp.{bit_type(dt)} {out}, {a}, {b}, {cond};")
        return out
    t = e.new("p")
    e.emit(f"and.pred {out}, {cond}, {a};")
    e.emit(f"not.pred {t}, {cond};")
    e.emit(f"and.pred {t}, {t}, {b};")
    e.emit(f"or.pred {out}, {out}, {t};")
    return out


# -- comparisons -----------------------------------------------------------------------------

#: float comparisons: ordered < and ==, unordered != (NaN != x holds)
_FLOAT_CMP = {Ops.CMPLT: "lt", Ops.CMPEQ: "eq", Ops.CMPNE: "neu"}
_INT_CMP = {Ops.CMPLT: "lt", Ops.CMPEQ: "eq", Ops.CMPNE: "ne"}


def _compare(op: Ops) -> PtxOp:
    def render(e: Emitter, dt: DType, a: str, b: str) -> str:
        if reg_class(dt) == "p":
            return _pred_op(e, op, [a, b])
        cmp = (_FLOAT_CMP if _is_float(dt) else _INT_CMP)[op]
        out = e.new("p")
        e.emit(f"setp.{cmp}.{op_type(dt)} {out}, {a}, {b};")
        return out

    return render


# -- arithmetic ------------------------------------------------------------------------------

_ROUNDED = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul", Ops.FDIV: "div"}
_INT_ARITH = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul.lo"}
_BITWISE = {Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor"}


def _binary(op: Ops) -> PtxOp:
    def render(e: Emitter, dt: DType, a: str, b: str) -> str:
        if reg_class(dt) == "p":
            return _pred_op(e, op, [a, b])
        out = _out(e, dt)
        if _is_float(dt):
            e.emit(f"{_ROUNDED[op]}.rn.{op_type(dt)} {out}, {a}, {b};")
            return e.round_narrow(dt, out)
        if op in _BITWISE:
            e.emit(f"{_BITWISE[op]}.{bit_type(dt)} {out}, {a}, {b};")
            return out
        e.emit(f"{_INT_ARITH[op]}.{op_type(dt)} {out}, {a}, {b};")
        return e.wrap(dt, out)

    return render


def _unary_float(name: str) -> PtxOp:
    def render(e: Emitter, dt: DType, a: str) -> str:
        if not _is_float(dt):
            raise NotImplementedError(f"PTX renderer: {name} of {dt!r}")
        out = _out(e, dt)
        e.emit(f"{name}.rn.{op_type(dt)} {out}, {a};")
        return e.round_narrow(dt, out)

    return render


def _neg(e: Emitter, dt: DType, a: str) -> str:
    if reg_class(dt) == "p":
        return _pred_op(e, Ops.NEG, [a])
    out = _out(e, dt)
    if _is_float(dt):
        e.emit(f"neg.{op_type(dt)} {out}, {a};")
        return out
    e.emit(f"neg.s{op_type(dt)[1:]} {out}, {a};")
    return e.wrap(dt, out)


def _trunc(e: Emitter, dt: DType, a: str) -> str:
    if not _is_float(dt):
        return a
    out = _out(e, dt)
    e.emit(f"cvt.rzi.{op_type(dt)}.{op_type(dt)} {out}, {a};")
    return out


def _mulacc(e: Emitter, dt: DType, a: str, b: str, c: str) -> str:
    if reg_class(dt) == "p":
        return _pred_op(e, Ops.MULACC, [a, b, c])
    out = _out(e, dt)
    if dt.scalar() in NARROW_FLOATS:  # exec_alu: round(round(a * b) + c)
        e.emit(f"mul.rn.f32 {out}, {a}, {b};")
        product = e.round_narrow(dt, out)
        total = _out(e, dt)
        e.emit(f"add.rn.f32 {total}, {product}, {c};")
        return e.round_narrow(dt, total)
    if _is_float(dt):  # float32/float64: fused, one rounding
        e.emit(f"fma.rn.{op_type(dt)} {out}, {a}, {b}, {c};")
        return out
    e.emit(f"mad.lo.{op_type(dt)} {out}, {a}, {b}, {c};")
    return e.wrap(dt, out)


def _max(e: Emitter, dt: DType, a: str, b: str) -> str:
    if reg_class(dt) == "p":
        return _pred_op(e, Ops.MAX, [a, b])
    out = _out(e, dt)
    if not _is_float(dt):
        e.emit(f"max.{op_type(dt)} {out}, {a}, {b};")
        return out
    t, bits, p = _out(e, dt), bit_type(dt), e.new("p")
    e.emit(f"setp.gt.{op_type(dt)} {p}, {a}, {b};")
    e.emit(f"selp.{bits} {out}, {a}, {b}, {p};")  # a > b ? a : b (b when unordered)
    e.emit(f"and.{bits} {t}, {a}, {b};")  # equal: +0.0 unless both are -0.0
    e.emit(f"setp.eq.{op_type(dt)} {p}, {a}, {b};")
    e.emit(f"selp.{bits} {out}, {t}, {out}, {p};")
    e.emit(f"setp.nan.{op_type(dt)} {p}, {a}, {a};")  # a NaN wins; a NaN b gave b above
    e.emit(f"selp.{bits} {out}, {a}, {out}, {p};")
    return out


# -- division and shifts ---------------------------------------------------------------------


def _divisor(e: Emitter, dt: DType, b: str) -> tuple[str, str]:
    """(b is zero, b with zero replaced by one)."""
    zero, safe = e.new("p"), _out(e, dt)
    e.emit(f"setp.eq.{op_type(dt)} {zero}, {b}, 0;")
    e.emit(f"selp.{bit_type(dt)} {safe}, 1, {b}, {zero};")
    return zero, safe


def _cdiv(e: Emitter, dt: DType, a: str, b: str) -> str:
    if _is_float(dt):  # the truncated quotient
        q = _binary(Ops.FDIV)(e, dt, a, b)
        return _trunc(e, dt, q)
    zero, safe = _divisor(e, dt, b)
    out = _out(e, dt)
    e.emit(f"div.{op_type(dt)} {out}, {a}, {safe};")
    if _signed(dt):  # the minimum / -1 wraps to the minimum
        minus, neg = e.new("p"), _out(e, dt)
        e.emit(f"setp.eq.{op_type(dt)} {minus}, {b}, -1;")
        e.emit(f"neg.{op_type(dt)} {neg}, {a};")
        e.emit(f"selp.{bit_type(dt)} {out}, {neg}, {out}, {minus};")
    e.emit(f"selp.{bit_type(dt)} {out}, 0, {out}, {zero};")
    return e.wrap(dt, out)


def _cmod(e: Emitter, dt: DType, a: str, b: str) -> str:
    if _is_float(dt):
        raise NotImplementedError(f"PTX renderer: CMOD of {dt!r} (the lowering decomposes it)")
    zero, safe = _divisor(e, dt, b)
    out = _out(e, dt)
    e.emit(f"rem.{op_type(dt)} {out}, {a}, {safe};")
    if _signed(dt):
        minus = e.new("p")
        e.emit(f"setp.eq.{op_type(dt)} {minus}, {b}, -1;")
        e.emit(f"or.pred {zero}, {zero}, {minus};")
    e.emit(f"selp.{bit_type(dt)} {out}, 0, {out}, {zero};")
    return out


def _shift_amount(e: Emitter, dt: DType, b: str) -> str:
    """A 32-bit shift amount: 64-bit amounts clamped to 64 first (as unsigned: a negative
    amount shifts everything out, as ``exec_alu`` does)."""
    if reg_class(dt) != "rd":
        return b  # shl/shr clamp the unsigned 32-bit amount to 32 themselves
    clamped, low = e.new("rd"), e.new("r")
    e.emit(f"min.u64 {clamped}, {b}, 64;")
    e.emit(f"cvt.u32.u64 {low}, {clamped};")
    return low


def _shl(e: Emitter, dt: DType, a: str, b: str) -> str:
    amount, out = _shift_amount(e, dt, b), _out(e, dt)
    e.emit(f"shl.{bit_type(dt)} {out}, {a}, {amount};")
    return e.wrap(dt, out)


def _shr(e: Emitter, dt: DType, a: str, b: str) -> str:
    amount, out = _shift_amount(e, dt, b), _out(e, dt)
    e.emit(f"shr.{op_type(dt)} {out}, {a}, {amount};")
    return out


CODE_FOR_OP: dict[Ops, PtxOp] = {
    Ops.ADD: _binary(Ops.ADD),
    Ops.SUB: _binary(Ops.SUB),
    Ops.MUL: _binary(Ops.MUL),
    Ops.FDIV: _binary(Ops.FDIV),
    Ops.CDIV: _cdiv,
    Ops.CMOD: _cmod,
    Ops.MAX: _max,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.AND: _binary(Ops.AND),
    Ops.OR: _binary(Ops.OR),
    Ops.XOR: _binary(Ops.XOR),
    Ops.CMPLT: _compare(Ops.CMPLT),
    Ops.CMPNE: _compare(Ops.CMPNE),
    Ops.CMPEQ: _compare(Ops.CMPEQ),
    Ops.NEG: _neg,
    Ops.RECIPROCAL: _unary_float("rcp"),
    Ops.SQRT: _unary_float("sqrt"),
    Ops.TRUNC: _trunc,
    Ops.WHERE: _where,
    Ops.MULACC: _mulacc,
}


# -- casts -----------------------------------------------------------------------------------


def _to_bool(e: Emitter, src: DType, a: str) -> str:
    out = e.new("p")
    cmp = "neu" if _is_float(src) else "ne"  # NaN is true
    e.emit(f"setp.{cmp}.{op_type(src)} {out}, {a}, {immediate(src, 0)};")
    return out


def _from_bool(e: Emitter, dst: DType, a: str) -> str:
    out = _out(e, dst)
    one, zero = immediate(dst, 1), immediate(dst, 0)
    e.emit(f"selp.{bit_type(dst)} {out}, {one}, {zero}, {a};")
    return out


def _int_to_int(e: Emitter, src: DType, dst: DType, a: str) -> str:
    out = _out(e, dst)
    s_cls, d_cls = reg_class(src), reg_class(dst)
    if s_cls == d_cls:
        e.emit(f"mov.{bit_type(dst)} {out}, {a};")
    elif d_cls == "rd":  # extend by the source's signedness
        e.emit(f"cvt.{op_type(dst)}.{op_type(src)} {out}, {a};")
    else:
        e.emit(f"cvt.u32.u64 {out}, {a};")
    return e.wrap(dst, out)


def _int_to_float(e: Emitter, src: DType, dst: DType, a: str) -> str:
    """Through float64 first, as exec_alu converts a Python int (one rounding for 32-bit
    sources, which float64 holds exactly; int64 -> float32 rounds twice like exec_alu)."""
    wide = e.new("fd")
    e.emit(f"cvt.rn.f64.{op_type(src)} {wide}, {a};")
    return _float_to_float(e, dtypes.float64, dst, wide)


def _float_to_float(e: Emitter, src: DType, dst: DType, a: str) -> str:
    s, d = src.scalar(), dst.scalar()
    if d is dtypes.float64:
        if s is dtypes.float64:
            return a
        out = e.new("fd")
        e.emit(f"cvt.f64.f32 {out}, {a};")
        return out
    if s is dtypes.float64 and d is dtypes.float16:  # one rounding, not via float32
        h, out = e.new("h"), e.new("f")
        e.emit(f"cvt.rn.f16.f64 {h}, {a};")
        e.emit(f"cvt.f32.f16 {out}, {h};")
        return out
    if s is dtypes.float64:
        narrow = e.new("f")
        e.emit(f"cvt.rn.f32.f64 {narrow}, {a};")
        a = narrow
    return e.round_narrow(d, a) if d is not s else a


_INT_LIMIT = {32: ("0fCF000000", "0f4F000000"), 64: ("0fDF000000", "0f5F000000")}
_INT_LIMIT64 = {32: ("0dC1E0000000000000", "0d41E0000000000000"),
                64: ("0dC3E0000000000000", "0d43E0000000000000")}  # fmt: skip


def _float_to_signed(e: Emitter, src: DType, a: str, width: int) -> str:
    """Truncate to a signed ``width``-bit integer; NaN and out of range give its minimum."""
    lo, hi = (_INT_LIMIT64 if src is dtypes.float64 else _INT_LIMIT)[width]
    t, cls = op_type(src), "rd" if width == 64 else "r"
    out, ok = e.new(cls), e.new("p")
    e.emit(f"cvt.rzi.s{width}.{t} {out}, {a};")
    e.emit(f"setp.ge.{t} {ok}, {a}, {lo};")
    e.emit(f"setp.lt.and.{t} {ok}, {a}, {hi}, {ok};")
    minimum = "-2147483648" if width == 32 else "-9223372036854775808"
    e.emit(f"selp.b{width} {out}, {out}, {minimum}, {ok};")
    return out


def _float_to_int(e: Emitter, src: DType, dst: DType, a: str) -> str:
    d = dst.scalar()
    if d is dtypes.uint64:  # [2^63, 2^64) directly, the rest through int64
        out = _float_to_signed(e, src, a, 64)
        big, u = e.new("p"), e.new("rd")
        t = op_type(src)
        two63 = "0d43E0000000000000" if src is dtypes.float64 else "0f5F000000"
        two64 = "0d43F0000000000000" if src is dtypes.float64 else "0f5F800000"
        e.emit(f"cvt.rzi.u64.{t} {u}, {a};")
        e.emit(f"setp.ge.{t} {big}, {a}, {two63};")
        e.emit(f"setp.lt.and.{t} {big}, {a}, {two64}, {big};")
        e.emit(f"selp.b64 {out}, {u}, {out}, {big};")
        return out
    if d.itemsize < 4 or d is dtypes.int32:
        return _int_to_int(e, dtypes.int32, dst, _float_to_signed(e, src, a, 32))
    return _int_to_int(e, dtypes.int64, dst, _float_to_signed(e, src, a, 64))


def cast(e: Emitter, src: DType, dst: DType, a: str) -> str:
    """Scalar CAST with exec_alu's semantics."""
    s, d = src.scalar(), dst.scalar()
    if s is d:
        return a
    if d is dtypes.bool:
        return _to_bool(e, s, a)
    if s is dtypes.bool:
        return _from_bool(e, d, a)
    if _is_float(s) and _is_float(d):
        return _float_to_float(e, s, d, a)
    if _is_float(d):
        return _int_to_float(e, s, d, a)
    if _is_float(s):
        return _float_to_int(e, s, d, a)
    return _int_to_int(e, s, d, a)


def raw_bits(e: Emitter, dt: DType, a: str) -> str:
    """The register of ``dt``'s memory bits (32/64-bit; narrow types zero-extended)."""
    s = dt.scalar()
    if s in NARROW_FLOATS:
        return e.narrow_bits(s, a)
    if reg_class(s) in ("f", "fd"):
        out = e.new("r" if s is dtypes.float32 else "rd")
        e.emit(f"mov.{bit_type(s)} {out}, {a};")
        return out
    if s.itemsize < 4 and s in dtypes.sints:
        out = e.new("r")
        e.emit(f"and.b32 {out}, {a}, {(1 << (8 * s.itemsize)) - 1};")
        return out
    return a


def from_raw_bits(e: Emitter, dt: DType, bits: str) -> str:
    """``dt``'s register value from its memory bits (as ``raw_bits`` gives them)."""
    s = dt.scalar()
    if s in NARROW_FLOATS:
        return e.from_narrow_bits(s, bits)
    if reg_class(s) in ("f", "fd"):
        out = e.reg(s)
        e.emit(f"mov.{bit_type(s)} {out}, {bits};")
        return out
    out = e.reg(s)
    e.emit(f"mov.{bit_type(s)} {out}, {bits};")
    return e.wrap(s, out)


def bitcast(e: Emitter, src: DType, dst: DType, a: str) -> str:
    """Scalar BITCAST between dtypes of one size."""
    s, d = src.scalar(), dst.scalar()
    if s.itemsize != d.itemsize or dtypes.bool in (s, d):
        raise NotImplementedError(f"PTX renderer: BITCAST {src!r} -> {dst!r}")
    return from_raw_bits(e, d, raw_bits(e, s, a))
