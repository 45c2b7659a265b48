"""Rewrites of llvmpipe's IR for a workgroup whose invocations all take the same branches.

llvmpipe keeps a value every invocation agrees on (a loop counter, an address of a uniform
load) in vector registers like any other, and reads it back from the first active lane: the
lowest set bit of the execution mask (``first_active_or_0``, ``cttz``), then an
``extractelement`` at that variable index, which LLVM compiles to a store of the vector and a
load of one lane. In a loop this runs every iteration, on the critical path of the next one
(a 512 matmul's inner loop, 8 FMAs, took 3-4x the cycles of its arithmetic).

When the renderer found the program's control flow uniform (``uniform_control``: no branch
depends on a value that may differ between invocations), the execution mask is all lanes or
none wherever code runs, so the first active lane is lane 0 whenever one is active (and
llvmpipe takes lane 0 when none is): the index is the constant 0, and LLVM folds the
extraction into a register move.
"""

from __future__ import annotations

import ctypes
from typing import Any

from fusegrad.renderer.nir.contiguous import functions, users

FIRST_ACTIVE = b"first_active_or_0"  # gallivm's name of the index (lp_bld_nir_soa.c)


def uniform_lanes(llvm: Any, module: Any) -> int:
    """Make every first-active-lane index of ``module`` the constant 0 (only valid for a
    program with uniform control flow, see the module docstring); the number replaced. The
    indices are found through their ``llvm.cttz`` calls (``contiguous.bind``'s API)."""
    size = ctypes.c_size_t()
    found: dict[int, Any] = {}
    for fn, _ in functions(llvm, module, (b"llvm.cttz.",)):
        for call in users(llvm, fn):
            for value in users(llvm, call):
                name = llvm.LLVMGetValueName2(value, ctypes.byref(size)) or b""
                if name.startswith(FIRST_ACTIVE):
                    found[int(value)] = value
    for value in found.values():
        llvm.LLVMReplaceAllUsesWith(value, llvm.LLVMConstNull(llvm.LLVMTypeOf(value)))
    return len(found)
