"""The primitives the op mixins are written against, and the helpers they share.

``UOp`` and the frontend's ``Tensor`` both provide the primitives; each mixin method is written
once against them, so ``Tensor`` and ``UOp`` spell the same graph (a Tensor op's UOp is the same
node, by hash-consing, as the op applied to the Tensor's UOp):

* ``uop``: the tensor-level UOp (a UOp is its own);
* ``_wrap(uop, *parents)``: a result computing ``uop`` (a Tensor: a new Tensor that tracks
  autograd from ``parents``; a UOp: ``uop`` itself); ``_wrap_const(uop)`` the same for a
  constant (no gradient);
* ``_apply(op, *others, dtype=None)``: the ALU node over same-shaped, same-dtype operands;
* ``_const(value, dtype=None, shape=None)``: a constant on this value's device (its shape and
  dtype by default);
* ``shape``, ``dtype``, ``device``, ``ndim``, ``cast``, ``where``, ``arange``.

Nothing here knows about the scheduler, a device or autograd: those stay with ``Tensor``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.helpers import prod

if TYPE_CHECKING:
    from fusegrad.uop.dtype import DType
    from fusegrad.uop.opcodes import Ops
    from fusegrad.uop.uop import UOp, sint


def broadcast_shape(*shapes: tuple[sint, ...]) -> tuple[sint, ...]:
    """PyTorch broadcasting; RuntimeError naming the sizes when shapes don't broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out: list[sint] = []
    for i, dims in enumerate(zip(*padded, strict=True)):
        sizes = [d for d in dims if not (isinstance(d, int) and d == 1)]
        first = sizes[0] if sizes else 1
        bad = next((d for d in sizes if d is not first and d != first), None)
        if bad is not None:
            raise RuntimeError(
                f"The size of tensor a ({first}) must match the size of tensor b ({bad}) at "
                f"non-singleton dimension {i}: shapes {' and '.join(map(str, shapes))}"
            )
        out.append(first)
    return tuple(out)


class OpMixinBase:
    """The base of every op mixin: the primitives (declared for type checkers; ``UOp`` and
    ``Tensor`` define them) and the axis helpers."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def uop(self) -> UOp: ...
        @property
        def shape(self) -> tuple[sint, ...]: ...
        @property
        def ndim(self) -> builtins.int: ...
        @property
        def device(self) -> Any: ...

        @property
        def dtype(self) -> DType: ...

        def _wrap(self, uop: UOp, *parents: Any) -> Self: ...
        def _wrap_const(self, uop: UOp) -> Self: ...
        def _apply(self, op: Ops, *others: Any, dtype: DType | None = None) -> Self: ...
        def _const(self, value: Any, dtype: DType | None = None, shape: Any = None) -> Self: ...
        def cast(self, dtype: Any) -> Self: ...
        def permute(self, order: Any, *args: Any) -> Self: ...
        def where(self, x: Any, y: Any) -> Self: ...
        def eq(self, x: Any) -> Self: ...
        @classmethod
        def arange(cls, start: Any, stop: Any = None, step: Any = 1, **kwargs: Any) -> Self: ...
        def _operand(self, x: Any) -> Self: ...
        def _promoted(self, *xs: Any, reverse: builtins.bool = False) -> list[Self]: ...
        def _broadcast_to(self, shape: tuple[sint, ...]) -> Self: ...
        def matmul(self, x: Any, reverse: builtins.bool = False, dtype: Any = None) -> Self: ...
        def all(self, axis: Any = None, keepdim: builtins.bool = False) -> Self: ...

        # the operators (each class defines its own; the mixins use them on same-class values)
        def __add__(self, x: Any) -> Self: ...
        def __radd__(self, x: Any) -> Self: ...
        def __sub__(self, x: Any) -> Self: ...
        def __rsub__(self, x: Any) -> Self: ...
        def __mul__(self, x: Any) -> Self: ...
        def __rmul__(self, x: Any) -> Self: ...
        def __truediv__(self, x: Any) -> Self: ...
        def __rtruediv__(self, x: Any) -> Self: ...
        def __floordiv__(self, x: Any) -> Self: ...
        def __mod__(self, x: Any) -> Self: ...
        def __pow__(self, x: Any) -> Self: ...
        def __rpow__(self, x: Any) -> Self: ...
        def __neg__(self) -> Self: ...
        def __invert__(self) -> Self: ...
        def __lt__(self, x: Any) -> Self: ...
        def __gt__(self, x: Any) -> Self: ...
        def __le__(self, x: Any) -> Self: ...
        def __ge__(self, x: Any) -> Self: ...
        def __and__(self, x: Any) -> Self: ...
        def __or__(self, x: Any) -> Self: ...
        def __xor__(self, x: Any) -> Self: ...

    def _axis(self, dim: builtins.int, ndim: builtins.int | None = None) -> builtins.int:
        """``dim`` made non-negative; IndexError like PyTorch when out of range."""
        n = self.ndim if ndim is None else ndim
        lo, hi = (-n, n - 1) if n > 0 else (-1, 0)
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"dim must be an int, got {type(dim).__name__}")
        if not lo <= dim <= hi:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
            )
        return dim + n if dim < 0 else dim

    def _axes(self, axis: builtins.int | Sequence[builtins.int] | None) -> tuple[builtins.int, ...]:
        """Reduction axes: None is all; duplicates are an error."""
        if axis is None:
            return tuple(range(self.ndim))
        raw = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(self._axis(a) for a in raw)
        if self.ndim == 0:
            return ()  # dim 0 / -1 of a 0-d tensor: like PyTorch, nothing to reduce
        for a in axes:
            if axes.count(a) > 1:
                raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        return axes

    # -- properties and casts every op value has -------------------------------------------------
    @property
    def T(self) -> Self:
        """The dimensions reversed."""
        if self.ndim < 2:
            return self
        return self.permute(*reversed(range(self.ndim)))

    def numel(self) -> sint:
        """Number of elements."""
        n: sint = prod(self.shape)
        return n

    def element_size(self) -> builtins.int:
        """Bytes per element."""
        return builtins.int(self.dtype.itemsize)

    def nbytes(self) -> sint:
        """Bytes of all elements."""
        n: sint = self.numel() * self.element_size()
        return n

    def is_floating_point(self) -> builtins.bool:
        """True for float dtypes."""
        return dtypes.is_float(self.dtype)

    def _to_float(self) -> Self:
        """Float dtypes as they are, everything else as the default float."""
        return self if dtypes.is_float(self.dtype) else self.cast(dtypes.default_float)

    def float(self) -> Self:
        """Cast to float32."""
        return self.cast(dtypes.float32)

    def half(self) -> Self:
        """Cast to float16."""
        return self.cast(dtypes.float16)

    def bfloat16(self) -> Self:
        """Cast to bfloat16."""
        return self.cast(dtypes.bfloat16)

    def double(self) -> Self:
        """Cast to float64."""
        return self.cast(dtypes.float64)

    def int(self) -> Self:
        """Cast to int32."""
        return self.cast(dtypes.int32)

    def long(self) -> Self:
        """Cast to int64."""
        return self.cast(dtypes.int64)

    def short(self) -> Self:
        """Cast to int16."""
        return self.cast(dtypes.int16)

    def bool(self) -> Self:
        """Cast to bool (nonzero is True)."""
        return self.cast(dtypes.bool)
