"""Canonical forms of associative chains: the operand order, sums as collected terms,
products with one constant, and AND/OR/XOR/MAX chains without repeats.

Every chain is rebuilt left-associated, ``((t0 op t1) op t2) op c``, its operands sorted by
``order_key`` with the constant last, so the ``commutative`` swap rule and the chain
normalizers agree on one order and never undo each other. The order is structural (op,
arg, dtype, sources): it never depends on hash seeds or object addresses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fusegrad.uop.alu import exec_alu
from fusegrad.uop.dtype import DType, Invalid, dtypes, truncate
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.uop import UOp

OrderKey = tuple[Any, ...]


def _arg_key(arg: Any) -> tuple[int, Any, Any]:
    """A comparable, hash-independent key for any UOp arg (every key is a 3-tuple whose
    first item decides between kinds, so keys of different kinds never compare their
    payloads)."""
    if isinstance(arg, bool):
        return (0, int(arg), "")
    if isinstance(arg, int):
        return (1, arg, "")
    if isinstance(arg, str):
        return (3, 0, arg)
    if isinstance(arg, tuple):
        return (4, len(arg), tuple(_arg_key(a) for a in arg))
    if arg is None:
        return (-1, 0, "")
    return (5, 0, repr(arg))  # floats (NaN, -0.0 included), Invalid, enums


def order_key(u: UOp) -> OrderKey:
    """The structural sort key of ``u``, cached on the node (UOps keep a ``__dict__`` for
    cached values)."""
    key = u.__dict__.get("_order_key")
    if key is not None:
        return key  # type: ignore[no-any-return]
    # the common case: the sources are keyed already, or are leaves (a new constant)
    keys = []
    for s in u.src:
        k = s.__dict__.get("_order_key")
        if k is None:
            if s.src:
                break
            k = s.__dict__["_order_key"] = (s.op.value, _arg_key(s.arg), s.dtype.name, ())
        keys.append(k)
    else:
        key = (u.op.value, _arg_key(u.arg), u.dtype.name, tuple(keys))
        u.__dict__["_order_key"] = key
        return key
    # iterative, so deep graphs are fine: every source is keyed before its users
    for n in u.toposort(gate=lambda n: "_order_key" not in n.__dict__):
        if "_order_key" not in n.__dict__:
            srcs = tuple(s.__dict__["_order_key"] for s in n.src)
            n.__dict__["_order_key"] = (n.op.value, _arg_key(n.arg), n.dtype.name, srcs)
    return u.__dict__["_order_key"]  # type: ignore[no-any-return]


def split_term(t: UOp) -> tuple[UOp, int]:
    """A sum's term as ``(base, coefficient)``: ``x*3 -> (x, 3)``, ``x -> (x, 1)``."""
    if t.op is Ops.MUL and t.src[1].op is Ops.CONST and type(t.src[1].arg) is int:
        return t.src[0], t.src[1].arg
    return t, 1


def operand_key(u: UOp, parent: Ops) -> OrderKey:
    """Where ``u`` goes among the operands of a chain of ``parent``: the rest of the chain
    first, constants last, terms of a sum by their base (so ``x*4`` sits where ``x`` would)."""
    if u.op is parent:
        return (0,)
    if u.op is Ops.CONST:
        return (2,)
    if parent is Ops.ADD:
        base, coefficient = split_term(u)
        return (1, order_key(base), coefficient)
    return (1, order_key(u), 0)


def flatten(u: UOp, op: Ops) -> list[UOp]:
    """The operands of the left/right nested chain of ``op`` rooted at ``u``, in order."""
    out: list[UOp] = []
    stack = [u]
    while stack:
        node = stack.pop()
        if node.op is op and node.dtype is u.dtype:
            stack.extend(reversed(node.src))
        else:
            out.append(node)
    return out


def build_chain(op: Ops, dtype: DType, operands: list[UOp], const: UOp | None) -> UOp:
    """``operands`` sorted and joined left-associated with ``op``, ``const`` last."""
    ordered = sorted(operands, key=lambda t: operand_key(t, op))
    if const is not None:
        ordered.append(const)
    out = ordered[0]
    for t in ordered[1:]:
        out = UOp(op, dtype, (out, t))
    return out


def _wrap(dtype: DType, value: int) -> int:
    return int(truncate(dtype)(value))


def collect_terms(u: UOp) -> tuple[dict[UOp, int], int]:
    """An integer sum as ``{base: coefficient}`` (first-seen order) and its constant."""
    coefficients: dict[UOp, int] = {}
    const = 0
    for t in flatten(u, Ops.ADD):
        if t.op is Ops.CONST:
            const += t.arg
            continue
        base, k = split_term(t)
        coefficients[base] = coefficients.get(base, 0) + k
    return coefficients, const


def build_sum(dtype: DType, coefficients: dict[UOp, int], const: int) -> UOp:
    """The canonical sum ``sum(base*k) + const`` (coefficients wrap to ``dtype``)."""
    terms = []
    for base, coefficient in coefficients.items():
        k = _wrap(dtype, coefficient)
        if k == 0:
            continue
        terms.append(base if k == 1 else UOp(Ops.MUL, dtype, (base, UOp.const(k, dtype))))
    const = _wrap(dtype, const)
    if not terms:
        return UOp.const(const, dtype)
    return build_chain(Ops.ADD, dtype, terms, UOp.const(const, dtype) if const else None)


def _merge_divmod_pairs(coefficients: dict[UOp, int]) -> None:
    """``(x//c)*c*k + (x%c)*k -> x*k`` in place, for both floor and truncating pairs."""
    pairs = {Ops.FLOORMOD: Ops.FLOORDIV, Ops.CMOD: Ops.CDIV}
    for base in list(coefficients):
        if base.op not in pairs or base not in coefficients:
            continue
        x, c = base.src
        if c.op is not Ops.CONST or c.arg == 0:
            continue
        quotient = UOp(pairs[base.op], base.dtype, base.src)
        k = coefficients[base]
        if quotient not in coefficients or _wrap(x.dtype, coefficients[quotient] - k * c.arg):
            continue
        del coefficients[base], coefficients[quotient]
        coefficients[x] = coefficients.get(x, 0) + k


def _normal_sum(u: UOp) -> UOp:
    coefficients, const = collect_terms(u)
    _merge_divmod_pairs(coefficients)
    return build_sum(u.dtype, coefficients, const)


def _mark_canonical(u: UOp) -> None:
    """Remember that the sum ``u`` and every sum along its left spine are canonical.

    A prefix of a canonical chain is canonical too: its terms are a sorted run of distinct
    bases with the same coefficients, no divmod pair among them merges, and it has no
    constant. So the engine, which visits the prefixes of a new chain before the chain, finds
    each one known instead of collecting its terms again (O(n), not O(n**2), per chain)."""
    node = u
    while node.op is Ops.ADD and node.dtype is u.dtype and "_canonical_sum" not in node.__dict__:
        node.__dict__["_canonical_sum"] = True
        node = node.src[0]


_DIVMOD = frozenset({Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV, Ops.CMOD})


def _extends_canonical(u: UOp) -> bool:
    """True when ``u = P + t`` with ``P`` a known canonical sum (no constant) and ``t`` a term
    that sorts after all of ``P``'s: then ``u`` is canonical, no collecting needed. ``t``'s
    base sorts strictly after the last base (so it is new), isn't a ``//``/``%`` (so no pair
    merges), and ``t`` is the node ``build_sum`` would make for it."""
    p, t = u.src
    if p.op is not Ops.ADD or "_canonical_sum" not in p.__dict__ or p.dtype is not u.dtype:
        return False
    last = p.src[1]
    if last.op is Ops.CONST or t.op is Ops.CONST or t.dtype is not u.dtype:
        return False
    base, k = split_term(t)
    if base.op in _DIVMOD or (base.op is Ops.ADD and base.dtype is u.dtype):
        return False
    if base is not t and (
        k in (0, 1) or UOp(Ops.MUL, u.dtype, (base, UOp.const(k, u.dtype))) is not t
    ):
        return False
    if not order_key(split_term(last)[0]) < order_key(base):
        return False
    return UOp(Ops.ADD, u.dtype, (p, t)) is u


def normalize_sum(u: UOp) -> UOp | None:
    """Term collection and constant gathering: ``x*2 + y + x*3 + 1 + 2 -> x*5 + y + 3``."""
    if "_canonical_sum" in u.__dict__:
        return None
    if _extends_canonical(u):
        u.__dict__["_canonical_sum"] = True  # a sum built term by term in order: O(1) each
        return None
    out = _normal_sum(u)
    if out is u:
        _mark_canonical(u)
        return None
    if out.op is Ops.ADD and _normal_sum(out) is out:
        _mark_canonical(out)
    return out


def scale_canonical_sum(u: UOp, factor: int) -> UOp | None:
    """``u * factor`` for a canonical sum ``u``, as one canonical sum: every coefficient and
    the constant times ``factor`` (what distributing term by term and collecting again
    gives, in one step); None when ``u`` is not a canonical ``weakint`` sum.

    Only for ``weakint`` (index math, where deep chains occur): with no wrap-around, scaling
    by a nonzero factor keeps every coefficient nonzero and makes no new divmod pair merge,
    so the result is exactly the canonical sum distributing would reach."""
    if u.op is not Ops.ADD or u.dtype.scalar() is not dtypes.weakint or factor == 0:
        return None
    if normalize_sum(u) is not None:
        return None
    coefficients, const = collect_terms(u)
    scaled = {base: k * factor for base, k in coefficients.items()}
    _merge_divmod_pairs(scaled)
    out = build_sum(u.dtype, scaled, const * factor)
    if out.op is Ops.ADD and _normal_sum(out) is out:
        _mark_canonical(out)
    return out


def normalize_product(u: UOp) -> UOp | None:
    """``(x*2)*(y*3) -> (x*y)*6``; a zero factor makes the product 0 (ints only)."""
    factors = flatten(u, Ops.MUL)
    const = 1
    rest = []
    for f in factors:
        if f.op is Ops.CONST:
            const *= f.arg
        else:
            rest.append(f)
    const = _wrap(u.dtype, const)
    if const == 0 or not rest:
        return UOp.const(const, u.dtype)
    tail = UOp.const(const, u.dtype) if const != 1 else None
    out = build_chain(Ops.MUL, u.dtype, rest, tail)
    return None if out is u else out


def _fold_consts(op: Ops, dtype: DType, consts: list[UOp]) -> UOp | None:
    if not consts:
        return None
    value = consts[0].arg
    for c in consts[1:]:
        value = exec_alu(op, dtype, [value, c.arg])
    return UOp.const(value, dtype)


_ABSORBING: dict[Ops, Callable[[DType], Any]] = {
    Ops.AND: lambda dt: False if dt.scalar() is dtypes.bool else 0,
    Ops.OR: lambda dt: True if dt.scalar() is dtypes.bool else _all_ones(dt),
}
_NEUTRAL: dict[Ops, Callable[[DType], Any]] = {
    Ops.AND: lambda dt: True if dt.scalar() is dtypes.bool else _all_ones(dt),
    Ops.OR: lambda dt: False if dt.scalar() is dtypes.bool else 0,
    Ops.XOR: lambda dt: False if dt.scalar() is dtypes.bool else 0,
    Ops.MAX: dtypes.min,
}


def _all_ones(dt: DType) -> int:
    return int(dtypes.max(dt)) if dtypes.is_unsigned(dt) else -1


def _dedup_operands(op: Ops, operands: list[UOp]) -> list[UOp]:
    """Repeats removed (AND/OR/MAX are idempotent); for XOR pairs cancel."""
    counts: dict[UOp, int] = {}
    for o in operands:
        counts[o] = counts.get(o, 0) + 1
    if op is Ops.XOR:
        return [o for o, n in counts.items() if n % 2 == 1]
    return list(counts)


def _has_complement(operands: list[UOp]) -> bool:
    """A bool chain holding both ``x`` and ``x != True``."""
    present = set(operands)
    return any(
        o.op is Ops.CMPNE
        and o.src[1].op is Ops.CONST
        and o.src[1].arg is True
        and o.src[0] in present
        for o in operands
    )


def normalize_bitwise_chain(u: UOp) -> UOp | None:
    """An AND/OR/XOR/MAX chain flattened, constants folded, repeats removed, sorted.

    ``x & !x`` is False and ``x | !x`` is True for bools."""
    op, dtype = u.op, u.dtype
    items = flatten(u, op)
    consts = [o for o in items if o.op is Ops.CONST]
    operands = _dedup_operands(op, [o for o in items if o.op is not Ops.CONST])
    const = _fold_consts(op, dtype, consts)
    if const is not None and op in _ABSORBING and const.arg == _ABSORBING[op](dtype):
        return const
    if op in _ABSORBING and dtype.scalar() is dtypes.bool and _has_complement(operands):
        return UOp.const(op is Ops.OR, dtype)
    if const is not None and const.arg == _NEUTRAL[op](dtype):
        const = None
    if not operands:
        return const if const is not None else UOp.const(_NEUTRAL[op](dtype), dtype)
    out = build_chain(op, dtype, operands, const)
    return None if out is u else out


def bounds(u: UOp) -> tuple[Any, Any]:
    """``(u.vmin, u.vmax)``. Leaf sources get theirs first: the bounds descriptor walks the
    whole graph below a node when any source lacks bounds, and a new constant always does."""
    for s in u.src:
        if not s.src:
            s._min_max  # noqa: B018 (computed and cached on the leaf)
    return u._min_max


def may_be_invalid(u: UOp) -> bool:
    """True when ``Invalid`` can reach ``u``'s value (cached on the node)."""
    flag = u.__dict__.get("_may_be_invalid")
    if flag is not None:
        return bool(flag)
    # the common case: the sources are known already, or are leaves (a new constant)
    flag = u.op is Ops.CONST and u.arg is Invalid
    for s in u.src:
        f = s.__dict__.get("_may_be_invalid")
        if f is None:
            if s.src:
                break
            f = s.__dict__["_may_be_invalid"] = s.op is Ops.CONST and s.arg is Invalid
        flag = flag or f
    else:
        u.__dict__["_may_be_invalid"] = flag
        return flag
    for n in u.toposort(gate=lambda n: "_may_be_invalid" not in n.__dict__):
        if "_may_be_invalid" not in n.__dict__:
            invalid = n.op is Ops.CONST and n.arg is Invalid
            n.__dict__["_may_be_invalid"] = invalid or any(
                s.__dict__["_may_be_invalid"] for s in n.src
            )
    return bool(u.__dict__["_may_be_invalid"])
