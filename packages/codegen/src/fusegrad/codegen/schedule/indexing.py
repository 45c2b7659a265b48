"""Index arithmetic for rangeify: movement ops as maps from output indices to input indices.

Every function takes the indices of a view (one ``weakint`` UOp per dim) and returns the
indices into its source, so a movement op never copies: it only rewrites index math. The
expressions are built without the trivial terms (``+0``, ``*1``) but not simplified: a long
chain of views would re-simplify the growing expression at every step (cubic time). The
kernel's indices are simplified once, all together, when the kernel is built
(``simplify_indices``).

>>> from fusegrad.uop import UOp
>>> r0, r1 = UOp.range(2, 0), UOp.range(3, 1)
>>> [i.render(simplify=False) for i in reshape_index((r0, r1), (2, 3), (6,))]
['r0*3+r1']
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from fusegrad.uop import AxisType, Ops, UOp, dedup, dtypes, sint, sint_to_uop

Index = tuple[UOp, ...]
TRUE = UOp.const(True, dtypes.bool)
ZERO = UOp.const(0, dtypes.weakint)


def is_one(x: sint) -> bool:
    """True for the int size 1."""
    return isinstance(x, int) and x == 1


def is_zero(x: sint | UOp) -> bool:
    """True for the int 0 or a weakint constant 0."""
    if isinstance(x, UOp):
        return x is ZERO
    return isinstance(x, int) and x == 0


def same_size(a: sint, b: sint) -> bool:
    """True when two sizes are known equal (ints by value, symbolic ones by identity)."""
    return a is b or (isinstance(a, int) and isinstance(b, int) and a == b)


def logical_and(a: UOp, b: UOp) -> UOp:
    """``a & b`` for validity conditions, dropping constant-True operands."""
    if a is TRUE:
        return b
    if b is TRUE:
        return a
    return a & b


def add(x: UOp, y: sint) -> UOp:
    """``x + y`` without the ``+ 0``."""
    return x if is_zero(y) else x + y


def mul(x: UOp, y: sint) -> UOp:
    """``x * y`` without the ``* 1`` (and 0 when ``x`` is 0)."""
    if is_zero(x):
        return x
    return x if is_one(y) else x * y


def strides_of(shape: Sequence[sint]) -> list[sint]:
    """Row-major strides of a contiguous ``shape``."""
    out: list[sint] = []
    acc: sint = 1
    for s in reversed(shape):
        out.append(acc)
        acc = acc * s
    return out[::-1]


def linearize(idx: Sequence[UOp], shape: Sequence[sint]) -> UOp:
    """The flat offset of ``idx`` in a contiguous buffer of ``shape``."""
    flat = ZERO
    for i, stride in zip(idx, strides_of(shape), strict=True):
        term = mul(i, stride)
        if is_zero(term):
            continue
        flat = term if is_zero(flat) else flat + term
    return flat


def delinearize(flat: UOp, shape: Sequence[sint]) -> list[UOp]:
    """The multi-index of offset ``flat`` (known to be in range) in a contiguous ``shape``."""
    out: list[UOp] = []
    for d, stride in enumerate(strides_of(shape)):
        if is_one(shape[d]):
            out.append(ZERO)
            continue
        v = flat if is_one(stride) else flat // sint_to_uop(stride)
        out.append(v if d == 0 else v % sint_to_uop(shape[d]))
    return out


def _reshape_groups(new: Sequence[sint], old: Sequence[sint]) -> list[tuple[list[int], list[int]]]:
    """Pair runs of new dims with runs of old dims of equal product (size-1 dims alone).

    Falls back to one group of every dim when a run would need symbolic products."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    everything = [(list(range(len(new))), list(range(len(old))))]
    while i < len(new) or j < len(old):
        if i < len(new) and is_one(new[i]):
            groups.append(([i], []))
            i += 1
        elif j < len(old) and is_one(old[j]):
            groups.append(([], [j]))
            j += 1
        elif i >= len(new) or j >= len(old):
            return everything
        else:
            run = _grow_run(new, old, i, j)
            if run is None:
                return everything
            groups.append(run)
            i, j = run[0][-1] + 1, run[1][-1] + 1
    return groups


def _grow_run(
    new: Sequence[sint], old: Sequence[sint], i: int, j: int
) -> tuple[list[int], list[int]] | None:
    gi, gj = [i], [j]
    pn, po = new[i], old[j]
    while not same_size(pn, po):
        if not (isinstance(pn, int) and isinstance(po, int)):
            return None
        if pn < po and gi[-1] + 1 < len(new):
            gi.append(gi[-1] + 1)
            pn *= _int(new[gi[-1]])
        elif po < pn and gj[-1] + 1 < len(old):
            gj.append(gj[-1] + 1)
            po *= _int(old[gj[-1]])
        else:
            return None
    return gi, gj


def _int(x: sint) -> int:
    return x if isinstance(x, int) else -1  # a symbolic size never closes an int run


def reshape_index(idx: Index, new: Sequence[sint], old: Sequence[sint]) -> Index:
    """Indices into ``old`` of the element at ``idx`` of its reshape to ``new``."""
    out: list[UOp] = [ZERO] * len(old)
    for gi, gj in _reshape_groups(new, old):
        if len(gi) == 1 and len(gj) == 1:
            out[gj[0]] = idx[gi[0]]
            continue
        if not gj:
            continue
        flat = linearize([idx[k] for k in gi], [new[k] for k in gi])
        for k, v in zip(gj, delinearize(flat, [old[k] for k in gj]), strict=True):
            out[k] = v
    return tuple(out)


def permute_index(idx: Index, order: Sequence[int]) -> Index:
    """Indices into the source of a PERMUTE (new axis ``i`` is old axis ``order[i]``)."""
    out: list[UOp] = [ZERO] * len(order)
    for new_axis, old_axis in enumerate(order):
        out[old_axis] = idx[new_axis]
    return tuple(out)


def expand_index(idx: Index, old: Sequence[sint]) -> Index:
    """Indices into the source of an EXPAND: broadcast (size-1) dims read element 0."""
    return tuple(ZERO if is_one(o) else i for i, o in zip(idx, old, strict=True))


def shrink_index(idx: Index, bounds: Sequence[tuple[sint, sint]]) -> Index:
    """Indices into the source of a SHRINK: offset by each window's start."""
    return tuple(add(i, start) for i, (start, _) in zip(idx, bounds, strict=True))


def flip_index(idx: Index, flags: Sequence[bool], shape: Sequence[sint]) -> Index:
    """Indices into the source of a FLIP: ``size-1-i`` on flipped dims."""
    out = []
    for i, flip, size in zip(idx, flags, shape, strict=True):
        out.append(add(-i, size - 1) if flip else i)
    return tuple(out)


def pad_index(
    idx: Index, padding: Sequence[tuple[sint, sint]], old: Sequence[sint]
) -> tuple[Index, UOp]:
    """Indices into the source of a PAD and the condition under which they are in bounds."""
    out: list[UOp] = []
    cond = TRUE
    for i, (before, after), size in zip(idx, padding, old, strict=True):
        if is_zero(before) and is_zero(after):
            out.append(i)
            continue
        if not is_zero(before):
            cond = logical_and(cond, (i < sint_to_uop(before)).logical_not())
        if not is_zero(after):
            cond = logical_and(cond, i < sint_to_uop(before + size))
        out.append(add(i, -before))
    return tuple(out), cond


def range_size(size: sint) -> sint:
    """A RANGE's size in the form ``simplify_indices`` leaves it in: a symbolic size is
    simplified up front, so simplifying an index that holds the RANGE can't rebuild the
    RANGE with a reordered size (``2+n`` -> ``n+2``) that its END no longer closes."""
    return size.simplify() if isinstance(size, UOp) else size


def simplify_indices(ast: UOp) -> UOp:
    """``ast`` with every INDEX's index expression simplified (one ``sym`` rewrite over all
    of them at once, so shared subexpressions are simplified once), and every arange's bit
    sum folded to its index (``fold_bit_sums``); a sum of products then has its contiguous
    ranges merged (``merge_gemm_ranges``)."""
    topo = ast.toposort()
    if any(u.op is Ops.WHERE for u in topo):
        folded = fold_bit_sums(ast, topo)
        if folded is not ast:
            ast, topo = folded, folded.toposort()
    indexes = [u for u in topo if u.op is Ops.INDEX and len(u.src) > 1]
    exprs = dedup(u.src[1] for u in indexes)
    if not exprs:
        return ast
    simplified = dict(zip(exprs, UOp.sink(*exprs).simplify().src, strict=True))
    mapping = {u: u.replace(src=(u.src[0], simplified[u.src[1]], *u.src[2:])) for u in indexes}
    return merge_gemm_ranges(ast.substitute({k: v for k, v in mapping.items() if v is not k}))


# -- the arange's bit sum ---------------------------------------------------------------------
#
# ``Tensor.arange`` is built from constants and movement ops (``fusegrad.uop.mixin.create``):
# element ``i`` is the sum over bits j of ``2**j`` where bit j of ``i`` is set, each term a PAD
# of a constant whose validity is the bit. Indexed, a term is
# ``where(!((i // 2**j) % 2 < 1), 2**j, 0)`` (the top bit without the ``% 2``), so an argmax
# over 4096 columns computed 12 divisions, compares and selects per element. The sum of the
# bits 0..k-1 of an ``i`` known to lie in [0, 2**k) is ``i`` itself: one cast.


def _bit(cond: UOp) -> tuple[UOp, int, bool] | None:
    """(x, j, exact) when ``cond`` is ``!(b < 1)`` with ``b`` bit j of x: ``(x // 2**j) % 2``
    (exact) or ``x // 2**j`` (the bit only while ``x < 2**(j+1)``)."""
    if cond.op is not Ops.CMPNE or cond.src[1].op is not Ops.CONST or cond.src[1].arg is not True:
        return None
    lt = cond.src[0]
    if lt.op is not Ops.CMPLT or lt.src[1].op is not Ops.CONST or lt.src[1].arg != 1:
        return None
    b, exact = lt.src[0], False
    if b.op is Ops.FLOORMOD and b.src[1].op is Ops.CONST and b.src[1].arg == 2:
        b, exact = b.src[0], True
    if b.dtype is not dtypes.weakint:
        return None
    if b.op is Ops.FLOORDIV and b.src[1].op is Ops.CONST and isinstance(b.src[1].arg, int):
        step = b.src[1].arg
        if step <= 0 or step & (step - 1):
            return None
        return b.src[0], step.bit_length() - 1, exact
    return b, 0, exact


def _bit_term(t: UOp) -> tuple[UOp, int, bool] | None:
    """(x, j, exact) of a term ``where(bit j of x, 2**j, 0)``."""
    if t.op is not Ops.WHERE or t.src[1].op is not Ops.CONST or t.src[2].op is not Ops.CONST:
        return None
    if t.src[2].arg != 0 or (found := _bit(t.src[0])) is None or t.src[1].arg != 1 << found[1]:
        return None
    return found


def _terms(x: UOp) -> list[UOp]:
    return _terms(x.src[0]) + _terms(x.src[1]) if x.op is Ops.ADD else [x]


def fold_bit_sum(total: UOp) -> UOp | None:
    """An integer sum holding ``where(bit j of x, 2**j, 0)`` for every j < k, with x known in
    [0, 2**k): those terms replaced by ``x`` (cast to the sum's dtype); None when there are
    none such."""
    if not dtypes.is_int(total.dtype) or total.dtype is dtypes.weakint or total.dtype.count != 1:
        return None
    terms = _terms(total)
    bits: dict[UOp, dict[int, tuple[int, bool]]] = {}
    for n, t in enumerate(terms):
        if (found := _bit_term(t)) is not None:
            bits.setdefault(found[0], {}).setdefault(found[1], (n, found[2]))
    used: set[int] = set()
    folded: list[UOp] = []
    for x, by_bit in bits.items():
        k = 0
        while k in by_bit:
            k += 1
        if k < 2 or x.vmin < 0 or x.vmax >= 1 << k:
            continue
        # a bit read without its "% 2" is the bit only below the next power of two
        if any(not exact and x.vmax >= 1 << (j + 1) for j, (_, exact) in by_bit.items() if j < k):
            continue
        used.update(by_bit[j][0] for j in range(k))
        folded.append(x.cast(total.dtype))
    if not folded:
        return None
    out = [t for n, t in enumerate(terms) if n not in used] + folded
    acc = out[0]
    for t in out[1:]:
        acc = acc + t
    return acc


def fold_bit_sums(ast: UOp, nodes: list[UOp] | None = None) -> UOp:
    """``ast`` with every arange bit sum (``fold_bit_sum``) replaced by its index."""
    topo = ast.toposort() if nodes is None else nodes
    parents_add: set[UOp] = set()
    for u in topo:
        if u.op is Ops.ADD:
            parents_add.update(s for s in u.src if s.op is Ops.ADD)
    mapping: dict[UOp, UOp] = {}
    for u in topo:
        # the top of each ADD chain holds all its terms; the inner ADDs fold with it
        if u.op is Ops.ADD and u not in parents_add and (new := fold_bit_sum(u)) is not None:
            mapping[u] = new
    return ast.substitute(mapping) if mapping else ast


# -- merging a GEMM's ranges ------------------------------------------------------------------
#
# A convolution's kernel is a matmul over several axes: out[n, co, y, x] = sum over (ci, ky,
# kx) of cols[n, ci, k, y, x] * w[co, ci, k]. Its output pixels (y, x) are one contiguous
# axis of 3136 in every access, as are its taps (ci, k) along the reduction, but the
# optimizer's matmul rules block one axis per role: 56 columns (vectors of 8 with 7 left over
# for 16) and 9 taps. Merged, the kernel is the plain GEMM out[co, p] = sum_K w[co, K] *
# cols[K, p] the matmul heuristics block 4 x 16 or 6 x 16 with K = 576 long.


def _is_gemm(ast: UOp, topo: list[UOp]) -> bool:
    """The kernel sums products (a REDUCE ADD over a MUL, through casts)."""
    for u in topo:
        if u.op is Ops.REDUCE and u.arg is Ops.ADD:
            v = u.src[0]
            while v.op is Ops.CAST:
                v = v.src[0]
            if v.op is Ops.MUL:
                return True
    return False


def _holders(topo: list[UOp], rng: UOp) -> set[UOp]:
    """The END/REDUCE nodes that loop over ``rng``."""
    return {u for u in topo if u.op in (Ops.END, Ops.REDUCE) and rng in u.src[1:]}


def _uses_outside_indices(topo: list[UOp], rngs: set[UOp]) -> bool:
    """Whether a range of ``rngs`` is used other than in a memory index or a loop list."""
    inside: set[UOp] = set()
    for u in topo:
        if u.op is Ops.INDEX:
            for s in u.src[1:]:
                inside.update(s.toposort())
    for u in topo:
        if u in inside or u.op in (Ops.END, Ops.REDUCE, Ops.RANGE):
            continue
        if any(s in rngs for s in u.src):
            return True
    return False


def _merge_pair(ast: UOp, topo: list[UOp], outer: UOp, inner: UOp) -> UOp | None:
    """``ast`` with ranges ``outer`` and ``inner`` (same kind, looped together) as one range
    of their product, when every memory index then reads it without a division or modulo
    (each index steps ``outer`` by ``inner``'s size times ``inner``'s step); else None."""
    a, b = const_int(outer), const_int(inner)
    if a is None or b is None:
        return None
    merged = outer.replace(src=(UOp.const(a * b, dtypes.weakint), *outer.src[1:]))
    quotient, remainder = merged // b, merged % b
    indexes = [u for u in topo if u.op is Ops.INDEX and len(u.src) > 1]
    exprs = dedup(s for u in indexes for s in u.src[1:] if {outer, inner} & set(s.toposort()))
    if not exprs:
        return None
    swapped = UOp.sink(*exprs).substitute({outer: quotient, inner: remainder})
    simplified = swapped.simplify().src
    for e in simplified:
        for u in e.toposort():
            if u.op in (Ops.FLOORDIV, Ops.FLOORMOD) and merged in u.src[0].toposort():
                return None  # not one contiguous axis in this access
    new_expr = dict(zip(exprs, simplified, strict=True))
    mapping: dict[UOp, UOp] = {}
    for u in indexes:
        if any(s in new_expr for s in u.src[1:]):
            mapping[u] = u.replace(src=(u.src[0], *(new_expr.get(s, s) for s in u.src[1:])))
    for u in topo:
        if u.op in (Ops.END, Ops.REDUCE) and outer in u.src[1:]:
            loops = tuple(merged if s is outer else s for s in u.src[1:] if s is not inner)
            mapping[u] = u.replace(src=(u.src[0], *loops))
    out = _rebuild(ast, mapping)
    left = {u for u in out.toposort() if u.op is Ops.RANGE}
    return None if outer in left or inner in left else out  # a use this merge did not see


def _rebuild(ast: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """``ast`` with the nodes of ``mapping`` replaced, their new sources rebuilt too (a
    replaced END or REDUCE keeps the replaced nodes under it)."""
    done: dict[UOp, UOp] = {}
    for u in ast.toposort():
        srcs = tuple(done.get(s, s) for s in u.src)
        base = mapping.get(u, u)
        if base is not u:
            srcs = tuple(done.get(s, s) for s in base.src)
            done[u] = base.replace(src=srcs)
        elif srcs != u.src:
            done[u] = u.replace(src=srcs)
    return done.get(ast, ast)


def const_int(rng: UOp) -> int | None:
    """A RANGE's size when it is a plain int."""
    size = rng.src[0]
    return size.arg if size.op is Ops.CONST and isinstance(size.arg, int) else None


def merge_gemm_ranges(ast: UOp) -> UOp:
    """A sum-of-products kernel with each pair of neighbouring ranges of one kind (by axis
    id) merged while they walk memory as one axis (see ``_merge_pair``): a convolution's
    pixels and taps become a GEMM's N and K. Other kernels are returned as they are."""
    topo = ast.toposort()
    if not _is_gemm(ast, topo):
        return ast
    changed = True
    while changed:
        changed = False
        rngs = sorted({u for u in topo if u.op is Ops.RANGE}, key=lambda r: r.arg[0])
        fixed = set()
        if _uses_outside_indices(topo, set(rngs)):
            fixed = {r for r in rngs if _uses_outside_indices(topo, {r})}
        for outer, inner in itertools.pairwise(rngs):
            if outer in fixed or inner in fixed or outer.arg[1] is not inner.arg[1]:
                continue
            if outer.arg[1] not in _MERGEABLE:
                continue
            if _holders(topo, outer) != _holders(topo, inner):
                continue
            merged = _merge_pair(ast, topo, outer, inner)
            if merged is not None:
                ast, topo, changed = merged, merged.toposort(), True
                break
    return ast


_MERGEABLE = (AxisType.LOOP, AxisType.REDUCE)
