"""Fuzz the symbolic simplifier: random integer expressions, simplified, checked three ways.

    .venv/bin/python tools/fuzz/symbolic.py --n 2000 --seed 0 [--no-z3] [--depth 6]
        [--start 0] [--record FILE]

Expression ``i`` of run ``seed`` is the same whatever ``--start``/``--n`` select, so a long run
can be split into chunks (``--start 20000 --n 20000`` ...) that together check exactly what one
process would. ``--record FILE`` writes each expression's index and simplified form (one line
each), so two versions of the simplifier can be compared expression by expression.

Each expression (over 1-4 Variables with random ranges, weakint mostly and some fixed-width
ints that wrap around, every integer op the simplifier knows, nesting depth up to ``--depth``)
is simplified and checked:

* by evaluation: ``sym_infer`` of the expression and of its simplified form agree on random
  and corner values, and every node's value lies within its ``vmin``/``vmax``;
* by z3: ``prove_equal(expr, simplified)`` (unless ``--no-z3``);
* for idempotence: simplifying the simplified form again changes nothing.

A mismatch is printed as a ready-to-paste pytest regression test; the exit status is 1 when
any expression failed.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from fusegrad.uop import DType, Invalid, Ops, UOp, dtypes, graph_rewrite, sym, sym_infer
from fusegrad.uop.prove import prove_equal
from fusegrad.uop.render import evaluate_all


@dataclass(frozen=True, slots=True)
class Expr:
    """A generated expression and the Python code that builds it."""

    uop: UOp
    code: str


@dataclass
class Report:
    """What a fuzz run found."""

    checked: int = 0
    unknown: int = 0
    failures: list[str] = field(default_factory=list)
    corpus: list[UOp] = field(default_factory=list)
    record: TextIO | None = None


Z3_TIMEOUT_MS = 500  # per proof; an unknown result is counted, evaluation still checks it

_DTYPES: list[tuple[DType, str, int, int]] = [
    (dtypes.int8, "dtypes.int8", -128, 127),
    (dtypes.uint8, "dtypes.uint8", 0, 255),
    (dtypes.int32, "dtypes.int32", -(2**31), 2**31 - 1),
]


class Generator:
    """Random expressions over a few Variables of one dtype."""

    def __init__(self, rng: random.Random, depth: int) -> None:
        self.rng = rng
        self.depth = depth
        fixed = rng.random() < 0.15
        self.dtype, self.dtype_code, lo, hi = (
            rng.choice(_DTYPES) if fixed else (dtypes.weakint, "dtypes.weakint", -(2**40), 2**40)
        )
        self.variables: list[Expr] = []
        self.setup: list[str] = []
        for name in "abcd"[: rng.randint(1, 4)]:
            low = rng.choice([0, 0, rng.randint(-20, 20), rng.randint(-200, 200)])
            high = low + rng.choice([0, 1, rng.randint(1, 16), rng.randint(1, 100)])
            low, high = min(max(low, lo), hi), max(min(high, hi), lo)
            low, high = min(low, high), max(low, high)
            # a quarter of the Variables promise a multiple_of (when the range holds one)
            m = rng.choice([2, 3, 4, 8, 16]) if rng.random() < 0.25 else 1
            if -(-low // m) * m > high:
                m = 1
            v = UOp.variable(name, low, high, self.dtype, multiple_of=m)
            self.variables.append(Expr(v, name))
            self.setup.append(
                f'{name} = UOp.variable("{name}", {low}, {high}, {self.dtype_code}, multiple_of={m})'
            )

    def const(self) -> int:
        return self.rng.choice([0, 1, 2, 3, 4, 8, -1, -2, self.rng.randint(-16, 16)])

    def leaf(self) -> Expr:
        if self.rng.random() < 0.8:
            return self.rng.choice(self.variables)
        value = self.const()
        if self.dtype is dtypes.uint8:
            value = abs(value)
        return Expr(UOp.const(value, self.dtype), f"UOp.const({value}, {self.dtype_code})")

    def expr(self, depth: int) -> Expr:
        if depth <= 0 or self.rng.random() < 0.15:
            return self.leaf()
        make = self.rng.choice(_BUILDERS)
        return make(self, depth - 1)

    def cond(self, depth: int) -> Expr:
        a, b = self.expr(depth), self.expr(depth)
        pick = self.rng.randrange(6)
        if pick == 0:
            return _bin(a, b, lambda x, y: x < y, "({} < {})")
        if pick == 1:
            c = self.const()
            return Expr(a.uop < c, f"({a.code} < {c})")
        if pick == 2:
            return Expr(a.uop.ne(b.uop), f"{a.code}.ne({b.code})")
        if pick == 3:
            return Expr(a.uop.eq(b.uop), f"{a.code}.eq({b.code})")
        c1 = self.cond(depth - 1) if depth > 0 else _lt0(a)
        c2 = _lt0(b)
        if pick == 4:
            return _bin(c1, c2, lambda x, y: x & y, "({} & {})")
        return _bin(c1, c2, lambda x, y: x | y, "({} | {})")


def _lt0(a: Expr) -> Expr:
    return Expr(a.uop < 1, f"({a.code} < 1)")


def _bin(a: Expr, b: Expr, fn: Callable[[UOp, UOp], UOp], template: str) -> Expr:
    return Expr(fn(a.uop, b.uop), template.format(a.code, b.code))


def _divisor(g: Generator) -> int:
    d = g.rng.choice([1, 2, 3, 4, 5, 6, 8, 16, -1, -2, -3, -4, g.rng.randint(-12, 12)]) or 7
    return abs(d) if g.dtype is dtypes.uint8 else d


def _arith(g: Generator, depth: int) -> Expr:
    a, b = g.expr(depth), g.expr(depth)
    ops: list[tuple[Callable[[UOp, UOp], UOp], str]] = [
        (lambda x, y: x + y, "({} + {})"),
        (lambda x, y: x - y, "({} - {})"),
        (lambda x, y: x * y, "({} * {})"),
        (lambda x, y: x.maximum(y), "{}.maximum({})"),
        (lambda x, y: x.minimum(y), "{}.minimum({})"),
        (lambda x, y: x & y, "({} & {})"),
        (lambda x, y: x | y, "({} | {})"),
        (lambda x, y: x ^ y, "({} ^ {})"),
        (lambda x, y: x // y, "({} // {})"),
        (lambda x, y: x % y, "({} % {})"),
    ]
    fn, template = g.rng.choice(ops)
    return _bin(a, b, fn, template)


def _with_const(g: Generator, depth: int) -> Expr:
    a = g.expr(depth)
    c = g.const()
    ops: list[tuple[Callable[[UOp, int], UOp], str]] = [
        (lambda x, k: x + k, "({} + {})"),
        (lambda x, k: x * k, "({} * {})"),
        (lambda x, k: x - k, "({} - {})"),
        (lambda x, k: x.maximum(k), "{}.maximum({})"),
        (lambda x, k: x & abs(k), "({} & abs({}))"),
        (lambda x, k: x | abs(k), "({} | abs({}))"),
    ]
    fn, template = g.rng.choice(ops)
    return Expr(fn(a.uop, c), template.format(a.code, c))


def _division(g: Generator, depth: int) -> Expr:
    a, d = g.expr(depth), _divisor(g)
    ops: list[tuple[Callable[[UOp, int], UOp], str]] = [
        (lambda x, k: x // k, "({} // {})"),
        (lambda x, k: x % k, "({} % {})"),
        (lambda x, k: x.cdiv(k), "{}.cdiv({})"),
        (lambda x, k: x.cmod(k), "{}.cmod({})"),
    ]
    fn, template = g.rng.choice(ops)
    return Expr(fn(a.uop, d), template.format(a.code, d))


def _linear(g: Generator, depth: int) -> Expr:
    """``(a*k + b) op d``: the shapes index math has."""
    a, b, k, d = g.expr(depth), g.expr(depth), g.rng.choice([2, 3, 4, 8, -4]), _divisor(g)
    inner = Expr(a.uop * k + b.uop, f"({a.code} * {k} + {b.code})")
    if g.rng.random() < 0.5:
        return Expr(inner.uop // d, f"({inner.code} // {d})")
    return Expr(inner.uop % d, f"({inner.code} % {d})")


def _shift(g: Generator, depth: int) -> Expr:
    a, s = g.expr(depth), g.rng.randint(0, 4)
    if g.rng.random() < 0.5:
        return Expr(a.uop << s, f"({a.code} << {s})")
    return Expr(a.uop >> s, f"({a.code} >> {s})")


def _where(g: Generator, depth: int) -> Expr:
    c, a, b = g.cond(depth), g.expr(depth), g.expr(depth)
    pick = g.rng.randrange(4)
    if pick == 0 and g.dtype is dtypes.weakint:
        return Expr(a.uop.valid(c.uop), f"{a.code}.valid({c.code})")
    if pick == 1:
        return Expr((a.uop < 0).where(0, a.uop), f"({a.code} < 0).where(0, {a.code})")
    return Expr(c.uop.where(a.uop, b.uop), f"{c.code}.where({a.code}, {b.code})")


def _cast(g: Generator, depth: int) -> Expr:
    a = g.expr(depth)
    target, code, _, _ = g.rng.choice([*_DTYPES, (dtypes.int64, "dtypes.int64", 0, 0)])
    if g.rng.random() < 0.3:
        return Expr(
            a.uop.cast(dtypes.bool).cast(g.dtype),
            f"{a.code}.cast(dtypes.bool).cast({g.dtype_code})",
        )
    return Expr(a.uop.cast(target).cast(g.dtype), f"{a.code}.cast({code}).cast({g.dtype_code})")


def _bool_arith(g: Generator, depth: int) -> Expr:
    c = g.cond(depth)
    if g.rng.random() < 0.5:
        c = Expr(c.uop.logical_not(), f"{c.code}.logical_not()")
    return Expr(c.uop.cast(g.dtype), f"{c.code}.cast({g.dtype_code})")


_BUILDERS: list[Callable[[Generator, int], Expr]] = [
    _arith, _arith, _with_const, _with_const, _division, _division, _linear, _linear,
    _shift, _where, _where, _cast, _bool_arith,
]  # fmt: skip


def _samples(g: Generator, rng: random.Random, n: int) -> list[dict[str, int]]:
    out = []
    variables = [v.uop for v in g.variables]
    for corner in ("lo", "hi"):
        out.append({v.arg[0]: v.vmin if corner == "lo" else v.vmax for v in variables})
    for _ in range(n):
        # a value of the Variable's range that is a multiple of its multiple_of
        m = {v: v.multiple_of for v in variables}
        out.append(
            {v.arg[0]: rng.randint(v.vmin // m[v], v.vmax // m[v]) * m[v] for v in variables}
        )
    return out


def _bounds_error(root: UOp, values: dict[str, int]) -> str | None:
    """A node whose value falls outside its vmin/vmax, or None."""
    for node, v in evaluate_all(root, values).items():
        if node.op in (Ops.DEFINE_VAR, Ops.CONST):
            continue
        if v is Invalid:
            continue
        if not node.vmin <= v <= node.vmax:
            return f"{node.render(simplify=False)} = {v} outside [{node.vmin}, {node.vmax}]"
    return None


def _evaluation_error(e: UOp, s: UOp, samples: list[dict[str, int]]) -> str | None:
    for i, values in enumerate(samples):
        want, got = sym_infer(e, values), sym_infer(s, values)
        if want is not got and want != got:
            return f"at {values}: expression gives {want}, simplified gives {got}"
        if i < 2 and ((err := _bounds_error(e, values)) or (err := _bounds_error(s, values))):
            return f"at {values}: {err}"
    return None


_INFIX = {
    Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.FLOORDIV: "//", Ops.FLOORMOD: "%",
    Ops.CMPLT: "<", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^", Ops.SHL: "<<", Ops.SHR: ">>",
}  # fmt: skip
_METHODS = {
    Ops.CDIV: "cdiv", Ops.CMOD: "cmod", Ops.MAX: "maximum", Ops.CMPNE: "ne", Ops.CMPEQ: "eq",
}  # fmt: skip


def _dtype_code(dt: DType) -> str:
    return f"dtypes.{dt.name}"


def to_code(root: UOp) -> str:
    """Python code building ``root`` from the Variables ``a``..``d`` (same dtypes, same
    nodes: the operands of every op already share its dtype, so no promotion happens)."""
    code: dict[UOp, str] = {}
    for u in root.toposort():
        src = [code.get(s, "") for s in u.src]
        if u.op is Ops.DEFINE_VAR:
            code[u] = u.arg[0]
        elif u.op is Ops.CONST:
            value = "Invalid" if u.arg is Invalid else repr(u.arg)
            code[u] = f"UOp.const({value}, {_dtype_code(u.dtype)})"
        elif u.op in _INFIX:
            code[u] = f"({src[0]} {_INFIX[u.op]} {src[1]})"
        elif u.op in _METHODS:
            code[u] = f"{src[0]}.{_METHODS[u.op]}({src[1]})"
        elif u.op is Ops.NEG:
            code[u] = f"(-{src[0]})"
        elif u.op is Ops.WHERE:
            code[u] = f"{src[0]}.where({src[1]}, {src[2]})"
        elif u.op is Ops.CAST:
            code[u] = f"{src[0]}.cast({_dtype_code(u.dtype)})"
        else:
            raise NotImplementedError(f"to_code: {u.op!r}")
    return code[root]


def _variables_code(root: UOp) -> list[str]:
    return [
        f'{v.arg[0]} = UOp.variable("{v.arg[0]}", {v.arg[1]}, {v.arg[2]}, {_dtype_code(v.dtype)}'
        f"{'' if v.multiple_of == 1 else f', multiple_of={v.multiple_of}'})"
        for v in root.variables()
    ]


def regression_test(name: str, e: UOp, problem: str) -> str:
    """A pytest function reproducing one failure (``e`` already minimized)."""
    lines = [f"def test_{name}() -> None:", f"    # {problem}"]
    lines += [f"    {line}" for line in _variables_code(e)]
    lines += [f"    e = {to_code(e)}", "    assert prove_simplify(e).proved", ""]
    return "\n".join(lines)


Check = Callable[[UOp], str | None]


def _candidates(node: UOp) -> list[UOp]:
    """Smaller stand-ins for ``node``: its sources of the same dtype, then 0 and 1."""
    out = [s for s in node.src if s.dtype is node.dtype]
    if node.op is not Ops.CONST and node.dtype.scalar() is not dtypes.bool:
        out += [UOp.const(0, node.dtype), UOp.const(1, node.dtype)]
    return out


def minimize(e: UOp, check: Check, budget: int = 400) -> UOp:
    """A smaller expression that still fails ``check`` (greedy: replace one node at a time
    by a smaller stand-in while the failure stays)."""
    improved = True
    while improved and budget > 0:
        improved = False
        for node in reversed(e.toposort()):
            for candidate in _candidates(node):
                budget -= 1
                smaller = e.substitute({node: candidate})
                if smaller is not e and check(smaller) is not None:
                    e, improved = smaller, True
                    break
            if improved or budget <= 0:
                break
    return e


def _problem(
    e: UOp, samples: list[dict[str, int]], use_z3: bool, report: Report | None
) -> str | None:
    """What is wrong with simplifying ``e``, or None."""
    try:
        s = e.simplify()
        problem = _evaluation_error(e, s, samples)
        if problem is None and graph_rewrite(s, sym) is not s:
            problem = f"not idempotent: {s.render(simplify=False)} simplifies further"
        if problem is None and use_z3:
            proof = prove_equal(e, s, timeout_ms=Z3_TIMEOUT_MS)
            if report is not None:
                report.unknown += proof.status == "unknown"
            if proof.status == "counterexample":
                problem = f"z3 counterexample {proof.model}"
        return problem
    except Exception as exc:  # a crash is a failure to report, not a reason to stop
        return f"{type(exc).__name__}: {str(exc)[:200]}"


def check_one(index: int, seed: int, depth: int, use_z3: bool, report: Report) -> None:
    """Generate expression ``index`` of run ``seed`` and check it."""
    rng = random.Random(f"{seed}:{index}")
    g = Generator(rng, rng.randint(1, depth))
    e = g.expr(g.depth).uop
    samples = _samples(g, rng, 6)
    problem = _problem(e, samples, use_z3, report)
    report.checked += 1
    if problem is None:
        s = e.simplify()
        report.corpus.append(s)
        if report.record is not None:
            report.record.write(f"{index}\t{s.render(simplify=False)}\n")
        return
    small = minimize(e, lambda u: _problem(u, samples, use_z3, None))
    problem = _problem(small, samples, use_z3, None) or problem
    try:
        simplified = small.simplify().render(simplify=False)
    except Exception:  # the failure itself may be the crash
        simplified = "-"
    detail = f"{problem}; simplified: {simplified}"
    if report.record is not None:
        report.record.write(f"{index}\tMISMATCH {detail}\n")
    report.failures.append(regression_test(f"fuzz_seed{seed}_{index}", small, detail))


def run(
    n: int,
    seed: int,
    depth: int = 6,
    use_z3: bool = True,
    progress: int = 0,
    first: int = 0,
    record: TextIO | None = None,
) -> Report:
    """Fuzz expressions ``first .. first+n-1`` of run ``seed``; with ``progress``, failures
    are printed as they are found and a progress line every ``progress`` expressions; with
    ``record``, every simplified form is written there."""
    report = Report(record=record)
    start = time.perf_counter()
    for i in range(first, first + n):
        found = len(report.failures)
        check_one(i, seed, depth, use_z3, report)
        if progress and len(report.failures) > found:
            print(report.failures[-1], flush=True)
        if progress and (i + 1 - first) % progress == 0:
            took = time.perf_counter() - start
            print(
                f"  {i + 1 - first}/{n}: {len(report.failures)} mismatches, {took:.0f} s",
                flush=True,
            )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="number of expressions")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    parser.add_argument("--depth", type=int, default=6, help="maximum nesting depth")
    parser.add_argument("--no-z3", action="store_true", help="skip the z3 proofs")
    parser.add_argument("--progress", type=int, default=0, help="print progress every N")
    parser.add_argument("--start", type=int, default=0, help="index of the first expression")
    parser.add_argument("--record", default=None, help="write each simplified form to this file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        record = stack.enter_context(open(args.record, "w", buffering=1)) if args.record else None
        report = run(
            args.n, args.seed, args.depth, not args.no_z3, args.progress, args.start, record
        )
    if not args.progress:
        for failure in report.failures:
            print(failure, flush=True)
    took = time.perf_counter() - start
    print(
        f"fuzz symbolic: seed {args.seed}, expressions {args.start}..{args.start + args.n - 1}: "
        f"{report.checked} checked, "
        f"{len(report.failures)} mismatches, {report.unknown} z3 unknown, {took:.1f} s"
    )
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
