"""The rule functions and sets ``tinygrad.uop.symbolic`` exports, on fusegrad's IR: each
result checked exactly and proven by z3 where it claims an equality."""

from __future__ import annotations

import importlib

import pytest
from fusegrad.uop import AxisType, Invalid, Ops, UOp, dtypes, graph_rewrite
from fusegrad.uop.prove import prove_equal

sym = importlib.import_module("fusegrad.uop.symbolic")
z3 = pytest.importorskip("z3")

a, b = UOp.variable("a", 0, 9), UOp.variable("b", 0, 9)
y, z = UOp.variable("y", -20, 20), UOp.variable("z", 0, 3)
i32 = UOp.variable("i32", -(2**31), 2**31 - 1, dtypes.int32)


def _positive(u: UOp) -> UOp:
    return u.const_like(0) < u


# -- canonicalize_simplex ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [(a * 3 + b * 2, "a+b"), (a * 3 + b, "a+b"), (a * 5 + 2, "a+2")],
)
def test_canonicalize_simplex_drops_coefficients_keeping_positivity(
    expr: UOp, expected: str
) -> None:
    out = sym.canonicalize_simplex(expr)
    assert out is not None and out.render(simplify=False) == expected
    assert prove_equal(_positive(expr), _positive(out)).proved


@pytest.mark.parametrize(
    "expr",
    [a + b, y * 2 + a, a * -2 + b, (a * b) * 2 + a, (i32 * 2 + i32).cast(dtypes.int32)],
    ids=["no-coefficient", "maybe-negative-atom", "negative-coefficient", "non-atom", "int32"],
)
def test_canonicalize_simplex_refuses_other_forms(expr: UOp) -> None:
    assert sym.canonicalize_simplex(expr) is None


# -- fold_add_divmod_recombine ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ((y // 4) * 4 + y % 4, "y"),
        ((y // 4) * 8 + (y % 4) * 2 + z, "y*2+z"),
        (y.cdiv(3) * 3 + y.cmod(3) + 1, "y+1"),
        ((i32 // 7) * 7 + i32 % 7, "i32"),
    ],
)
def test_fold_add_divmod_recombine(expr: UOp, expected: str) -> None:
    out = sym.fold_add_divmod_recombine(expr)
    assert out is not None and out.render(simplify=False) == expected
    assert prove_equal(expr, out).proved


def test_fold_add_divmod_recombine_needs_a_matching_pair() -> None:
    assert sym.fold_add_divmod_recombine((y // 4) * 3 + y % 4) is None
    assert sym.fold_add_divmod_recombine((y // 4) * 4 + z % 4) is None


# -- fold_bitcast, fold_const_where, fold_where_closure ---------------------------------------


def test_fold_bitcast_reinterprets_the_bits() -> None:
    c = UOp.const(-1, dtypes.int32)
    out = sym.fold_bitcast(c.bitcast(dtypes.uint32), c)
    assert out is UOp.const(2**32 - 1, dtypes.uint32)
    f = UOp.const(1.0, dtypes.float32)
    assert sym.fold_bitcast(f.bitcast(dtypes.int32), f) is UOp.const(0x3F800000, dtypes.int32)
    assert sym.fold_bitcast(c.bitcast(dtypes.uint32), UOp.invalid(dtypes.int32)) is None


@pytest.mark.parametrize(
    ("c0", "c1", "dt"),
    [(5, 2, dtypes.weakint), (-3, 7, dtypes.int8), (2**31 - 1, -(2**31), dtypes.int32)],
)
def test_fold_const_where_int_is_arithmetic(c0: int, c1: int, dt: object) -> None:
    gate = a < 4
    w = gate.where(UOp.const(c0, dt), UOp.const(c1, dt))  # type: ignore[arg-type]
    out = sym.fold_const_where(gate, w.src[1], w.src[2], w)
    assert out.op is not Ops.WHERE
    assert prove_equal(w, out).proved


def test_fold_const_where_bools_and_leftovers() -> None:
    gate = a < 4
    assert (
        sym.fold_const_where(gate, UOp.const(True), UOp.const(False), gate.where(True, False))
        is gate
    )
    w = gate.where(UOp.const(False), UOp.const(True))
    assert sym.fold_const_where(gate, w.src[1], w.src[2], w) is gate.logical_not()
    f = gate.where(UOp.const(1.5, dtypes.float32), UOp.const(2.5, dtypes.float32))
    assert sym.fold_const_where(gate, f.src[1], f.src[2], f) is f  # floats keep the select


def test_fold_where_closure_substitutes_the_condition_in_each_branch() -> None:
    cond = a < 3
    t, f = cond.where(a + 1, b), (cond.where(b, a) * 2)
    expr = cond.where(t, f)
    out = sym.fold_where_closure(cond, t, f)
    assert out is not None
    assert prove_equal(expr, out).proved
    assert cond not in out.src[1].toposort() and cond not in out.src[2].toposort()
    assert out.simplify().render() == "(a+1 if a<3 else a*2)"
    assert sym.fold_where_closure(cond, a, b) is None


# -- validity: gated_given_valid, drop_and_clauses, pm_data_invalid ---------------------------


def test_gated_given_valid_simplifies_under_the_gate() -> None:
    i = UOp.variable("i", 0, 10)
    gate = i < 4
    out = sym.gated_given_valid(gate, (i // 4) * 5 + i, UOp.invalid())
    assert out is not None and out.render(simplify=False) == "(i if i<4 else Invalid)"
    assert prove_equal(gate.where((i // 4) * 5 + i, UOp.invalid()), out).proved


def test_drop_and_clauses_keeps_only_clauses_on_the_index_ranges() -> None:
    r, v = UOp.range(8, 0), UOp.variable("v", 0, 9)
    cond = (r < 4) & (v < 5)
    out = sym.drop_and_clauses(cond, r * 2, UOp.invalid())
    assert out is (r < 4).where(r * 2, UOp.invalid())
    # valid wherever the original is, with the same value there: gated again, it is the original
    orig = cond.where(r * 2, UOp.invalid())
    assert out is not None
    assert prove_equal(orig, cond.where(out, UOp.invalid())).proved
    assert sym.drop_and_clauses(r < 4, r * 2, UOp.invalid()) is None
    assert sym.drop_and_clauses(v < 5, r * 2, UOp.invalid()) is r * 2
    rewritten = graph_rewrite(cond.where(r * 2, UOp.invalid()), sym.pm_drop_and_clauses)
    assert rewritten is out


def test_pm_data_invalid_drops_gates_of_data_not_of_indices() -> None:
    x = UOp.variable("x", 0, 9, dtypes.int32)
    data = (a < 3).where(x, UOp.invalid(dtypes.int32))
    assert graph_rewrite(data, sym.pm_data_invalid) is x
    index = (a < 3).where(a, UOp.invalid())
    assert graph_rewrite(index, sym.pm_data_invalid) is index
    assert graph_rewrite(index, sym.pm_remove_invalid) is a


# -- reduce_mul_chain, where_on_load ------------------------------------------------------------


def test_reduce_mul_chain_moves_loop_invariant_factors_out() -> None:
    r = UOp.range(4, 0, AxisType.REDUCE)
    c = UOp.variable("c", 0, 9)
    out = sym.reduce_mul_chain((r * c * 3).reduce(r))
    assert out is r.reduce(r) * c * 3
    # sum_r(r*c*3) = 3*c*sum_r(r) for each c
    for cv in range(10):
        assert sum(rv * cv * 3 for rv in range(4)) == sum(range(4)) * cv * 3
    assert sym.reduce_mul_chain((r * r).reduce(r)) is None
    neg = UOp.variable("n", -5, 5)
    assert sym.reduce_mul_chain((r * neg).reduce(r, arg=Ops.MAX)) is None  # max needs c >= 0
    assert sym.reduce_mul_chain((r * c).reduce(r, arg=Ops.MAX)) is r.reduce(r, arg=Ops.MAX) * c


def test_where_on_load_moves_the_gate_into_the_index() -> None:
    buf, i = UOp.param(0, dtypes.float32.ptr(8)), UOp.variable("i", 0, 7)
    ld = buf.index(i).load()
    out = sym.where_on_load(i < 4, buf, i, ld)
    assert out is buf.index((i < 4).where(i, UOp.invalid())).load()
    cast = ld.cast(dtypes.float64)
    out_cast = sym.where_on_load(i < 4, buf, i, cast)
    assert out_cast is not None and out_cast.op is Ops.CAST and out_cast.src[0] is out
    assert sym.where_on_load(i < 4, buf, i + 1, ld) is None  # not this load's index


# -- the sets -----------------------------------------------------------------------------------


def test_const_folding_pat_is_the_folding_rule_pattern() -> None:
    assert sym.symbolic_simple.patterns[0][0] is sym.const_folding_pat
    assert graph_rewrite(UOp.const(2) + 3, sym.symbolic_simple) is UOp.const(5)


def test_mop_cleanup_merges_stacked_movements() -> None:
    buf = UOp.new_buffer("CPU", 24, dtypes.float32, num=3)
    x = buf.reshape((2, 3, 4))
    twice = UOp(Ops.RESHAPE, x.dtype, (UOp(Ops.RESHAPE, x.dtype, (buf,), (6, 4)),), (2, 3, 4))
    assert graph_rewrite(twice, sym.mop_cleanup) is x
    p2 = UOp(Ops.PERMUTE, x.dtype, (UOp(Ops.PERMUTE, x.dtype, (x,), (1, 2, 0)),), (1, 2, 0))
    assert graph_rewrite(p2, sym.mop_cleanup) is x.permute((2, 0, 1))
    noop = UOp(Ops.RESHAPE, x.dtype, (x,), (2, 3, 4))
    assert graph_rewrite(noop, sym.mop_cleanup) is x


def test_pm_clean_up_group_sink() -> None:
    st = UOp(Ops.STORE, dtypes.void, (a, b))
    st2 = UOp(Ops.STORE, dtypes.void, (b, a))
    messy = UOp.sink(UOp(Ops.GROUP, dtypes.void, (st, UOp.const(1))), st2, st, UOp.const(2))
    assert graph_rewrite(messy, sym.pm_clean_up_group_sink) is UOp.sink(st, st2)
    assert Ops.CONST in sym.REMOVE_FROM_SINK_LIKE and Ops.STORE not in sym.REMOVE_FROM_SINK_LIKE


def test_invalid_constant_is_not_folded_by_new_rules() -> None:
    inv = UOp.invalid(dtypes.int32)
    assert sym.fold_bitcast(inv.bitcast(dtypes.uint32), inv) is None
    w = (a < 3).where(inv, UOp.const(1, dtypes.int32))
    assert sym.fold_const_where(a < 3, w.src[1], w.src[2], w) is w
    assert Invalid is inv.arg
