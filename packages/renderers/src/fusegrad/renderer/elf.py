"""Load an ELF relocatable object (``.o`` bytes) into our own executable memory.

Why our own loader instead of the platform's (``dlopen`` of a shared library):

* both CPU compilers produce the same artifact, a relocatable object (llvmlite's
  ``TargetMachine.emit_object`` in process, ``cc -c`` for C), so one loader serves both and
  the compile cache stores plain bytes;
* ``dlopen`` needs a file on disk (a temporary ``.so`` per kernel, plus a link step); here
  nothing touches the file system after compilation;
* the mapping is ours: we choose the protections (map read-write, copy and relocate, then
  switch code to read-execute and constants to read-only, so no page is ever writable and
  executable at once) and we can free it when the kernel is dropped, which ``dlclose`` does
  not promise.

A kernel object is small and simple — ``.text``, constant pools in ``.rodata*``, perhaps
``.data``/``.bss``, and calls to libm (``sinf``, ``exp2``...) or libc (``memset``) — so the
loader only needs x86-64's handful of relocation types. Calls and GOT references to external
functions go through a small stub table and GOT placed inside the mapping, so they reach
libraries anywhere in the address space. External symbols are found with ``dlsym`` in the
running process, libm and libgcc_s. Other machines (aarch64) are rejected with a clear error.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import json
import mmap
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fusegrad.renderer import codepages
from fusegrad.uop import DType, dtypes

# -- ELF constants ---------------------------------------------------------------------------

_ELF_MAGIC = b"\x7fELF"
_ELFCLASS64 = 2
_ELFDATA2LSB = 1
_ET_REL = 1
_EM_X86_64 = 62
_SHT_RELA = 4
_SHT_NOBITS = 8
_SHT_REL = 9
_SHF_WRITE = 0x1
_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4
_SHN_UNDEF = 0
_SHN_ABS = 0xFFF1
_SHN_COMMON = 0xFFF2
_STB_LOCAL = 0

# x86-64 relocation types (System V AMD64 psABI, table 4.9)
_R_NONE = 0
_R_64 = 1
_R_PC32 = 2
_R_PLT32 = 4
_R_GOTPCREL = 9
_R_32 = 10
_R_32S = 11
_R_PC64 = 24
_R_GOTPCRELX = 41
_R_REX_GOTPCRELX = 42
_GOT_RELOCS = frozenset({_R_GOTPCREL, _R_GOTPCRELX, _R_REX_GOTPCRELX})

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")

_PAGE = mmap.PAGESIZE
_STUB_SIZE = 8  # jmp *disp32(%rip) is 6 bytes; 8 keeps the stubs aligned


class ElfLoadError(RuntimeError):
    """A compiled object could not be loaded: a malformed or unsupported ELF file, a
    relocation we don't handle, or an external symbol that no loaded library defines."""


# -- parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Section:
    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    align: int


@dataclass(frozen=True, slots=True)
class _Symbol:
    name: str
    bind: int
    shndx: int
    value: int
    size: int = 0


@dataclass(frozen=True, slots=True)
class _Reloc:
    section: int  # the section the relocation patches
    offset: int
    type: int
    symbol: int
    addend: int


def _cstr(table: bytes, start: int) -> str:
    end = table.index(b"\0", start)
    return table[start:end].decode()


def _parse_sections(obj: bytes) -> list[_Section]:
    if len(obj) < _EHDR.size or obj[:4] != _ELF_MAGIC:
        raise ElfLoadError("load_elf: not an ELF file (bad magic)")
    if obj[4] != _ELFCLASS64 or obj[5] != _ELFDATA2LSB:
        raise ElfLoadError("load_elf: only little-endian 64-bit ELF objects are supported")
    fields = _EHDR.unpack_from(obj, 0)
    e_type, e_machine, shoff, shnum, shstrndx = (
        fields[1],
        fields[2],
        fields[6],
        fields[12],
        fields[13],
    )
    if e_type != _ET_REL:
        raise ElfLoadError(f"load_elf: expected a relocatable object (ET_REL), got e_type={e_type}")
    if e_machine != _EM_X86_64:
        raise ElfLoadError(
            f"load_elf: machine {e_machine} is not supported (only x86-64, e_machine=62)"
        )
    raw = [_SHDR.unpack_from(obj, shoff + i * _SHDR.size) for i in range(shnum)]
    names = obj[raw[shstrndx][4] : raw[shstrndx][4] + raw[shstrndx][5]]
    return [
        _Section(i, _cstr(names, h[0]), h[1], h[2], h[4], h[5], h[6], h[7], max(h[8], 1))
        for i, h in enumerate(raw)
    ]


def _parse_symbols(obj: bytes, sections: list[_Section]) -> list[_Symbol]:
    symtab = next((s for s in sections if s.type == 2), None)  # SHT_SYMTAB
    if symtab is None:
        return []
    strtab = sections[symtab.link]
    names = obj[strtab.offset : strtab.offset + strtab.size]
    out = []
    for i in range(symtab.size // _SYM.size):
        st_name, info, _, shndx, value, size = _SYM.unpack_from(obj, symtab.offset + i * _SYM.size)
        out.append(_Symbol(_cstr(names, st_name), info >> 4, shndx, value, size))
    return out


def _parse_relocs(obj: bytes, sections: list[_Section], loaded: set[int]) -> list[_Reloc]:
    out = []
    for sec in sections:
        if sec.type == _SHT_REL and sec.info in loaded:
            raise ElfLoadError(f"load_elf: REL relocations ({sec.name}) are not supported")
        if sec.type != _SHT_RELA or sec.info not in loaded:
            continue
        for i in range(sec.size // _RELA.size):
            off, info, addend = _RELA.unpack_from(obj, sec.offset + i * _RELA.size)
            out.append(_Reloc(sec.info, off, info & 0xFFFFFFFF, info >> 32, addend))
    return out


def _is_loaded(sec: _Section) -> bool:
    """Sections that become memory: allocated ones, minus unwind tables and notes (kernels
    are leaf code that never unwinds)."""
    if not sec.flags & _SHF_ALLOC:
        return False
    return not sec.name.startswith((".eh_frame", ".note"))


# -- external symbols -------------------------------------------------------------------------


@functools.cache
def _libraries() -> tuple[ctypes.CDLL, ...]:
    libs = [ctypes.CDLL(None)]
    for name in ("m", "gcc_s", "c"):
        path = ctypes.util.find_library(name)
        if path is None:
            continue
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return tuple(libs)


@functools.cache
def resolve_external(name: str) -> int:
    """The address of a function in the running process, libm, libgcc_s or libc."""
    for lib in _libraries():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        addr = ctypes.cast(fn, ctypes.c_void_p).value
        if addr:
            return addr
    raise ElfLoadError(f"load_elf: undefined symbol {name!r} (not in libc, libm or libgcc_s)")


# -- memory ---------------------------------------------------------------------------------


class _Libc:
    """mmap/mprotect/munmap through ctypes with correct prototypes."""

    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise ElfLoadError(f"load_elf: needs Linux mmap semantics, running on {sys.platform}")
        libc = ctypes.CDLL(None, use_errno=True)
        self.mmap = libc.mmap
        self.mmap.restype = ctypes.c_void_p
        self.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        ]
        self.mprotect = libc.mprotect
        self.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.munmap = libc.munmap
        self.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


@functools.cache
def _libc() -> _Libc:
    return _Libc()


_PROT_R, _PROT_W, _PROT_X = 1, 2, 4


def _map_rw(size: int) -> int:
    libc = _libc()
    addr = libc.mmap(None, size, _PROT_R | _PROT_W, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        raise ElfLoadError(f"load_elf: mmap of {size} bytes failed (errno {ctypes.get_errno()})")
    return int(addr)


def _protect(addr: int, size: int, prot: int) -> None:
    if size and _libc().mprotect(addr, size, prot) != 0:
        raise ElfLoadError(f"load_elf: mprotect failed (errno {ctypes.get_errno()})")


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


# -- layout -----------------------------------------------------------------------------------


@dataclass
class _Layout:
    """Offsets (from the mapping base) of every loaded section, the GOT and the stubs, in
    three page-aligned regions: code (RX), constants (R), data (RW)."""

    sections: dict[int, int] = field(default_factory=dict)
    got: dict[str, int] = field(default_factory=dict)
    stubs: dict[str, int] = field(default_factory=dict)
    regions: list[tuple[int, int, int]] = field(default_factory=list)  # (offset, size, prot)
    size: int = 0
    writable: set[int] = field(default_factory=set)  # indices of the data (RW) sections


def _region_of(sec: _Section) -> int:
    if sec.flags & _SHF_EXECINSTR:
        return 0
    return 2 if sec.flags & _SHF_WRITE else 1


def _plan(sections: list[_Section], externals: list[str], page: int = _PAGE) -> _Layout:
    """The image's layout; regions aligned to ``page`` (a mapping of its own: the page size,
    for the protections; shared code pages: a cache line)."""
    layout = _Layout()
    groups: list[list[_Section]] = [[], [], []]
    for sec in sections:
        if _is_loaded(sec):
            groups[_region_of(sec)].append(sec)
    offset = 0
    for region, prot in enumerate((_PROT_R | _PROT_X, _PROT_R, _PROT_R | _PROT_W)):
        start = offset
        for sec in groups[region]:
            offset = _round_up(offset, sec.align)
            layout.sections[sec.index] = offset
            if region == 2:
                layout.writable.add(sec.index)
            offset += sec.size
        if region == 0:  # jump stubs to external functions live with the code
            for name in externals:
                layout.stubs[name] = offset
                offset += _STUB_SIZE
        if region == 1:  # the GOT is read-only once relocated
            offset = _round_up(offset, 8)
            for name in externals:
                layout.got[name] = offset
                offset += 8
        offset = _round_up(offset, page)
        layout.regions.append((start, offset - start, prot))
    layout.size = max(offset, page)
    return layout


# -- relocation -------------------------------------------------------------------------------


@dataclass
class _Linker:
    """Resolves symbols and patches one image at a known base address."""

    image: bytearray
    base: int
    layout: _Layout
    symbols: list[_Symbol]
    sections: list[_Section]
    data_delta: int = 0  # shared code pages: data is used through the writable view

    def section_address(self, index: int) -> int:
        """Where section ``index`` lives at run time."""
        delta = self.data_delta if index in self.layout.writable else 0
        return self.base + self.layout.sections[index] + delta

    def symbol_address(self, sym: _Symbol) -> int:
        if sym.shndx == _SHN_UNDEF:
            return resolve_external(sym.name)
        if sym.shndx == _SHN_ABS:
            return sym.value
        if sym.shndx == _SHN_COMMON or sym.shndx not in self.layout.sections:
            raise ElfLoadError(
                f"load_elf: symbol {sym.name!r} lives in an unsupported section ({sym.shndx})"
            )
        return self.section_address(sym.shndx) + sym.value

    def call_target(self, sym: _Symbol) -> int:
        """Where a call lands: the symbol itself, or its stub when it is external."""
        if sym.shndx == _SHN_UNDEF:
            return self.base + self.layout.stubs[sym.name]
        return self.symbol_address(sym)

    def put(self, offset: int, fmt: str, value: int, what: str) -> None:
        try:
            struct.pack_into(fmt, self.image, offset, value)
        except struct.error as exc:
            raise ElfLoadError(f"load_elf: relocation {what} out of range ({value:#x})") from exc

    def apply(self, rel: _Reloc) -> None:
        sym = self.symbols[rel.symbol]
        at = self.layout.sections[rel.section] + rel.offset
        place = self.section_address(rel.section) + rel.offset
        what = f"type {rel.type} against {sym.name or self.sections[sym.shndx].name!r}"
        if rel.type == _R_NONE:
            return
        if rel.type == _R_64:
            self.put(at, "<Q", (self.symbol_address(sym) + rel.addend) % (1 << 64), what)
        elif rel.type == _R_PC32:
            self.put(at, "<i", self.symbol_address(sym) + rel.addend - place, what)
        elif rel.type == _R_PC64:
            self.put(at, "<q", self.symbol_address(sym) + rel.addend - place, what)
        elif rel.type == _R_PLT32:
            self.put(at, "<i", self.call_target(sym) + rel.addend - place, what)
        elif rel.type in _GOT_RELOCS:
            slot = self.base + self.layout.got[self.got_name(sym)]
            self.put(at, "<i", slot + rel.addend - place, what)
        elif rel.type == _R_32:
            self.put(at, "<I", self.symbol_address(sym) + rel.addend, what)
        elif rel.type == _R_32S:
            self.put(at, "<i", self.symbol_address(sym) + rel.addend, what)
        else:
            raise ElfLoadError(f"load_elf: unsupported x86-64 relocation {what}")

    def got_name(self, sym: _Symbol) -> str:
        return sym.name if sym.shndx == _SHN_UNDEF else f"\0local:{sym.name}:{sym.shndx}"

    def fill_got_and_stubs(self) -> None:
        for name, off in self.layout.got.items():
            struct.pack_into("<Q", self.image, off, self._got_value(name))
        for name, off in self.layout.stubs.items():
            # jmp *disp32(%rip): ff 25 <disp32>, disp measured from the next instruction
            disp = (self.layout.got[name]) - (off + 6)
            self.image[off : off + 2] = b"\xff\x25"
            struct.pack_into("<i", self.image, off + 2, disp)
            self.image[off + 6 : off + _STUB_SIZE] = b"\xcc\xcc"

    def _got_value(self, name: str) -> int:
        if not name.startswith("\0local:"):
            return resolve_external(name)
        _, sym_name, shndx = name.split(":")
        sym = next(s for s in self.symbols if s.name == sym_name and s.shndx == int(shndx))
        return self.symbol_address(sym)


def _got_names(relocs: list[_Reloc], symbols: list[_Symbol]) -> list[str]:
    """Every symbol needing a GOT slot or a call stub: externals and GOT-referenced locals."""
    names: dict[str, None] = {}
    for rel in relocs:
        sym = symbols[rel.symbol]
        if sym.shndx == _SHN_UNDEF and rel.type != _R_NONE:
            names[sym.name] = None
        elif rel.type in _GOT_RELOCS:
            names[f"\0local:{sym.name}:{sym.shndx}"] = None
    return list(names)


# -- the public loader ------------------------------------------------------------------------


class LoadedCode:
    """Code loaded by ``load_elf``: ``address`` is the requested function's entry point.

    The memory lives as long as this object (or until ``free``); keep a reference for as
    long as anything may call ``address``. ``base``/``size`` are the program's bytes: a
    mapping of its own, or a piece of the shared code pages (``codepages``), whose
    ``release`` gives it back.
    """

    def __init__(
        self,
        base: int,
        size: int,
        address: int,
        symbols: dict[str, int],
        release: Callable[[], None] | None = None,
    ) -> None:
        self.base = base
        self.size = size
        self.address = address
        self.symbols = symbols
        self._release = release
        self._lock = threading.Lock()

    @property
    def freed(self) -> bool:
        """True once the memory was returned."""
        return self.base == 0

    def free(self) -> None:
        """Unmap the code (idempotent). Calling ``address`` afterwards crashes."""
        with self._lock:
            if not self.base:
                return
            if self._release is not None:
                self._release()
            else:
                _libc().munmap(self.base, self.size)
            self.base = 0
            self.address = 0

    def __del__(self) -> None:
        if getattr(self, "base", 0):
            try:
                self.free()
            except Exception:  # interpreter shutdown: libc may already be torn down
                return

    def __repr__(self) -> str:
        return f"LoadedCode(address={self.address:#x}, size={self.size})"


def load_elf(obj: bytes, symbol: str) -> LoadedCode:
    """Map the relocatable x86-64 ELF object ``obj`` into executable memory and return the
    loaded code with ``.address`` of the function ``symbol``.

    Raises ``ElfLoadError`` on a malformed object, an unsupported relocation, a missing
    ``symbol`` or an external function no loaded library defines.
    """
    sections = _parse_sections(obj)
    symbols = _parse_symbols(obj, sections)
    loaded = {s.index for s in sections if _is_loaded(s)}
    relocs = _parse_relocs(obj, sections, loaded)
    externals = _got_names(relocs, symbols)
    layout = _plan(sections, externals, codepages.ALIGN)
    piece = codepages.CODE_PAGES.allocate(layout.size)
    if piece is None:  # no shared code pages here: a mapping of its own
        layout = _plan(sections, externals)
    image = bytearray(layout.size)
    for sec in sections:
        if sec.index in loaded and sec.type != _SHT_NOBITS:
            off = layout.sections[sec.index]
            image[off : off + sec.size] = obj[sec.offset : sec.offset + sec.size]
    if piece is None:
        code = LoadedCode(_map_rw(layout.size), layout.size, 0, {})
    else:
        chunk, offset = piece
        release = functools.partial(codepages.CODE_PAGES.release, chunk, offset, layout.size)
        code = LoadedCode(chunk.rx + offset, layout.size, 0, {}, release)
    try:
        if piece is None:
            _link_and_protect(code, image, layout, symbols, sections, relocs)
        else:
            _link_shared(code, image, layout, symbols, sections, relocs, piece[0])
    except BaseException:
        code.free()  # nothing stays mapped when loading fails
        raise
    if symbol not in code.symbols:
        code.free()
        raise ElfLoadError(
            f"load_elf: no function {symbol!r} in the object (has {sorted(code.symbols)})"
        )
    code.address = code.symbols[symbol]
    return code


def _link_shared(
    code: LoadedCode,
    image: bytearray,
    layout: _Layout,
    symbols: list[_Symbol],
    sections: list[_Section],
    relocs: list[_Reloc],
    chunk: codepages.Chunk,
) -> None:
    """Relocate ``image`` for its place in a shared code chunk and write it through the
    chunk's writable view (code and constants run from the executable view, data is used
    through the writable one: ``data_delta``)."""
    linker = _Linker(image, code.base, layout, symbols, sections, chunk.size)
    linker.fill_got_and_stubs()
    for rel in relocs:
        linker.apply(rel)
    ctypes.memmove(code.base + chunk.size, bytes(image), layout.size)
    code.symbols = _global_symbols(linker, symbols, layout)


def _global_symbols(linker: _Linker, symbols: list[_Symbol], layout: _Layout) -> dict[str, int]:
    return {
        s.name: linker.symbol_address(s)
        for s in symbols
        if s.bind != _STB_LOCAL and s.shndx in layout.sections and s.name
    }


def _link_and_protect(
    code: LoadedCode,
    image: bytearray,
    layout: _Layout,
    symbols: list[_Symbol],
    sections: list[_Section],
    relocs: list[_Reloc],
) -> None:
    """Relocate ``image`` for its final address, copy it in, switch to the final protections
    and record the object's global symbols."""
    linker = _Linker(image, code.base, layout, symbols, sections)
    linker.fill_got_and_stubs()
    for rel in relocs:
        linker.apply(rel)
    ctypes.memmove(code.base, bytes(image), layout.size)
    for off, size, prot in layout.regions:
        _protect(code.base + off, size, prot)
    code.symbols = _global_symbols(linker, symbols, layout)


# -- TinyELF: a compiled kernel's object, readable and writable -------------------------------

_SHT_PROGBITS = 1
_SIGNATURE_SECTION = ".fusegrad.tinyelf"

Signature = tuple[tuple[str | None, int, DType, tuple[int, ...]], ...]
"""A kernel's parameters in call order: (None for a buffer / the Variable's name, the
buffer's element count / 1, dtype, () / the Variable's (min, max))."""


@dataclass(frozen=True, slots=True)
class ElfSection:
    """A section of an ELF object: its name, ``sh_type``, ``sh_flags`` and bytes (empty for
    a section without file data, like ``.bss``; ``size`` is still its size)."""

    name: str
    type: int
    flags: int
    size: int
    data: bytes


@dataclass(frozen=True, slots=True)
class ElfSymbol:
    """A symbol of an ELF object: the section it is in ("" when undefined: an external
    function), its offset there and size, and whether other objects can see it."""

    name: str
    section: str
    value: int
    size: int
    is_global: bool


@dataclass(frozen=True)
class TinyELF:
    """A compiled CPU kernel: the relocatable ELF object ``lib`` whose function ``name`` is
    the kernel, the ``target`` it was compiled for (a DEV string such as ``"CPU:LLVM"``, or
    a ``fusegrad.helpers.Target``), and its parameters (``signature``, see ``Signature``).

    Read it: ``sections``, ``symbols``, ``code()`` (the kernel function's machine code),
    ``load()`` (into executable memory). Write it: ``pack()`` gives one ELF file that also
    carries name, target and signature (in a section no loader maps), and
    ``TinyELF.unpack`` reads such a file back. A malformed object raises ``ElfLoadError``.
    """

    lib: bytes
    name: str
    target: Any
    signature: Signature
    profile_key: bytes | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.lib, (bytes, bytearray)):
            raise TypeError(f"TinyELF: lib must be bytes, got {type(self.lib).__name__}")
        defined = {s.name for s in self.symbols if s.section}
        if self.name not in defined:
            raise ElfLoadError(
                f"TinyELF: the object defines no function {self.name!r} (has {sorted(defined)})"
            )

    @property
    def sections(self) -> list[ElfSection]:
        """The object's sections, in file order (the null section left out)."""
        obj = bytes(self.lib)
        return [
            ElfSection(s.name, s.type, s.flags, s.size,
                       b"" if s.type == _SHT_NOBITS else obj[s.offset : s.offset + s.size])
            for s in _parse_sections(obj)[1:]
        ]  # fmt: skip

    @property
    def symbols(self) -> list[ElfSymbol]:
        """The object's named symbols (its functions, data and the externals it calls)."""
        obj = bytes(self.lib)
        sections = _parse_sections(obj)

        def where(shndx: int) -> str:
            return sections[shndx].name if 0 < shndx < len(sections) else ""

        return [
            ElfSymbol(s.name, where(s.shndx), s.value, s.size, s.bind != _STB_LOCAL)
            for s in _parse_symbols(obj, sections)
            if s.name
        ]

    def code(self) -> bytes:
        """The machine code of the kernel function ``name`` (before relocation)."""
        sym = next(s for s in self.symbols if s.name == self.name and s.section)
        sec = next(s for s in self.sections if s.name == sym.section)
        end = sym.value + sym.size if sym.size else len(sec.data)
        return sec.data[sym.value : end]

    def load(self) -> LoadedCode:
        """The object loaded into executable memory; ``.address`` is the kernel function."""
        return load_elf(bytes(self.lib), self.name)

    def pack(self) -> bytes:
        """One ELF file: ``lib`` plus a non-loaded section holding name, target and signature
        (``TinyELF.unpack`` reads it back; ``load_elf`` loads it like ``lib``)."""
        meta = {
            "name": self.name,
            "target": _target_text(self.target),
            "signature": [[n, size, dt.name, list(rng)] for n, size, dt, rng in self.signature],
            "profile_key": None if self.profile_key is None else self.profile_key.hex(),
            "header": bytes(self.lib[: _EHDR.size]).hex(),  # the original, to unpack exactly
            "length": len(self.lib),
        }
        return _append_section(bytes(self.lib), _SIGNATURE_SECTION, json.dumps(meta).encode())

    @staticmethod
    def unpack(data: bytes) -> TinyELF:
        """The TinyELF ``pack`` wrote into ``data`` (``lib`` exactly as it was)."""
        found = next((s for s in _parse_sections(data) if s.name == _SIGNATURE_SECTION), None)
        if found is None:
            raise ElfLoadError(f"TinyELF.unpack: no {_SIGNATURE_SECTION} section (not packed)")
        meta = json.loads(data[found.offset : found.offset + found.size])
        lib = bytes.fromhex(meta["header"]) + data[_EHDR.size : meta["length"]]
        names = dtypes.fields()
        signature = tuple(
            (n, int(size), names[dt], tuple(int(x) for x in rng))
            for n, size, dt, rng in meta["signature"]
        )
        key = meta["profile_key"]
        return TinyELF(lib, meta["name"], meta["target"], signature,
                       None if key is None else bytes.fromhex(key))  # fmt: skip


def _target_text(target: Any) -> str:
    """A target as its DEV string (a ``Target``-like object: its non-empty parts)."""
    if isinstance(target, str):
        return target
    parts = [getattr(target, f, "") for f in ("device", "renderer", "arch")]
    return ":".join(str(p) for p in parts if p)


def _append_section(obj: bytes, name: str, payload: bytes) -> bytes:
    """``obj`` with one more (non-allocated) section: the payload, a new section-name table
    and a new section-header table are appended and the ELF header points at them, so
    every byte of ``obj`` after its header stays where it was."""
    sections = _parse_sections(obj)
    fields = list(_EHDR.unpack_from(obj, 0))
    shoff, shnum, shstrndx = fields[6], fields[12], fields[13]
    headers = [_SHDR.unpack_from(obj, shoff + i * _SHDR.size) for i in range(shnum)]
    old_names = sections[shstrndx]
    names = obj[old_names.offset : old_names.offset + old_names.size] + name.encode() + b"\0"
    out = bytearray(obj)
    payload_at = len(out)
    out += payload
    names_at = len(out)
    out += names
    out += bytes(-len(out) % 8)
    new_shoff = len(out)
    name_index = old_names.size  # the new name starts where the old table ended
    strtab = list(headers[shstrndx])
    strtab[4], strtab[5] = names_at, len(names)
    headers[shstrndx] = tuple(strtab)
    headers.append((name_index, _SHT_PROGBITS, 0, 0, payload_at, len(payload), 0, 0, 1, 0))
    for h in headers:
        out += _SHDR.pack(*h)
    fields[6], fields[12] = new_shoff, shnum + 1
    out[: _EHDR.size] = _EHDR.pack(*fields)
    return bytes(out)
