"""TinyELF: a compiled CPU kernel's ELF object read (sections, symbols, code), loaded and run,
and written with its name, target and signature (pack/unpack)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from fusegrad.renderer import LLVMCompiler, LLVMRenderer
from fusegrad.renderer.corpus import Builder, alu, end, index, load, rng, store
from fusegrad.renderer.elf import ElfLoadError, TinyELF
from fusegrad.uop import Ops, UOp, dtypes

SIGNATURE = ((None, 8, dtypes.float32, ()), (None, 8, dtypes.float32, ()))


def _triple_kernel() -> bytes:
    p = Builder()
    out, x = p.buffer(dtypes.float32, [0] * 8), p.buffer(dtypes.float32, range(8))
    i = p.add(rng(8))
    p.add(store(index(out, i), alu(Ops.MUL, load(index(x, i)), UOp.const(3, dtypes.float32))))
    p.add(end(i))
    return LLVMCompiler().compile(LLVMRenderer().render(p.uops, "triple"))


def test_reads_sections_symbols_and_the_kernel_code() -> None:
    elf = TinyELF(_triple_kernel(), "triple", "CPU:LLVM", SIGNATURE)
    text = next(s for s in elf.sections if s.name == ".text")
    kernel = next(s for s in elf.symbols if s.name == "triple")
    assert kernel.section == ".text" and kernel.is_global and kernel.size > 0
    assert elf.code() == text.data[kernel.value : kernel.value + kernel.size]
    assert elf.code().endswith(b"\xc3")  # x86-64 ret: the whole function


def test_loaded_kernel_runs() -> None:
    code = TinyELF(_triple_kernel(), "triple", "CPU:LLVM", SIGNATURE).load()
    out, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(code.address)
    fn(out.ctypes.data, x.ctypes.data)
    np.testing.assert_array_equal(out, x * 3)


def test_pack_unpack_round_trips_and_the_packed_file_still_loads(tmp_path: Path) -> None:
    sig = ((None, 8, dtypes.float32, ()), ("n", 1, dtypes.int32, (1, 8)))
    elf = TinyELF(_triple_kernel(), "triple", "CPU:LLVM", sig, profile_key=b"\x01\x02")
    packed = elf.pack()
    back = TinyELF.unpack(packed)
    assert back == elf and back.lib == elf.lib
    assert back.signature[1][2] is dtypes.int32
    assert TinyELF(packed, "triple", "CPU", sig).load().address != 0
    if shutil.which("readelf"):
        path = tmp_path / "k.o"
        path.write_bytes(packed)
        listing = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True,
                                 text=True, check=True)  # fmt: skip
        assert ".fusegrad.tinyelf" in listing.stdout and not listing.stderr


def test_bad_objects_are_named() -> None:
    lib = _triple_kernel()
    with pytest.raises(ElfLoadError, match="no function 'kernel'"):
        TinyELF(lib, "kernel", "CPU", SIGNATURE)
    with pytest.raises(ElfLoadError, match="not an ELF file"):
        TinyELF(b"not elf", "triple", "CPU", SIGNATURE)
    with pytest.raises(ElfLoadError, match="not packed"):
        TinyELF.unpack(lib)
    with pytest.raises(TypeError, match="lib must be bytes"):
        TinyELF("text", "triple", "CPU", SIGNATURE)  # type: ignore[arg-type]
