"""Floor and truncating division and remainder: ranges, linear decomposition, nesting.

Each case: the expression, its simplified form as rendered, and that form's vmin/vmax; every
case is also proven equal to the original by z3 (``simplify_case`` in conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

CASES = [
    # floor division and remainder by ranges
    ("x//11", "0", 0, 0),
    ("x//4", "x//4", 0, 2),
    ("x%11", "x", 0, 10),
    ("(x+11)%11", "x", 0, 10),
    ("(x+22)//11", "2", 2, 2),
    ("y//4", "0", 0, 0),
    ("y%4", "y", 0, 3),
    ("z//6", "z//6", -1, 0),
    ("z%6", "z%6", 0, 5),
    ("w//8", "-1", -1, -1),
    ("w%8", "w+8", 0, 7),
    ("w%-8", "w*-1%8*-1", -7, 0),
    ("(x*4+y)//4", "x", 0, 10),
    ("(x*4+y)%4", "y", 0, 3),
    ("(x*4+y+1)//4", "x+(y+1)//4", 0, 11),
    ("(x*4+y+4)//4", "x+1", 1, 11),
    ("(x*4+y)//2", "x*2+y//2", 0, 21),
    ("(x*4+y)%2", "y%2", 0, 1),
    ("(x*8+y*2)//4", "x*2+y//2", 0, 21),
    ("(x*8+y*2)%4", "y%2*2", 0, 2),
    ("(x*6+3)//4", "x+(x+1)//2", 0, 15),
    ("(x*6+3)%4", "(x+1)%2*2+1", 1, 3),
    ("(x*6)//4", "x+x//2", 0, 15),
    ("(x*6)%4", "x%2*2", 0, 2),
    ("(x*4)//4", "x", 0, 10),
    ("(x*4)%4", "0", 0, 0),
    ("(x*12+y*4)//8", "x+(x+y)//2", 0, 16),
    ("(z*4+y)//4", "z", -5, 5),
    ("(z*4+y)%4", "y", 0, 3),
    ("(x*4+z)//4", "x+z//4", -2, 11),
    ("(x*-4+y)//4", "x*-1", -10, 0),
    ("(x*-4+y)%4", "y", 0, 3),
    ("(x*5+y)//4", "x+(x+y)//4", 0, 13),
    ("(x*5+y)%4", "(x+y)%4", 0, 3),
    ("x//-1", "x*-1", -10, 0),
    ("x//-2", "x*-1//2", -5, 0),
    ("x%-3", "x*-1%3*-1", -2, 0),
    ("(x*8+r1)//8", "x", 0, 10),
    ("(r0*4+r1)//4", "r0", 0, 15),
    ("(r0*4+r1)%4", "r1", 0, 3),
    ("(r0*4+r1)//16", "(r0*4+r1)//16", 0, 3),
    ("(r0*4+r1)%16", "(r0*4+r1)%16", 0, 15),
    ("(x+y*10)%10", "x%10", 0, 9),
    ("(x*10+y)%10", "y", 0, 3),
    # nested
    ("(x//4)//2", "x//8", 0, 1),
    ("(x//2)//3", "x//6", 0, 1),
    ("((x//2)+3)//4", "(x+6)//8", 0, 2),
    ("(x%12)//4", "x//4", 0, 2),
    ("(x%12)%4", "x%4", 0, 3),
    ("(x%12)%5", "x%5", 0, 4),
    ("(x%4)%12", "x%4", 0, 3),
    ("(x//4)*4+x%4", "x", 0, 10),
    ("(z//3)*3+z%3", "z", -5, 5),
    ("(x%8)//8", "0", 0, 0),
    ("(r0*4+r1)//4*4+(r0*4+r1)%4", "r0*4+r1", 0, 63),
    # truncating division and remainder
    ("x.cdiv(4)", "x//4", 0, 2),
    ("x.cmod(4)", "x%4", 0, 3),
    ("z.cdiv(6)", "0", 0, 0),
    ("z.cmod(6)", "z", -5, 5),
    ("z.cdiv(3)", "cdiv(z, 3)", -1, 1),
    ("z.cmod(3)", "cmod(z, 3)", -2, 2),
    ("w.cdiv(4)", "w*-1//4*-1", -2, 0),
    ("w.cmod(4)", "w*-1%4*-1", -3, 0),
    ("(x*4+y).cdiv(4)", "x", 0, 10),
    ("(x*4+y).cmod(4)", "y", 0, 3),
    ("(z*4).cdiv(4)", "z", -5, 5),
    ("(z*4).cmod(4)", "0", 0, 0),
    ("(z*6).cdiv(3)", "z*2", -10, 10),
    ("z.cdiv(-2)", "cdiv(z, 2)*-1", -2, 2),
    ("z.cmod(-2)", "cmod(z, 2)", -1, 1),
    ("x.cdiv(-3)", "x//3*-1", -3, 0),
    ("w.cdiv(-4)", "w*-1//4", 0, 2),
    ("(w*4).cdiv(2)", "w*2", -16, -2),
    ("(z*4+y).cdiv(4)", "cdiv(y+z*4, 4)", -5, 5),
    # division by a non-constant
    ("x//x", "x//x", 0, 10),
    ("n//n", "1", 1, 1),
    ("x%x", "0", 0, 0),
    ("(x*n)//n", "x", 0, 10),
    ("(x*n)%n", "0", 0, 0),
    ("(x*y)%y", "0", 0, 0),
    ("n.cdiv(n)", "1", 1, 1),
    ("(x*n).cdiv(n)", "x", 0, 10),
    ("x//0", "0", 0, 0),
    ("x%0", "0", 0, 0),
    ("0//x", "0", 0, 0),
    ("0%x", "0", 0, 0),
    ("x//1", "x", 0, 10),
    ("x%1", "0", 0, 0),
    ("x.cdiv(1)", "x", 0, 10),
    ("x.cmod(-1)", "0", 0, 0),
]


@pytest.mark.parametrize(("expr", "rendered", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
def test_division_simplifies_to(
    simplify_case: Callable[[str, str, Any, Any], None], expr: str, rendered: str, lo: Any, hi: Any
) -> None:
    simplify_case(expr, rendered, lo, hi)
