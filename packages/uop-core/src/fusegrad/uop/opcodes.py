"""``Ops``: one enum for every level of the stack, and ``GroupOp``: the named sets of them."""

from __future__ import annotations

import enum
from typing import Final


class Ops(enum.Enum):
    """Every operation a UOp can be, from tensor-level movement ops down to runtime commands.

    The order of members is the order of ``Ops.X < Ops.Y`` comparisons, used for canonical
    operand ordering of commutative ops.
    """

    # -- graph structure ----------------------------------------------------------------------
    SINK = enum.auto()  # the roots of a graph; src = the outputs
    GROUP = enum.auto()  # several values kept together without ordering between them
    NOOP = enum.auto()  # placeholder that rewrites to its source
    AFTER = enum.auto()  # src[0] (a buffer) after the effects in src[1:] happened
    # -- tensor level -------------------------------------------------------------------------
    UNIQUE = enum.auto()  # a fresh identity (arg = counter) so equal-looking buffers differ
    DEVICE = enum.auto()  # arg = device name (or a tuple of names for multi-device)
    BUFFER = enum.auto()  # src = (UNIQUE, DEVICE), arg = element count
    BUFFER_VIEW = enum.auto()  # arg = (size, offset) into a base buffer
    CONST = enum.auto()  # arg = the value (a Python scalar or Invalid)
    VCONST = enum.auto()  # a vector constant, arg = tuple of values
    DEFINE_VAR = enum.auto()  # a Variable: arg = (name, min, max)
    RESHAPE = enum.auto()
    PERMUTE = enum.auto()
    EXPAND = enum.auto()
    PAD = enum.auto()
    SHRINK = enum.auto()
    FLIP = enum.auto()
    REDUCE_AXIS = enum.auto()  # tensor-level reduce: arg = (alu op, axes)
    CONTIGUOUS = enum.auto()
    CONTIGUOUS_BACKWARD = enum.auto()
    DETACH = enum.auto()
    COPY = enum.auto()  # src = (value, DEVICE): copy to another device
    MULTI = enum.auto()  # a tensor sharded over devices, arg = axis
    MSELECT = enum.auto()
    MSTACK = enum.auto()
    ASSIGN = enum.auto()
    CUSTOM_KERNEL = enum.auto()
    # -- kernel level -------------------------------------------------------------------------
    PARAM = enum.auto()  # a kernel parameter: a buffer pointer or a scalar, arg = slot
    DEFINE_LOCAL = enum.auto()
    DEFINE_REG = enum.auto()
    RANGE = enum.auto()  # a loop counter, src = (end,), arg = (axis id, AxisType)
    END = enum.auto()  # closes ranges: src = (value, *ranges)
    REDUCE = enum.auto()  # kernel-level reduce over ranges: src = (value, *ranges), arg = op
    SPECIAL = enum.auto()  # a GPU id or CPU core id, arg = name, src = (size,)
    INDEX = enum.auto()  # pointer arithmetic: src = (buf, idx[, gate])
    LOAD = enum.auto()
    STORE = enum.auto()
    VECTORIZE = enum.auto()
    GEP = enum.auto()  # get element(s) of a vector, arg = tuple of lanes
    CAT = enum.auto()
    PTRCAT = enum.auto()
    UNROLL = enum.auto()
    CONTRACT = enum.auto()
    WMMA = enum.auto()
    BARRIER = enum.auto()
    IF = enum.auto()
    ENDIF = enum.auto()
    CUSTOM = enum.auto()  # inline target code, arg = a format string
    CUSTOMI = enum.auto()
    # -- ALU: unary ---------------------------------------------------------------------------
    EXP2 = enum.auto()
    LOG2 = enum.auto()
    SIN = enum.auto()
    SQRT = enum.auto()
    RECIPROCAL = enum.auto()
    NEG = enum.auto()
    TRUNC = enum.auto()
    CAST = enum.auto()
    BITCAST = enum.auto()
    # -- ALU: binary --------------------------------------------------------------------------
    ADD = enum.auto()
    MUL = enum.auto()
    SUB = enum.auto()
    FDIV = enum.auto()  # float division
    CDIV = enum.auto()  # integer division truncating toward zero (C)
    CMOD = enum.auto()  # remainder with the sign of the dividend (C)
    FLOORDIV = enum.auto()  # integer division rounding toward -inf (Python //)
    FLOORMOD = enum.auto()  # remainder with the sign of the divisor (Python %)
    MAX = enum.auto()
    POW = enum.auto()
    SHL = enum.auto()
    SHR = enum.auto()
    AND = enum.auto()
    OR = enum.auto()
    XOR = enum.auto()
    CMPLT = enum.auto()
    CMPNE = enum.auto()
    CMPEQ = enum.auto()
    THREEFRY = enum.auto()
    # -- ALU: ternary -------------------------------------------------------------------------
    WHERE = enum.auto()
    MULACC = enum.auto()
    # -- program level ------------------------------------------------------------------------
    LINEAR = enum.auto()  # an ordered list: a linear program, or a schedule of CALLs
    SOURCE = enum.auto()  # rendered source, arg = str
    BINARY = enum.auto()  # compiled code, arg = bytes
    PROGRAM = enum.auto()  # src = (SINK, DEVICE, LINEAR, SOURCE, BINARY)
    KERNEL = enum.auto()  # a kernel AST with its metadata (arg)
    CALL = enum.auto()  # invoke a kernel: src = (kernel, *buffers, *bound vars)
    # -- runtime level (command-queue instructions) ---------------------------------------------
    EXEC = enum.auto()
    SIGNAL = enum.auto()
    WAIT = enum.auto()
    TIMESTAMP = enum.auto()
    COPYQ = enum.auto()
    # -- aliases (last: an auto() after an alias warns, and will fail, from Python 3.13) --------
    IDIV = CDIV  # tinygrad's name for the truncating division
    MOD = CMOD  # tinygrad's name for the C remainder

    def __repr__(self) -> str:
        return f"Ops.{self.name}"

    def __lt__(self, other: Ops) -> bool:
        return self.value < other.value

    # members are singletons: identity hashing keeps the UOp intern table's key hashing in C
    __hash__ = object.__hash__


class AxisType(enum.Enum):
    """What a RANGE loops over, after optimization decided where each axis runs."""

    GLOBAL = enum.auto()  # GPU grid axis
    LOCAL = enum.auto()  # GPU workgroup axis
    LOOP = enum.auto()  # a plain output loop
    THREAD = enum.auto()  # split across CPU cores
    UPCAST = enum.auto()  # unrolled/vectorized output axis
    OUTER = enum.auto()  # a loop around whole kernels (scheduler)
    REDUCE = enum.auto()  # a plain reduction loop
    GROUP_REDUCE = enum.auto()  # reduction split across a workgroup
    UNROLL = enum.auto()  # unrolled reduction axis

    def __repr__(self) -> str:
        return f"AxisType.{self.name}"

    def __lt__(self, other: AxisType) -> bool:
        return self.value < other.value

    @property
    def is_reduce(self) -> bool:
        """True for the axis types that reduce."""
        return self in (AxisType.REDUCE, AxisType.GROUP_REDUCE, AxisType.UNROLL)


class GroupOp:
    """Named sets of Ops, used by patterns (``UPat(GroupOp.ALU)``) and by passes."""

    Unary: Final = frozenset(
        {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.NEG, Ops.TRUNC}
    )
    Binary: Final = frozenset(
        {
            Ops.ADD, Ops.MUL, Ops.SUB, Ops.FDIV, Ops.CDIV, Ops.CMOD, Ops.FLOORDIV,
            Ops.FLOORMOD, Ops.MAX, Ops.POW, Ops.SHL, Ops.SHR, Ops.AND, Ops.OR, Ops.XOR,
            Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.THREEFRY,
        }
    )  # fmt: skip
    Ternary: Final = frozenset({Ops.WHERE, Ops.MULACC})
    ALU: Final = Unary | Binary | Ternary
    Elementwise: Final = ALU | {Ops.CAST, Ops.BITCAST}
    Movement: Final = frozenset(
        {Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP}
    )
    Buffer: Final = frozenset({Ops.LOAD, Ops.STORE, Ops.CONST, Ops.DEFINE_VAR})
    Commutative: Final = frozenset(
        {Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPNE, Ops.CMPEQ, Ops.XOR, Ops.AND, Ops.OR}
    )
    Associative: Final = frozenset({Ops.ADD, Ops.MUL, Ops.AND, Ops.OR, Ops.MAX, Ops.XOR})
    # f(x, x) == x
    Idempotent: Final = frozenset({Ops.OR, Ops.AND, Ops.MAX})
    Comparison: Final = frozenset({Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ})
    # ops valid as the combiner of a reduction
    Reduce: Final = frozenset({Ops.ADD, Ops.MUL, Ops.MAX})
    # ops whose result can't be recomputed or moved freely (effects, definitions)
    Irreducible: Final = frozenset(
        {Ops.CONST, Ops.DEFINE_VAR, Ops.SPECIAL, Ops.RANGE, Ops.PARAM, Ops.DEFINE_LOCAL}
    )
    Defines: Final = frozenset({Ops.PARAM, Ops.DEFINE_LOCAL, Ops.DEFINE_REG})
    # binary ops whose result for an unsafe operand (0 divisor, huge shift) is target-specific
    UnsafePad: Final = frozenset(
        {Ops.RECIPROCAL, Ops.LOG2, Ops.EXP2, Ops.FDIV, Ops.POW, Ops.CDIV, Ops.FLOORDIV}
    )
    All: Final = frozenset(Ops)
