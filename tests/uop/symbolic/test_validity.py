"""Index validity (sym): idx.valid(cond) simplified given cond, Invalid lifted out of ALU.

Each case: the expression, its simplified form as rendered, and that form's vmin/vmax; every
case is also proven equal to the original by z3 (``simplify_case`` in conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fusegrad.uop import Invalid

CASES = [
    # index validity: the index simplified given its condition
    ("(x%8).valid(x<8)", "(x if x<8 else Invalid)", 0, 7),
    ("(x//8).valid(x<8)", "(0 if x<8 else Invalid)", 0, 0),
    ("(x%4).valid(x<4)", "(x if x<4 else Invalid)", 0, 3),
    ("((x*4+y)//4).valid(x<5)", "(x if x<5 else Invalid)", 0, 4),
    ("(r0%8).valid(r0<8)", "(r0 if r0<8 else Invalid)", 0, 7),
    ("(r0//8).valid(7<r0)", "(1 if 7<r0 else Invalid)", 1, 1),
    ("(r0%8+r0//8*8).valid(r0<12)", "(r0 if r0<12 else Invalid)", 0, 11),
    ("x.valid(x<11)", "x", 0, 10),
    ("x.valid(x<0)", "Invalid", 9223372036854775807, -9223372036854775808),
    ("x.valid((x<5)&(x<3))", "(x if x<3 else Invalid)", 0, 2),
    ("x.valid((x<5)&(6<x))", "Invalid", 9223372036854775807, -9223372036854775808),
    ("x.valid((x<5)&(y<2))", "(x if (x<5)&(y<2) else Invalid)", 0, 4),
    ("(x.maximum(3)).valid(2<x)", "(x if 2<x else Invalid)", 3, 10),
    ("(z.maximum(0)).valid(z<0)", "(0 if z<0 else Invalid)", 0, 0),
    ("(x+y).valid((x<2)&(y<1))", "(x if (x<2)&(y<1) else Invalid)", 0, 1),
    ("x.valid(x<5).valid(y<2)", "(x if (x<5)&(y<2) else Invalid)", 0, 4),
    ("x.valid(x<5).valid(x<3)", "(x if x<3 else Invalid)", 0, 2),
    # Invalid lifted out of arithmetic
    ("x.valid(x<5)+1", "(x+1 if x<5 else Invalid)", 1, 11),
    ("(x.valid(x<5)+y.valid(y<2))*2", "(x*2+y*2 if (x<5)&(y<2) else Invalid)", 0, 26),
    ("x.valid(x<5)*0", "(0 if x<5 else Invalid)", 0, 0),
    ("x.valid(x<5)//2", "(x//2 if x<5 else Invalid)", 0, 5),
    ("(x.valid(x<5)<3)", "(x<3 if x<5 else Invalid)", False, True),
    ("x.valid(x<5).cast(dtypes.int32)", "(cast(x, int32) if x<5 else Invalid)", 0, 10),
    ("x.valid(x<5).maximum(y)", "(max(x, y) if x<5 else Invalid)", 0, 10),
    ("UOp.const(Invalid, dtypes.weakint)+x", "Invalid", 9223372036854775807, -9223372036854775808),
    ("(x<5).where(UOp.const(Invalid, dtypes.weakint), x)", "(x if 4<x else Invalid)", 5, 10),
    (
        "(x<5).where(UOp.const(Invalid, dtypes.weakint), UOp.const(Invalid, dtypes.weakint))",
        "Invalid",
        9223372036854775807,
        -9223372036854775808,
    ),
    ("x.valid(UOp.const(True, dtypes.bool))", "x", 0, 10),
    (
        "x.valid(UOp.const(False, dtypes.bool))",
        "Invalid",
        9223372036854775807,
        -9223372036854775808,
    ),
]


@pytest.mark.parametrize(("expr", "rendered", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
def test_valid_index_simplifies_to(
    simplify_case: Callable[[str, str, Any, Any], None], expr: str, rendered: str, lo: Any, hi: Any
) -> None:
    simplify_case(expr, rendered, lo, hi)


def test_fuzz_seed1_1318() -> None:
    # found by the fuzzer: x // 0 -> 0 dropped an x that may be Invalid
    from fusegrad.uop import UOp, dtypes
    from fusegrad.uop.prove import prove_simplify

    pytest.importorskip("z3")
    a = UOp.variable("a", 0, 13, dtypes.weakint)
    inner = (a < 2).where(a, UOp.const(Invalid, dtypes.weakint)).ne(a).cast(dtypes.weakint)
    e = UOp.const(1, dtypes.weakint).eq(a).where(a, inner) // UOp.const(0, dtypes.weakint)
    assert prove_simplify(e).proved
