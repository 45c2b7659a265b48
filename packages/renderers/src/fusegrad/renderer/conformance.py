"""The cross-renderer conformance suite: run the corpus on a target, compare with a reference.

A *target* is a renderer plus a way to run its programs. The suite runs every case of
``corpus(renderer)`` on the target and on the reference (the PYTHON emulator,
``fusegrad.runtime.run_linear``) and compares the outputs: integers and bools exactly, floats
exactly too (NaN equals NaN, -0.0 differs from 0.0) except where a case allows an error in
units in the last place (the transcendentals).

Built-in targets: ``LLVM``, ``C`` with each C compiler found (``C-gcc``, ``C-clang``), and
``X86`` (our machine code; needs AVX2 and FMA).
Later renderers join by registering, not by copying the suite:

* in code: ``register_target(ConformanceTarget("PTX", make_renderer, run))`` in a module the
  test session imports — name it in ``FUSEGRAD_CONFORMANCE_PLUGINS`` (comma-separated module
  names) when running ``tests/renderer/test_conformance.py``;
* from an installed package: an entry point in group ``fusegrad.conformance_targets`` whose
  object is a ``ConformanceTarget`` (or a zero-argument function returning a list of them).

Without pytest, ``check_target(target, reference)`` returns every failure as text.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
import shutil
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fusegrad.codegen import Renderer
from fusegrad.renderer.corpus import Case, corpus
from fusegrad.uop import DType, UOp, bitcast, dtypes

#: runs a linear program in place over buffers (by slot) with Variable values by name
RunFn = Callable[[Sequence[UOp], list[bytearray], Mapping[str, int]], None]


@dataclass(frozen=True)
class ConformanceTarget:
    """A renderer the suite can test: ``make_renderer()`` builds it, ``make_runner(renderer)``
    returns the function that renders, compiles and runs a program on it, and
    ``unavailable()`` says why it can't run here (None: it can)."""

    name: str
    make_renderer: Callable[[], Renderer]
    make_runner: Callable[[Renderer], RunFn]
    unavailable: Callable[[], str | None] = lambda: None


_registered: dict[str, ConformanceTarget] = {}


def register_target(target: ConformanceTarget) -> None:
    """Add a target to the suite (replacing one of the same name)."""
    _registered[target.name] = target


def _cpu_runner(compiler_factory: Callable[[], Any]) -> Callable[[Renderer], RunFn]:
    def make(renderer: Renderer) -> RunFn:
        from fusegrad.renderer.launch import CPUProgram
        from fusegrad.renderer.signature import kernel_signature

        compiler = compiler_factory()

        def run(uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]) -> None:
            prog = list(uops)
            src = renderer.render(prog)
            assert isinstance(src, str)
            CPUProgram(compiler.compile_cached(src), kernel_signature(prog))(bufs, var_vals)

        return run

    return make


def _builtin_targets() -> list[ConformanceTarget]:
    from fusegrad.renderer.c import CCompiler, CRenderer
    from fusegrad.renderer.llvm import LLVMCompiler, LLVMRenderer

    out = [ConformanceTarget("LLVM", LLVMRenderer, _cpu_runner(LLVMCompiler))]
    for cc in ("gcc", "clang"):
        out.append(
            ConformanceTarget(
                f"C-{cc}",
                CRenderer,
                _cpu_runner(functools.partial(CCompiler, cc)),
                lambda cc=cc: None if shutil.which(cc) else f"no {cc} on PATH",  # type: ignore[misc]
            )
        )
    from fusegrad.renderer.x86 import X86Compiler, X86Renderer, x86_unavailable

    out.append(ConformanceTarget("X86", X86Renderer, _cpu_runner(X86Compiler), x86_unavailable))
    from fusegrad.renderer.nir import LVPCompiler, NIRRenderer, mesa_unavailable

    out.append(ConformanceTarget("LVP", NIRRenderer, _cpu_runner(LVPCompiler), mesa_unavailable))
    return out


def _entry_point_targets() -> list[ConformanceTarget]:
    out: list[ConformanceTarget] = []
    for ep in importlib.metadata.entry_points(group="fusegrad.conformance_targets"):
        obj = ep.load()
        found = obj() if callable(obj) and not isinstance(obj, ConformanceTarget) else obj
        out.extend(found if isinstance(found, list) else [found])
    return out


def conformance_targets() -> list[ConformanceTarget]:
    """Built-in, entry-point and registered targets (later ones replace same-named ones)."""
    every = {t.name: t for t in _builtin_targets()}
    every.update({t.name: t for t in _entry_point_targets()})
    every.update(_registered)
    return list(every.values())


# -- memory ---------------------------------------------------------------------------------


def _raw(dt: DType) -> tuple[str, Callable[[Any], Any], Callable[[Any], Any]]:
    """(struct format, value -> raw, raw -> value) of scalar dtype ``dt``."""
    if dt is dtypes.bfloat16:
        return "H", lambda v: bitcast(v, dt, dtypes.uint16), lambda r: bitcast(r, dtypes.uint16, dt)
    if dt in dtypes.fp8s:
        return "B", lambda v: bitcast(v, dt, dtypes.uint8), lambda r: bitcast(r, dtypes.uint8, dt)
    assert dt.fmt is not None
    return dt.fmt, lambda v: v, (bool if dt is dtypes.bool else lambda r: r)


def pack(dt: DType, values: Sequence[Any]) -> bytearray:
    """Values of scalar dtype ``dt`` as little-endian bytes."""
    fmt, to_raw, _ = _raw(dt)
    return bytearray(struct.pack(f"<{len(values)}{fmt}", *(to_raw(v) for v in values)))


def unpack(dt: DType, raw: bytes | bytearray) -> list[Any]:
    """The values of scalar dtype ``dt`` in ``raw``."""
    fmt, _, from_raw = _raw(dt)
    n = len(raw) // dt.itemsize
    return [from_raw(r) for r in struct.unpack(f"<{n}{fmt}", bytes(raw))]


# -- comparing -------------------------------------------------------------------------------

_MANTISSA = {dtypes.float16: 10, dtypes.bfloat16: 7, dtypes.float32: 23, dtypes.float64: 52}
_MIN_EXP = {dtypes.float16: -14, dtypes.bfloat16: -126, dtypes.float32: -126, dtypes.float64: -1022}


def ulp(x: float, dt: DType) -> float:
    """The spacing of ``dt``'s values at ``x``."""
    exp = math.frexp(x)[1] - 1 if x != 0 else _MIN_EXP.get(dt, -1022)
    return 2.0 ** (max(exp, _MIN_EXP.get(dt, -1022)) - _MANTISSA.get(dt, 52))


def same_value(
    dt: DType, want: Any, got: Any, ulps: float | None = None, zero_sign: bool = True
) -> bool:
    """Whether ``got`` matches ``want`` under the suite's rules."""
    if not dtypes.is_float(dt):
        return bool(want == got)
    want, got = float(want), float(got)
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if ulps is None or math.isinf(want) or math.isinf(got):
        same_sign = math.copysign(1, want) == math.copysign(1, got) or not zero_sign
        return bool(want == got and same_sign)
    return bool(abs(want - got) <= ulps * ulp(want, dt))


def compare(case: Case, want: list[bytearray], got: list[bytearray], limit: int = 8) -> list[str]:
    """A line per mismatching element (at most ``limit`` per output), with the inputs."""
    lines: list[str] = []
    for slot, label in case.outputs.items():
        dt = case.buffers[slot][0]
        w, g = unpack(dt, want[slot]), unpack(dt, got[slot])
        tol, signed = case.ulps.get(slot), slot not in case.unsigned_zero
        bad = [i for i in range(len(w)) if not same_value(dt, w[i], g[i], tol, signed)]
        for i in bad[:limit]:
            inputs = [
                vals[i]
                for s, (_, vals) in enumerate(case.buffers)
                if s not in case.outputs and i < len(vals)
            ]
            lines.append(f"{label} [{i}] inputs={inputs}: want {w[i]!r}, got {g[i]!r}")
        if len(bad) > limit:
            lines.append(f"{label}: ... {len(bad) - limit} more mismatches")
    return lines


def fresh_buffers(case: Case) -> list[bytearray]:
    """The case's buffers with their initial contents."""
    return [pack(dt, values) for dt, values in case.buffers]


def check_case(case: Case, run: RunFn, reference: RunFn) -> list[str]:
    """Run ``case`` on the target and the reference; the mismatches (empty: conforming)."""
    want, got = fresh_buffers(case), fresh_buffers(case)
    reference(case.uops, want, case.var_vals)
    run(case.uops, got, case.var_vals)
    return compare(case, want, got)


def check_target(target: ConformanceTarget, reference: RunFn) -> dict[str, list[str]]:
    """Every case of the corpus on ``target``: case name -> mismatches (or the error)."""
    renderer = target.make_renderer()
    run = target.make_runner(renderer)
    failures: dict[str, list[str]] = {}
    for case in corpus(renderer):
        try:
            bad = check_case(case, run, reference)
        except Exception as exc:  # report and keep going: one broken kernel is one failure
            bad = [f"{type(exc).__name__}: {exc}"]
        if bad:
            failures[case.name] = bad
    return failures
