"""The Tensor's core: the lazy UOp it holds, construction, properties, data access, dtype
promotion and broadcasting. Every other method group is a mixin built on these."""

from __future__ import annotations

import builtins
import functools
import math
import weakref
from typing import TYPE_CHECKING, Any, ClassVar, overload

import numpy as np

from fusegrad.engine import (
    REALIZED,
    GlobalCounters,
    buffer_of,
    has_assign,
    is_buffer_view,
    performed_assigns,
    realize_one,
    realize_uops,
    strip_assigns,
    to_numpy,
)
from fusegrad.tensor.checks import IndexCheck, merge_checks, pending, stats_uops, verify_all
from fusegrad.tensor.convert import array_to_uop, canonical_device, data_to_uop
from fusegrad.uop import (
    ConstType,
    DType,
    GroupOp,
    Ops,
    UOp,
    commit_weak,
    dtypes,
    least_upper_dtype,
    prod,
    sint,
    to_dtype,
)
from fusegrad.uop.mixin import DefaultDevice, OpMixinBase, broadcast_shape

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fusegrad.tensor.multi import MultiTensor
    from fusegrad.tensor.tensor import Tensor

DTypeLike = DType | str
Scalar = ConstType
TensorLike = "Tensor | ConstType"

DefaultDevice.get = lambda: canonical_device(None)  # UOp.arange & co. without device=


class TensorRegistry(dict[int, "weakref.ref[Any]"]):
    """Live tensors by id: ``registry[id(t)] = weakref.ref(t)`` (a plain dict store: no
    per-tensor Python code, no callback when the tensor dies). Dead entries stay until
    ``values()`` or ``purge()`` skips them; an id reused by a new tensor either replaces
    its entry or finds a dead reference (a live referent is always the tensor of that id)."""

    purge_at: int = 4096
    """``purge`` when ``len`` grows past this (then twice the live count)."""

    def __contains__(self, key: object) -> bool:
        ref = self.get(key)  # type: ignore[call-overload]
        return ref is not None and ref() is not None

    def values(self) -> list[Any]:  # type: ignore[override]
        """The live tensors (a list: safe to hold while tensors come and go)."""
        return self.purge()

    def purge(self) -> list[Any]:
        """Drop the dead entries; the live tensors."""
        live = []
        for key, ref in list(self.items()):
            t = ref()
            if t is None:
                if self.get(key) is ref:
                    del self[key]
            else:
                live.append(t)
        self.purge_at = max(4096, 2 * len(live))
        return live


ALL_TENSORS = TensorRegistry()
"""Every live Tensor by id (autograd finds the tensors a graph reaches through it)."""
LAZY_TENSORS = TensorRegistry()
"""The live tensors whose graph may still hold computed nodes (set when a tensor gets a
``uop`` that isn't a buffer or a view of one): what a realize rewrites, instead of every
live tensor."""
_ref = weakref.ref


_PY_SCALARS = (bool, int, float)  # exactly these types (a subclass takes the general path)


@functools.cache
def _scalar_dtype(dtype: DType, kind: str) -> DType:
    """The dtype of ``tensor op scalar`` for a tensor of ``dtype`` and a Python scalar whose
    type is named ``kind``."""
    sample = {"bool": False, "int": 0, "float": 0.0}[kind]
    return commit_weak(least_upper_dtype(dtype, dtypes.weak_from_py(sample)))


_CONSTS: dict[tuple[Any, ...], UOp] = {}
_MAX_CONSTS = 512


def _const_uop(dtype: DType, value: Any, device: str, shape: tuple[sint, ...]) -> UOp:
    """``UOp.const(dtype, value, device, shape)``, remembered: the constants of a loop
    (``x + 1`` every step) are built once instead of dying with each step's graph. -0.0 and
    0.0 compare equal, so the key has the sign too."""
    key = (dtype, type(value), value, math.copysign(1.0, value) < 0, device, shape)
    found = _CONSTS.get(key)
    if found is None:
        if len(_CONSTS) >= _MAX_CONSTS:
            _CONSTS.clear()
        found = _CONSTS[key] = UOp.const(value, dtype, device, shape)
    return found


def _shape_of(u: UOp) -> tuple[sint, ...]:
    """``u.shape``, read off the node for a buffer and a reshape/expand (a realized tensor's
    usual forms) without the shape walk."""
    op = u.op
    if op is Ops.BUFFER:
        return (u.arg,)
    if op is Ops.RESHAPE or op is Ops.EXPAND:
        return tuple(u.arg)
    return tuple(u.shape)


class TensorCore(OpMixinBase):
    """A lazy n-d array: ``uop`` is the tensor-level graph computing it (the op mixins'
    primitives are defined here, see ``fusegrad.uop.mixin.base``)."""

    training: ClassVar[bool] = False
    no_grad: ClassVar[bool] = False
    __array_priority__ = 1000.0  # NumPy defers ``ndarray op Tensor`` to the Tensor

    _uop: UOp
    grad: Tensor | None
    _leaf: bool
    _requires_grad: bool | None
    _checks: tuple[IndexCheck, ...] = ()
    """Index-range checks this tensor's value depends on (see ``checks``)."""
    is_param: builtins.bool = False
    """Marked as a parameter (``is_param_``): ``function`` bodies may read it implicitly."""

    def __init__(
        self,
        data: Any = None,
        device: str | None = None,
        dtype: DTypeLike | None = None,
        requires_grad: bool | None = None,
    ) -> None:
        dt = to_dtype(dtype) if dtype is not None else None
        if isinstance(data, TensorCore):
            uop = data.uop if dt is None else data.cast(dt).uop
            if device is not None and canonical_device(device) != data.device:
                uop = UOp(Ops.COPY, uop.dtype, (uop, UOp(Ops.DEVICE, arg=canonical_device(device))))
        else:
            if data is None:
                data = np.empty((0,), dtype=np.float32) if dt is None else []
            if requires_grad and isinstance(data, (bool, int, float)):
                data = [data]  # a unique buffer: constants are shared by hash-consing
                uop = data_to_uop(data, canonical_device(device), dt).reshape(())
            else:
                uop = data_to_uop(data, canonical_device(device), dt)
        self.uop = uop
        if isinstance(data, TensorCore) and data._checks:
            self._checks = data._checks
        self._requires_grad = None
        self._leaf = True
        self.grad = None
        self.requires_grad = requires_grad
        ALL_TENSORS[id(self)] = _ref(self)

    def __hash__(self) -> int:
        return id(self)

    @property
    def uop(self) -> UOp:
        """The tensor-level graph computing this tensor (a BUFFER once realized)."""
        return self._uop

    @uop.setter
    def uop(self, u: UOp) -> None:
        self._uop = u
        if u.op is not Ops.BUFFER and not is_buffer_view(u):
            LAZY_TENSORS[id(self)] = _ref(self)  # a view of a buffer has nothing to rewrite

    # -- building results -----------------------------------------------------------------------
    def _wrap(self, uop: UOp, *parents: TensorCore) -> Tensor:
        """A new tensor computing ``uop``; it needs grad when a parent does."""
        out = TensorCore.__new__(type(self))
        out._uop = uop  # the ``uop`` setter written out (every op's result passes here)
        if uop.op is not Ops.BUFFER and not is_buffer_view(uop):
            LAZY_TENSORS[id(out)] = _ref(out)
        needs = not TensorCore.no_grad and (
            bool(self.requires_grad) or any(p.requires_grad for p in parents)
        )
        out._leaf = False
        out._requires_grad = True if needs else None
        out.grad = None
        if self._checks or (parents and any(p._checks for p in parents)):
            out._checks = merge_checks(self._checks, *(p._checks for p in parents))
        ALL_TENSORS[id(out)] = _ref(out)
        return out  # type: ignore[return-value]

    def _apply(self, op: Ops, *others: TensorCore, dtype: DType | None = None) -> Tensor:
        """ALU ``op`` over this tensor and ``others`` (same shape and dtype already)."""
        u = self._uop
        src = (u, others[0]._uop) if len(others) == 1 else (u, *(o._uop for o in others))
        return self._wrap(UOp(op, dtype if dtype is not None else u.dtype, src), *others)

    def _const(self, value: ConstType, dtype: DType | None = None, shape: Any = None) -> Tensor:
        """A constant on this tensor's device (this tensor's shape and dtype by default)."""
        dt = dtype if dtype is not None else self.dtype
        sh = tuple(shape) if shape is not None else self.shape
        uop = UOp.const(value, dt, self.device, sh)
        return self._wrap_const(uop)

    def _wrap_const(self, uop: UOp) -> Tensor:
        out = self._wrap(uop)
        out._requires_grad = None
        return out

    # -- autograd leaves -------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool | None:
        """Whether gradients flow to this tensor (None: not decided, like tinygrad)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool | None) -> None:
        if value and self._leaf and not self._requires_grad:
            self._own_buffer()
        self._requires_grad = value

    def _own_buffer(self) -> None:
        """Give a leaf that starts requiring grad a buffer of its own when its graph is made of
        constants only. Hash-consing makes equal constant graphs one UOp, and autograd tells
        leaves apart by UOp: two ``Tensor.zeros(3, requires_grad=True)`` (or a leaf and an
        equal constant used elsewhere) would share one gradient. Constants are written into a
        host buffer; other constant graphs (arange, rand after ``manual_seed``) are computed
        into a fresh buffer now, the way PyTorch creates them eagerly."""
        u = self.uop
        if any(isinstance(s, UOp) for s in u.shape) or self.device.startswith("DISK"):
            return
        if any(n.op is Ops.BUFFER for n in u.toposort()):
            return
        base = u
        while base.op in (Ops.RESHAPE, Ops.EXPAND):
            base = base.src[0]
        shape = tuple(int(s) for s in self.shape)
        if base.op is Ops.CONST and not isinstance(base.arg, UOp):
            values = np.full(shape, base.arg)
            self.uop = array_to_uop(values, self.dtype, self.device)
            return
        fresh = UOp.new_buffer(self.device, int(prod(shape)), self.dtype).reshape(shape)
        (view,), _ = realize_uops([UOp(Ops.AFTER, self.dtype, (fresh, fresh.store(u)))])
        self.uop = view

    # -- properties ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[sint, ...]:
        """The size of each dimension."""
        return _shape_of(self.uop)

    @property
    def dtype(self) -> DType:
        """The element type."""
        return self.uop.dtype

    @property
    def device(self) -> str:
        """The device the data lives on."""
        u = self.uop
        if u.op is Ops.BUFFER:
            return str(u.src[1].arg)  # a realized tensor: no walk for the device
        dev = u.device
        return str(dev) if dev is not None else canonical_device(None)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return self.shape
        return self.shape[self._axis(dim)]

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user (not by an operation)."""
        return self._leaf

    def __repr__(self) -> str:
        return f"<Tensor {self.shape} {self.dtype!r} on {self.device}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return int(self.shape[0])

    # -- dtype -----------------------------------------------------------------------------------
    def cast(self, dtype: DTypeLike) -> Tensor:
        """This tensor converted to ``dtype``."""
        dt = to_dtype(dtype)
        if dt.weak:
            raise TypeError(f"cast: {dt!r} is an internal weak dtype")
        if dt is self.dtype:
            return self  # type: ignore[return-value]
        return self._wrap(UOp(Ops.CAST, dt, (self.uop,)))

    def bitcast(self, dtype: DTypeLike) -> Tensor:
        """The same bits read as ``dtype`` (the last dim rescales when sizes differ)."""
        dt = to_dtype(dtype)
        old, new = self.dtype.itemsize, dt.itemsize
        if old != new:
            if not self.shape:
                raise RuntimeError(f"bitcast: a 0-d {self.dtype!r} tensor can't become {dt!r}")
            last = self.shape[-1]
            if isinstance(last, int) and (last * old) % new != 0:
                raise RuntimeError(
                    f"bitcast: last dim {last} of {self.dtype!r} isn't a whole number of {dt!r}"
                )
        if dt is self.dtype:
            return self  # type: ignore[return-value]
        return self._wrap(UOp(Ops.BITCAST, dt, (self.uop,)))

    # -- promotion and broadcasting --------------------------------------------------------------
    def _broadcast_to(
        self, shape: tuple[sint, ...], mine: tuple[sint, ...] | None = None
    ) -> Tensor:
        """This tensor expanded to ``shape`` (``mine``: its shape, when the caller has it)."""
        if mine is None:
            mine = self.shape
        target = tuple(shape)
        if mine == target:
            return self  # type: ignore[return-value]
        if len(mine) > len(target):
            raise RuntimeError(f"can't broadcast {mine} to {target}: too many dims")
        full = (1,) * (len(target) - len(mine)) + mine
        broadcast_shape(full, target)
        return self._wrap(self.uop.reshape(full).expand(target))

    def _operand(self, x: Any) -> Tensor:
        """``x`` as a tensor on this device: Python scalars keep their weak dtype's meaning."""
        if isinstance(x, TensorCore):
            return x  # type: ignore[return-value]
        if isinstance(x, (bool, int, float)):
            weak = dtypes.weak_from_py(x)
            dt = commit_weak(least_upper_dtype(self.dtype, weak))
            return self._const(x, dt, ())
        if isinstance(x, UOp):
            return type(self)(x, device=self.device)  # type: ignore[return-value]
        if isinstance(x, (list, tuple, np.ndarray)):
            return type(self)(x, device=self.device)  # type: ignore[return-value]
        raise TypeError(f"unsupported operand type {type(x).__name__} for a Tensor operation")

    def _promoted(self, *xs: Any, reverse: builtins.bool = False) -> list[Tensor]:  # type: ignore[override]
        """This tensor and ``xs`` as tensors of one dtype and one broadcast shape."""
        if len(xs) == 1 and type(xs[0]) in _PY_SCALARS:
            # ``x + 1``, ``x * 2.0`` where the scalar keeps x's dtype: the constant made at
            # x's shape directly (the same UOps the general path builds step by step)
            scalar = xs[0]
            dtype = self.dtype
            if _scalar_dtype(dtype, type(scalar).__name__) is dtype:
                # an operand only (every caller builds its result from it and drops it): not
                # registered as a live or lazy tensor, which halves the bookkeeping of ``x + 1``
                const = TensorCore.__new__(type(self))
                const._uop = _const_uop(dtype, scalar, self.device, self.shape)
                const._leaf, const._requires_grad, const.grad = False, None, None
                return [const, self] if reverse else [self, const]  # type: ignore[list-item]
        ops = [self._operand(x) for x in xs]
        tensors: list[Tensor] = [self, *ops]  # type: ignore[list-item]
        if reverse:
            tensors = tensors[::-1]
        # int64 with uint64 has no integer upper bound: the lattice gives the weak float, which
        # becomes the default float (NumPy would give float64, PyTorch refuses)
        dt = commit_weak(least_upper_dtype(*(t.dtype for t in tensors)))
        shapes = [t.shape for t in tensors]  # each computed once (a new node's is a walk)
        shape = broadcast_shape(*shapes)
        return [t.cast(dt)._broadcast_to(shape, s) for t, s in zip(tensors, shapes, strict=True)]

    # -- data ------------------------------------------------------------------------------------
    def realize(self, *lst: TensorCore, do_update_stats: builtins.bool = True) -> Tensor:
        """Compute this tensor (and ``lst``, in the same schedule) into buffers.

        Raises IndexError (before handing anything out) when an index tensor used on the way
        holds an out-of-range value (see ``fusegrad.tensor.checks``). A MultiTensor among them
        is realized with all its shards. ``do_update_stats=False``: the kernels run are left
        out of ``GlobalCounters`` (kernel count, ops, memory traffic)."""
        if len(ALL_TENSORS) > ALL_TENSORS.purge_at:  # dead tensors' entries: dropped now
            ALL_TENSORS.purge()
        if not do_update_stats:
            saved = _counters()
            try:
                return self.realize(*lst)
            finally:
                _restore_counters(saved)
        if (
            not lst
            and isinstance(self, TensorCore)  # Tensor.realize(a_multi_tensor) as well
            and not self._checks
            and not self._requires_grad
            and self._realize_one()
        ):
            return self  # type: ignore[return-value]
        if lst or hasattr(self, "shards"):
            tensors = [s for t in (self, *lst) for s in getattr(t, "shards", None) or (t,)]
        else:
            tensors = [self]  # the common case: one plain tensor
        assigning = any(has_assign(t._uop) for t in tensors)
        if assigning:  # values still to be read from the buffers about to change: now
            tensors += _old_value_readers(tensors)
        # tensors that need grad keep their graph for autograd, unless buffers change under it
        keep = [bool(t.requires_grad) and not assigning for t in tensors]
        checks = pending(tensors)
        uops = [t._uop for t in tensors]
        if checks:
            uops += stats_uops(checks, type(self))
        views, becomes = realize_uops(uops)
        if checks:
            verify_all(checks, [to_numpy(v) for v in views[len(tensors) :]])
            for t in tensors:
                t._checks = ()
        _bind_values(tensors, views, keep, assigning)
        if becomes:
            _apply_becomes(becomes, tensors)
        return self  # type: ignore[return-value]

    def _realize_one(self) -> builtins.bool:
        """``realize`` of a plain tensor (no grad, no index checks) on the dispatch fast path
        (its schedule a cached template: ``engine.realize_one``); False, with nothing run,
        where the general path is needed."""
        u = self._uop
        if is_buffer_view(u):
            return True  # a view of a buffer: its value is there already
        view = realize_one(u)
        if view is None:
            return False
        if _holds_buffer(view):
            self._uop = view  # not lazy any more: out of the registry
            LAZY_TENSORS.pop(id(self), None)
        else:
            self.uop = view
        if LAZY_TENSORS:  # other live tensors may read u: they read the buffer from now
            _apply_becomes({u: view})
        return True

    @property
    def is_realized(self) -> builtins.bool:
        """True when the value sits in a buffer."""
        u = self.uop
        return buffer_of(u) is not None or is_buffer_view(u) or u in REALIZED

    def numpy(self) -> np.ndarray[Any, Any]:
        """The values as a NumPy array (bfloat16/fp8 as float32)."""
        from fusegrad.tensor.extra import check_disk_read

        check_disk_read(self.uop, str(self.device))  # a truncated file: OSError, not SIGBUS
        self.realize()
        return to_numpy(self.uop)

    def tolist(self) -> Any:
        """The values as (nested) Python lists (a scalar for a 0-d tensor)."""
        return self.numpy().tolist()

    def item(self) -> ConstType:
        """The single value of a one-element tensor."""
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        value: ConstType = self.numpy().reshape(()).item()
        return value

    def data(self) -> memoryview:
        """The values as a memoryview of the tensor's shape."""
        return memoryview(np.ascontiguousarray(self.numpy()).data)

    def __bool__(self) -> builtins.bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
        return builtins.bool(self.item())

    def __int__(self) -> builtins.int:
        return builtins.int(self.item())

    def __float__(self) -> builtins.float:
        return builtins.float(self.item())

    def __index__(self) -> builtins.int:
        if not dtypes.is_int(self.dtype):
            raise TypeError(
                f"only integer tensors can be converted to an index, not {self.dtype!r}"
            )
        return int(self.item())

    @overload
    def to(self, device: str | None) -> Tensor: ...
    @overload
    def to(self, device: tuple[str, ...] | list[str]) -> MultiTensor: ...
    def to(self, device: str | tuple[str, ...] | list[str] | None) -> Tensor | MultiTensor:
        """This tensor on ``device`` (itself when already there); a tuple or list of devices
        gives a MultiTensor holding a whole copy on each (``shard(devices)``)."""
        if isinstance(device, (tuple, list)):
            from fusegrad.tensor.multi import shard

            return shard(self, device)  # type: ignore[arg-type]
        dev = canonical_device(device)
        if dev == self.device:
            return self  # type: ignore[return-value]
        return self._wrap(UOp(Ops.COPY, self.dtype, (self.uop, UOp(Ops.DEVICE, arg=dev))))

    def to_(self, device: str | None) -> Tensor:
        """Move this tensor to ``device`` in place."""
        self.uop = self.to(device).uop
        return self  # type: ignore[return-value]

    def clone(self, device: str | None = None) -> Tensor:
        """A copy in a new buffer (on ``device`` when given; ``.grad`` is cloned along)."""
        src = self if device is None else self.to(device)
        out = src._wrap(UOp(Ops.CONTIGUOUS, src.dtype, (src.uop,)))
        if self.grad is not None:
            out.grad = self.grad.clone(device)
        return out

    def contiguous(self, **kwargs: Any) -> Tensor:
        """Realize here (a fresh buffer in row-major order) when this is part of a graph.

        ``kwargs`` (tinygrad's ``arg=``/``tag=``) are set on the CONTIGUOUS node, which is then
        made even over a buffer."""
        if not kwargs and buffer_of(self.uop) is not None:
            return self  # type: ignore[return-value]
        return self._wrap(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,)).replace(**kwargs))

    def contiguous_backward(self) -> Tensor:
        """Realize the gradient flowing through here."""
        return self._wrap(UOp(Ops.CONTIGUOUS_BACKWARD, self.dtype, (self.uop,)))

    def detach(self) -> Tensor:
        """The same values, cut off from autograd."""
        out = self._wrap(UOp(Ops.DETACH, self.dtype, (self.uop,)))
        out._leaf = True  # like PyTorch: ``x.detach().requires_grad_()`` is a new leaf
        out._requires_grad = False
        return out

    def replace(self, x: TensorCore) -> Tensor:
        """Make this tensor compute ``x`` instead (shapes must match)."""
        if x.shape != self.shape:
            raise RuntimeError(f"replace: shape {x.shape} differs from {self.shape}")
        self.uop = x.uop
        self._checks = x._checks
        return self  # type: ignore[return-value]

    def assign(self, x: Any) -> Tensor:
        """Write ``x`` into this tensor's buffer (lazily; broadcast and cast to it).

        On a view of a realized buffer (``a[1:3]``, ``a.T``, ``a[::-1]``...) the write goes
        through to the buffer, like PyTorch's in-place ops on views, once the assign is
        realized: ``a[1:3].assign(x).realize()`` changes ``a``. A view the buffer can't take
        writes through (an expanded or padded one, e.g. ``a[::2]`` of odd length) raises
        RuntimeError. A tensor without a buffer just computes ``x`` from then on."""
        value = self._operand(x)
        if value.shape != self.shape:
            value = value._broadcast_to(self.shape)
        value = value.cast(self.dtype)
        if self.device != value.device:
            value = value.to(self.device)
        if value._checks:
            self._checks = merge_checks(self._checks, value._checks)
        if not _writable_view(self.uop):
            if _over_buffer(self.uop):
                raise RuntimeError(
                    f"assign: this {self.shape} view of a buffer is expanded or padded, so "
                    "the buffer can't take the write; assign into the base tensor with setitem"
                )
            self.uop = value.uop
            return self  # type: ignore[return-value]
        self.uop = UOp(Ops.AFTER, self.dtype, (self.uop, self.uop.store(value.uop)))
        return self  # type: ignore[return-value]

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        """Set ``requires_grad`` in place."""
        self.requires_grad = requires_grad
        return self  # type: ignore[return-value]


_COUNTED = ("kernel_count", "global_ops", "global_mem", "time_sum_s")


def _counters() -> tuple[Any, ...]:
    """The ``GlobalCounters`` totals a realize adds to."""
    return tuple(getattr(GlobalCounters, name) for name in _COUNTED)


def _restore_counters(saved: tuple[Any, ...]) -> None:
    for name, value in zip(_COUNTED, saved, strict=True):
        setattr(GlobalCounters, name, value)


def _bind_values(tensors: list[Any], views: list[UOp], keep: list[bool], assigning: bool) -> None:
    """After a realize: tensors that keep their graph (autograd) remember their value; those
    whose graph reads buffers the realize changed hold the value itself from now on."""
    for t, view, lazy in zip(tensors, views[: len(tensors)], keep, strict=True):
        if lazy:
            if view is not t._uop:  # (a view of a buffer is its own value)
                REALIZED[t._uop] = view  # keep the graph for autograd
        elif assigning and t.requires_grad and buffer_of(t._uop) is None:
            t.uop = view


def _assigned_buffer(u: UOp) -> UOp | None:
    """The BUFFER an assign (AFTER) writes, through the views it writes through."""
    u = strip_assigns(u)
    while u.op in GroupOp.Movement:
        u = u.src[0]
    return u if u.op is Ops.BUFFER else None


def _old_value_readers(tensors: list[Any]) -> list[Any]:
    """The live lazy tensors that need grad (a forward pass's results: the loss, activations;
    not ``tensors`` themselves) and read a buffer ``tensors`` assign into, before that assign:
    realized with it, so they keep the values they were built on (``loss.backward();
    opt.step(); loss.item()`` is the loss before the step, as PyTorch)."""
    written = {_assigned_buffer(n) for n in performed_assigns([t._uop for t in tensors])}
    written.discard(None)
    if not written:
        return []
    chosen = {id(t) for t in tensors}
    found = []
    for t in LAZY_TENSORS.values():
        if id(t) in chosen or not t.requires_grad or _over_buffer(t._uop):
            continue  # results of the differentiated graph only; a view shows the new value
        # AFTER nodes are not entered: a read through the assign sees the new value
        reads = t._uop.toposort(lambda n: n.op is not Ops.AFTER and n.op is not Ops.BUFFER)
        if any(n in written for n in reads):
            found.append(t)
            chosen.add(id(t))
    return found


def _apply_becomes(becomes: dict[UOp, UOp], first: Sequence[TensorCore] = ()) -> None:
    """Replace computed UOps by their buffers in every live tensor's graph (tensors that need
    their graph for autograd keep it, unless it performs an assign). ``first``: the tensors
    just realized, rewritten before the rest (those left holding a buffer leave the registry
    now: a dependent chain's walk then finds nothing else)."""
    for t in first:
        _rewrite(t, becomes)
        if _holds_buffer(t._uop):
            LAZY_TENSORS.pop(id(t), None)
    if not first or LAZY_TENSORS:
        for live in LAZY_TENSORS.values():  # a list (dead entries dropped): no iteration guard
            _rewrite(live, becomes)


def _holds_buffer(u: UOp) -> bool:
    """True when ``u`` is a buffer or a view of one: nothing in it is ever rewritten."""
    return u.op is Ops.BUFFER or is_buffer_view(u)


def _rewrite(t: TensorCore, becomes: dict[UOp, UOp]) -> None:
    """``_apply_becomes`` for one live tensor."""
    u = t._uop
    if _holds_buffer(u):
        LAZY_TENSORS.pop(id(t), None)  # realized since: nothing left to rewrite
        return
    if buffer_of(u) is not None:
        return
    if t.requires_grad and not has_assign(u):
        return
    if u in becomes:
        t.uop = becomes[u]
        return
    found = {n: becomes[n] for n in u.toposort(lambda n: buffer_of(n) is None) if n in becomes}
    if found:
        t.uop = u.substitute(found)


_WRITABLE_MOVEMENT = (Ops.RESHAPE, Ops.SHRINK, Ops.PERMUTE, Ops.FLIP)
"""Movement ops that map each element of a view to one element of the buffer below: an assign
through a chain of them writes into that buffer (PAD and EXPAND do not: padding has no
storage, an expanded element many)."""


def _writable_view(u: UOp) -> bool:
    """True when ``u`` is a BUFFER seen through writable movement ops (earlier assigns
    included): ``assign`` then writes through to the buffer, like a PyTorch view."""
    while u.op is Ops.AFTER or u.op in _WRITABLE_MOVEMENT:
        u = u.src[0]
    return u.op is Ops.BUFFER


def _over_buffer(u: UOp) -> bool:
    """True when ``u`` is a BUFFER seen through movement ops of any kind."""
    while u.op is Ops.AFTER or u.op in GroupOp.Movement:
        u = u.src[0]
    return u.op is Ops.BUFFER


def _base_view(u: UOp) -> UOp:
    """Strip AFTERs of earlier assigns: the buffer view underneath."""
    while u.op is Ops.AFTER:
        u = u.src[0]
    return u


def is_int_value(x: Any) -> bool:
    """True for Python ints (not bools)."""
    return isinstance(x, int) and not isinstance(x, bool)


def finite_float(x: float) -> bool:
    """True for finite floats."""
    return math.isfinite(x)
