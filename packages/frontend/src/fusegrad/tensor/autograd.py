# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Autograd on Tensors: ``backward``/``gradient`` and the ``training`` switch. The gradient
rules and the reverse-mode accumulation are uop-core's (``fusegrad.uop.gradient``), shared
with ``UOp.gradient``."""

from __future__ import annotations

from typing import Any, cast

from fusegrad.uop import ContextVar, Ops, UOp, dtypes
from fusegrad.uop.gradient import (
    CustomGradient,
    GradientRule,
    compute_gradient,
    pm_gradient,
    with_gradient,
)

__all__ = [
    "AutogradMixin",
    "CustomGradient",
    "GradientRule",
    "compute_gradient",
    "pm_gradient",
    "with_gradient",
]

TRAINING = ContextVar("TRAINING", 0)  # declared in fusegrad.uop's flags: the same object


class _TensorType(type):
    """The Tensor's metaclass: ``Tensor.training`` reads and writes the ``TRAINING`` setting,
    so ``Tensor.training = True``, ``Context(TRAINING=1)`` and the ``TRAINING`` environment
    variable are one state."""

    @property
    def training(cls) -> bool:
        return bool(TRAINING.value)

    @training.setter
    def training(cls, value: bool) -> None:
        TRAINING.value = int(bool(value))


class _Training:
    """``tensor.training`` on an instance: the same ``TRAINING`` state."""

    def __get__(self, obj: object, owner: type | None = None) -> bool:
        return bool(TRAINING.value)


def _in_graph(t: Any, reached: set[UOp]) -> bool:
    """Whether backward fills ``t.grad``: a float tensor on a device, in the graph, not
    marked ``requires_grad=False``."""
    if t.requires_grad is False or t.uop not in reached or not dtypes.is_float(t.dtype):
        return False
    return not str(t.device).startswith("DISK")


class AutogradMixin(metaclass=_TensorType):
    """backward / gradient (mixed into Tensor)."""

    training = _Training()

    def _seed_grad(self: Any, gradient: Any) -> UOp:
        if gradient is None:
            if self.numel() != 1:
                raise RuntimeError(
                    "backward: grad can be implicitly created only for scalar outputs, got "
                    f"shape {tuple(self.shape)}; pass gradient= of that shape"
                )
            return cast(UOp, self.uop.const_like(1.0))
        g = self._operand(gradient)
        if g.shape != self.shape:
            raise RuntimeError(
                f"backward: gradient shape {tuple(g.shape)} doesn't match output shape "
                f"{tuple(self.shape)}"
            )
        return cast(UOp, g.cast(self.dtype).uop)

    def gradient(
        self: Any, *targets: Any, gradient: Any = None, materialize_grads: bool = True
    ) -> list[Any]:
        """d self / d target for each target (as new tensors). A target the output does not
        depend on gets zeros, as in tinygrad (``materialize_grads=False``: RuntimeError)."""
        if not dtypes.is_float(self.dtype):
            raise RuntimeError(
                f"only floating point tensors can require gradients, got {self.dtype!r}"
            )
        grads = compute_gradient(self.uop, self._seed_grad(gradient), {t.uop for t in targets})
        out = []
        for t in targets:
            g = grads.get(t.uop)
            if g is None:
                if not materialize_grads:
                    raise RuntimeError(
                        "one of the differentiated Tensors appears to not have been used in the graph"
                    )
                g = t.uop.const_like(0)
            out.append(type(self)(g.cast(t.dtype), device=t.device))
        return out

    def backward(self: Any, gradient: Any = None) -> Any:
        """Accumulate d self / d t into ``t.grad`` for every floating-point tensor ``t`` of
        the graph that has a device, unless it was marked ``requires_grad=False`` (tinygrad's
        rule; ``requires_grad=True`` is not needed). A non-scalar output needs ``gradient=``
        of its shape."""
        if self.requires_grad is False or not dtypes.is_float(self.dtype):
            raise RuntimeError(
                "backward: element 0 of tensors does not require grad and does not have a "
                f"grad_fn (requires_grad={self.requires_grad}, dtype {self.dtype!r})"
            )
        from fusegrad.tensor.core import ALL_TENSORS

        seed = self._seed_grad(gradient)
        reached = set(self.uop.toposort(lambda u: u.op is not Ops.DETACH))
        tensors = [t for t in list(ALL_TENSORS.values()) if _in_graph(t, reached)]
        if not tensors:
            return self
        grads = compute_gradient(self.uop, seed, {t.uop for t in tensors})
        for t in tensors:
            g = grads.get(t.uop)
            if g is None:
                g = t.uop.const_like(0)  # in the graph but no gradient flows: zeros, like PyTorch
            gt = type(self)(g.cast(t.dtype), device=t.device)
            t.grad = gt if t.grad is None else t.grad + gt
        return self
