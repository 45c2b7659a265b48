"""Shared names for the symbolic tests: the Variables and ranges the case tables use, and the
check every exact-result case goes through (rendered result, bounds, z3 proof)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fusegrad.uop import Invalid, UOp, dtypes

NAMES: dict[str, Any] = {
    "UOp": UOp,
    "dtypes": dtypes,
    "Invalid": Invalid,
    "x": UOp.variable("x", 0, 10),
    "y": UOp.variable("y", 0, 3),
    "z": UOp.variable("z", -5, 5),
    "w": UOp.variable("w", -8, -1),
    "n": UOp.variable("n", 1, 64),
    "r0": UOp.range(16, 0),
    "r1": UOp.range(4, 1),
    "i8": UOp.variable("i8", -100, 100, dtypes.int8),
    "u8": UOp.variable("u8", 0, 255, dtypes.uint8),
    "i32": UOp.variable("i32", -(2**31), 2**31 - 1, dtypes.int32),
}

Case = tuple[str, str, Any, Any]


def build(expr: str) -> UOp:
    """The UOp the case's expression text builds."""
    out = eval(expr, dict(NAMES))
    assert isinstance(out, UOp)
    return out


def check_case(expr: str, rendered: str, lo: Any, hi: Any) -> None:
    """``expr`` simplifies to ``rendered`` with bounds ``[lo, hi]``, proven equal by z3."""
    from fusegrad.uop.prove import prove_equal

    e = build(expr)
    s = e.simplify()
    assert s.render(simplify=False) == rendered
    assert (s.vmin, s.vmax) == (lo, hi)
    proof = prove_equal(e, s)
    assert proof.proved, f"{expr} -> {rendered}: {proof}"


@pytest.fixture
def simplify_case() -> Callable[[str, str, Any, Any], None]:
    """The exact-result check: ``simplify_case(expr, rendered, vmin, vmax)``."""
    pytest.importorskip("z3")
    return check_case
