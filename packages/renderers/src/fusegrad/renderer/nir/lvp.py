"""The LVP compiler: a rendered NIR shader -> llvmpipe's LLVM IR -> a CPU object file.

llvmpipe (lavapipe's compute path) translates NIR to LLVM IR with ``lp_build_nir_soa``: one
SIMD lane per shader invocation. The kernel function is written around it with LLVM 20's C
API in Mesa's own module, with the CPU calling convention of every fusegrad CPU kernel::

    void name(T0 *buf0, ..., int32 var0, ..., int32 core_id)

it stores the buffer addresses and Variables in an argument block (uniform block 0 of the
shader), gives the shader a stack block as its shared memory, and runs it once over one
vector of ``lanes(local)`` invocations — the workgroup, lane j its invocation j (lanes past
the workgroup repeat its first invocations); the shader loops over the grid itself. A
``core_id`` (programs split over cores) is the workgroup id: the shader's first workgroup.
Before that the IR is rewritten: a program with uniform control flow (the header's
``uniform=1``) reads values all invocations agree on from lane 0 (``lanes.py``); gathers and
scatters of consecutive lanes become vector loads and stores (``contiguous.py``); NIR's
``ffma`` is ``llvm.fma``. The IR is printed and compiled by llvmlite like the LLVM
renderer's (``LLVMCompiler``), so the runtime loads the same ELF objects.
"""

from __future__ import annotations

import base64
import ctypes
import re
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_uint32, c_uint64, c_void_p
from typing import Any, NamedTuple

from fusegrad.codegen import CompileError, Compiler
from fusegrad.renderer.nir import bindings as nb
from fusegrad.renderer.nir import contiguous
from fusegrad.renderer.nir.builder import deserialize
from fusegrad.renderer.nir.contiguous import vectorize_contiguous
from fusegrad.renderer.nir.lanes import uniform_lanes
from fusegrad.renderer.nir.mesa import Mesa, load_mesa
from fusegrad.renderer.nir.renderer import BLOB_PREFIX, HEADER, MAX_LANES

P = c_void_p
_LLVM_C = {  # LLVM 20 C API functions the wrapper uses: name -> (restype, argtypes)
    "LLVMContextCreate": (P, []),
    "LLVMVoidTypeInContext": (P, [P]),
    "LLVMInt32TypeInContext": (P, [P]),
    "LLVMInt64TypeInContext": (P, [P]),
    "LLVMPointerTypeInContext": (P, [P, c_uint32]),
    "LLVMFunctionType": (P, [P, POINTER(P), c_uint32, c_int]),
    "LLVMAddFunction": (P, [P, c_char_p, P]),
    "LLVMAppendBasicBlockInContext": (P, [P, P, c_char_p]),
    "LLVMPositionBuilderAtEnd": (None, [P, P]),
    "LLVMGetParam": (P, [P, c_uint32]),
    "LLVMBuildAlloca": (P, [P, P, c_char_p]),
    "LLVMArrayType2": (P, [P, c_uint64]),
    "LLVMStructTypeInContext": (P, [P, POINTER(P), c_uint32, c_int]),
    "LLVMVectorType": (P, [P, c_uint32]),
    "LLVMBuildStore": (P, [P, P, P]),
    "LLVMBuildStructGEP2": (P, [P, P, P, c_uint32, c_char_p]),
    "LLVMBuildGEP2": (P, [P, P, P, POINTER(P), c_uint32, c_char_p]),
    "LLVMBuildPtrToInt": (P, [P, P, P, c_char_p]),
    "LLVMBuildSExt": (P, [P, P, P, c_char_p]),
    "LLVMConstInt": (P, [P, ctypes.c_ulonglong, c_int]),
    "LLVMConstVector": (P, [POINTER(P), c_uint32]),
    "LLVMBuildRetVoid": (P, [P]),
    "LLVMCountParams": (c_uint32, [P]),
    "LLVMInt8TypeInContext": (P, [P]),
    "LLVMSetAlignment": (None, [P, c_uint32]),
    "LLVMPrintModuleToString": (POINTER(ctypes.c_char), [P]),
    "LLVMDisposeMessage": (None, [POINTER(ctypes.c_char)]),
}
_VERSION = 7  # of the wrapper: part of the cache key
CONTIGUOUS = True  # gathers/scatters of consecutive lanes as vector loads/stores
MIN_LANES = 8  # llvmpipe's SIMD width at least (AVX2's 8 float32 lanes; gallivm needs 2)
_HEADER_RE = re.compile(
    rf"^{re.escape(HEADER)} (\w+) buffers=(\d+) variables=(\d+) core=([01])"
    r" local=(\d+),(\d+),(\d+) shared=(\d+) uniform=([01])$",
    re.MULTILINE,
)
_lock = threading.Lock()  # gallivm and llvmlite state are not thread-safe


def _llvm_api(mesa: Mesa) -> Any:
    for name, (restype, argtypes) in _LLVM_C.items():
        fn = getattr(mesa.llvm, name)
        fn.restype, fn.argtypes = restype, argtypes
    return mesa.llvm


class _Wrapper:
    """The kernel function around llvmpipe's shader body, in a fresh gallivm module."""

    def __init__(self, mesa: Mesa, name: str) -> None:
        self.mesa, self.lib, self.llvm = mesa, mesa.lib, _llvm_api(mesa)
        self.ctx_ref = nb.lp_context_ref()
        self.ctx_ref.ref, self.ctx_ref.owned = self.llvm.LLVMContextCreate(), True
        self.gallivm = self.lib.gallivm_create(name.encode(), byref(self.ctx_ref), None)
        g = self.gallivm.contents
        self.ctx, self.module, self.builder = g.context, g.module, g.builder
        self.i32 = self.llvm.LLVMInt32TypeInContext(self.ctx)
        self.i64 = self.llvm.LLVMInt64TypeInContext(self.ctx)
        self.ptr = self.llvm.LLVMPointerTypeInContext(self.ctx, 0)

    def function(self, name: str, buffers: int, variables: int, core: bool) -> Any:
        llvm = self.llvm
        params = [self.ptr] * buffers + [self.i32] * (variables + int(core))
        fn_type = llvm.LLVMFunctionType(
            llvm.LLVMVoidTypeInContext(self.ctx), (P * len(params))(*params), len(params), 0
        )
        fn = llvm.LLVMAddFunction(self.module, name.encode(), fn_type)
        entry = llvm.LLVMAppendBasicBlockInContext(self.ctx, fn, b"entry")
        llvm.LLVMPositionBuilderAtEnd(self.builder, entry)
        return fn

    def argument_block(self, fn: Any, buffers: int, variables: int) -> Any:
        """Uniform block 0 (an lp_jit_buffer: data pointer, size in dwords) holding the
        arguments in 8-byte slots, then a zero (the renderer's float zero constants)."""
        llvm, b = self.llvm, self.builder
        slots = buffers + variables + 1
        block = llvm.LLVMBuildAlloca(b, llvm.LLVMArrayType2(self.i64, slots), b"args")
        for i in range(slots):
            arg = llvm.LLVMGetParam(fn, i) if i < slots - 1 else None
            if arg is None:
                value = llvm.LLVMConstInt(self.i64, 0, 0)
            elif i < buffers:
                value = llvm.LLVMBuildPtrToInt(b, arg, self.i64, b"")
            else:
                value = llvm.LLVMBuildSExt(b, arg, self.i64, b"")
            index = (P * 2)(llvm.LLVMConstInt(self.i64, 0, 0), llvm.LLVMConstInt(self.i64, i, 0))
            slot = llvm.LLVMBuildGEP2(b, llvm.LLVMArrayType2(self.i64, slots), block, index, 2, b"")
            llvm.LLVMBuildStore(b, value, slot)
        jit_buffer = llvm.LLVMStructTypeInContext(self.ctx, (P * 2)(self.ptr, self.i32), 2, 0)
        consts = llvm.LLVMBuildAlloca(b, jit_buffer, b"consts")
        llvm.LLVMBuildStore(b, block, llvm.LLVMBuildStructGEP2(b, jit_buffer, consts, 0, b""))
        size = llvm.LLVMConstInt(self.i32, 2 * slots, 0)
        llvm.LLVMBuildStore(b, size, llvm.LLVMBuildStructGEP2(b, jit_buffer, consts, 1, b""))
        return consts

    def vector(self, values: list[int]) -> Any:
        llvm = self.llvm
        lanes = [llvm.LLVMConstInt(self.i32, v, 0) for v in values]
        return llvm.LLVMConstVector((P * len(lanes))(*lanes), len(lanes))

    def shared_memory(self, size: int) -> Any:
        """The workgroup's shared memory: a block on the stack (16-byte aligned)."""
        llvm = self.llvm
        array = llvm.LLVMArrayType2(llvm.LLVMInt8TypeInContext(self.ctx), max(size, 16))
        block = llvm.LLVMBuildAlloca(self.builder, array, b"shared")
        llvm.LLVMSetAlignment(block, 16)
        return block

    def body(
        self, shader: Any, fn: Any, consts: Any, core: bool, local: tuple[int, int, int],
        shared: int,
    ) -> None:  # fmt: skip
        """The shader over one SIMD vector of ``lanes(local)`` invocations: lane j is
        invocation j of the workgroup (``local`` ids, x fastest); lanes past the workgroup
        repeat its first invocations, so every lane's addresses are valid and a repeated
        lane stores what its twin stores. All lanes are active (the execution mask is
        full)."""
        lib, g, llvm = self.lib, self.gallivm, self.llvm
        n, count = lanes(local), local[0] * local[1] * local[2]
        params = nb.lp_build_tgsi_params()
        params.type.floating, params.type.sign = 1, 1
        params.type.width, params.type.length = 32, n
        mask = nb.lp_build_mask_context()
        params.mask = ctypes.pointer(mask)
        params.consts_ptr = consts
        params.resources_type = lib.lp_build_jit_resources_type(g)
        if shared:
            params.shared_ptr = self.shared_memory(shared)
        system = nb.lp_bld_tgsi_system_values()
        zero = llvm.LLVMConstInt(self.i32, 0, 0)
        core_id = llvm.LLVMGetParam(fn, llvm.LLVMCountParams(fn) - 1) if core else zero
        system.block_id[0], system.block_id[1], system.block_id[2] = core_id, zero, zero
        ids = [j % count for j in range(n)]
        system.thread_id[0] = self.vector([j % local[0] for j in ids])
        system.thread_id[1] = self.vector([j // local[0] % local[1] for j in ids])
        system.thread_id[2] = self.vector([j // (local[0] * local[1]) for j in ids])
        for axis in range(3):
            system.block_size[axis] = llvm.LLVMConstInt(self.i32, local[axis], 0)
        params.system_values = ctypes.pointer(system)
        lib.lp_build_mask_begin(params.mask, g, params.type, self.vector([(1 << 32) - 1] * n))
        lib.lp_build_nir_soa(g, shader, byref(params), None)
        lib.lp_build_mask_end(params.mask)
        llvm.LLVMBuildRetVoid(self.builder)

    def ir(self) -> str:
        text_ptr = self.llvm.LLVMPrintModuleToString(self.module)
        try:
            return ctypes.string_at(text_ptr).decode()
        finally:
            self.llvm.LLVMDisposeMessage(text_ptr)

    def close(self) -> None:
        self.lib.gallivm_destroy(self.gallivm)


def lanes(local: tuple[int, int, int]) -> int:
    """llvmpipe's vector length for a workgroup of size ``local``: the power of two that
    holds it, at least ``MIN_LANES``."""
    count = local[0] * local[1] * local[2]
    return max(MIN_LANES, 1 << (count - 1).bit_length())


class Rendered(NamedTuple):
    """What the NIR renderer's header and blob say about a kernel."""

    name: str
    buffers: int
    variables: int
    core: bool
    local: tuple[int, int, int]
    shared: int
    uniform: bool
    blob: bytes


def parse_rendered(src: str) -> Rendered:
    """The kernel described by the NIR renderer's output; ValueError when ``src`` is not
    that."""
    m = _HEADER_RE.search(src)
    if m is None:
        raise ValueError("LVP compiler: the source is not the NIR renderer's output")
    blob = "".join(
        line[len(BLOB_PREFIX) :] for line in src.splitlines() if line.startswith(BLOB_PREFIX)
    )
    local = (int(m.group(5)), int(m.group(6)), int(m.group(7)))
    if not 0 < local[0] * local[1] * local[2] <= MAX_LANES:
        raise ValueError(f"LVP compiler: a workgroup of {local} (1 to {MAX_LANES} invocations)")
    return Rendered(
        m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) == "1", local,
        int(m.group(8)), m.group(9) == "1", base64.b64decode(blob),
    )  # fmt: skip


def llvmpipe_ir(mesa: Mesa, src: str) -> str:
    """llvmpipe's LLVM IR (LLVM 20 text) for the NIR renderer's output ``src``."""
    k = parse_rendered(src)
    shader = deserialize(mesa.lib, k.blob)
    wrapper = _Wrapper(mesa, k.name)
    try:
        mesa.lib.lp_build_nir_soa_prepasses(shader)
        fn = wrapper.function(k.name, k.buffers, k.variables, k.core)
        consts = wrapper.argument_block(fn, k.buffers, k.variables)
        wrapper.body(shader, fn, consts, k.core, k.local, k.shared)
        llvm = contiguous.bind(mesa.llvm)
        if k.uniform:
            uniform_lanes(llvm, wrapper.module)
        if CONTIGUOUS:
            vectorize_contiguous(llvm, wrapper.module, wrapper.builder, k.uniform)
        return _portable(wrapper.ir())
    finally:
        wrapper.close()
        mesa.lib.ralloc_free(shader)


def _portable(ir: str) -> str:
    """The module without gallivm's placeholder data layout (llvmlite sets the host's), and
    with NIR's ``ffma`` as ``llvm.fma``: gallivm emits ``llvm.fmuladd`` (fused or not, as the
    target likes), exec_alu's MULACC rounds once on every host (the same operand types)."""
    ir = re.sub(r'^target datalayout = ".*"$', "", ir, flags=re.MULTILINE)
    return ir.replace("@llvm.fmuladd.", "@llvm.fma.")


class LVPCompiler(Compiler):
    """NIR (the NIR renderer's output) -> llvmpipe LLVM IR -> an ELF object (llvmlite, like
    ``LLVMCompiler``; ``opt_level`` etc. are its arguments)."""

    def __init__(self, **llvm_options: Any) -> None:
        from fusegrad.renderer.llvm import LLVMCompiler

        self.mesa = load_mesa()
        self.llvm = LLVMCompiler(**llvm_options)
        super().__init__(cache_key=f"lvp{_VERSION}:{nb.TINYMESA_VERSION}:{self.llvm.cache_key}")

    def ir(self, src: str) -> str:
        """llvmpipe's LLVM IR of a rendered shader."""
        try:
            with _lock:
                return llvmpipe_ir(self.mesa, src)
        except ValueError as exc:
            raise CompileError(_name_of(src), str(exc), src) from None

    def compile(self, src: str) -> bytes:
        """Rendered NIR -> ELF object; CompileError on bad input."""
        ir = self.ir(src)
        return self.llvm.compile(ir)

    def disassemble(self, lib: bytes) -> str:
        """Where the compiler can, the code as text (the object's size here)."""
        return f"<{len(lib)} bytes of llvmpipe code>"


def _name_of(src: str) -> str:
    m = _HEADER_RE.search(src)
    return m.group(1) if m else "kernel"
