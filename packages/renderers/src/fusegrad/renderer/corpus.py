"""The conformance corpus: a fixed set of linear programs, each with inputs and outputs.

Every case is a hand-built linear program in the form ``fusegrad.codegen.spec`` describes
(plus ``AFTER`` aliases for accumulator reads, as the lowering pipeline emits them). One
kernel covers many checks — e.g. every ALU op of one dtype, each op storing into its own
output buffer — so a renderer compiles dozens of kernels, not thousands.

``corpus(renderer)`` builds the cases a renderer can run: only ops it lists in
``code_for_op``, dtypes in ``supported_dtypes``, vector widths from ``vector_widths``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen import Renderer
from fusegrad.uop import AddrSpace, AxisType, DType, Ops, UOp, dtypes, truncate

# -- cases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One conformance kernel.

    ``buffers[slot]`` = (scalar dtype, initial values); ``outputs[slot]`` names what that
    output checks; ``ulps[slot]`` is the allowed float error in units in the last place
    (absent: exact, with NaN == NaN and -0.0 != 0.0); ``unsigned_zero`` lists outputs where
    the sign of a zero is not compared."""

    name: str
    uops: tuple[UOp, ...]
    buffers: tuple[tuple[DType, tuple[Any, ...]], ...]
    outputs: dict[int, str]
    var_vals: dict[str, int] = field(default_factory=dict)
    ulps: dict[int, float] = field(default_factory=dict)
    unsigned_zero: frozenset[int] = frozenset()


class Builder:
    """Builds a linear program: ``add`` appends nodes in call order, each after those of
    its sources that are not in the program yet."""

    def __init__(self) -> None:
        self.uops: list[UOp] = []
        self._seen: set[UOp] = set()
        self.buffers: list[tuple[DType, tuple[Any, ...]]] = []
        self.outputs: dict[int, str] = {}
        self.ulps: dict[int, float] = {}
        self.unsigned_zero: set[int] = set()

    def add(self, *nodes: UOp) -> UOp:
        """Append ``nodes`` (and missing sources); returns the last."""
        for node in nodes:
            for u in node.toposort():
                if u not in self._seen:
                    self._seen.add(u)
                    self.uops.append(u)
        return nodes[-1]

    def buffer(self, dt: DType, values: Sequence[Any]) -> UOp:
        """A new global buffer parameter holding ``values`` (converted to ``dt``)."""
        slot = len(self.buffers)
        conv = truncate(dt)
        self.buffers.append((dt, tuple(conv(v) for v in values)))
        return self.add(UOp.param(slot, dt.ptr(len(values))))

    def output(self, dt: DType, size: int, label: str, ulps: float | None = None) -> UOp:
        """A new output buffer, pre-filled with a sentinel so missing and stray writes show."""
        buf = self.buffer(dt, [_sentinel(dt)] * size)
        self.outputs[int(buf.arg)] = label
        if ulps is not None:
            self.ulps[int(buf.arg)] = ulps
        return buf

    def case(self, name: str, **var_vals: int) -> Case:
        """The finished case."""
        return Case(
            name,
            tuple(self.uops),
            tuple(self.buffers),
            self.outputs,
            var_vals,
            self.ulps,
            frozenset(self.unsigned_zero),
        )


def _sentinel(dt: DType) -> Any:
    if dt is dtypes.bool:
        return True
    return 0.25 if dtypes.is_float(dt) else 5


def c32(v: int) -> UOp:
    """An int32 constant."""
    return UOp.const(v, dtypes.int32)


def rng(end: int | UOp, axis: int = 0, dt: DType = dtypes.int32) -> UOp:
    """A loop counter over [0, end)."""
    e = end if isinstance(end, UOp) else UOp.const(end, dt)
    return UOp(Ops.RANGE, dt, (e,), (axis, AxisType.LOOP))


def end(r: UOp) -> UOp:
    """Close loop ``r``."""
    return UOp(Ops.END, dtypes.void, (r,))


def index(buf: UOp, idx: UOp, gate: UOp | None = None) -> UOp:
    """``buf[idx]`` (only where ``gate`` holds)."""
    return UOp(Ops.INDEX, buf.dtype, (buf, idx) if gate is None else (buf, idx, gate))


def load(idx: UOp, dt: DType | None = None, alt: UOp | None = None) -> UOp:
    """A LOAD through an INDEX (``alt`` for a gated one)."""
    out = dt or idx.dtype.base  # type: ignore[attr-defined]
    return UOp(Ops.LOAD, out, (idx,) if alt is None else (idx, alt))


def store(idx: UOp, value: UOp) -> UOp:
    """A STORE through an INDEX."""
    return UOp(Ops.STORE, dtypes.void, (idx, value))


def alu(op: Ops, *srcs: UOp) -> UOp:
    """An ALU node with the linear program's dtype rules (comparisons give bool)."""
    dt = srcs[-1].dtype
    if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
        dt = dtypes.bool.vec(srcs[0].dtype.count)
    return UOp(op, dt, srcs)


# -- values ---------------------------------------------------------------------------------

_FLOATS = (
    *(0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.1, -7.75, 100.0, 1e-3, 2049.0, 1.0 / 3),
    *(3.14159, -100.0, 1e4, 65504.0, 1e30, -3e38, 1e-40, 1e-300, 6e-8),
    *(math.inf, -math.inf, math.nan),
)
_CAST_FLOATS = (
    *(0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 127.5, 128.0, 255.9),
    *(256.0, -128.5, -129.0, 257.0, 259.0, 2049.0, 2051.0, 32767.5, 65504.0, 65519.0),
    *(65520.0, 1e5, 2147483647.0, 2.0**31, -(2.0**31), 3e9, 2.0**53 + 2, 2.0**63, -(2.0**63)),
    *(2.0**64, 1e20, -1e20, 1e-5, 1e-8, 6e-8, 3e-8, 1e-40, 3e38, 1e300, 0.1, 1.0 / 3),
    *(math.inf, -math.inf, math.nan),
)
_CAST_INTS = (
    *(0, 1, -1, 2, 100, -100, 127, 128, 255, 256, -129, 257, 2049, 32767, 32768, 65535),
    *(65536, 2**31 - 1, -(2**31), 2**32 - 1, 16777217, 2**53 + 1, 2**60 + 2**36 + 1),
    *(2**63 - 1, -(2**63)),
)


def alu_values(dt: DType) -> tuple[Any, ...]:
    """Edge-case operands for ALU ops of ``dt`` (before conversion to ``dt``)."""
    if dt is dtypes.bool:
        return (False, True)
    if dtypes.is_float(dt):
        return _FLOATS
    bits, lo, hi = dt.itemsize * 8, int(dt.min), int(dt.max)
    return (0, 1, -1, 2, -2, 3, 7, -7, 100, -100, bits - 1, bits, bits + 1, hi, lo, hi - 1, lo + 1)


def cast_values(dt: DType) -> tuple[Any, ...]:
    """Edge-case sources for conversions from ``dt``."""
    if dt is dtypes.bool:
        return (False, True)
    return _CAST_FLOATS if dtypes.is_float(dt) else _CAST_INTS


def renderable(renderer: Renderer) -> list[DType]:
    """The concrete scalar dtypes ``renderer`` supports, in a fixed order."""
    return [d for d in dtypes.all if not d.weak and d in renderer.supported_dtypes]


# -- ALU ------------------------------------------------------------------------------------

_FLOAT_OPS = (
    *(Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.MAX, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ),
    *(Ops.NEG, Ops.RECIPROCAL, Ops.SQRT, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.TRUNC),
    *(Ops.WHERE, Ops.MULACC),
)
_INT_OPS = (
    *(Ops.ADD, Ops.SUB, Ops.MUL, Ops.CDIV, Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD, Ops.MAX),
    *(Ops.SHL, Ops.SHR, Ops.AND, Ops.OR, Ops.XOR, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ),
    *(Ops.NEG, Ops.TRUNC, Ops.WHERE, Ops.MULACC),
)
_BOOL_OPS = (
    *(Ops.ADD, Ops.SUB, Ops.MUL, Ops.AND, Ops.OR, Ops.XOR, Ops.MAX),
    *(Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.NEG, Ops.WHERE, Ops.MULACC),
)
#: allowed error of the transcendentals (libm's float32 versions vs double then rounded)
TRANSCENDENTAL_ULPS = 1.0
_TRANSCENDENTAL = frozenset({Ops.EXP2, Ops.LOG2, Ops.SIN})


def ops_for(dt: DType) -> tuple[Ops, ...]:
    """The ALU ops that apply to operands of ``dt``."""
    if dt is dtypes.bool:
        return _BOOL_OPS
    return _FLOAT_OPS if dtypes.is_float(dt) else _INT_OPS


def _operands(op: Ops, a: UOp, b: UOp, c: UOp, cond: UOp) -> tuple[UOp, ...]:
    if op is Ops.WHERE:
        return (cond, a, b)
    if op is Ops.MULACC:
        return (a, b, c)
    if op in (Ops.NEG, Ops.RECIPROCAL, Ops.SQRT, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.TRUNC):
        return (a,)
    return (a, b)


def alu_case(renderer: Renderer, dt: DType) -> Case | None:
    """Every applicable ALU op on every pair of ``dt``'s edge values, one output per op."""
    ops = [op for op in ops_for(dt) if op in renderer.code_for_op]
    if not ops:
        return None
    vals = alu_values(dt)
    pairs = [(x, y) for x in vals for y in vals]
    n = len(pairs)
    p = Builder()
    bufs = [p.buffer(dt, [x for x, _ in pairs]), p.buffer(dt, [y for _, y in pairs])]
    bufs.append(p.buffer(dt, [vals[(i * 7 + 3) % len(vals)] for i in range(n)]))
    bufs.append(p.buffer(dtypes.bool, [i % 3 == 0 for i in range(n)]))
    i = p.add(rng(n))
    a, b, c, cond = (p.add(load(index(buf, i))) for buf in bufs)
    for op in ops:
        out_dt = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else dt
        tol = TRANSCENDENTAL_ULPS if op in _TRANSCENDENTAL else None
        out = p.output(out_dt, n, f"{op.name} {dt.name}", tol)
        if op is Ops.TRUNC:
            # TODO(#8): exec_alu's TRUNC gives +0.0 for -0.5 and -0.0 (IEEE: -0.0); compare
            # the sign of zeros once uop-core follows IEEE
            p.unsigned_zero.add(int(out.arg))
        p.add(store(index(out, i), alu(op, *_operands(op, a, b, c, cond))))
    p.add(end(i))
    return p.case(f"alu-{dt.name}")


# -- conversions ----------------------------------------------------------------------------


def cast_case(renderer: Renderer, src: DType) -> Case:
    """``src`` edge values CAST to every dtype the renderer supports."""
    vals = cast_values(src)
    p = Builder()
    a = p.buffer(src, vals)
    i = p.add(rng(len(vals)))
    x = p.add(load(index(a, i)))
    for dst in renderable(renderer):
        out = p.output(dst, len(vals), f"CAST {src.name} -> {dst.name}")
        p.add(store(index(out, i), UOp(Ops.CAST, dst, (x,))))
    p.add(end(i))
    return p.case(f"cast-from-{src.name}")


def bitcast_case(renderer: Renderer, src: DType) -> Case | None:
    """``src`` edge values BITCAST to every other supported dtype of the same size."""
    targets = [
        d
        for d in renderable(renderer)
        if d.itemsize == src.itemsize and d is not src and dtypes.bool not in (d, src)
    ]
    if not targets:
        return None
    vals = cast_values(src)
    p = Builder()
    a = p.buffer(src, vals)
    i = p.add(rng(len(vals)))
    x = p.add(load(index(a, i)))
    for dst in targets:
        out = p.output(dst, len(vals), f"BITCAST {src.name} -> {dst.name}")
        p.add(store(index(out, i), UOp(Ops.BITCAST, dst, (x,))))
    p.add(end(i))
    return p.case(f"bitcast-from-{src.name}")


# -- memory and control flow ----------------------------------------------------------------


def gated_case(dt: DType) -> Case:
    """Gated loads (masked elements read ``alt``, out-of-range addresses never touched) and
    gated stores (masked elements keep their old value)."""
    p = Builder()
    a = p.buffer(dt, [x + 1 for x in range(8)])
    out_load = p.output(dt, 8, "gated LOAD")
    out_store = p.output(dt, 8, "gated STORE")
    i = p.add(rng(8))
    src = alu(Ops.ADD, i, c32(3))  # 3..10: the last three are past the end of a
    ok = alu(Ops.CMPLT, src, c32(8))
    x = load(index(a, src, ok), alt=UOp.const(-2, dt))
    p.add(store(index(out_load, i), x))
    even = alu(Ops.CMPEQ, alu(Ops.AND, i, c32(1)), c32(0))
    p.add(store(index(out_store, i, even), load(index(a, i))))
    p.add(end(i))
    return p.case(f"gated-{dt.name}")


def if_case() -> Case:
    """An IF block inside a loop: only some iterations store."""
    p = Builder()
    a = p.buffer(dtypes.float32, [x * 0.5 for x in range(8)])
    out = p.output(dtypes.float32, 8, "IF/ENDIF")
    i = p.add(rng(8))
    cond = p.add(alu(Ops.CMPLT, i, c32(3)))
    block = p.add(UOp(Ops.IF, dtypes.void, (cond,)))
    x = load(index(a, i))
    p.add(store(index(out, i), alu(Ops.MUL, x, UOp.const(2.0, dtypes.float32))))
    p.add(UOp(Ops.ENDIF, dtypes.void, (block,)), end(i))
    return p.case("if-endif")


def symbolic_case(n: int) -> Case:
    """A loop whose end is a Variable (``n`` of at most 8), and the Variable as a value."""
    p = Builder()
    a = p.buffer(dtypes.int32, [x * 3 for x in range(8)])
    out = p.output(dtypes.int32, 8, f"loop to n={n}")
    var = p.add(UOp(Ops.PARAM, dtypes.int32, (), ("n", 0, 8)))
    i = p.add(rng(var))
    p.add(store(index(out, i), alu(Ops.ADD, load(index(a, i)), var)), end(i))
    return p.case(f"symbolic-end-{n}", n=n)


def multicore_case(cores: int = 4, chunk: int = 5) -> Case:
    """A THREAD-split kernel: SPECIAL core picks each core's chunk."""
    p = Builder()
    size = cores * chunk
    a = p.buffer(dtypes.float32, [x * 1.5 for x in range(size)])
    out = p.output(dtypes.float32, size, "core split")
    core = p.add(UOp(Ops.SPECIAL, dtypes.int32, (c32(cores),), "core"))
    j = p.add(rng(chunk))
    at = alu(Ops.ADD, alu(Ops.MUL, core, c32(chunk)), j)
    value = alu(Ops.ADD, load(index(a, at)), UOp(Ops.CAST, dtypes.float32, (core,)))
    p.add(store(index(out, at), value), end(j))
    return p.case("multicore")


_REDUCE_VALUES = (1.5, -2.0, 0.25, 3.0, -0.5, 7.0, 2.0, -1.0, 0.75, 4.0, -3.5, 1.0)


def reduce_case(dt: DType, op: Ops, rows: int = 3, cols: int = 4) -> Case:
    """A reduction over the inner loop in a DEFINE_REG accumulator, read after the loop."""
    identity = {Ops.ADD: 0, Ops.MUL: 1}.get(op, dtypes.min(dt))
    p = Builder()
    a = p.buffer(dt, list(_REDUCE_VALUES[: rows * cols]))
    out = p.output(dt, rows, f"reduce {op.name}")
    reg = p.add(UOp(Ops.DEFINE_REG, dt.ptr(1, AddrSpace.REG), (), 0))
    r = p.add(rng(rows, 0))
    init = p.add(store(index(reg.after(r), c32(0)), UOp.const(identity, dt)))
    k = p.add(rng(cols, 1))
    acc = load(index(reg.after(init, k), c32(0)))
    x = load(index(a, alu(Ops.ADD, alu(Ops.MUL, r, c32(cols)), k)))
    done = p.add(store(index(reg, c32(0)), alu(op, acc, x)), end(k))
    p.add(store(index(out, r), load(index(reg.after(done), c32(0)))), end(r))
    return p.case(f"reduce-{op.name.lower()}-{dt.name}")


def vector_reduce_case(width: int = 4, rows: int = 2, cols: int = 3) -> Case:
    """A float32 vector accumulator in a scalar register array (what the lowering pipeline
    emits for an upcast reduction): vector stores and loads at element 0 of the register."""
    vdt = dtypes.float32.vec(width)
    p = Builder()
    a = p.buffer(dtypes.float32, [x * 0.25 - 1 for x in range(rows * cols * width)])
    out = p.output(dtypes.float32, rows * width, "vector accumulator")
    reg = p.add(UOp(Ops.DEFINE_REG, dtypes.float32.ptr(width, AddrSpace.REG), (), 0))
    r = p.add(rng(rows, 0))
    zeros = UOp.vconst((0.0,) * width, vdt)
    init = p.add(store(index(reg.after(r), c32(0)), zeros))
    k = p.add(rng(cols, 1))
    acc = load(index(reg.after(init, k), c32(0)), vdt)
    at = alu(Ops.MUL, alu(Ops.ADD, alu(Ops.MUL, r, c32(cols)), k), c32(width))
    done = p.add(store(index(reg, c32(0)), alu(Ops.ADD, acc, load(index(a, at), vdt))), end(k))
    total = load(index(reg.after(done), c32(0)), vdt)
    p.add(store(index(out, alu(Ops.MUL, r, c32(width))), total), end(r))
    return p.case(f"reduce-vector-acc-float{width}")


def nested_case() -> Case:
    """Two nested loops with int64 counters: an outer product."""
    p = Builder()
    a = p.buffer(dtypes.float64, [1.0, 2.0, -3.0])
    b = p.buffer(dtypes.float64, [0.5, -1.0, 4.0, 8.0])
    out = p.output(dtypes.float64, 12, "nested int64 loops")
    i = p.add(rng(3, 0, dtypes.int64))
    j = p.add(rng(4, 1, dtypes.int64))
    at = alu(Ops.ADD, alu(Ops.MUL, i, UOp.const(4, dtypes.int64)), j)
    value = alu(Ops.MUL, load(index(a, i)), load(index(b, j)))
    p.add(store(index(out, at), value), end(j), end(i))
    return p.case("nested-int64")


def _fma_triples(dt: DType) -> list[tuple[float, float, float]]:
    """(a, b, c) where a fused multiply-add differs from a rounded multiply then add:
    ``c`` cancels most of the product, so the result is the product's rounding error; plus a
    subnormal tie and an intermediate overflow (float32)."""
    half = 12 if dt is dtypes.float32 else 27  # (1 + 2^-half)^2 = 1 + 2^(1-half) + 2^-2half
    out: list[tuple[float, float, float]] = []
    for k in range(8):
        a = truncate(dt)((1 + 2.0**-half) * (1 + k * 2.0 ** (1 - 2 * half)))
        b = (1 + 2.0**-half) * (-1) ** k
        out.append((a, b, -truncate(dt)(a * b)))
    out += [(3.0, 1 / 3, -1.0), (0.1, 10.0, -1.0), (-0.0, 2.0, -0.0), (1.0, -0.0, 0.0)]
    if dt is dtypes.float32:
        tiny = 2.0**-149
        out += [(2.0**-75, 2.0**-75, tiny), (2.0**64, 2.0**64, -float(dtypes.max(dt)))]
    return out


def mulacc_case(renderer: Renderer, dt: DType) -> Case | None:
    """MULACC on operands where fusing matters (one rounding: exec_alu's fma), scalar and, if
    the renderer has ``dt`` vectors, as a vector op; also the accumulation the lowering
    contracts (``acc = fma(a, b, acc)`` in a register)."""
    if Ops.MULACC not in renderer.code_for_op or dt not in renderer.supported_dtypes:
        return None
    triples = _fma_triples(dt)
    width = vector_width(renderer, dt)
    n = len(triples) if width is None else -(-len(triples) // width) * width
    triples += [triples[i % len(triples)] for i in range(n - len(triples))]
    p = Builder()
    a, b, c = (p.buffer(dt, [t[j] for t in triples]) for j in range(3))
    out = p.output(dt, n, f"MULACC fused {dt.name}")
    i = p.add(rng(n))
    x, y, z = (load(index(buf, i)) for buf in (a, b, c))
    p.add(store(index(out, i), alu(Ops.MULACC, x, y, z)), end(i))
    if width is not None:
        vdt = dt.vec(width)
        vout = p.output(dt, n, f"MULACC fused {vdt.name}")
        v = p.add(rng(n // width, 1))
        at = alu(Ops.MUL, v, c32(width))
        vx, vy, vz = (load(index(buf, at), vdt) for buf in (a, b, c))
        p.add(store(index(vout, at), alu(Ops.MULACC, vx, vy, vz)), end(v))
    reg = p.add(UOp(Ops.DEFINE_REG, dt.ptr(1, AddrSpace.REG), (), 0))
    total = p.output(dt, 1, f"MULACC accumulation {dt.name}")
    init = p.add(store(index(reg, c32(0)), UOp.const(0.0, dt)))
    k = p.add(rng(n, 2))
    acc = load(index(reg.after(init, k), c32(0)))
    step = alu(Ops.MULACC, load(index(a, k)), load(index(b, k)), acc)
    done = p.add(store(index(reg, c32(0)), step), end(k))
    p.add(store(index(total, c32(0)), load(index(reg.after(done), c32(0)))))
    return p.case(f"mulacc-fused-{dt.name}")


# -- vectors --------------------------------------------------------------------------------


def vector_width(renderer: Renderer, dt: DType, want: int = 4) -> int | None:
    """The width to test ``dt`` vectors at: ``want`` if listed, else the widest listed."""
    widths = renderer.vector_widths.get(dt, ())
    if want in widths:
        return want
    return max(widths) if widths else None


def _vector_ops(renderer: Renderer, dt: DType) -> list[Ops]:
    ops = [Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPLT, Ops.WHERE]
    ops += [Ops.FDIV, Ops.SQRT] if dtypes.is_float(dt) else [Ops.CDIV, Ops.SHL, Ops.XOR]
    if dt is dtypes.bool:
        ops = [Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPLT, Ops.WHERE, Ops.XOR]
    return [op for op in ops if op in renderer.code_for_op]


def vector_case(renderer: Renderer, dt: DType, width: int) -> Case:
    """Vector loads, ALU on vectors, GEP shuffles, VECTORIZE, a vector CAST and stores."""
    vals = alu_values(dt)
    n = width * 4
    p = Builder()
    abuf = p.buffer(dt, [vals[i % len(vals)] for i in range(n)])
    bbuf = p.buffer(dt, [vals[(i * 5 + 2) % len(vals)] for i in range(n)])
    i = p.add(rng(4))
    base = alu(Ops.MUL, i, c32(width))
    vdt = dt.vec(width)
    a, b = load(index(abuf, base), vdt), load(index(bbuf, base), vdt)
    for op in _vector_ops(renderer, dt):
        srcs = (
            (alu(Ops.CMPLT, b, a), a, b) if op is Ops.WHERE else (a,) if op is Ops.SQRT else (a, b)
        )
        value = alu(op, *srcs)
        out = p.output(value.dtype.scalar(), n, f"{op.name} {vdt.name}")
        p.add(store(index(out, base), value))
    rev = UOp(Ops.GEP, vdt, (a,), tuple(reversed(range(width))))
    lanes = [UOp(Ops.GEP, dt, (b,), (k,)) for k in range(width)]
    mixed = UOp(Ops.VECTORIZE, vdt, tuple(lanes[1:] + lanes[:1]))
    for label, value in (("GEP reverse", rev), ("VECTORIZE rotate", mixed)):
        p.add(store(index(p.output(dt, n, f"{label} {vdt.name}"), base), value))
    target = dtypes.float32 if dt is not dtypes.float32 else dtypes.int32
    cast = UOp(Ops.CAST, target.vec(width), (a,))
    p.add(store(index(p.output(target, n, f"CAST {vdt.name} -> {target.name}"), base), cast))
    p.add(end(i))
    return p.case(f"vector-{vdt.name}")


def vector_gated_case(width: int) -> Case:
    """A gated float32 vector load (whole vector masked) into a vector accumulator."""
    p = Builder()
    a = p.buffer(dtypes.float32, [x * 0.5 - 3 for x in range(width * 3)])
    out = p.output(dtypes.float32, width * 4, "gated vector LOAD")
    i = p.add(rng(4))
    ok = alu(Ops.CMPLT, i, c32(3))
    alt = UOp.vconst((-1.0,) * width, dtypes.float32.vec(width))
    x = load(index(a, alu(Ops.MUL, i, c32(width)), ok), dtypes.float32.vec(width), alt)
    p.add(store(index(out, alu(Ops.MUL, i, c32(width))), x), end(i))
    return p.case(f"vector-gated-float{width}")


def lane_gated_case(width: int) -> Case:
    """A float32 vector load with a gate per lane: each step starts one element before its
    slice, so lane 0 of the first step lies before the buffer, and the gate also masks off the
    last lane of the last step (inside the buffer); masked lanes read ``alt``, a different
    value per lane."""
    p = Builder()
    a = p.buffer(dtypes.float32, [x * 0.25 - 1 for x in range(width * 2)])
    out = p.output(dtypes.float32, width * 2, "lane-gated vector LOAD")
    i = p.add(rng(2))
    start = alu(Ops.ADD, alu(Ops.MUL, i, c32(width)), c32(-1))
    ivec = dtypes.int32.vec(width)
    lanes = UOp(Ops.VCONST, ivec, (), tuple(range(width)))
    at = alu(Ops.ADD, UOp(Ops.VECTORIZE, ivec, (start,) * width), lanes)
    low = UOp(Ops.VCONST, ivec, (), (-1,) * width)
    high = UOp(Ops.VCONST, ivec, (), (width * 2 - 2,) * width)
    ok = alu(Ops.AND, alu(Ops.CMPLT, low, at), alu(Ops.CMPLT, at, high))
    alt = UOp(Ops.VCONST, dtypes.float32.vec(width), (), tuple(-float(k) for k in range(width)))
    x = load(index(a, start, ok), dtypes.float32.vec(width), alt)
    p.add(store(index(out, alu(Ops.MUL, i, c32(width))), x), end(i))
    return p.case(f"lane-gated-float{width}")


# -- the corpus ------------------------------------------------------------------------------


def corpus(renderer: Renderer) -> list[Case]:
    """Every case ``renderer`` can run."""
    dts = renderable(renderer)
    cases: list[Case | None] = [alu_case(renderer, dt) for dt in dts]
    cases += [cast_case(renderer, dt) for dt in dts]
    cases += [bitcast_case(renderer, dt) for dt in dts]
    cases += [gated_case(dt) for dt in (dtypes.float32, dtypes.int8, dtypes.float16) if dt in dts]
    cases += [if_case(), symbolic_case(5), symbolic_case(0), multicore_case(), nested_case()]
    for dt, op in ((dtypes.float32, Ops.ADD), (dtypes.int32, Ops.MUL), (dtypes.float32, Ops.MAX)):
        cases.append(reduce_case(dt, op))
    if dtypes.float16 in dts:
        cases.append(reduce_case(dtypes.float16, Ops.ADD))
    for dt in dts:
        width = vector_width(renderer, dt)
        if width is not None and dt in renderer.vector_widths:
            cases.append(vector_case(renderer, dt, width))
    if vector_width(renderer, dtypes.float32) is not None:
        cases += [vector_gated_case(4), vector_reduce_case(4)]
    if getattr(renderer, "lane_gated_loads", False):  # only renderers that take this form
        cases.append(lane_gated_case(8))
    cases += [mulacc_case(renderer, dt) for dt in (dtypes.float32, dtypes.float64)]
    return [c for c in cases if c is not None]
