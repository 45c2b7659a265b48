"""The C renderer and the system C compiler: C11 (GNU dialect) with vector extensions.

``CRenderer().render(uops)`` prints a linear program as one C function following the CPU
calling convention (``fusegrad.renderer.signature``); ``CCompiler().compile(src)`` runs the
system compiler (``CC``, else gcc, clang or cc on PATH) with ``CC_FLAGS`` (default
``-O2 -march=native``) and returns an ELF relocatable object for ``load_elf``.

Semantics are ``exec_alu``'s: the flags that keep C exact are always added
(``-ffp-contract=off`` so ``a * b + c`` rounds twice, ``-fwrapv`` for wrapping integers,
``-fno-math-errno``), division and shifts are guarded (``c_ops``), and float16/bfloat16
compute in float32 with bit-exact round-to-nearest-even helpers (``c_prelude``).

Vector dtypes are GCC/Clang vector types (``vector_size``); ops whose vector operator has
the scalar semantics use it, the rest are written lane by lane (the compiler re-vectorizes).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from fusegrad.codegen import CompileError, Compiler, Renderer
from fusegrad.renderer.c_ops import (
    CODE_FOR_OP,
    NARROW_FLOATS,
    NATIVE_VECTOR_OPS,
    alu_expr,
    bitcast_expr,
    c_memory,
    c_scalar,
    cast_expr,
    literal,
    load_convert,
    store_convert,
)
from fusegrad.renderer.c_prelude import prelude
from fusegrad.renderer.flags import CC, CC_FLAGS
from fusegrad.renderer.host import host_cores, host_features, host_vector_widths
from fusegrad.renderer.signature import KernelSignature, kernel_signature
from fusegrad.uop import AddrSpace, DType, Ops, PtrDType, UOp, dtypes

_CPU_DTYPES = frozenset(dtypes.all) - {dtypes.weakint, dtypes.weakfloat, *dtypes.fp8s}
_SHORT = {
    "_Bool": "u8",
    "unsigned char": "u8",
    "int8_t": "i8",
    "uint8_t": "u8",
    "int16_t": "i16",
    "uint16_t": "u16",
    "int32_t": "i32",
    "uint32_t": "u32",
    "int64_t": "i64",
    "uint64_t": "u64",
    "float": "f32",
    "double": "f64",
}
_SIZE = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4, "u64": 8, "i64": 8, "f32": 4}
_HELPER_GROUPS = {
    "half": ("fg_h2f", "fg_f2h", "fg_d2h", "fg_rh", "fg_rhd"),
    "bfloat": ("fg_bf2f", "fg_f2bf", "fg_rbf"),
    "f2i": ("fg_f2i32", "fg_f2i64", "fg_f2u64"),
    "max": ("fg_maxf", "fg_maxd"),
    "bits": ("fg_fbits", "fg_bitsf", "fg_dbits", "fg_bitsd"),
}
_HELPER_CALL = re.compile(r"\b(fg_\w+)\(")


class _Function:
    """The state of rendering one C function."""

    def __init__(self, uops: list[UOp]) -> None:
        self.names: dict[UOp, str] = {}
        self.position = {u: i for i, u in enumerate(uops)}
        self.body: list[str] = []
        self.depth = 1
        self.typedefs: dict[str, str] = {}

    def emit(self, line: str) -> None:
        self.body.append("  " * self.depth + line)

    def vector_type(self, scalar: str, count: int) -> str:
        """A vector typedef of ``count`` lanes of C type ``scalar`` (declared once)."""
        short = _SHORT[scalar]
        name = f"fg_{short}x{count}"
        size = _SIZE.get(short, 8) * count
        if size & (size - 1):
            raise NotImplementedError(f"C renderer: vectors must be a power of two bytes ({name})")
        lane = "unsigned char" if scalar == "_Bool" else scalar
        self.typedefs[name] = f"typedef {lane} {name} __attribute__((vector_size({size})));"
        return name

    def ctype(self, dt: DType) -> str:
        """The register type of ``dt``."""
        scalar = c_scalar(dt)
        return scalar if dt.count == 1 else self.vector_type(scalar, dt.count)

    def mtype(self, dt: DType) -> str:
        """The global-memory type of ``dt`` (vectors as vector types)."""
        scalar = c_memory(dt)
        return scalar if dt.count == 1 else self.vector_type(scalar, dt.count)

    def define(self, u: UOp, expr: str) -> None:
        name = f"v{self.position[u]}"
        self.emit(f"{self.ctype(u.dtype)} {name} = {expr};")
        self.names[u] = name


def _lanes(f: _Function, dt: DType, lane_expr: Callable[[int], str]) -> str:
    """A vector of ``dt`` built lane by lane."""
    return f"({f.ctype(dt)}){{{', '.join(lane_expr(k) for k in range(dt.count))}}}"


def _lane(name: str, k: int, count: int) -> str:
    return name if count == 1 else f"{name}[{k}]"


# -- handlers -------------------------------------------------------------------------------


def _const(f: _Function, u: UOp) -> None:
    if u.dtype.count == 1:
        f.names[u] = literal(u.dtype, u.arg)
        return
    # a vector CONST (symbolic folds a vector compare to one): every lane the same literal
    f.names[u] = _lanes(f, u.dtype, lambda k: literal(u.dtype.scalar(), u.arg))


def _vconst(f: _Function, u: UOp) -> None:
    f.names[u] = _lanes(f, u.dtype, lambda k: literal(u.dtype.scalar(), u.arg[k]))


def _define_acc(f: _Function, u: UOp) -> None:
    assert isinstance(u.dtype, PtrDType)
    name = f"v{f.position[u]}"
    f.emit(f"{f.ctype(u.dtype.base)} {name}[{max(u.dtype.size, 1)}];")
    f.names[u] = name


def _range(f: _Function, u: UOp) -> None:
    name = f"v{f.position[u]}"
    t = c_scalar(u.dtype)
    f.emit(f"for ({t} {name} = 0; {name} < {f.names[u.src[0]]}; {name}++) {{")
    f.depth += 1
    f.names[u] = name


def _close(f: _Function, u: UOp) -> None:
    f.depth -= 1
    f.emit("}")


def _if(f: _Function, u: UOp) -> None:
    f.emit(f"if ({f.names[u.src[0]]}) {{")
    f.depth += 1


def _index(f: _Function, u: UOp) -> None:
    if u.src[1].dtype.count != 1 or (len(u.src) == 3 and u.src[2].dtype.count != 1):
        raise NotImplementedError("C renderer: INDEX with a vector index or per-lane gate")
    f.names[u] = f"({f.names[u.src[0]]} + {f.names[u.src[1]]})"


def _is_global(idx: UOp) -> bool:
    ptr = idx.src[0].dtype
    return isinstance(ptr, PtrDType) and ptr.addrspace is AddrSpace.GLOBAL


def _element_count(idx: UOp) -> int:
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    return ptr.base.count


def _load_value(f: _Function, u: UOp, tmp: str) -> str:
    """Emit the memory read of LOAD ``u`` (into ``tmp`` for vectors); its register value."""
    idx, dt = u.src[0], u.dtype
    glob = _is_global(idx)
    if dt.count == _element_count(idx):  # one element (a scalar, or a vector-typed element)
        return load_convert(dt, f"*{f.names[idx]}") if glob else f"*{f.names[idx]}"
    vtype = f.mtype(dt) if glob else f.ctype(dt)
    f.emit(f"{vtype} {tmp}; __builtin_memcpy(&{tmp}, {f.names[idx]}, sizeof {tmp});")
    if not glob or dt.scalar() not in (dtypes.bool, *NARROW_FLOATS):
        return tmp
    return _lanes(f, dt, lambda k: load_convert(dt.scalar(), f"{tmp}[{k}]"))


def _load(f: _Function, u: UOp) -> None:
    idx, name = u.src[0], f"v{f.position[u]}"
    if len(idx.src) < 3:
        f.define(u, _load_value(f, u, f"{name}_m"))
        return
    f.emit(f"{f.ctype(u.dtype)} {name} = {f.names[u.src[1]]};")
    f.emit(f"if ({f.names[idx.src[2]]}) {{")
    f.depth += 1
    f.emit(f"{name} = {_load_value(f, u, f'{name}_m')};")
    f.depth -= 1
    f.emit("}")
    f.names[u] = name


def _store_statement(f: _Function, u: UOp) -> str:
    idx, val = u.src
    dt, value = val.dtype, f.names[val]
    glob = _is_global(idx)
    if dt.count == _element_count(idx):
        return f"*{f.names[idx]} = {store_convert(dt, value) if glob else value};"
    tmp, vtype = f"s{f.position[u]}", f.mtype(dt) if glob else f.ctype(dt)
    if glob and dt.scalar() in (dtypes.bool, *NARROW_FLOATS):
        lanes = ", ".join(store_convert(dt.scalar(), f"{value}[{k}]") for k in range(dt.count))
        value = f"({vtype}){{{lanes}}}"
    return f"{{ {vtype} {tmp} = {value}; __builtin_memcpy({f.names[idx]}, &{tmp}, sizeof {tmp}); }}"


def _store(f: _Function, u: UOp) -> None:
    idx = u.src[0]
    statement = _store_statement(f, u)
    f.emit(statement if len(idx.src) < 3 else f"if ({f.names[idx.src[2]]}) {statement}")


def _alu(f: _Function, u: UOp) -> None:
    operand = u.src[-1].dtype if u.op is Ops.WHERE else u.src[0].dtype
    args = [f.names[s] for s in u.src]
    native = NATIVE_VECTOR_OPS.get("b" if operand.scalar() is dtypes.bool else _kind(operand))
    if operand.count == 1:
        f.define(u, alu_expr(u.op, operand, args))
    elif native and u.op in native and operand.scalar() not in NARROW_FLOATS:
        f.define(u, f"{args[0]} {native[u.op]} {args[1]}")
    else:
        counts = [s.dtype.count for s in u.src]
        f.define(
            u,
            _lanes(
                f,
                u.dtype,
                lambda k: alu_expr(
                    u.op,
                    operand.scalar(),
                    [_lane(a, k, n) for a, n in zip(args, counts, strict=True)],
                ),
            ),
        )


def _kind(dt: DType) -> str:
    s = dt.scalar()
    if dtypes.is_float(s):
        return "f"
    return "u" if s in dtypes.uints else "s"


def _cast(f: _Function, u: UOp) -> None:
    src, a = u.src[0].dtype, f.names[u.src[0]]
    if src.count != u.dtype.count:
        raise NotImplementedError(f"C renderer: {u.op!r} {src!r} -> {u.dtype!r} changes lanes")
    conv = cast_expr if u.op is Ops.CAST else bitcast_expr
    if src.count == 1:
        f.define(u, conv(a, src, u.dtype))
        return
    f.define(u, _lanes(f, u.dtype, lambda k: conv(f"{a}[{k}]", src.scalar(), u.dtype.scalar())))


def _vectorize(f: _Function, u: UOp) -> None:
    f.define(u, _lanes(f, u.dtype, lambda k: f.names[u.src[k]]))


def _gep(f: _Function, u: UOp) -> None:
    src, lanes = u.src[0], u.arg
    a = f.names[src]
    if len(lanes) == 1:
        f.define(u, _lane(a, lanes[0], src.dtype.count))
        return
    f.define(u, _lanes(f, u.dtype, lambda k: _lane(a, lanes[k], src.dtype.count)))


def _alias(f: _Function, u: UOp) -> None:
    f.names[u] = f.names[u.src[0]]  # AFTER: ordering only


def _nothing(f: _Function, u: UOp) -> None:
    pass  # BARRIER, SINK


def _end(f: _Function, u: UOp) -> None:
    if sum(s.op is Ops.RANGE for s in u.src) != 1:
        raise ValueError("C renderer: END must close exactly one RANGE")
    _close(f, u)


_HANDLERS: dict[Ops, Callable[[_Function, UOp], None]] = {
    Ops.CONST: _const,
    Ops.VCONST: _vconst,
    Ops.DEFINE_REG: _define_acc,
    Ops.DEFINE_LOCAL: _define_acc,
    Ops.RANGE: _range,
    Ops.END: _end,
    Ops.IF: _if,
    Ops.ENDIF: _close,
    Ops.INDEX: _index,
    Ops.LOAD: _load,
    Ops.STORE: _store,
    Ops.CAST: _cast,
    Ops.BITCAST: _cast,
    Ops.VECTORIZE: _vectorize,
    Ops.GEP: _gep,
    Ops.AFTER: _alias,
    Ops.BARRIER: _nothing,
    Ops.SINK: _nothing,
    **dict.fromkeys(CODE_FOR_OP, _alu),
}


def _parameters(f: _Function, sig: KernelSignature) -> list[str]:
    params = []
    for b in sig.buffers:
        assert isinstance(b.dtype, PtrDType)
        params.append(f"{c_memory(b.dtype.base)}* restrict buf{b.arg}")
        f.names[b] = f"buf{b.arg}"
    scalars = [(v, f"var{i}") for i, v in enumerate(sig.variables)]
    if sig.core is not None:
        scalars.append((sig.core, "core_id"))
    for node, name in scalars:
        params.append(f"int32_t {name}")
        f.names[node] = name if node.dtype is dtypes.int32 else f"(({c_scalar(node.dtype)}){name})"
    return params


def _helpers_used(body: str) -> set[str]:
    calls = set(_HELPER_CALL.findall(body))
    return {group for group, names in _HELPER_GROUPS.items() if calls.intersection(names)}


class CRenderer(Renderer):
    """Renders linear programs as C for the system C compiler (see the module docstring)."""

    device = "CPU"
    suffix = "C"
    has_local = False
    has_shared = False
    has_threads = True
    global_max = None
    local_max = None
    max_threads = host_cores()
    vector_widths: ClassVar[dict[DType, tuple[int, ...]]] = host_vector_widths()
    supported_dtypes = _CPU_DTYPES
    code_for_op: ClassVar[dict[Ops, Callable[..., str]]] = CODE_FOR_OP
    #: libm calls the lowering approximates on vectors (``lower/transcendental.py``): C's
    #: ``exp2f`` runs lane by lane, the approximation as vector code (3x faster); scalars
    #: keep libm (the C compiler does not vectorize the scalar approximation's loop at -O2)
    #: and so do LOG2 and SIN (their float64 and 64-bit integer steps, printed lane by lane
    #: in C, are slower than libm; tools/bench/transcendental.py)
    vector_approximated: ClassVar[frozenset[Ops]] = frozenset({Ops.EXP2})

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        """The C source of a linear program (``name`` as for ``LLVMRenderer.render``)."""
        sig = kernel_signature(uops, name)
        f = _Function(uops)
        params = _parameters(f, sig)
        for u in uops:
            if u.op in (Ops.PARAM, Ops.SPECIAL):
                continue
            handler = _HANDLERS.get(u.op)
            if handler is None:
                raise NotImplementedError(f"C renderer: can't render {u.op!r} in a linear program")
            handler(f, u)
        body = "\n".join(f.body)
        head = [prelude(_helpers_used(body)).rstrip("\n"), *f.typedefs.values()]
        signature = f"void {sig.name}({', '.join(params) or 'void'}) {{"
        return "\n".join([*head, signature, body, "}"]) + "\n"


# -- compiling ------------------------------------------------------------------------------

#: flags that keep C exactly exec_alu's semantics and the object loadable; always added
REQUIRED_FLAGS = (
    "-std=gnu11",
    "-ffp-contract=off",
    "-fwrapv",
    "-fno-math-errno",
    "-fno-strict-aliasing",
    "-fPIC",
    "-fno-stack-protector",
    "-fno-asynchronous-unwind-tables",
    "-fno-exceptions",
)
_CANDIDATES = ("gcc", "clang", "cc")
_ERROR_LINE = re.compile(r"<stdin>:(\d+):(?:\d+:)? (?:fatal )?error")
_FUNCTION = re.compile(r"^void ([A-Za-z_][A-Za-z0-9_]*)\(", re.MULTILINE)


class CCompilerNotFoundError(RuntimeError):
    """No C compiler to run: the message names what was tried and how to choose one."""


def find_c_compiler(requested: str | None = None) -> str:
    """The path of the C compiler to use: ``requested``, else ``CC``, else the first of gcc,
    clang, cc on PATH. Raises CCompilerNotFoundError naming what was tried."""
    wanted = requested or CC.value
    tried = [wanted] if wanted else list(_CANDIDATES)
    for name in tried:
        path = shutil.which(shlex.split(name)[0]) if name else None
        if path:
            return path
    hint = "set CC to a C compiler" if not wanted else f"CC={wanted!r} is not on PATH"
    raise CCompilerNotFoundError(
        f"C renderer: no C compiler found (tried {', '.join(tried)}); {hint}, or use the "
        "LLVM renderer, which needs none"
    )


def _compiler_version(path: str) -> str:
    try:
        out = subprocess.run(
            [path, "--version"], check=False, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


class CCompiler(Compiler):
    """C source -> ELF relocatable object with the system C compiler.

    ``cc``: the compiler (default: ``CC``, else gcc/clang/cc); ``flags``: optimization flags
    (default: ``CC_FLAGS``). The compiler's version, the flags and the host CPU's features
    (``-march=native`` depends on them) are in the cache key.
    """

    def __init__(self, cc: str | None = None, flags: str | None = None) -> None:
        self.cc = find_c_compiler(cc)
        self.flags = tuple(shlex.split(CC_FLAGS.value if flags is None else flags))
        self.version = _compiler_version(self.cc)
        features = ",".join(sorted(k for k, v in host_features().items() if v))
        key = f"cc:{self.cc}:{self.version}:{' '.join(self.flags)}:{features}"
        super().__init__(cache_key=key)

    def compile(self, src: str) -> bytes:
        """Compile ``src`` (from stdin, into a temporary folder removed afterwards)."""
        with tempfile.TemporaryDirectory(prefix="fusegrad-cc-") as tmp:
            out = Path(tmp) / "kernel.o"
            cmd = [self.cc, *REQUIRED_FLAGS, *self.flags, "-c", "-x", "c", "-", "-o", str(out)]
            try:
                proc = subprocess.run(
                    cmd, check=False, input=src, capture_output=True, text=True, timeout=600
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise CompileError(_kernel_of(src), f"{self.cc} failed to run: {exc}") from None
            if proc.returncode != 0 or not out.exists():
                message = f"{Path(self.cc).name} exited with {proc.returncode}:\n{proc.stderr}"
                lines = [int(n) for n in _ERROR_LINE.findall(proc.stderr)]
                raise CompileError(_kernel_of(src), message, src, lines)
            return out.read_bytes()


def _kernel_of(src: str) -> str:
    m = _FUNCTION.search(src)
    return m.group(1) if m else "<unnamed kernel>"
