"""Kernel-AST rewrites the engine applies before lowering, for ops the lowering pipeline does
not decompose yet (no renderer prints them).

``THREEFRY`` (the counter-based RNG, ``fusegrad.uop.threefry2x32``) has no renderer
implementation and the lowering pipeline passes it through, so it is expanded here into
uint32 ALU ops, exactly as ``threefry2x32`` defines it (wrapping adds, 32-bit rotations,
five key injections). Integer ``POW`` (the lowering approximates float pow only) becomes
exponentiation by squaring with ``exec_alu``'s semantics: wrapping for ``y >= 0``; for
``y < 0``, 1 for ``x == 1``, +-1 for ``x == -1``, else 0. TODO(#6): drop these once codegen's
lowering handles both ops.
"""

from __future__ import annotations

from fusegrad.uop import Ops, PatternMatcher, UOp, UPat, dtypes, graph_rewrite

_M32 = 0xFFFFFFFF
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA
_EXPANDED = (Ops.THREEFRY, Ops.POW)


def _u32(v: int) -> UOp:
    return UOp.const(dtypes.uint32, v)


def _u64(v: int) -> UOp:
    return UOp.const(dtypes.uint64, v)


def _words(v: UOp) -> tuple[UOp, UOp]:
    """(low, high) 32-bit words of a uint64 value."""
    return (v & _u64(_M32)).cast(dtypes.uint32), (v >> _u64(32)).cast(dtypes.uint32)


def _rotl(v: UOp, r: int) -> UOp:
    return (v << _u32(r)) | (v >> _u32(32 - r))


def expand_threefry(x: UOp, key: UOp) -> UOp:
    """``threefry2x32(x, key)`` as uint32/uint64 ALU UOps (20 rounds)."""
    x0, x1 = _words(x)
    k0, k1 = _words(key)
    ks = (k0, k1, k0 ^ k1 ^ _u32(_PARITY))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for block in range(5):
        for r in range(4):
            x0 = x0 + x1
            x1 = _rotl(x1, _ROTATIONS[(block % 2) * 4 + r]) ^ x0
        inj = block + 1
        x0 = x0 + ks[inj % 3]
        x1 = x1 + ks[(inj + 1) % 3] + _u32(inj)
    return (x1.cast(dtypes.uint64) << _u64(32)) | x0.cast(dtypes.uint64)


def expand_int_pow(x: UOp, y: UOp) -> UOp:
    """``x ** y`` for integer scalars as multiplies selected by the bits of ``y``."""
    signed = dtypes.is_int(x.dtype) and not dtypes.is_unsigned(x.dtype)
    bits = x.dtype.itemsize * 8 - (1 if signed else 0)
    one, zero = x.const_like(1), x.const_like(0)
    result, base = one, x
    for i in range(bits):
        bit = (y & y.const_like(1 << i)).ne(y.const_like(0))
        result = bit.where(result * base, result)
        if i + 1 < bits:
            base = base * base
    if not signed:
        return result
    odd = (y & y.const_like(1)).ne(y.const_like(0))
    minus_one = odd.where(x.const_like(-1), one)
    negative = x.eq(x.const_like(1)).where(one, x.eq(x.const_like(-1)).where(minus_one, zero))
    return (y < y.const_like(0)).where(negative, result)


def _int_pow(p: UOp) -> UOp | None:
    if not dtypes.is_int(p.dtype) or p.dtype.count != 1:
        return None
    return expand_int_pow(p.src[0], p.src[1])


def _scalar_threefry(t: UOp) -> UOp | None:
    if t.dtype is not dtypes.uint64:
        return None  # vectors: left to the lowering pipeline
    return expand_threefry(t.src[0], t.src[1])


pm_engine_decompose = PatternMatcher(
    [
        (UPat(Ops.THREEFRY, name="t"), _scalar_threefry),  # threefry -> uint32 ALU rounds
        (UPat(Ops.POW, name="p"), _int_pow),  # int x ** y -> square-and-multiply on y's bits
    ]
)


def decompose_kernel(ast: UOp) -> UOp:
    """``ast`` with the ops in ``pm_engine_decompose`` expanded (itself when it has none)."""
    if not any(u.op in _EXPANDED for u in ast.toposort()):
        return ast
    return graph_rewrite(ast, pm_engine_decompose, name="engine: decompose")
