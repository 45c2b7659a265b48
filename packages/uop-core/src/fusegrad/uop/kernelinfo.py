"""``KernelInfo``: the metadata a kernel AST's SINK carries (``SINK.arg``). It lives in uop-core
so ``fusegrad.uop.ops`` can export it as tinygrad's ``tinygrad.uop.ops`` does; the codegen
fills it in (``fusegrad.codegen.spec`` re-exports it).

>>> KernelInfo("E_4", opts_to_apply=()).name
'E_4'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KernelInfo"]


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """Metadata on a kernel AST's SINK, tinygrad's fields in tinygrad's order: its ``name``;
    ``axis_types`` (the AxisType of each range, by axis number, once opts are applied);
    ``dont_use_locals`` (NOLOCALS); ``applied_opts`` (the opts applied so far);
    ``opts_to_apply`` (None: the heuristics or BEAM choose; ``()``: nothing more to apply);
    ``estimates`` (work estimates when known) and ``beam`` (the BEAM width that chose the
    opts, 0: none)."""

    name: str = "kernel"
    axis_types: tuple[object, ...] = ()
    dont_use_locals: bool = False
    applied_opts: tuple[object, ...] = ()
    opts_to_apply: tuple[object, ...] | None = None
    estimates: object | None = None
    beam: int = 0
