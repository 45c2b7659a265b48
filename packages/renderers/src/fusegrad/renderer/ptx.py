"""The PTX renderer (NVIDIA GPUs, sm_75 / sm_80 / sm_90) and ``ptxas``.

``PTXRenderer(arch).render(uops)`` prints a linear program as one ``.entry`` kernel:

* parameters: the buffers by slot (``.param .u64 buf<slot>``, global pointers), then the
  scalar Variables in program order (``.param .u32 var<i>``) — the order ``cuLaunchKernel``
  passes them (``ptx_signature``);
* ids: SPECIAL ``gidx``/``lidx``/``idx`` read ``%ctaid``/``%tid`` (``%ntid`` for ``idx``);
  ``core`` (a THREAD-split kernel) is ``%ctaid.x``, one block per core;
* typed virtual registers (``ptx_emit`` describes the register model); constants are moved
  into registers once, at the top, so a constant the linearizer placed inside a branch is
  defined on every path;
* DEFINE_LOCAL is ``.shared`` memory (``bar.sync 0`` for BARRIER); a DEFINE_REG indexed only
  by constants lives in registers, any other in ``.local`` memory;
* vector loads/stores are ``ld/st.v2/.v4`` when the index is provably a multiple of the
  width (buffers are at least 16-byte aligned: the CUDA device checks), else lane by lane;
  gated accesses branch around the access.

``PTXCompiler(arch)`` assembles with ``ptxas`` into a cubin when it is on PATH, and otherwise
returns the PTX text itself (the CUDA driver's ``cuModuleLoadData`` compiles PTX too).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from fusegrad.codegen import CompileError, Compiler, Renderer, TensorCore
from fusegrad.renderer.ptx_emit import NARROW_FLOATS, Emitter, bit_type, immediate, reg_class
from fusegrad.renderer.ptx_ops import CODE_FOR_OP, bitcast, cast
from fusegrad.renderer.signature import kernel_name
from fusegrad.uop import AddrSpace, DType, Ops, PtrDType, UOp, dtypes

#: PTX ISA version and per-block limits of each supported architecture
ARCHES = {"sm_75": "7.8", "sm_80": "7.8", "sm_86": "7.8", "sm_89": "7.8", "sm_90": "7.8"}
#: architectures with fp8 conversions (``cvt ... e4m3x2/e5m2x2``): fp8 is native there
FP8_ARCHES = frozenset({"sm_89", "sm_90"})
#: architectures with ``mma.sync.aligned.m16n8k16`` for f16 and bf16 inputs
MMA_ARCHES = frozenset({"sm_80", "sm_86", "sm_89", "sm_90"})
#: the tensor cores of MMA_ARCHES: (N, M, K) = (8, 16, 16) per warp, float32 accumulators;
#: the TC opt tiles M as 8 threads x 2 lanes (the warp's layout: ``lower/wmma.py``)
TENSOR_CORES = tuple(
    TensorCore((8, 16, 16), 32, dt, dtypes.float32, (8, 4, 4), opts=("m_threads=8",))
    for dt in (dtypes.float16, dtypes.bfloat16)
)
#: sm_75 (Turing): ``mma.sync.aligned.m16n8k8`` with f16 inputs, float32 accumulators
TENSOR_CORES_SM75 = (
    TensorCore((8, 16, 8), 32, dtypes.float16, dtypes.float32, (4, 2, 4), opts=("m_threads=8",)),
)
_SHARED_MAX = {"sm_75": 49152, "sm_80": 49152, "sm_86": 49152, "sm_89": 49152, "sm_90": 49152}
_AXES = "xyz"


def check_arch(arch: str) -> str:
    """``arch`` normalized (``SM_90`` -> ``sm_90``); ValueError naming the known ones."""
    norm = arch.lower()
    if norm not in ARCHES:
        raise ValueError(f"PTX renderer: unknown architecture {arch!r} (known: {sorted(ARCHES)})")
    return norm


@dataclass(frozen=True, slots=True)
class PTXSignature:
    """The parameters of a PTX kernel in launch order: buffers by slot, then Variables."""

    name: str
    buffers: tuple[UOp, ...]
    variables: tuple[UOp, ...]


def ptx_signature(uops: list[UOp], name: str | None = None) -> PTXSignature:
    """The launch signature of a linear program (see the module docstring)."""
    buffers = [u for u in uops if u.op is Ops.PARAM and isinstance(u.dtype, PtrDType)]
    variables = [u for u in uops if u.op is Ops.PARAM and not isinstance(u.dtype, PtrDType)]
    slots = [int(b.arg) for b in buffers]
    if len(set(slots)) != len(slots):
        raise ValueError(f"PTX renderer: buffer slots repeat: {slots}")
    buffers.sort(key=lambda b: int(b.arg))
    return PTXSignature(kernel_name(uops, name), tuple(buffers), tuple(variables))


# -- memory addresses -------------------------------------------------------------------------

_SPACE = {AddrSpace.GLOBAL: "global", AddrSpace.LOCAL: "shared", AddrSpace.REG: "local"}


@dataclass(frozen=True, slots=True)
class _Address:
    """Where an INDEX points: state space, base register, byte offset, element dtype,
    whether the element index is a multiple of 4/2 (for vector accesses), and the gate."""

    space: str
    reg: str
    offset: int
    element: DType
    aligned: int
    gate: str | None

    def at(self, lane: int) -> str:
        off = self.offset + lane * self.element.itemsize
        return f"[{self.reg}+{off}]" if off else f"[{self.reg}]"


def _base(ptr: UOp) -> UOp:
    while ptr.op is Ops.AFTER:
        ptr = ptr.src[0]
    return ptr


def _alignment(idx: UOp) -> int:
    factor = idx.const_factor()
    return 4 if factor % 4 == 0 else 2 if factor % 2 == 0 else 1


def _promotable(uops: list[UOp]) -> set[UOp]:
    """DEFINE_REGs indexed only by constants, without gates: their elements are registers."""
    regs = {u for u in uops if u.op is Ops.DEFINE_REG}
    for u in uops:
        if u.op is not Ops.INDEX or (base := _base(u.src[0])) not in regs:
            continue
        if u.src[1].op is not Ops.CONST or len(u.src) == 3:
            regs.discard(base)
    return regs


#: memory element types of loads/stores (their registers: bool and narrow floats convert)
_MEMORY_TYPE = {
    dtypes.bool: "u8",
    dtypes.int8: "s8",
    dtypes.uint8: "u8",
    dtypes.int16: "s16",
    dtypes.uint16: "u16",
    dtypes.int32: "b32",
    dtypes.uint32: "b32",
    dtypes.int64: "b64",
    dtypes.uint64: "b64",
    dtypes.float16: "u16",
    dtypes.bfloat16: "u16",
    dtypes.fp8e4m3: "u8",
    dtypes.fp8e5m2: "u8",
    dtypes.float32: "f32",
    dtypes.float64: "f64",
}
_NARROW = NARROW_FLOATS


# -- the kernel being rendered ----------------------------------------------------------------


class _Kernel:
    """The state of rendering one kernel."""

    def __init__(self, uops: list[UOp], vector_memory: bool) -> None:
        self.vector_memory = vector_memory
        self.e = Emitter()
        self.values: dict[UOp, list[str]] = {}
        self.addresses: dict[UOp, _Address] = {}
        self.register_arrays: dict[UOp, list[str]] = {}
        self.promoted = _promotable(uops)
        self.state_decls: list[str] = []
        self.loops: dict[UOp, tuple[str, str, str]] = {}
        self.if_labels: dict[UOp, str] = {}
        self.max_threads: list[int] | None = None

    def lane(self, u: UOp, k: int = 0) -> str:
        return self.values[u][k]


def _raw_register(k: _Kernel, dt: DType) -> str:
    """A register to load one element of ``dt`` into (bools and narrow floats as integers)."""
    return k.e.new("r") if dt is dtypes.bool or dt in _NARROW else k.e.reg(dt)


def _from_memory(k: _Kernel, dt: DType, raw: str) -> str:
    """A loaded element's register value (bools and narrow floats converted)."""
    if dt in _NARROW:
        return k.e.from_narrow_bits(dt, raw)
    if dt is not dtypes.bool:
        return raw
    out = k.e.new("p")
    k.e.emit(f"setp.ne.u32 {out}, {raw}, 0;")
    return out


def _vectorized(k: _Kernel, addr: _Address, count: int) -> bool:
    dt = addr.element.scalar()
    return (
        k.vector_memory
        and count in (2, 4)
        and count * dt.itemsize in (4, 8, 16)
        and (addr.aligned % count == 0 and addr.offset % (count * dt.itemsize) == 0)
    )


def _load_lanes(k: _Kernel, addr: _Address, count: int) -> list[str]:
    dt = addr.element.scalar()
    raws = [_raw_register(k, dt) for _ in range(count)]
    mtype = _MEMORY_TYPE[dt]
    if _vectorized(k, addr, count):
        k.e.emit(f"ld.{addr.space}.v{count}.{mtype} {{{', '.join(raws)}}}, {addr.at(0)};")
    else:
        for i, r in enumerate(raws):
            k.e.emit(f"ld.{addr.space}.{mtype} {r}, {addr.at(i)};")
    return [_from_memory(k, dt, r) for r in raws]


def _store_value(k: _Kernel, dt: DType, r: str) -> str:
    """A register holding the memory form of ``r`` (bool as 0/1, narrow floats as bits)."""
    if dt is dtypes.bool:
        out = k.e.new("r")
        k.e.emit(f"selp.u32 {out}, 1, 0, {r};")
        return out
    if dt in _NARROW:
        return k.e.narrow_bits(dt, r)
    return r


def _store_lanes(k: _Kernel, addr: _Address, lanes: list[str]) -> None:
    dt = addr.element.scalar()
    values = [_store_value(k, dt, r) for r in lanes]
    mtype = _MEMORY_TYPE[dt]
    if _vectorized(k, addr, len(lanes)):
        k.e.emit(f"st.{addr.space}.v{len(values)}.{mtype} {addr.at(0)}, {{{', '.join(values)}}};")
        return
    for i, r in enumerate(values):
        k.e.emit(f"st.{addr.space}.{mtype} {addr.at(i)}, {r};")


def _gated(k: _Kernel, gate: str | None, body: Callable[[], None]) -> None:
    """Run ``body``'s instructions only where ``gate`` holds (a branch around them)."""
    if gate is None:
        body()
        return
    skip = k.e.new_label("skip")
    k.e.emit(f"@!{gate} bra {skip};")
    body()
    k.e.place(skip)


def _mov(k: _Kernel, dt: DType, dst: str, src: str) -> None:
    k.e.emit(f"mov.{bit_type(dt)} {dst}, {src};")


# -- handlers -----------------------------------------------------------------------------------


def _index(k: _Kernel, u: UOp) -> None:
    ptr, idx = u.src[0], u.src[1]
    base = _base(ptr)
    if base in k.promoted:
        return  # element registers, resolved by LOAD/STORE
    assert isinstance(base.dtype, PtrDType)
    # a vector-typed element is its scalar lanes, consecutive in memory
    element, space = base.dtype.base.scalar(), _SPACE[base.dtype.addrspace]
    lanes = base.dtype.base.count
    gate = k.lane(u.src[2]) if len(u.src) == 3 else None
    size = element.itemsize * lanes
    if idx.op is Ops.CONST:
        address = _Address(space, k.lane(base), int(idx.arg) * size, element, 4, gate)
        k.addresses[u] = address
        return
    e, i = k.e, k.lane(idx)
    if space == "shared":
        out = e.new("r")
        if reg_class(idx.dtype) == "rd":
            low = e.new("r")
            e.emit(f"cvt.u32.u64 {low}, {i};")
            i = low
        e.emit(f"mad.lo.s32 {out}, {i}, {size}, {k.lane(base)};")
    else:
        out = e.new("rd")
        if reg_class(idx.dtype) == "rd":
            e.emit(f"mad.lo.s64 {out}, {i}, {size}, {k.lane(base)};")
        else:
            sign = "u" if idx.dtype.scalar() in dtypes.uints else "s"
            e.emit(f"mul.wide.{sign}32 {out}, {i}, {size};")
            e.emit(f"add.s64 {out}, {out}, {k.lane(base)};")
    k.addresses[u] = _Address(space, out, 0, element, min(4, _alignment(idx) * lanes), gate)


def _register_lanes(k: _Kernel, idx: UOp, count: int) -> list[str]:
    array = k.register_arrays[_base(idx.src[0])]
    ptr = idx.src[0].dtype
    assert isinstance(ptr, PtrDType)
    first = int(idx.src[1].arg) * ptr.base.count
    return array[first : first + count]


def _load(k: _Kernel, u: UOp) -> None:
    idx, count, dt = u.src[0], u.dtype.count, u.dtype.scalar()
    out = [k.e.reg(dt) for _ in range(count)]
    k.values[u] = out
    if idx not in k.addresses:  # a promoted register array: copy (a later STORE may change it)
        for dst, src in zip(out, _register_lanes(k, idx, count), strict=True):
            _mov(k, dt, dst, src)
        return
    addr = k.addresses[idx]
    if len(u.src) == 2:
        for dst, src in zip(out, k.values[u.src[1]], strict=True):
            _mov(k, dt, dst, src)

    def body() -> None:
        for dst, src in zip(out, _load_lanes(k, addr, count), strict=True):
            _mov(k, dt, dst, src)

    _gated(k, addr.gate, body)


def _store(k: _Kernel, u: UOp) -> None:
    idx, value = u.src
    lanes, dt = k.values[value], value.dtype.scalar()
    if idx not in k.addresses:
        for dst, src in zip(_register_lanes(k, idx, len(lanes)), lanes, strict=True):
            _mov(k, dt, dst, src)
        return
    addr = k.addresses[idx]
    _gated(k, addr.gate, lambda: _store_lanes(k, addr, lanes))


def _alu(k: _Kernel, u: UOp) -> None:
    operand = u.src[-1].dtype if u.op is Ops.WHERE else u.src[0].dtype
    fn = CODE_FOR_OP.get(u.op)
    if fn is None:
        raise NotImplementedError(f"PTX renderer: {u.op!r} is not rendered natively")
    k.values[u] = [
        fn(k.e, operand.scalar(), *(k.lane(s, i) for s in u.src)) for i in range(u.dtype.count)
    ]


def _convert(k: _Kernel, u: UOp) -> None:
    src = u.src[0]
    if src.dtype.count != u.dtype.count:
        raise NotImplementedError(f"PTX renderer: {u.op!r} {src.dtype!r} -> {u.dtype!r}")
    conv = cast if u.op is Ops.CAST else bitcast
    lanes = k.values[src]
    k.values[u] = [conv(k.e, src.dtype.scalar(), u.dtype.scalar(), r) for r in lanes]


def _special(k: _Kernel, u: UOp) -> None:
    e, name = k.e, str(u.arg)
    out = e.new("r")
    k.values[u] = [out]
    if name == "core":
        e.emit(f"mov.u32 {out}, %ctaid.x;")
        return
    axis = _AXES[int(name[-1])]
    if name.startswith("gidx"):
        e.emit(f"mov.u32 {out}, %ctaid.{axis};")
    elif name.startswith("lidx"):
        e.emit(f"mov.u32 {out}, %tid.{axis};")
        _note_local_size(k, int(name[-1]), u.src[0])
    elif name.startswith("idx"):
        block, width, thread = e.new("r"), e.new("r"), e.new("r")
        e.emit(f"mov.u32 {block}, %ctaid.{axis};")
        e.emit(f"mov.u32 {width}, %ntid.{axis};")
        e.emit(f"mov.u32 {thread}, %tid.{axis};")
        e.emit(f"mad.lo.s32 {out}, {block}, {width}, {thread};")
    else:
        raise ValueError(f"PTX renderer: unknown SPECIAL {name!r}")


def _note_local_size(k: _Kernel, axis: int, size: UOp) -> None:
    if size.op is not Ops.CONST:
        return
    k.max_threads = k.max_threads or [1, 1, 1]
    k.max_threads[axis] = int(size.arg)


def _range(k: _Kernel, u: UOp) -> None:
    e, dt = k.e, u.dtype
    counter, done = e.reg(dt), e.new("p")
    top, exit_ = e.new_label("loop"), e.new_label("end")
    e.emit(f"mov.{bit_type(dt)} {counter}, 0;")
    e.place(top)
    e.emit(f"setp.ge.s{dt.itemsize * 8} {done}, {counter}, {k.lane(u.src[0])};")
    e.emit(f"@{done} bra {exit_};")
    k.values[u] = [counter]
    k.loops[u] = (counter, top, exit_)


def _end(k: _Kernel, u: UOp) -> None:
    rng = u.src[0]
    counter, top, exit_ = k.loops[rng]
    k.e.emit(f"add.s{rng.dtype.itemsize * 8} {counter}, {counter}, 1;")
    k.e.emit(f"bra {top};")
    k.e.place(exit_)


def _if(k: _Kernel, u: UOp) -> None:
    label = k.e.new_label("endif")
    k.if_labels[u] = label
    k.e.emit(f"@!{k.lane(u.src[0])} bra {label};")


def _endif(k: _Kernel, u: UOp) -> None:
    k.e.place(k.if_labels[u.src[0]])


def _vectorize(k: _Kernel, u: UOp) -> None:
    k.values[u] = [k.lane(s) for s in u.src]


def _gep(k: _Kernel, u: UOp) -> None:
    k.values[u] = [k.lane(u.src[0], i) for i in u.arg]


def _alias(k: _Kernel, u: UOp) -> None:
    if u.src[0] in k.values:
        k.values[u] = k.values[u.src[0]]


def _nothing(k: _Kernel, u: UOp) -> None:
    pass


def _barrier(k: _Kernel, u: UOp) -> None:
    k.e.emit("bar.sync 0;")


#: PTX type names of the tensor cores' input dtypes
_MMA_INPUT = {dtypes.float16: "f16", dtypes.bfloat16: "bf16"}


def _packed_pairs(k: _Kernel, dt: DType, lanes: list[str]) -> list[str]:
    """float32 registers holding ``dt`` values -> ``.b32`` registers of two packed 16-bit
    values each (the lower-numbered element in the low half, as ``mma`` fragments want)."""
    kind = _MMA_INPUT[dt]
    halves = []
    for r in lanes:
        h = k.e.new("h")
        k.e.emit(f"cvt.rn.{kind}.f32 {h}, {r};")  # exact: r already holds a value of dt
        halves.append(h)
    out = []
    for lo, hi in zip(halves[0::2], halves[1::2], strict=True):
        pair = k.e.new("r")
        k.e.emit(f"mov.b32 {pair}, {{{lo}, {hi}}};")
        out.append(pair)
    return out


def _wmma(k: _Kernel, u: UOp) -> None:
    """WMMA (``fusegrad.codegen.lower.wmma``): one warp-wide ``mma.sync`` m16n8k16 (or
    m16n8k8, sm_75)."""
    _name, dims, dtype_in, dtype_out = u.arg
    known = tuple(dims) in ((8, 16, 16), (8, 16, 8))
    if not known or dtype_in not in _MMA_INPUT or dtype_out is not dtypes.float32:
        raise NotImplementedError(f"PTX renderer: no tensor core for WMMA {u.arg!r}")
    a = _packed_pairs(k, dtype_in, k.values[u.src[0]])
    b = _packed_pairs(k, dtype_in, k.values[u.src[1]])
    c = k.values[u.src[2]]
    d = [k.e.new("f") for _ in range(4)]
    kind = _MMA_INPUT[dtype_in]
    k.e.emit(
        f"mma.sync.aligned.m16n8k{dims[2]}.row.col.f32.{kind}.{kind}.f32 {{{', '.join(d)}}}, "
        f"{{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};"
    )
    k.values[u] = d


_HANDLERS: dict[Ops, Callable[[_Kernel, UOp], None]] = {
    Ops.INDEX: _index,
    Ops.LOAD: _load,
    Ops.STORE: _store,
    Ops.CAST: _convert,
    Ops.BITCAST: _convert,
    Ops.SPECIAL: _special,
    Ops.RANGE: _range,
    Ops.END: _end,
    Ops.IF: _if,
    Ops.ENDIF: _endif,
    Ops.VECTORIZE: _vectorize,
    Ops.GEP: _gep,
    Ops.AFTER: _alias,
    Ops.BARRIER: _barrier,
    Ops.WMMA: _wmma,
    Ops.SINK: _nothing,
    **dict.fromkeys(CODE_FOR_OP, _alu),
}


# -- the prologue: parameters, constants, memory ------------------------------------------------


def _parameters(k: _Kernel, sig: PTXSignature) -> list[str]:
    e, params = k.e, []
    for b in sig.buffers:
        name, ptr = f"buf{b.arg}", e.new("rd")
        params.append(f".param .u64 {name}")
        e.emit(f"ld.param.u64 {ptr}, [{name}];")
        e.emit(f"cvta.to.global.u64 {ptr}, {ptr};")
        k.values[b] = [ptr]
    for i, v in enumerate(sig.variables):
        name, raw = f"var{i}", e.new("r")
        params.append(f".param .u32 {name}")
        e.emit(f"ld.param.u32 {raw}, [{name}];")
        k.values[v] = [raw if reg_class(v.dtype) == "r" else _widen(k, v.dtype, raw)]
    return params


def _widen(k: _Kernel, dt: DType, raw: str) -> str:
    out = k.e.reg(dt)
    k.e.emit(f"cvt.{'u' if dt in dtypes.uints else 's'}64.s32 {out}, {raw};")
    return out


def _constant(k: _Kernel, dt: DType, value: object) -> str:
    e, out = k.e, k.e.reg(dt)
    if dt.scalar() is dtypes.bool:
        e.emit(f"setp.ne.u32 {out}, {1 if value else 0}, 0;")
    else:
        e.emit(f"mov.{bit_type(dt)} {out}, {immediate(dt, value)};")
    return out


def _constants(k: _Kernel, uops: list[UOp]) -> None:
    for u in uops:
        if u.op is Ops.CONST:
            k.values[u] = [_constant(k, u.dtype, u.arg)] * u.dtype.count
        elif u.op is Ops.VCONST:
            k.values[u] = [_constant(k, u.dtype.scalar(), v) for v in u.arg]


def _memories(k: _Kernel, uops: list[UOp]) -> None:
    e = k.e
    for u in uops:
        if u.op not in (Ops.DEFINE_LOCAL, Ops.DEFINE_REG):
            continue
        ptr = u.dtype
        assert isinstance(ptr, PtrDType)
        lanes = max(ptr.size, 1) * ptr.base.count
        if u in k.promoted:
            k.register_arrays[u] = [e.reg(ptr.base.scalar()) for _ in range(lanes)]
            continue
        shared = u.op is Ops.DEFINE_LOCAL
        name = f"{'smem' if shared else 'lmem'}{len(k.state_decls)}"
        nbytes = max(lanes * ptr.base.scalar().itemsize, 1)
        k.state_decls.append(
            f"\t.{'shared' if shared else 'local'} .align 16 .b8 {name}[{nbytes}];"
        )
        base = e.new("r" if shared else "rd")
        e.emit(f"mov.u{32 if shared else 64} {base}, {name};")
        k.values[u] = [base]


class PTXRenderer(Renderer):
    """Renders linear programs as PTX for one NVIDIA architecture (see the module
    docstring); ``arch`` is ``sm_75``, ``sm_80``, ``sm_86``, ``sm_89`` or ``sm_90``;
    ``vector_memory=False`` renders every memory access lane by lane."""

    device = "CUDA"
    suffix = "PTX"
    has_local = True
    has_shared = True
    has_threads = False
    global_max = (2**31 - 1, 65535, 65535)
    local_max = (1024, 1024, 64)
    shared_max = 49152
    max_threads = 1
    vector_widths: ClassVar[dict[DType, tuple[int, ...]]] = {
        dtypes.float32: (2, 4),
        dtypes.int32: (2, 4),
        dtypes.uint32: (2, 4),
        dtypes.float16: (2, 4),
    }
    supported_dtypes = frozenset(dtypes.all) - {dtypes.weakint, dtypes.weakfloat, *dtypes.fp8s}
    code_for_op: ClassVar[dict[Ops, Callable[..., str]]] = CODE_FOR_OP
    tensor_cores: tuple[TensorCore, ...] = ()

    def __init__(self, arch: str = "sm_90", vector_memory: bool = True) -> None:
        self.arch = check_arch(arch)
        #: False: every access lane by lane (for buffers not 16-byte aligned, see the CUDA
        #: device), else ld/st.v2/.v4 where the index allows
        self.vector_memory = vector_memory
        self.shared_max = _SHARED_MAX[self.arch]
        if self.arch in MMA_ARCHES:  # mma.sync m16n8k16 with f16/bf16 inputs: sm_80 and up
            self.tensor_cores = TENSOR_CORES
        elif self.arch == "sm_75":
            self.tensor_cores = TENSOR_CORES_SM75
        if self.arch in FP8_ARCHES:  # elsewhere the lowering emulates fp8 over uint8
            self.supported_dtypes = self.supported_dtypes | {dtypes.fp8e4m3, dtypes.fp8e5m2}

    @property
    def target_key(self) -> str:
        """The class, device and architecture."""
        return f"{super().target_key}:{self.arch}:{'v' if self.vector_memory else 's'}"

    def __repr__(self) -> str:
        return f"PTXRenderer({self.arch})"

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        """The PTX module (one ``.visible .entry``) of a linear program."""
        sig = ptx_signature(uops, name)
        k = _Kernel(uops, self.vector_memory)
        params = _parameters(k, sig)
        _constants(k, uops)
        _memories(k, uops)
        for u in uops:
            if u.op in (Ops.PARAM, Ops.CONST, Ops.VCONST, Ops.DEFINE_LOCAL, Ops.DEFINE_REG):
                continue
            handler = _HANDLERS.get(u.op)
            if handler is None:
                raise NotImplementedError(f"PTX renderer: can't render {u.op!r}")
            handler(k, u)
        k.e.emit("ret;")
        return _module(self.arch, sig.name, params, k)


def _module(arch: str, name: str, params: list[str], k: _Kernel) -> str:
    head = [f".version {ARCHES[arch]}", f".target {arch}", ".address_size 64", ""]
    plist = ",\n".join(f"\t{p}" for p in params)
    entry = f".visible .entry {name}(\n{plist}\n)" if params else f".visible .entry {name}()"
    if k.max_threads is not None:
        entry += f"\n.maxntid {', '.join(str(n) for n in k.max_threads)}"
    body = [*k.e.declarations(), *k.state_decls, *k.e.lines]
    return "\n".join([*head, entry, "{", *body, "}"]) + "\n"


# -- ptxas ---------------------------------------------------------------------------------------

_ERROR_LINE = re.compile(r"line (\d+); error")
_ENTRY = re.compile(r"\.entry ([A-Za-z_][A-Za-z0-9_$]*)")


def find_ptxas() -> str | None:
    """The path of ``ptxas`` on PATH, or None."""
    return shutil.which("ptxas")


def _ptxas_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], check=False, capture_output=True, text=True)
    except OSError:
        return "unknown"
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "unknown"


class PTXCompiler(Compiler):
    """PTX -> a cubin with ``ptxas -arch=<arch>`` when ``ptxas`` is on PATH (or given), else
    the PTX text itself, for the CUDA driver to compile when loading (``use_ptxas=False``
    forces that). ptxas's version is in the cache key."""

    def __init__(self, arch: str = "sm_90", use_ptxas: bool | None = None) -> None:
        self.arch = check_arch(arch)
        self.ptxas = find_ptxas() if use_ptxas is not False else None
        if use_ptxas and self.ptxas is None:
            raise FileNotFoundError("PTX compiler: ptxas is not on PATH (install CUDA's tools)")
        version = _ptxas_version(self.ptxas) if self.ptxas else "driver"
        super().__init__(cache_key=f"ptx:{self.arch}:{version}")

    def compile(self, src: str) -> bytes:
        """A cubin (ptxas) or the PTX bytes (no ptxas)."""
        if self.ptxas is None:
            return src.encode()
        return assemble(src, self.arch, self.ptxas)

    def disassemble(self, lib: bytes) -> str:
        """The PTX text when the binary is PTX, else its size."""
        return lib.decode() if lib.startswith(b".version") else f"<cubin, {len(lib)} bytes>"


def assemble(src: str, arch: str, ptxas: str = "ptxas") -> bytes:
    """Run ``ptxas -arch=<arch>`` on ``src``; the cubin. CompileError with ptxas's message
    and the offending lines on failure."""
    with tempfile.TemporaryDirectory(prefix="fusegrad-ptxas-") as tmp:
        inp, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        inp.write_text(src)
        cmd = [ptxas, f"-arch={arch}", "-O3", str(inp), "-o", str(out)]
        try:
            proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CompileError(_entry_of(src), f"ptxas failed to run: {exc}") from None
        if proc.returncode != 0 or not out.exists():
            lines = [int(n) for n in _ERROR_LINE.findall(proc.stderr)]
            message = f"ptxas exited with {proc.returncode}:\n{proc.stderr}"
            raise CompileError(_entry_of(src), message, src, lines)
        return out.read_bytes()


def _entry_of(src: str) -> str:
    m = _ENTRY.search(src)
    return m.group(1) if m else "<unnamed kernel>"
