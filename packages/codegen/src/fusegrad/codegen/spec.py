"""The two IR contracts of codegen, written as specs (PatternMatchers accepting legal nodes).

Kernel AST — what the scheduler emits and ``to_program`` consumes::

    SINK(effect, ..., arg=KernelInfo | None)
    effect := END(STORE(INDEX(PARAM, idx), value), *ranges)   loops closed after the store
            | STORE(INDEX(PARAM, idx), value)                 no loops
    PARAM   dtype T.ptr(size), arg = slot (int): a buffer argument
    RANGE   dtype weakint, src = (end,), arg = (axis id, AxisType): a loop over [0, end)
    idx     weakint math over RANGEs, Variables and constants; ``idx.valid(cond)`` (that is
            WHERE(cond, idx, Invalid)) masks elements out: a masked LOAD reads 0, a masked
            STORE writes nothing
    value   ALU / CAST / BITCAST / CONST over LOAD(INDEX(PARAM, idx)), Variables (DEFINE_VAR)
            and REDUCE(value, *ranges, arg = ADD | MUL | MAX)

Linear program — what the lowering pipeline emits and a Renderer prints: a list of UOps in
execution order, every node after its sources, with these forms (and nothing else):

* ``PARAM``: a buffer (dtype T.ptr(size), arg = slot int) or a scalar Variable (int dtype,
  arg = (name, min, max)); buffers first by slot, then Variables, in the ProgramSpec's order
* ``DEFINE_LOCAL`` (T.ptr(n, LOCAL)) and ``DEFINE_REG`` (T.ptr(n, REG)), arg = a name/slot
* ``CONST`` (never Invalid), ``VCONST``
* ``SPECIAL``: int32, src = (size,), arg = ``gidx0..2`` / ``lidx0..2`` (GPU ids) or
  ``core`` (the CPU core id of a THREAD-split kernel, size = the core count; with gidx ids
  too, the core slices share the workgroups: slice c runs the c-th of n blocks of
  consecutive workgroups, the NIR renderer's split over CPU cores)
* ``RANGE``: int32/int64, src = (end,), arg = (axis, AxisType); opens a loop over
  [0, end); ``END``: src = (range,), closes it (each RANGE has exactly one END)
* ``INDEX``: src = (ptr, idx) or (ptr, idx, gate); dtype = the pointer's dtype
* ``LOAD``: src = (index,) or, when the index is gated, (index, alt): the loaded value where
  the gate holds, else ``alt``; dtype T or T.vec(n) (n consecutive elements)
* ``STORE``: src = (index, value), dtype void; a gated index stores only where the gate holds
* ALU ops with operands of one dtype (``WHERE``: bool condition; comparisons give bool;
  ``SHL``/``SHR`` shift by the same dtype), only the ops the renderer lists in
  ``code_for_op`` (the pipeline decomposes the others); ``CAST``, ``BITCAST``
* ``VECTORIZE`` (scalars -> vector), ``GEP`` (arg = tuple of lanes; one lane -> scalar)
* ``IF`` (src = (cond,)) and ``ENDIF`` (src = (if,)); ``BARRIER``
* ``AFTER``: src = (buffer, *effects): the buffer (a DEFINE_REG, DEFINE_LOCAL or PARAM) as
  an alias, ordered after ``effects`` (stores, ENDs, a BARRIER, RANGEs). Renderers print it as
  its first source; it exists so a register read after a loop (an accumulator's result) is a
  different node from the read inside it
* integer math is int32 or int64, never weakint; no REDUCE, DEFINE_VAR, FLOORDIV/FLOORMOD
  (unless the renderer declares them)

Every op's meaning is ``fusegrad.uop.exec_alu`` — the PYTHON emulator runs linear programs
with it, and the renderers' conformance suite compares against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fusegrad.uop import (
    AddrSpace,
    DType,
    GroupOp,
    Invalid,
    Ops,
    PtrDType,
    UOp,
    UPat,
    dtypes,
)
from fusegrad.uop.ops import KernelInfo  # uop-core's, filled in by the codegen

__all__ = [
    "KernelInfo",
    "Spec",
    "SpecError",
    "spec_kernel_ast",
    "spec_linear",
    "verify_kernel_ast",
    "verify_linear",
]


class SpecError(ValueError):
    """A node that is not legal at this IR stage."""


SpecRule = tuple[UPat, Callable[..., bool]]


class Spec:
    """An ordered table of (pattern, predicate): a node is legal when some pattern matches it
    and its predicate returns True for the captures. Dispatched by op like a PatternMatcher."""

    def __init__(self, rules: Sequence[SpecRule]) -> None:
        self.rules = list(rules)
        self.by_op: dict[Ops, list[SpecRule]] = {}
        for pat, fn in self.rules:
            for op in pat.op if pat.op is not None else Ops:
                self.by_op.setdefault(op, []).append((pat, fn))

    def accepts(self, u: UOp) -> bool:
        """True when ``u`` is a legal node under this spec."""
        rules = self.by_op.get(u.op, ())
        return any(fn(**m) is True for pat, fn in rules for m in pat.match(u, {}))


def _int_dtype(dt: DType) -> bool:
    return dt.scalar() in dtypes.ints


def _same_dtype_alu(a: UOp) -> bool:
    if a.op is Ops.WHERE:
        return (
            a.src[0].dtype.scalar() is dtypes.bool and a.src[1].dtype is a.src[2].dtype is a.dtype
        )
    if a.op in GroupOp.Comparison:
        return a.src[0].dtype is a.src[1].dtype and a.dtype.scalar() is dtypes.bool
    if a.op is Ops.THREEFRY:
        return a.dtype.scalar() is dtypes.uint64
    return all(s.dtype is a.dtype for s in a.src)


def _param_ok(p: UOp) -> bool:
    if isinstance(p.dtype, PtrDType):
        return isinstance(p.arg, int) and p.dtype.addrspace is AddrSpace.GLOBAL
    return isinstance(p.arg, tuple) and len(p.arg) in (3, 4) and _int_dtype(p.dtype)


def _load_ok(ld: UOp) -> bool:
    idx = ld.src[0]
    if idx.op is not Ops.INDEX:
        return False
    gated = len(idx.src) == 3
    return len(ld.src) == (2 if gated else 1)


_common: list[SpecRule] = [
    (UPat(Ops.CONST, name="c"), lambda c: c.arg is not Invalid),
    (UPat(Ops.VCONST), lambda: True),
    (UPat(GroupOp.ALU, name="a"), _same_dtype_alu),
    (UPat((Ops.CAST, Ops.BITCAST), src=(UPat(),)), lambda: True),
    (UPat(Ops.VECTORIZE, name="v"), lambda v: len(v.src) == v.dtype.count and len(v.src) > 1),
    (
        UPat(Ops.GEP, src=(UPat(),), name="g"),
        lambda g: isinstance(g.arg, tuple) and len(g.arg) == g.dtype.count,
    ),
]

spec_linear = Spec(
    [
        *_common,
        (UPat(Ops.PARAM, name="p"), _param_ok),
        (
            UPat((Ops.DEFINE_LOCAL, Ops.DEFINE_REG), name="d"),
            lambda d: isinstance(d.dtype, PtrDType),
        ),
        (
            UPat(Ops.SPECIAL, src=(UPat(),), name="s"),
            lambda s: isinstance(s.arg, str) and _int_dtype(s.dtype),
        ),
        (
            UPat(Ops.RANGE, src=(UPat(),), name="r"),
            lambda r: r.dtype in (dtypes.int32, dtypes.int64),
        ),
        (UPat(Ops.END, src=(UPat(Ops.RANGE),)), lambda: True),
        (
            UPat(Ops.INDEX, name="i"),
            lambda i: len(i.src) in (2, 3) and isinstance(i.src[0].dtype, PtrDType),
        ),
        (UPat(Ops.LOAD, name="ld"), _load_ok),
        (UPat(Ops.STORE, src=(UPat(Ops.INDEX), UPat())), lambda: True),
        (UPat(Ops.IF, src=(UPat(dtype=dtypes.bool),)), lambda: True),
        (UPat(Ops.ENDIF, src=(UPat(Ops.IF),)), lambda: True),
        (UPat(Ops.BARRIER), lambda: True),
        (
            UPat(Ops.WMMA, src=(UPat(), UPat(), UPat()), name="w"),
            lambda w: isinstance(w.arg, tuple) and len(w.arg) == 4 and w.src[2].dtype is w.dtype,
        ),  # tensor-core matrix multiply-accumulate: arg (name, dims, dtype_in, dtype_out)
        (
            UPat(
                Ops.AFTER,
                src=(UPat((Ops.DEFINE_REG, Ops.DEFINE_LOCAL, Ops.PARAM)),),
                allow_any_len=True,
            ),
            lambda: True,
        ),
    ]
)

spec_kernel_ast = Spec(
    [
        *_common,
        (UPat(Ops.SINK), lambda: True),
        (UPat(Ops.PARAM, name="p"), _param_ok),
        (UPat(Ops.DEFINE_VAR), lambda: True),
        (UPat(Ops.RANGE, src=(UPat(),), name="r"), lambda r: r.dtype is dtypes.weakint),
        (UPat(Ops.END, src=UPat(), name="e"), lambda e: all(r.op is Ops.RANGE for r in e.src[1:])),
        (UPat(Ops.INDEX, src=(UPat(Ops.PARAM), UPat()), allow_any_len=True), lambda: True),
        (UPat(Ops.LOAD, src=(UPat(Ops.INDEX),)), lambda: True),
        (UPat(Ops.STORE, src=(UPat(Ops.INDEX), UPat())), lambda: True),
        (
            UPat(Ops.REDUCE, name="r"),
            lambda r: r.arg in GroupOp.Reduce and all(x.op is Ops.RANGE for x in r.src[1:]),
        ),
        (UPat(Ops.CONST, dtype=dtypes.weakint, name="c"), lambda c: True),
    ]
)


def verify_linear(uops: list[UOp]) -> None:
    """Raise SpecError at the first node that is not a legal linear-program node, or that
    appears before one of its sources."""
    seen: set[UOp] = set()
    for i, u in enumerate(uops):
        if not spec_linear.accepts(u):
            raise SpecError(
                f"linear program: illegal node #{i}: {u.op!r} {u.dtype!r} arg={u.arg!r}"
            )
        missing = [s for s in u.src if s not in seen]
        if missing:
            raise SpecError(
                f"linear program: node #{i} {u.op!r} uses {missing[0].op!r} before it is defined"
            )
        if u.dtype.scalar() in (dtypes.weakint, dtypes.weakfloat):
            raise SpecError(f"linear program: node #{i} {u.op!r} still has weak dtype {u.dtype!r}")
        seen.add(u)


def verify_kernel_ast(sink: UOp) -> None:
    """Raise SpecError at the first node of a kernel AST that is not legal there."""
    if sink.op is not Ops.SINK:
        raise SpecError(f"kernel AST: root must be a SINK, got {sink.op!r}")
    for u in sink.toposort():
        if not spec_kernel_ast.accepts(u):
            raise SpecError(f"kernel AST: illegal node {u.op!r} {u.dtype!r} arg={u.arg!r}")
