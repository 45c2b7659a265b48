"""``KernelInfo``: the metadata a kernel AST's SINK carries (``SINK.arg``). It lives in uop-core
so ``fusegrad.uop.ops`` can export it as tinygrad's ``tinygrad.uop.ops`` does; the codegen
fills it in (``fusegrad.codegen.spec`` re-exports it).

>>> KernelInfo("E_4", opts_to_apply=()).name
'E_4'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fusegrad.uop.dtype import AddrSpace, ConstType, DType, PtrDType

if TYPE_CHECKING:
    from fusegrad.uop.uop import UOp

__all__ = ["CallInfo", "KernelInfo", "ParamArg", "ProgramInfo", "gate_kernel_sink"]


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """Metadata on a kernel AST's SINK, tinygrad's fields in tinygrad's order: its ``name``;
    ``axis_types`` (the AxisType of each range, by axis number, once opts are applied);
    ``dont_use_locals`` (NOLOCALS); ``applied_opts`` (the opts applied so far);
    ``opts_to_apply`` (None: the heuristics or BEAM choose; ``()``: nothing more to apply);
    ``estimates`` (work estimates when known) and ``beam`` (the BEAM width that chose the
    opts, 0: none)."""

    name: str = "kernel"
    axis_types: tuple[object, ...] = ()
    dont_use_locals: bool = False
    applied_opts: tuple[object, ...] = ()
    opts_to_apply: tuple[object, ...] | None = None
    estimates: object | None = None
    beam: int = 0


def gate_kernel_sink(x: UOp) -> bool:
    """A ``toposort`` gate that does not walk into kernel ASTs: False at a SINK carrying a
    KernelInfo (the kernel's body), True elsewhere. ``graph.toposort(gate=gate_kernel_sink)``
    lists a schedule-level graph with each kernel's SINK but not the nodes inside it."""
    from fusegrad.uop.opcodes import Ops

    return not (x.op is Ops.SINK and isinstance(x.arg, KernelInfo))


@dataclass(frozen=True, slots=True)
class ParamArg:
    """A kernel parameter described as one record (tinygrad's fields and order): what
    ``UOp.param`` takes, as data. ``ParamArg.of(node)`` reads it back from a PARAM node, and
    ``UOp.param(record)`` (or ``record.to_uop()``) builds the node, so the two round-trip.

    In fusegrad's IR a buffer PARAM's arg is its ``slot`` (its dtype the pointer), and a scalar
    parameter is the Variable form (arg ``(name, min, max[, multiple_of])``, no slot in the
    node: its slot is its place among the kernel's parameters). ``device``, ``axis`` and
    ``volatile`` have no meaning in fusegrad's kernels and must stay at their defaults.

    >>> from fusegrad.uop import UOp, dtypes
    >>> p = UOp.param(0, dtypes.float32.ptr(16))
    >>> ParamArg.of(p).dtype, UOp.param(ParamArg.of(p)) is p
    (dtypes.float32.ptr(16), True)
    """

    slot: int
    dtype: DType
    vmin_vmax: tuple[ConstType, ConstType] | None = None
    multiple_of: int | None = None
    name: str | None = None
    addrspace: AddrSpace | None = AddrSpace.GLOBAL
    axis: int | None = None
    device: str | tuple[str, ...] | None = None
    volatile: bool = False

    @staticmethod
    def of(node: UOp, slot: int | None = None) -> ParamArg:
        """The record of a PARAM node; a scalar (Variable-form) parameter needs its ``slot``."""
        from fusegrad.uop.opcodes import Ops

        if node.op is not Ops.PARAM:
            raise ValueError(f"ParamArg.of: expected a PARAM node, got {node.op!r}")
        if isinstance(node.dtype, PtrDType):
            if slot is not None and slot != node.arg:
                raise ValueError(f"ParamArg.of: the node is slot {node.arg}, not {slot}")
            return ParamArg(node.arg, node.dtype, addrspace=node.dtype.addrspace)
        if slot is None:
            raise ValueError(f"ParamArg.of: scalar parameter {node.arg[0]!r} needs slot=")
        name, vmin, vmax = node.arg[:3]
        multiple = node.arg[3] if len(node.arg) > 3 else None
        return ParamArg(slot, node.dtype, (vmin, vmax), multiple, name)

    def to_uop(self) -> UOp:
        """The PARAM node this record describes (``UOp.param`` with these fields)."""
        from fusegrad.uop.uop import UOp

        addrspace = AddrSpace.GLOBAL if self.addrspace is None else self.addrspace
        return UOp.param(
            self.slot,
            self.dtype,
            device=self.device,
            vmin_vmax=self.vmin_vmax,
            multiple_of=self.multiple_of,
            name=self.name,
            addrspace=addrspace,
            axis=self.axis,
            volatile=self.volatile,
        )


@dataclass(frozen=True, slots=True)
class ProgramInfo:
    """What a compiled kernel's launch needs to know, as tinygrad's record: its ``name``,
    ``global_size``/``local_size``, the scalar parameters ``vars``, the buffer slots
    (``globals``), which of them it writes (``outs``) and reads (``ins``), and the ``target``
    (fusegrad: the device name). ``ProgramInfo.of(spec)`` reads it off a ProgramSpec."""

    name: str = "test"
    global_size: tuple[int | float | UOp, ...] = (1, 1, 1)
    local_size: tuple[int, ...] | None = None
    vars: tuple[UOp, ...] = ()
    globals: tuple[int, ...] = ()
    outs: tuple[int, ...] = ()
    ins: tuple[int, ...] = ()
    target: Any = None

    @staticmethod
    def of(spec: Any) -> ProgramInfo:
        """The info of a ``fusegrad.codegen.ProgramSpec`` (read by attribute: uop-core does
        not import the codegen)."""
        local = None if spec.local_size is None else tuple(spec.local_size)
        return ProgramInfo(
            spec.name,
            tuple(spec.global_size),
            local,
            tuple(spec.variables),
            tuple(b.slot for b in spec.buffers),
            tuple(spec.outs),
            tuple(spec.ins),
            spec.device,
        )


@dataclass(frozen=True, slots=True)
class CallInfo:
    """The info a CALL node can carry as its arg (tinygrad's fields): a ``name`` for schedules
    and debug output and ``aux`` data for the caller. ``grad_fxn``, ``precompile`` and
    ``precompile_backward`` are kept as given (tinygrad's custom-function gradient and
    precompilation hints; fusegrad's engine does not read them). ``CallInfo.of(call)`` is the
    node's record, or one named after the called kernel."""

    grad_fxn: Callable[..., Any] | None = None
    name: str | None = None
    precompile: bool = False
    precompile_backward: bool = False
    aux: Any = None

    @staticmethod
    def of(call: UOp) -> CallInfo:
        """The CallInfo of a CALL node (its arg, or one named after its kernel's KernelInfo)."""
        from fusegrad.uop.opcodes import Ops

        if call.op is not Ops.CALL:
            raise ValueError(f"CallInfo.of: expected a CALL node, got {call.op!r}")
        if isinstance(call.arg, CallInfo):
            return call.arg
        kernel = call.src[0] if call.src else None
        info = kernel.arg if kernel is not None else None
        return CallInfo(name=info.name if isinstance(info, KernelInfo) else None)
