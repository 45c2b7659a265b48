"""where folding and merging, max folding.

Each case: the expression, its simplified form as rendered, and that form's vmin/vmax; every
case is also proven equal to the original by z3 (``simplify_case`` in conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

CASES = [
    # where folding and merging
    ("(x<11).where(y, z)", "y", 0, 3),
    ("(x<0).where(y, z)", "z", -5, 5),
    ("(x<5).where(y, y)", "y", 0, 3),
    ("(x<5).where(True, False)", "x<5", False, True),
    ("(x<5).where(False, True)", "4<x", False, True),
    ("(x<5).logical_not().where(y, z)", "(y if 4<x else z)", -5, 5),
    ("(x<5).where((x<5).where(y, z), w)", "(y if x<5 else w)", -8, 3),
    ("(x<5).where(y, (x<5).where(z, w))", "(y if x<5 else w)", -8, 3),
    ("(x<5).where((y<2).where(z, w), w)", "(z if (x<5)&(y<2) else w)", -8, 5),
    ("(x<5).where(z, (y<2).where(z, w))", "(z if (x<5)|(y<2) else w)", -8, 5),
    ("(x<5).where(y+1, y+1)", "y+1", 1, 4),
    ("(x<5).where(x, 5)", "(x if x<5 else 5)", 0, 10),
    ("(x<5).where(5, x)", "max(x, 5)", 5, 10),
    # max folding
    ("(x<0).where(0, x)", "x", 0, 10),
    ("(z<0).where(0, z)", "max(z, 0)", 0, 5),
    ("(z<y).where(y, z)", "max(y, z)", 0, 5),
    ("(y<z).where(z, y)", "max(y, z)", 0, 5),
    ("x.maximum(x)", "x", 0, 10),
    ("x.maximum(0)", "x", 0, 10),
    ("x.maximum(-3)", "x", 0, 10),
    ("x.maximum(10)", "10", 10, 10),
    ("x.maximum(11)", "11", 11, 11),
    ("z.maximum(0)", "max(z, 0)", 0, 5),
    ("z.maximum(y)", "max(y, z)", 0, 5),
    ("y.maximum(x+4)", "x+4", 4, 14),
    ("z.maximum(3).maximum(1)", "max(z, 3)", 3, 5),
    ("z.maximum(1).maximum(3)", "max(z, 3)", 3, 5),
    ("z.maximum(y).maximum(z)", "max(y, z)", 0, 5),
    ("x.minimum(11)", "x", 0, 10),
    ("x.minimum(0)", "0", 0, 0),
    ("z.minimum(0)", "max(z*-1, 0)*-1", -5, 0),
    ("(x+4).maximum(y)", "x+4", 4, 14),
    ("i8.maximum(-128)", "i8", -100, 100),
    ("u8.maximum(0)", "u8", 0, 255),
]


@pytest.mark.parametrize(("expr", "rendered", "lo", "hi"), CASES, ids=[c[0] for c in CASES])
def test_where_or_max_simplifies_to(
    simplify_case: Callable[[str, str, Any, Any], None], expr: str, rendered: str, lo: Any, hi: Any
) -> None:
    simplify_case(expr, rendered, lo, hi)
