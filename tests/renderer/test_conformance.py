"""Every renderer available here runs the conformance corpus and must agree with the
PYTHON emulator: ints and bools exactly, floats exactly (NaN == NaN, -0.0 != 0.0) except the
transcendentals (within ``TRANSCENDENTAL_ULPS``).

Renderers join by registering a ConformanceTarget (see fusegrad.renderer.conformance and
conftest.py), never by copying this file.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import Any

import pytest
from fusegrad.renderer.conformance import (
    ConformanceTarget,
    RunFn,
    compare,
    conformance_targets,
    fresh_buffers,
)
from fusegrad.renderer.corpus import Case, corpus
from fusegrad.runtime import run_linear

# Third-party renderers join from a module that calls register_target(...) on import:
#   FUSEGRAD_CONFORMANCE_PLUGINS=mypkg.conformance pytest tests/renderer/test_conformance.py
# (or from an installed package's "fusegrad.conformance_targets" entry point).
for _module in filter(None, os.environ.get("FUSEGRAD_CONFORMANCE_PLUGINS", "").split(",")):
    importlib.import_module(_module.strip())

TARGETS = conformance_targets()


def _params() -> list[Any]:
    out = []
    for target in TARGETS:
        reason = target.unavailable()
        if reason is not None:
            skip = pytest.mark.skip(reason=reason)
            out.append(pytest.param(target, None, id=target.name, marks=skip))
            continue
        out += [pytest.param(target, c, id=f"{target.name}-{c.name}") for c in _cases(target)]
    return out


@functools.cache
def _cases_by_name(name: str) -> tuple[Case, ...]:
    target = next(t for t in TARGETS if t.name == name)
    return tuple(corpus(target.make_renderer()))


def _cases(target: ConformanceTarget) -> tuple[Case, ...]:
    return _cases_by_name(target.name)


@functools.cache
def _runner(name: str) -> RunFn:
    target = next(t for t in TARGETS if t.name == name)
    return target.make_runner(target.make_renderer())


@functools.cache
def _reference_of(key: tuple[Any, ...]) -> list[bytearray]:
    case = _by_key[key]
    bufs = fresh_buffers(case)
    run_linear(case.uops, bufs, case.var_vals)
    return bufs


_by_key: dict[tuple[Any, ...], Case] = {}


def _reference(case: Case) -> list[bytearray]:
    """The emulator's outputs, computed once per distinct kernel across targets."""
    key = (case.uops, case.buffers, tuple(sorted(case.var_vals.items())))
    _by_key[key] = case
    return _reference_of(key)


@pytest.mark.parametrize(("target", "case"), _params())
def test_renderer_matches_emulator(target: ConformanceTarget, case: Case) -> None:
    got = fresh_buffers(case)
    _runner(target.name)(case.uops, got, case.var_vals)
    mismatches = compare(case, _reference(case), got)
    assert not mismatches, f"{target.name} {case.name}:\n" + "\n".join(mismatches)


def test_every_cpu_renderer_runs_the_whole_corpus() -> None:
    names = {t.name for t in TARGETS}
    assert {"LLVM", "C-gcc", "C-clang"} <= names
    llvm = next(t for t in TARGETS if t.name == "LLVM")
    kinds = {c.name.split("-")[0] for c in _cases(llvm)}
    assert kinds >= {"alu", "cast", "bitcast", "gated", "if", "symbolic", "multicore", "reduce"}
    assert kinds >= {"nested", "vector"}
