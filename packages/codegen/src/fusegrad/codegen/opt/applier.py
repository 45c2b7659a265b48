"""The optimizer's hook in the lowering pipeline: which opts a kernel gets.

``optimize(ast, renderer)`` is registered with ``register_opts_applier`` (the first stage of
``to_program`` calls it) and decides, in order:

* ``KernelInfo.opts_to_apply`` given -> exactly those (``()``: none; how an AST that
  ``apply_opts`` already optimized passes through);
* a SINK without KernelInfo (a hand-built AST) -> no opts; the scheduler always attaches a
  KernelInfo, so real kernels go on to:
* ``NOOPT=1`` -> no opts;
* ``BEAM=n`` and a timer registered for the renderer's device -> ``beam_search``;
* else ``hand_coded_optimizations``.

With ``DEBUG>=3`` it prints the kernel's name and applied opts; the ProgramSpec records them
in ``applied_opts``.
"""

from __future__ import annotations

from collections.abc import Sequence

from fusegrad.codegen.lower import register_opts_applier
from fusegrad.codegen.opt.flags import BEAM, NOOPT
from fusegrad.codegen.opt.heuristics import hand_coded_optimizations
from fusegrad.codegen.opt.kernel import KernelOptError, Opt, apply_opts
from fusegrad.codegen.opt.search import Timer, beam_search
from fusegrad.codegen.renderer import Renderer
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import DEBUG, UOp

_timers: dict[str, Timer] = {}


def register_beam_timer(device: str, timer: Timer | None) -> None:
    """Make ``timer`` the one ``BEAM=n`` uses for kernels rendered for ``device`` (the
    renderer's ``device``, e.g. ``"CPU"``); None removes it."""
    if timer is None:
        _timers.pop(device, None)
    else:
        _timers[device] = timer


def _as_opts(given: Sequence[object]) -> list[Opt]:
    opts = []
    for o in given:
        if isinstance(o, Opt):
            opts.append(o)
        elif isinstance(o, tuple | list):
            opts.append(Opt.from_tuple(o))
        else:
            raise KernelOptError(f"opts_to_apply: expected Opt values, got {o!r}")
    return opts


def choose_opts(ast: UOp, renderer: Renderer) -> list[Opt]:
    """The opts ``optimize`` applies to ``ast`` (see the module docstring)."""
    info = ast.arg
    if not isinstance(info, KernelInfo):
        return []
    if info.opts_to_apply is not None:
        return _as_opts(info.opts_to_apply)
    if NOOPT:
        return []
    timer = _timers.get(renderer.device)
    if BEAM >= 1 and timer is not None:
        return beam_search(ast, renderer, int(BEAM.value), timer)
    return hand_coded_optimizations(ast, renderer)


def optimize(ast: UOp, renderer: Renderer) -> tuple[UOp, tuple[Opt, ...]]:
    """The pipeline hook: ``ast`` with its opts applied, and those opts."""
    opts = choose_opts(ast, renderer)
    out = apply_opts(ast, opts, renderer)
    if DEBUG >= 3 and opts:
        name = ast.arg.name if isinstance(ast.arg, KernelInfo) else "kernel"
        print(f"opts {name}: {opts}")
    return out, tuple(opts)


def install() -> None:
    """Register ``optimize`` as the lowering pipeline's opts applier (done on import of
    ``fusegrad.codegen``)."""
    register_opts_applier(optimize)
