"""The lowering pipeline: kernel AST -> linear program -> ProgramSpec.

``STAGES`` is the whole pipeline as data, one named stage after another; ``lower`` runs them
in one loop (names show with ``DEBUG>=7`` and label VIZ steps) on a kernel AST whose opts are
applied already (the optimizer's job, before lowering), and ``render`` prints the result and
wraps it into a ``ProgramSpec`` (name, rendered source, signature, launch sizes, estimates).
``fusegrad.codegen.program.to_program`` is the three in a row: ``render(lower(optimize(ast)))``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fusegrad.codegen.lower.accumulators import add_local_buffers, lower_reduces
from fusegrad.codegen.lower.context import Census, LowerContext
from fusegrad.codegen.lower.control_flow import add_control_flow, if_blocks
from fusegrad.codegen.lower.decompose import pm_decompose
from fusegrad.codegen.lower.devectorize import devectorize
from fusegrad.codegen.lower.dtype_emulation import emulate_dtypes
from fusegrad.codegen.lower.estimates import estimate
from fusegrad.codegen.lower.expander import pm_expand
from fusegrad.codegen.lower.fma import contract_fma
from fusegrad.codegen.lower.gather import collapse_gathers
from fusegrad.codegen.lower.hardware_ids import map_hardware_ids
from fusegrad.codegen.lower.index_dtype import lower_index_dtype
from fusegrad.codegen.lower.int64_emulation import emulate_int64
from fusegrad.codegen.lower.linearize import linearize
from fusegrad.codegen.lower.ranges import simplify_ranges
from fusegrad.codegen.lower.transcendental import needs_approximation, pm_transcendental
from fusegrad.codegen.lower.validity import pm_validity
from fusegrad.codegen.lower.walk import nodes
from fusegrad.codegen.lower.wmma import fold_wmma_accumulate, has_wmma_work, use_tensor_cores
from fusegrad.codegen.renderer import BufferParam, ProgramSpec, Renderer
from fusegrad.codegen.spec import KernelInfo, SpecError, verify_kernel_ast, verify_linear
from fusegrad.uop import (
    DEBUG,
    SPEC,
    AxisType,
    GroupOp,
    Ops,
    PatternMatcher,
    PtrDType,
    UOp,
    dtypes,
    graph_rewrite,
    viztrace,
)
from fusegrad.uop.viztrace import ACTIVE as _TRACE

StageFn = Callable[[UOp, LowerContext], UOp]
Needed = Callable[[Census, LowerContext], bool]


@dataclass(frozen=True, slots=True)
class Stage:
    """One named step of the pipeline: a graph -> graph function of the run's context.
    ``when`` (None: always) says from the graph's census whether the stage has work; a stage
    without work is skipped (its rewrite would return the graph unchanged)."""

    name: str
    run: StageFn
    when: Needed | None = None


def rewrite(
    name: str, pm: PatternMatcher, bottom_up: bool = False, when: Needed | None = None
) -> Stage:
    """A stage that is one ``graph_rewrite`` with ``pm`` (the context is the rules' ctx)."""

    def run(sink: UOp, ctx: LowerContext) -> UOp:
        return graph_rewrite(sink, pm, ctx=ctx, bottom_up=bottom_up, name=name)

    return Stage(name, run, when)


def has(*ops: Ops) -> Needed:
    """The graph contains one of ``ops``."""
    wanted = frozenset(ops)
    return lambda census, ctx: not census.ops.isdisjoint(wanted)


def has_axes(*kinds: AxisType) -> Needed:
    """The graph has a RANGE of one of the axis types ``kinds``."""
    wanted = frozenset(kinds)
    return lambda census, ctx: not census.axis_types.isdisjoint(wanted)


def lacks_one_of(*ops: Ops, always: tuple[Ops, ...] = ()) -> Needed:
    """The graph contains one of ``ops`` that the target lacks, or one of ``always``."""

    def needed(census: Census, ctx: LowerContext) -> bool:
        table = ctx.renderer.code_for_op
        present = census.ops
        return any(op in present for op in always) or any(
            op in present and op not in table for op in ops
        )

    return needed


def _parallel(census: Census, ctx: LowerContext) -> bool:
    """GPU targets always get launch sizes; CPUs only have work for THREAD axes."""
    return ctx.renderer.has_local or AxisType.THREAD in census.axis_types


_DECOMPOSED = (
    Ops.MULACC, Ops.SUB, Ops.NEG, Ops.MAX, Ops.CMPNE, Ops.CMPEQ, Ops.FLOORDIV, Ops.FLOORMOD,
    Ops.RECIPROCAL, Ops.FDIV, Ops.THREEFRY, Ops.POW,
)  # fmt: skip


def _target_rules(sink: UOp, ctx: LowerContext) -> UOp:
    extra = ctx.renderer.extra_matcher
    return sink if extra is None else graph_rewrite(sink, extra, ctx=ctx, name="target rules")


def _linearize(sink: UOp, ctx: LowerContext) -> UOp:
    return UOp(Ops.LINEAR, src=tuple(linear_form(linearize(sink))))


def _note_axes(sink: UOp, ctx: LowerContext) -> UOp:
    ctx.note_axes(sink)
    return sink


STAGES: tuple[Stage, ...] = (
    Stage("collapse gathers", collapse_gathers, has(Ops.REDUCE)),
    Stage("number axes", _note_axes),
    Stage("simplify ranges", simplify_ranges),
    Stage("tensor cores", use_tensor_cores, has_wmma_work),
    rewrite("expand upcasts", pm_expand, when=has_axes(AxisType.UPCAST, AxisType.UNROLL)),
    Stage("lower reduces", lower_reduces, has(Ops.REDUCE)),
    Stage("fold wmma accumulate", fold_wmma_accumulate, has(Ops.WMMA)),
    Stage("add local buffers", add_local_buffers, has(Ops.DEFINE_LOCAL)),
    Stage("map hardware ids", map_hardware_ids, _parallel),
    Stage("devectorize", devectorize, lambda census, ctx: census.vectors),
    Stage("contract fma", contract_fma, has(Ops.DEFINE_REG)),
    rewrite("index validity", pm_validity, when=lambda census, ctx: census.invalid),
    Stage("lower index dtype", lower_index_dtype),
    Stage("emulate dtypes", emulate_dtypes),
    rewrite("transcendentals", pm_transcendental, when=needs_approximation),
    rewrite(
        "decompose ops",
        pm_decompose,
        when=lacks_one_of(*_DECOMPOSED, always=(Ops.CDIV, Ops.CMOD)),
    ),
    Stage("emulate int64", emulate_int64, lambda census, ctx: ctx.renderer.no_int64_alu),
    Stage("target rules", _target_rules),
    Stage("control flow", add_control_flow, lambda census, ctx: census.loose_ends),
    Stage("linearize", _linearize),
    Stage("if blocks", if_blocks),
)
"""The lowering pipeline, in order (see ``fusegrad.codegen.lower`` for what each does)."""


def linear_form(uops: list[UOp]) -> list[UOp]:
    """A linearized list rebuilt in the linear program's node forms: ``END(range)``, and no
    GROUP among any node's sources (its members instead)."""
    new: dict[UOp, UOp] = {}
    out: list[UOp] = []

    def sources(u: UOp) -> tuple[UOp, ...]:
        srcs: list[UOp] = []
        for s in u.src:
            srcs.extend(sources(s) if s.op is Ops.GROUP else (new[s],))
        return tuple(srcs)

    for u in uops:
        if u.op is Ops.END:
            new[u] = UOp(Ops.END, u.dtype, (new[u.src[1]],), u.arg)
        else:
            srcs = sources(u)
            new[u] = u if srcs == u.src else u.replace(src=srcs)
        out.append(new[u])
    return out


def lower(
    ast: UOp, renderer: Renderer, stages: tuple[Stage, ...] = STAGES
) -> tuple[list[UOp], LowerContext]:
    """Run ``stages`` (the whole pipeline by default) on ``ast``; the linear program and the
    run's context. Tests pass a pipeline without one stage to check what that stage does."""
    if SPEC:
        verify_kernel_ast(ast)
    if DEBUG >= 5:
        print(ast)
    ctx = LowerContext(renderer)
    graph = without_empty_loops(ast)
    if _TRACE:  # VIZ: one group per kernel lowering, one stage per pipeline stage
        return _traced_lower(ast, graph, ctx, stages)
    for stage in stages:
        start = time.perf_counter()
        skip = stage.when is not None and not stage.when(ctx.census(graph), ctx)
        if not skip:
            graph = stage.run(graph, ctx)
        if DEBUG >= 7:
            ms = (time.perf_counter() - start) * 1e3
            note = "skipped" if skip else f"{len(graph.toposort()):6d} nodes"
            print(f"lower: {stage.name:20s} {ms:8.2f} ms  {note}")
    uops = with_every_parameter(ast, list(graph.src))
    if SPEC:
        verify_linear(uops)
        verify_target_ops(uops, renderer)
    if DEBUG >= 6:
        print(format_linear(uops))
    return uops, ctx


def _as_text(src: str | bytes) -> str:
    return src if isinstance(src, str) else src.decode(errors="replace")


def _traced_lower(
    ast: UOp, graph: UOp, ctx: LowerContext, stages: tuple[Stage, ...]
) -> tuple[list[UOp], LowerContext]:
    """``lower``'s loop recording each stage that runs in the active VIZ trace."""
    trace = _TRACE[0]
    with viztrace.group(kernel_name(ast), "kernel", key=ctx) as group:
        if group is not None:
            group.root = ast
        for stage in stages:
            if stage.when is not None and not stage.when(ctx.census(graph), ctx):
                continue
            rec = trace.begin(stage.name, graph, kind="lower")
            out = graph
            try:
                out = stage.run(graph, ctx)
            finally:
                trace.end(rec, out)
            graph = out
    uops = with_every_parameter(ast, list(graph.src))
    if SPEC:
        verify_linear(uops)
        verify_target_ops(uops, renderer=ctx.renderer)
    linear = format_linear(uops)
    trace.attach(ctx, linear=linear)
    if DEBUG >= 6:
        print(linear)
    return uops, ctx


def without_empty_loops(ast: UOp) -> UOp:
    """``ast`` without the stores that sit in a loop over nothing (an END closing a RANGE of
    size 0): their index need not use that loop (``x[0, :0] = v`` stores along the other
    axes), so placing them by their dependencies alone would run them once. A reduce over an
    empty range is not such a loop: its store still runs."""

    def empty(end: UOp) -> bool:
        return end.op is Ops.END and any(
            r.op is Ops.RANGE and r.src[0].op is Ops.CONST and r.src[0].arg == 0
            for r in end.src[1:]
        )

    if ast.op is not Ops.SINK or not any(empty(u) for u in ast.src):
        return ast
    return ast.replace(src=tuple(u for u in ast.src if not empty(u)))


def _parameter_order(u: UOp) -> tuple[int, int, str]:
    return (0, u.arg, "") if isinstance(u.arg, int) else (1, 0, u.arg[0])


def with_every_parameter(ast: UOp, uops: list[UOp]) -> list[UOp]:
    """``uops`` with a PARAM for every buffer slot and Variable of ``ast``, also those whose
    every use the lowering removed (a load folded away, a Variable simplified out): the
    calling convention passes all of them by position, so a missing one would shift the
    ones after it. The parameters lead the program, buffers by slot then Variables by name."""
    have = {u.arg if isinstance(u.arg, int) else u.arg[0] for u in uops if u.op is Ops.PARAM}
    missing = [
        u
        if u.op is Ops.PARAM
        else UOp(Ops.PARAM, dtypes.int32, (), u.arg)  # as lower_index_dtype makes them
        for u in nodes(ast)
        if (u.op is Ops.PARAM and isinstance(u.arg, int) and u.arg not in have)
        or (u.op is Ops.DEFINE_VAR and u.arg[0] not in have)
    ]
    if not missing:
        return uops
    params = sorted([u for u in uops if u.op is Ops.PARAM] + missing, key=_parameter_order)
    return params + [u for u in uops if u.op is not Ops.PARAM]


def verify_target_ops(uops: list[UOp], renderer: Renderer) -> None:
    """Raise SpecError at the first ALU op the renderer does not list in ``code_for_op``
    (a renderer that lists no ops at all is not checked)."""
    table = renderer.code_for_op
    for i, u in enumerate(uops):
        if table and u.op in GroupOp.ALU and u.op not in table:
            raise SpecError(f"linear program: node #{i} {u.op!r} is not an op of {renderer!r}")


def format_linear(uops: list[UOp]) -> str:
    """One line per UOp: index, op, dtype, sources by index, arg."""
    index = {u: i for i, u in enumerate(uops)}
    lines = []
    for i, u in enumerate(uops):
        srcs = ", ".join(str(index.get(s, "?")) for s in u.src)
        arg = "" if u.arg is None else f"  {u.arg!r}"
        lines.append(f"{i:4d} {u.op.name:12s} {u.dtype!r:28s} [{srcs}]{arg}")
    return "\n".join(lines)


# -- the ProgramSpec -------------------------------------------------------------------------------


def _buffers(ast: UOp) -> tuple[BufferParam, ...]:
    every = nodes(ast)
    params = {u.arg: u for u in every if u.op is Ops.PARAM and isinstance(u.arg, int)}
    users = [u for u in every if u.op in (Ops.LOAD, Ops.STORE)]
    read = {u.src[0].src[0].arg for u in users if u.op is Ops.LOAD}
    written = {u.src[0].src[0].arg for u in users if u.op is Ops.STORE}
    out = []
    for slot in sorted(params):
        dt = params[slot].dtype
        assert isinstance(dt, PtrDType)
        out.append(BufferParam(slot, dt.base, dt.size, slot in read, slot in written))
    return tuple(out)


def _size_text(x: UOp) -> str:
    if x.op is Ops.CONST:
        return str(x.arg)
    names = [v.arg[0] for v in x.variables()]
    return "".join(names) if names else "s"


def kernel_name(ast: UOp) -> str:
    """``KernelInfo.name`` when set, else ``E_``/``r_`` (elementwise / reducing) and the loop
    sizes in nesting order: ``r_16_16_16`` for a 16x16x16 matmul."""
    info = ast.arg
    if isinstance(info, KernelInfo) and info.name != "kernel":
        return info.name
    from fusegrad.codegen.lower.context import sorted_ranges

    every = nodes(ast)
    ranges = sorted_ranges([u for u in every if u.op is Ops.RANGE])
    reduces = any(r.arg[1].is_reduce for r in ranges) or any(u.op is Ops.REDUCE for u in every)
    sizes = "_".join(_size_text(r.src[0]) for r in ranges) or "1"
    return f"{'r' if reduces else 'E'}_{sizes}"


def render(
    ast: UOp, lowered: tuple[list[UOp], LowerContext], opts: tuple[Any, ...] = ()
) -> ProgramSpec:
    """The ProgramSpec of kernel ``ast`` from its lowered form ``lower(ast)`` (or of the
    kernel ``ast`` with ``opts`` applied): the renderer's source and what launching needs."""
    uops, ctx = lowered
    renderer = ctx.renderer
    buffers = _buffers(ast)
    found = [u for u in nodes(ast) if u.op is Ops.DEFINE_VAR]
    variables = tuple(sorted(found, key=lambda v: v.arg))  # UOp.variables' order, one walk
    name = kernel_name(ast)
    src = renderer.render(uops, name)
    if _TRACE:
        viztrace.attach(ctx, source=_as_text(src), renderer=type(renderer).__name__, name=name)
        _TRACE[0].optimized(ctx, ast, opts)
    return ProgramSpec(
        name=name,
        src=src,
        device=renderer.device,
        ast=ast,
        uops=tuple(uops),
        buffers=buffers,
        variables=variables,
        global_size=tuple(ctx.global_size),
        local_size=None if ctx.local_size is None else tuple(ctx.local_size),
        estimates=estimate(uops, buffers),
        applied_opts=opts,
    )
