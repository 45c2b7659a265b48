"""The generated NIR bindings: current with the generator, layouts equal to Mesa's DWARF, and
the in-memory stub library that stands in for the symbols the LLVM 20 wheel lacks."""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from fusegrad.renderer.nir import bindings
from fusegrad.renderer.nir.mesa import _load_from_memory, stub_library

ROOT = Path(__file__).resolve().parents[3]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_nir_bindings", ROOT / "tools/gen_nir_bindings.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_struct_sizes_equal_dwarf_sizes() -> None:
    assert bindings.layout_errors() == []
    assert ctypes.sizeof(bindings.nir_alu_instr) == bindings.nir_alu_instr.SIZE == 72


def test_bitfield_property_reads_and_writes_only_its_bits() -> None:
    t = bindings.lp_type()
    t.floating, t.sign, t.width, t.length = 1, 1, 32, 4
    assert (t.floating, t.fixed, t.sign, t.width, t.length) == (1, 0, 1, 32, 4)
    raw = int.from_bytes(bytes(t), "little")
    assert raw == 1 | (1 << 2) | (32 << 6) | (4 << 32)


def test_generator_reproduces_the_checked_in_module() -> None:
    pytest.importorskip("elftools", reason="pyelftools reads the DWARF info")
    tinymesa = pytest.importorskip("tinymesa", reason="the bindings come from tinymesa's library")
    gen = _generator()
    text, reader = gen.generate(str(tinymesa.libtinymesa_cpu))
    assert gen.verify(text, reader) == []
    assert text == gen.OUT.read_text(), "run: python tools/gen_nir_bindings.py"


def test_stub_library_defines_each_symbol_as_zeroed_memory() -> None:
    names = ("fusegrad_stub_test_first", "fusegrad_stub_test_second")
    lib = _load_from_memory(stub_library(names, object_size=16), "fusegrad-stub-test")
    first, second = (
        (ctypes.c_uint8 * 16).in_dll(lib, names[0]),
        (ctypes.c_uint8 * 16).in_dll(lib, names[1]),
    )
    assert ctypes.addressof(second) - ctypes.addressof(first) == 16
    assert bytes(first) == bytes(second) == b"\0" * 16
