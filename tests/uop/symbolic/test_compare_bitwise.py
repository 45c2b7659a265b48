"""Comparisons, boolean algebra, bitwise masks and shifts.

Each case: the expression, its simplified form as rendered, and that form's vmin/vmax; every
case is also proven equal to the original by z3 (``simplify_case`` in conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

CASES = [
    # comparisons folded by ranges
    ("x<11", "True", True, True),
    ("x<0", "False", False, False),
    ("x<5", "x<5", False, True),
    ("z<-5", "False", False, False),
    ("z<6", "True", True, True),
    ("(x+y)<14", "True", True, True),
    ("(x+y)<13", "x+y<13", False, True),
    ("x.ne(11)", "True", True, True),
    ("x.ne(5)", "x!=5", False, True),
    ("x.eq(-1)", "False", False, False),
    ("x<x", "False", False, False),
    ("x.ne(x)", "False", False, False),
    ("x.eq(x)", "True", True, True),
    ("w<z", "w<z", False, True),
    ("z<w", "z<w", False, True),
    ("y<x", "y<x", False, True),
    # linear comparisons (weakint)
    ("(x+3)<5", "x<2", False, True),
    ("(x-3)<5", "x<8", False, True),
    ("(x*2)<7", "x<4", False, True),
    ("(x*2)<8", "x<4", False, True),
    ("(x*3+y*3)<9", "x+y<3", False, True),
    ("(-x)<3", "True", True, True),
    ("(-x)<-3", "3<x", False, True),
    ("(x*-2)<-5", "2<x", False, True),
    ("3<(x+2)", "1<x", False, True),
    ("5<(x*2)", "2<x", False, True),
    ("-3<(-x)", "x<3", False, True),
    ("(x//4)<2", "x<8", False, True),
    ("1<(x//4)", "7<x", False, True),
    ("(x+2).ne(5)", "x!=3", False, True),
    ("(x*2).ne(5)", "True", True, True),
    ("(x*2).eq(6)", "x==3", False, True),
    ("(x*2+4).eq(10)", "x==3", False, True),
    ("(x<5).logical_not()", "4<x", False, True),
    ("(3<x).logical_not()", "x<4", False, True),
    ("(x<=5)", "x<6", False, True),
    ("(x>=5)", "4<x", False, True),
    ("(x>5)", "5<x", False, True),
    ("(i8<5).logical_not()", "4<i8", False, True),
    ("(u8<1).logical_not()", "0<u8", False, True),
    # a fixed-width sum may wrap: constants stay where they are
    ("(i8+3)<5", "i8+3<5", False, True),
    ("(u8*2)<8", "u8*2<8", False, True),
    # boolean algebra
    ("(x<5)&(x<5)", "x<5", False, True),
    ("(x<5)|(x<5)", "x<5", False, True),
    ("(x<5)&(x<5).logical_not()", "False", False, False),
    ("(x<5)|(x<5).logical_not()", "True", True, True),
    ("(x<5).logical_not().logical_not()", "x<5", False, True),
    ("(x<5)&UOp.const(True, dtypes.bool)", "x<5", False, True),
    ("(x<5)&UOp.const(False, dtypes.bool)", "False", False, False),
    ("(x<5)|UOp.const(True, dtypes.bool)", "True", True, True),
    ("(x<5)|UOp.const(False, dtypes.bool)", "x<5", False, True),
    ("(x<5)^UOp.const(False, dtypes.bool)", "x<5", False, True),
    ("(x<5)^(x<5)", "False", False, False),
    ("(x<5).ne(False)", "x<5", False, True),
    ("(x<5).eq(True)", "x<5", False, True),
    ("(x<5).eq(False)", "4<x", False, True),
    ("((x<5)&(y<2))&(x<5)", "(x<5)&(y<2)", False, True),
    ("(y<2)&(x<5)", "(x<5)&(y<2)", False, True),
    ("((x<5)|(y<2))|(x<5)", "(x<5)|(y<2)", False, True),
    ("((x<5)&(y<2)).cast(dtypes.weakint)", "cast((x<5)&(y<2), weakint)", 0, 1),
    # bitwise masks
    ("x&15", "x", 0, 10),
    ("x&7", "x%8", 0, 7),
    ("x&16", "0", 0, 0),
    ("x&0", "0", 0, 0),
    ("x&-1", "x", 0, 10),
    ("(x*16+y)&15", "y", 0, 3),
    ("(x*16+y)&3", "y", 0, 3),
    ("y|0", "y", 0, 3),
    ("y|4", "y|4", 4, 7),
    ("y^0", "y", 0, 3),
    ("y^y", "0", 0, 0),
    ("z&7", "z%8", 0, 7),
    ("x|x", "x", 0, 10),
    ("(x*4)&3", "0", 0, 0),
    ("i8&-1", "i8", -100, 100),
    ("u8&255", "u8", 0, 255),
    ("u8&0", "0", 0, 0),
    ("u8|255", "255", 255, 255),
    # shifts
    ("x<<2", "x*4", 0, 40),
    ("x<<0", "x", 0, 10),
    ("x>>1", "x//2", 0, 5),
    ("x>>0", "x", 0, 10),
    ("(x<<2)>>2", "x", 0, 10),
    ("(x*4+y)>>2", "x", 0, 10),
    ("z>>1", "z//2", -3, 2),
    ("z<<1", "z*2", -10, 10),
    ("i8<<1", "i8*2", -128, 127),
    ("u8>>4", "u8//16", 0, 15),
    ("i8>>7", "i8>>7", -1, 0),
    ("(x<5)&(x<3)", "x<3", False, True),
    ("(x<5)|(x<3)", "x<5", False, True),
    ("(x<5)&(6<x)", "False", False, False),
    ("(x<5)&(2<x)&(y<2)", "(2<x)&(x<5)&(y<2)", False, True),
    ("(x<5)|(3<x)", "True", True, True),
    ("(x<3)|(6<x)", "(6<x)|(x<3)", False, True),
    ("(i8<5)&(i8<3)", "i8<3", False, True),
    ("(x<5)&(4<x)", "False", False, False),
]


@pytest.mark.parametrize(("expr", "rendered", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
def test_comparison_or_bitwise_simplifies_to(
    simplify_case: Callable[[str, str, Any, Any], None], expr: str, rendered: str, lo: Any, hi: Any
) -> None:
    simplify_case(expr, rendered, lo, hi)
