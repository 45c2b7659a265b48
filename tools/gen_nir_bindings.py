#!/usr/bin/env python3
"""Generate fusegrad's ctypes bindings of Mesa's NIR and llvmpipe from tinymesa's DWARF info.

tinymesa (PyPI) ships ``libtinymesa_cpu.so`` without headers but with full debug info. For
each function in ``FUNCTIONS`` this script finds the compile unit that defines it (through
``.debug_aranges`` and the symbol's address), reads its prototype, and writes:

* the enums in ``ENUMS`` as ``IntEnum`` classes;
* the structs in ``STRUCTS`` (and every struct or union they hold by value) as ctypes
  classes whose field offsets and sizes are checked against the DWARF layout here, bitfields
  as properties over their bytes; pointers to any other struct are ``c_void_p``;
* ``PROTOTYPES``: name -> (restype, argtypes), applied by ``bind(lib)``.

    python tools/gen_nir_bindings.py            # rewrite the checked-in module
    python tools/gen_nir_bindings.py --check    # exit 1 if it differs (CI: tests do this)
    python tools/gen_nir_bindings.py --dump nir_alu_instr   # a struct's layout, C-like

Needs ``pyelftools`` and ``tinymesa`` (both in tools/requirements-dev.txt).
"""

from __future__ import annotations

import argparse
import ctypes
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = (
    Path(__file__).resolve().parent.parent
    / "packages/renderers/src/fusegrad/renderer/nir/bindings.py"
)
TINYMESA_VERSION = "25.2.7.2"

# what the renderer and the LVP compiler call
FUNCTIONS = [
    # shaders, builder, instructions
    "nir_shader_create",
    "nir_builder_init_simple_shader",
    "nir_builder_alu_instr_finish_and_insert",
    "nir_builder_instr_insert",
    "nir_alu_instr_create",
    "nir_intrinsic_instr_create",
    "nir_load_const_instr_create",
    "nir_jump_instr_create",
    "nir_deref_instr_create",
    "nir_def_init",
    "nir_local_variable_create",
    "nir_variable_create",
    "nir_push_loop",
    "nir_pop_loop",
    "nir_push_if",
    "nir_push_else",
    "nir_pop_if",
    "nir_validate_shader",
    "nir_print_shader",
    "nir_serialize",
    "nir_deserialize",
    "nir_shader_clone",
    "nir_index_ssa_defs",
    # glsl types of variables
    "glsl_simple_explicit_type",
    "glsl_array_type",
    "glsl_get_natural_size_align_bytes",
    # passes
    "nir_lower_vars_to_ssa",
    "nir_lower_vars_to_explicit_types",
    "nir_lower_explicit_io",
    "nir_lower_alu_to_scalar",
    "nir_lower_phis_to_scalar",
    "nir_lower_int64",
    "nir_lower_idiv",
    "nir_lower_system_values",
    "nir_lower_compute_system_values",
    "nir_copy_prop",
    "nir_opt_dce",
    "nir_opt_cse",
    "nir_opt_dead_cf",
    "nir_opt_algebraic",
    "nir_opt_algebraic_late",
    "nir_opt_constant_folding",
    "nir_opt_if",
    "nir_opt_loop",
    "nir_opt_peephole_select",
    "nir_opt_remove_phis",
    "nir_opt_undef",
    "nir_opt_deref",
    "nir_opt_copy_prop_vars",
    "nir_remove_dead_variables",
    "nir_convert_from_ssa",
    # llvmpipe: NIR -> LLVM IR
    "lp_build_init",
    "lp_build_init_native_width",
    "gallivm_create",
    "gallivm_destroy",
    "gallivm_verify_function",
    "lp_build_nir_soa",
    "lp_build_nir_soa_prepasses",
    "lp_build_mask_begin",
    "lp_build_mask_end",
    "lp_build_one",
    "lp_build_jit_resources_type",
    # memory
    "ralloc_free",
    "ralloc_context",
    "blob_init",
    "blob_finish_get_buffer",
    "blob_reader_init",
]

STRUCTS = [
    "nir_builder",
    "nir_shader",
    "nir_instr",
    "nir_def",
    "nir_src",
    "nir_alu_src",
    "nir_alu_instr",
    "nir_intrinsic_instr",
    "nir_load_const_instr",
    "nir_jump_instr",
    "nir_deref_instr",
    "nir_variable",
    "nir_op_info",
    "nir_intrinsic_info",
    "nir_shader_compiler_options",
    "lp_build_tgsi_params",
    "lp_bld_tgsi_system_values",
    "lp_type",
    "lp_build_mask_context",
    "gallivm_state",
    "blob",
    "blob_reader",
    "shader_info",
    "lp_context_ref",
    "nir_lower_idiv_options",
]

ENUMS = [
    "nir_op",
    "nir_intrinsic_op",
    "nir_intrinsic_index_flag",
    "gl_shader_stage",
    "nir_variable_mode",
    "nir_jump_type",
    "nir_deref_type",
    "glsl_base_type",
    "nir_alu_type",
    "gl_access_qualifier",
    "nir_memory_semantics",
    "mesa_scope",
    "nir_lower_int64_options",
    "nir_lower_doubles_options",
    "nir_address_format",
    "nir_rounding_mode",
    "float_controls",
]

# exported tables: name -> (element struct, the enum counting its entries)
# anonymous enums without a typedef, found by one of their members
ENUM_BY_MEMBER = {
    "nir_intrinsic_index_flag": "NIR_INTRINSIC_ALIGN_MUL",
    "float_controls": "FLOAT_CONTROLS_SIGNED_ZERO_PRESERVE_FP32",
}

GLOBALS = {
    "nir_op_infos": ("nir_op_info", "nir_op"),
    "nir_intrinsic_infos": ("nir_intrinsic_info", "nir_intrinsic_op"),
}

SCALARS = {  # (DW_ATE encoding class, byte size) -> ctypes name
    ("bool", 1): "c_bool",
    ("signed", 1): "c_int8",
    ("signed", 2): "c_int16",
    ("signed", 4): "c_int32",
    ("signed", 8): "c_int64",
    ("signed", 16): "c_byte * 16",
    ("unsigned", 1): "c_uint8",
    ("unsigned", 2): "c_uint16",
    ("unsigned", 4): "c_uint32",
    ("unsigned", 8): "c_uint64",
    ("unsigned", 16): "c_byte * 16",
    ("float", 2): "c_uint16",
    ("float", 4): "c_float",
    ("float", 8): "c_double",
    ("float", 16): "c_longdouble",
}
CTYPES_NAMES = ("POINTER", "c_bool", "c_byte", "c_char_p", "c_double", "c_float", "c_int8",
    "c_int16", "c_int32", "c_int64", "c_longdouble", "c_uint8", "c_uint16", "c_uint32",
    "c_uint64", "c_void_p")  # fmt: skip
# DW_ATE_* encodings: address, boolean, float, signed, signed char, unsigned, unsigned char, UTF
ENCODINGS = {1: "unsigned", 2: "bool", 4: "float", 5: "signed", 6: "signed", 7: "unsigned",
    8: "unsigned", 16: "unsigned"}  # fmt: skip


# -- reading the DWARF ----------------------------------------------------------------------------


@dataclass
class Member:
    name: str
    offset: int
    ctype: str  # a ctypes expression, or "" for a bitfield
    size: int
    bit_offset: int = -1  # bitfields: offset in bits from the struct start
    bit_size: int = 0
    signed: bool = False


@dataclass
class Record:
    name: str
    union: bool
    size: int
    members: list[Member] = field(default_factory=list)
    anonymous: list[str] = field(default_factory=list)


class Reader:
    """Types and prototypes of the compile units that define the wanted functions."""

    def __init__(self, path: str) -> None:
        from elftools.elf.elffile import ELFFile

        self.file = open(path, "rb")  # noqa: SIM115 - pyelftools reads lazily
        self.elf = ELFFile(self.file)
        self.dwarf = self.elf.get_dwarf_info()
        self.aranges = self.dwarf.get_aranges()
        dynsym = self.elf.get_section_by_name(".dynsym")
        self.addresses = {s.name: s["st_value"] for s in dynsym.iter_symbols() if s["st_value"]}
        self.cus: dict[int, Any] = {}
        self.named: dict[tuple[str, str], Any] = {}  # (tag, name) -> DIE with a body
        self.records: dict[str, Record] = {}
        self.record_order: list[str] = []
        self.anon_count = 0

    def cu_of(self, symbol: str) -> Any:
        if symbol not in self.addresses:
            raise SystemExit(f"gen_nir_bindings: {symbol} is not exported by the library")
        offset = self.aranges.cu_offset_at_addr(self.addresses[symbol])
        if offset not in self.cus:
            cu = self.cus[offset] = self.dwarf.get_CU_at(offset)
            for die in cu.iter_DIEs():
                self._index(die)
        return self.cus[offset]

    def enum_with(self, member: str) -> Any:
        for key in sorted(self.cus):
            for die in self.cus[key].iter_DIEs():
                if die.tag != "DW_TAG_enumerator":
                    continue
                if die.attributes["DW_AT_name"].value.decode() == member:
                    return die.get_parent()
        return None

    def _index(self, die: Any) -> None:
        name = die.attributes.get("DW_AT_name")
        if name is None or "DW_AT_declaration" in die.attributes:
            return
        tag = die.tag
        external = tag == "DW_TAG_subprogram" and "DW_AT_external" in die.attributes
        if tag in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            self.named.setdefault(("record", name.value.decode()), die)
        elif tag in ("DW_TAG_enumeration_type", "DW_TAG_typedef", "DW_TAG_variable") or external:
            self.named.setdefault((tag, name.value.decode()), die)

    def find(self, kind: str, name: str) -> Any:
        die = self.named.get((kind, name))
        if die is None and kind == "record":  # a typedef of an anonymous struct
            typedef = self.named.get(("DW_TAG_typedef", name))
            die = None if typedef is None else self.strip(typedef)
        if die is None and kind == "DW_TAG_enumeration_type":
            typedef = self.named.get(("DW_TAG_typedef", name))
            die = None if typedef is None else self.strip(typedef)
        if die is None:
            raise SystemExit(f"gen_nir_bindings: no definition of {name} ({kind}) found")
        return die

    @staticmethod
    def strip(die: Any) -> Any:
        """Through typedefs and qualifiers to the type itself (None: void)."""
        while die is not None and die.tag in (
            "DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
            "DW_TAG_restrict_type", "DW_TAG_atomic_type",
        ):  # fmt: skip
            if "DW_AT_type" not in die.attributes:
                return None
            die = die.get_DIE_from_attribute("DW_AT_type")
        return die

    def type_of(self, die: Any) -> Any:
        if "DW_AT_type" not in die.attributes:
            return None
        return die.get_DIE_from_attribute("DW_AT_type")

    # -- types -> ctypes expressions ----------------------------------------------------------
    def ctype(self, die: Any, wanted: set[str]) -> str:
        """The ctypes expression of a type DIE; records it needs by value are added."""
        t = self.strip(die)
        if t is None:
            return "None"
        tag = t.tag
        if tag == "DW_TAG_base_type":
            enc = ENCODINGS[t.attributes["DW_AT_encoding"].value]
            return SCALARS[(enc, t.attributes["DW_AT_byte_size"].value)]
        if tag == "DW_TAG_enumeration_type":
            signed = self._enum_signed(t)
            return SCALARS[
                ("signed" if signed else "unsigned", t.attributes["DW_AT_byte_size"].value)
            ]
        if tag == "DW_TAG_pointer_type":
            return self._pointer(t, wanted)
        if tag == "DW_TAG_array_type":
            return self._array(t, wanted)
        if tag in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            return self.record(t, wanted, self.record_name(t, die))
        if tag == "DW_TAG_subroutine_type":
            return "c_void_p"
        raise SystemExit(f"gen_nir_bindings: unsupported type {tag}")

    def _enum_signed(self, t: Any) -> bool:
        base = self.type_of(t)
        if base is not None:
            base = self.strip(base)
            return bool(ENCODINGS[base.attributes["DW_AT_encoding"].value] == "signed")
        return any(c.attributes["DW_AT_const_value"].value < 0 for c in t.iter_children())

    def _pointer(self, t: Any, wanted: set[str]) -> str:
        target = self.type_of(t)
        inner = self.strip(target) if target is not None else None
        if inner is None:
            return "c_void_p"
        if (
            inner.tag == "DW_TAG_base_type"
            and inner.attributes["DW_AT_byte_size"].value == 1
            and ENCODINGS[inner.attributes["DW_AT_encoding"].value] == "signed"
        ):
            return "c_char_p"
        if inner.tag in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            name = self.record_name(inner, target)
            if name in wanted and "DW_AT_declaration" not in inner.attributes:
                self.record(inner, wanted, name)
                return f"POINTER({name})"
        return "c_void_p"

    def _array(self, t: Any, wanted: set[str]) -> str:
        expr = self.ctype(self.type_of(t), wanted)
        dims = []
        for sub in t.iter_children():
            if sub.tag != "DW_TAG_subrange_type":
                continue
            if "DW_AT_count" in sub.attributes:
                dims.append(sub.attributes["DW_AT_count"].value)
            elif "DW_AT_upper_bound" in sub.attributes:
                dims.append(sub.attributes["DW_AT_upper_bound"].value + 1)
            else:
                dims.append(0)  # a flexible array member
        for n in reversed(dims):
            expr = f"({expr}) * {n}"
        return expr

    def record_name(self, t: Any, via: Any = None) -> str:
        name = t.attributes.get("DW_AT_name")
        if name is not None:
            return str(name.value.decode())
        while via is not None and via.offset != t.offset:
            if via.tag == "DW_TAG_typedef":
                return str(via.attributes["DW_AT_name"].value.decode())
            via = self.type_of(via)
        self.anon_count += 1
        return f"_anon_{self.anon_count}"

    def record(self, t: Any, wanted: set[str], name: str | None = None) -> str:
        if "DW_AT_declaration" in t.attributes:
            raise SystemExit(f"gen_nir_bindings: only a declaration of {name}")
        name = name or self.record_name(t)
        if name in self.records:
            return name
        rec = Record(name, t.tag == "DW_TAG_union_type", t.attributes["DW_AT_byte_size"].value)
        self.records[name] = rec  # before the members: pointers back to it are fine
        for m in t.iter_children():
            if m.tag == "DW_TAG_member":
                self._member(rec, m, wanted)
        self.record_order.append(name)
        return name

    def _member(self, rec: Record, m: Any, wanted: set[str]) -> None:
        attrs = m.attributes
        mtype = self.type_of(m)
        if "DW_AT_bit_size" in attrs:
            base = self.strip(mtype)
            signed = (
                base.tag == "DW_TAG_base_type"
                and ENCODINGS[base.attributes["DW_AT_encoding"].value] == "signed"
            )
            bit = attrs["DW_AT_data_bit_offset"].value
            rec.members.append(
                Member(attrs["DW_AT_name"].value.decode(), bit // 8, "", 0, bit,
                       attrs["DW_AT_bit_size"].value, signed)
            )  # fmt: skip
            return
        offset = attrs["DW_AT_data_member_location"].value if not rec.union else 0
        if "DW_AT_name" in attrs:
            name = attrs["DW_AT_name"].value.decode()
        else:
            self.anon_count += 1
            name = f"_u{self.anon_count}"
            rec.anonymous.append(name)
        expr = self.ctype(mtype, wanted)
        size = self.byte_size(mtype)
        rec.members.append(Member(name, offset, expr, size))

    def byte_size(self, die: Any) -> int:
        t = self.strip(die)
        if t is None:
            return 0
        if t.tag == "DW_TAG_pointer_type":
            return 8
        if t.tag != "DW_TAG_array_type":
            return int(t.attributes["DW_AT_byte_size"].value)
        n = 1
        for sub in t.iter_children():
            if "DW_AT_count" in sub.attributes:
                n *= sub.attributes["DW_AT_count"].value
            elif "DW_AT_upper_bound" in sub.attributes:
                n *= sub.attributes["DW_AT_upper_bound"].value + 1
            else:
                n = 0
        return n * self.byte_size(self.type_of(t))

    # -- enums ----------------------------------------------------------------------------------
    def enum_values(self, name: str) -> list[tuple[str, int]]:
        die = self.enum_with(ENUM_BY_MEMBER[name]) if name in ENUM_BY_MEMBER else None
        die = die or self.find("DW_TAG_enumeration_type", name)
        return [
            (c.attributes["DW_AT_name"].value.decode(), c.attributes["DW_AT_const_value"].value)
            for c in die.iter_children()
            if c.tag == "DW_TAG_enumerator"
        ]

    # -- functions ------------------------------------------------------------------------------
    def prototype(self, fn: str, wanted: set[str]) -> tuple[str, list[str]]:
        self.cu_of(fn)
        die = self.find("DW_TAG_subprogram", fn)
        if "DW_AT_specification" in die.attributes:
            die = die.get_DIE_from_attribute("DW_AT_specification")
        ret = self.type_of(die)
        restype = "None" if ret is None else self.ctype(ret, wanted)
        args = [
            self.ctype(p.get_DIE_from_attribute("DW_AT_type"), wanted)
            for p in die.iter_children()
            if p.tag == "DW_TAG_formal_parameter"
        ]
        return restype, args


# -- writing the module ---------------------------------------------------------------------------


def _emit_record(rec: Record, out: list[str]) -> None:
    fields, props, cursor = [], [], 0
    for m in rec.members:
        if m.bit_size:
            props.append(m)
            continue
        if m.offset > cursor and not rec.union:
            fields.append(f'    ("_pad{cursor}", c_uint8 * {m.offset - cursor}),')
        fields.append(f'    ("{m.name}", {m.ctype}),')
        cursor = max(cursor, m.offset + m.size)
    # bitfields live in bytes no named field covers: padding fields take them
    if not rec.union and rec.size > cursor:
        fields.append(f'    ("_pad{cursor}", c_uint8 * {rec.size - cursor}),')
    if rec.union and not fields:
        fields.append(f'    ("_bytes", c_uint8 * {rec.size}),')
    if rec.anonymous:
        out.append(f"{rec.name}._anonymous_ = {tuple(rec.anonymous)!r}")
    out.append(f"{rec.name}._fields_ = [")
    out.extend(fields)
    out.append("]")
    for p in props:
        out.append(f"{rec.name}.{p.name} = _Bits({p.bit_offset}, {p.bit_size}, {p.signed})")


HEADER = '''"""ctypes bindings of Mesa's NIR and llvmpipe, as shipped by tinymesa {version}.

GENERATED by tools/gen_nir_bindings.py from the library's DWARF debug info; do not edit.
Regenerate with ``python tools/gen_nir_bindings.py`` (tests check it is current).
"""

# mypy: disable-error-code="misc, attr-defined"

from __future__ import annotations

import ctypes
import enum
from ctypes import {ctypes_names}
from typing import Any

TINYMESA_VERSION = "{version}"


class _Bits:
    """A bitfield: ``bits`` bits from bit ``offset`` of the struct."""

    def __init__(self, offset: int, bits: int, signed: bool) -> None:
        self.offset, self.bits, self.signed = offset, bits, signed

    def _span(self, obj: Any) -> tuple[Any, int, int]:
        first, last = self.offset // 8, (self.offset + self.bits - 1) // 8
        raw = (c_uint8 * (last - first + 1)).from_buffer(obj, first)
        return raw, self.offset - 8 * first, int.from_bytes(bytes(raw), "little")

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        _, shift, word = self._span(obj)
        value = (word >> shift) & ((1 << self.bits) - 1)
        if self.signed and value >> (self.bits - 1):
            value -= 1 << self.bits
        return value

    def __set__(self, obj: Any, value: int) -> None:
        raw, shift, word = self._span(obj)
        mask = ((1 << self.bits) - 1) << shift
        word = (word & ~mask) | ((int(value) << shift) & mask)
        raw[:] = word.to_bytes(len(raw), "little")
'''


def generate(lib_path: str) -> tuple[str, Reader]:
    r = Reader(lib_path)
    wanted = set(STRUCTS)
    for fn in FUNCTIONS:
        r.cu_of(fn)
    protos = {fn: r.prototype(fn, wanted) for fn in FUNCTIONS}
    for name in STRUCTS:
        r.record(r.find("record", name), wanted, name)
    out = [""]
    out.append("\n# -- enums " + "-" * 89 + "\n")
    for name in ENUMS:
        out.append(f"\nclass {name}(enum.IntEnum):")
        out.extend(f"    {k} = {v}" for k, v in r.enum_values(name))
        out.append("")
    out.append("\n# -- structs " + "-" * 87 + "\n")
    for name in r.record_order:
        kind = "Union" if r.records[name].union else "Structure"
        out.append(f"\nclass {name}(ctypes.{kind}):")
        out.append(f"    SIZE = {r.records[name].size}\n")
    out.append("")
    for name in r.record_order:
        _emit_record(r.records[name], out)
    out.append("\n# -- globals and functions " + "-" * 73 + "\n")
    out.append("GLOBALS: dict[str, Any] = {")
    for g, (elem, count) in GLOBALS.items():
        out.append(f'    "{g}": {elem} * (max({count}) + 1),')
    out.append("}")
    out.append("PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {")
    for fn, (restype, args) in protos.items():
        out.append(f'    "{fn}": ({restype}, [{", ".join(args)}]),')
    out.append("}")
    out.append(BIND)
    r.file.close()
    body = "\n".join(out) + "\n"
    used = sorted(n for n in CTYPES_NAMES if re.search(rf"\b{n}\b", body))
    head = HEADER.format(version=TINYMESA_VERSION, ctypes_names=", ".join(used))
    return _formatted(head + body), r


def _formatted(text: str) -> str:
    """The module as the project's pinned ruff leaves it (imports sorted, then formatted)."""
    for command in (["check", "--select", "I", "--fix", "--quiet"], ["format"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", str(OUT), "-"],
            input=text, capture_output=True, text=True, cwd=OUT.parents[6], check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"gen_nir_bindings: ruff {command[0]} failed:\n{done.stderr}")
        text = done.stdout
    return text


BIND = '''

def bind(lib: Any) -> Any:
    """Set ``restype``/``argtypes`` of every function in PROTOTYPES on a loaded library."""
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


def layout_errors() -> list[str]:
    """Structs whose ctypes size differs from the DWARF size (empty when all agree)."""
    records = [*ctypes.Structure.__subclasses__(), *ctypes.Union.__subclasses__()]
    return [
        f"{cls.__name__}: ctypes {ctypes.sizeof(cls)} != DWARF {cls.SIZE}"
        for cls in records
        if cls.__module__ == __name__ and ctypes.sizeof(cls) != getattr(cls, "SIZE", -1)
    ]
'''


def verify(text: str, reader: Reader) -> list[str]:
    """Every struct's size and every named field's offset in the generated ctypes classes
    against the DWARF layout."""
    ns: dict[str, Any] = {"__name__": "nir_bindings_check"}
    exec(compile(text, "bindings", "exec"), ns)  # the module just generated
    errors = []
    for name, rec in reader.records.items():
        cls = ns[name]
        if ctypes.sizeof(cls) != rec.size:
            errors.append(f"{name}: ctypes size {ctypes.sizeof(cls)} != DWARF {rec.size}")
        for m in rec.members:
            if m.bit_size or m.name in rec.anonymous:
                continue
            if (got := getattr(cls, m.name).offset) != m.offset:
                errors.append(f"{name}.{m.name}: ctypes offset {got} != DWARF {m.offset}")
    return errors


def dump(lib_path: str, name: str) -> None:
    r = Reader(lib_path)
    for fn in FUNCTIONS:
        r.cu_of(fn)
    r.record(r.find("record", name), set(STRUCTS) | {name}, name)
    r.file.close()
    for rn in r.record_order:
        rec = r.records[rn]
        print(f"{'union' if rec.union else 'struct'} {rn} /* {rec.size} bytes */ {{")
        for m in rec.members:
            where = f"bit {m.bit_offset}:{m.bit_size}" if m.bit_size else f"@{m.offset}"
            print(f"    {m.name}: {m.ctype or 'bits'}  /* {where} */")
        print("}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the checked-in module")
    ap.add_argument("--dump", metavar="STRUCT", help="print a struct's layout and exit")
    ap.add_argument("--lib", help="libtinymesa_cpu.so (default: the installed tinymesa's)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    lib = args.lib
    if lib is None:
        import tinymesa  # type: ignore[import-not-found]

        lib = str(tinymesa.libtinymesa_cpu)
    if args.dump:
        dump(lib, args.dump)
        return 0
    text, reader = generate(lib)
    if errors := verify(text, reader):
        print("\n".join(errors), file=sys.stderr)
        return 1
    if args.check:
        same = args.out.exists() and args.out.read_text() == text
        print("bindings are current" if same else f"{args.out} differs from the generator")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
