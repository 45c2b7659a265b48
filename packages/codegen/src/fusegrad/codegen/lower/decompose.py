"""Decompose ops the target lacks into ops it has.

Each rule fires only when the renderer's ``code_for_op`` does not list the op (integer
division by a constant is the exception: it becomes multiply-and-shift whenever the target has
both, since that is several times faster than a divide on every target we know). THREEFRY and
integer POW, which no renderer prints, come from ``integer_ops.py``. The decompositions are
exact: each gives bit-for-bit the result ``exec_alu`` defines, NaN and signed-zero rules
included.
"""

from __future__ import annotations

from fusegrad.codegen.lower.build import lt, ne
from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.integer_ops import int_pow, threefry
from fusegrad.uop import Ops, PatternMatcher, UOp, UPat, dtypes


def lacks(ctx: LowerContext, op: Ops) -> bool:
    """The target has no native ``op``."""
    return op not in ctx.renderer.code_for_op


def _cond(ctx: LowerContext, op: Ops, result: UOp) -> UOp | None:
    return result if lacks(ctx, op) else None


def _not(x: UOp) -> UOp:
    return x.where(UOp.const(False, x.dtype), UOp.const(True, x.dtype))


# -- comparisons and min/max -------------------------------------------------------------------


def _cmpne(ctx: LowerContext, a: UOp, b: UOp) -> UOp | None:
    if not lacks(ctx, Ops.CMPNE) or lacks(ctx, Ops.CMPEQ):
        return None
    return _not(UOp(Ops.CMPEQ, dtypes.bool.vec(a.dtype.count), (a, b)))


def _cmpeq(ctx: LowerContext, a: UOp, b: UOp) -> UOp | None:
    if not lacks(ctx, Ops.CMPEQ) or lacks(ctx, Ops.CMPNE):
        return None
    return _not(UOp(Ops.CMPNE, dtypes.bool.vec(a.dtype.count), (a, b)))


def _max(ctx: LowerContext, a: UOp, b: UOp) -> UOp | None:
    """max(a, b); for floats NaN wins and max(-0.0, 0.0) is 0.0 (as exec_alu)."""
    if not lacks(ctx, Ops.MAX):
        return None
    plain = lt(a, b).where(b, a)
    if not dtypes.is_float(a.dtype):
        return plain
    zero = a.const_like(0.0)
    equal = ne(a, zero).where(a, a + b)  # equal values: a, but -0.0 and 0.0 give 0.0
    ordered = lt(a, b).where(b, lt(b, a).where(a, equal))
    return ne(a, a).where(a, ne(b, b).where(b, ordered))


# -- arithmetic --------------------------------------------------------------------------------


def _neg(x: UOp) -> UOp:
    return UOp(Ops.MUL, x.dtype, (x, x.const_like(-1)))


def _sub(ctx: LowerContext, a: UOp, b: UOp) -> UOp | None:
    neg = UOp(Ops.NEG, b.dtype, (b,)) if not lacks(ctx, Ops.NEG) else _neg(b)
    return _cond(ctx, Ops.SUB, UOp(Ops.ADD, a.dtype, (a, neg)))


def _floor_fix(a: UOp, b: UOp) -> tuple[UOp, UOp, UOp]:
    """(C quotient, C remainder, whether floor rounding differs from C's)."""
    q, r = a.cdiv(b), a.cmod(b)
    zero = a.const_like(0)
    differs = ne(r, zero) & ne(lt(r, zero), lt(b, zero))
    return q, r, differs


def _non_negative_division(a: UOp, b: UOp) -> bool:
    return bool(a.vmin >= 0 and b.vmin > 0)


def _floordiv(ctx: LowerContext, a: UOp, b: UOp) -> UOp | None:
    if not lacks(ctx, Ops.FLOORDIV) or not dtypes.is_int(a.dtype):
        return None
    if _non_negative_division(a, b):
        return a.cdiv(b)
    q, _, differs = _floor_fix(a, b)
    return q - differs.where(q.const_like(1), q.const_like(0))


def _floormod(ctx: LowerContext, a: UOp, b: UOp) -> UOp | None:
    if not lacks(ctx, Ops.FLOORMOD) or not dtypes.is_int(a.dtype):
        return None
    if _non_negative_division(a, b):
        return a.cmod(b)
    _, r, differs = _floor_fix(a, b)
    return r + differs.where(b, r.const_like(0))


# -- integer division by constants ---------------------------------------------------------------


def magic_divisor(d: int, vmax: int) -> tuple[int, int]:
    """(m, s) with ``(x * m) >> s == x // d`` for every ``0 <= x <= vmax``.

    With ``m = ceil(2**s / d)`` and ``e = m*d - 2**s``, ``x*m / 2**s = x/d + x*e/(d*2**s)``;
    the error term keeps the floor unchanged when ``vmax * e < 2**s``.
    """
    s = 0
    while True:
        m = -(-(1 << s) // d)
        if (m * d - (1 << s)) * vmax < (1 << s):
            return m, s
        s += 1


def _pow2(d: int) -> int | None:
    return d.bit_length() - 1 if d > 0 and d & (d - 1) == 0 else None


def _fast_cdiv(ctx: LowerContext, a: UOp, c: UOp) -> UOp | None:
    """x / d for x >= 0: a shift for powers of two, else multiply-high and shift."""
    d = c.arg
    if not isinstance(d, int) or d <= 1 or a.vmin < 0 or not dtypes.is_int(a.dtype):
        return None
    if (shift := _pow2(d)) is not None:
        return None if lacks(ctx, Ops.SHR) else a >> shift
    if lacks(ctx, Ops.SHR) or lacks(ctx, Ops.MUL) or a.dtype.count > 1:
        return None
    m, s = magic_divisor(d, int(a.vmax))
    if m * a.vmax <= dtypes.max(a.dtype):
        return (a * m) >> s
    wide = dtypes.int64 if a.dtype.scalar() is not dtypes.uint64 else None
    if wide is None or wide not in ctx.renderer.supported_dtypes or a.dtype.itemsize >= 8:
        return None
    if m * a.vmax > dtypes.max(wide):
        return None
    return ((a.cast(wide) * m) >> s).cast(a.dtype)


def _fast_cmod(ctx: LowerContext, a: UOp, c: UOp) -> UOp | None:
    d = c.arg
    if not isinstance(d, int) or d <= 1 or a.vmin < 0 or not dtypes.is_int(a.dtype):
        return None
    if _pow2(d) is not None:
        return None if lacks(ctx, Ops.AND) else a & (d - 1)
    quotient = _fast_cdiv(ctx, a, c)
    return None if quotient is None else a - quotient * d


# -- rules -------------------------------------------------------------------------------------


def _threefry(ctx: LowerContext, x: UOp, key: UOp) -> UOp | None:
    return _cond(ctx, Ops.THREEFRY, threefry(x, key))


def _int_pow(ctx: LowerContext, p: UOp) -> UOp | None:
    if not lacks(ctx, Ops.POW) or not dtypes.is_int(p.dtype):
        return None
    return int_pow(p.src[0], p.src[1])


pm_decompose = PatternMatcher(
    [
        (
            UPat(Ops.THREEFRY, src=(UPat.var("x"), UPat.var("key"))),
            _threefry,
        ),  # threefry2x32 -> 20 rounds of uint32 add/rotate/xor
        (UPat(Ops.POW, name="p"), _int_pow),  # int x ** y -> square-and-multiply on y's bits
        (
            UPat(Ops.MULACC, src=(UPat.var("a"), UPat.var("b"), UPat.var("c"))),
            lambda ctx, a, b, c: _cond(ctx, Ops.MULACC, a * b + c),
        ),  # mulacc(a, b, c) -> a*b + c
        (UPat(Ops.SUB, src=(UPat.var("a"), UPat.var("b"))), _sub),  # a - b -> a + -b
        (
            UPat(Ops.NEG, src=(UPat.var("x"),)),
            lambda ctx, x: _cond(ctx, Ops.NEG, _neg(x)),
        ),  # -x -> x * -1
        (UPat(Ops.MAX, src=(UPat.var("a"), UPat.var("b"))), _max),  # max -> compare + where
        (UPat(Ops.CMPNE, src=(UPat.var("a"), UPat.var("b"))), _cmpne),  # a != b -> !(a == b)
        (UPat(Ops.CMPEQ, src=(UPat.var("a"), UPat.var("b"))), _cmpeq),  # a == b -> !(a != b)
        (UPat(Ops.FLOORDIV, src=(UPat.var("a"), UPat.var("b"))), _floordiv),  # // -> cdiv + fix
        (UPat(Ops.FLOORMOD, src=(UPat.var("a"), UPat.var("b"))), _floormod),  # % -> cmod + fix
        (
            UPat(Ops.CDIV, src=(UPat.var("a"), UPat.cvar("c", vec=False))),
            _fast_cdiv,
        ),  # x/d -> mul-shift
        (
            UPat(Ops.CMOD, src=(UPat.var("a"), UPat.cvar("c", vec=False))),
            _fast_cmod,
        ),  # x%d -> x - (x/d)*d
        (
            UPat(Ops.RECIPROCAL, src=(UPat.var("x"),)),
            lambda ctx, x: (
                _cond(ctx, Ops.RECIPROCAL, x.const_like(1.0) / x)
                if not lacks(ctx, Ops.FDIV)
                else None
            ),
        ),  # 1/x
        (
            UPat(Ops.FDIV, src=(UPat.var("a"), UPat.var("b"))),
            lambda ctx, a, b: (
                _cond(ctx, Ops.FDIV, a * b.reciprocal()) if not lacks(ctx, Ops.RECIPROCAL) else None
            ),
        ),  # a / b -> a * (1/b)
    ]
)
