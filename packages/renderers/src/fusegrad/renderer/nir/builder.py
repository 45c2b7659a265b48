"""Building NIR through Mesa's exported primitives (the builder's helpers are static inline).

Each instruction is created with ``nir_*_instr_create``, its sources and indices filled in
through the generated struct layouts, and inserted at the builder's cursor. Values are
``nir_def`` pointers (``Def``); vectors are kept as lists of scalar defs by the renderer.
"""

from __future__ import annotations

import ctypes
import struct
from ctypes import POINTER, byref, c_char_p, c_size_t, c_void_p
from typing import Any

from fusegrad.renderer.nir import bindings as nb
from fusegrad.renderer.nir.mesa import Mesa

Def = Any  # a POINTER(nir_def)

_FC = nb.float_controls
# IEEE results: keep signed zeros, infinities and NaNs, no denormal flushing
FLOAT_CONTROLS = (
    _FC.FLOAT_CONTROLS_SIGNED_ZERO_PRESERVE_FP32 | _FC.FLOAT_CONTROLS_SIGNED_ZERO_PRESERVE_FP64
    | _FC.FLOAT_CONTROLS_INF_PRESERVE_FP32 | _FC.FLOAT_CONTROLS_INF_PRESERVE_FP64
    | _FC.FLOAT_CONTROLS_NAN_PRESERVE_FP32 | _FC.FLOAT_CONTROLS_NAN_PRESERVE_FP64
    | _FC.FLOAT_CONTROLS_DENORM_PRESERVE_FP32 | _FC.FLOAT_CONTROLS_DENORM_PRESERVE_FP64
)  # fmt: skip

_GLSL_BASE = {  # (kind, bits) -> glsl_base_type of a variable holding such a value
    ("b", 1): nb.glsl_base_type.GLSL_TYPE_BOOL,
    ("i", 8): nb.glsl_base_type.GLSL_TYPE_INT8,
    ("i", 16): nb.glsl_base_type.GLSL_TYPE_INT16,
    ("i", 32): nb.glsl_base_type.GLSL_TYPE_INT,
    ("i", 64): nb.glsl_base_type.GLSL_TYPE_INT64,
    ("f", 32): nb.glsl_base_type.GLSL_TYPE_FLOAT,
    ("f", 64): nb.glsl_base_type.GLSL_TYPE_DOUBLE,
}

# ops NIR's algebraic passes would form that gallivm has no translation for (or whose
# lowering keeps results exact): NIR lowers them back to plain ALU ops
_LOWERED = (
    "lower_extract_byte", "lower_extract_word", "lower_insert_byte", "lower_insert_word",
    "lower_bitfield_extract8", "lower_bitfield_extract16", "lower_bitfield_extract",
    "lower_bitfield_insert", "lower_scmp", "lower_fdph", "lower_flrp16", "lower_flrp32",
    "lower_flrp64", "lower_fsat", "lower_fmod", "lower_hadd", "lower_hadd64", "lower_uadd_sat",
    "lower_usub_sat", "lower_iadd_sat", "lower_ldexp", "lower_uadd_carry", "lower_usub_borrow",
    "lower_fisnormal", "lower_fquantize2f16", "lower_device_index_to_zero",
)  # fmt: skip


def _make_options() -> Any:
    options = nb.nir_shader_compiler_options()
    for name in _LOWERED:
        setattr(options, name, True)
    return options


_options = _make_options()  # Mesa keeps a pointer to it: one for every shader


def compiler_options() -> Any:
    """The NIR options our shaders are built and optimized with: what gallivm translates
    (64-bit integers and floats native)."""
    return _options


def _flex(obj: Any, field: str, ctype: Any, n: int) -> Any:
    """The first ``n`` elements of a flexible array member of a ctypes struct."""
    offset = getattr(type(obj), field).offset
    return (ctype * n).from_address(ctypes.addressof(obj) + offset)


def _def_of(instr: Any) -> Def:
    offset = type(instr).__dict__["def"].offset
    return ctypes.cast(ctypes.addressof(instr) + offset, POINTER(nb.nir_def))


class NIRBuilder:
    """A compute shader being built: instructions at the cursor, control flow, variables."""

    def __init__(self, mesa: Mesa, name: str) -> None:
        self.mesa, self.lib = mesa, mesa.lib
        stage = nb.gl_shader_stage.MESA_SHADER_COMPUTE
        self.b = self.lib.nir_builder_init_simple_shader(stage, byref(_options), name.encode())
        self.b.exact = True  # no inexact algebraic rewrites: results stay IEEE
        self.b.fp_fast_math = FLOAT_CONTROLS
        self.shader = self.b.shader
        self.shader.contents.info.float_controls_execution_mode = FLOAT_CONTROLS
        self.bp = ctypes.pointer(self.b)

    # -- instructions -------------------------------------------------------------------------
    def imm(self, bits: int, value: int) -> Def:
        """An integer (or raw bit pattern) constant of ``bits`` bits."""
        lc = self.lib.nir_load_const_instr_create(self.shader, 1, bits).contents
        # canonical: the bits above the value's size are zero (the validator checks)
        _flex(lc, "value", nb.nir_const_value, 1)[0].u64 = value & ((1 << bits) - 1)
        self.lib.nir_builder_instr_insert(self.bp, byref(lc.instr))
        return _def_of(lc)

    def fimm(self, bits: int, value: float) -> Def:
        """A float constant (float32 or float64)."""
        raw = struct.unpack("<I", struct.pack("<f", value))[0] if bits == 32 else None
        if raw is None:
            raw = struct.unpack("<Q", struct.pack("<d", value))[0]
        return self.imm(bits, raw)

    def alu(self, op: int, *srcs: Def) -> Def:
        """A per-component ALU instruction over scalar sources."""
        a = self.lib.nir_alu_instr_create(self.shader, op).contents
        for i, s in enumerate(_flex(a, "src", nb.nir_alu_src, len(srcs))):
            s.src.ssa = srcs[i]
        return self.lib.nir_builder_alu_instr_finish_and_insert(self.bp, byref(a))

    def channel(self, vec: Def, comp: int) -> Def:
        """Component ``comp`` of a vector def (a ``mov`` with a swizzle)."""
        a = self.lib.nir_alu_instr_create(self.shader, nb.nir_op.nir_op_mov).contents
        src = _flex(a, "src", nb.nir_alu_src, 1)[0]
        src.src.ssa, src.swizzle[0] = vec, comp
        bits = vec.contents.bit_size
        self.lib.nir_def_init(byref(a.instr), _def_of(a), 1, bits)
        self.lib.nir_builder_instr_insert(self.bp, byref(a.instr))
        return _def_of(a)

    def intrinsic(
        self, op: int, srcs: tuple[Def, ...], components: int = 1, bits: int = 0, **index: int
    ) -> Def | None:
        """An intrinsic with sources, indices by name (``ALIGN_MUL=4``) and, when it has a
        result, ``components`` x ``bits``."""
        instr = self.lib.nir_intrinsic_instr_create(self.shader, op).contents
        info = self.mesa.intrinsic_infos[op]
        # intrinsics with a fixed result size take 0 here
        instr.num_components = 0 if info.dest_components else components
        for i, s in enumerate(_flex(instr, "src", nb.nir_src, len(srcs))):
            s.ssa = srcs[i]
        for name, value in index.items():
            slot = info.index_map[nb.nir_intrinsic_index_flag["NIR_INTRINSIC_" + name]]
            if slot == 0:
                raise ValueError(f"NIR intrinsic {info.name.decode()} has no index {name}")
            instr.const_index[slot - 1] = value
        out = None
        if info.has_dest:
            out = _def_of(instr)
            self.lib.nir_def_init(byref(instr.instr), out, components, bits)
        self.lib.nir_builder_instr_insert(self.bp, byref(instr.instr))
        return out

    def jump_break(self) -> None:
        jump = self.lib.nir_jump_instr_create(self.shader, nb.nir_jump_type.nir_jump_break)
        self.lib.nir_builder_instr_insert(self.bp, byref(jump.contents.instr))

    # -- variables ----------------------------------------------------------------------------
    def local_variable(self, kind: str, bits: int, name: str) -> Any:
        """A function-temporary scalar variable (a register; ``lower_vars_to_ssa`` removes
        it)."""
        base = _GLSL_BASE[(kind if kind != "u" else "i", bits)]
        glsl = self.lib.glsl_simple_explicit_type(base, 1, 1, 0, False, 0)
        return self.lib.nir_local_variable_create(self.b.impl, glsl, name.encode())

    def deref(self, var: Any) -> Def:
        d = self.lib.nir_deref_instr_create(
            self.shader, nb.nir_deref_type.nir_deref_type_var
        ).contents  # fmt: skip
        d.modes = nb.nir_variable_mode.nir_var_function_temp
        d.type, d.var = var.contents.type, var
        self.lib.nir_def_init(byref(d.instr), _def_of(d), 1, 32)
        self.lib.nir_builder_instr_insert(self.bp, byref(d.instr))
        return _def_of(d)

    def load_var(self, var: Any, bits: int) -> Def:
        op = nb.nir_intrinsic_op.nir_intrinsic_load_deref
        return self.intrinsic(op, (self.deref(var),), 1, bits, ACCESS=0)

    def store_var(self, var: Any, value: Def) -> None:
        op = nb.nir_intrinsic_op.nir_intrinsic_store_deref
        self.intrinsic(op, (self.deref(var), value), 1, WRITE_MASK=1, ACCESS=0)

    # -- control flow -------------------------------------------------------------------------
    def push_if(self, cond: Def) -> Any:
        return self.lib.nir_push_if(self.bp, cond)

    def pop_if(self, nif: Any) -> None:
        self.lib.nir_pop_if(self.bp, nif)

    def push_loop(self) -> Any:
        return self.lib.nir_push_loop(self.bp)

    def pop_loop(self, loop: Any) -> None:
        self.lib.nir_pop_loop(self.bp, loop)


# -- whole shaders ----------------------------------------------------------------------------


def print_shader(lib: Any, shader: Any) -> str:
    """``nir_print_shader`` into a string (through an in-memory FILE)."""
    libc = ctypes.CDLL(None)
    libc.open_memstream.restype = c_void_p
    libc.open_memstream.argtypes = [POINTER(c_char_p), POINTER(c_size_t)]
    libc.fclose.argtypes = [c_void_p]
    buf, size = ctypes.c_char_p(), c_size_t()
    stream = libc.open_memstream(byref(buf), byref(size))
    lib.nir_print_shader(shader, stream)
    libc.fclose(stream)
    text = ctypes.string_at(buf, size.value).decode()
    libc.free.argtypes = [c_void_p]
    libc.free(ctypes.cast(buf, c_void_p))
    return text


def serialize(lib: Any, shader: Any) -> bytes:
    """The shader as ``nir_serialize``'s bytes."""
    blob = nb.blob()
    lib.blob_init(byref(blob))
    lib.nir_serialize(byref(blob), shader, False)
    data = ctypes.string_at(blob.data, blob.size)
    buf, size = c_void_p(), c_size_t()
    lib.blob_finish_get_buffer(byref(blob), byref(buf), byref(size))
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [c_void_p]
    libc.free(buf)
    return data


def deserialize(lib: Any, data: bytes) -> Any:
    """A shader from ``serialize``'s bytes (free with ``ralloc_free``)."""
    reader = nb.blob_reader()
    raw = ctypes.create_string_buffer(data, len(data))
    lib.blob_reader_init(byref(reader), raw, len(data))
    shader = lib.nir_deserialize(None, byref(_options), byref(reader))
    if not shader:
        raise ValueError("nir_deserialize failed: not a serialized NIR shader")
    return shader
