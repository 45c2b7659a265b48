"""A minimal ELF64 relocatable object holding one function, so x86 kernels load through the
same loader as compiled ones (``load_elf``: mapped read-write, copied, then read-execute).

Sections: ``.text`` (code and constant pool: pool operands are rip-relative, so there are no
relocations), ``.symtab`` with the function as a global symbol, ``.strtab``, ``.shstrtab``.
"""

from __future__ import annotations

import struct

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_SHT_PROGBITS, _SHT_SYMTAB, _SHT_STRTAB = 1, 2, 3
_SHF_ALLOC_EXEC = 0x2 | 0x4
_STT_FUNC, _STT_SECTION, _STB_GLOBAL = 2, 3, 1


def _strings(names: list[str]) -> tuple[bytes, list[int]]:
    table, offsets = b"\0", []
    for n in names:
        offsets.append(len(table))
        table += n.encode() + b"\0"
    return table, offsets


def _pad(data: bytes, align: int) -> bytes:
    return data + b"\0" * (-len(data) % align)


def elf_object(name: str, code: bytes) -> bytes:
    """An ET_REL x86-64 object defining function ``name`` as ``code``."""
    strtab, (name_off,) = _strings([name])
    shstr, (o_text, o_sym, o_str, o_shstr) = _strings([".text", ".symtab", ".strtab", ".shstrtab"])
    symtab = (
        _SYM.pack(0, 0, 0, 0, 0, 0)
        + _SYM.pack(0, _STT_SECTION, 0, 1, 0, 0)
        + _SYM.pack(name_off, _STB_GLOBAL << 4 | _STT_FUNC, 0, 1, 0, len(code))
    )
    body = bytearray(_pad(b"\0" * _EHDR.size, 64))
    text_at = len(body)
    body += _pad(code, 8)
    sym_at = len(body)
    body += symtab
    str_at = len(body)
    body += strtab
    shstr_at = len(body)
    body += _pad(shstr, 8)
    shoff = len(body)
    headers = [
        _SHDR.pack(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        _SHDR.pack(o_text, _SHT_PROGBITS, _SHF_ALLOC_EXEC, 0, text_at, len(code), 0, 0, 64, 0),
        _SHDR.pack(o_sym, _SHT_SYMTAB, 0, 0, sym_at, len(symtab), 3, 2, 8, _SYM.size),
        _SHDR.pack(o_str, _SHT_STRTAB, 0, 0, str_at, len(strtab), 0, 0, 1, 0),
        _SHDR.pack(o_shstr, _SHT_STRTAB, 0, 0, shstr_at, len(shstr), 0, 0, 1, 0),
    ]
    body += b"".join(headers)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    header = _EHDR.pack(ident, 1, 62, 1, 0, 0, shoff, 0, _EHDR.size, 0, 0, _SHDR.size, 5, 4)
    body[: _EHDR.size] = header
    return bytes(body)
