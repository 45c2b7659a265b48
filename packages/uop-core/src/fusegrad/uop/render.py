"""Text views of UOps: ``render_uop`` prints an expression as Python-like math, ``pretty`` is
the ``repr``, ``evaluate`` computes an expression's value (``sym_infer``).

All three walk the graph iteratively, so deep graphs are fine. The rendered form is
deterministic: it depends only on the graph, never on hash seeds or object addresses.
``//`` and ``%`` are floor division and remainder (Python's); the truncating forms print as
``cdiv(a, b)`` and ``cmod(a, b)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fusegrad.uop.alu import exec_alu
from fusegrad.uop.dtype import Invalid, bitcast, dtypes
from fusegrad.uop.opcodes import AxisType, Ops
from fusegrad.uop.uop import UOp

# binary operators with their Python precedence (higher binds tighter)
_INFIX: dict[Ops, tuple[str, int]] = {
    Ops.CMPLT: ("<", 1),
    Ops.CMPNE: ("!=", 1),
    Ops.CMPEQ: ("==", 1),
    Ops.OR: ("|", 2),
    Ops.XOR: ("^", 3),
    Ops.AND: ("&", 4),
    Ops.SHL: ("<<", 5),
    Ops.SHR: (">>", 5),
    Ops.ADD: ("+", 6),
    Ops.SUB: ("-", 6),
    Ops.MUL: ("*", 7),
    Ops.FDIV: ("/", 7),
    Ops.FLOORDIV: ("//", 7),
    Ops.FLOORMOD: ("%", 7),
    Ops.POW: ("**", 9),
}
_CALLS: dict[Ops, str] = {
    Ops.MAX: "max",
    Ops.CDIV: "cdiv",
    Ops.CMOD: "cmod",
    Ops.EXP2: "exp2",
    Ops.LOG2: "log2",
    Ops.SIN: "sin",
    Ops.SQRT: "sqrt",
    Ops.RECIPROCAL: "reciprocal",
    Ops.TRUNC: "trunc",
    Ops.MULACC: "mulacc",
    Ops.THREEFRY: "threefry",
}
_ASSOCIATIVE_TEXT = {Ops.ADD, Ops.MUL, Ops.AND, Ops.OR, Ops.XOR}
_ATOM = 10


def _leaf_text(u: UOp) -> str | None:
    if u.op is Ops.CONST:
        return "Invalid" if u.arg is Invalid else repr(u.arg)
    if u.op is Ops.VCONST:
        return repr(u.arg)
    if u.op in (Ops.DEFINE_VAR, Ops.PARAM) and isinstance(u.arg, tuple):
        return str(u.arg[0])
    if u.op is Ops.RANGE:
        return f"r{u.arg[0]}"
    if u.op is Ops.SPECIAL:
        return str(u.arg)
    if u.is_bound_var:
        return str(u.src[0].arg[0])
    return None


def render_uop(root: UOp) -> str:
    """``root`` as one line of math: ``((x*4)+y)//4`` style, minimal parentheses."""
    text: dict[UOp, tuple[str, int]] = {}
    for u in root.toposort(gate=lambda n: _leaf_text(n) is None):
        text[u] = _render_one(u, text)
    return text[root][0]


def _operand(text: dict[UOp, tuple[str, int]], u: UOp, parent: Ops, prec: int, right: bool) -> str:
    s, p = text[u]
    if p > prec or (p == prec and prec != 1 and _no_parens_at_same_level(parent, u.op, right)):
        return s
    return f"({s})"


def _no_parens_at_same_level(parent: Ops, child: Ops, right: bool) -> bool:
    # Python reads a-b-c as (a-b)-c, but a**b**c as a**(b**c); comparisons chain, so they
    # always get parentheses (prec 1 is excluded by the caller)
    if parent is Ops.POW:
        return right
    return not right or (parent in _ASSOCIATIVE_TEXT and child is parent)


def _render_one(u: UOp, text: dict[UOp, tuple[str, int]]) -> tuple[str, int]:
    if (leaf := _leaf_text(u)) is not None:
        negative = leaf.startswith("-")
        return leaf, (8 if negative else _ATOM)
    if u.op in _INFIX and len(u.src) == 2:
        sym, prec = _INFIX[u.op]
        a = _operand(text, u.src[0], u.op, prec, right=False)
        b = _operand(text, u.src[1], u.op, prec, right=True)
        return f"{a}{sym}{b}", prec
    if u.op is Ops.NEG:
        return f"-{_operand(text, u.src[0], u.op, 8, right=True)}", 8
    if u.op is Ops.WHERE:
        c, x, y = (text[s][0] for s in u.src)
        return f"({x} if {c} else {y})", _ATOM
    if u.op in _CALLS:
        return f"{_CALLS[u.op]}({', '.join(text[s][0] for s in u.src)})", _ATOM
    if u.op in (Ops.CAST, Ops.BITCAST):
        kind = "cast" if u.op is Ops.CAST else "bitcast"
        return f"{kind}({text[u.src[0]][0]}, {u.dtype.name})", _ATOM
    args = ", ".join(text[s][0] for s in u.src)
    return f"{u.op.name}({args})", _ATOM


# -- repr -----------------------------------------------------------------------------------------


def _node_head(u: UOp) -> str:
    return f"{u.op!r}, {u.dtype!r}, arg={u.argstr()}{u.tagstr()}"


def pretty(root: UOp, max_nested: int = 64) -> str:
    """``repr`` of a UOp in tinygrad's form, ``UOp(Ops.CONST, dtypes.int32, arg=5, src=())``:
    nested for small graphs, a numbered listing (``%3 = Ops.ADD, ..., src=(%1, %2)``) for big
    or deep ones."""
    order = root.toposort()
    if len(order) > max_nested:
        index = {u: i for i, u in enumerate(order)}
        lines = [
            f"%{index[u]} = {_node_head(u)}, src=({', '.join(f'%{index[s]}' for s in u.src)})"
            for u in order
        ]
        return "\n".join(lines)
    text: dict[UOp, str] = {}
    for u in order:
        if not u.src:
            text[u] = f"UOp({_node_head(u)}, src=())"
            continue
        inner = ",\n".join(text[s] for s in u.src).replace("\n", "\n  ")
        text[u] = f"UOp({_node_head(u)}, src=(\n  {inner},))"
    return text[root]


# -- evaluation -----------------------------------------------------------------------------------


def _var_value(u: UOp, var_vals: Mapping[Any, int]) -> Any:
    # the value as the variable's dtype holds it (0.1 in a float16 Variable is 0.0999755859375)
    for key in (u, u.arg[0]):
        if key in var_vals:
            return dtypes.as_const(var_vals[key], u.dtype.scalar())
    raise KeyError(f"sym_infer: no value for Variable {u.arg[0]!r}")


def evaluate(root: UOp, var_vals: Mapping[Any, int]) -> Any:
    """The value of ``root`` with Variables (keyed by UOp or name) set from ``var_vals``.

    Bound Variables use their bound value unless ``var_vals`` overrides it (by UOp or name);
    the bound value also serves the same Variable's unbound uses. Evaluating an ``Invalid``
    gives ``Invalid``.
    """
    return evaluate_all(root, var_vals)[root]


def evaluate_all(root: UOp, var_vals: Mapping[Any, int]) -> dict[UOp, Any]:
    """The value of every node of ``root``'s graph (see ``evaluate``), in one pass."""
    order = root.toposort()
    resolved: dict[Any, Any] = dict(var_vals)
    for u in order:
        if u.is_bound_var and u.src[0] not in var_vals and u.src[0].arg[0] not in var_vals:
            resolved[u.src[0]] = u.src[1].src[1].arg
    values: dict[UOp, Any] = {}
    for u in order:
        values[u] = _eval_one(u, values, resolved)
    return values


def _eval_one(u: UOp, values: dict[UOp, Any], var_vals: Mapping[Any, int]) -> Any:
    handler = _EVAL_LEAF.get(u.op)
    if handler is not None:
        return handler(u, values, var_vals)
    operands = [values[s] for s in u.src]
    if any(v is Invalid for v in operands):
        if u.op is Ops.WHERE and operands[0] is not Invalid:  # an Invalid condition poisons
            return operands[1] if operands[0] else operands[2]
        return Invalid
    if u.op is Ops.BITCAST:
        return bitcast(operands[0], u.src[0].dtype, u.dtype)
    return exec_alu(u.op, u.dtype, operands)


_EVAL_LEAF: dict[Ops, Callable[[UOp, dict[UOp, Any], Mapping[Any, int]], Any]] = {
    Ops.CONST: lambda u, v, vv: u.arg,
    Ops.VCONST: lambda u, v, vv: u.arg,
    Ops.DEFINE_VAR: lambda u, v, vv: _var_value(u, vv),
    Ops.PARAM: lambda u, v, vv: _var_value(u, vv),
    Ops.RANGE: lambda u, v, vv: _var_value(u, vv),
    Ops.SPECIAL: lambda u, v, vv: vv[u] if u in vv else vv[u.arg],
    Ops.AFTER: lambda u, v, vv: v[u.src[0]],  # a bound Variable: its value
    Ops.STORE: lambda u, v, vv: None,
    Ops.SINK: lambda u, v, vv: tuple(v[s] for s in u.src),
    Ops.VECTORIZE: lambda u, v, vv: tuple(v[s] for s in u.src),
    Ops.GEP: lambda u, v, vv: (
        v[u.src[0]][u.arg[0]] if len(u.arg) == 1 else tuple(v[u.src[0]][i] for i in u.arg)
    ),
}


# -- ranges, as tinygrad prints them ---------------------------------------------------------------
axis_letters: dict[AxisType, str] = {
    AxisType.GLOBAL: "g",
    AxisType.THREAD: "t",
    AxisType.LOCAL: "l",
    AxisType.LOOP: "L",
    AxisType.UPCAST: "u",
    AxisType.OUTER: "O",
    AxisType.GROUP_REDUCE: "G",
    AxisType.REDUCE: "R",
    AxisType.UNROLL: "r",
}
"""The letter that marks a range's AxisType in printed range names (``3R``: reduce axis 3)."""

axis_colors: dict[AxisType, str] = {
    AxisType.GLOBAL: "blue",
    AxisType.THREAD: "BLUE",
    AxisType.LOCAL: "cyan",
    AxisType.LOOP: "WHITE",
    AxisType.UPCAST: "yellow",
    AxisType.OUTER: "green",
    AxisType.GROUP_REDUCE: "RED",
    AxisType.REDUCE: "red",
    AxisType.UNROLL: "magenta",
}
"""The terminal color of each AxisType (lower case: normal, upper case: bright)."""

axis_to_pos: dict[AxisType, int] = {
    AxisType.OUTER: -2,
    AxisType.LOOP: -1,
    AxisType.GLOBAL: 0,
    AxisType.THREAD: 0,
    AxisType.LOCAL: 1,
    AxisType.GROUP_REDUCE: 2,
    AxisType.UPCAST: 3,
    AxisType.REDUCE: 4,
    AxisType.UNROLL: 5,
}
"""Where an axis of each type goes when a kernel's axes are sorted (outer loops first,
unrolled reduce axes last): ``sorted(rngs, key=lambda r: axis_to_pos[r.arg[1]])``."""

range_start: dict[Ops, int] = {Ops.REDUCE: 1, Ops.END: 1, Ops.STORE: 2}
"""For an op that closes ranges, the index of its first RANGE source (the ones before are
its value operands): ``u.src[range_start[u.op]:]`` are the ranges it closes."""

_ANSI = {"black": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36}
_ANSI["white"] = 37


def _colored(text: str, color: str) -> str:
    code = _ANSI[color.lower()] + (60 if color.isupper() else 0)
    return f"\x1b[{code}m{text}\x1b[0m"


def range_str(u: UOp, color: bool = False) -> str:
    """A RANGE's short name: its axis id (and extra arg items, joined by ``_``) and its
    AxisType letter, e.g. ``2R``; ``color=True`` colors it by ``axis_colors``.

    >>> from fusegrad.uop import UOp
    >>> range_str(UOp.range(8, 2, AxisType.REDUCE))
    '2R'
    """
    if u.op is not Ops.RANGE:
        raise ValueError(f"range_str: expected a RANGE, got {u.op!r}")
    axis_id, axis_type, *extra = u.arg
    text = "_".join(str(x) for x in (axis_id, *extra)) + axis_letters[axis_type]
    return _colored(text, axis_colors[axis_type]) if color else text


def multirange_str(rngs: Iterable[UOp], color: bool = False, pad: int | None = None) -> str:
    """Several ranges as ``[0L,2R]``; ``pad`` left-justifies the (uncolored) text to that
    width.

    >>> from fusegrad.uop import UOp
    >>> multirange_str([UOp.range(4, 0), UOp.range(8, 2, AxisType.REDUCE)], pad=10)
    '[0L,2R]   '
    """
    items = list(rngs)
    text = "[" + ",".join(range_str(r, color) for r in items) + "]"
    if pad is None:
        return text
    plain = len("[" + ",".join(range_str(r) for r in items) + "]")
    return text + " " * max(0, pad - plain)
