"""Helpers for the runtime tests: hand-built linear programs (spec: fusegrad.codegen.spec)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fusegrad.codegen import BufferParam, ProgramSpec
from fusegrad.runtime import Program
from fusegrad.uop import AddrSpace, AxisType, DType, Ops, PtrDType, UOp, dtypes


def linear(*items: UOp) -> list[UOp]:
    """A linear program: each item preceded by those of its sources not emitted yet."""
    out: list[UOp] = []
    seen: set[UOp] = set()
    for item in items:
        for u in item.toposort():
            if u not in seen:
                seen.add(u)
                out.append(u)
    return out


def c32(v: int) -> UOp:
    """An int32 constant."""
    return UOp.const(v, dtypes.int32)


def special(name: str, size: int | UOp) -> UOp:
    """A GPU id / core id of int32."""
    end = size if isinstance(size, UOp) else c32(size)
    return UOp(Ops.SPECIAL, dtypes.int32, (end,), name)


def rng(end: int | UOp, axis: int = 0, kind: AxisType = AxisType.LOOP) -> UOp:
    """An int32 loop counter over [0, end)."""
    e = end if isinstance(end, UOp) else c32(end)
    return UOp(Ops.RANGE, dtypes.int32, (e,), (axis, kind))


def end(r: UOp) -> UOp:
    """Close loop ``r``."""
    return UOp(Ops.END, dtypes.void, (r,))


def buf(slot: int, dt: DType, size: int) -> UOp:
    """A global buffer parameter."""
    return UOp.param(slot, dt.ptr(size))


def var(name: str, lo: int, hi: int) -> UOp:
    """A scalar int32 Variable parameter."""
    return UOp(Ops.PARAM, dtypes.int32, (), (name, lo, hi))


def local(name: str, dt: DType, size: int) -> UOp:
    """Workgroup-shared memory."""
    return UOp(Ops.DEFINE_LOCAL, dt.ptr(size, AddrSpace.LOCAL), (), name)


def reg(name: str, dt: DType, size: int) -> UOp:
    """Thread-private registers."""
    return UOp(Ops.DEFINE_REG, dt.ptr(size, AddrSpace.REG), (), name)


def load(idx: UOp, dt: DType | None = None, alt: UOp | None = None) -> UOp:
    """LOAD through an INDEX (``alt`` for gated indexes)."""
    ptr_dt = idx.src[0].dtype
    out = dt or ptr_dt.base  # type: ignore[attr-defined]
    return UOp(Ops.LOAD, out, (idx,) if alt is None else (idx, alt))


def store(idx: UOp, value: UOp) -> UOp:
    """STORE through an INDEX."""
    return UOp(Ops.STORE, dtypes.void, (idx, value))


@pytest.fixture
def lb() -> Any:
    """The linear-program builders as one namespace."""
    return types.SimpleNamespace(
        linear=linear, c32=c32, special=special, rng=rng, end=end, buf=buf, var=var,
        local=local, reg=reg, load=load, store=store,
    )  # fmt: skip


# -- programs and devices ---------------------------------------------------------------------


class FnProgram(Program):
    """A device program that calls a Python function per slice: ``fn(bufs, vals, core)``."""

    def __init__(self, name: str, fn: Callable[..., None], cores: int | None = None) -> None:
        super().__init__(name, b"", None)
        self.fn = fn
        self.core_size = cores

    def __call__(
        self, bufs: Any, vals: Any, global_size: Any, local_size: Any, core: int = 0
    ) -> None:
        self.fn(bufs, vals, core)


def spec_for(
    name: str, prog: list[UOp], src: str = "", device: str = "PYTHON", **kw: Any
) -> ProgramSpec:
    """A ProgramSpec around a hand-built linear program."""
    bufs = tuple(
        BufferParam(u.arg, u.dtype.base, u.dtype.size, True, True)  # type: ignore[attr-defined]
        for u in prog
        if u.op is Ops.PARAM and isinstance(u.dtype, PtrDType)
    )
    variables = tuple(u for u in prog if u.op is Ops.PARAM and isinstance(u.arg, tuple))
    return ProgramSpec(name, src, device, UOp.sink(), tuple(prog), bufs, variables, **kw)


def gcc_shared(src: str) -> bytes:
    """C source -> a shared library's bytes (compiled with gcc in a temporary folder)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "k.so"
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-O2", "-x", "c", "-", "-o", str(out)],
            input=src.encode(), check=True, capture_output=True,
        )  # fmt: skip
        return out.read_bytes()


@pytest.fixture
def rt() -> Any:
    """Program helpers as one namespace."""
    return types.SimpleNamespace(FnProgram=FnProgram, spec_for=spec_for, gcc_shared=gcc_shared)


@pytest.fixture
def pydev() -> Iterator[Any]:
    """A private PYTHON device, closed after the test."""
    from fusegrad.runtime import PythonDevice

    dev = PythonDevice("PYTHON")
    yield dev
    dev.close()


@pytest.fixture(params=["PYTHON", "CPU"])
def hcqdev(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A private device of each ring kind, closed after the test: PYTHON (Python rings) and
    CPU (compiled rings where they can be built; Python programs run through callbacks)."""
    from fusegrad.runtime import CPUDevice, PythonDevice

    dev = PythonDevice("PYTHON") if request.param == "PYTHON" else CPUDevice("CPU")
    yield dev
    dev.close()
