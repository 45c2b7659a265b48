# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Tensor's elementwise methods: the shared mixin of ``UOp`` and ``Tensor``
(``fusegrad.uop.mixin``) plus what only a Tensor has: the operators (which defer to a
MultiTensor operand), the in-place operators, and ``allclose`` (it realizes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fusegrad.uop.mixin import ElementwiseMixin as SharedElementwise

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


class DefersOperators:
    """Marker base: Tensor's binary operators return NotImplemented for an operand of such a
    class, so Python asks the operand's reflected method (``Tensor + MultiTensor`` runs
    ``MultiTensor.__radd__``)."""


def _deferring(fn: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    def operator(self: Tensor, x: Any) -> Tensor:
        if isinstance(x, DefersOperators):
            return NotImplemented  # type: ignore[no-any-return]
        return fn(self, x)

    operator.__name__ = fn.__name__
    operator.__qualname__ = fn.__qualname__
    operator.__doc__ = fn.__doc__
    return operator


class ElementwiseMixin(SharedElementwise):  # noqa: PLW1641 (__hash__ comes from TensorCore)
    """Elementwise methods and operators (mixed into Tensor)."""

    def allclose(
        self: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> bool:
        """True when every element isclose."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    # -- operators -------------------------------------------------------------------------------
    def __neg__(self: Tensor) -> Tensor:
        return self.neg()

    def __invert__(self: Tensor) -> Tensor:
        return self.bitwise_not()

    def __abs__(self: Tensor) -> Tensor:
        return self.abs()

    def __add__(self: Tensor, x: Any) -> Tensor:
        return self.add(x)

    def __radd__(self: Tensor, x: Any) -> Tensor:
        return self.add(x, True)

    def __sub__(self: Tensor, x: Any) -> Tensor:
        return self.sub(x)

    def __rsub__(self: Tensor, x: Any) -> Tensor:
        return self.sub(x, True)

    def __mul__(self: Tensor, x: Any) -> Tensor:
        return self.mul(x)

    def __rmul__(self: Tensor, x: Any) -> Tensor:
        return self.mul(x, True)

    def __truediv__(self: Tensor, x: Any) -> Tensor:
        return self.div(x)

    def __rtruediv__(self: Tensor, x: Any) -> Tensor:
        return self.div(x, True)

    def __floordiv__(self: Tensor, x: Any) -> Tensor:
        return self.div(x, rounding_mode="floor")

    def __rfloordiv__(self: Tensor, x: Any) -> Tensor:
        return self.div(x, True, rounding_mode="floor")

    def __mod__(self: Tensor, x: Any) -> Tensor:
        return self.mod(x)

    def __rmod__(self: Tensor, x: Any) -> Tensor:
        return self.mod(x, True)

    def __pow__(self: Tensor, x: Any) -> Tensor:
        return self.pow(x)

    def __rpow__(self: Tensor, x: Any) -> Tensor:
        return self.pow(x, True)

    def __matmul__(self: Tensor, x: Tensor) -> Tensor:
        return self.matmul(x)

    def __rmatmul__(self: Tensor, x: Tensor) -> Tensor:
        return self._operand(x).matmul(self)

    def __and__(self: Tensor, x: Any) -> Tensor:
        return self.bitwise_and(x)

    def __rand__(self: Tensor, x: Any) -> Tensor:
        return self.bitwise_and(x, True)

    def __or__(self: Tensor, x: Any) -> Tensor:
        return self.bitwise_or(x)

    def __ror__(self: Tensor, x: Any) -> Tensor:
        return self.bitwise_or(x, True)

    def __xor__(self: Tensor, x: Any) -> Tensor:
        return self.bitwise_xor(x)

    def __rxor__(self: Tensor, x: Any) -> Tensor:
        return self.bitwise_xor(x, True)

    def __lshift__(self: Tensor, x: Any) -> Tensor:
        return self.lshift(x)

    def __rlshift__(self: Tensor, x: Any) -> Tensor:
        return self.lshift(x, True)

    def __rshift__(self: Tensor, x: Any) -> Tensor:
        return self.rshift(x)

    def __rrshift__(self: Tensor, x: Any) -> Tensor:
        return self.rshift(x, True)

    def __lt__(self: Tensor, x: Any) -> Tensor:
        return self.lt(x)

    def __gt__(self: Tensor, x: Any) -> Tensor:
        return self.gt(x)

    def __le__(self: Tensor, x: Any) -> Tensor:
        return self.le(x)

    def __ge__(self: Tensor, x: Any) -> Tensor:
        return self.ge(x)

    def __eq__(self: Tensor, x: Any) -> Tensor:  # type: ignore[override]
        return self.eq(x)

    def __ne__(self: Tensor, x: Any) -> Tensor:  # type: ignore[override]
        return self.ne(x)

    def __iadd__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.add(x))

    def __isub__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.sub(x))

    def __imul__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.mul(x))

    def __itruediv__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.div(x))

    def __ifloordiv__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.__floordiv__(x))

    def __imod__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.mod(x))

    def __ipow__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.pow(x))

    def __imatmul__(self: Tensor, x: Tensor) -> Tensor:
        return self.assign(self.matmul(x))

    def __iand__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.bitwise_and(x))

    def __ior__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.bitwise_or(x))

    def __ixor__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.bitwise_xor(x))

    def __ilshift__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.lshift(x))

    def __irshift__(self: Tensor, x: Any) -> Tensor:
        return self.assign(self.rshift(x))


# binary operators (not the in-place ones: ``t += multi`` must fail loudly) defer to operands
# that are DefersOperators
_DEFERRING_OPERATORS = (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__rmatmul__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__lshift__",
    "__rlshift__",
    "__rshift__",
    "__rrshift__",
    "__lt__",
    "__gt__",
    "__le__",
    "__ge__",
    "__eq__",
    "__ne__",
)
for _name in _DEFERRING_OPERATORS:
    setattr(ElementwiseMixin, _name, _deferring(getattr(ElementwiseMixin, _name)))
