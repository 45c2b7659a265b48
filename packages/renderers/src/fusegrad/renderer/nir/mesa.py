"""Loading Mesa (tinymesa's ``libtinymesa_cpu.so``) and the LLVM 20 it links against.

tinymesa's CPU library needs ``libLLVM.so.20.1``, which it does not ship. The PyPI package
``karellen-llvm-core==20.1.8`` does (with its libc++): it is loaded first, by full path, so the
library's dependency resolves to it by soname. That LLVM is built without RTTI, so two C++
typeinfo objects Mesa's MCJIT memory manager refers to are missing; a tiny shared object made
here in memory defines them (zero bytes: only C++ ``dynamic_cast``/exceptions on those classes
would read them, and the MCJIT path is never used: the LVP compiler takes llvmpipe's LLVM IR
as text). Mesa's C++ functions of that path, which pass libstdc++ objects, stay unbound (the
library is opened with lazy binding).
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fusegrad.renderer.nir import bindings

# symbols Mesa's data refers to (so resolved at load time) that this LLVM lacks: typeinfo (no
# RTTI) and the libstdc++-typed functions of the MCJIT path in a vtable (LLVM uses libc++);
# versioned references accept a definition from an unversioned object
_MISSING = (
    "_ZTIN4llvm19RTDyldMemoryManagerE",
    "_ZTIN4llvm11ObjectCacheE",
    "_ZN4llvm13EngineBuilder21setMCJITMemoryManagerESt10unique_ptrINS_19RTDyldMemoryManagerESt14default_deleteIS2_EE",
    "_ZN4llvm13EngineBuilderC1ESt10unique_ptrINS_6ModuleESt14default_deleteIS2_EE",
    "_ZN4llvm19RTDyldMemoryManager25getSymbolAddressInProcessERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    "_ZN4llvm23LegacyJITSymbolResolver20getResponsibilitySetERKSt3setINS_9StringRefESt4lessIS2_ESaIS2_EE",
    "_ZN4llvm23LegacyJITSymbolResolver6lookupERKSt3setINS_9StringRefESt4lessIS2_ESaIS2_EENS_15unique_functionIFvNS_8ExpectedISt3mapIS2_NS_18JITEvaluatedSymbolES4_SaISt4pairIKS2_SC_EEEEEEEE",
)
_LLVM_DIST = "karellen-llvm-core"
_LLVM_RUNTIME = ("libunwind.so.1", "libc++abi.so.1", "libc++.so.1", "libLLVM.so.20.1")


class MesaUnavailable(RuntimeError):
    """tinymesa or the LLVM 20 it needs is not installed (says what to install)."""


@dataclass(frozen=True)
class Mesa:
    """The loaded libraries: ``lib`` (NIR, llvmpipe; prototypes bound), ``llvm`` (LLVM 20's
    C API), and the opcode / intrinsic tables."""

    lib: Any
    llvm: Any
    op_infos: Any
    intrinsic_infos: Any


def _find_llvm_runtime() -> list[Path]:
    try:
        dist = importlib.metadata.distribution(_LLVM_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise MesaUnavailable(
            f"tinymesa's libtinymesa_cpu.so needs LLVM 20: pip install '{_LLVM_DIST}==20.1.8'"
            " (or pip install 'fusegrad-renderers[nir]')"
        ) from None
    files = {Path(str(f)).name: Path(str(dist.locate_file(f))) for f in dist.files or ()}
    missing = [n for n in _LLVM_RUNTIME if n not in files]
    if missing:
        raise MesaUnavailable(f"{_LLVM_DIST} lacks {missing}: reinstall it")
    return [files[n].resolve() for n in _LLVM_RUNTIME]


def _tinymesa_path() -> Path:
    try:
        import tinymesa  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        raise MesaUnavailable(
            "the NIR renderer needs Mesa: pip install 'tinymesa==25.2.7.2'"
            " (or pip install 'fusegrad-renderers[nir]')"
        ) from None
    version = importlib.metadata.version("tinymesa")
    if version != bindings.TINYMESA_VERSION:
        raise MesaUnavailable(
            f"tinymesa {version} is installed; the NIR bindings are for "
            f"{bindings.TINYMESA_VERSION} (pip install 'tinymesa=={bindings.TINYMESA_VERSION}')"
        )
    return Path(tinymesa.libtinymesa_cpu)


def stub_library(symbols: tuple[str, ...], object_size: int = 32) -> bytes:
    """A minimal ELF64 shared object defining each of ``symbols`` as a zeroed object in
    non-executable memory (a call faults at once instead of running anything).

    Layout: ELF header, two program headers (one read-write PT_LOAD of the whole file, since
    the loader relocates .dynamic in place; PT_DYNAMIC), then .hash, .dynsym, .dynstr,
    .dynamic and the objects, 8-byte aligned.
    """
    names = [b"", *(s.encode() for s in symbols)]
    strtab = b"\0" + b"".join(n + b"\0" for n in names[1:])
    name_offsets = [0]
    for n in names[1:]:
        name_offsets.append(strtab.index(n + b"\0", 1))
    nsyms = len(names)
    hash_table = struct.pack("<II", 1, nsyms) + struct.pack("<I", nsyms - 1 if nsyms > 1 else 0)
    chains = [0] + [i - 1 for i in range(1, nsyms)]  # one bucket: a chain from the last symbol
    hash_table += struct.pack(f"<{nsyms}I", *chains)

    def align(n: int) -> int:
        return (n + 7) & ~7

    header_size = 64 + 2 * 56
    hash_at = header_size
    sym_at = align(hash_at + len(hash_table))
    str_at = sym_at + 24 * nsyms
    dyn_at = align(str_at + len(strtab))
    ndyn = 7
    data_at = align(dyn_at + 16 * ndyn)
    total = data_at + object_size * (nsyms - 1)
    symtab = b"\0" * 24
    for i in range(1, nsyms):  # STB_GLOBAL | STT_OBJECT, default visibility, in section 1
        value = data_at + object_size * (i - 1)
        symtab += struct.pack("<IBBHQQ", name_offsets[i], 0x11, 0, 1, value, object_size)
    dt_hash, dt_strtab, dt_symtab, dt_strsz, dt_syment = 4, 5, 6, 10, 11
    dynamic = struct.pack(
        f"<{2 * ndyn}Q",
        dt_hash, hash_at, dt_strtab, str_at, dt_symtab, sym_at,
        dt_strsz, len(strtab), dt_syment, 24, 0, 0, 0, 0,
    )  # fmt: skip
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    ehdr = ident + struct.pack(
        "<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0
    )  # ET_DYN, x86-64, program headers right after, no section headers
    load = struct.pack("<IIQQQQQQ", 1, 6, 0, 0, 0, total, total, 0x1000)  # PT_LOAD, RW
    dyn = struct.pack("<IIQQQQQQ", 2, 6, dyn_at, dyn_at, dyn_at, 16 * ndyn, 16 * ndyn, 8)
    image = bytearray(total)
    for at, blob in (
        (0, ehdr + load + dyn), (hash_at, hash_table), (sym_at, symtab),
        (str_at, strtab), (dyn_at, dynamic),
    ):  # fmt: skip
        image[at : at + len(blob)] = blob
    return bytes(image)


def _load_from_memory(image: bytes, name: str) -> Any:
    """dlopen a library given as bytes, globally (through a temporary file, deleted at once:
    a unique path, since the loader reuses a library already opened under the same name)."""
    fd, path = tempfile.mkstemp(suffix=".so", prefix=f"{name}-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        return ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    finally:
        os.unlink(path)


def mesa_unavailable() -> str | None:
    """Why the NIR renderer can't run here (None: it can)."""
    try:
        load_mesa()
    except (MesaUnavailable, OSError) as exc:
        return str(exc)
    return None


@functools.cache
def load_mesa() -> Mesa:
    """Load (once) LLVM 20, the typeinfo stub and Mesa; raises MesaUnavailable saying what to
    install when a piece is missing."""
    mesa_path = _tinymesa_path()
    runtime = _find_llvm_runtime()
    import llvmlite.binding  # noqa: F401 - its LLVM 22 first: it binds symbolically anyway

    handles = [ctypes.CDLL(str(p), mode=os.RTLD_LOCAL) for p in runtime]
    _load_from_memory(stub_library(_MISSING), "fusegrad-llvm20-stub")
    lib = ctypes.CDLL(str(mesa_path), mode=os.RTLD_LOCAL | os.RTLD_LAZY)
    bindings.bind(lib)
    if not lib.lp_build_init():  # gallivm's one-time setup (LLVM targets, SIMD width)
        raise MesaUnavailable("llvmpipe's lp_build_init failed")
    tables = {
        name: table.in_dll(lib, name) for name, table in bindings.GLOBALS.items()
    }  # fmt: skip
    return Mesa(lib, handles[-1], tables["nir_op_infos"], tables["nir_intrinsic_infos"])
