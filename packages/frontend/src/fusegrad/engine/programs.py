"""Compiled kernels: kernel AST -> ProgramSpec (``to_program``) -> loaded device Program,
cached per (AST, renderer, ``BEAM``, ``NOOPT``) so a kernel compiles and loads once per
process (the compilers' disk cache makes the second process skip compiling as well).

Every path that launches kernels — plain realize, schedule-cache template hits, TinyJit
capture — gets them from ``get_kernel``, which hands ``to_program`` the device's BEAM timer:
under ``BEAM>=1`` a kernel's first compile searches its opts on the device (or finds them in
the on-disk BEAM cache, also in later processes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fusegrad.codegen import ProgramSpec, Renderer, to_program
from fusegrad.codegen.opt import BEAM, NOOPT
from fusegrad.runtime import Compiled, Program, host_span
from fusegrad.uop import ContextVar, UOp

#: the lowering's dtype-emulation setting, declared by codegen (the same object by name)
EMULATED_DTYPES = ContextVar("EMULATED_DTYPES", "")


@dataclass(frozen=True, slots=True)
class Kernel:
    """A loaded kernel: its ProgramSpec, the device Program, the names of its Variables (in
    the order the launch takes their values), and — for kernels without Variables — the
    launch sizes and work estimates, worked out once."""

    spec: ProgramSpec
    program: Program
    var_names: tuple[str, ...]
    fixed: tuple[tuple[int, ...], tuple[int, ...] | None, int, int] | None

    def launch(self, values: dict[str, int]) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """(global size, local size) for these Variable values."""
        if self.fixed is not None:
            return self.fixed[0], self.fixed[1]
        return self.spec.launch_dims(values)

    def work(self, values: dict[str, int]) -> tuple[int, int]:
        """(ALU ops, bytes of memory touched) of one launch with these Variable values."""
        if self.fixed is not None:
            return self.fixed[2], self.fixed[3]
        est = self.spec.estimates.at(values)
        return int(est.ops), int(est.mem)


_KERNELS: dict[tuple[UOp, Renderer, tuple[object, ...]], Kernel] = {}


def program_knobs() -> tuple[object, ...]:
    """The settings besides the AST and the renderer that change a kernel's program:
    ``BEAM``, ``NOOPT`` (the opts) and ``EMULATED_DTYPES`` (the lowering)."""
    return (int(BEAM.value), bool(NOOPT), str(EMULATED_DTYPES.value or ""))


RECIPES: dict[int, tuple[Any, Any]] = {}
"""id(schedule template) -> (the template, how it launches: ``launch.run_template``); the
launches hold loaded kernels, so ``clear_kernels`` clears this too."""


def get_kernel(ast: UOp, device: Compiled) -> Kernel:
    """The loaded kernel of ``ast`` for ``device`` (compiled on first use; under ``BEAM>=1``
    with opts searched on ``device.timer``). Keyed on the renderer object (each device has
    its own, and selecting another compiler makes a new one) and the optimizer's knobs."""
    renderer = device.renderer
    key = (ast, renderer, program_knobs())
    hit = _KERNELS.get(key)
    if hit is not None:
        return hit
    beam = BEAM >= 1
    with host_span("lower"):
        spec = to_program(ast, renderer, timer=device.timer) if beam else to_program(ast, renderer)
    names = tuple(str(v.arg[0]) for v in spec.variables)
    fixed = None
    if not names:
        gs, ls = spec.launch_dims({})
        fixed = (gs, ls, int(spec.estimates.ops), int(spec.estimates.mem))
    with host_span("compile", kernel=spec.name, device=device.device):
        program = device.load(spec)
    kernel = _KERNELS[key] = Kernel(spec, program, names, fixed)
    return kernel


def clear_kernels() -> None:
    """Forget every loaded kernel (the next use compiles or hits the disk cache again). Waits
    for submitted work first: a worker still running a kernel whose code is freed crashes."""
    from fusegrad.engine.launch import synchronize

    synchronize()
    _KERNELS.clear()
    RECIPES.clear()
