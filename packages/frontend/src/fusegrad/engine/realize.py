"""realize(): turn lazy tensor UOps into buffers, remembering what was already computed.

``REALIZED`` maps a lazy UOp that has been computed to the buffer view holding its value
(weakly: an entry lives as long as the lazy UOp does). Before a graph is handed to the
executor, every realized part of it is replaced by its buffer, so nothing is computed twice
and an assign is performed once.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from fusegrad.engine.buffers import known_buffer
from fusegrad.engine.executor import get_executor
from fusegrad.engine.host import HOST, decode_floats, has_numpy_type, storage_dtype
from fusegrad.uop import GroupOp, Ops, UOp, prod, sym_infer


class RealizedTable(weakref.WeakKeyDictionary[UOp, UOp]):
    """``REALIZED``'s type: a weak-key table that counts the keys put in (``generation``), so
    a graph found free of remembered nodes stays known free until a new key comes (entries
    dropped or cleared never make a free graph hold one). Keys go in with ``table[key] =
    view`` only."""

    generation = 0

    def __setitem__(self, key: UOp, value: UOp) -> None:
        self.generation += 1
        super().__setitem__(key, value)


REALIZED = RealizedTable()
# its entries (weak reference -> view): empty exactly when nothing is remembered, checked per
# realize without the mapping's __len__ (a Python method)
_REALIZED_ENTRIES: dict[Any, UOp] = REALIZED.data  # type: ignore[attr-defined]


def symbolic_prefix(u: UOp) -> UOp | None:
    """The BUFFER of ``BUFFER.shrink(((0, size),)).reshape(shape)`` with a symbolic
    ``shape``: a result whose shape holds a bound Variable lives in a buffer sized for the
    Variable's max value, and this view is the bound value's extent of it."""
    if u.op is not Ops.RESHAPE or all(isinstance(s, int) for s in u.arg):
        return None
    shrink = u.src[0]
    if shrink.op is not Ops.SHRINK or len(shrink.arg) != 1 or shrink.arg[0][0] != 0:
        return None
    return shrink.src[0] if shrink.src[0].op is Ops.BUFFER else None


def buffer_of(u: UOp) -> UOp | None:
    """The BUFFER of a contiguous buffer view (``BUFFER``, ``BUFFER.reshape(s)``, or the
    leading part of a buffer viewed with a symbolic shape: ``symbolic_prefix``)."""
    if u.op is Ops.BUFFER:
        return u
    if u.op is Ops.RESHAPE and u.src[0].op is Ops.BUFFER:
        return u.src[0]
    return symbolic_prefix(u)


def is_buffer_view(u: UOp) -> bool:
    """True when ``u`` is a BUFFER seen through movement ops only (at least one: a slice,
    reshape, permute, expand, ... of a buffer). Its value is the buffer's: realizing it
    computes nothing, and a tensor holding it keeps following the buffer (a PyTorch view)."""
    if u.op not in GroupOp.Movement:
        return False
    while u.op in GroupOp.Movement:
        u = u.src[0]
    return u.op is Ops.BUFFER


def _prepare(u: UOp, check: bool) -> tuple[UOp, list[UOp]]:
    """``u`` with its realized parts replaced by their buffers, and the assigns (AFTERs) it
    still performs — one walk that stops at buffers and realized nodes (none when nothing is
    remembered as realized (``check`` False) and the graph holds no assign: the common
    dispatch case)."""
    if not check and not has_assign(u):
        return u, []
    found: dict[UOp, UOp] = {}

    def gate(node: UOp) -> bool:
        if buffer_of(node) is not None:
            return False
        view = REALIZED.get(node) if check and node is not u else None
        if view is not None:
            found[node] = view
            return False
        return True

    order = u.toposort(gate)
    afters = [n for n in order if n.op is Ops.AFTER and n not in found and not n.is_bound_var]
    return (u.substitute(found) if found else u), afters


def strip_assigns(u: UOp) -> UOp:
    """The buffer view under ``u`` once its assigns have happened (AFTERs removed)."""
    if u.op is Ops.AFTER and not u.is_bound_var:
        return strip_assigns(u.src[0])
    if u.op in GroupOp.Movement:
        return u.replace(src=(strip_assigns(u.src[0]),))
    return u


_ASSIGNS = "_engine_assigns"  # a node's remembered has_assign (in its __dict__)


def _assigns_here(u: UOp) -> bool:
    if u.op is Ops.AFTER and not u.is_bound_var:
        return True
    return any(s.__dict__[_ASSIGNS] for s in u.src if s.op is not Ops.BUFFER)


def _pending_assigns(u: UOp) -> bool:
    return u.op is not Ops.BUFFER and _ASSIGNS not in u.__dict__


def has_assign(u: UOp) -> bool:
    """True when the graph of ``u`` performs an assign (an AFTER that isn't a bound
    Variable). Remembered on every node: a graph rebuilt over new buffers looks at its new
    nodes only."""
    if u.op is Ops.BUFFER:
        return False
    memo = u.__dict__
    found: bool | None = memo.get(_ASSIGNS)
    if found is not None:
        return found
    # the common case: only ``u`` is new (its sources are buffers or remembered)
    here = u.op is Ops.AFTER and not u.is_bound_var
    for s in u.src:
        if s.op is not Ops.BUFFER:
            below = s.__dict__.get(_ASSIGNS)
            if below is None:
                break
            here = here or below
    else:
        memo[_ASSIGNS] = here
        return here
    for n in u.toposort(_pending_assigns):
        if _pending_assigns(n):
            n.__dict__[_ASSIGNS] = _assigns_here(n)
    return bool(u.__dict__[_ASSIGNS])


def _collect(
    uops: Sequence[UOp], realized: Any, check: bool, copy_views: bool
) -> tuple[dict[UOp, UOp], dict[UOp, UOp]]:
    """``realize_uops``' work: each UOp to compute -> its graph to run (realized parts
    replaced by their buffers), and each assign performed on the way -> the view under it."""
    pending: dict[UOp, UOp] = {}
    assigns: dict[UOp, UOp] = {}
    for u in uops:
        if buffer_of(u) is not None or (not copy_views and is_buffer_view(u)) or u in pending:
            continue
        remembered = realized.get(u) if check else None
        if remembered is not None:
            if copy_views and is_buffer_view(remembered):
                pending[u] = remembered  # a view remembered as the value: read via a copy
            continue
        pending[u], afters = _prepare(u, check)
        if afters:
            assigns.update((n, strip_assigns(n)) for n in afters)
    return pending, assigns


def performed_assigns(uops: Sequence[UOp]) -> list[UOp]:
    """The assigns (AFTERs that aren't bound Variables) ``uops``' graphs perform, each once:
    one walk over all the graphs together that enters only nodes with an assign below
    (``has_assign``, remembered on the nodes)."""
    stack = [u for u in uops if has_assign(u)]
    seen: set[UOp] = set()
    out: list[UOp] = []
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op is Ops.AFTER and not n.is_bound_var:
            out.append(n)
        stack += [s for s in n.src if s.op is not Ops.BUFFER and s.__dict__[_ASSIGNS]]
    return out


def _fills_new_buffer(n: UOp) -> bool:
    """True when assign ``n`` writes a whole buffer that holds nothing yet (never allocated,
    no host data) with a value that reads no buffer: an initializer (``nn``'s ``fresh``
    parameters and optimizer state). Nothing can read that buffer's old contents, so the
    assign may run before anything else."""
    target, store = n.src
    buf = buffer_of(target)
    if buf is None or buf.op is not Ops.BUFFER or store.op is not Ops.STORE:
        return False
    if known_buffer(buf) is not None or HOST.get(buf) is not None:
        return False
    return not any(x.op is Ops.BUFFER or x.is_bound_var for x in store.src[1].toposort())


def initializers(uops: Sequence[UOp]) -> list[UOp]:
    """The initializers (``_fills_new_buffer``) that ``uops``' graphs perform on the way
    (not those that are ``uops`` themselves). ``realize_uops`` runs them first, in a schedule
    of their own: the rest is then the graph every later step builds (a training loop's
    first step schedules the same work as the second, and the second hits the cache)."""
    found = performed_assigns(uops)
    if not found:
        return []
    targets = set(uops)
    return [n for n in found if n not in targets and _fills_new_buffer(n)]


def _after_initializers(
    uops: Sequence[UOp], inits: list[UOp], copy_views: bool
) -> tuple[list[UOp], dict[UOp, UOp]]:
    """``realize_uops`` with the initializers ``inits`` performed first: the rest is
    realized over their buffers; ``becomes`` also maps the original ``uops``. The values
    ``REALIZED`` remembers stay: a training step's loss is not computed again with the
    update."""
    _, first = _realize(inits, False, forget=False)
    rest = [u.substitute(first) for u in uops]
    views, becomes = realize_uops(rest, copy_views)
    for u, r in zip(uops, rest, strict=True):
        if r is not u and r in becomes:
            becomes[u] = becomes[r]
    return views, {**first, **becomes}


def realize_uops(uops: Sequence[UOp], copy_views: bool = False) -> tuple[list[UOp], dict[UOp, UOp]]:
    """Buffer views holding the values of ``uops`` (one executor call for all of them), and
    the "becomes" map: each computed UOp -> its buffer view, each performed assign (AFTER) ->
    the buffer view under it. Callers replace these in the graphs they keep.

    A view of a buffer (``is_buffer_view``) is its own value: nothing is computed for it,
    and an assign through a view becomes that view, so the tensors holding them keep
    following the buffer. ``copy_views``: such values are wanted in buffers of their own
    (to read them): views and assigns through views are copied into buffers that no tensor
    should take (``becomes`` then maps views to those copies: it is for reading, not for
    rewriting the tensors' graphs)."""
    inits = initializers(uops)
    if inits:
        return _after_initializers(uops, inits, copy_views)
    return _realize(uops, copy_views, forget=True)


def _realize(
    uops: Sequence[UOp], copy_views: bool, forget: bool
) -> tuple[list[UOp], dict[UOp, UOp]]:
    """``realize_uops`` once no initializer is left to run first. ``forget``: clear
    ``REALIZED`` when assigns ran (not for initializers: the buffers they fill held nothing,
    so no remembered value read them)."""
    check = len(REALIZED) > 0
    realized = REALIZED if check else {}  # an empty table: no weak references made
    pending, assigns = _collect(uops, realized, check, copy_views)
    becomes: dict[UOp, UOp] = {}
    known: dict[UOp, UOp] = {}
    if pending:
        if assigns and check:  # remembered values asked for, read before the table is cleared
            known = {u: realized[u] for u in uops if u not in pending and u in realized}
        views = get_executor().realize(list(pending.values()))
        if assigns and forget:
            REALIZED.clear()  # buffers changed: remembered values may be stale
        computed = dict(zip(pending, views, strict=True))
        becomes.update(assigns)
        becomes.update(computed)
        if assigns:
            becomes.update(_views_after_assigns(computed))
        if copy_views:
            known.update(computed)
    out = [_value(u, becomes, known, copy_views) for u in uops]
    return [o for o in out if o is not None], becomes


def _views_after_assigns(computed: dict[UOp, UOp]) -> dict[UOp, UOp]:
    """The computed views of buffers through assigns (``a[1:3].assign(x)``, ``a.assign(x).T``)
    -> the views without the assigns, now performed: the tensors holding them keep following
    the buffer instead of taking the copies."""
    out: dict[UOp, UOp] = {}
    for u in computed:
        if u.op is Ops.AFTER or u.op in GroupOp.Movement:
            view = strip_assigns(u)
            if view is not u and is_buffer_view(view):
                out[u] = view
    return out


def _value(u: UOp, becomes: dict[UOp, UOp], known: dict[UOp, UOp], copy_views: bool) -> UOp | None:
    """``realize_uops``' result for ``u``: ``known`` (the copies when ``copy_views``) before
    ``becomes``, then what ``REALIZED`` remembers."""
    if buffer_of(u) is not None or (not copy_views and is_buffer_view(u)):
        return u
    found = known.get(u) if copy_views else None
    if found is None:
        found = becomes.get(u)
    if found is None:
        found = known.get(u)
    return found if found is not None else REALIZED.get(u)


_FREE = "_engine_unremembered"  # a node's REALIZED.generation when its graph held no key


def _not_free(n: UOp) -> bool:
    return n.op is not Ops.BUFFER and n.__dict__.get(_FREE) != REALIZED.generation


def _unremembered(u: UOp) -> bool:
    """True when no node of ``u``'s graph (above its buffers) is remembered in ``REALIZED``.
    Remembered on the nodes for the current generation: a graph built again over earlier
    nodes (a dispatch-bound loop while a training step's tensors are alive) looks at its new
    nodes only."""
    memo, generation, entries = u.__dict__, REALIZED.generation, _REALIZED_ENTRIES
    if memo.get(_FREE) == generation:
        return True
    if weakref.ref(u) in entries:
        return False
    for s in u.src:  # the common case: only ``u`` is new
        if s.op is not Ops.BUFFER and s.__dict__.get(_FREE) != generation:
            break
    else:
        memo[_FREE] = generation
        return True
    order = [n for n in u.toposort(_not_free) if _not_free(n)]
    if any(weakref.ref(n) in entries for n in order):
        return False
    for n in order:
        n.__dict__[_FREE] = generation
    return True


def realize_one(u: UOp) -> UOp | None:
    """The buffer view of lazy ``u`` computed on the dispatch fast path (a schedule-cache
    hit of one target: see ``KernelExecutor.realize_one``), or None with nothing run where
    ``realize_uops`` is needed: no part of ``u`` is remembered as realized, ``u`` is no
    buffer view and performs no assign."""
    if u.op is Ops.BUFFER or has_assign(u):
        return None
    if _REALIZED_ENTRIES and not _unremembered(u):
        return None  # a part of it is remembered: ``realize_uops`` substitutes it
    if is_buffer_view(u):
        return None  # its own value: nothing to compute
    fast = getattr(get_executor(), "realize_one", None)
    return None if fast is None else fast(u)


def read_buffer(buf: UOp) -> np.ndarray[Any, Any]:
    """The flat storage-dtype contents of a realized BUFFER."""
    host = HOST.get(buf)
    if host is not None:
        return host
    return get_executor().read(buf)


def bound_value(size: int | UOp) -> int:
    """The value of a size (an int, or an expression over bound Variables) at the bound
    values."""
    if isinstance(size, int):
        return size
    bound = [n for n in size.toposort() if n.is_bound_var]
    pairs = [b.unbind() for b in bound]
    expr = size.substitute({b: var for b, (var, _) in zip(bound, pairs, strict=True)})
    return int(sym_infer(expr, dict(pairs)))


def to_numpy(u: UOp) -> np.ndarray[Any, Any]:
    """The value of tensor UOp ``u`` as a NumPy array of its shape (a copy; a view of a
    buffer is read through a copy no tensor keeps)."""
    (view,), _ = realize_uops([u], copy_views=True)
    buf = buffer_of(view)
    assert buf is not None, "executor returned a non-buffer view"
    shape = tuple(bound_value(s) for s in u.shape)
    flat = read_buffer(buf)[: int(prod(shape))]
    arr = flat.view(storage_dtype(u.dtype)).reshape(shape)
    if not has_numpy_type(u.dtype):
        return decode_floats(arr, u.dtype)
    return arr.copy()


def compile_linear(linear: UOp) -> Any:
    """The ``LaunchPlan`` of a LINEAR of CALLs (``Tensor.linear_with_vars``,
    ``schedule_linear``): every kernel compiled and loaded, nothing run (a graph call's
    kernels as its batch's steps)."""
    from fusegrad.engine.linear import flatten_graph_calls
    from fusegrad.engine.plan import calls_plan

    if linear.op is not Ops.LINEAR:
        raise TypeError(f"compile_linear: expected a LINEAR of CALLs, got {linear.op!r}")
    plan, _ = calls_plan(flatten_graph_calls(linear.src))
    return plan


def run_linear(linear: UOp, var_vals: dict[str, int] | None = None) -> None:
    """Run a LINEAR of CALLs (``Tensor.linear_with_vars``, ``schedule_linear``) on its
    buffers, allocating those it creates, with the bound Variables' values (``var_vals``
    overrides them by name). Returns once submitted; reading a buffer waits for it."""
    from fusegrad.engine.linear import has_graph_calls, run_graph_linear
    from fusegrad.engine.plan import bound_values, calls_plan, run_plan

    if linear.op is not Ops.LINEAR:
        raise TypeError(f"run_linear: expected a LINEAR of CALLs, got {linear.op!r}")
    if not linear.src:
        return
    if has_graph_calls(linear):  # each graph call one device-graph submission
        run_graph_linear(linear, var_vals)
        return
    plan, uops = calls_plan(linear.src)
    run_plan(plan, uops, {**bound_values(linear.src), **(var_vals or {})})
