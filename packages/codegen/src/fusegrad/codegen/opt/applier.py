"""Which opts a kernel gets: the first step of ``to_program`` (optimize, lower, render).

``choose_opts(ast, renderer, opts, timer)`` decides, in order:

* ``opts`` given -> exactly those;
* ``KernelInfo.opts_to_apply`` given -> exactly those (``()``: none; how an AST that
  ``apply_opts`` already optimized passes through);
* a SINK without KernelInfo (a hand-built AST) -> no opts; the scheduler always attaches a
  KernelInfo, so real kernels go on to:
* ``NOOPT=1`` -> no opts;
* ``BEAM=n`` and a ``timer`` (the device's: the engine passes it) -> ``beam_search``;
* else ``hand_coded_optimizations``.

``optimizer_key`` names that decision without making it (the program cache's key), and
``optimize`` applies the chosen opts. With ``DEBUG>=3`` it prints the kernel's name and
applied opts; the ProgramSpec records them in ``applied_opts``.
"""

from __future__ import annotations

from collections.abc import Sequence

from fusegrad.codegen.lower.context import LowerContext
from fusegrad.codegen.lower.gather import collapse_gathers
from fusegrad.codegen.opt.flags import BEAM, NOOPT
from fusegrad.codegen.opt.heuristics import hand_coded_optimizations
from fusegrad.codegen.opt.kernel import KernelOptError, Opt, apply_opts
from fusegrad.codegen.opt.search import Timer, beam_search
from fusegrad.codegen.renderer import Renderer
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import DEBUG, UOp


def _as_opts(given: Sequence[object]) -> tuple[Opt, ...]:
    opts = []
    for o in given:
        if isinstance(o, Opt):
            opts.append(o)
        elif isinstance(o, tuple | list):
            opts.append(Opt.from_tuple(o))
        else:
            raise KernelOptError(f"opts_to_apply: expected Opt values, got {o!r}")
    return tuple(opts)


def optimizer_key(
    ast: UOp, opts: Sequence[object] | None = None, timer: Timer | None = None
) -> tuple[object, ...]:
    """What decides ``ast``'s opts, as a hashable value: ``("opts", opts)`` (given, by the
    caller or the KernelInfo), ``("none",)``, ``("beam", width, timer)`` or
    ``("heuristics",)``. Together with the AST and the renderer it determines the program."""
    if opts is not None:
        return ("opts", _as_opts(opts))
    info = ast.arg
    if not isinstance(info, KernelInfo):
        return ("none",)
    if info.opts_to_apply is not None:
        return ("opts", _as_opts(info.opts_to_apply))
    if NOOPT:
        return ("none",)
    if BEAM >= 1 and timer is not None:
        return ("beam", int(BEAM.value), timer)
    return ("heuristics",)


def prepare(ast: UOp, renderer: Renderer, opts: Sequence[object] | None = None) -> UOp:
    """``ast`` as the optimizer sees it: sums of one-hot selects collapsed to gathers
    (``lower/gather.py``) unless explicit opts name its ranges as they are."""
    info = ast.arg
    if opts or (isinstance(info, KernelInfo) and info.opts_to_apply):
        return ast
    return collapse_gathers(ast, LowerContext(renderer))


def choose_opts(
    ast: UOp,
    renderer: Renderer,
    opts: Sequence[object] | None = None,
    timer: Timer | None = None,
) -> list[Opt]:
    """The opts ``optimize`` applies to ``ast`` (prepared; see the module docstring)."""
    match optimizer_key(ast, opts, timer):
        case ("opts", tuple(given)):
            return list(given)
        case ("none",):
            return []
        case ("beam", int(width), _) if timer is not None:
            return beam_search(ast, renderer, width, timer)
    return hand_coded_optimizations(ast, renderer)


def optimize(
    ast: UOp,
    renderer: Renderer,
    opts: Sequence[object] | None = None,
    timer: Timer | None = None,
) -> tuple[UOp, tuple[Opt, ...]]:
    """``ast`` prepared and with its opts applied (ready for ``lower``), and those opts."""
    ast = prepare(ast, renderer, opts)
    chosen = tuple(choose_opts(ast, renderer, opts, timer))
    out = apply_opts(ast, chosen, renderer)
    if DEBUG >= 3 and chosen:
        name = ast.arg.name if isinstance(ast.arg, KernelInfo) else "kernel"
        print(f"opts {name}: {list(chosen)}")
    return out, chosen
