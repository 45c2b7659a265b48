"""Proofs with z3: translate integer/bool UOp expressions to z3 and prove facts about them
for every value their Variables and ranges can take.

* ``uops_to_z3(solver, *uops)``: the z3 terms of ``uops`` (range constraints of their
  Variables, RANGEs and SPECIALs are added to ``solver``).
* ``prove_equal(a, b)`` / ``prove_simplify(e)``: ``a == b`` (``e.simplify() == e``) for all
  values in range, with ``Invalid`` in the same places.
* ``validate_index(idx, size)``: ``0 <= idx < size`` wherever the index is valid (where its
  ``idx.valid(cond)`` condition holds).

Each returns a ``Proof``: ``proved``, or a counterexample (Variable values), or ``unknown``
(z3 gave up within the timeout). z3 is optional: ``pip install fusegrad-uop[z3]``.

The semantics are ``exec_alu``'s: fixed-width ints wrap around, floor/truncating division and
remainder by zero are 0, shifts outside ``[0, 4096)`` give 0 (or -1 for a negative ``x >> s``).
``weakint`` values are the mathematical integers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fusegrad.uop.dtype import DType, Invalid, dtypes
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.terms import may_be_invalid
from fusegrad.uop.uop import UOp

Z3 = Any  # z3 terms are dynamically typed


def _z3() -> Any:
    try:
        import z3
    except ImportError as e:  # pragma: no cover - exercised in the z3-less README venv
        raise ImportError("fusegrad.uop.prove needs z3: pip install 'fusegrad-uop[z3]'") from e
    return z3


@dataclass(frozen=True, slots=True)
class Proof:
    """The outcome of a proof: ``status`` is ``"proved"``, ``"counterexample"`` (with the
    Variable values in ``model``) or ``"unknown"``."""

    status: str
    model: dict[str, int] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        """True when the fact holds for every value in range."""
        return self.status == "proved"


def _const_value(z3: Any, v: Z3) -> int | None:
    """The value of a z3 integer literal, or None (then the term is built for every value)."""
    return v.as_long() if z3.is_int_value(v) else None


def _floor_div(z3: Any, a: Z3, b: Z3) -> Z3:
    # z3's integer / is Euclidean: the floor quotient for b > 0; b < 0 flips both signs.
    # A constant divisor (the common case) picks its branch here: smaller terms prove faster
    c = _const_value(z3, b)
    if c is not None:
        return z3.IntVal(0) if c == 0 else a / b if c > 0 else (-a) / (-b)
    return z3.If(b == 0, 0, z3.If(b > 0, a / b, (-a) / (-b)))


def _trunc_div(z3: Any, a: Z3, b: Z3) -> Z3:
    c = _const_value(z3, b)
    if c == 0:
        return z3.IntVal(0)
    if c is not None:
        magnitude = z3.If(a >= 0, a, -a) / abs(c)
        return z3.If((a >= 0) == (c > 0), magnitude, -magnitude)
    magnitude = z3.If(a >= 0, a, -a) / z3.If(b >= 0, b, -b)
    return z3.If(b == 0, 0, z3.If((a >= 0) == (b > 0), magnitude, -magnitude))


def _shift(z3: Any, a: Z3, s: Z3, left: bool) -> Z3:
    """Shifts by a constant amount (others are not translated)."""
    amount = z3.simplify(s)
    if not z3.is_int_value(amount):
        raise NotImplementedError("uops_to_z3: shifts need a constant amount")
    n = amount.as_long()
    if not 0 <= n < 4096:
        return 0 if left else z3.If(a < 0, -1, 0)
    return a * (1 << n) if left else _floor_div(z3, a, z3.IntVal(1 << n))


def _bitwise(z3: Any, op: Ops, a: Z3, b: Z3, bits: int) -> Z3:
    """AND/OR/XOR of two's-complement ints of ``bits`` bits, through bit-vectors."""
    fn = {Ops.AND: lambda x, y: x & y, Ops.OR: lambda x, y: x | y, Ops.XOR: lambda x, y: x ^ y}
    raw = z3.BV2Int(fn[op](z3.Int2BV(a, bits), z3.Int2BV(b, bits)))
    return z3.If(raw >= 1 << (bits - 1), raw - (1 << bits), raw)


def _wrap(z3: Any, dt: DType, v: Z3) -> Z3:
    """``v`` wrapped to ``dt``'s range (weakint and bool values pass unchanged)."""
    s = dt.scalar()
    if s is dtypes.weakint or s is dtypes.bool or not dtypes.is_int(s):
        return v
    span = 1 << s.bitsize
    if dtypes.is_unsigned(s):
        return v % span
    half = span >> 1
    return (v + half) % span - half


class _Translator:
    """UOps to z3 terms, with a validity flag per node for ``Invalid``."""

    def __init__(self, solver: Any) -> None:
        self.z3 = _z3()
        self.solver = solver
        self.terms: dict[UOp, Z3] = {}
        self.valid: dict[UOp, Z3] = {}
        self.names: dict[str, Z3] = {}
        self.always = self.z3.BoolVal(True)  # the validity of nodes no Invalid reaches

    def variable(self, name: str, lo: Z3, hi: Z3) -> Z3:
        v = self.names.get(name)
        if v is None:
            v = self.names[name] = self.z3.Int(name)
        self.solver.add(v >= lo, v <= hi)
        return v

    def translate(self, root: UOp) -> tuple[Z3, Z3]:
        for u in root.toposort():
            if u not in self.terms:
                self.terms[u] = self._term(u)
                self.valid[u] = self._validity(u)
        return self.terms[root], self.valid[root]

    def _validity(self, u: UOp) -> Z3:
        z3 = self.z3
        if not may_be_invalid(u):
            return self.always  # no Invalid below: no z3 term to build
        if u.op is Ops.CONST and u.arg is Invalid:
            return z3.BoolVal(False)
        if u.op is Ops.WHERE:
            c, x, y = u.src
            return z3.And(self.valid[c], z3.If(self.terms[c], self.valid[x], self.valid[y]))
        if u.op in (Ops.RANGE, Ops.SPECIAL, Ops.AFTER):
            return z3.BoolVal(True)
        return z3.And(z3.BoolVal(True), *(self.valid[s] for s in u.src))

    def _term(self, u: UOp) -> Z3:
        if dtypes.is_float(u.dtype):
            raise NotImplementedError(
                f"uops_to_z3: floats are not translated ({u.op!r} of {u.dtype!r})"
            )
        leaf = self._leaf(u)
        if leaf is not None:
            return leaf
        rule = _RULES.get(u.op)
        if rule is None or u.dtype.count > 1:
            raise NotImplementedError(f"uops_to_z3: can't translate {u.op!r} of {u.dtype!r}")
        return _wrap(self.z3, u.dtype, rule(self, u, [self.terms[s] for s in u.src]))

    def _leaf(self, u: UOp) -> Z3 | None:
        z3 = self.z3
        if u.op is Ops.CONST:
            if u.arg is Invalid:
                return z3.BoolVal(False) if u.dtype.scalar() is dtypes.bool else z3.IntVal(0)
            if isinstance(u.arg, bool):
                return z3.BoolVal(u.arg)
            if isinstance(u.arg, int):
                return z3.IntVal(u.arg)
            raise NotImplementedError(f"uops_to_z3: can't translate the constant {u.arg!r}")
        if u.op in (Ops.DEFINE_VAR, Ops.PARAM) and isinstance(u.arg, tuple):
            v = self.variable(u.arg[0], u.arg[1], u.arg[2])
            if u.multiple_of != 1:
                self.solver.add(v % u.multiple_of == 0)
            return v
        if u.op is Ops.RANGE:
            return self.variable(f"r{u.arg[0]}", 0, self.terms[u.src[0]] - 1)
        if u.op is Ops.SPECIAL:
            return self.variable(str(u.arg), 0, self.terms[u.src[0]] - 1)
        if u.op is Ops.AFTER and u.is_bound_var:
            return self.terms[u.src[0]]
        return None


def _bool_or_int(t: _Translator, u: UOp, op: Ops, a: Z3, b: Z3) -> Z3:
    z3 = t.z3
    if u.dtype.scalar() is dtypes.bool:
        fn = {Ops.AND: z3.And, Ops.OR: z3.Or, Ops.XOR: z3.Xor}[op]
        return fn(a, b)
    return _bitwise(z3, op, a, b, _bit_width(u))


def _bit_width(u: UOp) -> int:
    """Bits holding both operands in two's complement: the dtype's width, or for weakint the
    width their ranges need (bit-vector terms are what make proofs slow)."""
    if u.dtype.scalar() is not dtypes.weakint:
        return int(u.dtype.scalar().bitsize)
    width = 1
    for s in u.src:
        lo, hi = int(s.vmin), int(s.vmax)
        width = max(width, hi.bit_length() + 1, (-lo - 1).bit_length() + 1 if lo < 0 else 1)
    return width


def _as_int(z3: Any, v: Z3) -> Z3:
    return z3.If(v, 1, 0) if z3.is_bool(v) else v


def _cast(t: _Translator, u: UOp, s: list[Z3]) -> Z3:
    z3, src = t.z3, u.src[0]
    if dtypes.is_float(src.dtype):
        raise NotImplementedError("uops_to_z3: casts from floats are not translated")
    if u.dtype.scalar() is dtypes.bool:
        return s[0] if z3.is_bool(s[0]) else s[0] != 0
    return _as_int(z3, s[0])


def _max(t: _Translator, u: UOp, s: list[Z3]) -> Z3:
    z3 = t.z3
    if u.dtype.scalar() is dtypes.bool:
        return z3.Or(s[0], s[1])
    return z3.If(s[0] >= s[1], s[0], s[1])


def _lt(t: _Translator, u: UOp, s: list[Z3]) -> Z3:
    z3 = t.z3
    return _as_int(z3, s[0]) < _as_int(z3, s[1])


def _floor_mod(z3: Any, a: Z3, b: Z3) -> Z3:
    c = _const_value(z3, b)
    if c is not None:
        return z3.IntVal(0) if c == 0 else a - b * _floor_div(z3, a, b)
    return z3.If(b == 0, 0, a - b * _floor_div(z3, a, b))


def _trunc_mod(z3: Any, a: Z3, b: Z3) -> Z3:
    c = _const_value(z3, b)
    if c is not None:
        return z3.IntVal(0) if c == 0 else a - b * _trunc_div(z3, a, b)
    return z3.If(b == 0, 0, a - b * _trunc_div(z3, a, b))


Rule = Callable[[_Translator, UOp, list[Z3]], Z3]
_RULES: dict[Ops, Rule] = {
    Ops.ADD: lambda t, u, s: _as_int(t.z3, s[0]) + _as_int(t.z3, s[1]),
    Ops.SUB: lambda t, u, s: s[0] - s[1],
    Ops.MUL: lambda t, u, s: s[0] * s[1],
    Ops.NEG: lambda t, u, s: -s[0],
    Ops.MULACC: lambda t, u, s: s[0] * s[1] + s[2],
    Ops.FLOORDIV: lambda t, u, s: _floor_div(t.z3, s[0], s[1]),
    Ops.FLOORMOD: lambda t, u, s: _floor_mod(t.z3, s[0], s[1]),
    Ops.CDIV: lambda t, u, s: _trunc_div(t.z3, s[0], s[1]),
    Ops.CMOD: lambda t, u, s: _trunc_mod(t.z3, s[0], s[1]),
    Ops.MAX: _max,
    Ops.CMPLT: _lt,
    Ops.CMPNE: lambda t, u, s: s[0] != s[1],
    Ops.CMPEQ: lambda t, u, s: s[0] == s[1],
    Ops.AND: lambda t, u, s: _bool_or_int(t, u, Ops.AND, s[0], s[1]),
    Ops.OR: lambda t, u, s: _bool_or_int(t, u, Ops.OR, s[0], s[1]),
    Ops.XOR: lambda t, u, s: _bool_or_int(t, u, Ops.XOR, s[0], s[1]),
    Ops.SHL: lambda t, u, s: _shift(t.z3, s[0], s[1], left=True),
    Ops.SHR: lambda t, u, s: _shift(t.z3, s[0], s[1], left=False),
    Ops.WHERE: lambda t, u, s: t.z3.If(s[0], s[1], s[2]),
    Ops.CAST: _cast,
}


def uops_to_z3(solver: Any, *uops: UOp) -> list[Any]:
    """The z3 terms of integer/bool expressions ``uops`` (z3 Int or Bool each).

    The range of every Variable, RANGE and SPECIAL met is added to ``solver`` as a
    constraint; a Variable is the z3 Int of its name. An ``Invalid`` value translates to 0
    (``prove_equal`` and ``validate_index`` track where values are valid).
    """
    t = _Translator(solver)
    return [t.translate(u)[0] for u in uops]


def _check(solver: Any, timeout_ms: int) -> Proof:
    z3 = _z3()
    solver.set("timeout", timeout_ms)
    result = solver.check()
    if result == z3.unsat:
        return Proof("proved")
    if result == z3.sat:
        model = solver.model()
        values = {str(d): model[d].as_long() for d in model.decls() if z3.is_int_value(model[d])}
        return Proof("counterexample", dict(sorted(values.items())))
    return Proof("unknown")


def prove_equal(a: UOp, b: UOp, timeout_ms: int = 5000) -> Proof:
    """Prove ``a == b`` for every value in range: both are Invalid at the same places, and
    equal wherever valid."""
    z3 = _z3()
    solver = z3.Solver()
    t = _Translator(solver)
    (ta, va), (tb, vb) = t.translate(a), t.translate(b)
    if va is t.always and vb is t.always:
        solver.add(ta != tb)  # both always valid: only the values can differ
    else:
        solver.add(z3.Or(va != vb, z3.And(va, ta != tb)))
    return _check(solver, timeout_ms)


def prove_simplify(e: UOp, timeout_ms: int = 5000) -> Proof:
    """Prove ``e.simplify() == e`` for every value in range."""
    return prove_equal(e, e.simplify(), timeout_ms)


def validate_index(idx: UOp, size: int | UOp, timeout_ms: int = 5000) -> Proof:
    """Prove ``0 <= idx < size`` wherever ``idx`` is valid: where the condition of
    ``idx.valid(cond)`` holds (an Invalid index is never used, so it can't be out of bounds).
    """
    z3 = _z3()
    solver = z3.Solver()
    t = _Translator(solver)
    term, valid = t.translate(idx)
    bound = t.translate(size)[0] if isinstance(size, UOp) else size
    solver.add(valid, z3.Or(term < 0, term >= bound))
    return _check(solver, timeout_ms)
