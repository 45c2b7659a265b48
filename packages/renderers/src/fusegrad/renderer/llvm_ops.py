"""LLVM IR for each ALU op and for CAST/BITCAST, with ``exec_alu``'s exact semantics.

An op's entry takes ``(out, type, *operands)`` — ``type`` is the operands' ``LLType`` — and
returns the instructions (newline-separated) that define ``out``. Helper values are named
``out.suffix``. Where LLVM's instruction would trap or be poison, the op guards it the way
``exec_alu`` defines the result: integer division by zero gives 0 (and ``MIN / -1`` wraps),
shifts by the bit width or more give 0 (or the sign for arithmetic right shifts), float ->
int conversions give int64's minimum for NaN and values past int64 (as x86 does).
"""

from __future__ import annotations

from collections.abc import Callable

from fusegrad.renderer.llvm_types import (
    NARROW_FLOATS,
    LLType,
    ll_type,
    narrow_decode,
    narrow_encode,
    round_narrow,
    vec,
)
from fusegrad.uop import DType, Ops, dtypes

OpRenderer = Callable[..., str]


def _arith(int_op: str, float_op: str, bool_op: str) -> OpRenderer:
    def render(o: str, t: LLType, a: str, b: str) -> str:
        if t.kind == "f":
            return f"{o} = {float_op} {t.fmf}{t.ty} {a}, {b}"
        return f"{o} = {bool_op if t.kind == 'b' else int_op} {t.ty} {a}, {b}"

    return render


def _bitwise(op: str) -> OpRenderer:
    return lambda o, t, a, b: f"{o} = {op} {t.ty} {a}, {b}"


def _compare(signed: str, unsigned: str, floating: str) -> OpRenderer:
    def render(o: str, t: LLType, a: str, b: str) -> str:
        if t.kind == "f":
            return f"{o} = fcmp {floating} {t.ty} {a}, {b}"
        return f"{o} = icmp {signed if t.kind == 's' else unsigned} {t.ty} {a}, {b}"

    return render


def _neg(o: str, t: LLType, a: str) -> str:
    if t.kind == "f":
        return f"{o} = fneg {t.fmf}{t.ty} {a}"
    if t.kind == "b":
        return f"{o} = xor {t.ty} {a}, {t.const(True)}"
    return f"{o} = sub {t.ty} {t.const(0)}, {a}"


def _float_intrinsic(name: str, int_identity: bool = False) -> OpRenderer:
    def render(o: str, t: LLType, a: str) -> str:
        if t.kind != "f":
            if not int_identity:
                raise NotImplementedError(f"LLVM renderer: {name} of an integer")
            return f"{o} = bitcast {t.ty} {a} to {t.ty}"  # trunc of an int is the int
        return f"{o} = call {t.fmf}{t.ty} @llvm.{name}.{t.sfx}({t.ty} {a})"

    return render


def _reciprocal(o: str, t: LLType, a: str) -> str:
    return f"{o} = fdiv {t.fmf}{t.ty} {t.const(1.0)}, {a}"


def _max(o: str, t: LLType, a: str, b: str) -> str:
    # llvm.maximum is IEEE 754-2019 maximum: NaN wins, -0.0 < +0.0 (exec_alu's MAX)
    name = {"f": "maximum", "s": "smax", "u": "umax"}.get(t.kind)
    if name is None:
        return f"{o} = or {t.ty} {a}, {b}"
    return f"{o} = call {t.fmf}{t.ty} @llvm.{name}.{t.sfx}({t.ty} {a}, {t.ty} {b})"


def _safe_divisor(o: str, t: LLType, b: str) -> list[str]:
    """``o.d``: the divisor with 0 (and for signed, -1) replaced by 1; ``o.z``: b == 0."""
    lines = [f"{o}.z = icmp eq {t.ty} {b}, {t.const(0)}"]
    if t.kind == "s":
        lines += [
            f"{o}.m1 = icmp eq {t.ty} {b}, {t.const(-1)}",
            f"{o}.bad = or {t.cond} {o}.z, {o}.m1",
        ]
    bad = f"{o}.bad" if t.kind == "s" else f"{o}.z"
    return [*lines, f"{o}.d = select {t.cond} {bad}, {t.ty} {t.const(1)}, {t.ty} {b}"]


def _quotient(o: str, t: LLType, a: str, b: str) -> list[str]:
    """``o.q``: a / b truncated, 0 for b == 0, -a (wrapping) for b == -1."""
    lines = _safe_divisor(o, t, b)
    if t.kind == "u":
        return [
            *lines,
            f"{o}.q0 = udiv {t.ty} {a}, {o}.d",
            f"{o}.q = select {t.cond} {o}.z, {t.ty} {t.const(0)}, {t.ty} {o}.q0",
        ]
    return [
        *lines,
        f"{o}.q0 = sdiv {t.ty} {a}, {o}.d",
        f"{o}.na = sub {t.ty} {t.const(0)}, {a}",
        f"{o}.q1 = select {t.cond} {o}.m1, {t.ty} {o}.na, {t.ty} {o}.q0",
        f"{o}.q = select {t.cond} {o}.z, {t.ty} {t.const(0)}, {t.ty} {o}.q1",
    ]


def _remainder(o: str, t: LLType, a: str, b: str) -> list[str]:
    """``o.r``: the remainder with the dividend's sign; 0 when b is 0 or -1."""
    rem = "urem" if t.kind == "u" else "srem"
    return [f"{o}.r = {rem} {t.ty} {a}, {o}.d"]


def _floor_adjust(o: str, t: LLType, b: str) -> list[str]:
    """``o.adj``: the truncated result needs flooring (remainder nonzero, signs differ)."""
    return [
        f"{o}.rx = xor {t.ty} {o}.r, {b}",
        f"{o}.sd = icmp slt {t.ty} {o}.rx, {t.const(0)}",
        f"{o}.nz = icmp ne {t.ty} {o}.r, {t.const(0)}",
        f"{o}.adj = and {t.cond} {o}.sd, {o}.nz",
    ]


def _int_only(t: LLType, what: str) -> None:
    if t.kind not in "su":
        raise NotImplementedError(f"LLVM renderer: {what} needs integer operands, got {t.ty}")


def _cdiv(o: str, t: LLType, a: str, b: str) -> str:
    _int_only(t, "CDIV")
    return "\n".join([*_quotient(o, t, a, b), f"{o} = bitcast {t.ty} {o}.q to {t.ty}"])


def _cmod(o: str, t: LLType, a: str, b: str) -> str:
    _int_only(t, "CMOD")
    lines = _safe_divisor(o, t, b) + _remainder(o, t, a, b)
    return "\n".join([*lines, f"{o} = bitcast {t.ty} {o}.r to {t.ty}"])


def _floordiv(o: str, t: LLType, a: str, b: str) -> str:
    _int_only(t, "FLOORDIV")
    lines = _quotient(o, t, a, b) + _remainder(o, t, a, b)
    if t.kind == "u":
        return "\n".join([*lines, f"{o} = bitcast {t.ty} {o}.q to {t.ty}"])
    return "\n".join(
        [
            *lines,
            *_floor_adjust(o, t, b),
            f"{o}.one = zext {t.cond} {o}.adj to {t.ty}",
            f"{o} = sub {t.ty} {o}.q, {o}.one",
        ]
    )


def _floormod(o: str, t: LLType, a: str, b: str) -> str:
    _int_only(t, "FLOORMOD")
    lines = _safe_divisor(o, t, b) + _remainder(o, t, a, b)
    if t.kind == "u":
        return "\n".join([*lines, f"{o} = bitcast {t.ty} {o}.r to {t.ty}"])
    return "\n".join(
        [
            *lines,
            *_floor_adjust(o, t, b),
            f"{o}.add = select {t.cond} {o}.adj, {t.ty} {b}, {t.ty} {t.const(0)}",
            f"{o} = add {t.ty} {o}.r, {o}.add",
        ]
    )


def _shl(o: str, t: LLType, a: str, b: str) -> str:
    _int_only(t, "SHL")
    return "\n".join(
        [
            f"{o}.ok = icmp ult {t.ty} {b}, {t.const(t.bits)}",
            f"{o}.s = shl {t.ty} {a}, {b}",
            f"{o} = select {t.cond} {o}.ok, {t.ty} {o}.s, {t.ty} {t.const(0)}",
        ]
    )


def _shr(o: str, t: LLType, a: str, b: str) -> str:
    _int_only(t, "SHR")
    ok = f"{o}.ok = icmp ult {t.ty} {b}, {t.const(t.bits)}"
    if t.kind == "s":  # shifting by >= width leaves only the sign: shift by width - 1
        return "\n".join(
            [
                ok,
                f"{o}.c = select {t.cond} {o}.ok, {t.ty} {b}, {t.ty} {t.const(t.bits - 1)}",
                f"{o} = ashr {t.ty} {a}, {o}.c",
            ]
        )
    return "\n".join(
        [
            ok,
            f"{o}.s = lshr {t.ty} {a}, {b}",
            f"{o} = select {t.cond} {o}.ok, {t.ty} {o}.s, {t.ty} {t.const(0)}",
        ]
    )


def _where(o: str, t: LLType, c: str, a: str, b: str) -> str:
    return f"{o} = select {t.cond} {c}, {t.ty} {a}, {t.ty} {b}"


def _mulacc(o: str, t: LLType, a: str, b: str, c: str) -> str:
    if t.kind != "f":
        return f"{o}.m = mul {t.ty} {a}, {b}\n{o} = add {t.ty} {o}.m, {c}"
    # exec_alu: a fused multiply-add, rounded once (float16/bfloat16 MULACC is rendered as a
    # rounded multiply and a rounded add by the renderer before it gets here)
    return f"{o} = call {t.fmf}{t.ty} @llvm.fma.{t.sfx}({t.ty} {a}, {t.ty} {b}, {t.ty} {c})"


CODE_FOR_OP: dict[Ops, OpRenderer] = {
    Ops.ADD: _arith("add", "fadd", "or"),  # bool + bool saturates: or
    Ops.SUB: _arith("sub", "fsub", "xor"),
    Ops.MUL: _arith("mul", "fmul", "and"),
    Ops.FDIV: _arith("sdiv", "fdiv", "and"),  # only float operands reach FDIV
    Ops.CDIV: _cdiv,
    Ops.CMOD: _cmod,
    Ops.FLOORDIV: _floordiv,
    Ops.FLOORMOD: _floormod,
    Ops.MAX: _max,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.AND: _bitwise("and"),
    Ops.OR: _bitwise("or"),
    Ops.XOR: _bitwise("xor"),
    Ops.CMPLT: _compare("slt", "ult", "olt"),
    Ops.CMPNE: _compare("ne", "ne", "une"),
    Ops.CMPEQ: _compare("eq", "eq", "oeq"),
    Ops.NEG: _neg,
    Ops.RECIPROCAL: _reciprocal,
    Ops.SQRT: _float_intrinsic("sqrt"),
    Ops.EXP2: _float_intrinsic("exp2"),
    Ops.LOG2: _float_intrinsic("log2"),
    Ops.SIN: _float_intrinsic("sin"),
    Ops.TRUNC: _float_intrinsic("trunc", int_identity=True),
    Ops.WHERE: _where,
    Ops.MULACC: _mulacc,
}

#: float ops whose result needs rounding to float16/bfloat16 (the others return an operand
#: or a bool, or are exact: NEG, TRUNC, MAX, WHERE)
ROUNDED_OPS = frozenset(
    {Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.RECIPROCAL, Ops.SQRT, Ops.EXP2, Ops.LOG2, Ops.SIN}
)


# -- casts ---------------------------------------------------------------------------------

CastResult = tuple[list[str], str]  # (instructions, name of the result)


def _alias(x: str) -> CastResult:
    return [], x


def _cast_int_int(o: str, a: str, src: DType, dst: DType) -> CastResult:
    st, dt = ll_type(src), ll_type(dst)
    if dst.scalar() is dtypes.bool:
        return [f"{o} = icmp ne {st.ty} {a}, {st.const(0)}"], o
    if st.bits == dt.bits:
        return _alias(a)
    if st.bits > dt.bits:
        return [f"{o} = trunc {st.ty} {a} to {dt.ty}"], o
    ext = "sext" if st.kind == "s" else "zext"
    return [f"{o} = {ext} {st.ty} {a} to {dt.ty}"], o


def _cast_int_float(o: str, a: str, src: DType, dst: DType) -> CastResult:
    st, n, d = ll_type(src), src.count, dst.scalar()
    conv = "sitofp" if st.kind == "s" else "uitofp"
    if d is dtypes.float64 or (d is dtypes.float32 and st.bits < 64):
        return [f"{o} = {conv} {st.ty} {a} to {ll_type(dst).ty}"], o
    # via double, as exec_alu converts (int -> Python float -> the narrower type)
    lines = [f"{o}.d = {conv} {st.ty} {a} to {vec('double', n)}"]
    return lines + _narrow_from(o, f"{o}.d", "double", dst), o


def _narrow_from(o: str, x: str, src: str, dst: DType) -> list[str]:
    """Instructions defining ``o`` (a float register of dtype ``dst``) from float/double ``x``."""
    n = dst.count
    if dst.scalar() in NARROW_FLOATS:
        return round_narrow(o, x, src, dst, n)
    if dst.scalar() is dtypes.float32 and src == "double":
        return [f"{o} = fptrunc {vec('double', n)} {x} to {vec('float', n)}"]
    return [f"{o} = fpext {vec('float', n)} {x} to {vec('double', n)}"]


def _through_bits(dst: DType) -> int:
    """The width of the signed integer register a float -> ``dst`` conversion goes through
    (x86 converts to narrow ints and int32 through 32 bits, to uint32/int64/uint64 through
    64), as exec_alu's CAST defines it."""
    s = dst.scalar()
    return 32 if s.itemsize < 4 or s is dtypes.int32 else 64


def _cast_float_int(o: str, a: str, src: DType, dst: DType) -> CastResult:
    st, dt = ll_type(src), ll_type(dst)
    if dst.scalar() is dtypes.bool:
        return [f"{o} = fcmp une {st.ty} {a}, {st.const(0.0)}"], o
    bits = _through_bits(dst)
    wide = st.with_scalar(f"i{bits}", "s")
    full = o if dt.bits == bits else f"{o}.v"
    indefinite = wide.const(-(2 ** (bits - 1)))
    # saturating conversion, then NaN and values >= 2**(bits-1) become the minimum
    lines = [
        f"{o}.i = call {wide.ty} @llvm.fptosi.sat.{wide.sfx}.{st.sfx}({st.ty} {a})",
        f"{o}.bad = fcmp uge {st.ty} {a}, {st.const(2.0 ** (bits - 1))}",
    ]
    if dst.scalar() is dtypes.uint64:  # [2**63, 2**64) converts exactly
        lines += [
            f"{o}.u = call {wide.ty} @llvm.fptoui.sat.{wide.sfx}.{st.sfx}({st.ty} {a})",
            f"{o}.over = fcmp uge {st.ty} {a}, {st.const(2.0**64)}",
            f"{o}.s = select {st.cond} {o}.bad, {wide.ty} {o}.u, {wide.ty} {o}.i",
            f"{full} = select {st.cond} {o}.over, {wide.ty} {indefinite}, {wide.ty} {o}.s",
        ]
    else:
        lines.append(f"{full} = select {st.cond} {o}.bad, {wide.ty} {indefinite}, {wide.ty} {o}.i")
    if dt.bits < bits:
        lines.append(f"{o} = trunc {wide.ty} {full} to {dt.ty}")
    return lines, o


def _cast_float_float(o: str, a: str, src: DType, dst: DType) -> CastResult:
    s, d = src.scalar(), dst.scalar()
    src_reg = ll_type(src).scalar
    if s is d or (d is dtypes.float32 and src_reg == "float"):
        return _alias(a)  # narrow floats already are exact float32 values
    return _narrow_from(o, a, src_reg, dst), o


def _cast_kind(dt: DType) -> str:
    return "f" if dtypes.is_float(dt) else "i"


_CASTS: dict[tuple[str, str], Callable[[str, str, DType, DType], CastResult]] = {
    ("i", "i"): _cast_int_int,
    ("i", "f"): _cast_int_float,
    ("f", "i"): _cast_float_int,
    ("f", "f"): _cast_float_float,
}


def render_cast(o: str, a: str, src: DType, dst: DType) -> CastResult:
    """Instructions converting register ``a`` of ``src`` to ``dst`` (exec_alu's CAST: ints
    wrap, floats round to nearest even, float -> int truncates; NaN and values beyond int64
    give int64's minimum, then wrap like any int64)."""
    if src.count != dst.count:
        raise NotImplementedError(f"LLVM renderer: CAST {src!r} -> {dst!r} changes lane count")
    if src.scalar() is dtypes.bool and dtypes.is_float(dst):
        return [f"{o} = uitofp {ll_type(src).ty} {a} to {ll_type(dst).ty}"], o
    return _CASTS[_cast_kind(src), _cast_kind(dst)](o, a, src, dst)


def to_bits(o: str, a: str, dt: DType) -> CastResult:
    """A register value -> its bit pattern as an integer register."""
    t = ll_type(dt)
    if dt.scalar() in NARROW_FLOATS:
        return narrow_encode(o, a, "float", dt, dt.count), o
    if t.kind == "f":
        return [f"{o} = bitcast {t.ty} {a} to {vec(f'i{t.bits}', dt.count)}"], o
    return _alias(a)


def from_bits(o: str, bits: str, dt: DType) -> CastResult:
    """An integer bit pattern -> a register value of ``dt``."""
    t = ll_type(dt)
    if dt.scalar() in NARROW_FLOATS:
        return narrow_decode(o, bits, dt, dt.count), o
    if t.kind == "f":
        return [f"{o} = bitcast {vec(f'i{t.bits}', dt.count)} {bits} to {t.ty}"], o
    return _alias(bits)


def render_bitcast(o: str, a: str, src: DType, dst: DType) -> CastResult:
    """Instructions reinterpreting ``a``'s bits as ``dst`` (same width per lane)."""
    if src.count != dst.count or src.scalar().itemsize != dst.scalar().itemsize:
        raise NotImplementedError(f"LLVM renderer: BITCAST {src!r} -> {dst!r} changes width")
    byte = vec("i8", src.count)
    if src.scalar() == dtypes.bool and dst.scalar() == dtypes.bool:
        return _alias(a)
    if src.scalar() == dtypes.bool:  # a bool is stored as the byte 0 or 1
        zext = [f"{o}.bits = zext {vec('i1', src.count)} {a} to {byte}"]
        more, out = from_bits(o, f"{o}.bits", dst)
        return zext + more, out
    lines, bits = to_bits(f"{o}.bits", a, src)
    if dst.scalar() == dtypes.bool:  # any nonzero byte reads as True, as a load of a bool does
        return [*lines, f"{o} = icmp ne {byte} {bits}, zeroinitializer"], o
    more, out = from_bits(o, bits, dst)
    return lines + more, out
