"""Test targets and a runner for the lowering-pipeline tests: target capability sets, a mini "optimizer" that
splits/retypes ranges (what the opts issue will do for real), and a runner that executes a
ProgramSpec in the PYTHON emulator over NumPy arrays."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

with warnings.catch_warnings():
    # TODO(#9): fusegrad.uop's Ops enum warns on Python 3.11 (enum.auto after an alias)
    warnings.simplefilter("ignore", DeprecationWarning)
    import fusegrad.uop  # noqa: F401

from fusegrad.codegen import KernelInfo, ProgramSpec, Renderer
from fusegrad.codegen.lower import format_linear
from fusegrad.runtime import run_linear
from fusegrad.uop import SPEC, AxisType, DType, GroupOp, Ops, UOp, dtypes

SPEC.value = 1  # every IR stage checked against its spec under pytest

_ALL_ALU = {op: (lambda *a: "") for op in GroupOp.ALU}


class CPUTestRenderer(Renderer):
    """CPU-like: wide vectors for the common dtypes, cores, every ALU op native."""

    device = "CPU"
    suffix = "TESTCPU"
    vector_widths = {  # noqa: RUF012
        dtypes.float32: (4, 8),
        dtypes.int32: (4, 8),
        dtypes.float16: (4, 8),
        dtypes.float64: (2, 4),
        dtypes.uint32: (4, 8),
    }
    has_threads = True
    max_threads = 4
    code_for_op = _ALL_ALU

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        return format_linear(uops)


class GPUTestRenderer(Renderer):
    """GPU-like: workgroups with local memory and SPECIAL ids, float4 loads, no native
    transcendentals/MULACC/CMPEQ/floor division/SUB, no bfloat16 (emulated in float32)."""

    device = "GPU"
    suffix = "TESTGPU"
    vector_widths = {dtypes.float32: (2, 4), dtypes.float16: (2, 4)}  # noqa: RUF012
    has_local = True
    has_shared = True
    local_max = (256, 256, 64)
    shared_max = 16384
    supported_dtypes = frozenset(dtypes.all) - {dtypes.weakint, dtypes.weakfloat, dtypes.bfloat16}
    code_for_op = {  # noqa: RUF012
        op: f
        for op, f in _ALL_ALU.items()
        if op
        not in {
            Ops.MULACC, Ops.CMPEQ, Ops.FLOORDIV, Ops.FLOORMOD, Ops.EXP2, Ops.LOG2, Ops.SIN,
            Ops.POW, Ops.SUB,
        }
    }  # fmt: skip

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        return format_linear(uops)


class ScalarTestRenderer(Renderer):
    """A minimal scalar target: no vectors, no threads, few ops, no half types."""

    device = "SCALAR"
    suffix = "TESTSCALAR"
    supported_dtypes = frozenset(dtypes.all) - {
        dtypes.weakint, dtypes.weakfloat, dtypes.bfloat16, dtypes.float16, *dtypes.fp8s,
    }  # fmt: skip
    code_for_op = {  # noqa: RUF012
        op: (lambda *a: "")
        for op in (
            Ops.ADD, Ops.MUL, Ops.CDIV, Ops.CMOD, Ops.CMPLT, Ops.CMPNE, Ops.WHERE, Ops.NEG,
            Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.FDIV, Ops.TRUNC,
            Ops.RECIPROCAL,
        )
    }  # fmt: skip

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        return format_linear(uops)


class Scalar32TestRenderer(ScalarTestRenderer):
    """The scalar target without a 64-bit integer ALU (a 32-bit machine): int64/uint64 are
    computed as pairs of 32-bit words."""

    suffix = "TESTSCALAR32"
    no_int64_alu = True


RENDERERS: dict[str, Renderer] = {
    "cpu": CPUTestRenderer(),
    "gpu": GPUTestRenderer(),
    "scalar": ScalarTestRenderer(),
}

# -- building kernel ASTs --------------------------------------------------------------------------


def buf(slot: int, dt: DType, size: int) -> UOp:
    """Buffer parameter ``slot`` of ``size`` elements."""
    return UOp.param(slot, dt.ptr(size))


def rng(end: int | UOp, axis: int, kind: AxisType = AxisType.LOOP) -> UOp:
    """A kernel-AST range."""
    return UOp.range(end, axis, kind)


def kernel(*effects: UOp, name: str | None = None) -> UOp:
    """The SINK of a kernel AST."""
    return UOp.sink(*effects, arg=KernelInfo(name) if name else None)


def _fix_range_lists(sink: UOp) -> UOp:
    """After substituting a range by an expression, END/REDUCE list the ranges it uses."""
    new: dict[UOp, UOp] = {}
    for u in sink.toposort():
        srcs = [new[s] for s in u.src]
        if u.op in (Ops.END, Ops.REDUCE):
            rs: list[UOp] = []
            for s in srcs[1:]:
                rs.extend(
                    [s] if s.op is Ops.RANGE else [r for r in s.toposort() if r.op is Ops.RANGE]
                )
            srcs = [srcs[0], *dict.fromkeys(rs)]
        new[u] = u.replace(src=tuple(srcs)) if tuple(srcs) != u.src else u
    return new[sink]


def find_range(ast: UOp, axis: int) -> UOp:
    """The RANGE of ``axis`` in ``ast``."""
    return next(u for u in ast.toposort() if u.op is Ops.RANGE and u.arg[0] == axis)


def split(ast: UOp, axis: int, amount: int, kind: AxisType, outer: AxisType | None = None) -> UOp:
    """Split range ``axis`` into ``outer * amount + inner``, the inner range of type ``kind``
    (the outer keeps its type unless ``outer`` is given)."""
    r = find_range(ast, axis)
    end = r.src[0].arg
    assert end % amount == 0, (end, amount)
    hi = UOp.range(end // amount, axis, outer or r.arg[1])
    lo = UOp.range(amount, axis * 100 + 50, kind)
    return _fix_range_lists(ast.substitute({r: hi * amount + lo}))


def retype(ast: UOp, axis: int, kind: AxisType) -> UOp:
    """Range ``axis`` with a new type."""
    r = find_range(ast, axis)
    return ast.substitute({r: r.replace(arg=(r.arg[0], kind))})


# -- running --------------------------------------------------------------------------------------

_NP: dict[DType, Any] = {
    dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.uint8: np.uint8, dtypes.int16: np.int16,
    dtypes.uint16: np.uint16, dtypes.int32: np.int32, dtypes.uint32: np.uint32,
    dtypes.int64: np.int64, dtypes.uint64: np.uint64, dtypes.float16: np.float16,
    dtypes.bfloat16: np.uint16, dtypes.float32: np.float32, dtypes.float64: np.float64,
}  # fmt: skip


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (round to nearest even)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns -> float32 values."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def run_program(
    spec: ProgramSpec, arrays: Sequence[np.ndarray], var_vals: dict[str, int] | None = None
) -> list[np.ndarray]:
    """Execute ``spec`` in the PYTHON emulator on copies of ``arrays`` (one per buffer slot, in
    the buffers' dtypes; bfloat16 as uint16 bits); the arrays after the run."""
    out = []
    for b, a in zip(spec.buffers, arrays, strict=True):
        arr = np.ascontiguousarray(np.array(a, dtype=_NP[b.dtype]).reshape(-1))
        assert arr.size == b.size, (b, arr.size)
        out.append(arr)
    gs, ls = spec.launch_dims(var_vals or {})
    run_linear(list(spec.uops), out, var_vals or {}, global_size=gs, local_size=ls)
    return out


def cpu_backend(name: str) -> tuple[Any, Any]:
    """(renderer, compiler) of the CPU renderer ``name`` ("llvm", or "c" with the system C
    compiler: skips the test when there is none)."""
    import pytest
    from fusegrad.renderer import (
        CCompiler,
        CRenderer,
        LLVMCompiler,
        LLVMRenderer,
        find_c_compiler,
    )

    if name == "llvm":
        return LLVMRenderer(fast_math=False), LLVMCompiler()
    if find_c_compiler() is None:
        pytest.skip("no C compiler")
    return CRenderer(), CCompiler()


def run_compiled(spec: ProgramSpec, renderer: Any, compiler: Any, arrays: list[np.ndarray]) -> str:
    """Render ``spec`` with ``renderer``, compile it and run it on the CPU over ``arrays`` (in
    place, one per buffer slot); the rendered source."""
    from fusegrad.renderer import CPUProgram, kernel_signature

    src = renderer.render(list(spec.uops), spec.name)
    CPUProgram(compiler.compile_cached(src), kernel_signature(list(spec.uops), spec.name))(arrays)
    return src
