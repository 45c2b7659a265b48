"""The devectorizer's per-lane addresses: an affine index whose lanes each have their own mask
(the rows of a tile that runs past the end of a padded axis) is split into one base and a
constant offset per lane, each lane under its own simplified mask, without simplifying every
lane's whole expression; each lane still addresses what simplifying it alone gives."""

from __future__ import annotations

import itertools

from fusegrad.codegen.lower import devectorize as dv
from fusegrad.codegen.lower.simplify import lanes, pm_simplify
from fusegrad.uop import AxisType, Invalid, Ops, UOp, dtypes, graph_rewrite

ROWS, COLS = 3, 4  # lanes: ROWS upcast rows x COLS columns


def _bcast(x: UOp, n: int) -> UOp:
    return UOp(Ops.VECTORIZE, x.dtype.vec(n), (x,) * n)


def _vconst(values: tuple[int, ...]) -> UOp:
    return UOp.vconst(values, dtypes.weakint.vec(len(values)))


def _padded_tile() -> tuple[UOp, UOp, UOp]:
    """buf[(r*3 + j) * 512 + (c*8 + q) * 32 + k] for the lanes (j, k), valid where the row
    ``r*3 + j`` is below 10 (rows padded from 10 to 12): the index, and the ranges r and q."""
    r = UOp.range(4, 1, AxisType.LOOP)
    q = UOp.range(8, 0, AxisType.LOOP)
    c = UOp.special(2, "core")
    row = _bcast(r * ROWS, ROWS) + _vconst(tuple(range(ROWS)))
    spread = tuple(j for j in range(ROWS) for _ in range(COLS))
    rows = UOp(
        Ops.GEP,
        dtypes.weakint.vec(ROWS * COLS),
        (row * _bcast(UOp.const(512, dtypes.weakint), ROWS),),
        spread,
    )
    cols = _bcast((c * 8 + q) * 32, ROWS * COLS) + _vconst(tuple(range(COLS)) * ROWS)
    mask = UOp(
        Ops.GEP,
        dtypes.bool.vec(ROWS * COLS),
        (row < _bcast(UOp.const(10, dtypes.weakint), ROWS),),
        spread,
    )
    idx = mask.where(rows + cols, UOp.invalid(dtypes.weakint.vec(ROWS * COLS)))
    buf = UOp.param(0, dtypes.float32.ptr(12 * 512))
    return buf.index(idx), r, q


def _value(x: UOp, at: dict[UOp, int]) -> object:
    """``x`` with ranges and the core id replaced by constants, simplified to a constant."""
    out = x.substitute({u: UOp.const(v, dtypes.weakint) for u, v in at.items()}).simplify()
    assert out.op is Ops.CONST, out
    return out.arg


def test_masked_rows_share_one_base() -> None:
    index, _, _ = _padded_tile()
    exprs, lane_list = dv._lane_addresses(index)
    assert exprs is None and len(lane_list) == ROWS * COLS  # built only for the accesses
    bases = {x.base for x in lane_list if not x.masked_out}
    assert len(bases) == 1  # one base for every row: consecutive lanes group into runs
    assert [x.offset for x in lane_list] == [j * 512 + k for j in range(ROWS) for k in range(COLS)]


def test_masked_lanes_address_what_each_lane_simplified_alone_does() -> None:
    index, r, q = _padded_tile()
    c = next(u for u in index.toposort() if u.op is Ops.SPECIAL)
    exprs, lane_list = dv._lane_addresses(index)
    mine_all = [dv._start(exprs, lane_list, k) for k in range(len(lane_list))]
    alone = lanes(index.src[1])
    for i, (mine, ref) in enumerate(zip(mine_all, alone, strict=True)):
        for rv, qv, cv in itertools.product(range(4), (0, 7), (0, 1)):
            at = {r: rv, q: qv, c: cv}
            got, want = _value(mine, at), _value(ref, at)
            assert got == want or (got is Invalid and want is Invalid), (i, at, got, want)


def _lanes_by_rewriting(x: UOp) -> tuple[UOp, ...]:
    """The reference: every one-lane GEP of ``x`` rewritten with ``pm_simplify``."""
    geps = tuple(UOp(Ops.GEP, x.dtype.scalar(), (x,), (i,)) for i in range(x.dtype.count))
    return graph_rewrite(UOp(Ops.SINK, src=geps), pm_simplify).src


def _clamped_rows() -> UOp:
    """``min(r*3 + j, 9) * 16 + q % 4`` over 3 row lanes: the index of a tile whose rows are
    clamped to the last one (not affine: the clamp is a WHERE)."""
    r = UOp.range(4, 1, AxisType.LOOP)
    q = UOp.range(8, 0, AxisType.LOOP)
    row = _bcast(r * ROWS, ROWS) + _vconst(tuple(range(ROWS)))
    last = _bcast(UOp.const(9, dtypes.weakint), ROWS)
    clamped = (row < _bcast(UOp.const(10, dtypes.weakint), ROWS)).where(row, last)
    return clamped * _bcast(UOp.const(16, dtypes.weakint), ROWS) + _bcast(q % 4, ROWS)


def test_lanes_are_each_lane_gep_rewritten() -> None:
    """``lanes`` splits a vector structurally (no GEP per node and lane); each lane is the very
    node rewriting that lane's GEP gives, for clamped, masked and picked-lane indices."""
    index, _, _ = _padded_tile()
    clamped = _clamped_rows()
    spread = UOp(Ops.GEP, clamped.dtype.scalar().vec(6), (clamped,), (2, 0, 1, 1, 0, 2))
    r, q = UOp.range(4, 1, AxisType.LOOP), UOp.range(8, 0, AxisType.LOOP)
    mixed = UOp(Ops.VECTORIZE, dtypes.weakint.vec(3), (r * 3, q * 5, r + q))
    mixed = mixed * _bcast(UOp.const(4, dtypes.weakint), 3) + _vconst((1, 2, 3))
    both = (mixed < _bcast(UOp.const(20, dtypes.weakint), 3)) & (_vconst((0, 1, 2)) < mixed)
    for x in (clamped, index.src[1], index.src[1].src[0], spread, mixed, both):
        assert lanes(x) == _lanes_by_rewriting(x)
