"""The NIR renderer: a linear program as a Mesa NIR compute shader, optimized by NIR's passes.

Mapping: a GPU-style renderer (``has_local``, ``has_shared``): the optimizer gives kernels
workgroup ids (``gidx``) and invocation ids (``lidx``), and llvmpipe runs the invocations of
a workgroup in the lanes of one SIMD vector (``MAX_LANES`` at most: a workgroup is one
vector, in lockstep). The shader itself loops over the grid's workgroups (``gidx0``
fastest), so one call of the kernel runs the grid with the CPU calling convention (no id
parameters). A grid worth it is split over the host's cores: the renderer's lowering rule
(``extra_matcher``, ``split_over_cores``) adds a ``SPECIAL core`` of size n, the kernel
takes the core id last as THREAD-split CPU kernels do, every CPU runtime runs its n slices
on its cores, and slice c loops over the c-th of n blocks of consecutive workgroups
(``core_blocks``; else workgroups ``c, c + n, ...``). Without ``gidx`` ids — hand-built CPU
programs — the core id is the workgroup id llvmpipe gets:

* ``SPECIAL lidx0..2``: ``load_local_invocation_id``; ``gidx0..2``: the grid loop's counter
  unflattened (sizes may be symbolic: computed before the loop);
* ``DEFINE_LOCAL``: a slice of the workgroup's shared memory (``load_shared``/
  ``store_shared`` at 32-bit byte offsets); ``BARRIER``: a workgroup-scope memory barrier
  (the lanes already run in lockstep, so no execution barrier is needed);
* buffer ``PARAM`` k: a 64-bit address read from uniform block 0 at byte ``8 * k``; Variables
  follow as 32-bit values in the next 8-byte slots (the LVP compiler fills the block);
* ``INDEX`` into a buffer: ``address + idx * itemsize`` (64-bit); ``LOAD``/``STORE``:
  ``load_global``/``store_global``; a gated load reads the buffer's first element where the
  gate is false and selects ``alt`` (no branch); a gated store is an ``if``;
* ``DEFINE_REG``: one function-temporary variable per element and lane (constant indices
  only); ``nir_lower_vars_to_ssa`` turns them into SSA values and phis;
* ``RANGE``/``END``: a bottom-tested ``loop`` (counter variable, ``break`` last) under an
  ``if`` on a non-empty range (llvmpipe finishes a breaking iteration with its lanes masked
  off, and would still load after a ``break`` at the top); ``IF``/``ENDIF``: ``if``;
* vectors are lists of scalar values (``VECTORIZE``/``GEP`` pick lanes): llvmpipe vectorizes
  across invocations, not within one; the renderer still declares the host's vector widths
  so UPCAST puts more work in each invocation.

Integer division/remainder by zero give 0 and shifts past the width are defined, as
``exec_alu`` says; float ops are exact (``exact`` ALU instructions, IEEE float controls);
``MULACC`` (the lowering's contracted accumulations) is ``ffma``, one rounding.
The rendered text is a header line (sizes, and ``uniform=1`` where no branch depends on a
value that may differ between invocations: ``uniform_control``, which lets the LVP compiler
drop llvmpipe's per-lane masking of shared values and memory accesses), then
``nir_print_shader``'s printout (what DEBUG shows and the goldens keep), then the serialized
shader, base64, on lines starting with ``;``.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from typing import Any, ClassVar

from fusegrad.codegen import Renderer
from fusegrad.renderer.host import host_vector_widths
from fusegrad.renderer.nir import bindings as nb
from fusegrad.renderer.nir.builder import Def, NIRBuilder, print_shader, serialize
from fusegrad.renderer.nir.mesa import load_mesa
from fusegrad.renderer.signature import KernelSignature, kernel_signature
from fusegrad.uop import AddrSpace, DType, Ops, PatternMatcher, PtrDType, UOp, UPat, dtypes

Op = nb.nir_op
Intr = nb.nir_intrinsic_op


def _named(name: str) -> int:
    """The NIR opcode called ``nir_op_<name>``."""
    return int(nb.nir_op["nir_op_" + name])


HEADER = "; fusegrad NIR kernel"
MAX_LANES = 8  # invocations in a workgroup: the lanes of llvmpipe's SIMD vector
BLOB_PREFIX = "; nir "

# -- dtypes --------------------------------------------------------------------------------------

NIR_DTYPES = frozenset(
    {dtypes.bool, dtypes.float32, dtypes.float64}
    | {dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64}
    | {dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64}
)


def kind(dt: DType) -> str:
    """``b`` bool, ``f`` float, ``i`` signed, ``u`` unsigned integer."""
    s = dt.scalar()
    if s is dtypes.bool:
        return "b"
    if dtypes.is_float(s):
        return "f"
    return "u" if dtypes.is_unsigned(s) else "i"


def bits(dt: DType) -> int:
    """The bit size of ``dt``'s values in NIR (bools are 1-bit)."""
    s = dt.scalar()
    return 1 if s is dtypes.bool else 8 * s.itemsize


# -- ALU -----------------------------------------------------------------------------------------

Emit = Callable[..., Def]


def _arith(int_op: int, float_op: int, bool_op: int) -> Emit:
    table = {"i": int_op, "u": int_op, "f": float_op, "b": bool_op}
    return lambda nir, dt, a, b: nir.alu(table[kind(dt)], a, b)


def _safe_divisor(nir: NIRBuilder, dt: DType, b: Def) -> tuple[Def, Def]:
    """(b is 0, a divisor that never traps: 1 where b is 0 or, signed, -1)."""
    n = bits(dt)
    zero = nir.alu(Op.nir_op_ieq, b, nir.imm(n, 0))
    bad = zero
    if kind(dt) == "i":
        bad = nir.alu(Op.nir_op_ior, zero, nir.alu(Op.nir_op_ieq, b, nir.imm(n, -1)))
    return zero, nir.alu(Op.nir_op_bcsel, bad, nir.imm(n, 1), b)


def _cdiv(nir: NIRBuilder, dt: DType, a: Def, b: Def) -> Def:
    n = bits(dt)
    zero, d = _safe_divisor(nir, dt, b)
    if kind(dt) == "u":
        q = nir.alu(Op.nir_op_udiv, a, d)
    else:  # a / -1 is -a (wrapping at the minimum)
        q = nir.alu(Op.nir_op_idiv, a, d)
        minus_one = nir.alu(Op.nir_op_ieq, b, nir.imm(n, -1))
        q = nir.alu(Op.nir_op_bcsel, minus_one, nir.alu(Op.nir_op_ineg, a), q)
    return nir.alu(Op.nir_op_bcsel, zero, nir.imm(n, 0), q)


def _cmod(nir: NIRBuilder, dt: DType, a: Def, b: Def) -> Def:
    _, d = _safe_divisor(nir, dt, b)  # x % 1 is 0: covers b == 0 and b == -1
    return nir.alu(Op.nir_op_umod if kind(dt) == "u" else Op.nir_op_irem, a, d)


def _max(nir: NIRBuilder, dt: DType, a: Def, b: Def) -> Def:
    k = kind(dt)
    if k != "f":
        return nir.alu({"i": Op.nir_op_imax, "u": Op.nir_op_umax, "b": Op.nir_op_ior}[k], a, b)
    # exec_alu: a NaN operand wins (the first), max(-0.0, 0.0) is 0.0 (AND of the bits)
    sel = nir.alu(Op.nir_op_bcsel, nir.alu(Op.nir_op_flt, a, b), b, nir.alu(Op.nir_op_iand, a, b))
    sel = nir.alu(Op.nir_op_bcsel, nir.alu(Op.nir_op_flt, b, a), a, sel)
    sel = nir.alu(Op.nir_op_bcsel, nir.alu(Op.nir_op_fneu, b, b), b, sel)
    return nir.alu(Op.nir_op_bcsel, nir.alu(Op.nir_op_fneu, a, a), a, sel)


def _shl(nir: NIRBuilder, dt: DType, a: Def, b: Def) -> Def:
    n = bits(dt)
    ok = nir.alu(Op.nir_op_ult, b, nir.imm(n, n))
    return nir.alu(Op.nir_op_bcsel, ok, nir.alu(Op.nir_op_ishl, a, _shift32(nir, b)), nir.imm(n, 0))


def _shift32(nir: NIRBuilder, b: Def) -> Def:
    """NIR shift amounts are 32-bit."""
    size = b.contents.bit_size
    if size == 32:
        return b
    return nir.alu(Op.nir_op_u2u32, b)


def _shr(nir: NIRBuilder, dt: DType, a: Def, b: Def) -> Def:
    n = bits(dt)
    ok = nir.alu(Op.nir_op_ult, b, nir.imm(n, n))
    if kind(dt) == "i":  # by >= width only the sign is left: shift by width - 1
        amount = nir.alu(Op.nir_op_bcsel, ok, b, nir.imm(n, n - 1))
        return nir.alu(Op.nir_op_ishr, a, _shift32(nir, amount))
    shifted = nir.alu(Op.nir_op_ushr, a, _shift32(nir, b))
    return nir.alu(Op.nir_op_bcsel, ok, shifted, nir.imm(n, 0))


def _compare(int_op: int, uint_op: int, float_op: int, bool_fn: Emit) -> Emit:
    table = {"i": int_op, "u": uint_op, "f": float_op}

    def emit(nir: NIRBuilder, dt: DType, a: Def, b: Def) -> Def:
        k = kind(dt)
        return bool_fn(nir, a, b) if k == "b" else nir.alu(table[k], a, b)

    return emit


def _bool_lt(nir: NIRBuilder, a: Def, b: Def) -> Def:
    return nir.alu(Op.nir_op_iand, nir.alu(Op.nir_op_inot, a), b)


def _neg(nir: NIRBuilder, dt: DType, a: Def) -> Def:
    op = {"f": Op.nir_op_fneg, "b": Op.nir_op_inot}.get(kind(dt), Op.nir_op_ineg)
    return nir.alu(op, a)


def _reciprocal(nir: NIRBuilder, dt: DType, a: Def) -> Def:
    return nir.alu(Op.nir_op_fdiv, nir.fimm(bits(dt), 1.0), a)


def _mulacc(nir: NIRBuilder, dt: DType, a: Def, b: Def, c: Def) -> Def:
    """``a * b + c``: floats with one rounding (``ffma``; the LVP compiler makes gallivm's
    ``llvm.fmuladd`` an ``llvm.fma``, fused on every host), integers wrapping."""
    k = kind(dt)
    if k == "f":
        return nir.alu(Op.nir_op_ffma, a, b, c)
    if k == "b":
        return nir.alu(Op.nir_op_ior, nir.alu(Op.nir_op_iand, a, b), c)
    return nir.alu(Op.nir_op_iadd, nir.alu(Op.nir_op_imul, a, b), c)


def _trunc(nir: NIRBuilder, dt: DType, a: Def) -> Def:
    return nir.alu(Op.nir_op_ftrunc, a) if kind(dt) == "f" else a


CODE_FOR_OP: dict[Ops, Emit] = {
    Ops.ADD: _arith(Op.nir_op_iadd, Op.nir_op_fadd, Op.nir_op_ior),  # bool + bool saturates
    Ops.SUB: _arith(Op.nir_op_isub, Op.nir_op_fsub, Op.nir_op_ixor),
    Ops.MUL: _arith(Op.nir_op_imul, Op.nir_op_fmul, Op.nir_op_iand),
    Ops.FDIV: _arith(Op.nir_op_idiv, Op.nir_op_fdiv, Op.nir_op_iand),
    Ops.CDIV: _cdiv,
    Ops.CMOD: _cmod,
    Ops.MAX: _max,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.AND: lambda nir, dt, a, b: nir.alu(Op.nir_op_iand, a, b),
    Ops.OR: lambda nir, dt, a, b: nir.alu(Op.nir_op_ior, a, b),
    Ops.XOR: lambda nir, dt, a, b: nir.alu(Op.nir_op_ixor, a, b),
    Ops.CMPLT: _compare(Op.nir_op_ilt, Op.nir_op_ult, Op.nir_op_flt, _bool_lt),
    Ops.CMPNE: _compare(
        Op.nir_op_ine,
        Op.nir_op_ine,
        Op.nir_op_fneu,
        lambda nir, a, b: nir.alu(Op.nir_op_ixor, a, b),
    ),
    Ops.CMPEQ: _compare(
        Op.nir_op_ieq, Op.nir_op_ieq, Op.nir_op_feq, lambda nir, a, b: nir.alu(Op.nir_op_ieq, a, b)
    ),
    Ops.NEG: _neg,
    Ops.RECIPROCAL: _reciprocal,
    Ops.SQRT: lambda nir, dt, a: nir.alu(Op.nir_op_fsqrt, a),
    Ops.TRUNC: _trunc,
    Ops.WHERE: lambda nir, dt, c, a, b: nir.alu(Op.nir_op_bcsel, c, a, b),
    Ops.MULACC: _mulacc,
}

# -- conversions ---------------------------------------------------------------------------------


def _conversion_op(src: DType, dst: DType) -> int | None:
    """The NIR op converting ``src`` to ``dst`` (None: the bits stay, nothing to emit)."""
    ks, kd, bs, bd = kind(src), kind(dst), bits(src), bits(dst)
    if ks == "b":
        return _named(f"b2{'f' if kd == 'f' else 'i'}{bd}")
    if kd == "f":
        prefix = {"i": "i2f", "u": "u2f", "f": "f2f"}[ks]
        return None if ks == "f" and bs == bd else _named(f"{prefix}{bd}")
    if ks == "f":
        return _named(f"f2{'u' if kd == 'u' else 'i'}{bd}")
    if bs == bd:
        return None
    # widening keeps the source's sign; narrowing drops bits either way
    return _named(f"{'i2i' if ks == 'i' and bd > bs else 'u2u'}{bd}")


def _float_to_int(nir: NIRBuilder, src: DType, dst: DType, x: Def) -> Def:
    """exec_alu's (x86's) conversion: through a 32-bit signed integer for narrow ints and
    int32, through 64 bits otherwise; NaN and out-of-range values give the minimum of that
    width ("integer indefinite"), uint64 converts [2**63, 2**64) exactly; then truncate."""
    fb = bits(src)
    through = 32 if dst.itemsize < 4 or dst.scalar() is dtypes.int32 else 64
    limit = float(2 ** (through - 1))
    in_range = nir.alu(
        Op.nir_op_iand,
        nir.alu(Op.nir_op_flt, x, nir.fimm(fb, limit)),
        nir.alu(Op.nir_op_fge, x, nir.fimm(fb, -limit)),
    )
    out = nir.alu(
        Op.nir_op_bcsel, in_range, nir.alu(_named(f"f2i{through}"), x),
        nir.imm(through, 1 << (through - 1)),
    )  # fmt: skip
    if dst.scalar() is dtypes.uint64:
        high = nir.alu(
            Op.nir_op_iand,
            nir.alu(Op.nir_op_fge, x, nir.fimm(fb, limit)),
            nir.alu(Op.nir_op_flt, x, nir.fimm(fb, 2.0**64)),
        )
        out = nir.alu(Op.nir_op_bcsel, high, nir.alu(Op.nir_op_f2u64, x), out)
    return out if bits(dst) == through else nir.alu(_named(f"u2u{bits(dst)}"), out)


def _int64_to_double(nir: NIRBuilder, k: str, x: Def) -> Def:
    """exec_alu converts 64-bit ints to float32 through double (two roundings, as x86 code
    does); written as ``hi * 2**32 + lo`` (one rounding, the same double) since NIR's algebra
    folds ``f2f32(i2f64(x))`` into one rounding."""
    hi = nir.alu(Op.nir_op_ishr if k == "i" else Op.nir_op_ushr, x, nir.imm(32, 32))
    hi_f = nir.alu(_named(f"{k}2f64"), nir.alu(Op.nir_op_u2u32, hi))
    lo_f = nir.alu(Op.nir_op_u2f64, nir.alu(Op.nir_op_u2u32, x))
    return nir.alu(Op.nir_op_fadd, nir.alu(Op.nir_op_fmul, hi_f, nir.fimm(64, 2.0**32)), lo_f)


def _cast(nir: NIRBuilder, src: DType, dst: DType, x: Def) -> Def:
    if dst.scalar() is dtypes.bool:
        if kind(src) == "b":
            return x
        if kind(src) == "f":
            return nir.alu(Op.nir_op_fneu, x, nir.fimm(bits(src), 0.0))  # NaN is true
        return nir.alu(Op.nir_op_ine, x, nir.imm(bits(src), 0))
    if kind(src) == "f" and kind(dst) in "iu":
        return _float_to_int(nir, src, dst, x)
    if kind(src) in "iu" and bits(src) == 64 and dst.scalar() is dtypes.float32:
        return nir.alu(Op.nir_op_f2f32, _int64_to_double(nir, kind(src), x))
    op = _conversion_op(src, dst)
    return x if op is None else nir.alu(op, x)


# -- the program ---------------------------------------------------------------------------------


def _const_bits(dt: DType, value: Any) -> tuple[int, int]:
    """(bit size, raw bits) of a constant of scalar dtype ``dt``."""
    import struct

    k, n = kind(dt), bits(dt)
    if k == "f":
        fmt = "<f" if n == 32 else "<d"
        raw = struct.unpack("<I" if n == 32 else "<Q", struct.pack(fmt, float(value)))[0]
        return n, raw
    return n, int(value) & ((1 << n) - 1)


def _root(u: UOp) -> UOp:
    """The buffer behind AFTER aliases."""
    while u.op is Ops.AFTER:
        u = u.src[0]
    return u


class _Program:
    """The values (lists of scalar defs, one per lane) of a linear program being rendered."""

    def __init__(self, nir: NIRBuilder, uops: list[UOp], name: str) -> None:
        self.nir = nir
        self.sig = cpu_signature(uops, name)
        self.vals: dict[UOp, list[Def]] = {}
        self.regs: dict[UOp, list[Any]] = {}  # DEFINE_REG -> variables (element-major, lanes)
        self.flow: dict[UOp, Any] = {}  # RANGE -> (loop, counter, guard if, end), IF -> nir_if
        self.slots = {b: 8 * i for i, b in enumerate(self.sig.buffers)}
        first = 8 * len(self.sig.buffers)
        self.slots.update({v: first + 8 * i for i, v in enumerate(self.sig.variables)})

        self.zero_slot = first + 8 * len(self.sig.variables)
        self.local_size = _local_size(uops)
        self.shared: dict[UOp, int] = {}  # DEFINE_LOCAL -> byte offset in shared memory
        self.shared_bytes = 0
        self.group_ids: dict[str, Def] = {}  # gidx0..2 -> the workgroup loop's ids

    @property
    def uniform_bytes(self) -> int:
        return self.zero_slot + 8

    def uniform(self, offset: int, size: int) -> Def:
        zero = self.nir.imm(32, 0)
        return self.nir.intrinsic(
            Intr.nir_intrinsic_load_ubo, (zero, self.nir.imm(32, offset)), 1, size,
            ACCESS=0, ALIGN_MUL=size // 8, ALIGN_OFFSET=0, RANGE_BASE=0,
            RANGE=self.uniform_bytes,
        )  # fmt: skip

    def emit(self, u: UOp) -> None:
        handler = _HANDLERS.get(u.op)
        if handler is not None:
            handler(self, u)
            return
        if u.op in CODE_FOR_OP:
            self.vals[u] = self.lanes(u, CODE_FOR_OP[u.op])
            return
        raise NotImplementedError(f"NIR renderer: no rule for {u.op!r} ({u.dtype})")

    def lanes(self, u: UOp, fn: Emit) -> list[Def]:
        """``fn`` applied lane by lane (operands of the op's operand dtype)."""
        dt = u.src[-1].dtype.scalar()
        srcs = [self.vals[s] for s in u.src]
        count = max(len(s) for s in srcs)
        out = []
        for lane in range(count):
            ops = [s[lane if len(s) > 1 else 0] for s in srcs]
            out.append(fn(self.nir, dt, *ops))
        return out


# -- handlers of the non-ALU ops -----------------------------------------------------------------


def _param(p: _Program, u: UOp) -> None:
    if isinstance(u.dtype, PtrDType):
        p.vals[u] = [p.uniform(p.slots[u], 64)]
        return
    value = p.uniform(p.slots[u], 32)
    p.vals[u] = [_cast(p.nir, dtypes.int32, u.dtype, value)]


def _const(p: _Program, u: UOp) -> None:
    values = u.arg if isinstance(u.arg, tuple) else (u.arg,) * u.dtype.count
    dt = u.dtype.scalar()
    p.vals[u] = [
        p.uniform(p.zero_slot, bits(dt))
        if _positive_zero(dt, v)
        else p.nir.imm(*_const_bits(dt, v))
        for v in values
    ]


def _positive_zero(dt: DType, value: Any) -> bool:
    """gallivm folds x * 0.0, 0.0 / x, x / 0.0 and 0.0 + x by the operand's identity with
    its zero constant (to 0, 0, undef and x: wrong for NaN, inf, -0.0), so float +0.0 is read
    from the argument block's zero slot instead: a value only LLVM sees is zero, and LLVM
    folds it by IEEE rules."""
    return kind(dt) == "f" and float(value) == 0.0 and math.copysign(1.0, float(value)) > 0


def cpu_signature(uops: list[UOp], name: str | None = None) -> KernelSignature:
    """The CPU calling convention of a program (``kernel_signature``), which may have
    workgroup ids here: the kernel runs the whole grid, so they are no parameters."""
    ids = {f"{k}{i}" for k in ("gidx", "lidx") for i in range(3)}
    return kernel_signature([u for u in uops if not (u.op is Ops.SPECIAL and u.arg in ids)], name)


def _local_size(uops: list[UOp]) -> tuple[int, int, int]:
    """The workgroup's size from the ``lidx`` SPECIALs (constants: the lanes are fixed when
    the shader is compiled)."""
    size = [1, 1, 1]
    for u in uops:
        if u.op is Ops.SPECIAL and str(u.arg).startswith("lidx"):
            if u.src[0].op is not Ops.CONST:
                raise NotImplementedError(f"NIR renderer: {u.arg} of a symbolic size")
            size[int(str(u.arg)[4:])] = int(u.src[0].arg)
    if math.prod(size) > MAX_LANES:
        raise NotImplementedError(
            f"NIR renderer: a workgroup of {math.prod(size)} invocations (at most {MAX_LANES},"
            " the lanes of one SIMD vector)"
        )
    return size[0], size[1], size[2]


def _special(p: _Program, u: UOp) -> None:
    name = str(u.arg)
    if name == "core":
        ids = p.nir.intrinsic(Intr.nir_intrinsic_load_workgroup_id, (), 3, 32)
        p.vals[u] = [_cast(p.nir, dtypes.int32, u.dtype, p.nir.channel(ids, 0))]
    elif name in ("gidx0", "gidx1", "gidx2"):
        p.vals[u] = [_cast(p.nir, dtypes.uint32, u.dtype, p.group_ids[name])]
    elif name in ("lidx0", "lidx1", "lidx2"):
        ids = p.nir.intrinsic(Intr.nir_intrinsic_load_local_invocation_id, (), 3, 32)
        p.vals[u] = [_cast(p.nir, dtypes.uint32, u.dtype, p.nir.channel(ids, int(name[4])))]
    else:
        raise NotImplementedError(f"NIR renderer: SPECIAL {name!r}")


def _group_sizes(p: _Program, uops: list[UOp]) -> list[Def]:
    """The grid's size per axis (32-bit; 1 where no ``gidx`` SPECIAL uses the axis)."""
    sizes = [p.nir.imm(32, 1) for _ in range(3)]
    for u in uops:
        if u.op is Ops.SPECIAL and str(u.arg).startswith("gidx"):
            size = p.vals[u.src[0]][0]
            if bits(u.src[0].dtype) != 32:
                size = p.nir.alu(Op.nir_op_u2u32, size)
            sizes[int(str(u.arg)[4])] = size
    return sizes


def _begin_workgroups(p: _Program, sizes: list[Def], blocks: bool) -> tuple[Any, ...]:
    """A loop over the grid's workgroups (the one invocation vector runs them in turn):
    ``gidx0`` fastest. Bottom-tested under an ``if``, like RANGE's loops. Slice c of a program
    split over cores (``SPECIAL core`` of size n) runs the c-th of n blocks of consecutive
    workgroups (``blocks``: each core streams its own part of memory) or workgroups
    ``c, c + n, c + 2n, ...``."""
    nir = p.nir
    total = nir.alu(Op.nir_op_imul, nir.alu(Op.nir_op_imul, sizes[0], sizes[1]), sizes[2])
    first, stride, stop = nir.imm(32, 0), nir.imm(32, 1), total
    if p.sig.core is not None:
        core = _u32(p, p.vals[p.sig.core][0], p.sig.core.dtype)
        cores = _u32(p, p.vals[p.sig.core.src[0]][0], p.sig.core.src[0].dtype)
        if blocks:  # ceil(total / n) workgroups each, the last block shorter
            size = nir.alu(
                Op.nir_op_udiv,
                nir.alu(Op.nir_op_iadd, total, nir.alu(Op.nir_op_isub, cores, nir.imm(32, 1))),
                cores,
            )
            first = nir.alu(Op.nir_op_imul, core, size)
            stop = nir.alu(Op.nir_op_umin, nir.alu(Op.nir_op_iadd, first, size), total)
        else:
            first, stride = core, cores
    counter = nir.local_variable("u", 32, "workgroup")
    nir.store_var(counter, first)
    guard = nir.push_if(nir.alu(Op.nir_op_ult, first, stop))
    loop = nir.push_loop()
    wg = nir.load_var(counter, 32)
    rest = nir.alu(Op.nir_op_udiv, wg, sizes[0])
    p.group_ids["gidx0"] = nir.alu(Op.nir_op_umod, wg, sizes[0])
    p.group_ids["gidx1"] = nir.alu(Op.nir_op_umod, rest, sizes[1])
    p.group_ids["gidx2"] = nir.alu(Op.nir_op_udiv, rest, sizes[1])
    return loop, counter, guard, stop, wg, stride


def _u32(p: _Program, x: Def, dt: DType) -> Def:
    """An integer value as 32 bits."""
    return x if bits(dt) == 32 else p.nir.alu(Op.nir_op_u2u32, x)


def _end_workgroups(p: _Program, state: tuple[Any, ...]) -> None:
    loop, counter, guard, stop, wg, stride = state
    nir = p.nir
    step = nir.alu(Op.nir_op_iadd, wg, stride)
    nir.store_var(counter, step)
    last = nir.push_if(nir.alu(Op.nir_op_uge, step, stop))
    nir.jump_break()
    nir.pop_if(last)
    nir.pop_loop(loop)
    nir.pop_if(guard)


def _define_local(p: _Program, u: UOp) -> None:
    assert isinstance(u.dtype, PtrDType)
    _, size = _memory_type(u.dtype.base)
    p.shared[u] = p.shared_bytes
    p.shared_bytes += (u.dtype.size * u.dtype.base.count * size + 15) // 16 * 16


def _barrier(p: _Program, u: UOp) -> None:
    """A workgroup is one SIMD vector, run in lockstep: every invocation's stores before the
    barrier happen before any invocation's loads after it. The barrier is the memory
    ordering of shared memory (no execution barrier: llvmpipe implements that with
    coroutines, for workgroups wider than a vector)."""
    p.nir.intrinsic(
        Intr.nir_intrinsic_barrier, (),
        EXECUTION_SCOPE=nb.mesa_scope.SCOPE_NONE, MEMORY_SCOPE=nb.mesa_scope.SCOPE_WORKGROUP,
        MEMORY_SEMANTICS=nb.nir_memory_semantics.NIR_MEMORY_ACQ_REL,
        MEMORY_MODES=nb.nir_variable_mode.nir_var_mem_shared,
    )  # fmt: skip


def _define_reg(p: _Program, u: UOp) -> None:
    assert isinstance(u.dtype, PtrDType)
    base = u.dtype.base
    lanes = base.count
    p.regs[u] = [
        p.nir.local_variable(kind(base), bits(base), f"r{len(p.regs)}_{i}")
        for i in range(u.dtype.size * lanes)
    ]


def _range(p: _Program, u: UOp) -> None:
    """A bottom-tested loop under an ``if`` on a non-empty range: llvmpipe finishes the
    iteration that breaks with every lane masked off, where stores are skipped but uniform
    loads are not; with the ``break`` last, nothing is left to run after it."""
    n = bits(u.dtype)
    end = p.vals[u.src[0]][0]
    counter = p.nir.local_variable("i", n, f"ridx{len(p.flow)}")
    p.nir.store_var(counter, p.nir.imm(n, 0))
    guard = p.nir.push_if(p.nir.alu(Op.nir_op_ilt, p.nir.imm(n, 0), end))
    loop = p.nir.push_loop()
    i = p.nir.load_var(counter, n)
    p.flow[u] = (loop, counter, guard, end)
    p.vals[u] = [i]


def _end(p: _Program, u: UOp) -> None:
    rng = u.src[0]
    loop, counter, guard, end = p.flow[rng]
    n = bits(rng.dtype)
    step = p.nir.alu(Op.nir_op_iadd, p.vals[rng][0], p.nir.imm(n, 1))
    p.nir.store_var(counter, step)
    last = p.nir.push_if(p.nir.alu(Op.nir_op_ige, step, end))
    p.nir.jump_break()
    p.nir.pop_if(last)
    p.nir.pop_loop(loop)
    p.nir.pop_if(guard)


def _if(p: _Program, u: UOp) -> None:
    p.flow[u] = p.nir.push_if(p.vals[u.src[0]][0])


def _endif(p: _Program, u: UOp) -> None:
    p.nir.pop_if(p.flow[u.src[0]])


def _index(p: _Program, u: UOp) -> None:
    buf = _root(u.src[0])
    if buf.op is Ops.DEFINE_REG:
        return  # registers are addressed by LOAD/STORE (constant indices)
    assert isinstance(buf.dtype, PtrDType)
    if buf.op is Ops.DEFINE_LOCAL:  # a 32-bit byte offset into shared memory
        idx = p.vals[u.src[1]][0]
        if bits(u.src[1].dtype) != 32:
            idx = p.nir.alu(Op.nir_op_u2u32, idx)
        _, size = _memory_type(buf.dtype.base)
        offset = p.nir.alu(Op.nir_op_imul, idx, p.nir.imm(32, size))
        p.vals[u] = [p.nir.alu(Op.nir_op_iadd, offset, p.nir.imm(32, p.shared[buf]))]
        return
    if buf.dtype.addrspace is not AddrSpace.GLOBAL:
        raise NotImplementedError(f"NIR renderer: {buf.dtype.addrspace} memory")
    idx = p.vals[u.src[1]][0]
    if u.src[1].dtype.itemsize != 8:
        idx = p.nir.alu(Op.nir_op_i2i64, idx)
    size = buf.dtype.base.scalar().itemsize
    offset = p.nir.alu(Op.nir_op_imul, idx, p.nir.imm(64, size))
    p.vals[u] = [p.nir.alu(Op.nir_op_iadd, p.vals[buf][0], offset)]


def _reg_vars(p: _Program, idx: UOp, count: int) -> list[Any]:
    buf, pos = _root(idx.src[0]), idx.src[1]
    if pos.op is not Ops.CONST:
        raise NotImplementedError("NIR renderer: a register indexed by a non-constant")
    assert isinstance(buf.dtype, PtrDType)
    lanes = buf.dtype.base.count
    first = int(pos.arg) * lanes
    return p.regs[buf][first : first + count]


def _memory_type(dt: DType) -> tuple[DType, int]:
    """(the element dtype, bytes) of a buffer's memory: bools are bytes."""
    s = dt.scalar()
    return (dtypes.uint8, 1) if s is dtypes.bool else (s, s.itemsize)


def _load(p: _Program, u: UOp) -> None:
    idx = u.src[0]
    if _root(idx.src[0]).op is Ops.DEFINE_REG:
        nbits = bits(u.dtype)
        p.vals[u] = [p.nir.load_var(v, nbits) for v in _reg_vars(p, idx, u.dtype.count)]
        return
    mem, size = _memory_type(u.dtype)
    shared = _root(idx.src[0]).op is Ops.DEFINE_LOCAL
    address = p.vals[idx][0]
    gate = p.vals[idx.src[2]][0] if len(idx.src) == 3 else None
    if gate is not None:  # masked lanes read the buffer's first element instead
        first = (
            p.nir.imm(32, p.shared[_root(idx.src[0])]) if shared else p.vals[_root(idx.src[0])][0]
        )
        address = p.nir.alu(Op.nir_op_bcsel, gate, address, first)
    out = []
    for lane in range(u.dtype.count):
        x = _access(p, shared, address, lane * size, size)
        out.append(_cast(p.nir, mem, u.dtype.scalar(), x) if mem is not u.dtype.scalar() else x)
    if gate is not None:
        alt = p.vals[u.src[1]]
        out = [p.nir.alu(Op.nir_op_bcsel, gate, x, alt[i % len(alt)]) for i, x in enumerate(out)]
    p.vals[u] = out


def _store(p: _Program, u: UOp) -> None:
    idx, value = u.src
    vals = p.vals[value]
    if _root(idx.src[0]).op is Ops.DEFINE_REG:
        for var, x in zip(_reg_vars(p, idx, len(vals)), vals, strict=True):
            p.nir.store_var(var, x)
        return
    mem, size = _memory_type(value.dtype)
    shared = _root(idx.src[0]).op is Ops.DEFINE_LOCAL
    nif = p.nir.push_if(p.vals[idx.src[2]][0]) if len(idx.src) == 3 else None
    address = p.vals[idx][0]
    for lane, x in enumerate(vals):
        raw = _cast(p.nir, value.dtype.scalar(), mem, x) if mem is not value.dtype.scalar() else x
        _access(p, shared, address, lane * size, size, raw)
    if nif is not None:
        p.nir.pop_if(nif)


def _access(
    p: _Program, shared: bool, address: Def, offset: int, size: int, value: Def | None = None
) -> Def | None:
    """Load (``value`` None) or store ``size`` bytes at ``address + offset``: a global address
    (64-bit) or a byte offset into shared memory (32-bit)."""
    nir = p.nir
    if offset:
        address = nir.alu(Op.nir_op_iadd, address, nir.imm(32 if shared else 64, offset))
    align = {"ALIGN_MUL": size, "ALIGN_OFFSET": 0}
    if shared and value is None:
        return nir.intrinsic(
            Intr.nir_intrinsic_load_shared, (address,), 1, 8 * size, BASE=0, **align
        )
    if shared:
        op = Intr.nir_intrinsic_store_shared
        return nir.intrinsic(op, (value, address), 1, BASE=0, WRITE_MASK=1, **align)
    if value is None:
        op = Intr.nir_intrinsic_load_global
        return nir.intrinsic(op, (address,), 1, 8 * size, ACCESS=0, **align)
    op = Intr.nir_intrinsic_store_global
    return nir.intrinsic(op, (value, address), 1, WRITE_MASK=1, ACCESS=0, **align)


def _cast_op(p: _Program, u: UOp) -> None:
    src = u.src[0].dtype.scalar()
    p.vals[u] = [_cast(p.nir, src, u.dtype.scalar(), x) for x in p.vals[u.src[0]]]


def _bitcast(p: _Program, u: UOp) -> None:
    src, dst = u.src[0].dtype.scalar(), u.dtype.scalar()
    if dtypes.bool in (src, dst) and src != dst and {src.itemsize, dst.itemsize} == {1}:
        if dtypes.is_float(src) or dtypes.is_float(dst):  # a bool's byte as an fp8's bits
            raise NotImplementedError(f"NIR renderer: BITCAST {src} -> {dst}")
        # a bool (1 bit in NIR) is stored as the byte 0 or 1; any nonzero byte reads as True
        p.vals[u] = [_cast(p.nir, src, dst, x) for x in p.vals[u.src[0]]]
        return
    if bits(src) != bits(dst):
        raise NotImplementedError(f"NIR renderer: BITCAST {src} -> {dst} changes the size")
    p.vals[u] = p.vals[u.src[0]]  # NIR values are untyped bits


def _vectorize(p: _Program, u: UOp) -> None:
    p.vals[u] = [x for s in u.src for x in p.vals[s]]


def _gep(p: _Program, u: UOp) -> None:
    lanes = p.vals[u.src[0]]
    p.vals[u] = [lanes[i] for i in u.arg]


def _alias(p: _Program, u: UOp) -> None:
    if u.src[0] in p.vals:
        p.vals[u] = p.vals[u.src[0]]


def _nothing(p: _Program, u: UOp) -> None:
    return None


_HOISTED = frozenset({Ops.PARAM, Ops.CONST, Ops.VCONST, Ops.DEFINE_REG, Ops.DEFINE_LOCAL})

_HANDLERS: dict[Ops, Callable[[_Program, UOp], None]] = {
    Ops.PARAM: _param,
    Ops.CONST: _const,
    Ops.VCONST: _const,
    Ops.SPECIAL: _special,
    Ops.DEFINE_REG: _define_reg,
    Ops.DEFINE_LOCAL: _define_local,
    Ops.BARRIER: _barrier,
    Ops.RANGE: _range,
    Ops.END: _end,
    Ops.IF: _if,
    Ops.ENDIF: _endif,
    Ops.INDEX: _index,
    Ops.LOAD: _load,
    Ops.STORE: _store,
    Ops.CAST: _cast_op,
    Ops.BITCAST: _bitcast,
    Ops.VECTORIZE: _vectorize,
    Ops.GEP: _gep,
    Ops.AFTER: _alias,
    Ops.SINK: _nothing,
    Ops.NOOP: _nothing,
}


# -- optimization --------------------------------------------------------------------------------

_PASSES = (
    "nir_copy_prop",
    "nir_opt_dce",
    "nir_opt_cse",
    "nir_opt_algebraic",
    "nir_opt_constant_folding",
    "nir_opt_dead_cf",
    "nir_opt_remove_phis",
    "nir_opt_undef",
)


def optimize(lib: Any, shader: Any) -> None:
    """Mesa's standard clean-up loop: registers to SSA, then copy propagation, DCE, CSE,
    algebraic simplification and constant folding until nothing changes."""
    lib.nir_lower_vars_to_ssa(shader)
    lib.nir_remove_dead_variables(shader, nb.nir_variable_mode.nir_var_function_temp, None)
    for _ in range(16):
        progress = False
        for name in _PASSES:
            progress |= bool(getattr(lib, name)(shader))
        if not progress:
            break
    lib.nir_opt_algebraic_late(shader)
    lib.nir_copy_prop(shader)
    lib.nir_opt_dce(shader)


def _parts(uops: list[UOp]) -> list[list[UOp] | str]:
    """The program in emission order: values without sources first, at the top (a constant
    the linearizer placed in a loop may be used after it, where NIR needs its definition to
    dominate the use), then the grid's sizes; ``"begin"`` / ``"end"`` around the rest when
    the program has workgroup ids (its body runs in a loop over the workgroups; the core id
    of a split program, before it, is where the loop starts)."""
    top = [u for u in uops if u.op in _HOISTED]
    groups = [u for u in uops if u.op is Ops.SPECIAL and str(u.arg).startswith("gidx")]
    if not groups:
        return [top, [u for u in uops if u.op not in _HOISTED]]
    core = [u for u in uops if u.op is Ops.SPECIAL and u.arg == "core"]
    needed: set[UOp] = set()
    for g in groups + core:
        needed.update(g.src[0].toposort())
    sizes = [u for u in uops if u in needed and u.op not in _HOISTED] + core
    specials = [u for u in uops if u.op is Ops.SPECIAL and u.arg != "core"]
    rest = [u for u in uops if u.op not in _HOISTED and u not in needed and u.op is not Ops.SPECIAL]
    return [top, sizes, "begin", specials, rest, "end"]


def uniform_control(uops: list[UOp]) -> bool:
    """Whether every invocation of a workgroup takes the same branches: no ``IF``, gated
    store or loop bound depends on a value that may differ between invocations (a ``lidx``
    id, what shared memory or a register holds, a load from an address that differs, and
    whatever is computed from those). Then llvmpipe's execution mask is all or nothing
    wherever code runs, which the LVP compiler uses (``lanes.uniform_lanes``)."""
    varying: set[UOp] = set()
    for u in uops:  # sources come first in a linear program
        lane_id = u.op is Ops.SPECIAL and str(u.arg).startswith("lidx")
        held = u.op is Ops.LOAD and _root(u.src[0].src[0]).op in _LANE_MEMORY
        if lane_id or held or any(s in varying for s in u.src):
            varying.add(u)
    for u in uops:
        gated_store = u.op is Ops.STORE and len(u.src[0].src) == 3
        if (u.op in (Ops.IF, Ops.RANGE) or gated_store) and _condition(u) in varying:
            return False
    return True


#: memory whose values may differ between the invocations reading it at one address
_LANE_MEMORY = frozenset({Ops.DEFINE_LOCAL, Ops.DEFINE_REG})


def _condition(u: UOp) -> UOp:
    """What decides a branch: an IF's condition, a loop's end, a gated store's gate."""
    return u.src[0].src[2] if u.op is Ops.STORE else u.src[0]


#: a program of fewer invocations x loop iterations than this (symbolic sizes at their most)
#: runs on one core: waking the other cores costs more than they save (the CPU optimizer's
#: ``THREAD_MIN_WORK``)
SPLIT_MIN_WORK = 1 << 15


def split_over_cores(sink: UOp, cores: int) -> UOp | None:
    """``sink`` with a ``SPECIAL core`` (size: the slices) among its sources when its grid is
    worth running on several cores, else None. Each slice runs every ``n``-th workgroup (see
    ``_begin_workgroups``); the core id is the kernel's last argument, as for THREAD-split CPU
    kernels, so every CPU runtime runs the slices on its cores."""
    every = sink.toposort()
    specials = [u for u in every if u.op is Ops.SPECIAL]
    groups = [u for u in specials if str(u.arg).startswith("gidx")]
    if cores < 2 or not groups or any(u.arg == "core" for u in specials):
        return None
    sizes = [g.src[0] for g in groups]
    total = math.prod(int(x.arg) for x in sizes) if all(x.op is Ops.CONST for x in sizes) else 0
    slices = cores if total == 0 else min(cores, total)  # 0: a symbolic grid
    loops = [u.src[0] for u in every if u.op is Ops.RANGE]
    lanes = [u.src[0] for u in specials if str(u.arg).startswith("lidx")]
    work = math.prod(_most(x) for x in [*sizes, *lanes, *loops])
    if slices < 2 or work < SPLIT_MIN_WORK:
        return None
    core = UOp(Ops.SPECIAL, dtypes.int32, (UOp(Ops.CONST, dtypes.int32, arg=slices),), "core")
    return sink.replace(src=(*sink.src, core))


def _most(x: UOp) -> int:
    """A size, or the most a symbolic one can be."""
    return int(x.arg) if x.op is Ops.CONST else max(int(x.vmax), 1)


def _split_rule(ctx: Any, sink: UOp) -> UOp | None:
    return split_over_cores(sink, int(ctx.renderer.max_threads))


#: the renderer's lowering rules: a grid worth it is split over the host's cores
SPLIT_MATCHER = PatternMatcher([(UPat(Ops.SINK, name="sink"), _split_rule)])


class NIRRenderer(Renderer):
    """Linear programs as Mesa NIR compute shaders (see the module docstring); the LVP
    compiler (``fusegrad.renderer.nir.LVPCompiler``) runs them on the CPU through llvmpipe."""

    device = "CPU"
    suffix = "LVP"
    has_local = True
    has_shared = True
    has_threads = False
    # a workgroup is llvmpipe's SIMD lanes: GROUP keeps a gather's lanes on adjacent floats
    # (sum of 16M float32, [GROUP 8, UPCAST 4] 52 ms vs [GROUPTOP 8, UPCAST 4] 592 ms)
    group_top = False
    # ... and the heuristics make the lanes the innermost part of an axis (LOCAL before
    # UPCAST: vector loads where the lanes would be UPCAST elements apart, gathers) with a
    # matmul block for one core's registers
    simd_lanes = True
    global_max = (2**31 - 1, 65535, 65535)
    local_max = (MAX_LANES, MAX_LANES, MAX_LANES)
    shared_max = 32768
    # vectors (lists of scalars here) only for what the optimizer's UPCAST makes of them: more
    # work per iteration of llvmpipe's masked loops (2x on elementwise kernels)
    # (only of the dtypes it renders: UPCAST of an emulated float16 made float32 vector ALU
    # the linear spec rejects)
    vector_widths: ClassVar[dict[DType, tuple[int, ...]]] = {
        dt: widths for dt, widths in host_vector_widths().items() if dt in NIR_DTYPES
    }
    supported_dtypes = NIR_DTYPES
    extra_matcher = SPLIT_MATCHER
    # a kernel split over cores gives each core a block of consecutive workgroups (False:
    # every n-th workgroup, neighbours on different cores)
    core_blocks = True
    code_for_op: ClassVar[dict[Ops, Callable[..., Any]]] = CODE_FOR_OP

    def __init__(self) -> None:
        from fusegrad.renderer.host import host_cores

        self.max_threads = host_cores()
        self.mesa = load_mesa()

    def build(self, uops: list[UOp], name: str | None = None) -> tuple[Any, _Program]:
        """The optimized NIR shader of a linear program (free with ``ralloc_free``)."""
        sig = cpu_signature(uops, name)
        nir = NIRBuilder(self.mesa, sig.name)
        prog = _Program(nir, uops, sig.name)
        try:
            for part in _parts(uops):
                if isinstance(part, list):
                    for u in part:
                        prog.emit(u)
                elif part == "begin":
                    workgroups = _begin_workgroups(prog, _group_sizes(prog, uops), self.core_blocks)
                else:
                    _end_workgroups(prog, workgroups)
            info = nir.shader.contents.info
            info.shared_size = prog.shared_bytes
            for axis, size in enumerate(prog.local_size):
                info.workgroup_size[axis] = size
            self.mesa.lib.nir_validate_shader(nir.shader, b"fusegrad NIR renderer")
            optimize(self.mesa.lib, nir.shader)
        except BaseException:
            self.mesa.lib.ralloc_free(nir.shader)
            raise
        return nir.shader, prog

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        """The printed NIR, then the serialized shader (what the LVP compiler reads)."""
        shader, prog = self.build(uops, name)
        try:
            text = print_shader(self.mesa.lib, shader)
            blob = base64.b64encode(serialize(self.mesa.lib, shader)).decode()
        finally:
            self.mesa.lib.ralloc_free(shader)
        sig = prog.sig
        header = (
            f"{HEADER} {sig.name} buffers={len(sig.buffers)} variables={len(sig.variables)}"
            f" core={int(sig.core is not None)} local={','.join(map(str, prog.local_size))}"
            f" shared={prog.shared_bytes} uniform={int(uniform_control(uops))}"
        )
        lines = [blob[i : i + 96] for i in range(0, len(blob), 96)]
        return "\n".join([header, text.rstrip(), *(BLOB_PREFIX + x for x in lines)]) + "\n"
