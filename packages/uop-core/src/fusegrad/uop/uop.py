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
import hashlib
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
    commit_weak,
    dtypes,
    least_upper_dtype,
    promoted_dtype,
)
from fusegrad.uop.flags import TRACEMETA
from fusegrad.uop.helpers import all_int, argfix, prod
from fusegrad.uop.kernelinfo import ParamArg
from fusegrad.uop.mixin import ElementwiseMixin, OpMixin, broadcast_shape
from fusegrad.uop.opcodes import AxisType, GroupOp, Ops

if TYPE_CHECKING:
    from fusegrad.uop.pattern import PatternMatcher

sint: TypeAlias = "int | UOp"  # a size: a Python int or a symbolic UOp


_JUST_INT = {int}
_INTS: Any = object()  # marks the key of a tuple of plain ints (a GEP's lanes, a VCONST)


def _arg_key(arg: Any) -> Any:
    """A key for an arg that tells apart what Python's == conflates: ``1``/``1.0``/``True``,
    ``0.0``/``-0.0``, and matches NaN to itself (the intern table compares keys with ==)."""
    kind = type(arg)
    if kind is float:
        return (float, struct.pack("<d", arg))
    if kind is tuple:
        if len(arg) > 3 and set(map(type, arg)) == _JUST_INT:  # nothing to tell apart
            return (_INTS, arg)
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
_lookup = _interned.get  # bound once: the hit path is one call, no attribute lookup


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
        metadata: Any = None,
        _buffer: Any = None,
    ) -> UOp:
        key = (
            op,
            dtype,
            src,
            arg if arg is None else _arg_key(arg),
            tag if tag is None else _arg_key(tag),
        )
        ref = _lookup(key)
        if ref is not None and (node := ref()) is not None:
            if metadata is None and _buffer is None:
                return node
        else:
            node = _create(cls, key, op, dtype, src, arg, tag)
        if metadata is not None or _buffer is not None:
            _record_side_tables(node, metadata, _buffer)
        return node


all_metadata: weakref.WeakKeyDictionary[UOp, Any] = weakref.WeakKeyDictionary()
"""UOp -> the metadata given as ``UOp(..., metadata=...)`` (tinygrad's record of the Tensor
function that made a node). A side table, not part of the node's identity: equal nodes are one
node, and the entry leaves with the node (read it as ``UOp.metadata``)."""

buffers: weakref.WeakKeyDictionary[UOp, Any] = weakref.WeakKeyDictionary()
"""UOp -> the buffer object given as ``UOp(..., _buffer=...)``. uop-core stores the object
and never looks into it (it must not import the runtime)."""


def _record_side_tables(node: UOp, metadata: Any, buffer: Any) -> None:
    if metadata is not None and TRACEMETA.value:
        all_metadata[node] = metadata
    if buffer is not None:
        buffers[node] = buffer


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

    def __init__(self, fxn: Callable[[UOp], T]) -> None:
        self.compute = fxn
        self.name = fxn.__name__
        self.__doc__ = fxn.__doc__

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


recursive_property = graph_property
"""tinygrad's name for ``graph_property``: a cached property computed over a graph
iteratively (sources first), so a deep graph needs no recursion."""


class UOp(OpMixin, metaclass=UOpMetaClass):
    """An immutable IR node. Do not assign to its fields; build a new node with ``replace``."""

    # fields in slots; __dict__ stays unallocated until a cached property is first computed
    __slots__ = ("__dict__", "__weakref__", "arg", "dtype", "op", "src", "tag")
    op: Ops
    dtype: DType
    src: tuple[UOp, ...]
    arg: Any
    tag: Any

    def __init__(
        self,
        op: Ops,
        dtype: DType = dtypes.void,
        src: tuple[UOp, ...] = (),
        arg: Any = None,
        tag: Any = None,
        metadata: Any = None,
        _buffer: Any = None,
    ) -> None:
        """``UOp(op, dtype, src, arg, tag)``: the interned node (``UOpMetaClass.__call__``
        builds it and fills the fields; this initializer is never run, it documents them).
        ``metadata`` and ``_buffer`` are not fields: they go to the side tables
        ``all_metadata`` and ``buffers`` (a node's identity stays its five fields)."""

    @property
    def metadata(self) -> Any:
        """What ``UOp(..., metadata=...)`` recorded for this node (None if nothing)."""
        return all_metadata.get(self)

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

    def render(self, simplify: bool = True, pm: PatternMatcher | None = None) -> str:
        """This expression as readable math, e.g. ``((x*4)+2)//4`` (deterministic); ``pm``
        rewrites it first (after ``simplify``).

        >>> UOp.variable("x", 0, 9).__add__(0).render()
        'x'
        """
        from fusegrad.uop.render import render_uop
        from fusegrad.uop.rewrite import graph_rewrite

        node = self.simplify() if simplify else self
        if pm is not None:
            node = graph_rewrite(node, pm, name="render")
        return render_uop(node)

    def argstr(self) -> str:
        """The arg as ``repr`` shows it."""
        return repr(self.arg)

    def tagstr(self) -> str:
        """``, tag=...`` when the node has a tag, else an empty string (as ``repr`` shows it)."""
        return "" if self.tag is None else f", tag={self.tag!r}"

    # -- graph walks ------------------------------------------------------------------------
    def toposort(
        self, gate: Callable[[UOp], bool] | None = None, enter_calls: bool = True
    ) -> list[UOp]:
        """Every node reachable from this one, sources before users (iterative).

        ``gate(u)`` returning False stops the walk below ``u`` (``u`` itself is included).
        ``enter_calls=False`` does not walk into the callee (first source) of a CALL.
        Without a gate the order is cached on the node (it is immutable); each call returns
        a new list.
        """
        if not enter_calls:
            return self._walk_outside_calls(gate)
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

    def _walk_outside_calls(self, gate: Callable[[UOp], bool] | None) -> list[UOp]:
        order: list[UOp] = []
        seen: set[UOp] = set()
        stack: list[tuple[UOp, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            if gate is None or gate(node):
                src = node.src[1:] if node.op is Ops.CALL else node.src
                stack.extend((s, False) for s in reversed(src))
        return order

    @property
    def backward_slice_with_self(self) -> set[UOp]:
        """This node and every node it depends on."""
        return set(self.toposort())

    def op_in_backward_slice_with_self(self, *ops: Ops) -> bool:
        """True when this node or one it depends on has one of ``ops``."""
        return any(u.op in ops for u in self.toposort())

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
        op = self.op
        if op is Ops.RANGE:
            return {**self.src[0].ranges, self: None}
        # Nodes share a source's dict when they add nothing to it (the values are read-only),
        # so a node on many lanes of one vector merges one dict, not one copy per lane.
        first: dict[UOp, None] | None = None
        out: dict[UOp, None] | None = None
        for s in self.src:
            found = s.ranges
            if not found or found is first:
                continue
            if first is None:
                first = found
                continue
            if out is None:
                out = dict(first)
            out.update(found)
        if op is not Ops.END and op is not Ops.REDUCE:
            return out if out is not None else first if first is not None else {}
        out = dict(out if out is not None else first or {})
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

    def _single_value(self, kind: str) -> Any:
        """The one value this node can take (a constant, or a range of one value); ValueError
        naming the range otherwise (as tinygrad)."""
        if self.op is Ops.CONST and self.arg is not Invalid:
            return self.arg
        lo, hi = self._min_max
        if lo == hi:
            return lo
        lo, hi = self.simplify()._min_max  # bounds of a sum's parts can be loose: x - x
        if lo == hi:
            return lo
        raise ValueError(
            f"{kind}: {self.render(simplify=False)} is not a single value, its range is "
            f"[{lo}, {hi}]"
        )

    def __bool__(self) -> bool:
        """The truth value when the value range decides it (``i < 5`` with ``i`` in [0, 4]);
        ValueError naming the range when it does not."""
        return bool(self._single_value("bool"))

    def __int__(self) -> int:
        value = self._single_value("int")
        if isinstance(value, float):
            raise TypeError(f"int: {self.dtype!r} value {value!r}: use float()")
        return int(value)

    def __float__(self) -> float:
        return float(self._single_value("float"))

    def item(self) -> ConstType:
        """The value of a constant (or of a node whose range is one value)."""
        value: ConstType = self._single_value("item")
        return value

    @property
    def is_realized(self) -> bool:
        """True when this node's value sits in a buffer: a BUFFER, or a view of one."""
        return self.base.op is Ops.BUFFER

    @property
    def base(self) -> UOp:
        """The node under this one's movement ops (and assigns)."""
        u = self
        while u.op in GroupOp.Movement or (u.op is Ops.AFTER and u.src):
            u = u.src[0]
        return u

    @property
    def is_invalid(self) -> bool:
        """True for the ``Invalid`` constant."""
        return self.op is Ops.CONST and self.arg is Invalid

    def sym_infer(self, var_vals: Mapping[Any, int]) -> Any:
        """The value with the Variables set to ``var_vals`` (by name or by Variable)."""
        return sym_infer(self, var_vals)

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
        int -> weakint, float -> weakfloat. A tuple gives a stack of constants (VECTORIZE of
        CONSTs, tinygrad's STACK), one lane each; ``UOp.vconst`` builds the VCONST form.

        >>> UOp.const(5).dtype, UOp.const(2.5, dtypes.float32).arg
        (dtypes.weakint, 2.5)
        >>> UOp.const((1, 2), dtypes.int32).dtype
        dtypes.int32.vec(2)
        """
        if isinstance(b, tuple) and (dtype is None or dtype.count == 1):
            if not b:
                raise ValueError("const: an empty tuple has no vector constant")
            scalar = dtype if dtype is not None else dtypes.weak_from_py(b[0])
            dtype = scalar.vec(len(b)) if len(b) > 1 else scalar
            if len(b) == 1:
                b = b[0]
        if dtype is None:
            if isinstance(b, UOp):
                return b
            dtype = dtypes.weak_from_py(b)
        if isinstance(b, UOp):
            return b.cast(dtype) if b.dtype is not dtype else b
        if isinstance(b, tuple) and dtype.count > 1:
            if len(b) != dtype.count:
                raise ValueError(f"const: {len(b)} values for {dtype!r}")
            lanes = tuple(UOp.const(v, dtype.scalar()) for v in b)
            node = UOp(Ops.VECTORIZE, dtype, lanes)
        else:
            value = b if b is Invalid else dtypes.as_const(b, dtype.scalar())
            src = () if device is None else (UOp(Ops.DEVICE, arg=device),)
            node = UOp(Ops.CONST, dtype, src, value)
        if shape is not None:
            node = node.reshape((1,) * len(shape)).expand(shape)
        return node

    @staticmethod
    def vconst(values: Sequence[Any], dtype: DType) -> UOp:
        """The vector constant (VCONST) of ``dtype`` with one value per lane, each converted
        as the hardware would store it: the form the lowering and the renderers work with.

        >>> UOp.vconst((1, 2.7), dtypes.int32.vec(2)).arg
        (1, 2)
        """
        value = tuple(dtypes.as_const(v, dtype.scalar()) for v in values)
        if len(value) != dtype.count:
            raise ValueError(f"vconst: {len(value)} values for {dtype!r}")
        return UOp(Ops.VCONST, dtype, (), value)

    def const_like(self, b: Any, dtype: DType | None = None) -> UOp:
        """A constant with this node's dtype (or ``dtype``), and its shape and device when it
        is a tensor-level node."""
        dt = self.dtype if dtype is None else dtype
        if self._device is not None and self.st_shape is not None:
            return UOp.const(b, dt, self._device, self.st_shape)
        return UOp.const(b, dt)

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
        multiple_of: int = 1,
        param: bool = False,
    ) -> UOp:
        """A symbolic value ``name`` in ``[min_val, max_val]``.

        A Variable is a 0-d buffer in the ALU address space: ``v.bind(3)`` stores 3 into it.
        ``param=True`` gives the in-kernel form, a scalar kernel parameter with the same range.
        ``multiple_of=m`` promises every value is a multiple of ``m``: ``const_factor`` and the
        simplifier use it (``n % 4`` is 0 for ``multiple_of=4``), and ``bind`` checks it. The
        arg is ``(name, min, max)``, with ``m`` as a fourth item when it is not 1.

        >>> n = UOp.variable("n", 0, 64, multiple_of=16)
        >>> (n % 8).simplify().arg, n.const_factor(), n.vmax
        (0, 16, 64)
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"variable: name must be a non-empty str, got {name!r}")
        if min_val > max_val:
            raise ValueError(f"variable {name!r}: min {min_val} > max {max_val}")
        if not isinstance(multiple_of, int) or isinstance(multiple_of, bool) or multiple_of < 1:
            raise ValueError(
                f"variable {name!r}: multiple_of must be an int >= 1, got {multiple_of!r}"
            )
        if multiple_of != 1 and not dtypes.is_int(dtype) and dtype is not dtypes.weakint:
            raise ValueError(f"variable {name!r}: multiple_of needs an int dtype, got {dtype!r}")
        op = Ops.PARAM if param else Ops.DEFINE_VAR
        arg = (
            (name, min_val, max_val) if multiple_of == 1 else (name, min_val, max_val, multiple_of)
        )
        return UOp(op, dtype, (), arg)

    @property
    def multiple_of(self) -> int:
        """The ``multiple_of`` of a Variable (1 for any other node)."""
        if self.op in (Ops.DEFINE_VAR, Ops.PARAM) and isinstance(self.arg, tuple):
            return int(self.arg[3]) if len(self.arg) > 3 else 1
        return 1

    @staticmethod
    def range(
        end: sint,
        axis_id: int,
        axis_type: AxisType = AxisType.LOOP,
        *arg: Any,
        dtype: DType = dtypes.weakint,
        src: tuple[UOp, ...] = (),
        **kwargs: Any,
    ) -> UOp:
        """A loop counter over ``[0, end)``; ``axis_id`` tells ranges apart. The arg is
        ``(axis_id, axis_type, *arg)``; ``src`` adds sources after ``end``; ``kwargs`` are node
        fields (``tag``)."""
        end_uop = sint_to_uop(end, dtype if dtype.scalar() in dtypes.ints else dtypes.weakint)
        node = UOp(Ops.RANGE, dtype, (end_uop, *src), (axis_id, axis_type, *arg))
        return node.replace(**kwargs) if kwargs else node

    @staticmethod
    def special(end: sint, name: str, dtype: DType = dtypes.weakint) -> UOp:
        """A hardware index (``gidx0``, ``lidx1``, a CPU core id) in ``[0, end)``."""
        return UOp(Ops.SPECIAL, dtype, (sint_to_uop(end, dtype),), name)

    @staticmethod
    def param(  # noqa: PLR0917 (tinygrad's signature)
        slot: int | ParamArg,
        dtype: DType | None = None,
        shape: tuple[sint, ...] | None = None,
        device: Any = None,
        vmin_vmax: tuple[ConstType, ConstType] | None = None,
        multiple_of: int | None = None,
        name: str | None = None,
        addrspace: AddrSpace = AddrSpace.GLOBAL,
        axis: int | None = None,
        volatile: bool = False,
    ) -> UOp:
        """Kernel parameter number ``slot`` (or the node a ``ParamArg`` record describes).

        * a buffer: ``dtype`` a PtrDType, or a value dtype with ``shape`` (a pointer to
          ``prod(shape)`` elements in ``addrspace``: kernel parameters are flat, the shape
          only sizes it);
        * a scalar: ``vmin_vmax``/``name``/``multiple_of`` give the in-kernel Variable form
          (``UOp.variable(name, *vmin_vmax, dtype, multiple_of, param=True)``).

        ``device``, ``axis`` and ``volatile`` (tinygrad's placement and multi-device hints) have
        no meaning in fusegrad's kernels and must stay at their defaults.
        """
        if isinstance(slot, ParamArg):  # the whole record (tinygrad's PARAM arg)
            return slot.to_uop()
        if dtype is None:
            raise TypeError("param: dtype is required (unless slot is a ParamArg)")
        if device is not None or axis is not None or volatile:
            raise ValueError("param: device=, axis= and volatile= are not supported by fusegrad")
        if vmin_vmax is not None or name is not None or multiple_of is not None:
            if vmin_vmax is None:
                vmin_vmax = (dtypes.min(dtype), dtypes.max(dtype))
            var_name = name if name is not None else f"param{slot}"
            return UOp.variable(var_name, *vmin_vmax, dtype, multiple_of or 1, param=True)
        if shape is None or isinstance(dtype, PtrDType):
            return UOp(Ops.PARAM, dtype, (), slot)
        size = prod(shape)
        ptr = dtype.ptr(size if isinstance(size, int) else -1, addrspace)
        return UOp(Ops.PARAM, ptr, (), slot)

    # next() on an itertools.count is atomic, so threads never draw the same number
    _unique_numbers: ClassVar[Iterator[int]] = itertools.count(1)

    @staticmethod
    def unique(number: int | None = None) -> UOp:
        """A fresh identity: two UNIQUEs with different numbers are different nodes."""
        if number is None:
            number = next(UOp._unique_numbers)
        return UOp(Ops.UNIQUE, arg=number)

    @staticmethod
    def new_buffer(device: Any, size: int, dtype: DType, num: int | None = None) -> UOp:
        """A new buffer of ``size`` elements on ``device`` (a fresh identity each call; ``num``
        picks the identity, so the same ``num`` gives the same buffer)."""
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"new_buffer: size must be an int >= 0, got {size!r}")
        src = (UOp.unique(num), UOp(Ops.DEVICE, arg=device))
        return UOp(Ops.BUFFER, dtype, src, size)

    @staticmethod
    def sink(*srcs: UOp | None, **kwargs: Any) -> UOp:
        """The root of a graph with the given outputs (None sources are dropped); ``kwargs``
        are node fields (``arg``, ``tag``)."""
        return UOp(Ops.SINK, dtypes.void, tuple(s for s in srcs if s is not None)).replace(**kwargs)

    @staticmethod
    def group(*srcs: UOp | None, **kwargs: Any) -> UOp:
        """Several nodes kept together (None sources are dropped; a single node is returned as
        is)."""
        kept = tuple(s for s in srcs if s is not None)
        if len(kept) == 1 and not kwargs:
            return kept[0]
        return UOp(Ops.GROUP, dtypes.void, kept).replace(**kwargs)

    def after(self, *src: UOp, **kwargs: Any) -> UOp:
        """This value, once the effects ``src`` have happened."""
        return UOp(Ops.AFTER, self.dtype, (self, *src)).replace(**kwargs)

    def store(self, src: UOp | ConstType, gate: UOp | None = None, **kwargs: Any) -> UOp:
        """Store ``src`` through this pointer/index/buffer (only where ``gate`` holds)."""
        val = src if isinstance(src, UOp) else UOp.const(src, self._value_dtype)
        node = UOp(Ops.STORE, dtypes.void, (self, val) if gate is None else (self, val, gate))
        return node.replace(**kwargs) if kwargs else node

    def load(self, *src: UOp, **kwargs: Any) -> UOp:
        """Load through this pointer/index (``dtype=`` overrides the loaded dtype)."""
        dtype = kwargs.pop("dtype", None) or self._value_dtype
        node = UOp(Ops.LOAD, dtype, (self, *src))
        return node.replace(**kwargs) if kwargs else node

    def index(self, *srcs: UOp | int | None, **kwargs: Any) -> UOp:
        """``self[idx]``: address of an element of a buffer (``gate=``: valid only where True;
        None indices are dropped; other ``kwargs`` are node fields)."""
        gate = kwargs.pop("gate", None)
        idx = tuple(sint_to_uop(i) for i in srcs if i is not None)
        if gate is not None:
            idx += (gate,)
        node = UOp(Ops.INDEX, self.dtype, (self, *idx))
        return node.replace(**kwargs) if kwargs else node

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

    def end(self, *src: UOp) -> UOp:
        """Close the ranges ``src`` after this effect."""
        return UOp(Ops.END, dtypes.void, (self, *src))

    def reduce(self, *src: UOp, **kwargs: Any) -> UOp:
        """Kernel-level reduction of this value over the ranges ``src`` with op ``arg=``
        (default ADD)."""
        arg = kwargs.pop("arg", Ops.ADD)
        if kwargs:
            raise TypeError(f"reduce: unknown keyword(s) {sorted(kwargs)}")
        ranges = src
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
    def alu(self, op: Ops, *src: UOp | ConstType, **kwargs: Any) -> UOp:
        """The ALU node ``op(self, *src)`` with dtype promotion (Python numbers are weak);
        ``kwargs`` are node fields (``dtype``, ``arg``, ``tag``) set on the result."""
        if kwargs:
            return self.alu(op, *src).replace(**kwargs)
        if not self.dtype.weak and self._device is not None and op in _TENSOR_ALU:
            return self._tensor_alu(op, *src)
        srcs = src
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
        return _reflected(self, Ops.ADD, x)

    def __sub__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.SUB, x)

    def __rsub__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.SUB, x)

    def __mul__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.MUL, x)

    def __rmul__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.MUL, x)

    def __floordiv__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.FLOORDIV, x)

    def __rfloordiv__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.FLOORDIV, x)

    def __mod__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.FLOORMOD, x)

    def __rmod__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.FLOORMOD, x)

    def __truediv__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.FDIV, x)

    def __rtruediv__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.FDIV, x)

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
        return _reflected(self, Ops.CMPLT, x)

    def __le__(self, x: UOp | ConstType) -> UOp:
        if self._device is not None:
            return self.le(x)
        other = _as_uop(x, self.dtype)
        if dtypes.is_float(least_upper_dtype(self.dtype, other.dtype)):
            return (self < other) | self.eq(other)  # NaN <= y is False
        return (other < self).logical_not()

    def __ge__(self, x: UOp | ConstType) -> UOp:
        if self._device is not None:
            return self.ge(x)
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
        return _reflected(self, Ops.AND, x)

    def __or__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.OR, x)

    def __ror__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.OR, x)

    def __xor__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.XOR, x)

    def __rxor__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.XOR, x)

    def __lshift__(self, x: UOp | int) -> UOp:
        return self.alu(Ops.SHL, x)

    def __rshift__(self, x: UOp | int) -> UOp:
        return self.alu(Ops.SHR, x)

    def __rlshift__(self, x: int) -> UOp:
        return _reflected(self, Ops.SHL, x)

    def __rrshift__(self, x: int) -> UOp:
        return _reflected(self, Ops.SHR, x)

    def __invert__(self) -> UOp:
        if self.dtype.scalar() is dtypes.bool:
            return self.logical_not()
        return self.alu(
            Ops.XOR, -1 if self.dtype.scalar() not in dtypes.uints else dtypes.max(self.dtype)
        )

    def __pow__(self, x: UOp | ConstType) -> UOp:
        return self.alu(Ops.POW, x)

    def __rpow__(self, x: ConstType) -> UOp:
        return _reflected(self, Ops.POW, x)

    __hash__ = object.__hash__
    __eq__ = object.__eq__

    def logical_not(self) -> UOp:
        """Boolean negation (of a tensor-level node: True where it is zero, as a Tensor)."""
        if self._device is not None:
            return ElementwiseMixin.logical_not(self)
        return self.ne(True)

    def maximum(self, x: UOp | ConstType) -> UOp:
        """Elementwise max."""
        return self.alu(Ops.MAX, x)

    def minimum(self, x: UOp | ConstType) -> UOp:
        """Elementwise min: ``-max(-a, -b)`` (which the simplifier understands) for floats and
        ``weakint``; a WHERE for fixed-width ints and bool, where negation wraps around
        (``-(-128)`` is ``-128`` in int8, ``-0`` is 0 but ``-5`` is 251 in uint8)."""
        if self._device is not None:
            return ElementwiseMixin.minimum(self, x)
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
        """Rounding toward zero (a tensor-level int node is returned as is, as a Tensor)."""
        if self._device is not None:
            return ElementwiseMixin.trunc(self)
        return UOp(Ops.TRUNC, self.dtype, (self,))

    def gradient(self, *targets: UOp, gradient: UOp | None = None) -> list[UOp]:
        """d self / d target for each target, as UOp graphs (``fusegrad.uop.gradient``'s rules,
        the ones Tensor autograd uses). ``gradient`` seeds the output's gradient (needed unless
        the output has one element); a target the output does not depend on gets zeros.

        >>> x = UOp.new_buffer("CPU", 4, dtypes.float32)
        >>> (g,) = (x * x).sum().gradient(x)
        >>> g.shape
        (4,)
        """
        from fusegrad.uop.gradient import compute_gradient

        if not dtypes.is_float(self.dtype):
            raise RuntimeError(f"gradient: the output must be floating point, got {self.dtype!r}")
        if gradient is None:
            if math.prod(s if isinstance(s, int) else 2 for s in self.shape) != 1:
                raise RuntimeError(
                    f"gradient: an output of shape {tuple(self.shape)} needs gradient= of that shape"
                )
            seed = self.const_like(1.0)
        else:
            if tuple(gradient.shape) != tuple(self.shape):
                raise ValueError(
                    f"gradient: seed shape {tuple(gradient.shape)} doesn't match the output's "
                    f"{tuple(self.shape)}"
                )
            seed = gradient.cast(self.dtype)
        grads = compute_gradient(self, seed, set(targets))
        return [grads[t] if t in grads else t.const_like(0) for t in targets]

    # -- symbolic ---------------------------------------------------------------------------
    def simplify(self, tracked: bool = False) -> UOp:
        """This expression rewritten by the ``sym`` rule set to a fixed point.

        ``tracked=True`` runs the rewrite even when the result is cached, so the tracers
        (DEBUG/VIZ, ``add_tracer``) see it. The result is cached on the node (the rules are
        pure, so it can't change); a node that is its own result stores True, not itself, so
        the cache makes no reference cycle.

        >>> x = UOp.variable("x", 0, 7)
        >>> ((x * 8 + 3) // 8).simplify() is x
        True
        """
        cached = self.__dict__.get("_simplified")
        if cached is not None and not tracked:
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

    def substitute(
        self,
        dvars: Mapping[UOp, UOp],
        name: str | None = None,
        extra_pm: PatternMatcher | None = None,
        walk: bool = False,
        enter_calls: bool = True,
    ) -> UOp:
        """This graph with every node in ``dvars`` replaced. Without ``extra_pm`` one pass and
        no further rewriting (``enter_calls=False`` leaves the callee of a CALL as it is; the
        default enters it, unlike tinygrad: fusegrad's engine substitutes buffers and
        Variables through whole kernel graphs); with it, a ``graph_rewrite`` whose first rule is the replacement and
        then ``extra_pm``'s rules (``walk``: one bottom-up pass, as ``graph_rewrite``)."""
        from fusegrad.uop.rewrite import graph_rewrite, substitute

        if extra_pm is None:
            return substitute(self, dvars, enter_calls=enter_calls)
        from fusegrad.uop.pattern import PatternMatcher, UPat

        table = {**dvars}
        replace = PatternMatcher(
            [(UPat(tuple(u.op for u in table), name="x"), lambda x: table.get(x))]  # noqa: PLW0108 (called with x=)
        )
        return graph_rewrite(self, replace + extra_pm, name=name or "substitute", walk=walk)

    def const_factor(self) -> int:
        """The largest int known to divide this expression (1 when none is known).

        >>> x = UOp.variable("x", 0, 9)
        >>> (x * 6 + 12).const_factor(), (x * 4 * 3).const_factor()
        (6, 12)
        """
        if self.op is Ops.CONST:
            return abs(self.arg) if type(self.arg) is int else 1
        if self.op is Ops.DEFINE_VAR or self.op is Ops.PARAM:
            return self.multiple_of
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
    def divide_exact(self, v: UOp) -> UOp | None:
        """This expression divided by the expression ``v`` when ``v`` divides it exactly (a
        constant that divides every term, ``v`` itself, or ``v`` a factor of each product),
        else None.

        >>> x, y = UOp.variable("x", 0, 9), UOp.variable("y", 1, 9)
        >>> (x * y + y * 3).divide_exact(y).render(), (x * 2).divide_exact(y)
        ('x+3', None)
        """
        if self is v:
            return self.const_like(1)
        if v.op is Ops.CONST and isinstance(v.arg, int) and not isinstance(v.arg, bool):
            return self.divides(v.arg)
        if self.op is Ops.ADD:
            parts = [s.divide_exact(v) for s in self.src]
            if any(p is None for p in parts):
                return None
            return functools.reduce(lambda a, b: a + b, cast(list[UOp], parts))
        if self.op is Ops.MUL:
            for i, s in enumerate(self.src):
                q = s.divide_exact(v)
                if q is not None:
                    rest = self.src[1 - i]
                    return rest if q.op is Ops.CONST and q.arg == 1 else q * rest
        return None

    @staticmethod
    def gcd(*uops: UOp) -> UOp:
        """The largest common factor of ``uops`` as a product: the gcd of their constant
        factors times the factors every one of them has.

        >>> x, y = UOp.variable("x", 0, 9), UOp.variable("y", 1, 9)
        >>> UOp.gcd(x * y * 4, y * 6).render()
        'y*2'
        """
        if not uops:
            raise ValueError("gcd: needs at least one UOp")
        factor_lists = [[f for f in u.split_uop(Ops.MUL) if f.op is not Ops.CONST] for u in uops]
        common: list[UOp] = []
        for f in factor_lists[0]:
            if all(f in fl for fl in factor_lists[1:]):
                common.append(f)
                for fl in factor_lists[1:]:
                    fl.remove(f)
        const = math.gcd(*(u.const_factor() for u in uops))
        out = functools.reduce(lambda a, b: a * b, common) if common else None
        if out is None:
            return uops[0].const_like(const)
        return out if const == 1 else out * const

    def topovisit(self, visitor: Callable[[UOp], T], cache: dict[UOp, T]) -> T:
        """``visitor(u)`` of every node not in ``cache`` yet, sources first, stored in
        ``cache``; the value of this node."""
        for u in self.toposort():
            if u not in cache:
                cache[u] = visitor(u)
        return cache[self]

    @property
    def key(self) -> bytes:
        """A content hash of the graph (op, dtype, arg, tag and the sources' keys): equal
        graphs have equal keys across processes."""
        keys: dict[UOp, bytes] = {}
        for u in self.toposort():
            h = hashlib.sha256(repr((u.op, u.dtype, u.arg, u.tag)).encode())
            for s in u.src:
                h.update(keys[s])
            keys[u] = h.digest()
        return keys[self]

    @property
    def ended_ranges(self) -> tuple[UOp, ...]:
        """The RANGEs this node closes (an END's or a REDUCE's range sources)."""
        if self.op in (Ops.END, Ops.REDUCE):
            return tuple(s for s in self.src[1:] if s.op is Ops.RANGE)
        return ()

    @property
    def marg(self) -> Any:
        """The argument of a movement op (its shape, order, pads, windows or flips)."""
        if self.op not in GroupOp.Movement:
            raise ValueError(f"marg: {self.op!r} is not a movement op")
        return self.arg

    @property
    def tuplize(self) -> tuple[Any, ...]:
        """A nested tuple of (op, arg, dtype, sources) that orders graphs deterministically."""
        out: dict[UOp, tuple[Any, ...]] = {}
        for u in self.toposort():
            out[u] = (u.op.value, repr(u.arg), u.dtype, tuple(out[s] for s in u.src))
        return out[self]

    def f(self, op: Ops, **kwargs: Any) -> UOp:
        """The node ``op(self)`` (``kwargs``: dtype (default this one's) and arg)."""
        return UOp(op, kwargs.pop("dtype", self.dtype), (self,), **kwargs)

    @staticmethod
    def cconst(b: ConstType, dtype: DType) -> UOp:
        """The constant ``b`` of ``dtype`` (no device: a kernel-level constant)."""
        return UOp.const(b, dtype)

    @staticmethod
    def placeholder(
        shape: tuple[int, ...],
        dtype: DType,
        slot: int,
        addrspace: AddrSpace = AddrSpace.GLOBAL,
        device: Any = None,
        volatile: bool = False,
    ) -> UOp:
        """Kernel buffer parameter number ``slot`` holding ``shape`` elements of ``dtype``."""
        return UOp.param(slot, dtype, shape, device, addrspace=addrspace, volatile=volatile)

    def param_like(self, slot: int) -> UOp:
        """A kernel parameter number ``slot`` standing for this node: a Variable's in-kernel
        form for a Variable (bound or not), else a buffer parameter of its dtype and shape."""
        var = self.unbind()[0] if self.is_bound_var else self
        if var.op is Ops.DEFINE_VAR:
            name, lo, hi = var.arg
            return UOp.param(slot, var.dtype, vmin_vmax=(lo, hi), name=name)
        return UOp.param(slot, self.dtype, self.shape)

    def placeholder_like(self, slot: int, addrspace: AddrSpace = AddrSpace.GLOBAL) -> UOp:
        """``placeholder`` with this node's shape and dtype."""
        shape = tuple(int(s) for s in self.shape)
        return UOp.placeholder(shape, self.dtype, slot, addrspace)

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

    def _mop(self, op: Ops, arg: tuple[Any, ...]) -> UOp:
        """The movement node ``op`` with ``arg`` over this node (checked; this node itself when
        it changes nothing). The mixin's ``reshape``/``pad``/... build on it."""
        from fusegrad.uop.shape import check_movement

        if (same := check_movement(self, op, arg)) is not None:
            return same
        return UOp(op, self.dtype, (self,), arg)

    def __getitem__(self, idx: Any) -> UOp:
        """NumPy indexing of a tensor-level node (the op mixin's, see
        ``fusegrad.uop.mixin.indexing``)."""
        out: UOp = OpMixin.__getitem__(self, idx)
        return out

    # -- the primitives of the op mixins (see fusegrad.uop.mixin.base) ------------------------
    @property
    def uop(self) -> UOp:
        """The node itself (a Tensor's ``uop`` is the node it computes)."""
        return self

    def _wrap(self, uop: UOp, *parents: Any) -> UOp:
        return uop

    def _wrap_const(self, uop: UOp) -> UOp:
        return uop

    def _apply(self, op: Ops, *others: UOp, dtype: DType | None = None) -> UOp:
        return UOp(op, self.dtype if dtype is None else dtype, (self, *others))

    def _const(self, value: Any, dtype: DType | None = None, shape: Any = None) -> UOp:
        dt = self.dtype if dtype is None else dtype
        return UOp.const(value, dt, self._device, self.shape if shape is None else tuple(shape))

    @classmethod
    def arange(
        cls, start: Any, stop: Any = None, step: Any = 1, dtype: DType | None = None, **kwargs: Any
    ) -> UOp:
        """``start, start+step, ...`` below ``stop`` on ``device=`` (default: the frontend's
        default device) as a tensor-level UOp; the same graph as ``Tensor.arange``."""
        from fusegrad.uop.mixin.create import DefaultDevice, arange_uop

        device = DefaultDevice.of(kwargs.pop("device", None))
        if kwargs:
            raise TypeError(f"arange: unknown keyword(s) {sorted(kwargs)}")
        return arange_uop(start, stop, step, dtype, device)

    @classmethod
    def linspace(
        cls,
        start: float,
        stop: float,
        steps: int,
        dtype: DType | None = None,
        device: Any = None,
    ) -> UOp:
        """``steps`` evenly spaced values from ``start`` to ``stop`` inclusive (the same graph
        as ``Tensor.linspace``: the first half counts up from start, the rest down from stop).
        """
        if not isinstance(steps, int) or steps < 0:
            raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
        dt = dtypes.default_float if dtype is None else dtype
        if steps <= 1:
            return cls.full((steps,), start, dtype=dt, device=device)
        delta = (stop - start) / (steps - 1)
        i = cls.arange(steps, device=device).cast(dt if dt is dtypes.float64 else dtypes.float32)
        front = i * delta + start
        back = stop - (steps - 1 - i) * delta
        return (i < steps // 2).where(front, back).cast(dt)

    def broadcast(self, count: int) -> UOp:
        """This scalar repeated into a ``count``-wide vector (a VECTORIZE; itself for 1)."""
        if self.dtype.count != 1:
            raise ValueError(f"broadcast: {self.dtype!r} is already a vector")
        if count == 1:
            return self
        return UOp(Ops.VECTORIZE, self.dtype.vec(count), (self,) * count)

    @classmethod
    def full(
        cls,
        shape: Any,
        fill_value: Any,
        dtype: DType | None = None,
        device: Any = None,
        buffer: bool = True,
    ) -> UOp:
        """A tensor-level constant of ``fill_value`` (dtype inferred from it like PyTorch) on
        ``device`` (the same node as ``Tensor.full``; ``buffer`` is tinygrad's and changes
        nothing: constants fold into the kernels that read them)."""
        sh = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        dt = dtype if dtype is not None else dtypes.from_py(fill_value)
        from fusegrad.uop.mixin.create import DefaultDevice

        return UOp.const(fill_value, dt, DefaultDevice.of(device), sh)

    def full_like(
        self, fill_value: Any, dtype: DType | None = None, device: Any = None, buffer: bool = True
    ) -> UOp:
        """``fill_value`` in this node's shape, dtype and device (unless given)."""
        dev = self._device if device is None else device
        return UOp.full(self.shape, fill_value, self.dtype if dtype is None else dtype, dev)

    def zeros_like(self, **kwargs: Any) -> UOp:
        """Zeros in this node's shape, dtype and device."""
        return self.full_like(0, **kwargs)

    def ones_like(self, **kwargs: Any) -> UOp:
        """Ones in this node's shape, dtype and device."""
        return self.full_like(1, **kwargs)

    @classmethod
    def empty(cls, *shape: Any, device: Any = None, dtype: DType | None = None) -> UOp:
        """A fresh buffer of ``shape`` (default float), viewed in that shape."""
        from fusegrad.uop.mixin.create import DefaultDevice

        sh = argfix(*shape)
        if not all_int(sh):
            raise ValueError(f"UOp.empty: the shape must be ints, got {sh}")
        dt = dtypes.default_float if dtype is None else dtype
        buf = UOp.new_buffer(DefaultDevice.of(device), int(prod(sh)), dt)
        return buf.reshape(sh)

    def empty_like(self, dtype: DType | None = None, device: Any = None) -> UOp:
        """A fresh buffer in this node's shape (and dtype and device unless given)."""
        dev = self._device if device is None else device
        return UOp.empty(self.shape, device=dev, dtype=self.dtype if dtype is None else dtype)

    @classmethod
    def invalids(cls, *shape: Any, device: Any = None, dtype: DType | None = None) -> UOp:
        """A tensor-level value that is never defined (a placeholder to assign into)."""
        from fusegrad.uop.mixin.create import DefaultDevice

        dt = dtypes.default_float if dtype is None else dtype
        return UOp.const(Invalid, dt, DefaultDevice.of(device), argfix(*shape))

    @property
    def max_shape(self) -> tuple[int, ...]:
        """The shape with each symbolic size at its largest value."""
        return tuple(int(s.vmax) if isinstance(s, UOp) else s for s in self.shape)

    def max_numel(self) -> int:
        """The element count at the largest symbolic sizes."""
        return int(prod(self.max_shape))

    def ufix(self, x: Any) -> UOp:
        """``x`` as a UOp like this one: a Python value becomes ``const_like(x)``."""
        return x if isinstance(x, UOp) else self.const_like(x)

    def vconst_like(self, b: Any) -> UOp:
        """A constant of this node's dtype, a vector constant when ``b`` is a tuple."""
        return UOp.const(b, self.dtype.scalar()) if isinstance(b, tuple) else self.const_like(b)

    def pop_const(self, op: Ops = Ops.ADD) -> tuple[UOp, ConstType]:
        """``(x, c)`` for ``x <op> c`` with a constant ``c``; ``(self, identity)`` otherwise.

        >>> x = UOp.variable("x", 0, 9)
        >>> (x + 3).pop_const() == (x, 3), x.pop_const(Ops.MUL) == (x, 1)
        (True, True)
        """
        if self.op is op and self.src[1].op is Ops.CONST:
            value: ConstType = self.src[1].arg
            return self.src[0], value
        return self, {Ops.ADD: 0, Ops.MUL: 1}.get(op, 0)

    def split_uop(self, sep: Ops) -> Iterator[UOp]:
        """The operands of a chain of ``sep`` ops (``a + b + c`` -> a, b, c)."""
        if self.op is sep:
            for s in self.src:
                yield from s.split_uop(sep)
        else:
            yield self

    def usum(self, *uops: UOp) -> UOp:
        """This node plus ``uops``."""
        return functools.reduce(lambda a, b: a + b, uops, self)

    def uprod(self, *uops: UOp) -> UOp:
        """This node times ``uops``."""
        return functools.reduce(lambda a, b: a * b, uops, self)

    def overflows(self, dtype: DType) -> bool:
        """True when this node's range doesn't fit in ``dtype``."""
        return bool(self.vmin < dtypes.min(dtype) or self.vmax > dtypes.max(dtype))

    @property
    def without_after(self) -> UOp:
        """The node under its AFTERs (the buffer an assign writes to)."""
        u = self
        while u.op is Ops.AFTER:
            u = u.src[0]
        return u

    @property
    def val(self) -> int:
        """The bound value of a bound Variable."""
        return self.unbind()[1]

    def unbind_all(self) -> tuple[UOp, dict[UOp, int]]:
        """This graph with every bound Variable replaced by the Variable, and their values."""
        values: dict[UOp, int] = {}
        mapping: dict[UOp, UOp] = {}
        for u in self.toposort():
            if u.is_bound_var:
                var, value = u.unbind()
                if values.setdefault(var, value) != value:
                    raise ValueError(
                        f"unbind_all: {var.expr} is bound to {values[var]} and {value}"
                    )
                mapping[u] = var
        return (self.substitute(mapping) if mapping else self), values

    @classmethod
    def zeros(cls, *shape: Any, **kwargs: Any) -> UOp:
        """Zeros (default float)."""
        return cls.full(argfix(*shape), 0.0, **kwargs)

    @classmethod
    def ones(cls, *shape: Any, **kwargs: Any) -> UOp:
        """Ones (default float)."""
        return cls.full(argfix(*shape), 1.0, **kwargs)

    @classmethod
    def eye(cls, n: int, m: int | None = None, dtype: DType | None = None, **kwargs: Any) -> UOp:
        """The n x m identity matrix on ``device=`` (the same graph as ``Tensor.eye``)."""
        if n < 0 or (m is not None and m < 0):
            raise RuntimeError(f"eye: n and m must be non-negative, got {n}, {m}")
        cols = n if m is None else m
        rows_u = cls.arange(n, **kwargs).reshape(n, 1)
        cols_u = cls.arange(cols, **kwargs).reshape(1, cols)
        return rows_u.eq(cols_u).cast(dtypes.default_float if dtype is None else dtype)

    def contiguous(self, **kwargs: Any) -> UOp:
        """This value in a buffer of its own, row-major (a buffer view already is one)."""
        if self.op is Ops.BUFFER or (self.op is Ops.RESHAPE and self.src[0].op is Ops.BUFFER):
            return self
        return UOp(Ops.CONTIGUOUS, self.dtype, (self,)).replace(**kwargs)

    def __matmul__(self, x: UOp) -> UOp:
        return self.matmul(x)

    def __rmatmul__(self, x: UOp) -> UOp:
        return x.matmul(self)

    def contiguous_backward(self) -> UOp:
        """The same value; its gradient is realized here."""
        return UOp(Ops.CONTIGUOUS_BACKWARD, self.dtype, (self,))

    def detach(self) -> UOp:
        """The same value, cut off from gradients."""
        return UOp(Ops.DETACH, self.dtype, (self,))

    def _operand(self, x: Any) -> UOp:
        """``x`` as a tensor-level operand: a Python scalar is a 0-d constant on this device
        whose dtype is what the scalar promotes this node's dtype to."""
        if isinstance(x, UOp):
            return x
        if isinstance(x, (bool, int, float)):
            dt = commit_weak(least_upper_dtype(self.dtype, dtypes.weak_from_py(x)))
            return self._const(x, dt, ())
        raise TypeError(f"unsupported operand type {type(x).__name__} for a tensor-level UOp")

    def _broadcast_to(self, shape: tuple[sint, ...]) -> UOp:
        if self.shape == tuple(shape):
            return self
        if self.ndim > len(shape):
            raise RuntimeError(f"can't broadcast {self.shape} to {tuple(shape)}: too many dims")
        full = (1,) * (len(shape) - self.ndim) + self.shape
        broadcast_shape(full, tuple(shape))
        return self._mop(Ops.RESHAPE, full)._mop(Ops.EXPAND, tuple(shape))

    def _promoted(self, *xs: Any, reverse: bool = False) -> list[UOp]:
        """This node and ``xs`` as tensor-level operands of one dtype (weak dtypes committed)
        and one broadcast shape, as a Tensor's operands are. A kernel-level or symbolic node
        (no device) promotes as the IR's ``alu`` does: no shapes, weak dtypes stay weak."""
        if self._device is None and not any(isinstance(x, UOp) and x._device for x in xs):
            promoted = _promote([self, *xs])
            return promoted[::-1] if reverse else promoted
        if len(xs) == 1 and type(xs[0]) in (bool, int, float):
            scalar = xs[0]
            if _scalar_dtype(self.dtype, type(scalar).__name__) is self.dtype:
                const = UOp.const(scalar, self.dtype, self._device, self.shape)
                return [const, self] if reverse else [self, const]
        operands = [self, *(self._operand(x) for x in xs)]
        if reverse:
            operands = operands[::-1]
        dt = commit_weak(least_upper_dtype(*(u.dtype for u in operands)))
        shape = broadcast_shape(*(u.shape for u in operands))
        return [u.cast(dt)._broadcast_to(shape) for u in operands]

    def _tensor_alu_reflected(self, op: Ops, x: Any) -> UOp:
        if op is Ops.CMPLT:  # x < self
            return self.gt(x)
        name, kwargs = _TENSOR_ALU[op]
        method: Callable[..., UOp] = getattr(ElementwiseMixin, name)
        return method(self, x, True, **kwargs)

    def _tensor_alu(self, op: Ops, *src: Any) -> UOp:
        """``alu`` of a tensor-level node: the mixin's method for ``op`` (broadcasting,
        committing weak dtypes), so ``x + 1`` on a UOp and on a Tensor is the same graph."""
        name, kwargs = _TENSOR_ALU[op]
        method: Callable[..., UOp] = getattr(ElementwiseMixin, name)
        return method(self, *src, **kwargs)


# -- module helpers ------------------------------------------------------------------------------

# ALU ops on tensor-level nodes: the ElementwiseMixin method (and its keyword arguments) that
# builds them as a Tensor does
_TENSOR_ALU: dict[Ops, tuple[str, dict[str, Any]]] = {
    Ops.ADD: ("add", {}),
    Ops.SUB: ("sub", {}),
    Ops.MUL: ("mul", {}),
    Ops.FDIV: ("div", {}),
    Ops.FLOORDIV: ("div", {"rounding_mode": "floor"}),
    Ops.CDIV: ("div", {"rounding_mode": "trunc"}),
    Ops.FLOORMOD: ("mod", {}),
    Ops.CMOD: ("fmod", {}),
    Ops.POW: ("pow", {}),
    Ops.MAX: ("maximum", {}),
    Ops.CMPLT: ("lt", {}),
    Ops.CMPEQ: ("eq", {}),
    Ops.CMPNE: ("ne", {}),
    Ops.AND: ("bitwise_and", {}),
    Ops.OR: ("bitwise_or", {}),
    Ops.XOR: ("bitwise_xor", {}),
    Ops.SHL: ("lshift", {}),
    Ops.SHR: ("rshift", {}),
    Ops.WHERE: ("where", {}),
}


@functools.cache
def _scalar_dtype(dtype: DType, kind: str) -> DType:
    """The dtype of ``tensor op scalar`` for a tensor-level node of ``dtype`` and a Python
    scalar whose type is named ``kind``."""
    weak = {"bool": dtypes.bool, "int": dtypes.weakint, "float": dtypes.weakfloat}[kind]
    return commit_weak(least_upper_dtype(dtype, weak))


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


def _reflected(u: UOp, op: Ops, x: UOp | ConstType) -> UOp:
    """``x op u`` for a Python number ``x`` (``__radd__`` and friends)."""
    if u._device is not None:
        return u._tensor_alu_reflected(op, x)
    return _as_uop(x, u.dtype).alu(op, u)


def sint_to_uop(x: sint, dtype: DType = dtypes.weakint) -> UOp:
    """A size as a UOp (ints become constants)."""
    return x if isinstance(x, UOp) else UOp.const(x, dtype)


def resolve(x: UOp | bool, default: bool = True) -> bool:
    """A boolean that may be symbolic: its value when range analysis decides it (of the node,
    else of its simplified form), else ``default``. A non-bool UOp is a ValueError.

    >>> i = UOp.variable("i", 0, 4)
    >>> resolve(i < 5), resolve(i < 3), resolve(i < 3, False)
    (True, True, False)
    """
    if not isinstance(x, UOp):
        return bool(x)
    if x.dtype.scalar() is not dtypes.bool:
        raise ValueError(f"resolve: needs a bool UOp, got {x.dtype!r}")
    lo, hi = x._min_max
    if lo == hi:
        return bool(lo)
    lo, hi = x.simplify()._min_max
    return bool(lo) if lo == hi else default


def srender(x: sint) -> str:
    """A size as text: ``render()`` of a UOp, ``str`` of an int."""
    return x.render() if isinstance(x, UOp) else str(x)


def _as_sint(x: Any) -> sint:
    if isinstance(x, (int, UOp)):
        return x
    raise TypeError(f"expected an int size, got {x!r}")


def smax(*lst: sint | Iterable[sint]) -> sint:
    """Max of sizes, symbolic where needed."""
    vals = argfix(*lst)
    if all_int(vals):
        return int(max(vals))
    out = sint_to_uop(vals[0])
    for v in vals[1:]:
        out = out.maximum(v)
    return _as_sint(out.ssimplify())


def smin(*lst: sint | Iterable[sint]) -> sint:
    """Min of sizes, symbolic where needed."""
    vals = argfix(*lst)
    if all_int(vals):
        return int(min(vals))
    out = sint_to_uop(vals[0])
    for v in vals[1:]:
        out = out.minimum(v)
    return _as_sint(out.ssimplify())


def ssimplify(uop: sint) -> sint:
    """Simplify a size (ints pass through)."""
    if not isinstance(uop, UOp):
        return uop
    return _as_sint(uop.ssimplify())


def sym_infer(uop: sint | ConstType, var_vals: Mapping[Any, int]) -> Any:
    """The value of expression ``uop`` with its Variables set to ``var_vals``."""
    from fusegrad.uop.render import evaluate

    if not isinstance(uop, UOp):
        return uop
    return evaluate(uop, var_vals)


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
    "srender",
    "ssimplify",
    "sym_infer",
]


# -- small helpers tinygrad keeps in tinygrad.uop.ops --------------------------------------------
def promo_dtype(src: tuple[UOp, ...]) -> DType:
    """The dtype an ALU node over ``src`` computes in: their scalars promoted, at the widest
    vector count."""
    scalar = promoted_dtype(*(s.dtype.scalar() for s in src))
    return scalar.vec(max(s.dtype.count for s in src))


def dtype_from_uop(op: Ops, src: tuple[UOp, ...], arg: Any) -> DType | None:
    """The dtype a node of ``op`` over ``src`` (with ``arg``) has when it follows from them:
    an ALU op computes in its sources' promoted dtype (a comparison gives bool lanes), a
    CONST of a Python value has its weak dtype, a structural op (SINK, END, STORE, ...) is
    void, and movement ops keep their source's dtype. None where it has to be given
    (CAST, BITCAST, LOAD, a buffer, a range: the dtype is the node's choice).

    >>> x = UOp.variable("x", 0, 9, dtypes.int32)
    >>> dtype_from_uop(Ops.CMPLT, (x, x), None), dtype_from_uop(Ops.ADD, (x, x), None)
    (dtypes.bool, dtypes.int32)
    """
    if op in GroupOp.Comparison:
        return dtypes.bool.vec(max(s.dtype.count for s in src))
    if op is Ops.WHERE:
        return promo_dtype(src[1:])
    if op in (Ops.SHL, Ops.SHR):
        return src[0].dtype
    if op in GroupOp.ALU:
        return promo_dtype(src)
    if op is Ops.CONST and not src and isinstance(arg, (bool, int, float)):
        return dtypes.weak_from_py(arg)
    if op in _VOID_OPS:
        return dtypes.void
    if op in GroupOp.Movement and src:
        return src[0].dtype
    return None


_VOID_OPS = frozenset((Ops.SINK, Ops.GROUP, Ops.NOOP, Ops.END, Ops.STORE, Ops.BARRIER, Ops.IF))
_VOID_OPS |= frozenset((Ops.ENDIF, Ops.DEVICE, Ops.UNIQUE))


def broadcast_axes(src_shape: tuple[sint, ...], out_shape: tuple[sint, ...]) -> tuple[int, ...]:
    """The axes of ``out_shape`` that broadcasting ``src_shape`` (left-padded with 1s)
    expands."""
    if len(src_shape) > len(out_shape):
        raise ValueError(f"broadcast_axes: {src_shape} has more dims than {out_shape}")
    full = (1,) * (len(out_shape) - len(src_shape)) + tuple(src_shape)
    return tuple(i for i, (s, o) in enumerate(zip(full, out_shape, strict=True)) if s == 1 != o)


def to_max_shape(shape: tuple[sint, ...]) -> tuple[int, ...]:
    """``shape`` with each symbolic size at its largest value."""
    return tuple(int(s.vmax) if isinstance(s, UOp) else int(s) for s in shape)


def to_function_name(s: str) -> str:
    """``s`` as a C identifier: letters, digits and _ kept, every other character as its
    two-digit hex code (ANSI colour codes dropped first)."""
    import re
    import string

    plain = re.sub(r"\x1b\[[0-9;]*m", "", s)
    ok = set(string.ascii_letters + string.digits + "_")
    return "".join(c if c in ok else f"{ord(c):02X}" for c in plain)


def get_location() -> tuple[str, int]:
    """(file, line) of the nearest caller outside fusegrad's uop package (where a rule or a
    node was written)."""
    import sys

    frame = sys._getframe(1)
    here = __file__.rsplit("/", 1)[0]
    while frame.f_back is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno
