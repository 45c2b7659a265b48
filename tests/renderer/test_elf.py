"""The ELF loader: relocations of real compiler output, W^X mappings, freeing, clear errors."""

from __future__ import annotations

import ctypes
import math
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from fusegrad.renderer import ElfLoadError, LoadedCode, load_elf
from fusegrad.renderer.elf import _is_loaded, _parse_relocs, _parse_sections

GCC = shutil.which("gcc") or shutil.which("cc")

# .rodata (PC32), .data with function pointers (R_X86_64_64), .bss, a libm call (PLT32 or,
# with -fno-plt, GOTPCRELX) and calls between functions of the object
SNIPPET = r"""
static const float table[4] = {1.5f, 2.5f, -3.5f, 4.25f};
static float scale = 2.0f;
static float counter;
static float twice(float x) { return x * scale; }
static float negate(float x) { return -x; }
float (*fns[2])(float) = {twice, negate};
void kernel(float *out, int n) {
  for (int i = 0; i < n; i++) out[i] = __builtin_sinf(table[i & 3]) + fns[i & 1](table[i & 3]);
  counter += 1.0f;
}
float get_counter(void) { return counter; }
"""


def _gcc_object(tmp_path: Path, *flags: str) -> bytes:
    if GCC is None:
        pytest.skip("no C compiler")
    src, obj = tmp_path / "k.c", tmp_path / "k.o"
    src.write_text(SNIPPET)
    cmd = [GCC, "-O2", "-fPIC", "-fno-asynchronous-unwind-tables", *flags, "-c", str(src)]
    subprocess.run([*cmd, "-o", str(obj)], check=True)
    return obj.read_bytes()


def _reloc_types(obj: bytes) -> set[int]:
    sections = _parse_sections(obj)
    loaded = {s.index for s in sections if _is_loaded(s)}
    return {r.type for r in _parse_relocs(obj, sections, loaded)}


def _expected(n: int) -> list[float]:
    table = [1.5, 2.5, -3.5, 4.25]
    return [
        struct.unpack("f", struct.pack("f", math.sin(table[i & 3])))[0]
        + (table[i & 3] * 2.0 if i % 2 == 0 else -table[i & 3])
        for i in range(n)
    ]


def _run(code: LoadedCode, n: int = 8) -> list[float]:
    out = (ctypes.c_float * n)()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)(code.address)
    fn(ctypes.addressof(out), n)
    return list(out)


@pytest.mark.parametrize(
    ("flags", "relocs"),
    [((), {2, 4, 1}), (("-fno-plt",), {2, 1, 41})],  # PC32, PLT32 / GOTPCRELX, and 64
    ids=["plt", "no-plt"],
)
def test_gcc_object_with_data_and_libm_calls_runs(
    tmp_path: Path, flags: tuple[str, ...], relocs: set[int]
) -> None:
    obj = _gcc_object(tmp_path, *flags)
    assert relocs <= _reloc_types(obj)
    code = load_elf(obj, "kernel")
    got = _run(code)
    assert got == pytest.approx(_expected(8), rel=1e-6)
    counter = ctypes.CFUNCTYPE(ctypes.c_float)(code.symbols["get_counter"])
    assert counter() == 1.0  # .bss starts zeroed and is writable
    _run(code)
    assert counter() == 2.0


def _mappings(code: LoadedCode) -> list[str]:
    """Permission strings of /proc/self/maps entries inside the loaded code's range."""
    perms = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        span, perm = line.split()[:2]
        lo, hi = (int(x, 16) for x in span.split("-"))
        if lo < code.base + code.size and hi > code.base:
            perms.append(perm)
    return perms


def test_no_page_is_writable_and_executable(tmp_path: Path) -> None:
    code = load_elf(_gcc_object(tmp_path), "kernel")
    perms = _mappings(code)
    assert any(p.startswith("r-x") for p in perms)
    assert all(not ("w" in p and "x" in p) for p in perms)


def test_free_unmaps_and_is_idempotent(tmp_path: Path) -> None:
    code = load_elf(_gcc_object(tmp_path), "kernel")
    base = code.base
    code.free()
    code.free()
    assert code.freed
    assert code.address == 0
    assert not any(
        int(line.split("-")[0], 16) == base
        for line in Path("/proc/self/maps").read_text().splitlines()
    )


def test_not_elf_is_rejected() -> None:
    with pytest.raises(ElfLoadError, match="not an ELF file"):
        load_elf(b"\0" * 64, "kernel")


def test_other_machines_are_rejected(tmp_path: Path) -> None:
    obj = bytearray(_gcc_object(tmp_path))
    struct.pack_into("<H", obj, 18, 183)  # EM_AARCH64
    with pytest.raises(ElfLoadError, match="machine 183 is not supported"):
        load_elf(bytes(obj), "kernel")


def test_missing_symbol_names_what_exists(tmp_path: Path) -> None:
    with pytest.raises(ElfLoadError, match=r"no function 'nope'.*kernel"):
        load_elf(_gcc_object(tmp_path), "nope")


def test_undefined_external_is_named(tmp_path: Path) -> None:
    if GCC is None:
        pytest.skip("no C compiler")
    src, obj = tmp_path / "u.c", tmp_path / "u.o"
    src.write_text("void fusegrad_no_such_fn(void); void k(void) { fusegrad_no_such_fn(); }\n")
    subprocess.run([GCC, "-O2", "-fPIC", "-c", str(src), "-o", str(obj)], check=True)
    with pytest.raises(ElfLoadError, match="undefined symbol 'fusegrad_no_such_fn'"):
        load_elf(obj.read_bytes(), "k")
