"""The CPU calling convention of a linear program: which parameters, in which order.

Every CPU renderer (LLVM, C, x86) and the CPU runtime agree on it (CONVENTIONS.md)::

    void name(T0 *buf0, T1 *buf1, ..., int32 var0, ..., int32 core_id)

buffer pointers sorted by slot, then the scalar Variables as int32 in program order, then —
only when the program has a ``SPECIAL`` named ``core`` — the core id, last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fusegrad.uop import Ops, PtrDType, UOp

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class KernelSignature:
    """The parameters of a kernel function, in calling order (core id last, if any)."""

    name: str
    buffers: tuple[UOp, ...]
    variables: tuple[UOp, ...]
    core: UOp | None

    @property
    def core_count(self) -> int | None:
        """The number of cores the kernel is split over (None: not split). Needs a constant
        SPECIAL size."""
        if self.core is None:
            return None
        size = self.core.src[0]
        if size.op is not Ops.CONST or not isinstance(size.arg, int):
            raise ValueError(f"{self.name}: the core count must be a constant, got {size.op!r}")
        return size.arg


def kernel_name(uops: list[UOp], name: str | None = None) -> str:
    """The function name: ``name`` if given, else the ``name`` of a trailing SINK's
    KernelInfo, else ``"kernel"``. Must be a C identifier."""
    if name is None:
        info = uops[-1].arg if uops and uops[-1].op is Ops.SINK else None
        name = getattr(info, "name", None) or "kernel"
    if not _IDENT.fullmatch(name):
        raise ValueError(f"kernel name {name!r} is not a valid identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return name


def kernel_signature(uops: list[UOp], name: str | None = None) -> KernelSignature:
    """The signature of a linear program (see the module docstring)."""
    buffers: list[UOp] = []
    variables: list[UOp] = []
    core: UOp | None = None
    for u in uops:
        if u.op is Ops.PARAM and isinstance(u.dtype, PtrDType):
            buffers.append(u)
        elif u.op is Ops.PARAM:
            variables.append(u)
        elif u.op is Ops.SPECIAL:
            if u.arg != "core":
                raise ValueError(
                    f"CPU kernels only know the SPECIAL 'core', got {u.arg!r} (a GPU index)"
                )
            if core is not None and core is not u:
                raise ValueError("a CPU kernel can have only one SPECIAL 'core'")
            core = u
    slots = [b.arg for b in buffers]
    if len(set(slots)) != len(slots):
        raise ValueError(f"buffer slots repeat: {slots}")
    buffers.sort(key=lambda b: int(b.arg))
    return KernelSignature(kernel_name(uops, name), tuple(buffers), tuple(variables), core)
