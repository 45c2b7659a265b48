"""Helpers for the optimizer tests (imported by name: the opt conftest puts this folder on
sys.path): the lowering tests' kernel corpus and targets, random valid opt sequences, and
running a kernel with opts in the PYTHON emulator or on the CPU device."""

from __future__ import annotations

import random
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

with warnings.catch_warnings():
    # TODO(#9): fusegrad.uop's Ops enum warns on Python 3.11 (enum.auto after an alias)
    warnings.simplefilter("ignore", DeprecationWarning)
    import fusegrad.uop

from fusegrad.codegen import KernelInfo, Renderer, to_program
from fusegrad.codegen.opt import KernelOptError, Opt, actions, apply_opt
from fusegrad.uop import UOp

fusegrad.uop.SPEC.value = 1

# the lowering tests' helper modules, imported by name as tests/codegen/lower/conftest.py
# makes them importable there (one module object shared by both test folders)
sys.path.insert(0, str(Path(__file__).parent.parent / "lower"))
import corpus as CORPUS  # noqa: E402, F401 (used by the opt tests through this module)
import targets as TARGETS  # noqa: E402


def random_opts(
    ast: UOp, renderer: Renderer, rs: random.Random, length: int, max_lanes: int = 32
) -> list[Opt]:
    """Up to ``length`` opts chosen at random among those that apply, one after another."""
    from fusegrad.codegen.opt.kernel import lane_count

    opts: list[Opt] = []
    for _ in range(length):
        choices = actions(ast, renderer)
        rs.shuffle(choices)
        for opt in choices:
            try:
                nxt = apply_opt(ast, opt, renderer)
            except KernelOptError:
                continue
            if lane_count(nxt) <= max_lanes:
                ast = nxt
                opts.append(opt)
                break
    return opts


def with_opts(ast: UOp, opts: list[Opt]) -> UOp:
    """``ast`` asking the pipeline for exactly ``opts``."""
    name = ast.arg.name if isinstance(ast.arg, KernelInfo) else "kernel"
    return ast.replace(arg=KernelInfo(name, opts_to_apply=tuple(opts)))


def run_emulated(case: Any, ast: UOp, renderer: Renderer) -> list[np.ndarray]:
    """The case's buffers after running ``ast`` in the PYTHON emulator."""
    spec = to_program(ast, renderer)
    return list(TARGETS.run_program(spec, case.inputs, case.var_vals))


class _HostBuffer:
    """A NumPy array as a CPU-device buffer (the runtime reads ``address``)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr
        self.address = arr.ctypes.data


def cpu_device() -> Any:
    """The runtime's CPU device (LLVM by default), or skip when it can't compile here."""
    from fusegrad.runtime import Device

    dev = Device["CPU"]
    try:
        dev.renderer  # noqa: B018 (selects a working renderer or raises)
    except Exception as e:  # Unavailable, ImportError...
        pytest.skip(f"no CPU renderer: {e}")
    return dev


def load_program(dev: Any, spec: Any) -> Any:
    """``dev.load(spec)``, rendering the function under the spec's name.

    TODO(#6): ``to_program`` renders without the kernel's name (the function is ``kernel``
    while ``spec.name`` is ``r_...``); re-rendering here until the pipeline passes it."""
    import dataclasses

    src = dev.renderer.render(list(spec.uops), spec.name)
    return dev.load(dataclasses.replace(spec, src=src))


def run_cpu(case: Any, ast: UOp) -> list[np.ndarray]:
    """The case's buffers after running ``ast`` on the runtime's CPU device."""
    dev = cpu_device()
    spec = to_program(ast, dev.renderer)
    prg = load_program(dev, spec)
    arrays = []
    for b, a in zip(spec.buffers, case.inputs, strict=True):
        arrays.append(np.ascontiguousarray(np.array(a, dtype=TARGETS._NP[b.dtype]).reshape(-1)))
    vals = [case.var_vals[str(v.arg[0])] for v in spec.variables]
    gs, ls = spec.launch_dims(case.var_vals)
    dev.exec(prg, [_HostBuffer(a) for a in arrays], vals, gs, ls, wait=True)
    return arrays
