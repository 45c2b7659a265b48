"""The C renderer and the system C compiler beyond the conformance corpus."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fusegrad.codegen import CompileError
from fusegrad.renderer import (
    CCompiler,
    CCompilerNotFoundError,
    CPUProgram,
    CRenderer,
    LLVMCompiler,
    LLVMRenderer,
    find_c_compiler,
    kernel_signature,
)
from fusegrad.renderer.c import REQUIRED_FLAGS
from fusegrad.renderer.corpus import Builder, alu, end, index, load, rng, store
from fusegrad.uop import Context, Ops, UOp, dtypes

needs_cc = pytest.mark.skipif(
    not any(shutil.which(c) for c in ("gcc", "clang", "cc")), reason="no C compiler"
)


def _scale(dt=dtypes.float32, n: int = 8) -> list[UOp]:  # type: ignore[no-untyped-def]
    p = Builder()
    out, x = p.buffer(dt, [0] * n), p.buffer(dt, range(n))
    i = p.add(rng(n))
    p.add(store(index(out, i), alu(Ops.MUL, load(index(x, i)), UOp.const(3, dt))), end(i))
    return p.uops


def test_missing_compiler_is_named_and_llvm_keeps_working() -> None:
    with pytest.raises(CCompilerNotFoundError, match="no-such-cc-xyz"):
        CCompiler("no-such-cc-xyz")
    with Context(CC="no-such-cc-xyz"):
        with pytest.raises(CCompilerNotFoundError, match="LLVM renderer"):
            find_c_compiler()
        assert "void kernel(" in CRenderer().render(_scale())  # rendering needs no compiler
        uops = _scale()
        lib = LLVMCompiler().compile(LLVMRenderer().render(uops))
        out, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
        CPUProgram(lib, kernel_signature(uops))([out, x])
        np.testing.assert_array_equal(out, x * 3)


@needs_cc
def test_compile_error_carries_kernel_message_and_lines() -> None:
    src = CRenderer().render(_scale(), "broken_c")
    bad = src.replace("for (", "for (this is not C; ", 1)
    with pytest.raises(CompileError) as info:
        CCompiler().compile(bad)
    err = info.value
    assert err.kernel == "broken_c"
    assert "error" in err.compiler_message
    assert "this is not C" in str(err)  # the offending line is shown
    assert "Traceback" not in str(err)


@needs_cc
def test_compiling_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    CCompiler().compile(CRenderer().render(_scale()))
    with pytest.raises(CompileError):
        CCompiler().compile("void kernel(void) { syntax error }")
    assert list(tmp_path.iterdir()) == []


def test_exactness_flags_are_always_added() -> None:
    assert {"-ffp-contract=off", "-fwrapv", "-fno-math-errno", "-fPIC"} <= set(REQUIRED_FLAGS)


@needs_cc
def test_flags_and_compiler_are_in_the_cache_key() -> None:
    assert CCompiler(flags="-O1").cache_key != CCompiler(flags="-O2").cache_key
    assert CCompiler().cc in CCompiler().cache_key


@needs_cc
def test_half_kernel_uses_portable_helpers_and_runs() -> None:
    uops = _scale(dtypes.float16)
    src = CRenderer().render(uops)
    assert "_Float16" not in src and "fg_f2h" in src
    out, x = np.zeros(8, np.float16), np.arange(8, dtype=np.float16) * np.float16(0.1)
    CPUProgram(CCompiler().compile(src), kernel_signature(uops))([out, x])
    np.testing.assert_array_equal(out, x * np.float16(3))


def test_only_used_helpers_are_emitted() -> None:
    src = CRenderer().render(_scale(dtypes.int32))
    assert "fg_" not in src
    assert src.startswith("#include <stdint.h>")


@needs_cc
def test_vector_const_is_every_lane_the_literal() -> None:
    # symbolic folds a compare of a vector with itself to one CONST of vector dtype
    p = Builder()
    out, x = p.buffer(dtypes.float32, [0] * 4), p.buffer(dtypes.float32, range(4))
    i = p.add(rng(4))
    pair = UOp(Ops.CONST, dtypes.float32.vec(2), (), 2.5)
    value = alu(Ops.ADD, load(index(x, i)), UOp(Ops.GEP, dtypes.float32, (pair,), (1,)))
    p.add(store(index(out, i), value), end(i))
    src = CRenderer().render(p.uops)
    assert "(fg_f32x2){0x1.4000000000000p+1f, 0x1.4000000000000p+1f}[1]" in src
    lib = CCompiler().compile(src)
    res, xs = np.zeros(4, np.float32), np.arange(4, dtype=np.float32)
    CPUProgram(lib, kernel_signature(p.uops))([res, xs])
    np.testing.assert_array_equal(res, xs + 2.5)
