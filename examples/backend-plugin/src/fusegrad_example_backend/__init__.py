"""An example fusegrad backend: a C renderer variant + a Compiled subclass.

The renderer handles scalar linear programs on the CPU (loops, THREAD-split core ids,
gated loads and stores, registers, every ALU op, casts and bitcasts of the C-native dtypes);
it declares no vector widths, no local memory and no half/bfloat16/fp8, so the lowering
pipeline devectorizes and emulates those before rendering.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from fusegrad.codegen import CompileError, Compiler, Renderer
from fusegrad.runtime import CompilerOption, CPUDevice, CPUProgram, Unavailable
from fusegrad.uop import DType, Ops, PtrDType, UOp, dtypes

C_TYPES: dict[DType, str] = {
    dtypes.bool: "_Bool", dtypes.int8: "int8_t", dtypes.uint8: "uint8_t",
    dtypes.int16: "int16_t", dtypes.uint16: "uint16_t", dtypes.int32: "int32_t",
    dtypes.uint32: "uint32_t", dtypes.int64: "int64_t", dtypes.uint64: "uint64_t",
    dtypes.float32: "float", dtypes.float64: "double",
}  # fmt: skip


def _nan_max(a: str, b: str) -> str:
    return f"(({a} != {a} || {a} > {b}) ? {a} : {b})"


CODE_FOR_OP: dict[Ops, Any] = {
    Ops.ADD: lambda a, b: f"({a} + {b})",
    Ops.SUB: lambda a, b: f"({a} - {b})",
    Ops.MUL: lambda a, b: f"({a} * {b})",
    Ops.FDIV: lambda a, b: f"({a} / {b})",
    Ops.CDIV: lambda a, b: f"({a} / {b})",  # ints: _int_alu guards 0 and MIN / -1
    Ops.CMOD: lambda a, b: f"fmod({a}, {b})",  # floats; ints: _int_alu
    Ops.MAX: _nan_max,
    Ops.CMPLT: lambda a, b: f"({a} < {b})",
    Ops.CMPNE: lambda a, b: f"({a} != {b})",
    Ops.CMPEQ: lambda a, b: f"({a} == {b})",
    Ops.AND: lambda a, b: f"({a} & {b})",
    Ops.OR: lambda a, b: f"({a} | {b})",
    Ops.XOR: lambda a, b: f"({a} ^ {b})",
    Ops.SHL: lambda a, b: f"({a} << {b})",
    Ops.SHR: lambda a, b: f"({a} >> {b})",
    Ops.NEG: lambda a: f"(-{a})",
    Ops.SQRT: lambda a: f"sqrt({a})",
    Ops.EXP2: lambda a: f"exp2({a})",
    Ops.LOG2: lambda a: f"log2({a})",
    Ops.SIN: lambda a: f"sin({a})",
    Ops.TRUNC: lambda a: f"trunc({a})",
    Ops.RECIPROCAL: lambda a: f"(1.0 / {a})",
    Ops.WHERE: lambda c, a, b: f"({c} ? {a} : {b})",
}


def _literal(value: Any, dt: DType) -> str:
    ctype = C_TYPES[dt]
    if dtypes.is_float(dt):
        if math.isnan(value):
            return f"(({ctype})NAN)"
        if math.isinf(value):
            return f"(({ctype}){'-' if value < 0 else ''}INFINITY)"
        return f"(({ctype}){float(value).hex()})"
    if dt is dtypes.bool:
        return "1" if value else "0"
    suffix = "ull" if dtypes.is_unsigned(dt) else "ll"
    if value == -(2**63):
        return "((int64_t)(-9223372036854775807ll - 1))"
    return f"(({ctype}){int(value)}{suffix})"


class _Ctx:
    """Rendering state: a C name per value, the parameter list, the body lines."""

    def __init__(self) -> None:
        self.names: dict[UOp, str] = {}
        self.params: list[str] = []
        self.buffers: dict[int, str] = {}
        self.body: list[str] = []
        self.depth = 1

    def line(self, text: str) -> None:
        self.body.append("  " * self.depth + text)

    def src(self, u: UOp) -> list[str]:
        return [self.names[s] for s in u.src]

    def ptr(self, index: UOp) -> tuple[str, str]:
        """(pointer expression, gate expression or "") of an INDEX."""
        s = self.src(index)
        return f"({s[0]} + {s[1]})", (s[2] if len(s) == 3 else "")


def _param(ctx: _Ctx, u: UOp, var: str) -> None:
    if isinstance(u.dtype, PtrDType):
        ctx.names[u] = f"data{u.arg}"
        ctx.buffers[u.arg] = f"{C_TYPES[u.dtype.base]}* restrict data{u.arg}"
        return
    ctx.names[u] = str(u.arg[0])
    ctx.params.append(f"{C_TYPES[u.dtype]} {u.arg[0]}")


def _special(ctx: _Ctx, u: UOp, var: str) -> None:
    if u.arg != "core":
        raise NotImplementedError(f"ExampleRenderer: no GPU ids ({u.arg})")
    ctx.names[u] = "core_id"


def _define_reg(ctx: _Ctx, u: UOp, var: str) -> None:
    assert isinstance(u.dtype, PtrDType)
    ctx.names[u] = var
    ctx.line(f"{C_TYPES[u.dtype.base]} {var}[{u.dtype.size}];")


def _open(ctx: _Ctx, text: str) -> None:
    ctx.line(text)
    ctx.depth += 1


def _close(ctx: _Ctx, u: UOp, var: str) -> None:
    ctx.depth -= 1
    ctx.line("}")


def _range(ctx: _Ctx, u: UOp, var: str) -> None:
    ctx.names[u] = var
    end = ctx.names[u.src[0]]
    _open(ctx, f"for ({C_TYPES[u.dtype]} {var} = 0; {var} < {end}; {var}++) {{")


def _load(ctx: _Ctx, u: UOp, var: str) -> None:
    ptr, gate = ctx.ptr(u.src[0])
    expr = f"({gate} ? *{ptr} : {ctx.names[u.src[1]]})" if gate else f"*{ptr}"
    _value(ctx, u, var, expr)


def _store(ctx: _Ctx, u: UOp, var: str) -> None:
    ptr, gate = ctx.ptr(u.src[0])
    guard = f"if ({gate}) " if gate else ""
    ctx.line(f"{guard}*{ptr} = {ctx.names[u.src[1]]};")


def _bitcast(ctx: _Ctx, u: UOp, var: str) -> None:
    ctx.names[u] = var
    ctx.line(f"{C_TYPES[u.dtype]} {var};")
    tmp = f"{C_TYPES[u.src[0].dtype]} t_{var} = {ctx.names[u.src[0]]};"
    ctx.line(f"{{ {tmp} memcpy(&{var}, &t_{var}, sizeof {var}); }}")


def _value(ctx: _Ctx, u: UOp, var: str, expr: str) -> None:
    ctx.names[u] = var
    ctx.line(f"{C_TYPES[u.dtype]} {var} = {expr};")


def _int_div(dt: DType, a: str, b: str, op: str) -> str:
    # x / 0 and x % 0 are 0; MIN / -1 wraps to MIN and MIN % -1 is 0 (the CPU would trap)
    minus_one = (
        "" if dtypes.is_unsigned(dt) else f"{b} == -1 ? {'0' if op == '%' else _wrap_neg(dt, a)} : "
    )
    return f"({b} == 0 ? 0 : {minus_one}{a} {op} {b})"


def _wrap_neg(dt: DType, a: str) -> str:
    return f"({C_TYPES[dt]})(0ull - (uint64_t){a})"


def _shift(dt: DType, a: str, b: str, left: bool) -> str:
    # shifts by a negative or a too large amount give 0 (or -1 for a negative >>), like exec_alu
    if left:
        return f"(({b}) < 0 || ({b}) >= 64 ? 0 : ({C_TYPES[dt]})((uint64_t){a} << {b}))"
    wide = "uint64_t" if dtypes.is_unsigned(dt) else "int64_t"
    fill = "0" if dtypes.is_unsigned(dt) else f"({a} < 0 ? -1 : 0)"
    return f"(({b}) < 0 || ({b}) >= 64 ? {fill} : ({C_TYPES[dt]})(({wide}){a} >> {b}))"


def _float_max(dt: DType, a: str, b: str) -> str:
    # NaN propagates; max(-0.0, 0.0) is 0.0 whichever side it is on
    return f"({a} != {a} ? {a} : {b} != {b} ? {b} : {a} == {b} ? (signbit({a}) ? {b} : {a}) : {a} > {b} ? {a} : {b})"


INT_RULES: dict[Ops, Any] = {
    Ops.CDIV: lambda dt, a, b: _int_div(dt, a, b, "/"),
    Ops.CMOD: lambda dt, a, b: _int_div(dt, a, b, "%"),
    Ops.SHL: lambda dt, a, b: _shift(dt, a, b, True),
    Ops.SHR: lambda dt, a, b: _shift(dt, a, b, False),
    Ops.NEG: _wrap_neg,  # -MIN wraps to MIN
    Ops.TRUNC: lambda dt, a: a,  # an integer is its own truncation
}
FLOAT_RULES: dict[Ops, Any] = {Ops.MAX: _float_max}
BOOL_RULES: dict[Ops, Any] = {Ops.NEG: lambda dt, a: f"(!{a})", Ops.TRUNC: lambda dt, a: a}


def _rules(dt: DType) -> dict[Ops, Any]:
    if dt is dtypes.bool:
        return BOOL_RULES
    return FLOAT_RULES if dtypes.is_float(dt) else INT_RULES


def _alu(ctx: _Ctx, u: UOp, var: str) -> None:
    dt = u.src[0].dtype
    rule = _rules(dt).get(u.op)
    if rule is not None:
        _value(ctx, u, var, rule(dt, *ctx.src(u)))
        return
    _value(ctx, u, var, CODE_FOR_OP[u.op](*ctx.src(u)))


def _cast_expr(to: DType, frm: DType, x: str) -> str:
    """C for a cast with fusegrad's semantics (``fusegrad.uop.truncate``): ints -> float go
    through double; float -> int truncates through a 32- or 64-bit register (out of range:
    that register's minimum, wrapped), uint64 taking all of [0, 2**64)."""
    ctype = C_TYPES[to]
    if dtypes.is_float(to) and not dtypes.is_float(frm):
        return f"({ctype})(double)({x})"
    if not dtypes.is_float(frm) or dtypes.is_float(to) or to is dtypes.bool:
        return f"({ctype})({x})"
    if to is dtypes.uint64:
        return f"({x} >= 0 && {x} < 18446744073709551616.0 ? (uint64_t)({x}) : (uint64_t)(int64_t)({x}))"
    through = "int32_t" if to.itemsize < 4 or to is dtypes.int32 else "int64_t"
    return f"({ctype})({through})({x})"


def _alias(ctx: _Ctx, u: UOp, var: str) -> None:
    ctx.names[u] = ctx.names[u.src[0]]


RENDER_RULES: dict[Ops, Any] = {
    Ops.PARAM: _param,
    Ops.CONST: lambda ctx, u, var: ctx.names.__setitem__(u, _literal(u.arg, u.dtype)),
    Ops.SPECIAL: _special,
    Ops.DEFINE_REG: _define_reg,
    Ops.AFTER: _alias,
    Ops.RANGE: _range,
    Ops.END: _close,
    Ops.IF: lambda ctx, u, var: _open(ctx, f"if ({ctx.names[u.src[0]]}) {{"),
    Ops.ENDIF: _close,
    Ops.INDEX: lambda ctx, u, var: None,  # folded into the LOAD/STORE using it
    Ops.LOAD: _load,
    Ops.STORE: _store,
    Ops.CAST: lambda ctx, u, var: _value(
        ctx, u, var, _cast_expr(u.dtype, u.src[0].dtype, ctx.names[u.src[0]])
    ),
    Ops.BITCAST: _bitcast,
    Ops.BARRIER: lambda ctx, u, var: None,  # one thread per core: nothing to wait for
    **{op: _alu for op in CODE_FOR_OP},
}


class ExampleRenderer(Renderer):
    """Linear programs as C functions with the CPU calling convention."""

    device = "EXAMPLE"
    suffix = "EXC"
    has_threads = True
    max_threads = 8
    supported_dtypes = frozenset(C_TYPES)
    code_for_op: ClassVar[dict[Ops, Any]] = CODE_FOR_OP

    def render(self, uops: list[UOp], name: str = "kernel") -> str:
        """The C source of one kernel named ``name``."""
        ctx = _Ctx()
        for i, u in enumerate(uops):
            rule = RENDER_RULES.get(u.op)
            if rule is None:
                raise NotImplementedError(f"ExampleRenderer: can't render {u.op!r}")
            rule(ctx, u, f"v{i}")
        # the calling convention: buffers by slot, then Variables, then the core id
        params = [ctx.buffers[k] for k in sorted(ctx.buffers)] + ctx.params
        if any(u.op is Ops.SPECIAL and u.arg == "core" for u in uops):
            params.append("int32_t core_id")
        head = "#include <stdint.h>\n#include <string.h>\n#include <math.h>\n"
        signature = f"void {name}({', '.join(params)})"
        return f"{head}{signature} {{\n" + "\n".join(ctx.body) + "\n}\n"


class ExampleCompiler(Compiler):
    """C source -> a shared library (bytes), built by the system C compiler."""

    cache_key = "example-cc-O2-fwrapv"

    def __init__(self) -> None:
        super().__init__()
        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if cc is None:
            raise Unavailable("no C compiler (cc, gcc or clang) on PATH")
        self.cc = cc

    def compile(self, src: str) -> bytes:
        """Compile with ``-O2 -shared -fPIC``; errors become CompileError."""
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "kernel.so"
            # -fwrapv: signed integers wrap around (fusegrad's int semantics), no UB to exploit
            args = [self.cc, "-O2", "-fwrapv", "-shared", "-fPIC", "-x", "c", "-", "-o", str(out),
                    "-lm"]  # fmt: skip
            done = subprocess.run(args, input=src.encode(), capture_output=True, check=False)
            if done.returncode != 0:
                raise CompileError("kernel", done.stderr.decode(), src)
            return out.read_bytes()


class ExampleDevice(CPUDevice):
    """The CPU device with the example renderer: host memory, cores, ctypes calls."""

    def __init__(self, device: str = "EXAMPLE") -> None:
        option = CompilerOption("EXC", lambda: (ExampleRenderer(), ExampleCompiler()))
        super().__init__(device, compilers=[option], runtime=CPUProgram)
