"""The UOp: an immutable, hash-consed IR node ``(op, dtype, src, arg, tag)``.

Building a UOp that already exists returns the existing object, so structural equality is
identity: ``a is b``, ``a == b`` and ``hash`` all agree, and a UOp is a cheap dict key. The
intern table holds nodes weakly: a node nobody references is freed and leaves the table.

Arithmetic on UOps builds ALU nodes with NumPy/PyTorch dtype promotion (Python numbers are
weak literals). ``==`` is identity, as a dict key needs; use ``a.eq(b)`` / ``a.ne(b)`` for
the comparison nodes.
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
import threading
import weakref
from _weakref import _remove_dead_weakref  # type: ignore[attr-defined]
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeAlias, TypeVar, cast, overload

from fusegrad.uop.bounds import min_max
from fusegrad.uop.dtype import (
    AddrSpace,
    ConstType,
    DType,
    Invalid,
    InvalidType,
    PtrDType,
    dtypes,
    least_upper_dtype,
    promoted_dtype,
)
from fusegrad.uop.helpers import all_int, argfix, prod
from fusegrad.uop.ops import AxisType, GroupOp, Ops

sint: TypeAlias = "int | UOp"  # a size: a Python int or a symbolic UOp


def _arg_key(arg: Any) -> Any:
    """A key for an arg that tells apart what Python's == conflates: ``1``/``1.0``/``True``,
    ``0.0``/``-0.0``, and matches NaN to itself (the intern table compares keys with ==)."""
    kind = type(arg)
    if kind is float:
        return (float, struct.pack("<d", arg))
    if kind is tuple:
        return tuple([_arg_key(a) for a in arg])
    if kind is int or kind is bool:
        return (kind, arg)
    return arg


class _NodeRef(weakref.ref["UOp"]):
    """The intern table's weak reference to a node; it knows its key so that the node's death
    can remove exactly its own entry."""

    __slots__ = ("key",)
    key: tuple[Any, ...]


# key -> weak reference to the one UOp with that structure. An entry leaves the table when its
# node dies (``_forget``). Lookups are lock-free (a dict read is atomic); creating a node takes
# ``_intern_lock`` so two threads can't both create the same node.
_interned: dict[tuple[Any, ...], _NodeRef] = {}
_intern_lock = threading.Lock()


def _forget(ref: _NodeRef, remove: Callable[..., None] = _remove_dead_weakref) -> None:
    # Called when a node dies, possibly from the garbage collector in the middle of another
    # thread's (or this thread's) table update: it takes no lock, and removes the entry only if
    # it still holds a dead reference (a new node may already have taken the key).
    remove(_interned, ref.key)


def interned_count() -> int:
    """How many live UOps the intern table holds (for tests and memory diagnostics)."""
    return len(_interned)


class UOpMetaClass(type):
    """Makes ``UOp(...)`` return the interned node for the given fields."""

    def __call__(
        cls,
        op: Ops,
        dtype: DType = dtypes.void,
        src: tuple[UOp, ...] = (),
        arg: Any = None,
        tag: Any = None,
    ) -> UOp:
        key = (
            op,
            dtype,
            src,
            arg if arg is None else _arg_key(arg),
            tag if tag is None else _arg_key(tag),
        )
        ref = _interned.get(key)
        if ref is not None and (node := ref()) is not None:
            return node
        return _create(cls, key, op, dtype, src, arg, tag)


def _create(
    cls: type, key: tuple[Any, ...], op: Ops, dtype: DType, src: tuple[UOp, ...], arg: Any, tag: Any
) -> UOp:
    with _intern_lock:
        ref = _interned.get(key)  # another thread may have created it meanwhile
        if ref is not None and (node := ref()) is not None:
            return node
        node = cast(UOp, object.__new__(cls))
        node.op, node.dtype, node.src, node.arg, node.tag = op, dtype, src, arg, tag
        ref = _NodeRef(node, _forget)
        ref.key = key
        _interned[key] = ref
        return node


_EXPANDED: Any = object()  # toposort's stack marker: the node below it has its sources done


def _rebuild_graph(nodes: tuple[tuple[Any, ...], ...]) -> UOp:
    """Unpickle a flat node list (sources by index, in topological order); returns the last."""
    built: list[UOp] = []
    for op, dtype, src_idx, arg, tag in nodes:
        built.append(UOp(op, dtype, tuple(built[i] for i in src_idx), arg, tag))
    return built[-1]


T = TypeVar("T")


class graph_property(Generic[T]):
    """A cached property computed from the same property of a node's sources (bounds,
    shapes, ranges, device).

    Computed naively, the first access on a deep graph recurses once per level: the bounds of
    a 100k-node chain ask their source's bounds, which ask theirs... Instead the sources
    that lack the value are filled in first, by an iterative walk from the leaves up, so each
    computation finds its sources' values cached. Values live in the node's ``__dict__``, so
    later reads are plain attribute reads that never reach this descriptor.
    """

    def __init__(self, compute: Callable[[UOp], T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, node: None, owner: type) -> graph_property[T]: ...

    @overload
    def __get__(self, node: UOp, owner: type) -> T: ...

    def __get__(self, node: UOp | None, owner: type) -> graph_property[T] | T:
        if node is None:
            return self
        name = self.name
        if all(name in s.__dict__ for s in node.src):
            value = node.__dict__[name] = self.compute(node)
            return value
        for u in node.toposort(gate=lambda u: name not in u.__dict__):
            if name not in u.__dict__:
                u.__dict__[name] = self.compute(u)
        return cast(T, node.__dict__[name])


class UOp(metaclass=UOpMetaClass):
    """An immutable IR node. Do not assign to its fields; build a new node with ``replace``."""

    # fields in slots; __dict__ stays unallocated until a cached property is first computed
    __slots__ = ("__dict__", "__weakref__", "arg", "dtype", "op", "src", "tag")
    op: Ops
    dtype: DType
    src: tuple[UOp, ...]
    arg: Any
    tag: Any

    if TYPE_CHECKING:
        # nodes are built by UOpMetaClass.__call__ (interning), never by __init__; this
        # signature is for type checkers
        def __init__(
            self,
            op: Ops,
            dtype: DType = dtypes.void,
            src: tuple[UOp, ...] = (),
            arg: Any = None,
            tag: Any = None,
        ) -> None: ...

    def __reduce__(self) -> tuple[Callable[..., UOp], tuple[Any, ...]]:
        # flat, so pickling a 100k-deep graph needs no recursion
        order = self.toposort()
        index = {u: i for i, u in enumerate(order)}
        nodes = tuple((u.op, u.dtype, tuple(index[s] for s in u.src), u.arg, u.tag) for u in order)
        return (_rebuild_graph, (nodes,))

    def replace(self, **kwargs: Any) -> UOp:
        """This node with some fields changed (``op``, ``dtype``, ``src``, ``arg``, ``tag``)."""
        op = kwargs.pop("op", self.op)
        dtype = kwargs.pop("dtype", self.dtype)
        src = tuple(kwargs.pop("src", self.src))  # no copy when it is a tuple already
        arg = kwargs.pop("arg", self.arg)
        tag = kwargs.pop("tag", self.tag)
        if kwargs:
            raise TypeError(f"replace: unknown field(s) {sorted(kwargs)}")
        return UOp(op, dtype, src, arg, tag)

    def rtag(self, tag: Any = True) -> UOp:
        """This node with ``tag`` set (tags mark nodes during a rewrite)."""
        return self.replace(tag=tag)

    # -- printing ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        from fusegrad.uop.render import pretty

        return pretty(self)

    def render(self, simplify: bool = True) -> str:
        """This expression as readable math, e.g. ``((x*4)+2)//4`` (deterministic)."""
        from fusegrad.uop.render import render_uop

        return render_uop(self.simplify() if simplify else self)

    # -- graph walks ------------------------------------------------------------------------
    def toposort(self, gate: Callable[[UOp], bool] | None = None) -> list[UOp]:
        """Every node reachable from this one, sources before users (iterative).

        ``gate(u)`` returning False stops the walk below ``u`` (``u`` itself is included).
        Without a gate the order is cached on the node (it is immutable); each call returns
        a new list.
        """
        if gate is not None:
            return self._walk(gate)
        # cached without the node itself (always last): a node referring to itself through
        # its __dict__ would be a reference cycle, freed only by the garbage collector
        below = self.__dict__.get("_toposort")
        if below is None:
            order = self._walk(None)
            self.__dict__["_toposort"] = tuple(order[:-1])
            return order
        return [*below, self]

    def _walk(self, gate: Callable[[UOp], bool] | None) -> list[UOp]:
        order: list[UOp] = []
        seen: set[UOp] = set()
        # a stack of UOps, each followed by a marker once its sources are pushed (tuples per
        # step would cost more in allocation and garbage collection than the walk itself);
        # sources are pushed unfiltered, one already seen is skipped when popped
        stack: list[Any] = [self]
        pop, push, add, append = stack.pop, stack.extend, seen.add, order.append
        while stack:
            node = pop()
            if node is _EXPANDED:
                append(pop())
            elif node not in seen:
                add(node)
                if not node.src:
                    append(node)
                elif gate is None or gate(node):
                    push((node, _EXPANDED, *reversed(node.src)))
                else:
                    push((node, _EXPANDED))
        return order

    def backward_slice(self) -> set[UOp]:
        """Every node this one depends on (excluding itself)."""
        return set(self.toposort()) - {self}

    def variables(self) -> list[UOp]:
        """The Variables (DEFINE_VAR) this expression uses, sorted by name."""
        found = [u for u in self.toposort() if u.op is Ops.DEFINE_VAR]
        return sorted(found, key=lambda v: v.arg)

    @graph_property
    def ranges(self) -> dict[UOp, None]:
        """The RANGE nodes this value varies with (closed ones by END excluded), in order."""
        if self.op is Ops.RANGE:
            return {**self.src[0].ranges, self: None}
        out: dict[UOp, None] = {}
        for s in self.src:
            out.update(s.ranges)
        if self.op in (Ops.END, Ops.REDUCE):
            for r in self.src[1:]:
                out.pop(r, None)
        return out

    # -- bounds -----------------------------------------------------------------------------
    @graph_property
    def _min_max(self) -> tuple[Any, Any]:
        return min_max(self)

    @property
    def vmin(self) -> Any:
        """The smallest value this node can take (see ``fusegrad.uop.bounds``)."""
        return self._min_max[0]

    @property
    def vmax(self) -> Any:
        """The largest value this node can take."""
        return self._min_max[1]

    def __bool__(self) -> bool:
        lo, hi = self._min_max
        if self.dtype.scalar() is dtypes.bool and lo == hi:
            return bool(lo)
        if self.op is Ops.CONST and self.arg is not Invalid:
            return bool(self.arg)
        raise TypeError(f"the truth value of symbolic {self.render(simplify=False)} is unknown")

    def __int__(self) -> int:
        if self.op is Ops.CONST and isinstance(self.arg, int):
            return int(self.arg)
        lo, hi = self._min_max
        if lo == hi and isinstance(lo, int):
            return lo
        raise TypeError(f"int: symbolic {self.render(simplify=False)} has no single value")

    # -- constructors -----------------------------------------------------------------------
    @staticmethod
    def const(
        b: Any,
        dtype: DType | None = None,
        device: Any = None,
        shape: tuple[sint, ...] | None = None,
    ) -> UOp:
        """The constant ``b`` of ``dtype`` (value first, as tinygrad); with ``device``/``shape`` a
        tensor-level constant broadcast to ``shape``. ``b`` is converted exactly as the hardware
        would store it. Without ``dtype`` a Python value keeps its weak type: bool -> bool,
        int -> weakint, float -> weakfloat.

        >>> UOp.const(5).dtype, UOp.const(2.5, dtypes.float32).arg
        (dtypes.weakint, 2.5)
        """
        if dtype is None:
            if isinstance(b, UOp):
                return b
            dtype = dtypes.weak_from_py(b)
        if isinstance(b, UOp):
            return b.cast(dtype) if b.dtype is not dtype else b
        if isinstance(b, tuple) and dtype.count > 1:
            value: Any = tuple(dtypes.as_const(v, dtype.scalar()) for v in b)
            if len(value) != dtype.count:
                raise ValueError(f"const: {len(value)} values for {dtype!r}")
            node = UOp(Ops.VCONST, dtype, (), value)
        else:
            value = b if b is Invalid else dtypes.as_const(b, dtype.scalar())
            src = () if device is None else (UOp(Ops.DEVICE, arg=device),)
            node = UOp(Ops.CONST, dtype, src, value)
        if shape is not None:
            node = node.reshape((1,) * len(shape)).expand(shape)
        return node

    def const_like(self, b: Any) -> UOp:
        """A constant with this node's dtype (and shape/device when it is a tensor)."""
        if self._device is not None and self.st_shape is not None:
            return UOp.const(b, self.dtype, self._device, self.st_shape)
        return UOp.const(b, self.dtype)

    @staticmethod
    def invalid(dtype: DType = dtypes.weakint) -> UOp:
        """The poison index value."""
        return UOp(Ops.CONST, dtype, (), Invalid)

    @staticmethod
    def variable(
        name: str,
        min_val: ConstType,
        max_val: ConstType,
        dtype: DType = dtypes.weakint,
        param: bool = False,
    ) -> UOp:
        """A symbolic value ``name`` in ``[min_val, max_val]``.

        A Variable is a 0-d buffer in the ALU address space: ``v.bind(3)`` stores 3 into it.
        ``param=True`` gives the in-kernel form, a scalar kernel parameter with the same range.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"variable: name must be a non-empty str, got {name!r}")
        if min_val > max_val:
            raise ValueError(f"variable {name!r}: min {min_val} > max {max_val}")
        op = Ops.PARAM if param else Ops.DEFINE_VAR
        return UOp(op, dtype, (), (name, min_val, max_val))

    @staticmethod
    def range(end: sint, axis: int, axis_type: AxisType = AxisType.LOOP) -> UOp:
        """A loop counter over ``[0, end)``; ``axis`` tells ranges apart."""
        return UOp(Ops.RANGE, dtypes.weakint, (sint_to_uop(end),), (axis, axis_type))

    @staticmethod
    def special(end: sint, name: str) -> UOp:
        """A hardware index (``gidx0``, ``lidx1``, a CPU core id) in ``[0, end)``."""
        return UOp(Ops.SPECIAL, dtypes.weakint, (sint_to_uop(end),), name)

    @staticmethod
    def param(slot: int, dtype: DType) -> UOp:
        """Kernel parameter number ``slot`` (a buffer pointer when ``dtype`` is a PtrDType)."""
        return UOp(Ops.PARAM, dtype, (), slot)

    # next() on an itertools.count is atomic, so threads never draw the same number
    _unique_numbers: ClassVar[Iterator[int]] = itertools.count(1)

    @staticmethod
    def unique(number: int | None = None) -> UOp:
        """A fresh identity: two UNIQUEs with different numbers are different nodes."""
        if number is None:
            number = next(UOp._unique_numbers)
        return UOp(Ops.UNIQUE, arg=number)

    @staticmethod
    def new_buffer(device: Any, size: int, dtype: DType, number: int | None = None) -> UOp:
        """A new buffer of ``size`` elements on ``device`` (a fresh identity each call)."""
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"new_buffer: size must be an int >= 0, got {size!r}")
        src = (UOp.unique(number), UOp(Ops.DEVICE, arg=device))
        return UOp(Ops.BUFFER, dtype, src, size)

    @staticmethod
    def sink(*srcs: UOp, arg: Any = None) -> UOp:
        """The root of a graph with the given outputs."""
        return UOp(Ops.SINK, dtypes.void, tuple(srcs), arg)

    @staticmethod
    def group(*srcs: UOp) -> UOp:
        """Several nodes kept together (a single node is returned as is)."""
        if len(srcs) == 1:
            return srcs[0]
        return UOp(Ops.GROUP, dtypes.void, tuple(srcs))

    def after(self, *deps: UOp) -> UOp:
        """This value, once the effects ``deps`` have happened."""
        return UOp(Ops.AFTER, self.dtype, (self, *deps))

    def store(self, value: UOp | ConstType) -> UOp:
        """Store ``value`` through this pointer/index/buffer."""
        val = value if isinstance(value, UOp) else UOp.const(value, self._value_dtype)
        return UOp(Ops.STORE, dtypes.void, (self, val))

    def load(self, *extra: UOp, dtype: DType | None = None) -> UOp:
        """Load through this pointer/index."""
        return UOp(Ops.LOAD, dtype or self._value_dtype, (self, *extra))

    def index(self, *idx: UOp | int, gate: UOp | None = None) -> UOp:
        """``self[idx]``: address of an element of a buffer (``gate``: valid only where True)."""
        srcs = tuple(sint_to_uop(i) for i in idx)
        if gate is not None:
            srcs += (gate,)
        return UOp(Ops.INDEX, self.dtype, (self, *srcs))

    def valid(self, cond: UOp) -> UOp:
        """This index where ``cond`` holds, ``Invalid`` elsewhere."""
        return cond.where(self, UOp.invalid(self.dtype))

    def get_idx(self) -> UOp:
        """The index part of ``idx.valid(cond)`` (the node itself otherwise)."""
        if self.op is Ops.WHERE and self.src[2].arg is Invalid and self.src[2].op is Ops.CONST:
            return self.src[1]
        return self

    def get_valid(self) -> UOp:
        """The condition of ``idx.valid(cond)`` (True otherwise)."""
        if self.op is Ops.WHERE and self.src[2].arg is Invalid and self.src[2].op is Ops.CONST:
            return self.src[0]
        return UOp.const(True, dtypes.bool)

    def end(self, *ranges: UOp) -> UOp:
        """Close ``ranges`` after this effect."""
        return UOp(Ops.END, dtypes.void, (self, *ranges))

    def reduce(self, *ranges: UOp, arg: Ops = Ops.ADD) -> UOp:
        """Kernel-level reduction of this value over ``ranges`` with op ``arg``."""
        if arg not in GroupOp.Reduce:
            raise ValueError(
                f"reduce: {arg!r} is not a reduce op ({sorted(o.name for o in GroupOp.Reduce)})"
            )
        return UOp(Ops.REDUCE, self.dtype, (self, *ranges), arg)

    def r(self, op: Ops, axis: tuple[int, ...]) -> UOp:
        """Tensor-level reduction over ``axis`` (keeps the reduced dims as 1)."""
        axes = tuple(sorted(a for a in axis if resolve(self.shape[a] != 1)))
        if not axes:
            return self
        return UOp(Ops.REDUCE_AXIS, self.dtype, (self,), (op, axes))

    @property
    def _value_dtype(self) -> DType:
        dt = self.dtype
        return dt.base if isinstance(dt, PtrDType) else dt

    # -- casts ------------------------------------------------------------------------------
    def cast(self, dtype: DType) -> UOp:
        """This value converted to ``dtype`` (no node when it already has it)."""
        if self.dtype is dtype:
            return self
        foldable = self.op is Ops.CONST and not self.src and self.arg is not Invalid
        if foldable and dtype.count == 1 and dtype.scalar() in dtypes.all:
            return UOp.const(self.arg, dtype)  # the conversion, done exactly now
        return UOp(Ops.CAST, dtype, (self,))

    def bitcast(self, dtype: DType) -> UOp:
        """The bits of this value read as ``dtype``."""
        if self.dtype is dtype:
            return self
        return UOp(Ops.BITCAST, dtype, (self,))

    # -- ALU --------------------------------------------------------------------------------
    def alu(self, op: Ops, *srcs: UOp | ConstType) -> UOp:
        """The ALU node ``op(self, *srcs)`` with dtype promotion (Python numbers are weak)."""
        if len(srcs) == 1 and op in _SAME_DTYPE_BINARY:
            fast = _same_dtype_binary(self, op, srcs[0])
            if fast is not None:
                return fast
        operands = [self, *srcs]
        if op is Ops.WHERE:
            cond = _as_uop(operands[0], dtypes.bool)
            a, b = _promote(operands[1:])
            return UOp(Ops.WHERE, a.dtype, (cond, a, b))
        if op in (Ops.SHL, Ops.SHR):
            lhs = _as_uop(operands[0], None)
            rhs = _as_uop(operands[1], lhs.dtype)
            return UOp(op, lhs.dtype, (lhs, rhs.cast(lhs.dtype)))
        promoted = _promote(operands)
        if op is Ops.FDIV:  # true division of ints computes in a float
            out = _float_dtype(promoted[0].dtype)
            promoted = [_cast_operand(u, out) for u in promoted]
        out_dtype = (
            dtypes.bool.vec(promoted[0].dtype.count)
            if op in GroupOp.Comparison
            else promoted[0].dtype
        )
        return UOp(op, out_dtype, tuple(promoted))

    def __add__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.ADD, x)

    def __radd__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.ADD, self)

    def __sub__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.SUB, x)

    def __rsub__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.SUB, self)

    def __mul__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.MUL, x)

    def __rmul__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.MUL, self)

    def __floordiv__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.FLOORDIV, x)

    def __rfloordiv__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.FLOORDIV, self)

    def __mod__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.FLOORMOD, x)

    def __rmod__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.FLOORMOD, self)

    def __truediv__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.FDIV, x)

    def __rtruediv__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.FDIV, self)

    def cdiv(self, x: UOp | ConstType) -> UOp:
        """Integer division truncating toward zero (C's ``/``)."""
        return self.alu(Ops.CDIV, x)

    def cmod(self, x: UOp | ConstType) -> UOp:
        """Remainder with the dividend's sign (C's ``%``)."""
        return self.alu(Ops.CMOD, x)

    def __neg__(self) -> UOp:
        if self.dtype.scalar() is dtypes.bool:
            return self.logical_not()
        return UOp(Ops.NEG, self.dtype, (self,))

    def __lt__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.CMPLT, x)

    def __gt__(self, x: UOp | ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.CMPLT, self)

    def __le__(self, x: UOp | ConstType) -> UOp:
        other = _as_uop(x, self.dtype)
        if dtypes.is_float(least_upper_dtype(self.dtype, other.dtype)):
            return (self < other) | self.eq(other)  # NaN <= y is False
        return (other < self).logical_not()

    def __ge__(self, x: UOp | ConstType) -> UOp:
        return _as_uop(x, self.dtype) <= self

    def eq(self, x: UOp | ConstType) -> UOp:
        """The comparison node ``self == x`` (``==`` itself is identity)."""
        return self.alu(Ops.CMPEQ, x)

    def ne(self, x: UOp | ConstType) -> UOp:
        """The comparison node ``self != x``."""
        return self.alu(Ops.CMPNE, x)

    def __and__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.AND, x)

    def __rand__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.AND, self)

    def __or__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.OR, x)

    def __ror__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.OR, self)

    def __xor__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.XOR, x)

    def __rxor__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.XOR, self)

    def __lshift__(self, x: UOp | int) -> UOp:
        return self.alu(Ops.SHL, x)

    def __rshift__(self, x: UOp | int) -> UOp:
        return self.alu(Ops.SHR, x)

    def __rlshift__(self, x: int) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.SHL, self)

    def __rrshift__(self, x: int) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.SHR, self)

    def __invert__(self) -> UOp:
        if self.dtype.scalar() is dtypes.bool:
            return self.logical_not()
        return self.alu(
            Ops.XOR, -1 if self.dtype.scalar() not in dtypes.uints else dtypes.max(self.dtype)
        )

    def __pow__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.POW, x)

    def __rpow__(self, x: ConstType) -> UOp:
        return _as_uop(x, self.dtype).alu(Ops.POW, self)

    __hash__ = object.__hash__
    __eq__ = object.__eq__

    def logical_not(self) -> UOp:
        """Boolean negation."""
        return self.ne(True)

    def maximum(self, x: UOp | ConstType) -> UOp:
        """Elementwise max."""
        return self.alu(Ops.MAX, x)

    def minimum(self, x: UOp | ConstType) -> UOp:
        """Elementwise min: ``-max(-a, -b)`` (which the simplifier understands) for floats and
        ``weakint``; a WHERE for fixed-width ints and bool, where negation wraps around
        (``-(-128)`` is ``-128`` in int8, ``-0`` is 0 but ``-5`` is 251 in uint8)."""
        other = _as_uop(x, self.dtype)
        scalar = least_upper_dtype(self.dtype, other.dtype).scalar()
        if scalar in dtypes.floats or scalar is dtypes.weakint:
            return -((-self).maximum(-other))
        return (self < other).where(self, other)

    def where(self, x: UOp | ConstType, y: UOp | ConstType) -> UOp:
        """``x`` where this condition holds, else ``y``."""
        return self.alu(Ops.WHERE, x, y)

    def mulacc(self, x: UOp | ConstType, y: UOp | ConstType) -> UOp:
        """``self * x + y`` as one node."""
        return self.alu(Ops.MULACC, x, y)

    def exp2(self) -> UOp:
        return UOp(Ops.EXP2, _float_dtype(self.dtype), (self.cast(_float_dtype(self.dtype)),))

    def log2(self) -> UOp:
        return UOp(Ops.LOG2, _float_dtype(self.dtype), (self.cast(_float_dtype(self.dtype)),))

    def sin(self) -> UOp:
        return UOp(Ops.SIN, _float_dtype(self.dtype), (self.cast(_float_dtype(self.dtype)),))

    def sqrt(self) -> UOp:
        return UOp(Ops.SQRT, _float_dtype(self.dtype), (self.cast(_float_dtype(self.dtype)),))

    def reciprocal(self) -> UOp:
        return UOp(Ops.RECIPROCAL, _float_dtype(self.dtype), (self.cast(_float_dtype(self.dtype)),))

    def trunc(self) -> UOp:
        return UOp(Ops.TRUNC, self.dtype, (self,))

    # -- symbolic ---------------------------------------------------------------------------
    def simplify(self) -> UOp:
        """This expression rewritten by the ``sym`` rule set to a fixed point.

        The result is cached on the node (the rules are pure, so it can't change); a node that
        is its own result stores True, not itself, so the cache makes no reference cycle.

        >>> x = UOp.variable("x", 0, 7)
        >>> ((x * 8 + 3) // 8).simplify() is x
        True
        """
        cached = self.__dict__.get("_simplified")
        if cached is not None:
            return self if cached is True else cast(UOp, cached)
        from fusegrad.uop.rewrite import graph_rewrite
        from fusegrad.uop.symbolic import sym

        out = graph_rewrite(self, sym, name="simplify")
        self.__dict__["_simplified"] = True if out is self else out
        out.__dict__["_simplified"] = True
        return out

    def ssimplify(self) -> UOp | ConstType:
        """``simplify``, returned as a Python number when the result is a constant."""
        ret = self.simplify()
        return ret.arg if ret.op is Ops.CONST and ret.arg is not Invalid else ret

    def substitute(self, mapping: Mapping[UOp, UOp], name: str | None = None) -> UOp:
        """This graph with every node in ``mapping`` replaced (no further rewriting)."""
        from fusegrad.uop.rewrite import substitute

        return substitute(self, mapping)

    def const_factor(self) -> int:
        """The largest int known to divide this expression (1 when none is known).

        >>> x = UOp.variable("x", 0, 9)
        >>> (x * 6 + 12).const_factor(), (x * 4 * 3).const_factor()
        (6, 12)
        """
        if self.op is Ops.CONST:
            return abs(self.arg) if type(self.arg) is int else 1
        if self.op is Ops.VCONST:
            return math.gcd(*self.arg) if all_int(self.arg) else 1
        if self.op is Ops.ADD:
            return math.gcd(self.src[0].const_factor(), self.src[1].const_factor())
        if self.op is Ops.MUL:
            return self.src[0].const_factor() * self.src[1].const_factor()
        if self.op not in (Ops.NEG, Ops.WHERE) or dtypes.is_float(self.dtype):
            return 1
        # -x, and both branches of a where (an Invalid branch has no value to divide)
        values = [s for s in self.src[-2:] if not (s.op is Ops.CONST and s.arg is Invalid)]
        return math.gcd(*(s.const_factor() for s in values))

    def divides(self, v: int) -> UOp | None:
        """This expression divided by ``v`` if ``v`` divides it exactly, else None.

        The result ``q`` satisfies ``q * v == self`` (for every int dtype, wrap-around too).

        >>> x = UOp.variable("x", 0, 9)
        >>> (x * 6 + 12).divides(3).render()
        'x*2+4'
        """
        if v == 1:
            return self
        if v == 0 or dtypes.is_float(self.dtype):
            return None
        if self.op in (Ops.CONST, Ops.VCONST):
            values = self.arg if self.op is Ops.VCONST else (self.arg,)
            if not all_int(values) or any(x % v for x in values):
                return None
            quotient = tuple(x // v for x in values)
            return self.const_like(quotient if self.op is Ops.VCONST else quotient[0])
        if self.op is Ops.ADD:
            d0, d1 = self.src[0].divides(v), self.src[1].divides(v)
            return d0 + d1 if d0 is not None and d1 is not None else None
        if self.op is Ops.MUL:
            if (d0 := self.src[0].divides(v)) is not None:
                return d0 * self.src[1]
            d1 = self.src[1].divides(v)
            return None if d1 is None else self.src[0] * d1
        negated = self.src[0].divides(v) if self.op is Ops.NEG else None
        return None if negated is None else -negated

    # -- variables and binding ----------------------------------------------------------------
    def bind(self, val: int) -> UOp:
        """This Variable with ``val`` stored in it: ``AFTER(v, STORE(v, val))``."""
        if self.op is not Ops.DEFINE_VAR:
            raise TypeError(f"bind: only a Variable can be bound, not {self.op!r}")
        if not isinstance(val, int) or isinstance(val, bool):
            raise TypeError(f"bind: {self.arg[0]} needs an int, got {val!r}")
        if not self.arg[1] <= val <= self.arg[2]:
            raise ValueError(
                f"bind: {val} is outside {self.arg[0]}'s range [{self.arg[1]}, {self.arg[2]}]"
            )
        return UOp(Ops.AFTER, self.dtype, (self, self.store(val)))

    def unbind(self) -> tuple[UOp, int]:
        """(the Variable, its bound value) of a bound Variable."""
        if not self.is_bound_var:
            raise TypeError(f"unbind: not a bound Variable: {self.op!r}")
        return self.src[0], self.src[1].src[1].arg

    @property
    def is_variable(self) -> bool:
        """True for an unbound Variable."""
        return self.op is Ops.DEFINE_VAR

    @property
    def is_bound_var(self) -> bool:
        """True for ``v.bind(n)``."""
        return (
            self.op is Ops.AFTER
            and len(self.src) == 2
            and self.src[0].op is Ops.DEFINE_VAR
            and self.src[1].op is Ops.STORE
            and self.src[1].src[0] is self.src[0]
            and self.src[1].src[1].op is Ops.CONST
        )

    @property
    def expr(self) -> str:
        """The name of a Variable."""
        return str(self.arg[0])

    # -- tensor-level shape -----------------------------------------------------------------
    @graph_property
    def st_shape(self) -> tuple[sint, ...] | None:
        """The shape of a tensor-level node (None for nodes without one)."""
        from fusegrad.uop.shape import infer_shape

        return infer_shape(self)

    @property
    def shape(self) -> tuple[sint, ...]:
        """The shape of a tensor-level node; raises for nodes without one."""
        shape = self.st_shape
        if shape is None:
            raise ValueError(f"{self.op!r} has no shape")
        return shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> sint:
        """Number of elements (symbolic for symbolic shapes)."""
        n: sint = prod(self.shape)
        return n

    @graph_property
    def _device(self) -> Any:
        if self.op is Ops.DEVICE:
            return self.arg
        if self.op is Ops.COPY:
            return self.src[1]._device  # COPY(value, DEVICE): lives where it is copied to
        for s in self.src:
            if (d := s._device) is not None:
                return d
        return None

    @property
    def device(self) -> Any:
        """The device name a tensor-level node lives on (None when it has none)."""
        return self._device

    def _movement(self, op: Ops, arg: tuple[Any, ...]) -> UOp:
        from fusegrad.uop.shape import check_movement

        if (same := check_movement(self, op, arg)) is not None:
            return same
        return UOp(op, self.dtype, (self,), arg)

    def reshape(self, *shape: sint | tuple[sint, ...]) -> UOp:
        """The same elements in a new shape (sizes must match)."""
        return self._movement(Ops.RESHAPE, argfix(*shape))

    def permute(self, *order: int | tuple[int, ...]) -> UOp:
        """Axes reordered: new axis ``i`` is old axis ``order[i]``."""
        return self._movement(Ops.PERMUTE, argfix(*order))

    def expand(self, *shape: sint | tuple[sint, ...]) -> UOp:
        """Size-1 axes broadcast to ``shape``."""
        return self._movement(Ops.EXPAND, argfix(*shape))

    def pad(self, padding: Sequence[tuple[sint, sint]]) -> UOp:
        """Zero padding: ``(before, after)`` per axis."""
        return self._movement(Ops.PAD, tuple((b, a) for b, a in padding))

    def shrink(self, bounds: Sequence[tuple[sint, sint]]) -> UOp:
        """The window ``[start, end)`` per axis."""
        return self._movement(Ops.SHRINK, tuple((s, e) for s, e in bounds))

    def flip(self, axes: Sequence[bool]) -> UOp:
        """Reversed along the axes marked True."""
        return self._movement(Ops.FLIP, tuple(bool(a) for a in axes))


# -- module helpers ------------------------------------------------------------------------------


def _float_dtype(dt: DType) -> DType:
    s = dt.scalar()
    if s in dtypes.floats:
        return dt
    return (dtypes.weakfloat if s is dtypes.weakint else dtypes.default_float).vec(dt.count)


@functools.cache
def _keeps_dtype(dtype: DType, literal: DType) -> bool:
    """True when a Python literal of weak dtype ``literal`` (bool, weakint, weakfloat) combined
    with ``dtype`` promotes to ``dtype`` itself: ``x + 1`` on an int, ``f * 2.0`` on a float."""
    if isinstance(dtype, PtrDType):
        return False
    try:
        return least_upper_dtype(dtype.scalar(), literal) is dtype.scalar()
    except TypeError:  # void and other dtypes without values
        return False


_LITERAL_DTYPES: dict[type, DType] = {
    bool: dtypes.bool,
    int: dtypes.weakint,
    float: dtypes.weakfloat,
}

# binary ops whose operands share one dtype and whose result has it (comparisons: bool)
_SAME_DTYPE_BINARY = GroupOp.Binary - {Ops.FDIV, Ops.SHL, Ops.SHR}


def _same_dtype_binary(a: UOp, op: Ops, b: UOp | ConstType) -> UOp | None:
    """``op(a, b)`` when no promotion is needed (the common case, and the fast path), else None.

    ``b`` qualifies if it is a UOp of ``a``'s dtype, or a Python literal that promotes to it.
    """
    dtype = a.dtype
    if isinstance(b, UOp):
        if b.dtype is not dtype or not _keeps_dtype(dtype, dtypes.bool):
            return None
    else:
        literal = _LITERAL_DTYPES.get(type(b))
        if literal is None or not _keeps_dtype(dtype, literal):
            return None
        b = UOp.const(b, dtype)
    out = dtypes.bool.vec(dtype.count) if op in GroupOp.Comparison else dtype
    return UOp(op, out, (a, b))


def _as_uop(x: UOp | ConstType, like: DType | None) -> UOp:
    """``x`` as a UOp: Python numbers become weak constants (in ``like``'s dtype when that
    is the promotion anyway)."""
    if isinstance(x, UOp):
        return x
    literal = _LITERAL_DTYPES.get(type(x))
    if like is not None and literal is not None and _keeps_dtype(like, literal):
        return UOp.const(x, like)
    if isinstance(x, InvalidType):
        return UOp.invalid(like or dtypes.weakint)
    if not isinstance(x, (int, float, bool)):
        raise TypeError(f"can't use a {type(x).__name__} in UOp arithmetic")
    weak = dtypes.weak_from_py(x)
    if like is not None:
        out = least_upper_dtype(like.scalar(), weak)
        return UOp.const(x, out.vec(like.count) if out is like.scalar() else out)
    return UOp.const(x, weak)


def _promote(operands: Sequence[UOp | ConstType]) -> list[UOp]:
    """Operands cast to their common dtype (constants are rebuilt, not cast)."""
    first = next((o for o in operands if isinstance(o, UOp)), None)
    like = first.dtype if first is not None else None
    uops = [_as_uop(o, like) for o in operands]
    scalar = promoted_dtype(*(u.dtype.scalar() for u in uops))
    count = max(u.dtype.count for u in uops)
    out = scalar.vec(count)
    return [_cast_operand(u, out) for u in uops]


def _cast_operand(u: UOp, out: DType) -> UOp:
    if u.dtype is out:
        return u
    if u.op is Ops.CONST and not u.src:
        return UOp(
            Ops.CONST, out, (), u.arg if u.arg is Invalid else dtypes.as_const(u.arg, out.scalar())
        )
    if u.dtype.count != out.count:
        if u.dtype.count != 1:
            raise ValueError(f"can't combine vectors of {u.dtype.count} and {out.count}")
        u = UOp(Ops.VECTORIZE, u.dtype.vec(out.count), (u,) * out.count)
    return u.cast(out)


def sint_to_uop(x: sint, dtype: DType = dtypes.weakint) -> UOp:
    """A size as a UOp (ints become constants)."""
    return x if isinstance(x, UOp) else UOp.const(x, dtype)


def resolve(x: UOp | bool, default: bool = True) -> bool:
    """A boolean that may be symbolic: its value when range analysis decides it, else
    ``default``."""
    if not isinstance(x, UOp):
        return bool(x)
    if x.dtype.scalar() is not dtypes.bool:
        raise TypeError(f"resolve: needs a bool, got {x.dtype!r}")
    lo, hi = x.vmin, x.vmax
    return bool(lo) if lo == hi else default


def _as_sint(x: Any) -> sint:
    if isinstance(x, (int, UOp)):
        return x
    raise TypeError(f"expected an int size, got {x!r}")


def smax(*xs: sint | Iterable[sint]) -> sint:
    """Max of sizes, symbolic where needed."""
    vals = argfix(*xs)
    if all_int(vals):
        return int(max(vals))
    out = sint_to_uop(vals[0])
    for v in vals[1:]:
        out = out.maximum(v)
    return _as_sint(out.ssimplify())


def smin(*xs: sint | Iterable[sint]) -> sint:
    """Min of sizes, symbolic where needed."""
    vals = argfix(*xs)
    if all_int(vals):
        return int(min(vals))
    out = sint_to_uop(vals[0])
    for v in vals[1:]:
        out = out.minimum(v)
    return _as_sint(out.ssimplify())


def ssimplify(x: sint) -> sint:
    """Simplify a size (ints pass through)."""
    if not isinstance(x, UOp):
        return x
    return _as_sint(x.ssimplify())


def sym_infer(x: sint | ConstType, var_vals: Mapping[Any, int]) -> Any:
    """The value of expression ``x`` with its Variables set to ``var_vals``."""
    from fusegrad.uop.render import evaluate

    if not isinstance(x, UOp):
        return x
    return evaluate(x, var_vals)


def iter_uops(xs: Iterable[Any]) -> Iterator[UOp]:
    """The UOps among ``xs``."""
    return (x for x in xs if isinstance(x, UOp))


__all__ = [
    "AddrSpace",
    "UOp",
    "resolve",
    "sint",
    "sint_to_uop",
    "smax",
    "smin",
    "ssimplify",
    "sym_infer",
]
