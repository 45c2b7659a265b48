"""The program pipeline: a kernel AST to a ProgramSpec, in three visible steps::

    to_program(ast, renderer, opts=None, timer=None) = render(lower(optimize(ast)))

* ``optimize`` (``fusegrad.codegen.opt``) picks the kernel's opts — ``opts`` when given, else
  the AST's ``KernelInfo.opts_to_apply``, else none (``NOOPT``), BEAM (``BEAM>=1`` and a
  ``timer``: the device's, which times candidates) or the hand-coded heuristics — and applies
  them;
* ``lower`` (``fusegrad.codegen.lower``) runs the lowering stages to a linear program;
* ``render`` prints it with the renderer and wraps it into a ``ProgramSpec``.

Nothing is installed on import and nothing is global but two caches: which opts a kernel got
(keyed by the AST, the renderer and what decides the opts: the opts given, ``NOOPT``, the
BEAM width and the timer's identity, see ``optimizer_key``) and the program of a kernel with
given opts (keyed by AST, renderer and opts). ``DEBUG>=4`` prints every new program's source.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence

from fusegrad.codegen.flags import EMULATED_DTYPES
from fusegrad.codegen.lower.pipeline import lower, render
from fusegrad.codegen.opt.applier import optimize, optimizer_key
from fusegrad.codegen.opt.search import Timer
from fusegrad.codegen.renderer import ProgramSpec, Renderer
from fusegrad.uop import DEBUG, UOp

_chosen: dict[tuple[UOp, Renderer, tuple[object, ...]], tuple[object, ...]] = {}
_programs: dict[tuple[UOp, Renderer, tuple[object, ...]], ProgramSpec] = {}


def to_program(
    ast: UOp,
    renderer: Renderer,
    opts: Sequence[object] | None = None,
    timer: Timer | None = None,
) -> ProgramSpec:
    """The ProgramSpec of kernel ``ast`` for ``renderer``: ``render(lower(optimize(ast)))``
    (see the module docstring; cached, so the same arguments give the same object)."""
    lowering = str(EMULATED_DTYPES.value or "")  # the lowering depends on it too
    choice = (ast, renderer, (lowering, *optimizer_key(ast, opts, timer)))
    known = _chosen.get(choice)
    if known is not None and (hit := _programs.get((ast, renderer, known))) is not None:
        return hit
    with _no_collection_pauses():
        optimized, chosen = optimize(ast, renderer, opts, timer)
        key = (ast, renderer, (lowering, *chosen))
        spec = _programs.get(key)
        if spec is None:
            spec = render(ast, lower(optimized, renderer), chosen)
            if DEBUG >= 4:
                print(_as_text(spec.src))
            _programs[key] = spec
    _chosen[choice] = key[2]
    return spec


@contextlib.contextmanager
def _no_collection_pauses() -> Iterator[None]:
    """The cyclic garbage collector held off while a kernel is lowered. Lowering makes tens of
    thousands of short-lived nodes (few of them in cycles), so the collector would otherwise
    run every few hundred allocations, each run also walking the older generations that hold
    the caller's whole graph: a quarter of the MLP step's lowering time. What cycles a
    lowering leaves are collected at the next collection after it."""
    if not gc.isenabled():  # already off (by the caller, or by a lowering in another thread)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def clear_programs() -> None:
    """Forget every program built so far (the next ``to_program`` optimizes and lowers again;
    BEAM's on-disk cache still answers)."""
    _chosen.clear()
    _programs.clear()


def _as_text(src: str | bytes) -> str:
    return src if isinstance(src, str) else src.decode(errors="replace")
