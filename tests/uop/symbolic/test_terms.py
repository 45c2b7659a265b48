"""Term collection, constant gathering, products, and cast chains (symbolic).

Each case: the expression, its simplified form as rendered, and that form's vmin/vmax; every
case is also proven equal to the original by z3 (``simplify_case`` in conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

CASES = [
    # term collection
    ("x*2+x*3", "x*5", 0, 50),
    ("x+x", "x*2", 0, 20),
    ("x+x+x", "x*3", 0, 30),
    ("x*3-x", "x*2", 0, 20),
    ("x-x", "0", 0, 0),
    ("x*2+y+x*3", "x*5+y", 0, 53),
    ("y+x", "x+y", 0, 13),
    ("x+y+x*-1", "y", 0, 3),
    ("(x+y)-(y+x)", "0", 0, 0),
    ("x*4+y*4", "x*4+y*4", 0, 52),
    ("x+y+z+x+y+z", "x*2+y*2+z*2", -10, 36),
    ("(x+1)+(x+2)", "x*2+3", 3, 23),
    # constant gathering
    ("x+3+4", "x+7", 7, 17),
    ("(x+3)-3", "x", 0, 10),
    ("3+x+y+1", "x+y+4", 4, 17),
    ("(x+2)*3-6", "x*3", 0, 30),
    # distribution and products
    ("(x+2)*3", "x*3+6", 6, 36),
    ("(x+y)*4", "x*4+y*4", 0, 52),
    ("(x+1)*(y+1)", "(x+1)*(y+1)", 1, 44),
    ("x*2*3", "x*6", 0, 60),
    ("(x*2)*(y*3)", "x*y*6", 0, 180),
    ("x*0", "0", 0, 0),
    ("0*x", "0", 0, 0),
    ("x*1", "x", 0, 10),
    ("x*-1*-1", "x", 0, 10),
    ("-(-x)", "x", 0, 10),
    ("-x", "x*-1", -10, 0),
    ("-(x-y)", "x*-1+y", -10, 3),
    ("x*y+y*x", "x*y*2", 0, 60),
    ("x*y*0+x", "x", 0, 10),
    ("(x*4+y)*2", "x*8+y*2", 0, 86),
    # wrap-around ints: ring identities still hold
    ("i8*2+i8*3", "i8*5", -128, 127),
    ("i8+i8*-1", "0", 0, 0),
    ("i8*64+i8*64", "i8*-128", -128, 127),
    ("u8*2+u8*254", "0", 0, 0),
    ("u8-u8", "0", 0, 0),
    ("(u8+200)+100", "u8+44", 0, 255),
    ("i32+1-1", "i32", -2147483648, 2147483647),
    ("(i8+100)+100", "i8+-56", -128, 127),
    # cast chains
    ("x.cast(dtypes.int32).cast(dtypes.weakint)", "x", 0, 10),
    ("x.cast(dtypes.int8).cast(dtypes.int32)", "cast(x, int32)", 0, 10),
    ("(x*30).cast(dtypes.int8).cast(dtypes.int32)", "cast(cast(x*30, int8), int32)", -128, 127),
    ("i8.cast(dtypes.int32).cast(dtypes.int8)", "i8", -100, 100),
    ("i8.cast(dtypes.int16).cast(dtypes.int64)", "cast(i8, int64)", -100, 100),
    ("u8.cast(dtypes.int8).cast(dtypes.int32)", "cast(cast(u8, int8), int32)", -128, 127),
    ("i32.cast(dtypes.int8).cast(dtypes.int32)", "cast(cast(i32, int8), int32)", -128, 127),
    ("(x<5).cast(dtypes.int32).cast(dtypes.bool)", "x<5", False, True),
    ("(x<5).cast(dtypes.int8).cast(dtypes.weakint)", "cast(x<5, weakint)", 0, 1),
    ("x.cast(dtypes.bool)", "x!=0", False, True),
    ("z.cast(dtypes.bool)", "z!=0", False, True),
    ("(x+1).cast(dtypes.bool)", "True", True, True),
    ("UOp.const(300, dtypes.weakint).cast(dtypes.uint8)", "44", 44, 44),
    ("UOp.const(-1, dtypes.weakint).cast(dtypes.uint16)", "65535", 65535, 65535),
    ("(u8+1).cast(dtypes.weakint)", "cast(u8+1, weakint)", 0, 255),
]


@pytest.mark.parametrize(("expr", "rendered", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
def test_terms_simplify_to(
    simplify_case: Callable[[str, str, Any, Any], None], expr: str, rendered: str, lo: Any, hi: Any
) -> None:
    simplify_case(expr, rendered, lo, hi)
