"""C expressions for each ALU op and for CAST/BITCAST, with ``exec_alu``'s exact semantics.

An op's entry takes ``(dtype, *operands)`` — the operands' scalar dtype and C expressions
(variable names or literals, each evaluated once) — and returns a C expression; the renderer
assigns it to a variable of the result type, which is where narrow integer results wrap
(GCC and Clang define out-of-range conversions to signed types as wrapping; the kernel is
compiled with ``-fwrapv`` for the int/long arithmetic). Guards give ``exec_alu``'s results
where C would be undefined: division by zero is 0, shifts past the width are defined.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from fusegrad.uop import DType, Ops, dtypes

NARROW_FLOATS = (dtypes.float16, dtypes.bfloat16)

_C_REGISTER = {
    dtypes.bool: "_Bool",
    dtypes.int8: "int8_t",
    dtypes.uint8: "uint8_t",
    dtypes.int16: "int16_t",
    dtypes.uint16: "uint16_t",
    dtypes.int32: "int32_t",
    dtypes.uint32: "uint32_t",
    dtypes.int64: "int64_t",
    dtypes.uint64: "uint64_t",
    dtypes.float16: "float",
    dtypes.bfloat16: "float",
    dtypes.float32: "float",
    dtypes.float64: "double",
}


def c_scalar(dt: DType) -> str:
    """The C type of one lane of ``dt`` in registers."""
    s = dt.scalar()
    if s not in _C_REGISTER:
        raise NotImplementedError(f"C renderer: no C type for {dt!r}")
    return _C_REGISTER[s]


def c_memory(dt: DType) -> str:
    """The C type of one element of ``dt`` in a global buffer."""
    s = dt.scalar()
    if s is dtypes.bool:
        return "unsigned char"
    return "uint16_t" if s in NARROW_FLOATS else c_scalar(s)


def _unsigned(dt: DType) -> str:
    return f"uint{dt.itemsize * 8}_t"


def literal(dt: DType, v: object) -> str:
    """A C literal of scalar dtype ``dt``."""
    s = dt.scalar()
    if s is dtypes.bool:
        return "1" if v else "0"
    if dtypes.is_float(s):
        return _float_literal(float(v), "f" if c_scalar(s) == "float" else "")  # type: ignore[arg-type]
    value = int(v)  # type: ignore[call-overload]
    if -(2**31) < value < 2**31:
        return f"(({c_scalar(s)}){value})"
    return f"(({c_scalar(s)})0x{value & ((1 << s.itemsize * 8) - 1):X}ull)"


def _float_literal(x: float, suffix: str) -> str:
    if math.isnan(x):
        return f'__builtin_nan{suffix}("")'
    if math.isinf(x):
        return f"{'-' if x < 0 else ''}__builtin_inf{suffix}()"
    return f"{x.hex()}{suffix}"


# -- ALU -------------------------------------------------------------------------------------

CExpr = Callable[..., str]


def _kind(dt: DType) -> str:
    if dt is dtypes.bool:
        return "b"
    if dtypes.is_float(dt):
        return "f"
    return "u" if dt in dtypes.uints else "s"


def _infix(op: str, bool_op: str | None = None) -> CExpr:
    def render(dt: DType, a: str, b: str) -> str:
        return f"{a} {bool_op if bool_op and dt is dtypes.bool else op} {b}"

    return render


def _cdiv(dt: DType, a: str, b: str) -> str:
    if _kind(dt) == "u":
        return f"({b} == 0 ? 0 : {a} / {b})"
    # -a wraps for the minimum; narrow types promote to int, so only int32/int64 need it
    neg = f"({c_scalar(dt)})(0 - ({_unsigned(dt)}){a})"
    return f"({b} == 0 ? 0 : {b} == -1 ? {neg} : {a} / {b})"


def _cmod(dt: DType, a: str, b: str) -> str:
    if _kind(dt) == "u":
        return f"({b} == 0 ? 0 : {a} % {b})"
    return f"({b} == 0 || {b} == -1 ? 0 : {a} % {b})"


def _floordiv(dt: DType, a: str, b: str) -> str:
    if _kind(dt) == "u":
        return _cdiv(dt, a, b)
    t = c_scalar(dt)
    return (
        f"({{ {t} q_ = {_cdiv(dt, a, b)}, r_ = {_cmod(dt, a, b)}; "
        f"({t})(q_ - (r_ != 0 && ((r_ ^ {b}) < 0))); }})"
    )


def _floormod(dt: DType, a: str, b: str) -> str:
    if _kind(dt) == "u":
        return _cmod(dt, a, b)
    t = c_scalar(dt)
    return (
        f"({{ {t} r_ = {_cmod(dt, a, b)}; ({t})(r_ != 0 && ((r_ ^ {b}) < 0) ? r_ + {b} : r_); }})"
    )


def _max(dt: DType, a: str, b: str) -> str:
    kind = _kind(dt)
    if kind == "b":
        return f"{a} | {b}"
    if kind == "f":
        return f"fg_max{'d' if dt is dtypes.float64 else 'f'}({a}, {b})"
    return f"({a} > {b} ? {a} : {b})"


def _shl(dt: DType, a: str, b: str) -> str:
    u, bits = _unsigned(dt), dt.itemsize * 8
    return f"(({u}){b} < {bits} ? ({c_scalar(dt)})(({u}){a} << {b}) : 0)"


def _shr(dt: DType, a: str, b: str) -> str:
    u, bits = _unsigned(dt), dt.itemsize * 8
    if _kind(dt) == "s":  # past the width only the sign remains: shift by width - 1
        return f"({a} >> (({u}){b} < {bits} ? {b} : {bits - 1}))"
    return f"(({u}){b} < {bits} ? {a} >> {b} : 0)"


def _neg(dt: DType, a: str) -> str:
    return f"!{a}" if dt is dtypes.bool else f"-{a}"


def _math(name: str, int_identity: bool = False) -> CExpr:
    def render(dt: DType, a: str) -> str:
        if not dtypes.is_float(dt):
            if int_identity:
                return a
            raise NotImplementedError(f"C renderer: {name} of {dt!r}")
        return f"__builtin_{name}{'' if dt is dtypes.float64 else 'f'}({a})"

    return render


def _reciprocal(dt: DType, a: str) -> str:
    return f"{literal(dt, 1.0)} / {a}"


def _mulacc(dt: DType, a: str, b: str, c: str) -> str:
    if dt is dtypes.bool:
        return f"({a} & {b}) | {c}"
    if dt is dtypes.float64:
        return f"__builtin_fma({a}, {b}, {c})"  # exec_alu: fused, one rounding
    if dt is dtypes.float32:
        return f"__builtin_fmaf({a}, {b}, {c})"
    # integers wrap; float16/bfloat16 never get here (alu_expr rounds the product, then the sum)
    return f"{a} * {b} + {c}"


CODE_FOR_OP: dict[Ops, CExpr] = {
    Ops.ADD: _infix("+", "|"),  # bool + bool saturates
    Ops.SUB: _infix("-", "^"),
    Ops.MUL: _infix("*", "&"),
    Ops.FDIV: _infix("/"),
    Ops.CDIV: _cdiv,
    Ops.CMOD: _cmod,
    Ops.FLOORDIV: _floordiv,
    Ops.FLOORMOD: _floormod,
    Ops.MAX: _max,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.AND: _infix("&"),
    Ops.OR: _infix("|"),
    Ops.XOR: _infix("^"),
    Ops.CMPLT: _infix("<"),
    Ops.CMPNE: _infix("!="),
    Ops.CMPEQ: _infix("=="),
    Ops.NEG: _neg,
    Ops.RECIPROCAL: _reciprocal,
    Ops.SQRT: _math("sqrt"),
    Ops.EXP2: _math("exp2"),
    Ops.LOG2: _math("log2"),
    Ops.SIN: _math("sin"),
    Ops.TRUNC: _math("trunc", int_identity=True),
    Ops.WHERE: lambda dt, c, a, b: f"{c} ? {a} : {b}",
    Ops.MULACC: _mulacc,
}

ROUNDED_OPS = frozenset(
    {Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.RECIPROCAL, Ops.SQRT, Ops.EXP2, Ops.LOG2, Ops.SIN}
)

#: vector ops whose GCC/Clang vector-extension operator has exactly the scalar semantics
NATIVE_VECTOR_OPS = {
    "f": {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.FDIV: "/"},
    "s": {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^"},
    "u": {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^"},
}


def round_to(dt: DType, expr: str) -> str:
    """``expr`` (a float) rounded to float16/bfloat16's values, as a float."""
    return f"fg_rh({expr})" if dt.scalar() is dtypes.float16 else f"fg_rbf({expr})"


def alu_expr(op: Ops, dt: DType, args: list[str]) -> str:
    """The scalar C expression of ``op`` on operands of scalar dtype ``dt``."""
    if op not in CODE_FOR_OP:
        raise NotImplementedError(f"C renderer: {op!r} is not rendered natively")
    if dt not in NARROW_FLOATS or op not in (*ROUNDED_OPS, Ops.MULACC):
        return CODE_FOR_OP[op](dt, *args)
    if op is Ops.MULACC:  # exec_alu: round(round(a * b) + c)
        return round_to(dt, f"{round_to(dt, f'{args[0]} * {args[1]}')} + {args[2]}")
    return round_to(dt, CODE_FOR_OP[op](dt, *args))


# -- casts -----------------------------------------------------------------------------------


def _int_to_float(a: str, src: DType, dst: DType) -> str:
    wide = f"(double){a}"  # exec_alu converts through a Python (double) float
    if dst is dtypes.float64:
        return wide
    if dst is dtypes.float32:
        return f"(float){wide}" if src.itemsize == 8 else f"(float){a}"
    if dst is dtypes.float16:
        return f"fg_rhd({wide})"
    return f"fg_rbf((float){wide})"


def _float_to_float(a: str, src: DType, dst: DType) -> str:
    from_double = src is dtypes.float64
    if dst is dtypes.float64:
        return f"(double){a}"
    if dst is dtypes.float32:
        return f"(float){a}" if from_double else a
    if dst is dtypes.float16:
        return f"fg_rhd({a})" if from_double else f"fg_rh({a})"
    return f"fg_rbf((float){a})" if from_double else f"fg_rbf({a})"


def cast_expr(a: str, src: DType, dst: DType) -> str:
    """Scalar CAST with exec_alu's semantics (ints wrap; floats round to nearest even;
    float -> int truncates through a 32- or 64-bit register like x86, see ``fg_f2i32``)."""
    s, d = src.scalar(), dst.scalar()
    if s is d:
        return a
    if d is dtypes.bool:
        return f"{a} != 0"
    if s is dtypes.bool:
        return f"({c_scalar(d)}){a}"
    if dtypes.is_float(s) and dtypes.is_float(d):
        return _float_to_float(a, s, d)
    if dtypes.is_float(d):
        return _int_to_float(a, s, d)
    if dtypes.is_float(s):
        through = (
            "u64" if d is dtypes.uint64 else "i32" if d.itemsize < 4 or d is dtypes.int32 else "i64"
        )
        return f"({c_scalar(d)})fg_f2{through}({a})"
    return f"({c_scalar(d)}){a}"


_TO_BITS = {dtypes.float16: "fg_f2h", dtypes.bfloat16: "fg_f2bf", dtypes.float32: "fg_fbits"}
_FROM_BITS = {dtypes.float16: "fg_h2f", dtypes.bfloat16: "fg_bf2f", dtypes.float32: "fg_bitsf"}


def bitcast_expr(a: str, src: DType, dst: DType) -> str:
    """Scalar BITCAST (same width): through the unsigned integer of that width."""
    s, d = src.scalar(), dst.scalar()
    if s.itemsize != d.itemsize:
        raise NotImplementedError(f"C renderer: BITCAST {src!r} -> {dst!r}")
    if s is d:
        return a
    if s is dtypes.bool:  # a bool is stored as the byte 0 or 1
        a, s = f"(unsigned char)({a})", dtypes.uint8
    if d is dtypes.bool:  # any nonzero byte reads as True, as a load of a bool does
        return f"({bitcast_expr(a, s, dtypes.uint8)} != 0)"
    to_bits = {**_TO_BITS, dtypes.float64: "fg_dbits"}.get(s)
    bits = f"{to_bits}({a})" if to_bits else f"({_unsigned(s)}){a}"
    from_bits = {**_FROM_BITS, dtypes.float64: "fg_bitsd"}.get(d)
    return f"{from_bits}({bits})" if from_bits else f"({c_scalar(d)}){bits}"


def load_convert(dt: DType, m: str) -> str:
    """A global-memory element -> its register value."""
    s = dt.scalar()
    if s is dtypes.bool:
        return f"({m} != 0)"
    return {dtypes.float16: f"fg_h2f({m})", dtypes.bfloat16: f"fg_bf2f({m})"}.get(s, m)


def store_convert(dt: DType, v: str) -> str:
    """A register value -> its global-memory element."""
    s = dt.scalar()
    if s is dtypes.bool:
        return f"(unsigned char){v}"
    return {dtypes.float16: f"fg_f2h({v})", dtypes.bfloat16: f"fg_f2bf({v})"}.get(s, v)
