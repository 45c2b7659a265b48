"""The LLVM IR renderer and its in-process compiler (llvmlite): fusegrad's default CPU path.

``LLVMRenderer().render(uops)`` prints a linear program (``fusegrad.codegen.spec``) as one
LLVM function following the CPU calling convention (``fusegrad.renderer.signature``).
``LLVMCompiler().compile(src)`` optimizes it for the host CPU (its real features: AVX2,
AVX-512...) and returns an ELF relocatable object, which ``load_elf`` maps into memory.

Rendered IR is host-independent: no target triple, CPU or feature attributes appear in it
(the compiler's target machine supplies them), so golden files hold on any machine.

Semantics are ``exec_alu``'s, exactly: floats are IEEE (no fast-math flags unless
``LLVM_FASTMATH=1``; MULACC is ``llvm.fma``, one rounding, on float32/float64 and a rounded
multiply then a rounded add on narrower floats), integer division by
zero gives 0, shifts past the width are defined (see ``llvm_ops``), float16/bfloat16 compute
in float32 and round to nearest even after every op (``llvm_types``).

Its lowering rule (``LLVM_MATCHER``, the renderer's ``extra_matcher``) puts back together the
vector loads devectorize splits lane by lane because the lanes' gates differ (the padded taps
of a convolution): one ``llvm.masked.load``, which reads no masked-off lane, instead of a
branch per lane.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import llvmlite.binding as llvm
from fusegrad.codegen import CompileError, Compiler, Renderer
from fusegrad.renderer.flags import LLVM_CPU, LLVM_FASTMATH, LLVM_FEATURES, LLVM_OPT
from fusegrad.renderer.host import host_cores, host_vector_widths
from fusegrad.renderer.llvm_ops import (
    CODE_FOR_OP,
    ROUNDED_OPS,
    render_bitcast,
    render_cast,
)
from fusegrad.renderer.llvm_types import (
    NARROW_FLOATS,
    element_scalar,
    ll_type,
    narrow_decode,
    narrow_encode,
    round_narrow,
    scalar_literal,
    vec,
)
from fusegrad.renderer.signature import KernelSignature, kernel_signature
from fusegrad.uop import AddrSpace, DType, Ops, PatternMatcher, PtrDType, UOp, UPat, dtypes

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()

_CPU_DTYPES = frozenset(dtypes.all) - {dtypes.weakint, dtypes.weakfloat, *dtypes.fp8s}

#: How the transcendentals are computed (``fusegrad.codegen.lower.transcendental`` has
#: branch-free polynomial approximations): LLVM's code generator turns ``llvm.exp2/log2/sin``
#: into libm calls, one per lane of a vector, while the approximations compile to vector
#: instructions — several times faster on vectors (tools/bench/transcendental.py), within
#: 2-ulp-class float32 bounds. EXP2 is approximated always (faster even as a scalar call);
#: LOG2 and SIN on vectors only (a scalar libm call beats the scalar approximation in a
#: loop LLVM cannot vectorize). ``llvm.sqrt`` is one instruction.
APPROXIMATED_OPS = frozenset({Ops.EXP2})
VECTOR_APPROXIMATED_OPS = frozenset({Ops.LOG2, Ops.SIN})


class _Function:
    """The state of rendering one function: value names, the body, the current block."""

    def __init__(self, fmf: str, uops: list[UOp]) -> None:
        self.fmf = fmf
        self.names: dict[UOp, str] = {}
        self.position = {u: i for i, u in enumerate(uops)}
        self.allocas: list[str] = []
        self.body: list[str] = []
        self.block = "entry"

    def emit(self, *lines: str) -> None:
        for line in lines:
            self.body.extend(f"  {x}" for x in line.split("\n"))

    def label(self, name: str) -> None:
        self.body.append(f"{name}:")
        self.block = name

    def out(self, u: UOp) -> str:
        return f"%v{self.position[u]}"

    def typed(self, u: UOp) -> str:
        """``type value`` of an operand."""
        return f"{ll_type(u.dtype).ty} {self.names[u]}"


# -- handlers per op -----------------------------------------------------------------------


def _const(f: _Function, u: UOp) -> None:
    f.names[u] = ll_type(u.dtype).const(u.arg)


def _vconst(f: _Function, u: UOp) -> None:
    scalar = ll_type(u.dtype).scalar
    f.names[u] = "<" + ", ".join(f"{scalar} {scalar_literal(scalar, v)}" for v in u.arg) + ">"


def _define_acc(f: _Function, u: UOp) -> None:
    assert isinstance(u.dtype, PtrDType)
    elem = vec(element_scalar(u.dtype), u.dtype.base.count)
    f.allocas.append(f"{f.out(u)} = alloca [{max(u.dtype.size, 1)} x {elem}], align 32")
    f.names[u] = f.out(u)


def _range(f: _Function, u: UOp) -> None:
    o, i, t = f.out(u), f.position[u], ll_type(u.dtype)
    pre = f.block
    f.emit(f"br label %loop{i}")
    f.label(f"loop{i}")
    f.emit(
        f"{o} = phi {t.ty} [ {t.const(0)}, %{pre} ], [ {o}.next, %loop{i}.latch ]",
        f"{o}.more = icmp slt {t.ty} {o}, {f.names[u.src[0]]}",
        f"br i1 {o}.more, label %loop{i}.body, label %loop{i}.exit",
    )
    f.label(f"loop{i}.body")
    f.names[u] = o


def _end(f: _Function, u: UOp) -> None:
    ranges = [s for s in u.src if s.op is Ops.RANGE]
    if len(ranges) != 1:
        raise ValueError(f"LLVM renderer: END must close exactly one RANGE, got {len(ranges)}")
    rng = ranges[0]
    o, i, t = f.names[rng], f.position[rng], ll_type(rng.dtype)
    f.emit(f"br label %loop{i}.latch")
    f.label(f"loop{i}.latch")
    f.emit(f"{o}.next = add {t.ty} {o}, {t.const(1)}", f"br label %loop{i}")
    f.label(f"loop{i}.exit")


def _if(f: _Function, u: UOp) -> None:
    i = f.position[u]
    f.emit(f"br i1 {f.names[u.src[0]]}, label %if{i}.then, label %if{i}.end")
    f.label(f"if{i}.then")


def _endif(f: _Function, u: UOp) -> None:
    i = f.position[u.src[0]]
    f.emit(f"br label %if{i}.end")
    f.label(f"if{i}.end")


def _index(f: _Function, u: UOp) -> None:
    ptr = u.src[0].dtype
    assert isinstance(ptr, PtrDType)
    if ptr.vcount != 1 or u.src[1].dtype.count != 1:
        raise NotImplementedError("LLVM renderer: INDEX with a vector index (gather)")
    # a per-lane gate (a masked vector load) may start outside the buffer at a masked-off
    # lane: no ``inbounds``, whose out-of-bounds result would be poison
    inbounds = "" if len(u.src) == 3 and u.src[2].dtype.count != 1 else "inbounds "
    elem = vec(element_scalar(ptr), ptr.base.count)
    f.emit(
        f"{f.out(u)} = getelementptr {inbounds}{elem}, ptr {f.names[u.src[0]]}, {f.typed(u.src[1])}"
    )
    f.names[u] = f.out(u)


def _is_global(idx: UOp) -> bool:
    ptr = idx.src[0].dtype
    return isinstance(ptr, PtrDType) and ptr.addrspace is AddrSpace.GLOBAL


def _load_lines(f: _Function, u: UOp, o: str) -> list[str]:
    """Load through INDEX ``u.src[0]`` into register value ``o``."""
    idx, dt = u.src[0], u.dtype
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    scalar = element_scalar(ptr)
    align = _align(scalar)
    raw = f"{o}.mem" if _is_global(idx) and _needs_convert(dt) else o
    lines = [f"{raw} = load {vec(scalar, dt.count)}, ptr {f.names[idx]}, align {align}"]
    if raw == o:
        return lines
    if dt.scalar() is dtypes.bool:
        return [*lines, f"{o} = icmp ne {vec('i8', dt.count)} {raw}, zeroinitializer"]
    return lines + narrow_decode(o, raw, dt, dt.count)


def _align(scalar: str) -> int:
    """The natural alignment of one element (vector accesses need only that much)."""
    return {"i1": 1, "float": 4, "double": 8}.get(scalar) or int(scalar[1:]) // 8


def _needs_convert(dt: DType) -> bool:
    return dt.scalar() in (dtypes.bool, *NARROW_FLOATS)


def _masked_load(f: _Function, u: UOp) -> None:
    """A vector load with a gate per lane: ``llvm.masked.load`` (masked-off lanes read
    ``alt`` and touch no memory; AVX2's ``vmaskmovps``)."""
    idx, o, t = u.src[0], f.out(u), ll_type(u.dtype)
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    align = _align(element_scalar(ptr))
    gate, n = idx.src[2], idx.src[2].dtype.count
    # with every lane off, read "from" the buffer's start: the masked-off address may lie in an
    # unmapped page, and a masked load there takes a microcode assist on AMD (~100x slower)
    f.emit(
        f"{o}.any = call i1 @llvm.vector.reduce.or.v{n}i1({f.typed(gate)})",
        f"{o}.ptr = select i1 {o}.any, ptr {f.names[idx]}, ptr {f.names[idx.src[0]]}",
        f"{o} = call {t.ty} @llvm.masked.load.{t.sfx}.p0(ptr {o}.ptr, i32 {align}, "
        f"{f.typed(gate)}, {f.typed(u.src[1])})",
    )
    f.names[u] = o


def _load(f: _Function, u: UOp) -> None:
    o, idx = f.out(u), u.src[0]
    f.names[u] = o
    if len(idx.src) < 3:
        f.emit(*_load_lines(f, u, o))
        return
    if idx.src[2].dtype.count != 1:
        _masked_load(f, u)
        return
    i, pre = f.position[u], f.block
    f.emit(f"br i1 {f.names[idx.src[2]]}, label %load{i}, label %load{i}.join")
    f.label(f"load{i}")
    f.emit(*_load_lines(f, u, f"{o}.val"), f"br label %load{i}.join")
    f.label(f"load{i}.join")
    ty = ll_type(u.dtype).ty
    f.emit(f"{o} = phi {ty} [ {o}.val, %load{i} ], [ {f.names[u.src[1]]}, %{pre} ]")


def _store_lines(f: _Function, u: UOp, o: str) -> list[str]:
    idx, val = u.src
    dt = val.dtype
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    scalar = element_scalar(ptr)
    value, lines = f.names[val], []
    if _is_global(idx) and dt.scalar() is dtypes.bool:
        lines = [f"{o}.b = zext {ll_type(dt).ty} {value} to {vec('i8', dt.count)}"]
        value = f"{o}.b"
    elif _is_global(idx) and dt.scalar() in NARROW_FLOATS:
        lines = narrow_encode(f"{o}.h", value, "float", dt, dt.count)
        value = f"{o}.h"
    align = _align(scalar)
    return [*lines, f"store {vec(scalar, dt.count)} {value}, ptr {f.names[idx]}, align {align}"]


def _store(f: _Function, u: UOp) -> None:
    idx, o, i = u.src[0], f.out(u), f.position[u]
    if len(idx.src) < 3:
        f.emit(*_store_lines(f, u, o))
        return
    f.emit(f"br i1 {f.names[idx.src[2]]}, label %store{i}, label %store{i}.join")
    f.label(f"store{i}")
    f.emit(*_store_lines(f, u, o), f"br label %store{i}.join")
    f.label(f"store{i}.join")


def _alu(f: _Function, u: UOp) -> None:
    o = f.out(u)
    operand = u.src[-1].dtype if u.op is Ops.WHERE else u.src[0].dtype
    t = ll_type(operand, f.fmf)
    args = [f.names[s] for s in u.src]
    fn = CODE_FOR_OP.get(u.op)
    if fn is None:
        raise NotImplementedError(f"LLVM renderer: {u.op!r} is not rendered natively")
    narrow = operand.scalar() in NARROW_FLOATS and u.op in (*ROUNDED_OPS, Ops.MULACC)
    if not narrow:
        f.emit(fn(o, t, *args))
    elif u.op is Ops.MULACC:  # exec_alu: round(round(a * b) + c)
        n = operand.count
        mul, add = CODE_FOR_OP[Ops.MUL], CODE_FOR_OP[Ops.ADD]
        f.emit(mul(f"{o}.m0", t, args[0], args[1]))
        f.emit(*round_narrow(f"{o}.m", f"{o}.m0", "float", operand, n))
        f.emit(add(f"{o}.a0", t, f"{o}.m", args[2]))
        f.emit(*round_narrow(o, f"{o}.a0", "float", operand, n))
    else:
        f.emit(fn(f"{o}.raw", t, *args))
        f.emit(*round_narrow(o, f"{o}.raw", "float", operand, operand.count))
    f.names[u] = o


def _cast(f: _Function, u: UOp) -> None:
    render = render_cast if u.op is Ops.CAST else render_bitcast
    lines, name = render(f.out(u), f.names[u.src[0]], u.src[0].dtype, u.dtype)
    f.emit(*lines)
    f.names[u] = name


def _vectorize(f: _Function, u: UOp) -> None:
    o, t = f.out(u), ll_type(u.dtype)
    prev = "poison"
    for lane, s in enumerate(u.src):
        name = o if lane == len(u.src) - 1 else f"{o}.{lane}"
        f.emit(f"{name} = insertelement {t.ty} {prev}, {f.typed(s)}, i32 {lane}")
        prev = name
    f.names[u] = o


def _gep(f: _Function, u: UOp) -> None:
    o, src = f.out(u), u.src[0]
    lanes: tuple[int, ...] = u.arg
    if src.dtype.count == 1:
        if any(lane != 0 for lane in lanes):
            raise ValueError(f"GEP {lanes} of a scalar")
        if len(lanes) == 1:
            f.names[u] = f.names[src]
            return
        one = f"<1 x {ll_type(u.dtype).scalar}>"
        f.emit(f"{o}.1 = insertelement {one} poison, {f.typed(src)}, i32 0")
        mask = f"<{len(lanes)} x i32> zeroinitializer"
        f.emit(f"{o} = shufflevector {one} {o}.1, {one} poison, {mask}")
    elif len(lanes) == 1:
        f.emit(f"{o} = extractelement {f.typed(src)}, i32 {lanes[0]}")
    else:
        mask = "<" + ", ".join(f"i32 {x}" for x in lanes) + ">"
        ty = ll_type(src.dtype).ty
        f.emit(f"{o} = shufflevector {ty} {f.names[src]}, {ty} poison, <{len(lanes)} x i32> {mask}")
    f.names[u] = o


def _nothing(f: _Function, u: UOp) -> None:
    pass  # BARRIER (one core shares no memory with itself), SINK (the name's carrier)


def _after(f: _Function, u: UOp) -> None:
    f.names[u] = f.names[u.src[0]]  # ordering only: the value is its first source


_HANDLERS: dict[Ops, Callable[[_Function, UOp], None]] = {
    Ops.CONST: _const,
    Ops.VCONST: _vconst,
    Ops.DEFINE_REG: _define_acc,
    Ops.DEFINE_LOCAL: _define_acc,
    Ops.RANGE: _range,
    Ops.END: _end,
    Ops.IF: _if,
    Ops.ENDIF: _endif,
    Ops.INDEX: _index,
    Ops.LOAD: _load,
    Ops.STORE: _store,
    Ops.CAST: _cast,
    Ops.BITCAST: _cast,
    Ops.VECTORIZE: _vectorize,
    Ops.GEP: _gep,
    Ops.BARRIER: _nothing,
    Ops.SINK: _nothing,
    Ops.AFTER: _after,
    **dict.fromkeys(CODE_FOR_OP, _alu),
}


# -- target rules --------------------------------------------------------------------------


def _summands(x: UOp) -> list[UOp]:
    """The terms of an ADD tree (``x`` itself when it is no ADD)."""
    if x.op is not Ops.ADD:
        return [x]
    return [t for s in x.src for t in _summands(s)]


def _lane(ld: UOp) -> tuple[UOp, Counter[UOp], int] | None:
    """(pointer, the index's varying terms, its constant term) of a scalar load, when the
    element needs no conversion; else None. Terms are compared as a multiset: lanes of one
    vector may list the same sum in different orders."""
    if ld.op is not Ops.LOAD or ld.dtype.count != 1 or _needs_convert(ld.dtype):
        return None
    idx = ld.src[0]
    if idx.op is not Ops.INDEX or idx.src[1].dtype.count != 1:
        return None
    terms = _summands(idx.src[1])
    offset = sum(int(t.arg) for t in terms if t.op is Ops.CONST)
    return idx.src[0], Counter(t for t in terms if t.op is not Ops.CONST), offset


def _lanes_of(parts: list[UOp], dtype: DType) -> UOp:
    """The lanes ``parts`` as one vector: the vector they were taken from when they are its
    lanes in order, a VCONST when all are constants, else a VECTORIZE."""
    src = parts[0].src[0] if parts[0].op is Ops.GEP else None
    if src is not None and src.dtype.count == len(parts):
        taken = [p.op is Ops.GEP and p.src[0] is src and p.arg == (k,) for k, p in enumerate(parts)]
        if all(taken):
            return src
    if all(p.op is Ops.CONST for p in parts):
        return UOp(Ops.VCONST, dtype, (), tuple(p.arg for p in parts))
    return UOp(Ops.VECTORIZE, dtype, tuple(parts))


def _gate_and_alt(s: UOp) -> tuple[UOp, UOp]:
    """One lane's (gate, value where masked off): a constant lane (devectorize's read of a lane
    masked off for good) is masked off with its value; an ungated load reads always."""
    if s.op is Ops.CONST:
        return UOp.const(False, dtypes.bool), s
    if len(s.src[0].src) == 3:
        return s.src[0].src[2], s.src[1]
    return UOp.const(True, dtypes.bool), UOp.const(0, s.dtype)


def _merge_gated_lanes(v: UOp) -> UOp | None:
    """VECTORIZE of scalar loads at consecutive addresses, some gated (lanes with different
    masks: the edge taps of a padded convolution) or constant (masked off for good) -> one
    masked vector load. Devectorize splits such a vector into one branch per lane; a masked
    load reads the lanes at once."""
    loads = [(k, s) for k, s in enumerate(v.src) if s.op is not Ops.CONST]
    found = [x for x in (_lane(s) for _, s in loads) if x is not None]
    if not found or len(found) != len(loads):
        return None
    gated = any(len(s.src[0].src) == 3 for _, s in loads)
    if not gated and len(loads) == len(v.src):
        return None  # plain consecutive loads: LLVM's SLP vectorizer joins them
    (k0, head), (ptr, base, first) = loads[0], found[0]
    at = zip((k for k, _ in loads), found, strict=True)
    if any(p is not ptr or b != base or o - first != k - k0 for k, (p, b, o) in at):
        return None
    gates, alts = zip(*(_gate_and_alt(s) for s in v.src), strict=True)
    start = head.src[0].src[1]
    if k0:
        start = start + UOp.const(-k0, start.dtype)
    n = v.dtype.count
    mask = _lanes_of(list(gates), dtypes.bool.vec(n))
    idx = UOp(Ops.INDEX, head.src[0].dtype, (ptr, start, mask))
    return UOp(Ops.LOAD, v.dtype, (idx, _lanes_of(list(alts), v.dtype)))


#: lowering rules of this target (run after devectorize, before linearizing)
LLVM_MATCHER = PatternMatcher([(UPat(Ops.VECTORIZE, name="v"), _merge_gated_lanes)])


def _parameters(f: _Function, sig: KernelSignature) -> list[str]:
    """The parameter list; binds the PARAM/SPECIAL nodes' names (int32 arguments widened or
    narrowed to the node's dtype in the entry block)."""
    params = []
    for b in sig.buffers:
        params.append(f"ptr noalias %buf{b.arg}")
        f.names[b] = f"%buf{b.arg}"
    scalars = [(v, f"%var{i}") for i, v in enumerate(sig.variables)]
    if sig.core is not None:
        scalars.append((sig.core, "%core"))
    for node, name in scalars:
        params.append(f"i32 {name}")
        lines, f.names[node] = render_cast(f"{name}.x", name, dtypes.int32, node.dtype)
        f.allocas.extend(lines)
    return params


class LLVMRenderer(Renderer):
    """Renders linear programs as LLVM IR for CPUs (see the module docstring).

    ``fast_math``: render float ops with LLVM's ``fast`` flags (default: ``LLVM_FASTMATH``).
    """

    device = "CPU"
    suffix = "LLVM"
    has_local = False
    has_shared = False
    has_threads = True
    global_max = None
    local_max = None
    max_threads = host_cores()
    vector_widths: ClassVar[dict[DType, tuple[int, ...]]] = host_vector_widths()
    supported_dtypes = _CPU_DTYPES
    code_for_op: ClassVar[dict[Ops, Callable[..., str]]] = {
        op: fn for op, fn in CODE_FOR_OP.items() if op not in APPROXIMATED_OPS
    }
    vector_approximated: ClassVar[frozenset[Ops]] = VECTOR_APPROXIMATED_OPS
    extra_matcher = LLVM_MATCHER
    #: renders a vector LOAD whose INDEX has a gate per lane (``llvm.masked.load``)
    lane_gated_loads = True

    def __init__(self, fast_math: bool | None = None) -> None:
        self.fast_math = bool(LLVM_FASTMATH.value) if fast_math is None else fast_math

    @property
    def target_key(self) -> str:
        """Renderer identity for caches (fast-math changes the output)."""
        return f"{super().target_key}:fast={int(self.fast_math)}"

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        """The LLVM IR module for a linear program (``name``: the function's name, else the
        trailing SINK's KernelInfo name, else ``kernel``)."""
        sig = kernel_signature(uops, name)
        f = _Function("fast " if self.fast_math else "", uops)
        params = _parameters(f, sig)
        for u in uops:
            if u.op in (Ops.PARAM, Ops.SPECIAL):
                continue
            handler = _HANDLERS.get(u.op)
            if handler is None:
                raise NotImplementedError(
                    f"LLVM renderer: can't render {u.op!r} in a linear program"
                )
            handler(f, u)
        lines = [
            f"; fusegrad kernel {sig.name}",
            f"define void @{sig.name}({', '.join(params)}) #0 {{",
            "entry:",
            *(f"  {x}" for x in f.allocas),
            *f.body,
            "  ret void",
            "}",
            "",
            'attributes #0 = { nounwind "frame-pointer"="none" }',
        ]
        return "\n".join(lines) + "\n"


# -- compiling ------------------------------------------------------------------------------

_LINE_REF = re.compile(r"<string>:(\d+):\d+:")
_DEFINE = re.compile(r"define void @([A-Za-z_][A-Za-z0-9_]*)\(")
_compile_lock = threading.Lock()


def _kernel_of(src: str) -> str:
    m = _DEFINE.search(src)
    return m.group(1) if m else "<unnamed kernel>"


def _offending_lines(src: str, message: str) -> list[int]:
    """Source lines an LLVM error refers to: by line number, else the lines it quotes."""
    refs = [int(n) for n in _LINE_REF.findall(message)]
    if refs:
        return refs
    quoted = {x.strip() for x in message.splitlines() if x.strip().startswith("%")}
    return [i + 1 for i, line in enumerate(src.splitlines()) if line.strip() in quoted]


class LLVMCompiler(Compiler):
    """LLVM IR -> an ELF relocatable object for the host CPU, in process with llvmlite.

    The pipeline is LLVM's -O<opt_level> (loop and SLP vectorizers included; LLVM's loop
    unroller only at -O3), then code generation for the target machine.

    ``opt_level`` (default ``LLVM_OPT``), ``cpu`` and ``features`` (default ``LLVM_CPU`` /
    ``LLVM_FEATURES``, empty meaning the host's) choose the target; all are in the cache key.
    """

    threaded = True  # llvmlite's calls release the GIL (one at a time: its lock, and ours)

    def __init__(
        self, opt_level: int | None = None, cpu: str | None = None, features: str | None = None
    ) -> None:
        self.opt_level = int(LLVM_OPT.value if opt_level is None else opt_level)
        self.cpu = (LLVM_CPU.value if cpu is None else cpu) or llvm.get_host_cpu_name()
        feats = LLVM_FEATURES.value if features is None else features
        self.features = feats or llvm.get_host_cpu_features().flatten()
        target = llvm.Target.from_default_triple()
        self.target_machine = target.create_target_machine(
            cpu=self.cpu,
            features=self.features,
            opt=min(self.opt_level, 3),
            reloc="pic",
            codemodel="default",
        )
        version = ".".join(map(str, llvm.llvm_version_info))
        key = f"llvm{version}:{self.target_machine.triple}:{self.cpu}:{self.features}:O{self.opt_level}"
        super().__init__(cache_key=key)
        self._target: tuple[str, str] | None = None

    def _parse(self, src: str) -> Any:
        try:
            mod = llvm.parse_assembly(src)
            mod.verify()
        except RuntimeError as exc:
            message = str(exc)
            lines = _offending_lines(src, message)
            raise CompileError(_kernel_of(src), message, src, lines) from None
        return mod

    def _optimized(self, src: str) -> Any:
        mod = self._parse(src)
        # the target's strings, worked out once: each llvmlite call hands the GIL back and
        # forth, which a busy thread beside the compile thread (COMPILE_THREADS) makes slow
        if self._target is None:
            tm = self.target_machine
            self._target = (tm.triple, str(tm.target_data))
        mod.triple, mod.data_layout = self._target
        if self.opt_level > 0:
            pto = llvm.create_pipeline_tuning_options(speed_level=min(self.opt_level, 3))
            # fusegrad's optimizer unrolls (UPCAST/UNROLL); LLVM's unroller would double the
            # compile time of a typical kernel, so it runs only at -O3
            pto.loop_unrolling = self.opt_level >= 3
            pb = llvm.create_pass_builder(self.target_machine, pto)
            pb.getModulePassManager().run(mod, pb)
        return mod

    def compile(self, src: str) -> bytes:
        """Parse, verify, optimize and emit an object file; CompileError on bad IR."""
        with _compile_lock:
            return bytes(self.target_machine.emit_object(self._optimized(src)))

    def assembly(self, src: str) -> str:
        """The optimized machine code for ``src`` as assembly text (for reading, not caching)."""
        with _compile_lock:
            return str(self.target_machine.emit_assembly(self._optimized(src)))
