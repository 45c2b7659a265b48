"""Local simplification rules the lowering pipeline needs on index math and vector lanes.

``fusegrad.uop.sym`` is still growing (its owner is strengthening it); the rules here are the
ones lowering cannot do without, kept local so the pipeline does not depend on its progress:

* ``pm_lanes``: vector lane algebra — ``GEP`` through index-math ALU, of
  ``VECTORIZE``/``VCONST``, ``VECTORIZE`` of consecutive ``GEP``s back to the vector;
* ``pm_index_algebra``: constant re-association, floor division/modulo of sums whose
  remainder part is provably in range, comparisons decided by value ranges.

``pm_simplify`` is both on top of ``symbolic_simple`` (constant folding, identities).
"""

from __future__ import annotations

import functools

from fusegrad.uop import (
    GroupOp,
    Invalid,
    Ops,
    PatternMatcher,
    UOp,
    UPat,
    dtypes,
    graph_rewrite,
    symbolic_simple,
)

# -- vector lanes -----------------------------------------------------------------------------


@functools.cache
def lanes_in_order(count: int) -> tuple[int, ...]:
    """``(0, 1, ..., count - 1)``: every lane of a ``count``-wide vector, in order (cached)."""
    return tuple(range(count))


def gep(x: UOp, lanes: tuple[int, ...]) -> UOp:
    """Lanes ``lanes`` of vector ``x`` (a scalar for one lane; ``x`` itself for all lanes)."""
    count = x.dtype.count
    if len(lanes) == count and lanes == lanes_in_order(count):
        return x
    return UOp(Ops.GEP, x.dtype.scalar().vec(len(lanes)), (x,), lanes)


def broadcast(x: UOp, count: int) -> UOp:
    """Scalar ``x`` repeated in ``count`` lanes."""
    if count == 1:
        return x
    return UOp(Ops.VECTORIZE, x.dtype.vec(count), (x,) * count)


def vectorize(lanes: list[UOp]) -> UOp:
    """The vector of scalar ``lanes`` (the scalar itself for one lane)."""
    if len(lanes) == 1:
        return lanes[0]
    return UOp(Ops.VECTORIZE, lanes[0].dtype.vec(len(lanes)), tuple(lanes))


def _gep_of_vectorize(g: UOp, v: UOp) -> UOp:
    return vectorize([v.src[i] for i in g.arg])


def _gep_of_const(g: UOp, c: UOp) -> UOp:
    if c.op is Ops.CONST:
        return UOp(Ops.CONST, g.dtype, (), c.arg)
    vals = tuple(c.arg[i] for i in g.arg)
    return UOp.const(vals[0], g.dtype) if len(vals) == 1 else UOp.vconst(vals, g.dtype)


def _operand_scalar(a: UOp) -> object:
    op = a.op  # identity tests: == on Ops is a Python-level call
    if op is Ops.WHERE:
        return a.src[1].dtype.scalar()
    if op in GroupOp.Comparison or op is Ops.CAST or op is Ops.BITCAST:
        return a.src[0].dtype.scalar()
    return a.dtype.scalar()


def _gep_through(g: UOp, a: UOp) -> UOp | None:
    """GEP(op(a, b), l) -> op(GEP(a, l), GEP(b, l)) for lane-wise ops on index math (weakint
    operands). A value op (float, fixed-width int) keeps its vector: GEPs of it are lane
    extracts, and pushing them through would turn a native vector op into scalar ops."""
    if a.dtype.count == 1 or _operand_scalar(a) is not dtypes.weakint:
        return None
    srcs = tuple(gep(s, g.arg) if s.dtype.count > 1 else s for s in a.src)
    count = len(g.arg)
    srcs = tuple(broadcast(s, count) if s.dtype.count != count else s for s in srcs)
    return UOp(a.op, a.dtype.scalar().vec(count), srcs, a.arg)


def _vectorize_of_geps(v: UOp) -> UOp | None:
    """VECTORIZE(GEP(x, l0), GEP(x, l1), ...) -> GEP(x, (l0, l1, ...))."""
    first = v.src[0]
    if first.op is not Ops.GEP or len(first.arg) != 1:
        return None
    base = first.src[0]
    if not all(s.op is Ops.GEP and s.src[0] is base and len(s.arg) == 1 for s in v.src):
        return None
    return gep(base, tuple(s.arg[0] for s in v.src))


def _vectorize_of_consts(v: UOp) -> UOp | None:
    if not all(s.op is Ops.CONST and not s.src for s in v.src):
        return None
    return UOp(Ops.VCONST, v.dtype, (), tuple(s.arg for s in v.src))


_lane_ops = GroupOp.ALU | {Ops.CAST, Ops.BITCAST}

pm_lanes = PatternMatcher(
    [
        (UPat(Ops.GEP, src=(UPat(Ops.VECTORIZE, name="v"),), name="g"), _gep_of_vectorize),
        (UPat(Ops.GEP, src=(UPat((Ops.CONST, Ops.VCONST), name="c"),), name="g"), _gep_of_const),
        (
            UPat(Ops.GEP, src=(UPat(Ops.GEP, name="inner"),), name="g"),
            lambda g, inner: gep(inner.src[0], tuple(inner.arg[i] for i in g.arg)),
        ),  # GEP(GEP(x, a), b) -> GEP(x, a[b])
        (UPat(Ops.GEP, src=(UPat(_lane_ops, name="a"),), name="g"), _gep_through),
        (
            UPat(Ops.GEP, name="g"),
            lambda g: g.src[0] if g.arg == tuple(range(g.src[0].dtype.count)) else None,
        ),  # GEP(x, all lanes in order) -> x
        (UPat(Ops.VECTORIZE, name="v"), _vectorize_of_geps),
        (UPat(Ops.VECTORIZE, name="v"), _vectorize_of_consts),
    ]
)

# -- index algebra ----------------------------------------------------------------------------

_int_const = UPat.cvar("c", vec=False)
_c2 = UPat.cvar("c2", vec=False)


def _terms(x: UOp) -> list[UOp]:
    """The addends of a sum (nested ADDs flattened)."""
    if x.op is not Ops.ADD:
        return [x]
    return _terms(x.src[0]) + _terms(x.src[1])


def _sum(terms: list[UOp], like: UOp) -> UOp:
    if not terms:
        return like.const_like(0)
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def _split_divisible(x: UOp, c: int) -> tuple[list[UOp], list[UOp]]:
    """(terms divisible by ``c``, the other terms) of sum ``x``."""
    divisible: list[UOp] = []
    rest: list[UOp] = []
    for t in _terms(x):
        (divisible if t.divides(c) is not None else rest).append(t)
    return divisible, rest


def _floordiv_sum(x: UOp, c: UOp) -> UOp | None:
    """(c*a + r) // c -> a + r // c, and a whole quotient decided by the value range."""
    if not dtypes.is_int(x.dtype) or not isinstance(c.arg, int) or c.arg <= 0:
        return None
    lo, hi = x.vmin, x.vmax
    if lo // c.arg == hi // c.arg:
        return x.const_like(lo // c.arg)
    if x.dtype.scalar() is not dtypes.weakint:
        return None  # fixed-width sums may wrap: keep them as written
    divisible, rest = _split_divisible(x, c.arg)
    if not divisible:
        return None
    quotient = _sum([d for t in divisible if (d := t.divides(c.arg)) is not None], x)
    if not rest:
        return quotient
    remainder = _sum(rest, x)
    return quotient + remainder // c.arg


def _floormod_sum(x: UOp, c: UOp) -> UOp | None:
    """(c*a + r) % c -> r % c, and x % c -> x when 0 <= x < c."""
    if not dtypes.is_int(x.dtype) or not isinstance(c.arg, int) or c.arg <= 0:
        return None
    lo, hi = x.vmin, x.vmax
    if lo // c.arg == hi // c.arg:
        return x - (lo // c.arg) * c.arg if lo // c.arg else x
    if x.dtype.scalar() is not dtypes.weakint:
        return None
    divisible, rest = _split_divisible(x, c.arg)
    if not divisible:
        return None
    return _sum(rest, x) % c.arg


def _decided(x: UOp) -> UOp | None:
    """A bool whose value range is one value -> that constant."""
    if x.op is Ops.CONST or x.dtype.count != 1:
        return None
    lo, hi = x.vmin, x.vmax
    return UOp.const(bool(lo), dtypes.bool) if lo == hi else None


def _where_decided(c: UOp, a: UOp, b: UOp) -> UOp | None:
    if c.op is not Ops.CONST:
        return None
    return a if c.arg else b


def _ints(x: UOp, *consts: UOp) -> bool:
    return dtypes.is_int(x.dtype) and all(type(c.arg) is int for c in consts)


def _mul_distribute(x: UOp, c: UOp, c2: UOp) -> UOp | None:
    """(x + c) * c2 -> x*c2 + c*c2 (index math only: it exposes divisible terms)."""
    if x.dtype.scalar() is not dtypes.weakint or not _ints(x, c, c2):
        return None
    scaled: UOp = x * c2.arg
    return scaled + int(c.arg * c2.arg)


def _constant_last(x: UOp, y: UOp, c: UOp) -> UOp | None:
    if x.op in (Ops.CONST, Ops.VCONST) or y.op in (Ops.CONST, Ops.VCONST) or not _ints(x, c):
        return None
    return (x + y) + int(c.arg)


def _lt_shifted(x: UOp, c: UOp, c2: UOp, left: bool) -> UOp | None:
    """x + c < c2 -> x < c2 - c and c2 < x + c -> c2 - c < x on exact (weakint) index math:
    the comparison then needs only ``x``'s range, not the shifted one (a gather's gate
    ``-1 < e - 1`` on an int32 ``e`` stays int32 as ``0 < e``)."""
    if x.dtype.scalar() is not dtypes.weakint or x.dtype.count != 1 or not _ints(x, c, c2):
        return None
    bound = UOp.const(int(c2.arg - c.arg), x.dtype)
    return x < bound if left else bound < x


def _same_value(a: UOp, b: UOp) -> bool:
    return a is b and a.op is not Ops.CONST


def _sub_const(x: UOp, c: UOp) -> UOp | None:
    """x - c -> x + (-c) on index math: sums re-associate and fold their constants."""
    if x.dtype.scalar() is not dtypes.weakint or not _ints(x, c):
        return None
    return x + int(-c.arg)


pm_index_algebra = PatternMatcher(
    [
        (UPat(Ops.SUB, src=(UPat.var("x"), _int_const)), _sub_const),  # x - c -> x + (-c)
        (
            (UPat.var("x") + _int_const) + _c2,
            lambda x, c, c2: x + (c.arg + c2.arg) if _ints(x, c, c2) else None,
        ),  # (x + c) + c2 -> x + (c + c2)
        (
            (UPat.var("x") * _int_const) * _c2,
            lambda x, c, c2: x * (c.arg * c2.arg) if _ints(x, c, c2) else None,
        ),  # (x * c) * c2 -> x * (c * c2)
        ((UPat.var("x") + _int_const) * _c2, _mul_distribute),  # (x + c) * c2 -> x*c2 + c*c2
        (
            UPat.var("x") + (UPat.var("y") + _int_const),
            _constant_last,
        ),  # x + (y + c) -> (x + y) + c
        (UPat.var("x") // _int_const, _floordiv_sum),  # (c*a + r) // c -> a + r // c
        (UPat.var("x") % _int_const, _floormod_sum),  # (c*a + r) % c -> r % c
        (
            (UPat.var("x") + _int_const) < _c2,
            lambda x, c, c2: _lt_shifted(x, c, c2, True),
        ),  # x + c < c2 -> x < c2 - c
        (
            _c2 < (UPat.var("x") + _int_const),
            lambda x, c, c2: _lt_shifted(x, c, c2, False),
        ),  # c2 < x + c -> c2 - c < x
        (UPat(GroupOp.Comparison, name="x"), _decided),  # cmp decided by value ranges -> const
        (UPat((Ops.AND, Ops.OR), dtype=dtypes.bool, name="x"), _decided),  # bool decided
        (
            UPat(Ops.AND, src=[UPat.var("x"), UPat.const(True, dtypes.bool)]),
            lambda x: x,
        ),  # x & True -> x
        (UPat.var("c", dtypes.bool).where(UPat.var("a"), UPat.var("b")), _where_decided),
        (
            UPat.var("c").where(UPat.var("a"), UPat.var("b")),
            lambda c, a, b: a if _same_value(a, b) else None,
        ),  # c ? a : a -> a
        (
            UPat(Ops.WHERE, src=(UPat.var("c"), UPat.var("i"), UPat(Ops.CONST, arg=Invalid))),
            lambda c, i: i if c.op is Ops.CONST and c.arg is True else None,
        ),  # i.valid(True) -> i
    ]
)

pm_simplify = symbolic_simple + pm_index_algebra + pm_lanes


def simplify(x: UOp) -> UOp:
    """``x`` rewritten with ``pm_simplify`` to a fixed point."""
    return graph_rewrite(x, pm_simplify, name="lower simplify")


@functools.lru_cache(maxsize=4096)
def lanes(x: UOp) -> tuple[UOp, ...]:
    """Every lane of vector ``x`` as a simplified scalar expression (all in one rewrite;
    constant lanes directly)."""
    if x.dtype.count == 1:
        return (simplify(x),)
    if x.op is Ops.VCONST:
        return tuple(UOp.const(v, x.dtype.scalar()) for v in x.arg)
    if x.op is Ops.CONST and x.arg is not Invalid:
        return (UOp.const(x.arg, x.dtype.scalar()),) * x.dtype.count
    if x.op is Ops.GEP:  # lanes picked from a vector: each distinct lane simplified once
        inner = lanes(x.src[0])
        return tuple(inner[i] for i in x.arg)
    split = _LaneSplit()
    vector = simplify(x)
    exprs = tuple(split.lane(vector, i) for i in range(x.dtype.count))
    return graph_rewrite(UOp(Ops.SINK, src=exprs), pm_simplify, name="lanes").src


class _LaneSplit:
    """Each lane of a simplified vector as a scalar expression over its nodes, built the way
    ``pm_lanes`` pushes a one-lane GEP down (through VECTORIZE, GEP and lane-wise index math)
    but without making and matching a GEP per node and lane: rewriting the expressions with
    ``pm_simplify`` gives what rewriting ``GEP(vector, i)`` does, for a fraction of the work.
    A GEP stays on what the rules would not push it through (constants: their rule folds it)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[UOp, int], UOp] = {}

    def lane(self, u: UOp, i: int) -> UOp:
        if u.dtype.count == 1:
            return u
        key = (u, i)
        if (hit := self.memo.get(key)) is None:
            hit = self.memo[key] = self._split(u, i)
        return hit

    def _split(self, u: UOp, i: int) -> UOp:
        op = u.op
        if op is Ops.GEP:
            return self.lane(u.src[0], u.arg[i])
        if op is Ops.VECTORIZE:
            return u.src[i]
        if op not in _lane_ops or _operand_scalar(u) is not dtypes.weakint:
            return gep(u, (i,))
        srcs = tuple(self.lane(s, i) for s in u.src)
        return UOp(op, u.dtype.scalar(), srcs, u.arg)


def lane(x: UOp, i: int) -> UOp:
    """Lane ``i`` of vector ``x`` as a simplified scalar expression."""
    return simplify(gep(x, (i,)))
