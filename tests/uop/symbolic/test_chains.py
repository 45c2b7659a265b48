"""Canonical sums built in one step: deep index chains (Horner forms of reshaped indices)
simplify to the same flat sum term-by-term distribution reaches, without quadratic work.

Each exact case is proven by z3 (``simplify_case`` in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fusegrad.uop import UOp, dtypes, graph_rewrite, sym
from fusegrad.uop.terms import _normal_sum, normalize_sum, scale_canonical_sum

CASES = [
    # a canonical sum times a constant: every coefficient and the constant scaled
    ("(x*2+y+3)*4", "x*8+y*4+12", 12, 104),
    ("((x+y)*3+1)*5", "x*15+y*15+5", 5, 200),
    ("(x*4+y)*2*3", "x*24+y*6", 0, 258),
    ("((r0*4+r1)*4+r1)*2", "r0*32+r1*10", 0, 510),
    ("((x+1)*(y+1)+x)*2", "x*2+(x+1)*(y+1)*2", 2, 108),
    ("((x+y)//2*2+(x+y)%2)*4", "x*4+y*4", 0, 52),
    # fixed width: distributed term by term (a term may wrap to 0 before pairs merge)
    ("(i8*3+1)*128", "i8*-128+-128", -128, 127),
    ("((u8//4)*4 + (u8%4)*3)*64", "u8%4*192", 0, 255),
    ("((u8//2)*2 + (u8%2))*128", "u8*128", 0, 255),
]


@pytest.mark.parametrize(("expr", "rendered", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
def test_scaled_sums_simplify_to(
    simplify_case: Callable[[str, str, Any, Any], None], expr: str, rendered: str, lo: Any, hi: Any
) -> None:
    simplify_case(expr, rendered, lo, hi)


def _horner(ranges: list[UOp], base: int) -> UOp:
    out = ranges[0]
    for r in ranges[1:]:
        out = out * base + r
    return out


def test_deep_horner_index_is_one_flat_sum() -> None:
    # (((r0*4 + r1)*4 + r2)*4 + ...): 60 levels (tens of seconds before sums were scaled
    # in one step and their prefixes remembered as canonical)
    ranges = [UOp.range(4, 500 + i) for i in range(60)]
    got = graph_rewrite(_horner(ranges, 4), sym)
    want = ranges[0] * 4**59
    for i, r in enumerate(ranges[1:-1], start=1):
        want = want + r * 4 ** (59 - i)
    assert got is want + ranges[-1]
    assert (got.vmin, got.vmax) == (0, 4**60 - 1)


def test_horner_matches_term_by_term_distribution() -> None:
    pytest.importorskip("z3")
    from fusegrad.uop.prove import prove_equal

    ranges = [UOp.range(3 + i % 4, 600 + i) for i in range(8)]
    e = _horner(ranges, 5)
    s = e.simplify()
    assert s.render(simplify=False) == (
        "r600*78125+r601*15625+r602*3125+r603*625+r604*125+r605*25+r606*5+r607"
    )
    assert prove_equal(e, s).proved


def test_scale_canonical_sum_declines_what_it_cannot_do_exactly() -> None:
    x, y = UOp.variable("x", 0, 10), UOp.variable("y", 0, 3)
    i8 = UOp.variable("i8", -100, 100, dtypes.int8)
    assert scale_canonical_sum(x * 2 + y, 3) is (x * 6 + y * 3).simplify()
    assert scale_canonical_sum(y + x, 3) is None  # not canonical (operand order)
    assert scale_canonical_sum(i8 + 1, 3) is None  # fixed width: distributed term by term
    assert scale_canonical_sum(x * 2, 3) is None  # not a sum
    assert scale_canonical_sum(x + y, 0) is None


def test_prefixes_of_a_canonical_sum_are_canonical() -> None:
    v = [UOp.variable(f"v{i}", 0, 9) for i in range(6)]
    total = v[0] * 3
    for i, t in enumerate(v[1:], start=2):
        total = total + t * i
    total = total + 7
    assert normalize_sum(total) is None  # canonical: its prefixes are remembered as such
    node = total.src[0]
    while node.op is total.op:
        # each prefix is its own canonical form, computed afresh (so remembering is sound)
        assert _normal_sum(node) is node
        assert normalize_sum(node) is None
        node = node.src[0]


def test_long_sum_built_in_order_is_kept_and_in_any_order_is_sorted() -> None:
    # a sum built term by term in canonical order is recognized one term at a time
    v = [UOp.variable(f"t{i:03d}", 0, 9) for i in range(300)]
    in_order = v[0] * 2
    for i, t in enumerate(v[1:], start=1):
        in_order = in_order + t * (i % 4 + 2)
    assert graph_rewrite(in_order, sym) is in_order
    shuffled = v[299] * 5
    for i in range(298, -1, -1):
        shuffled = shuffled + v[i] * (i % 4 + 2)
    assert graph_rewrite(shuffled, sym) is in_order


@pytest.mark.parametrize("dtype", [dtypes.weakint, dtypes.uint8])
def test_a_divmod_term_after_its_pair_still_merges(dtype: Any) -> None:
    # the one-term-at-a-time check leaves // and % terms to full term collection
    x, y = UOp.variable("x", 0, 200, dtype), UOp.variable("y", 0, 3, dtype)
    four = UOp.const(4, dtype)
    e = y + x // four * four + x % four
    assert e.simplify() is (x + y).simplify()
