"""Compiled kernels: kernel AST -> ProgramSpec (``to_program``) -> loaded device Program,
cached per (AST, device, renderer) so a kernel compiles and loads once per process (the
compilers' disk cache makes the second process skip compiling as well)."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

from fusegrad.codegen import ProgramSpec, Renderer, to_program
from fusegrad.engine.decompose import decompose_kernel
from fusegrad.runtime import Compiled, Program
from fusegrad.uop import UOp


@dataclass(frozen=True, slots=True)
class Kernel:
    """A loaded kernel: its ProgramSpec, the device Program, and the names of its Variables
    (in the order the launch takes their values)."""

    spec: ProgramSpec
    program: Program
    var_names: tuple[str, ...]


_KERNELS: dict[tuple[UOp, str, str], Kernel] = {}


def _takes_name(renderer: Renderer) -> bool:
    try:
        return "name" in inspect.signature(renderer.render).parameters
    except (TypeError, ValueError):
        return False


def _named(spec: ProgramSpec, renderer: Renderer) -> ProgramSpec:
    """``spec`` with its source's function called ``spec.name``.

    Works around ``to_program`` rendering without passing the kernel's name (the renderer then
    names the function ``kernel`` and loading ``spec.name`` fails)."""
    src = spec.src
    if not isinstance(src, str) or spec.name in src or not _takes_name(renderer):
        return spec
    return dataclasses.replace(spec, src=renderer.render(list(spec.uops), name=spec.name))


def get_kernel(ast: UOp, device: Compiled) -> Kernel:
    """The loaded kernel of ``ast`` for ``device`` (compiled on first use)."""
    renderer = device.renderer
    key = (ast, device.device, renderer.target_key)
    hit = _KERNELS.get(key)
    if hit is not None:
        return hit
    spec = _named(to_program(decompose_kernel(ast), renderer), renderer)
    names = tuple(str(v.arg[0]) for v in spec.variables)
    kernel = _KERNELS[key] = Kernel(spec, device.load(spec), names)
    return kernel


def clear_kernels() -> None:
    """Forget every loaded kernel (the next use compiles or hits the disk cache again)."""
    _KERNELS.clear()
