"""The z3 bridge: translation, equivalence proofs with counterexamples, index validation."""

from __future__ import annotations

import pytest
from fusegrad.uop import UOp, dtypes
from fusegrad.uop.prove import prove_equal, prove_simplify, uops_to_z3, validate_index

z3 = pytest.importorskip("z3")

x = UOp.variable("x", 0, 10)
y = UOp.variable("y", -4, 3)


def test_uops_to_z3_translates_and_constrains_variables() -> None:
    solver = z3.Solver()
    (term,) = uops_to_z3(solver, x * 4 + 2)
    solver.add(term == 42)
    assert solver.check() == z3.sat and solver.model()[z3.Int("x")].as_long() == 10
    solver.add(term > 42)
    assert solver.check() == z3.unsat  # x <= 10 was added with the variable


def test_uops_to_z3_floor_and_truncating_division_differ_for_negatives() -> None:
    solver = z3.Solver()
    floor, trunc = uops_to_z3(solver, y // 3, y.cdiv(3))
    solver.add(z3.Int("y") == -4)
    assert solver.check() == z3.sat
    model = solver.model()
    assert model.eval(floor).as_long() == -2 and model.eval(trunc).as_long() == -1


def test_uops_to_z3_wraps_fixed_width_ints() -> None:
    v = UOp.variable("v", 100, 127, dtypes.int8)
    solver = z3.Solver()
    (term,) = uops_to_z3(solver, v + 100)
    solver.add(z3.Int("v") == 100)
    assert solver.check() == z3.sat and solver.model().eval(term).as_long() == -56


def test_prove_equal_proves_and_finds_counterexamples() -> None:
    assert prove_equal((x * 4 + 3) // 4, x).proved
    bad = prove_equal((y * 4 + 3).cdiv(4), y)  # truncation: y=-1 gives 0
    assert bad.status == "counterexample" and bad.model["y"] < 0


@pytest.mark.parametrize("c", [-7, -3, -1, 0, 1, 3, 7])
def test_division_by_a_constant_matches_exec_alu_semantics(c: int) -> None:
    # a constant divisor is translated without the divisor-sign branches: check each sign
    # (and 0, where exec_alu gives 0) against the values sym_infer computes
    from fusegrad.uop import sym_infer

    k = UOp.const(c, dtypes.weakint)
    exprs = [y // k, y % k, y.cdiv(k), y.cmod(k)]
    solver = z3.Solver()
    terms = uops_to_z3(solver, *exprs)
    for value in range(-4, 4):
        solver.push()
        solver.add(z3.Int("y") == value)
        assert solver.check() == z3.sat
        model = solver.model()
        got = [model.eval(t).as_long() for t in terms]
        assert got == [sym_infer(e, {"y": value}) for e in exprs], (c, value)
        solver.pop()


def test_prove_equal_with_constant_divisors() -> None:
    assert prove_equal(y // -3, (-y) // 3).proved
    assert prove_equal(y.cdiv(-3), -y.cdiv(3)).proved
    assert prove_equal(y.cmod(-3), y.cmod(3)).proved
    assert prove_equal(y // 0 + y % 0, UOp.const(0, dtypes.weakint)).proved
    assert prove_equal(y // -3, -(y // 3)).status == "counterexample"  # differs at y=1


def test_prove_equal_tracks_invalid() -> None:
    valid = x.valid(x < 5)
    assert prove_equal(valid + 1, (x + 1).valid(x < 5)).proved
    assert not prove_equal(valid, x).proved  # Invalid where x >= 5
    assert not prove_equal(valid, x.valid(x < 6)).proved


def test_prove_simplify_on_index_math() -> None:
    r0, r1 = UOp.range(16, 0), UOp.range(4, 1)
    assert prove_simplify((r0 * 4 + r1) // 4 * 4 + (r0 * 4 + r1) % 4).proved
    assert prove_simplify(((x * 6 + 3) % 4 + (x < 5).where(x, 0)).valid(x.ne(3))).proved


def test_validate_index_proves_in_bounds_and_reports_out_of_bounds() -> None:
    r0, r1 = UOp.range(16, 0), UOp.range(4, 1)
    assert validate_index(r0 * 4 + r1, 64).proved
    oob = validate_index(r0 * 4 + r1 + 1, 64)
    assert oob.status == "counterexample" and oob.model == {"r0": 15, "r1": 3}
    # padding: the index is only used where it is valid
    padded = (r0 - 2).valid((r0 > 1) & (r0 < 10))
    assert validate_index(padded, 8).proved
    assert not validate_index((r0 - 2).valid(r0 > 1), 8).proved


def test_validate_index_with_a_symbolic_size() -> None:
    n = UOp.variable("n", 1, 128)
    r = UOp.range(n, 0)
    assert validate_index(r, n).proved
    assert not validate_index(r + 1, n).proved


def test_uops_to_z3_rejects_floats_by_name() -> None:
    f = UOp.variable("f", 0.0, 1.0, dtypes.float32)
    with pytest.raises(NotImplementedError, match="float"):
        uops_to_z3(z3.Solver(), f + 1.0)
