"""The scheduler's result, ``KernelGraph``, and the cached template it is instantiated from.

Forms (what the runtime and frontend consume):

* ``linear``: ``LINEAR(*calls)`` in a valid execution order (run them one after another).
* kernel call: ``CALL(ast, *buffers, *bound_vars)``: ``ast`` a kernel AST SINK (spec.py
  form, ``arg=KernelInfo``); ``buffers`` one per PARAM slot, in slot order: a BUFFER, or a
  ``BUFFER_VIEW`` into a memory arena (see ``memory.py``); ``bound_vars`` the AST's
  Variables in ``ast.variables()`` order (sorted by name), each bound: ``v.bind(value)``.
* copy call: ``CALL(COPY(arg=nbytes), dst, src)``: copy ``nbytes`` bytes from the start of
  ``src`` to the start of ``dst`` (buffers or views on different devices).
* custom kernel call: ``CALL(ast, *buffers)`` with the AST the user's function built.
* ``becomes``: each of the sink's sources -> a view (movement ops, maybe BITCAST, over a
  BUFFER) holding its value once ``linear`` ran; the frontend swaps the tensor's lazy UOp
  for it. An output that already was a view of a buffer maps to itself (no kernel).
* ``buffers``: the BUFFERs to allocate before running (new outputs, unplanned
  temporaries, and the arenas). Buffers given in the input graph are never in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fusegrad.codegen.schedule.realize import map_arg
from fusegrad.uop import DEBUG, Ops, UOp, dtypes, prod


@dataclass(frozen=True)
class ScheduleTemplate:
    """A schedule over placeholder buffers and unbound Variables: what the cache keeps."""

    calls: tuple[tuple[UOp, tuple[UOp, ...], tuple[UOp, ...]], ...]  # (ast, buffers, vars)
    outputs: tuple[UOp, ...]  # the view holding each sink source
    inputs: tuple[UOp, ...]  # placeholders of the caller's buffers, in key order
    allocate: tuple[UOp, ...]  # placeholders of the buffers to create (incl. arenas)
    planned_bytes: int
    arena_bytes: int


@dataclass(frozen=True)
class KernelGraph:
    """The kernel graph of a tensor graph (forms in the module docstring)."""

    linear: UOp
    becomes: dict[UOp, UOp]
    buffers: tuple[UOp, ...]
    var_vals: dict[UOp, int]
    planned_bytes: int  # bytes of the intermediates the memory planner placed
    arena_bytes: int  # bytes of the arenas holding them
    cached: bool = False  # True when the schedule came from the schedule cache

    @property
    def calls(self) -> list[UOp]:
        """Every CALL, in execution order."""
        return list(self.linear.src)

    @property
    def kernels(self) -> list[UOp]:
        """The CALLs that run a kernel AST (copies excluded)."""
        return [c for c in self.linear.src if c.src[0].op is Ops.SINK]

    @property
    def copies(self) -> list[UOp]:
        """The copy CALLs."""
        return [c for c in self.linear.src if c.src[0].op is Ops.COPY]


def rebuild(u: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """``u`` with nodes replaced per ``mapping``, also inside movement args (small graphs:
    views and buffers). ``mapping`` doubles as the memo and grows."""
    hit = mapping.get(u)
    if hit is not None:
        return hit  # a placeholder buffer: the common case of a cache hit
    for node in u.toposort(gate=lambda n: n not in mapping):
        if node in mapping:
            continue
        src = tuple(mapping[s] for s in node.src)
        arg = map_arg(node.arg, lambda a: rebuild(a, mapping))
        same = arg is node.arg and all(a is b for a, b in zip(src, node.src, strict=True))
        mapping[node] = node if same else node.replace(src=src, arg=arg)
    return mapping[u]


def instantiate(
    tpl: ScheduleTemplate,
    inputs: Sequence[UOp],
    var_vals: Mapping[UOp, int],
    sources: Sequence[UOp],
    fresh: Callable[[UOp], UOp],
    cached: bool,
) -> KernelGraph:
    """The KernelGraph of ``tpl`` over the caller's ``inputs``, with new buffers made by
    ``fresh(placeholder)`` and Variables bound to ``var_vals``."""
    mapping: dict[UOp, UOp] = dict(zip(tpl.inputs, inputs, strict=True))
    new = [fresh(p) for p in tpl.allocate]
    mapping.update(zip(tpl.allocate, new, strict=True))
    bound = {v: v.bind(val) for v, val in var_vals.items()}
    mapping.update(bound)
    calls = []
    for ast, bufs, variables in tpl.calls:
        srcs = (ast, *(rebuild(b, mapping) for b in bufs), *(bound[v] for v in variables))
        calls.append(UOp(Ops.CALL, dtypes.void, srcs))
    becomes = {s: rebuild(v, mapping) for s, v in zip(sources, tpl.outputs, strict=True)}
    linear = UOp(Ops.LINEAR, dtypes.void, tuple(calls))
    kg = KernelGraph(
        linear, becomes, tuple(new), dict(var_vals), tpl.planned_bytes, tpl.arena_bytes, cached
    )
    if DEBUG >= 1:
        print(summary(kg))
    return kg


def _describe(call: UOp) -> str:
    head = call.src[0]
    bufs = [b for b in call.src[1:] if b.op in (Ops.BUFFER, Ops.BUFFER_VIEW)]
    if head.op is Ops.COPY:
        return f"copy {head.arg} bytes {bufs[1].device} -> {bufs[0].device}"
    name = head.arg.name if head.arg is not None else "custom"
    variables = [v.src[0].arg[0] for v in call.src[1 + len(bufs) :]]
    parts = [f"{name:<24}", f"{len(bufs)} bufs", f"out {bufs[0].dtype.name}" if bufs else ""]
    if (steps := loop_steps(head)) > ABSURD_LOOP_STEPS:
        parts.append(f"WARNING: {steps:.3g} loop steps (runs for a very long time)")
    return "  ".join(parts + ([f"vars {','.join(variables)}"] if variables else []))


ABSURD_LOOP_STEPS = 1 << 36
"""``DEBUG>=1`` warns about a kernel whose loops run more steps than this (~7e10: minutes to
hours on any device). It still runs: there is no limit, only the warning."""


def loop_steps(ast: UOp) -> int:
    """The product of a kernel AST's constant loop sizes (RANGEs): its steps, all threads
    together (symbolic sizes count as 1)."""
    sizes = [u.src[0].arg for u in ast.toposort() if u.op is Ops.RANGE and u.src]
    return int(prod(s for s in sizes if isinstance(s, int)))


def summary(kg: KernelGraph) -> str:
    """The DEBUG>=1 text: kernel count, then one line per call."""
    head = (
        f"schedule: {len(kg.kernels)} kernels, {len(kg.copies)} copies, "
        f"{len(kg.buffers)} buffers to allocate, arena {kg.arena_bytes} B for "
        f"{kg.planned_bytes} B of intermediates{' (cached)' if kg.cached else ''}"
    )
    lines = [f"  [{i}] {_describe(c)}" for i, c in enumerate(kg.calls)]
    return "\n".join([head, *lines])


def untag(view: UOp) -> UOp:
    """``view`` over its untagged BUFFER."""
    bottom = view
    while bottom.op is not Ops.BUFFER:
        bottom = bottom.src[0]
    return view if bottom.tag is None else view.substitute({bottom: bottom.replace(tag=None)})


def placeholder_inputs(inputs: Sequence[UOp]) -> tuple[UOp, ...]:
    """A placeholder BUFFER per caller buffer (same device, size and dtype)."""
    return tuple(
        UOp(Ops.BUFFER, b.dtype, (UOp(Ops.UNIQUE, arg=("input", i)), b.src[1]), b.arg)
        for i, b in enumerate(inputs)
    )


def fresh_buffer(placeholder: UOp) -> UOp:
    """A new BUFFER like ``placeholder`` (device, size, dtype) with a fresh identity."""
    return UOp.new_buffer(placeholder.src[1].arg, placeholder.arg, placeholder.dtype)


Key = tuple[Any, ...]
