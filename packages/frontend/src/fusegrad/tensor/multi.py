"""Multi-device tensors: one logical tensor split (or replicated) across devices.

``shard(t, devices, axis)`` returns a ``MultiTensor``: ``axis=None`` replicates ``t`` on every
device; an integer axis splits it into contiguous pieces, one per device, of
``ceil(n / len(devices))`` elements along ``axis`` (the last piece may be smaller; an empty
piece is an error). Each piece is an ordinary lazy Tensor on its device (``shards``), so the
work on each device is scheduled and run by that device.

Operations keep the data where it is:

* elementwise ops run per shard; a plain Tensor or a replicated operand is cut to each
  shard's piece (or copied whole when it broadcasts along the split axis);
* reductions over other axes run per shard; a reduction over the split axis reduces each
  shard, then **allreduces** the partial results (every device gets every partial and folds
  them in the same order, so the replicas are bitwise equal) into a replicated result;
* matmul: rows (or batch) split @ replicated, replicated @ columns split, and
  contraction-split @ contraction-split (partial products + allreduce); other layouts
  gather the operand that is in the way first;
* ``to(device)`` gathers the pieces onto one device (``cat`` along the axis);
  ``to(devices)`` and ``shard`` re-split.

Autograd flows through the copies: a parameter replicated with ``shard(w, devices)`` gets
the sum of every device's gradient in ``w.grad`` (the gradient allreduce of data-parallel
training), so optimizers over the original parameters work unchanged. ``allreduce`` is
exposed for explicit use (e.g. per-device replicas).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from fusegrad.engine import is_buffer_view
from fusegrad.tensor.convert import canonical_device
from fusegrad.tensor.elementwise import DefersOperators
from fusegrad.tensor.tensor import Tensor
from fusegrad.uop import DType

Operand = Any  # MultiTensor | Tensor | Python scalar
_REDUCE_FOLD: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "sum": lambda a, b: a + b,  # partial sums add
    "max": lambda a, b: a.maximum(b),  # the max of partial maxima
    "min": lambda a, b: a.minimum(b),  # the min of partial minima
    "prod": lambda a, b: a * b,  # partial products multiply
}
_REFLECTED: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,  # scalar op Tensor
    "div": operator.truediv, "pow": operator.pow,  # (Python dispatches to the reflected dunder)
}  # fmt: skip
# fmt: off
_ELEMENTWISE = frozenset((
    "neg", "reciprocal", "trunc", "sqrt", "rsqrt", "sin", "cos", "tan", "exp", "exp2", "log",
    "log2", "square", "abs", "sign", "ceil", "floor", "round", "erf", "isnan", "isinf",
    "logical_not", "relu", "relu6", "sigmoid", "hardsigmoid", "hardswish", "tanh", "gelu",
    "quick_gelu", "swish", "silu", "elu", "celu", "selu", "softplus", "mish", "logsigmoid",
    "softsign", "leaky_relu", "cast", "float", "half", "int", "bool", "double", "long",
    "contiguous", "detach", "clone", "clip", "clamp",
))  # per-shard ops (same args on each)
_BINARY = frozenset((
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
))  # per-shard ops on cut operands
# fmt: on


def _apply(op: str, a: Any, b: Tensor) -> Tensor:
    """``a op b`` where ``a`` may be a Python scalar."""
    if isinstance(a, Tensor):
        out: Tensor = getattr(a, op)(b)
        return out
    fn = _REFLECTED.get(op)
    if fn is None:
        raise TypeError(f"MultiTensor: {op} needs a Tensor on the left, got {type(a).__name__}")
    result: Tensor = fn(a, b)
    return result


def _devices(devices: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(devices, str):
        devices = (devices,)
    out = tuple(canonical_device(d) for d in devices)
    if not out or len(set(out)) != len(out):
        raise ValueError(f"shard: devices must be distinct and not empty, got {devices!r}")
    return out


def _axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of range for {ndim} dimensions")
    return axis % ndim


def split_bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """The [start, end) of each of ``parts`` pieces of ``n`` (ceil-sized, last smaller)."""
    size = -(-n // parts)
    bounds = [(i * size, min((i + 1) * size, n)) for i in range(parts)]
    if any(end <= start for start, end in bounds):
        raise ValueError(f"shard: {n} elements can't be split into {parts} non-empty pieces")
    return bounds


def _piece(t: Tensor, axis: int, start: int, end: int) -> Tensor:
    if t.shape[axis] == end - start:
        return t
    return t.shrink(tuple((start, end) if i == axis else None for i in range(t.ndim)))


class MultiTensor(DefersOperators):
    """A tensor held as one lazy Tensor per device (``shards``), split along ``axis``
    (``None``: every device holds all of it).

    >>> from fusegrad import Tensor
    >>> x = shard(Tensor([[1.0, 2.0], [3.0, 4.0]]), ("CPU:0", "CPU:1"), axis=0)
    >>> x.device, [s.shape for s in x.shards]
    (('CPU', 'CPU:1'), [(1, 2), (1, 2)])
    >>> (x * 10).sum(axis=0).numpy().tolist()
    [40.0, 60.0]
    """

    def __init__(self, shards: Sequence[Tensor], axis: int | None) -> None:
        self.shards = tuple(shards)
        self.axis = axis
        self.devices = tuple(s.device for s in self.shards)
        if axis is None:
            self.bounds: list[tuple[int, int]] = []
            return
        sizes = [int(s.shape[axis]) for s in self.shards]
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        self.bounds = [(a, a + n) for a, n in zip(starts, sizes, strict=True)]

    # -- properties --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The logical (whole) shape."""
        shape = [int(s) for s in self.shards[0].shape]
        if self.axis is not None:
            shape[self.axis] = self.bounds[-1][1]
        return tuple(shape)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shards[0].shape)

    @property
    def dtype(self) -> DType:
        """The element type (the same on every device)."""
        return self.shards[0].dtype

    @property
    def device(self) -> tuple[str, ...]:
        """The devices, in shard order."""
        return self.devices

    @property
    def requires_grad(self) -> bool | None:
        """Whether gradients flow into the shards."""
        return self.shards[0].requires_grad

    def numel(self) -> int:
        """Number of elements of the whole tensor."""
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"<MultiTensor {self.shape} {self.dtype} on {self.devices}, axis={self.axis}>"

    # -- data ----------------------------------------------------------------------------------
    def realize(self) -> MultiTensor:
        """Compute every shard (one schedule for all devices)."""
        Tensor.realize(*self.shards)
        return self

    def to(self, device: str | Sequence[str]) -> Tensor | MultiTensor:
        """One device: the whole tensor gathered there; several: re-split the same way."""
        if not isinstance(device, str):
            return shard(self, device, self.axis)
        target = canonical_device(device)
        if self.axis is None:
            local = dict(zip(self.devices, self.shards, strict=True)).get(target)
            return local if local is not None else self.shards[0].to(target)
        pieces = [s.to(target) for s in self.shards]
        return pieces[0].cat(*pieces[1:], dim=self.axis)

    def numpy(self) -> Any:
        """The whole tensor as a NumPy array."""
        return self.gather().numpy()

    def tolist(self) -> Any:
        """The whole tensor as nested lists."""
        return self.gather().tolist()

    def item(self) -> Any:
        """The value of a one-element tensor."""
        return self.gather().item()

    def gather(self) -> Tensor:
        """The whole tensor on the first device."""
        out = self.to(self.devices[0])
        assert isinstance(out, Tensor)
        return out

    def replicate(self) -> MultiTensor:
        """The same tensor held whole on every device (split tensors are allgathered)."""
        if self.axis is None:
            return self
        return MultiTensor([self.to(d) for d in self.devices], None)  # type: ignore[misc]

    def backward(self, gradient: Tensor | None = None) -> None:
        """Backpropagate from a replicated result (gradients reach every device's work
        through the allreduce's copies, so one replica is enough)."""
        if self.axis is not None:
            raise ValueError(f"backward: {self!r} is split; reduce it to a replicated result")
        self.shards[0].backward(gradient)

    # -- elementwise -----------------------------------------------------------------------------
    def _pieces_of(self, other: Operand, ndim: int) -> list[Any]:
        """``other`` cut to each shard's piece of a result of ``ndim`` dimensions."""
        if not isinstance(other, (Tensor, MultiTensor)):
            return [other] * len(self.shards)
        if isinstance(other, MultiTensor):
            if other.devices != self.devices:
                raise ValueError(f"{self!r} and {other!r} are on different devices")
            if other.axis is not None and (other.axis - other.ndim, other.bounds) == (
                (self.axis or 0) - self.ndim, self.bounds):  # fmt: skip
                return list(other.shards)
            whole: list[Tensor] = list(other.replicate().shards)
        else:
            whole = [other.to(d) for d in self.devices]
        if self.axis is None:
            return whole
        at = self.axis - self.ndim  # the split axis, counted from the right
        if -at > whole[0].ndim or whole[0].shape[at] == 1:
            return whole  # broadcasts along the split axis
        return [_piece(w, w.ndim + at, a, b) for w, (a, b) in zip(whole, self.bounds, strict=True)]

    def _binary(self, op: str, other: Operand, reflected: bool = False) -> MultiTensor:
        if isinstance(other, MultiTensor) and self.axis is None and other.axis is not None:
            return other._binary(op, self, not reflected)
        ndim = max(self.ndim, getattr(other, "ndim", 0))
        pieces = self._pieces_of(other, ndim)
        out = [_apply(op, b, a) if reflected else getattr(a, op)(b)
               for a, b in zip(self.shards, pieces, strict=True)]  # fmt: skip
        axis = None if self.axis is None else self.axis + ndim - self.ndim
        return MultiTensor(out, axis)

    def as_param(self, slot: int) -> MultiTensor:
        """Parameter ``slot`` of a multi-device function body: a placeholder per shard (see
        ``Tensor.as_param``), with this layout."""
        return MultiTensor([s.as_param(slot) for s in self.shards], self.axis)

    def call(
        self,
        *lst: MultiTensor,
        fxn: MultiTensor,
        grad_fxn: Callable[..., Any] | None = None,
    ) -> MultiTensor:
        """The multi-device body ``fxn`` applied shard by shard to this MultiTensor
        (parameter 0) and ``lst`` (parameters 1...), which must share its devices."""
        args = (self, *lst)
        for i, a in enumerate((*args, fxn)):
            if not isinstance(a, MultiTensor) or a.device != self.device:
                what = "fxn" if i == len(args) else f"argument {i}"
                raise ValueError(f"call: {what} must be a MultiTensor on {self.device}")
        out = [
            shards[0].call(*shards[1:], fxn=body, grad_fxn=grad_fxn)
            for *shards, body in zip(*(a.shards for a in args), fxn.shards, strict=True)
        ]
        return MultiTensor(out, fxn.axis)

    def __getattr__(self, name: str) -> Callable[..., MultiTensor]:
        if name in _BINARY:
            return lambda other: self._binary(name, other)
        if name in _ELEMENTWISE:
            return lambda *a, **k: MultiTensor([getattr(s, name)(*a, **k) for s in self.shards],
                                               self.axis)  # fmt: skip
        raise AttributeError(f"MultiTensor has no operation {name!r}")

    def __add__(self, x: Operand) -> MultiTensor:
        return self._binary("add", x)

    def __radd__(self, x: Operand) -> MultiTensor:
        return self._binary("add", x, True)

    def __sub__(self, x: Operand) -> MultiTensor:
        return self._binary("sub", x)

    def __rsub__(self, x: Operand) -> MultiTensor:
        return self._binary("sub", x, True)

    def __mul__(self, x: Operand) -> MultiTensor:
        return self._binary("mul", x)

    def __rmul__(self, x: Operand) -> MultiTensor:
        return self._binary("mul", x, True)

    def __truediv__(self, x: Operand) -> MultiTensor:
        return self._binary("div", x)

    def __rtruediv__(self, x: Operand) -> MultiTensor:
        return self._binary("div", x, True)

    def __pow__(self, x: Operand) -> MultiTensor:
        return self._binary("pow", x)

    def __neg__(self) -> MultiTensor:
        return MultiTensor([-s for s in self.shards], self.axis)

    def __matmul__(self, x: Operand) -> MultiTensor:
        return self.matmul(x)

    def __rmatmul__(self, x: Operand) -> MultiTensor:
        return _as_multi(x, self.devices).matmul(self)

    # -- reductions ------------------------------------------------------------------------------
    def _reduce(self, op: str, axis: int | Sequence[int] | None, keepdim: bool) -> MultiTensor:
        axes = (
            tuple(range(self.ndim))
            if axis is None
            else (axis,)
            if isinstance(axis, int)
            else tuple(axis)
        )
        axes = tuple(sorted({_axis(a, self.ndim, op) for a in axes}))
        parts = [getattr(s, op)(axis=axes, keepdim=keepdim) for s in self.shards]
        if self.axis is None:
            return MultiTensor(parts, None)
        if self.axis in axes:
            return MultiTensor(allreduce(parts, op), None)
        shift = 0 if keepdim else sum(1 for a in axes if a < self.axis)
        return MultiTensor(parts, self.axis - shift)

    def sum(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> MultiTensor:
        """Sum over ``axis`` (allreduced when it includes the split axis)."""
        return self._reduce("sum", axis, keepdim)

    def max(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> MultiTensor:
        """Maximum over ``axis`` (allreduced when it includes the split axis)."""
        return self._reduce("max", axis, keepdim)

    def min(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> MultiTensor:
        """Minimum over ``axis`` (allreduced when it includes the split axis)."""
        return self._reduce("min", axis, keepdim)

    def mean(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> MultiTensor:
        """Mean over ``axis``: the allreduced sum divided by the whole count."""
        total = self.sum(axis, keepdim)
        count = self.numel() // max(total.numel(), 1)
        return total / count

    # -- matmul ----------------------------------------------------------------------------------
    def matmul(self, other: Operand) -> MultiTensor:
        """``self @ other`` (see the module docstring for which layouts stay split)."""
        b = _as_multi(other, self.devices)
        if self.ndim < 2 or b.ndim < 2:
            raise ValueError(
                f"matmul: MultiTensor operands need 2+ dims, got {self.shape} @ {b.shape}"
            )
        out_ndim = max(self.ndim, b.ndim)
        a_k, b_k, b_n = self.ndim - 1, b.ndim - 2, b.ndim - 1
        if self.axis == a_k and b.axis == b_k and self.bounds == b.bounds:
            parts = [x @ y for x, y in zip(self.shards, b.shards, strict=True)]
            return MultiTensor(allreduce(parts, "sum"), None)
        if self.axis is not None and self.axis != a_k:
            right = b.replicate()
            out = [x @ y for x, y in zip(self.shards, right.shards, strict=True)]
            return MultiTensor(out, self.axis + out_ndim - self.ndim)
        if b.axis == b_n:
            left = self.replicate()
            out = [x @ y for x, y in zip(left.shards, b.shards, strict=True)]
            return MultiTensor(out, out_ndim - 1)
        left, right = self.replicate(), b.replicate()
        return MultiTensor([x @ y for x, y in zip(left.shards, right.shards, strict=True)], None)

    def dot(self, other: Operand) -> MultiTensor:
        """Same as ``matmul``."""
        return self.matmul(other)

    def linear(self, weight: Operand, bias: Operand | None = None) -> MultiTensor:
        """``self @ weight + bias``."""
        out = self.matmul(weight)
        return out if bias is None else out + bias

    # -- movement --------------------------------------------------------------------------------
    def permute(self, *order: int | Sequence[int]) -> MultiTensor:
        """Dimensions reordered; the split axis moves with its dimension."""
        flat = tuple(order[0]) if len(order) == 1 and not isinstance(order[0], int) else order
        perm = tuple(_axis(int(o), self.ndim, "permute") for o in flat)  # type: ignore[arg-type]
        axis = None if self.axis is None else perm.index(self.axis)
        return MultiTensor([s.permute(perm) for s in self.shards], axis)

    def transpose(self, dim0: int = 1, dim1: int = 0) -> MultiTensor:
        """Two dimensions swapped."""
        order = list(range(self.ndim))
        a, b = _axis(dim0, self.ndim, "transpose"), _axis(dim1, self.ndim, "transpose")
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> MultiTensor:
        """The last two dimensions swapped (a 2-D transpose)."""
        return self.transpose(-1, -2) if self.ndim >= 2 else self

    def reshape(self, *shape: int | Sequence[int]) -> MultiTensor:
        """A new shape; the split stays when the split dimension survives whole (same size,
        same number of elements before it), else the tensor is gathered and replicated."""
        flat = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        new = tuple(int(s) for s in flat)  # type: ignore[arg-type]
        if -1 in new:
            known = math.prod(s for s in new if s != -1)
            new = tuple(self.numel() // known if s == -1 else s for s in new)
        if self.axis is None:
            return MultiTensor([s.reshape(new) for s in self.shards], None)
        before = math.prod(self.shape[: self.axis])
        for k in range(len(new)):
            if math.prod(new[:k]) == before and new[k] == self.shape[self.axis]:
                out = [s.reshape((*new[:k], int(s.shape[self.axis]), *new[k + 1 :]))
                       for s in self.shards]  # fmt: skip
                return MultiTensor(out, k)
        return self.replicate().reshape(new)


def _as_multi(x: Operand, devices: tuple[str, ...]) -> MultiTensor:
    if isinstance(x, MultiTensor):
        if x.devices != devices:
            raise ValueError(f"{x!r} is on {x.devices}, expected {devices}")
        return x
    if not isinstance(x, Tensor):
        x = Tensor(x)
    return shard(x, devices)


def allreduce(parts: Sequence[Tensor], op: str = "sum") -> list[Tensor]:
    """One result per device of ``parts`` (one tensor per device, equal shapes): every
    device receives every part and folds them (``op``: sum, max, min, prod) in the same
    order, so the results are bitwise equal."""
    fold = _REDUCE_FOLD.get(op)
    if fold is None:
        raise ValueError(f"allreduce: op must be one of {sorted(_REDUCE_FOLD)}, got {op!r}")
    if len({tuple(p.shape) for p in parts}) > 1:
        raise ValueError(f"allreduce: parts differ in shape: {[p.shape for p in parts]}")
    out = []
    for device in (p.device for p in parts):
        local = [p if p.device == device else p.to(device) for p in parts]
        acc = local[0]
        for p in local[1:]:
            acc = fold(acc, p)
        out.append(acc)
    return out


def shard(
    t: Tensor | MultiTensor, devices: Sequence[str] | str, axis: int | None = None
) -> MultiTensor:
    """``t`` split along ``axis`` across ``devices`` (``None``: a whole copy on each)."""
    devs = _devices(devices)
    if isinstance(t, MultiTensor):
        if t.devices == devs and t.axis == (None if axis is None else _axis(axis, t.ndim, "shard")):
            return t
        t = t.gather()
    if axis is None:
        return MultiTensor([t if t.device == d else t.to(d) for d in devs], None)
    ax = _axis(axis, t.ndim, "shard")
    bounds = split_bounds(int(t.shape[ax]), len(devs))
    pieces = [_piece(t, ax, a, b) for a, b in bounds]
    return MultiTensor([_placed(p, d) for p, d in zip(pieces, devs, strict=True)], ax)


def _placed(piece: Tensor, device: str) -> Tensor:
    """A shard of its own on ``device``: a piece that is a view of ``t``'s buffer on that
    device is copied (as a realize of it once did), so the shard doesn't follow ``t``."""
    if piece.device != device:
        return piece.to(device)
    return piece.contiguous() if is_buffer_view(piece.uop) else piece


def shard_(t: Tensor, devices: Sequence[str] | str, axis: int | None = None) -> MultiTensor:
    """``shard`` with every piece realized on its device now (for parameters and data that
    are used many times); ``t`` itself is unchanged and keeps receiving the gradients."""
    return shard(t, devices, axis).realize()


__all__ = ["MultiTensor", "allreduce", "shard", "shard_", "split_bounds"]
