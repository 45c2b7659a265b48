"""UOp.simplify/ssimplify/divides/const_factor, and the commutative canonical order."""

from __future__ import annotations

from fusegrad.uop import UOp, commutative, dtypes, graph_rewrite, ssimplify, symbolic_simple

x = UOp.variable("x", 0, 10)
y = UOp.variable("y", 0, 3)


def test_simplify_reaches_a_fixed_point_and_caches_it() -> None:
    e = (x * 4 + y) // 4
    assert e.simplify() is x
    assert e.simplify() is e.simplify()
    assert x.simplify() is x


def test_ssimplify_returns_python_numbers_for_constants() -> None:
    assert (x * 0 + 3).ssimplify() == 3
    assert ssimplify(7) == 7
    assert ssimplify((y + 4) // 8) == 0
    assert (x + 1).ssimplify() is x + 1


def test_const_factor() -> None:
    assert (x * 6 + 12).const_factor() == 6
    assert (x * 4 * 3).const_factor() == 12
    assert (x * 4 + y).const_factor() == 1
    assert UOp.const(-8, dtypes.weakint).const_factor() == 8
    assert (x * 3).valid(x < 5).const_factor() == 3


def test_divides_returns_the_exact_quotient() -> None:
    assert (x * 6 + 12).divides(3) is x * 2 + 4
    assert (x * 6 + 12).divides(4) is None
    assert (x * y * 4).divides(2) is x * y * 2
    assert (-(x * 4)).divides(4) is -(x * 1)  # exact, not simplified
    assert x.divides(1) is x
    assert x.divides(0) is None
    assert UOp.const(4.0, dtypes.float32).divides(2) is None


def test_commutative_orders_operands_structurally() -> None:
    a, b = UOp.variable("a", 0, 5), UOp.variable("b", 0, 5)
    assert graph_rewrite(b + a, commutative) is a + b
    assert graph_rewrite(3 + a, commutative) is a + 3  # constants last
    assert graph_rewrite(b * 4 + a, commutative) is a + b * 4  # sum terms by their base
    assert graph_rewrite(b.maximum(a), commutative) is a.maximum(b)


def test_symbolic_simple_alone_folds_constants_exactly() -> None:
    i8 = UOp.const(100, dtypes.int8)
    assert graph_rewrite(i8 + 100, symbolic_simple).arg == -56
    assert graph_rewrite(UOp.const(-7, dtypes.weakint) // 2, symbolic_simple).arg == -4
    assert graph_rewrite(UOp.const(-7, dtypes.weakint).cdiv(2), symbolic_simple).arg == -3
    assert graph_rewrite(x + 0, symbolic_simple) is x
