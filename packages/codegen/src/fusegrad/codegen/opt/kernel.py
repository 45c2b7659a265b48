"""Kernel opts as data, and ``apply_opts``: rewriting a kernel AST's loop structure.

An ``Opt(op, axis, amount)`` names one change to the loops of a kernel AST (the form in
``fusegrad.codegen.spec``). Most opts split a RANGE ``r`` over ``[0, n)``::

    r  ->  outer * amount + inner        inner: RANGE(amount) of the opt's AxisType,
                                         outer: RANGE(n / amount), r's axis id and type

(GROUPTOP and THREAD take the *top* part instead: ``part * (n / amount) + rest``, so each
thread/core gets a contiguous block). The lowering pipeline then turns the new axis types
into vector lanes (UPCAST, UNROLL), workgroup ids (LOCAL, GROUP_REDUCE) or core ids (THREAD).

**Axis numbering.** ``Opt.axis`` is a position in ``kernel_axes(ast)``: every RANGE of the
kernel, sorted by axis id, *at the time the opt is applied*. A split keeps the original
range's id for the part that stays and gives the new part the next unused id (one more than
the largest), so the new axis is appended at the end of the list and the positions of all
earlier axes stay valid: ``[Opt(UPCAST, 0, 4), Opt(UPCAST, 1, 8)]`` means the same axes 0 and
1 as each would alone. The lane order of vectors follows axis ids, so the axis upcast *last*
becomes the fastest-varying (innermost) lane.

Every opt checks its preconditions and raises ``KernelOptError`` naming the opt and what is
wrong. ``apply_opts`` is a pure function of (AST, opts, renderer capabilities).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from fusegrad.codegen.renderer import Renderer
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import AxisType, DType, Ops, UOp, dtypes, prod


class OptOps(enum.Enum):
    """The kinds of kernel opts (see the module docstring and ``Opt``)."""

    UPCAST = enum.auto()
    UNROLL = enum.auto()
    LOCAL = enum.auto()
    GROUP = enum.auto()
    GROUPTOP = enum.auto()
    THREAD = enum.auto()
    PADTO = enum.auto()
    SWAP = enum.auto()
    NOLOCALS = enum.auto()
    TC = enum.auto()
    TILE = enum.auto()
    PARTIALS = enum.auto()

    def __repr__(self) -> str:
        return f"OptOps.{self.name}"


@dataclass(frozen=True, slots=True)
class Opt:
    """One kernel opt.

    * ``UPCAST(axis, n)``: split an output axis, the inner ``n`` become vector lanes
      (``n = 0``: the whole axis);
    * ``UNROLL(axis, n)``: the same for a reduce axis (lanes combined by the reduce op);
    * ``LOCAL(axis, n)``: ``n`` of an output axis become workgroup threads (GPU-like);
    * ``GROUP(axis, n)`` / ``GROUPTOP(axis, n)``: split a reduction across ``n`` workgroup
      threads, partial results combined in shared memory (interleaved / contiguous chunks);
    * ``THREAD(axis, n)``: split an output axis into ``n`` contiguous blocks, one per CPU core;
    * ``PADTO(axis, n)``: round the axis up to a multiple of ``n``, masking the extra
      iterations (loads read 0, stores are skipped, reductions add their identity);
    * ``SWAP(axis, other)``: exchange the loop order of two output axes;
    * ``NOLOCALS``: the kernel uses no workgroup threads at all;
    * ``TC(axis)``: tile a matmul-shaped reduction to the renderer's tensor core number
      ``axis`` (default 0);
    * ``TILE(axis, n)``: split a reduce axis into tiles of ``n``, the loop over tiles around
      the output loops, partial sums kept in the output buffer; on an output (LOOP) axis,
      only the loop over its tiles of ``n`` moves outermost (CPU cache blocking, see
      ``tiling.py``);
    * ``PARTIALS(axis, n)``: split a reduce axis into ``n`` partial reductions kept as vector
      lanes, combined once after the loop (``tiling.py``).
    """

    op: OptOps
    axis: int | None = None
    amount: int | None = None

    def __repr__(self) -> str:
        return f"Opt(op={self.op!r}, axis={self.axis}, amount={self.amount})"

    def to_tuple(self) -> tuple[str, int | None, int | None]:
        """A JSON-friendly form (``Opt.from_tuple`` reverses it)."""
        return (self.op.name, self.axis, self.amount)

    @staticmethod
    def from_tuple(t: Sequence[object]) -> Opt:
        """The Opt of ``to_tuple``'s form."""
        name, axis, amount = t
        if not isinstance(name, str) or name not in OptOps.__members__:
            raise ValueError(f"Opt.from_tuple: unknown op {name!r}")
        return Opt(OptOps[name], _int_or_none(axis), _int_or_none(amount))


def _int_or_none(x: object) -> int | None:
    if x is None or isinstance(x, int):
        return x
    raise ValueError(f"Opt.from_tuple: expected an int or None, got {x!r}")


class KernelOptError(ValueError):
    """An opt that does not apply to this kernel on this renderer (the message says why)."""


#: axis types an output axis can have before lowering (LOOP on CPUs, GLOBAL on GPUs)
OUTPUT_TYPES = (AxisType.LOOP, AxisType.GLOBAL)
#: the most vector lanes (product of UPCAST and UNROLL sizes) a kernel may have
MAX_LANES = 256
#: the largest single UPCAST/UNROLL amount
MAX_UPCAST = 32


# -- looking at a kernel ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def nodes_by_op(ast: UOp) -> Mapping[Ops, tuple[UOp, ...]]:
    """The nodes of ``ast`` grouped by op, each group in toposort order. Memoized: heuristics
    and BEAM look at the same (hash-consed, immutable) ASTs many times, and a MiniLM kernel
    has thousands of nodes."""
    out: dict[Ops, list[UOp]] = {}
    for u in ast.toposort():
        out.setdefault(u.op, []).append(u)
    return MappingProxyType({op: tuple(us) for op, us in out.items()})


def nodes_of(ast: UOp, op: Ops) -> tuple[UOp, ...]:
    """The nodes of ``ast`` with op ``op``, in toposort order (memoized, see ``nodes_by_op``)."""
    return nodes_by_op(ast).get(op, ())


@functools.lru_cache(maxsize=256)
def _sorted_axes(ast: UOp) -> tuple[UOp, ...]:
    return tuple(sorted(nodes_of(ast, Ops.RANGE), key=lambda r: (r.arg[0], r.arg[1].value)))


def kernel_axes(ast: UOp) -> list[UOp]:
    """Every RANGE of ``ast`` sorted by axis id: what ``Opt.axis`` indexes."""
    return list(_sorted_axes(ast))


def kernel_info(ast: UOp) -> KernelInfo:
    """The kernel's KernelInfo (a default one when the SINK has none)."""
    return ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()


def const_size(rng: UOp) -> int | None:
    """The range's size when it is a constant."""
    end = rng.src[0]
    return end.arg if end.op is Ops.CONST and isinstance(end.arg, int) else None


def axes_of(ast: UOp, *kinds: AxisType) -> list[UOp]:
    """The kernel's ranges of the given axis types, sorted by axis id."""
    return [r for r in kernel_axes(ast) if r.arg[1] in kinds]


def lane_count(ast: UOp, rng: UOp | None = None) -> int:
    """Vector lanes of the kernel: the largest product of UPCAST and UNROLL sizes one load,
    store or reduced value varies with (the axes of sequential reductions over a row, each in
    a loop of its own, don't multiply); with ``rng``, of the values varying with ``rng``."""
    lanes = axes_of(ast, AxisType.UPCAST, AxisType.UNROLL)
    if not lanes:
        return 1
    by_op = nodes_by_op(ast)
    values = [*by_op.get(Ops.LOAD, ()), *by_op.get(Ops.STORE, ())]
    values += [r.src[0] for r in by_op.get(Ops.REDUCE, ())]
    best = 1
    for v in values:
        if rng is not None and rng not in v.ranges:
            continue
        best = max(best, int(prod(const_size(r) or 1 for r in lanes if r in v.ranges)))
    return best


def _check(ok: bool, opt: Opt, why: str) -> None:
    if not ok:
        raise KernelOptError(f"{opt}: {why}")


def _axis(ast: UOp, opt: Opt, axis: int | None = None) -> UOp:
    """The range ``opt`` (or ``axis``) names."""
    axes = kernel_axes(ast)
    pos = opt.axis if axis is None else axis
    _check(pos is not None, opt, "needs an axis")
    assert pos is not None
    _check(0 <= pos < len(axes), opt, f"axis {pos} out of range: the kernel has {len(axes)} axes")
    return axes[pos]


def _kind_name(rng: UOp) -> str:
    return f"axis {rng.arg[0]} ({rng.arg[1].name}, size {rng.src[0].render()})"


def _amount(opt: Opt, rng: UOp) -> int:
    """The opt's amount; 0 means the whole axis (which must then have a constant size)."""
    amount = opt.amount
    _check(isinstance(amount, int) and amount >= 0, opt, "amount must be an int >= 0")
    assert amount is not None
    if amount == 0:
        size = const_size(rng)
        _check(
            size is not None,
            opt,
            f"amount 0 (the whole axis) needs a constant size, {_kind_name(rng)}",
        )
        assert size is not None
        return size
    return amount


def _quotient(opt: Opt, rng: UOp, amount: int) -> UOp:
    """The range's size divided by ``amount`` (which must divide it)."""
    _check(amount >= 2, opt, f"amount must be at least 2, got {amount}")
    end = rng.src[0]
    size = const_size(rng)
    if size is not None:
        _check(size % amount == 0, opt, f"{amount} does not divide {_kind_name(rng)} (use PADTO)")
        return UOp.const(size // amount, dtypes.weakint)
    q = end.divides(amount)
    _check(q is not None, opt, f"{amount} does not divide the symbolic size {end.render()}")
    assert q is not None
    return q


# -- rewriting ranges ------------------------------------------------------------------------------


def _next_axis_id(ast: UOp) -> int:
    axes = kernel_axes(ast)
    return max((r.arg[0] for r in axes), default=-1) + 1


def _fix_range_lists(sink: UOp) -> UOp:
    """After replacing ranges by expressions, END/REDUCE list the ranges those use again."""
    new: dict[UOp, UOp] = {}
    for u in sink.toposort():
        srcs = [new[s] for s in u.src]
        if u.op in (Ops.END, Ops.REDUCE):
            listed: list[UOp] = []
            for s in srcs[1:]:
                more = [s] if s.op is Ops.RANGE else [r for r in s.toposort() if r.op is Ops.RANGE]
                listed.extend(sorted(more, key=lambda r: r.arg[0]))
            srcs = [srcs[0], *dict.fromkeys(listed)]
        new[u] = u.replace(src=tuple(srcs)) if tuple(srcs) != u.src else u
    return new[sink]


def split_axis(ast: UOp, rng: UOp, amount: int, kind: AxisType, top: bool, quotient: UOp) -> UOp:
    """``rng`` split into a part of size ``amount`` and type ``kind`` (new axis id) and the
    rest (``rng``'s id and type, size ``quotient``): ``rest * amount + part``, or with
    ``top`` ``part * quotient + rest``."""
    part = UOp.range(amount, _next_axis_id(ast), kind)
    rest = UOp.range(quotient, rng.arg[0], rng.arg[1])
    expr = part * quotient + rest if top else rest * amount + part
    return _fix_range_lists(ast.substitute({rng: expr}))


def retype_axis(ast: UOp, rng: UOp, kind: AxisType) -> UOp:
    """``rng`` with a new axis type."""
    return ast.substitute({rng: rng.replace(arg=(rng.arg[0], kind))})


def _split_or_retype(ast: UOp, opt: Opt, rng: UOp, kind: AxisType, top: bool = False) -> UOp:
    amount = _amount(opt, rng)
    if amount == const_size(rng):
        _check(amount >= 2, opt, f"{_kind_name(rng)} has a single iteration")
        return retype_axis(ast, rng, kind)
    return split_axis(ast, rng, amount, kind, top, _quotient(opt, rng, amount))


# -- the opts --------------------------------------------------------------------------------------


def _lanes_opt(ast: UOp, opt: Opt, rng: UOp, kind: AxisType) -> UOp:
    amount = _amount(opt, rng)
    _check(amount <= MAX_UPCAST, opt, f"amount {amount} is more than {MAX_UPCAST} lanes")
    lanes = lane_count(ast, rng) * amount
    _check(lanes <= MAX_LANES, opt, f"the kernel would have {lanes} lanes (at most {MAX_LANES})")
    return _split_or_retype(ast, opt, rng, kind)


def _upcast(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    rng = _axis(ast, opt)
    _check(rng.arg[1] in OUTPUT_TYPES, opt, f"UPCAST needs an output axis, {_kind_name(rng)}")
    return _lanes_opt(ast, opt, rng, AxisType.UPCAST)


def _unroll(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    rng = _axis(ast, opt)
    _check(rng.arg[1] is AxisType.REDUCE, opt, f"UNROLL needs a reduce axis, {_kind_name(rng)}")
    return _lanes_opt(ast, opt, rng, AxisType.UNROLL)


def _workgroup_size(ast: UOp) -> int:
    return int(
        prod(const_size(r) or 1 for r in axes_of(ast, AxisType.LOCAL, AxisType.GROUP_REDUCE))
    )


def _check_locals(ast: UOp, opt: Opt, renderer: Renderer, amount: int) -> None:
    _check(renderer.has_local, opt, f"{renderer!r} has no workgroups (has_local is False)")
    _check(not kernel_info(ast).dont_use_locals, opt, "the kernel has NOLOCALS")
    limit = max(renderer.local_max) if renderer.local_max else 1024
    size = _workgroup_size(ast) * amount
    _check(size <= limit, opt, f"a workgroup of {size} threads is more than {limit}")


def _local(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    rng = _axis(ast, opt)
    _check(rng.arg[1] in OUTPUT_TYPES, opt, f"LOCAL needs an output axis, {_kind_name(rng)}")
    _check_locals(ast, opt, renderer, _amount(opt, rng))
    return _split_or_retype(ast, opt, rng, AxisType.LOCAL)


def _reduce_dtype(ast: UOp, rng: UOp) -> DType | None:
    red = next((u for u in nodes_of(ast, Ops.REDUCE) if rng in u.src[1:]), None)
    return None if red is None else red.dtype


def _group(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    rng = _axis(ast, opt)
    _check(
        rng.arg[1] is AxisType.REDUCE, opt, f"{opt.op.name} needs a reduce axis, {_kind_name(rng)}"
    )
    amount = _amount(opt, rng)
    _check_locals(ast, opt, renderer, amount)
    _check(renderer.has_shared, opt, f"{renderer!r} has no shared memory")
    dt = _reduce_dtype(ast, rng)
    _check(dt is not None, opt, f"{_kind_name(rng)} is not reduced by a REDUCE")
    assert dt is not None
    lanes = prod(const_size(r) or 1 for r in axes_of(ast, AxisType.UPCAST))
    nbytes = _workgroup_size(ast) * amount * lanes * dt.itemsize
    _check(nbytes <= renderer.shared_max, opt, f"needs {nbytes} bytes of shared memory, "
           f"{renderer!r} has {renderer.shared_max}")  # fmt: skip
    return _split_or_retype(ast, opt, rng, AxisType.GROUP_REDUCE, top=opt.op is OptOps.GROUPTOP)


def _closes_every_store(ast: UOp, rng: UOp) -> bool:
    return all(e.op is Ops.END and rng in e.src[1:] for e in ast.src)


def _thread(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    rng = _axis(ast, opt)
    _check(renderer.has_threads, opt, f"{renderer!r} has no CPU threads (has_threads is False)")
    _check(rng.arg[1] is AxisType.LOOP, opt, f"THREAD needs a LOOP axis, {_kind_name(rng)}")
    _check(_closes_every_store(ast, rng), opt, f"every store must loop over {_kind_name(rng)}")
    amount = _amount(opt, rng)
    cores = prod(const_size(r) or 1 for r in axes_of(ast, AxisType.THREAD)) * amount
    _check(cores <= renderer.max_threads, opt, f"{cores} threads is more than the "
           f"{renderer.max_threads} of {renderer!r}")  # fmt: skip
    return split_axis(ast, rng, amount, AxisType.THREAD, True, _quotient(opt, rng, amount))


def _clamps(idx: UOp, new: UOp, stored: set[UOp]) -> bool:
    """Whether a load through ``idx`` reads the padded output range ``new`` clamped to the
    last real row instead of masked: only loads (what a padded row computes is never stored),
    and only strided ones (a contiguous axis may become vector lanes: masked, they stay one
    vector load; clamped per lane, a gather)."""
    from fusegrad.codegen.opt.analysis import stride

    if idx in stored or new.arg[1] not in OUTPUT_TYPES:
        return False
    step = stride(idx.src[1], new)
    return step is not None and step not in (0, 1)


def _padded(ast: UOp, rng: UOp, size: int, new: UOp) -> UOp:
    """Mask every access that uses the padded range ``new``, and the reductions over it —
    except strided loads along a padded output axis, which read the last real row instead
    (``_clamps``: no mask, so no branch in the loops inside)."""
    inside = new < size
    clamped = inside.where(new, UOp.const(size - 1, new.dtype))
    done: dict[UOp, UOp] = {}
    padded = ast.substitute({rng: new})
    stored = {u.src[0] for u in padded.toposort() if u.op is Ops.STORE}
    for u in padded.toposort():  # sources first: a masked load feeds a masked index
        srcs = tuple(done[s] for s in u.src)
        if u.op is Ops.INDEX and new in srcs[1].ranges and _clamps(u, new, stored):
            srcs = (srcs[0], srcs[1].substitute({new: clamped}), *srcs[2:])
        elif u.op is Ops.INDEX and new in srcs[1].ranges:
            srcs = (srcs[0], _masked(srcs[1], inside), *srcs[2:])
        if u.op is Ops.REDUCE and new in srcs[1:]:
            srcs = (inside.where(srcs[0], _identity(u.arg, u.dtype)), *srcs[1:])
        done[u] = u.replace(src=srcs) if srcs != u.src else u
    return done[padded]


def _masked(idx: UOp, cond: UOp) -> UOp:
    """Index ``idx`` also masked by ``cond`` (composing with its own mask)."""
    if idx.get_idx() is idx:
        return idx.valid(cond)
    return idx.get_idx().valid(idx.get_valid() & cond)


def _identity(op: Ops, dt: DType) -> UOp:
    value = {Ops.ADD: 0, Ops.MUL: 1}.get(op)
    return UOp.const(dtypes.min(dt) if value is None else value, dt)


def _padto(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    rng = _axis(ast, opt)
    kinds = (*OUTPUT_TYPES, AxisType.REDUCE)
    _check(rng.arg[1] in kinds, opt, f"PADTO needs a LOOP/GLOBAL/REDUCE axis, {_kind_name(rng)}")
    size = const_size(rng)
    _check(size is not None, opt, f"PADTO needs a constant size, {_kind_name(rng)}")
    assert size is not None
    amount = _amount(opt, rng)
    _check(amount >= 2, opt, f"amount must be at least 2, got {amount}")
    padded = -(-size // amount) * amount
    _check(padded != size, opt, f"{_kind_name(rng)} is already a multiple of {amount}")
    _check(padded <= 2 * size, opt, f"padding {size} to {padded} more than doubles the axis")
    new = UOp.range(padded, rng.arg[0], rng.arg[1])
    return _padded(ast, rng, size, new)


def _swap(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    a, b = _axis(ast, opt), _axis(ast, opt, opt.amount)
    _check(a is not b, opt, "SWAP needs two different axes")
    _check(a.arg[1] in OUTPUT_TYPES and b.arg[1] in OUTPUT_TYPES, opt,
           f"SWAP needs two output axes, got {_kind_name(a)} and {_kind_name(b)}")  # fmt: skip
    _check(a.arg[1] is b.arg[1], opt, "SWAP needs two axes of the same type")
    mapping = {a: a.replace(arg=(b.arg[0], a.arg[1])), b: b.replace(arg=(a.arg[0], b.arg[1]))}
    return ast.substitute(mapping)


def _nolocals(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    _check(renderer.has_local, opt, f"{renderer!r} has no workgroups (has_local is False)")
    info = kernel_info(ast)
    _check(not info.dont_use_locals, opt, "the kernel already has NOLOCALS")
    _check(_workgroup_size(ast) == 1, opt, "the kernel already has LOCAL/GROUP axes")
    return ast.replace(arg=dataclasses.replace(info, dont_use_locals=True))


def _tensor_core(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    from fusegrad.codegen.opt.analysis import apply_tensor_core

    return apply_tensor_core(ast, opt, renderer)


def _tile(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    from fusegrad.codegen.opt.tiling import tile_reduce

    return tile_reduce(ast, opt, renderer)


def _partials(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    from fusegrad.codegen.opt.tiling import partial_sums

    return partial_sums(ast, opt, renderer)


OptFn = Callable[[UOp, Opt, Renderer], UOp]

OPT_FUNCTIONS: dict[OptOps, OptFn] = {
    OptOps.UPCAST: _upcast,
    OptOps.UNROLL: _unroll,
    OptOps.LOCAL: _local,
    OptOps.GROUP: _group,
    OptOps.GROUPTOP: _group,
    OptOps.THREAD: _thread,
    OptOps.PADTO: _padto,
    OptOps.SWAP: _swap,
    OptOps.NOLOCALS: _nolocals,
    OptOps.TC: _tensor_core,
    OptOps.TILE: _tile,
    OptOps.PARTIALS: _partials,
}
"""What each OptOps does: (AST, opt, renderer) -> AST, raising KernelOptError."""


def apply_opt(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    """``ast`` with one opt applied (raises ``KernelOptError`` when it does not apply)."""
    if not isinstance(opt, Opt):
        raise KernelOptError(f"expected an Opt, got {opt!r}")
    return OPT_FUNCTIONS[opt.op](ast, opt, renderer)


def row_axes(ast: UOp) -> list[UOp]:
    """The output LOOP axes no reduction of ``ast`` varies with, when it has reductions:
    the axes along the row of a kernel of row reductions (softmax in one kernel, whose max and
    sum are computed once per row, before the loop over the row's outputs)."""
    reduces = nodes_by_op(ast).get(Ops.REDUCE, ())
    if not reduces:
        return []
    used = {r for u in reduces for r in u.ranges}
    return [r for r in axes_of(ast, AxisType.LOOP) if r not in used]


def finish(ast: UOp, renderer: Renderer, applied: Sequence[Opt]) -> UOp:
    """The last step of ``apply_opts``: output LOOPs become GLOBAL on workgroup targets (but
    the ``row_axes``: a thread per element would compute its row's reductions again, so each
    thread loops over its row), and the SINK records that its opts are applied
    (``opts_to_apply = ()``: lowering the result applies nothing more)."""
    if renderer.has_local:
        along = row_axes(ast)
        loops = [r for r in axes_of(ast, AxisType.LOOP) if r not in along]
        ast = ast.substitute({r: r.replace(arg=(r.arg[0], AxisType.GLOBAL)) for r in loops})
    info = kernel_info(ast)
    done = dataclasses.replace(
        info,
        axis_types=tuple(r.arg[1] for r in _sorted_axes(ast)),
        applied_opts=(*info.applied_opts, *applied),
        opts_to_apply=(),
    )
    return ast.replace(arg=done)


def apply_opts(ast: UOp, opts: Sequence[Opt], renderer: Renderer) -> UOp:
    """``ast`` with ``opts`` applied in order, ready for lowering (see the module docstring
    for the axis numbering). Raises ``KernelOptError`` at the first opt that does not apply."""
    if ast.op is not Ops.SINK:
        raise KernelOptError(f"apply_opts: expected a kernel AST (SINK), got {ast.op!r}")
    for opt in opts:
        ast = apply_opt(ast, opt, renderer)
    return finish(ast, renderer, opts)
