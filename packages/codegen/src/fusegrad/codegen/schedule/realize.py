"""Realize decisions: which tensor nodes get a buffer (and a kernel) of their own.

Everything fuses unless a rule here says otherwise. One pass over the graph, users before
sources, decides:

* outputs (the sink's sources) — unless the output is already a view of a buffer;
* ``CONTIGUOUS``, ``COPY``, custom kernels and assigns (``AFTER(target, STORE(target,
  value))``); ``pm_prepare`` has already wrapped a COPY's or CUSTOM_KERNEL's source that is
  not a whole buffer in a CONTIGUOUS;
* the source of a BITCAST that changes the element size, unless it already is a whole
  buffer: the bitcast reads its bytes through a ``BUFFER_VIEW`` of another dtype;
* computed intermediates that would otherwise be evaluated more than once per element —
  broadcast into a loop (softmax's max, layernorm's mean and output before a matmul) or read
  at several indices (a reduction read by two kernels): the cost model in ``recompute.py``.

The write-after-read hazards of assign and the per-target buffer cap are decided later,
while kernels are built (``kernelize.py``), because they depend on the lowered indices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from fusegrad.codegen.schedule.fold import fold_const_reduce
from fusegrad.codegen.schedule.rangeify import buffer_window, resizes
from fusegrad.codegen.schedule.recompute import decide, usage
from fusegrad.uop import GroupOp, Ops, PatternMatcher, UOp, UPat


class Kind(Enum):
    """How a realized node gets its value."""

    COMPUTE = "compute"  # a kernel writes a new buffer
    ASSIGN = "assign"  # a kernel writes into an existing buffer (view)
    COPY = "copy"  # a copy between devices into a new buffer
    CUSTOM = "custom"  # a user kernel (CUSTOM_KERNEL) writes its sources in place


def is_assign(u: UOp) -> bool:
    """True for ``AFTER(target, STORE(target, value))``."""
    return u.op is Ops.AFTER and len(u.src) == 2 and u.src[1].op is Ops.STORE


def is_custom(u: UOp) -> bool:
    """True for ``AFTER(t, CUSTOM_KERNEL(...))``."""
    return u.op is Ops.AFTER and len(u.src) == 2 and u.src[1].op is Ops.CUSTOM_KERNEL


def view_base(u: UOp) -> UOp | None:
    """The BUFFER or realized AFTER under a chain of movement ops (no PAD), else None."""
    while u.op in GroupOp.Movement and u.op is not Ops.PAD:
        u = u.src[0]
    if u.op is Ops.BUFFER or is_assign(u) or is_custom(u):
        return u
    return None


def contiguous_buffer(u: UOp) -> UOp | None:
    """The BUFFER ``u`` covers whole and in order (``BUFFER`` or its RESHAPE), else None."""
    if u.op is Ops.RESHAPE:
        u = u.src[0]
    return u if u.op is Ops.BUFFER else None


def holds_buffer(u: UOp) -> bool:
    """True when ``u``'s value is a whole buffer in order, or will be once its assign ran."""
    while is_assign(u) or is_custom(u):
        u = u.src[0]
    return contiguous_buffer(u) is not None


def _kind(u: UOp, outputs: set[UOp]) -> Kind | None:
    if is_assign(u):
        return Kind.ASSIGN
    if is_custom(u):
        return Kind.CUSTOM
    if u.op is Ops.COPY:
        return Kind.COPY
    if u.op is Ops.CONTIGUOUS or (u in outputs and view_base(u) is None):
        return Kind.COMPUTE
    return None


def _boundary_key(u: UOp, kind: Kind, outputs: set[UOp]) -> object:
    # outputs of one shape share their loops (``order.merge_outputs``): one access key
    if kind is Kind.COMPUTE and u in outputs:
        return ("output", u.device, u.shape)
    return u


def _in_buffer(cast: UOp, realized: dict[UOp, Kind]) -> bool:
    """True when the source of a size-changing bitcast already is bytes in order: (a reshape
    of) a node computed into a new buffer, or a run of a buffer starting at a multiple of the
    new element size."""
    u = cast.src[0]
    while u.op is Ops.RESHAPE:
        u = u.src[0]
    if holds_buffer(u) or realized.get(u) in (Kind.COMPUTE, Kind.COPY):
        return True
    window = buffer_window(u)
    return window is not None and window[1] * u.dtype.itemsize % cast.dtype.itemsize == 0


def find_realizes(outputs: Sequence[UOp], order: Sequence[UOp]) -> dict[UOp, Kind]:
    """The nodes to realize and how, in topological order (``order``: the graph's toposort)."""
    out_set = set(outputs)
    realized: dict[UOp, Kind] = {}
    for u in order:
        if (kind := _kind(u, out_set)) is not None:
            realized[u] = kind
        if resizes(u) and not _in_buffer(u, realized):
            realized.setdefault(u.src[0], Kind.COMPUTE)  # its bytes are reinterpreted
    keys = {u: _boundary_key(u, k, out_set) for u, k in realized.items()}
    walk = usage(order, keys)
    kept = decide(order, realized, walk)
    if walk.uniform:  # identity depths under the dropped candidates (recompute.py)
        kept |= decide(order, realized, usage(order, keys, kept))
    for u in order:
        if u in kept:
            realized[u] = Kind.COMPUTE
    return {u: realized[u] for u in order if u in realized}


# -- prepare: the graph the realize pass sees ------------------------------------------------------


def map_arg(arg: Any, fn: Callable[[UOp], UOp]) -> Any:
    """``arg`` with ``fn`` applied to every UOp in it (nested tuples); ``arg`` itself (the
    same object) when it holds no UOp."""
    if isinstance(arg, UOp):
        return fn(arg)
    if type(arg) is tuple and not all(type(a) is int for a in arg):
        out = tuple(map_arg(a, fn) for a in arg)
        return arg if all(a is b for a, b in zip(out, arg, strict=True)) else out
    return arg


@dataclass
class PrepareContext:
    """The values of the bound Variables found while unbinding them."""

    var_vals: dict[UOp, int] = field(default_factory=dict)

    def unbind(self, bound: UOp) -> UOp:
        """The Variable of ``v.bind(n)``, remembering ``n``."""
        var, val = bound.unbind()
        if self.var_vals.setdefault(var, val) != val:
            raise ValueError(
                f"schedule: Variable {var.arg[0]} bound to {self.var_vals[var]} and {val}"
            )
        return var

    def unbind_expr(self, u: UOp) -> UOp:
        """A size expression with its bound Variables unbound."""
        bound = [n for n in u.toposort() if n.is_bound_var]
        return u.substitute({b: self.unbind(b) for b in bound}) if bound else u


def _unbind_arg(ctx: PrepareContext, x: UOp) -> UOp | None:
    arg = map_arg(x.arg, ctx.unbind_expr)
    return None if arg is x.arg else x.replace(arg=arg)


def _wrap(u: UOp) -> UOp:
    if u.op is Ops.CONTIGUOUS or holds_buffer(u):
        return u
    return UOp(Ops.CONTIGUOUS, u.dtype, (u,))


def _custom_srcs(k: UOp) -> UOp | None:
    src = tuple(_wrap(s) for s in k.src)
    return None if src == k.src else k.replace(src=src)


def _custom_after(t: UOp, k: UOp) -> UOp | None:
    if t in k.src or (wrapped := _wrap(t)) not in k.src:
        return None
    return UOp(Ops.AFTER, wrapped.dtype, (wrapped, k))


pm_prepare = PatternMatcher(
    [
        (
            UPat(Ops.AFTER, name="v"),
            lambda ctx, v: ctx.unbind(v) if v.is_bound_var else None,
        ),  # v.bind(n) -> v (n kept in ctx)
        (UPat(GroupOp.Movement, name="x"), _unbind_arg),  # bound Variables in shapes -> Variables
        (UPat((Ops.DETACH, Ops.CONTIGUOUS_BACKWARD), name="x"), lambda x: x.src[0]),  # no-ops
        (
            UPat(Ops.CONTIGUOUS, src=(UPat.var("x"),)),
            lambda x: x if holds_buffer(x) else None,
        ),  # contiguous(whole buffer) -> the buffer
        (
            UPat(Ops.COPY, src=(UPat.var("x"), UPat(Ops.DEVICE)), name="c"),
            lambda c, x: None if _wrap(x) is x else c.replace(src=(_wrap(x), c.src[1])),
        ),  # copy(view) -> copy(contiguous(view))
        (UPat(Ops.REDUCE_AXIS, name="r"), fold_const_reduce),  # sum(expand(c)) -> c * n
        (UPat(Ops.CUSTOM_KERNEL, name="k"), _custom_srcs),  # custom kernels get whole buffers
        (
            UPat(Ops.AFTER, src=(UPat.var("t"), UPat(Ops.CUSTOM_KERNEL, name="k"))),
            _custom_after,
        ),  # AFTER(t, kernel) follows the source wrapped above
    ]
)
