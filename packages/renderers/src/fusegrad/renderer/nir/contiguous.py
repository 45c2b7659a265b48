"""Gathers and scatters of consecutive lanes as vector loads and stores, in llvmpipe's IR.

llvmpipe gives every invocation (SIMD lane) its own address, so a global load is a
``llvm.masked.gather`` and a store a ``llvm.masked.scatter`` (on AVX2 a scatter is one
branch and scalar store per lane). Where lane j's address is lane 0's plus ``j * size``
(``size`` the element's bytes: invocation ids walking a buffer with stride 1), the access is
one ``llvm.masked.load`` / ``llvm.masked.store`` from lane 0's address with the same lane
mask: only active lanes are read or written, as before.

The lane stride of an address is found by walking the integer vector expression it is made
of (LLVM 20's C API over gallivm's module, before any optimization): scalars and splats
(stride 0), constant vectors of evenly spaced values, ``add``/``sub``, ``mul``/``shl`` by a
constant splat, ``sext``/``zext``, ``inttoptr`` and a ``getelementptr`` of an integer type
(shared memory's addresses). Anything else (a value loaded from memory, a phi)
keeps the gather. An extension is taken as exact: a lane whose narrow index wrapped would
have addressed memory the program does not own.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_int, c_longlong, c_size_t, c_uint, c_uint32
from typing import Any

P = ctypes.c_void_p
_API = {  # LLVM 20 C API: name -> (restype, argtypes)
    "LLVMGetFirstFunction": (P, [P]),
    "LLVMGetNextFunction": (P, [P]),
    "LLVMGetFirstBasicBlock": (P, [P]),
    "LLVMGetNextBasicBlock": (P, [P]),
    "LLVMGetFirstInstruction": (P, [P]),
    "LLVMGetNextInstruction": (P, [P]),
    "LLVMGetInstructionOpcode": (c_int, [P]),
    "LLVMGetNumOperands": (c_int, [P]),
    "LLVMGetOperand": (P, [P, c_uint]),
    "LLVMIsAInstruction": (P, [P]),
    "LLVMIsACallInst": (P, [P]),
    "LLVMGetCalledValue": (P, [P]),
    "LLVMGetValueName2": (c_char_p, [P, POINTER(c_size_t)]),
    "LLVMIsAConstantInt": (P, [P]),
    "LLVMIsAConstantDataVector": (P, [P]),
    "LLVMIsAConstantVector": (P, [P]),
    "LLVMIsAConstantAggregateZero": (P, [P]),
    "LLVMGetElementAsConstant": (P, [P, c_uint]),
    "LLVMConstIntGetSExtValue": (c_longlong, [P]),
    "LLVMGetNumMaskElements": (c_uint, [P]),
    "LLVMGetMaskValue": (c_int, [P, c_uint]),
    "LLVMTypeOf": (P, [P]),
    "LLVMGetTypeKind": (c_int, [P]),
    "LLVMGetVectorSize": (c_uint, [P]),
    "LLVMGetElementType": (P, [P]),
    "LLVMGetIntTypeWidth": (c_uint, [P]),
    "LLVMGetGEPSourceElementType": (P, [P]),
    "LLVMPositionBuilderBefore": (None, [P, P]),
    "LLVMBuildExtractElement": (P, [P, P, P, c_char_p]),
    "LLVMLookupIntrinsicID": (c_uint, [c_char_p, c_size_t]),
    "LLVMGetIntrinsicDeclaration": (P, [P, c_uint, POINTER(P), c_size_t]),
    "LLVMIntrinsicGetType": (P, [P, c_uint, POINTER(P), c_size_t]),
    "LLVMBuildCall2": (P, [P, P, P, POINTER(P), c_uint, c_char_p]),
    "LLVMReplaceAllUsesWith": (None, [P, P]),
    "LLVMInstructionEraseFromParent": (None, [P]),
    "LLVMGetModuleContext": (P, [P]),
    "LLVMPointerTypeInContext": (P, [P, c_uint32]),
    "LLVMInt32TypeInContext": (P, [P]),
    "LLVMConstInt": (P, [P, ctypes.c_ulonglong, c_int]),
    "LLVMConstNull": (P, [P]),
    "LLVMGetFirstUse": (P, [P]),
    "LLVMGetNextUse": (P, [P]),
    "LLVMGetUser": (P, [P]),
    "LLVMConstIntGetZExtValue": (ctypes.c_ulonglong, [P]),
    "LLVMGetInstructionParent": (P, [P]),
    "LLVMGetBasicBlockParent": (P, [P]),
    "LLVMGetEntryBasicBlock": (P, [P]),
    "LLVMInt8TypeInContext": (P, [P]),
    "LLVMArrayType2": (P, [P, ctypes.c_uint64]),
    "LLVMBuildAlloca": (P, [P, P, c_char_p]),
    "LLVMSetAlignment": (None, [P, c_uint]),
    "LLVMBuildSelect": (P, [P, P, P, P, c_char_p]),
    "LLVMBuildLoad2": (P, [P, P, P, c_char_p]),
    "LLVMBuildStore": (P, [P, P, P]),
}
# LLVMOpcode values (llvm-c/Core.h)
_ADD, _SUB, _MUL, _SHL, _GEP = 8, 10, 12, 20, 29
_ZEXT, _SEXT, _INTTOPTR, _SHUFFLE = 31, 32, 40, 52
_VECTOR_KIND, _INTEGER_KIND = 13, 8  # LLVMTypeKind of vectors and integers
_GATHER, _SCATTER = b"llvm.masked.gather.", b"llvm.masked.scatter."
_DEPTH = 24


def bind(llvm: Any) -> Any:
    """``llvm`` (LLVM 20's library) with the prototypes this module uses set."""
    for name, (restype, argtypes) in _API.items():
        fn = getattr(llvm, name)
        fn.restype, fn.argtypes = restype, argtypes
    return llvm


class _Strides:
    """Lane strides of integer vector values (None: not evenly spaced, or unknown)."""

    def __init__(self, llvm: Any) -> None:
        self.llvm = llvm
        self.memo: dict[int, int | None] = {}

    def splat_constant(self, v: Any) -> int | None:
        """The value of a constant whose lanes are all equal."""
        llvm = self.llvm
        if llvm.LLVMIsAConstantInt(v):
            return int(llvm.LLVMConstIntGetSExtValue(v))
        lanes = self.constant_lanes(v)
        if lanes is None or any(x != lanes[0] for x in lanes):
            return None
        return lanes[0]

    def constant_lanes(self, v: Any) -> list[int] | None:
        llvm = self.llvm
        vtype = llvm.LLVMTypeOf(v)
        if llvm.LLVMGetTypeKind(vtype) != _VECTOR_KIND:
            return None
        n = int(llvm.LLVMGetVectorSize(vtype))
        if llvm.LLVMIsAConstantAggregateZero(v):
            return [0] * n
        if not (llvm.LLVMIsAConstantDataVector(v) or llvm.LLVMIsAConstantVector(v)):
            return None
        out = []
        for i in range(n):
            element = llvm.LLVMGetElementAsConstant(v, i)
            if not element or not llvm.LLVMIsAConstantInt(element):
                return None
            out.append(int(llvm.LLVMConstIntGetSExtValue(element)))
        return out

    def stride(self, v: Any, depth: int = 0) -> int | None:
        key = int(v)
        if key not in self.memo:
            self.memo[key] = self._stride(v, depth)
        return self.memo[key]

    def _stride(self, v: Any, depth: int) -> int | None:
        llvm = self.llvm
        if depth > _DEPTH:
            return None
        if llvm.LLVMIsAConstantInt(v) or llvm.LLVMGetTypeKind(llvm.LLVMTypeOf(v)) != _VECTOR_KIND:
            return 0  # a scalar (a GEP's base pointer) is the same in every lane
        lanes = self.constant_lanes(v)
        if lanes is not None:
            step = lanes[1] - lanes[0] if len(lanes) > 1 else 0
            ok = all(x == lanes[0] + i * step for i, x in enumerate(lanes))
            return step if ok else None
        if not llvm.LLVMIsAInstruction(v):
            return None
        return self._instruction(v, llvm.LLVMGetInstructionOpcode(v), depth)

    def _instruction(self, v: Any, op: int, depth: int) -> int | None:
        llvm = self.llvm
        if op == _SHUFFLE:  # a splat: every lane takes element 0
            n = int(llvm.LLVMGetNumMaskElements(v))
            return 0 if all(llvm.LLVMGetMaskValue(v, i) == 0 for i in range(n)) else None
        a = llvm.LLVMGetOperand(v, 0)
        if op == _GEP:
            return self._gep(v, a, depth)
        if op in (_SEXT, _ZEXT, _INTTOPTR):
            return self.stride(a, depth + 1)
        b = llvm.LLVMGetOperand(v, 1) if op in (_ADD, _SUB, _MUL, _SHL) else None
        if b is None:
            return None
        if op in (_ADD, _SUB):
            sa, sb = self.stride(a, depth + 1), self.stride(b, depth + 1)
            if sa is None or sb is None:
                return None
            return sa + sb if op == _ADD else sa - sb
        return self._scaled(a, b, op, depth)

    def _gep(self, v: Any, base: Any, depth: int) -> int | None:
        """``getelementptr T, base, index`` with one index and an integer ``T``."""
        llvm = self.llvm
        element = llvm.LLVMGetGEPSourceElementType(v)
        if llvm.LLVMGetNumOperands(v) != 2 or llvm.LLVMGetTypeKind(element) != _INTEGER_KIND:
            return None
        sb, si = self.stride(base, depth + 1), self.stride(llvm.LLVMGetOperand(v, 1), depth + 1)
        if sb is None or si is None:
            return None
        return sb + si * (int(llvm.LLVMGetIntTypeWidth(element)) // 8)

    def _scaled(self, a: Any, b: Any, op: int, depth: int) -> int | None:
        """The stride of ``a * b`` or ``a << b`` with ``b`` (either, for ``*``) a constant
        splat."""
        k = self.splat_constant(b)
        if k is None and op == _MUL:
            a, b = b, a
            k = self.splat_constant(b)
        sa = self.stride(a, depth + 1)
        if k is None or sa is None:
            return None
        if op == _MUL:
            return sa * k
        return sa << k if 0 <= k < 64 else None


def _callee(llvm: Any, call: Any) -> bytes:
    fn = llvm.LLVMGetCalledValue(call)
    if not fn:
        return b""
    size = c_size_t()
    return llvm.LLVMGetValueName2(fn, ctypes.byref(size)) or b""


def _element_bytes(llvm: Any, vector_type: Any) -> int | None:
    element = llvm.LLVMGetElementType(vector_type)
    if llvm.LLVMGetTypeKind(element) != _INTEGER_KIND:
        return None  # float vectors: gallivm accesses memory as integers
    return int(llvm.LLVMGetIntTypeWidth(element)) // 8


def functions(llvm: Any, module: Any, prefixes: tuple[bytes, ...]) -> list[tuple[Any, bytes]]:
    """(function, name) of the module's functions (declarations too: intrinsics) whose name
    starts with one of ``prefixes``."""
    found = []
    size = c_size_t()
    fn = llvm.LLVMGetFirstFunction(module)
    while fn:
        name = llvm.LLVMGetValueName2(fn, ctypes.byref(size)) or b""
        if name.startswith(prefixes):
            found.append((fn, name))
        fn = llvm.LLVMGetNextFunction(fn)
    return found


def users(llvm: Any, value: Any) -> list[Any]:
    """The values (instructions) using ``value``."""
    found = []
    use = llvm.LLVMGetFirstUse(value)
    while use:
        found.append(llvm.LLVMGetUser(use))
        use = llvm.LLVMGetNextUse(use)
    return found


def _masked_accesses(llvm: Any, module: Any) -> list[tuple[Any, bool]]:
    """Every gather and scatter call of the module: (call, is a scatter). Found through the
    intrinsics' uses: a walk over every instruction through ctypes took a fifth of a matmul
    kernel's IR time."""
    found: list[tuple[Any, bool]] = []
    for fn, name in functions(llvm, module, (_GATHER, _SCATTER)):
        for call in users(llvm, fn):
            if llvm.LLVMIsACallInst(call) and _callee(llvm, call) == name:
                found.append((call, name.startswith(_SCATTER)))
    return found


#: bytes of the stack slot a uniform program's masked-off whole-vector access goes to (16
#: lanes of 8 bytes)
SCRATCH_BYTES = 128


class _Scratch:
    """One stack slot per function, in its entry block: where the whole-vector load or store
    of a masked-off access goes instead of the buffer."""

    def __init__(self, llvm: Any, builder: Any, ctx: Any) -> None:
        self.llvm, self.builder = llvm, builder
        self.bytes = llvm.LLVMArrayType2(llvm.LLVMInt8TypeInContext(ctx), SCRATCH_BYTES)
        self.slots: dict[int, Any] = {}

    def of(self, instr: Any) -> Any:
        """The slot of the function holding ``instr`` (the builder is left anywhere)."""
        llvm = self.llvm
        fn = llvm.LLVMGetBasicBlockParent(llvm.LLVMGetInstructionParent(instr))
        if int(fn) not in self.slots:
            entry = llvm.LLVMGetEntryBasicBlock(fn)
            llvm.LLVMPositionBuilderBefore(self.builder, llvm.LLVMGetFirstInstruction(entry))
            slot = llvm.LLVMBuildAlloca(self.builder, self.bytes, b"masked_off")
            llvm.LLVMSetAlignment(slot, 32)
            self.slots[int(fn)] = slot
        return self.slots[int(fn)]


def _whole_vector(
    llvm: Any, builder: Any, call: Any, ops: list[Any], first: Any, slot: Any, scatter: bool,
    zero: Any,
) -> None:  # fmt: skip
    """The access as one plain vector load/store at ``first`` when lane 0 is active, else at
    ``slot``: exact where the mask is all lanes or none (a uniform program), and no masked
    store (``vpmaskmovd`` to memory is microcoded on AMD Zen 2: relu(a * b + c) 2x slower)."""
    mask = ops[3] if scatter else ops[2]
    align = int(llvm.LLVMConstIntGetZExtValue(ops[2] if scatter else ops[1]))
    active = llvm.LLVMBuildExtractElement(builder, mask, zero, b"")
    where = llvm.LLVMBuildSelect(builder, active, first, slot, b"")
    if scatter:
        llvm.LLVMSetAlignment(llvm.LLVMBuildStore(builder, ops[0], where), align)
        return
    loaded = llvm.LLVMBuildLoad2(builder, llvm.LLVMTypeOf(call), where, b"")
    llvm.LLVMSetAlignment(loaded, align)
    llvm.LLVMReplaceAllUsesWith(call, llvm.LLVMBuildSelect(builder, mask, loaded, ops[3], b""))


def vectorize_contiguous(llvm: Any, module: Any, builder: Any, uniform: bool = False) -> int:
    """Rewrite the module's gathers/scatters of consecutive lanes; the number rewritten.
    ``uniform``: the program's control flow is uniform (every mask all lanes or none), so
    they become plain vector loads/stores (``_whole_vector``) instead of masked ones."""
    ctx = llvm.LLVMGetModuleContext(module)
    ptr = llvm.LLVMPointerTypeInContext(ctx, 0)
    zero = llvm.LLVMConstInt(llvm.LLVMInt32TypeInContext(ctx), 0, 0)
    strides = _Strides(llvm)
    scratch = _Scratch(llvm, builder, ctx)
    done = 0
    for call, scatter in _masked_accesses(llvm, module):
        # a scatter's operands: (value, pointers, align, mask); a gather's: (pointers,
        # align, mask, passthru)
        ops = [llvm.LLVMGetOperand(call, i) for i in range(4)]
        pointers = ops[1] if scatter else ops[0]
        vtype = llvm.LLVMTypeOf(ops[0] if scatter else call)
        size = _element_bytes(llvm, vtype)
        if size is None or strides.stride(pointers) != size:
            continue
        slot = scratch.of(call) if uniform else None
        llvm.LLVMPositionBuilderBefore(builder, call)
        first = llvm.LLVMBuildExtractElement(builder, pointers, zero, b"")
        if slot is not None:
            _whole_vector(llvm, builder, call, ops, first, slot, scatter, zero)
            llvm.LLVMInstructionEraseFromParent(call)
            done += 1
            continue
        name = b"llvm.masked.store" if scatter else b"llvm.masked.load"
        iid = llvm.LLVMLookupIntrinsicID(name, len(name))
        types = (P * 2)(vtype, ptr)
        decl = llvm.LLVMGetIntrinsicDeclaration(module, iid, types, 2)
        fn_type = llvm.LLVMIntrinsicGetType(ctx, iid, types, 2)
        args = (ops[0], first, ops[2], ops[3]) if scatter else (first, ops[1], ops[2], ops[3])
        new = llvm.LLVMBuildCall2(builder, fn_type, decl, (P * 4)(*args), 4, b"")
        if not scatter:
            llvm.LLVMReplaceAllUsesWith(call, new)
        llvm.LLVMInstructionEraseFromParent(call)
        done += 1
    return done
