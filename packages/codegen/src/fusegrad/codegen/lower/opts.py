"""The hook through which the kernel optimizer (``fusegrad.codegen.opt``) applies its opts.

The lowering pipeline's first stage calls the registered ``OptsApplier`` with the kernel AST
and the renderer; it returns the AST with its ranges split/retyped (UPCAST, LOCAL, ...) and
the opts it applied. Until an optimizer registers itself the stage is the identity.

The optimizer plugs in with::

    from fusegrad.codegen.lower import register_opts_applier
    register_opts_applier(apply_kernel_opts)   # (ast, renderer) -> (ast, applied opts)

and decides itself what to do: ``KernelInfo.opts_to_apply`` given -> apply exactly those;
None -> heuristics or BEAM (unless ``NOOPT``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import UOp

OptsApplier = Callable[[UOp, Renderer], tuple[UOp, tuple[Any, ...]]]

_applier: list[OptsApplier] = []


def register_opts_applier(fn: OptsApplier | None) -> OptsApplier | None:
    """Make ``fn`` the function the ``apply opts`` stage calls (None: back to identity);
    returns the one it replaces, so a caller can put it back."""
    previous = _applier[0] if _applier else None
    _applier.clear()
    if fn is not None:
        _applier.append(fn)
    return previous


def apply_opts(ast: UOp, renderer: Renderer) -> tuple[UOp, tuple[Any, ...]]:
    """The kernel AST with the optimizer's opts applied, and those opts (identity when no
    optimizer is registered)."""
    if not _applier:
        return ast, ()
    return _applier[0](ast, renderer)
