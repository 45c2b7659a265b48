"""Contract reduction accumulation into fused multiply-adds (MULACC).

An accumulator update ``reg[i] = reg[i] + a * b`` (the store ``lower_reduces`` emits for an
ADD reduce of a product: a matmul, a dot product, a convolution) becomes
``reg[i] = MULACC(a, b, reg[i])``: one instruction with one rounding (``exec_alu``'s fma)
instead of a multiply and an add, for float32 and float64 accumulators, scalar and vector,
when the renderer lists ``Ops.MULACC`` in ``code_for_op`` and the product has no use but
such updates. A vector accumulator that devectorize split into lanes (VECTORIZE of per-lane
updates) is contracted lane by lane.

Only accumulation is contracted, not every ``a * b + c``: elementwise code keeps NumPy's
(and eager PyTorch's) result bit for bit, a multiply rounded and then an add, while the order
of a reduction's additions is the kernel's own choice anyway (and BLAS/PyTorch matmuls use
FMA). float16/bfloat16 are never contracted (their MULACC is a rounded multiply and a rounded
add, nothing gained). Every renderer that lists MULACC (LLVM, C, the PYTHON emulator) sees the
same MULACCs, so their results agree exactly.
"""

from __future__ import annotations

from collections import Counter

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.walk import toposort
from fusegrad.uop import Ops, UOp, dtypes

#: accumulator dtypes (scalars) that are contracted
FUSED_DTYPES = frozenset({dtypes.float32, dtypes.float64})


def _register(idx: UOp) -> UOp | None:
    """The DEFINE_REG an INDEX addresses (through AFTER), else None."""
    if idx.op is not Ops.INDEX:
        return None
    buf = idx.src[0]
    while buf.op is Ops.AFTER:
        buf = buf.src[0]
    return buf if buf.op is Ops.DEFINE_REG else None


def _reads(value: UOp, reg: UOp) -> bool:
    """``value`` is a LOAD of register ``reg``, or lanes of one (GEP)."""
    while value.op is Ops.GEP:
        value = value.src[0]
    return value.op is Ops.LOAD and _register(value.src[0]) is reg


def _updates(value: UOp) -> list[UOp]:
    """The ADDs a register store's value is made of: itself, or the lanes it gathers
    (VECTORIZE/GEP, as devectorize splits a vector accumulator the target has no width
    for)."""
    if value.op is Ops.ADD:
        return [value]
    if value.op in (Ops.VECTORIZE, Ops.GEP):
        return [a for s in value.src for a in _updates(s)]
    return []


def _updates_of(store: UOp) -> list[tuple[UOp, UOp, UOp]]:
    """(ADD, acc, MUL) for each accumulator update ``acc + a * b`` that ``store`` writes back
    into the register ``acc`` was read from."""
    reg = _register(store.src[0])
    if reg is None:
        return []
    out = []
    for add in _updates(store.src[1]):
        if add.dtype.scalar() not in FUSED_DTYPES:
            continue
        for acc, mul in (add.src, add.src[::-1]):
            if _reads(acc, reg) and mul.op is Ops.MUL:
                out.append((add, acc, mul))
                break
    return out


def _fusable(every: list[UOp]) -> dict[UOp, UOp]:
    """ADD -> its MULACC, for the accumulator updates whose product has no other use than
    such updates (one product may feed several: padded rows clamped to the last real one)."""
    uses: Counter[UOp] = Counter(s for u in every for s in u.src)
    found = [f for u in every if u.op is Ops.STORE for f in _updates_of(u)]
    updates = Counter(mul for _, mul in {(add, mul) for add, _, mul in found})
    return {
        add: UOp(Ops.MULACC, add.dtype, (mul.src[0], mul.src[1], acc))
        for add, acc, mul in found
        if uses[mul] == updates[mul]
    }


def contract_fma(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: accumulator updates ``acc + a * b`` -> ``MULACC(a, b, acc)`` (see the
    module docstring); nothing when the renderer has no MULACC."""
    if Ops.MULACC not in ctx.renderer.code_for_op:
        return sink
    every = toposort(sink)
    fused = _fusable(every)
    if not fused:
        return sink
    new: dict[UOp, UOp] = {}
    for u in every:  # rebuilt bottom-up: an accumulator may feed another one's operands
        v = fused.get(u, u)
        srcs = tuple(new[s] for s in v.src)
        new[u] = v if all(a is b for a, b in zip(srcs, v.src, strict=True)) else v.replace(src=srcs)
    return new[sink]
