# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""The schedule as data: ``linear_with_vars`` / ``schedule_linear`` (the LINEAR of kernel and
copy CALLs that realizing these tensors runs) and ``custom_kernel`` (a user-written kernel AST
as a step of the graph).

Differences from tinygrad, by design of the layers below:

* ``linear_with_vars`` / ``schedule_linear`` only *build* the schedule (the same one, from the
  same scheduler cache, that ``realize`` builds on the kernel pipeline); the tensors stay
  lazy, since the engine has no public entry point that runs a LINEAR on its own. Its CALLs
  are ``CALL(kernel AST, *buffers, *bound Variables)`` and ``CALL(COPY(nbytes), dst, src)``
  (see ``fusegrad.codegen.schedule.graph``); buffers the schedule creates are not allocated.
* ``custom_kernel``'s ``fxn`` receives one flat pointer PARAM per tensor
  (``UOp.param(slot, dtype.ptr(size))``) and returns a kernel AST in ``fusegrad.codegen``'s
  spec form (a SINK of ENDed STOREs, ``arg=KernelInfo(name)``); tinygrad hands it shaped
  placeholders. ``grad_fxn`` is not supported yet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fusegrad.codegen import get_kernel_graph
from fusegrad.engine import REALIZED, buffer_of
from fusegrad.uop import Ops, UOp, dtypes

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


def _with_realized(u: UOp) -> UOp:
    """``u`` with the parts already computed replaced by the buffers holding them (what the
    engine hands the scheduler on ``realize``)."""
    found: dict[UOp, UOp] = {}

    def gate(node: UOp) -> bool:
        if buffer_of(node) is not None:
            return False
        view = REALIZED.get(node) if node is not u else None
        if view is not None:
            found[node] = view
            return False
        return True

    u.toposort(gate)
    return u.substitute(found) if found else u


class ScheduleMixin:
    """linear_with_vars, schedule_linear, custom_kernel (mixed into Tensor)."""

    def linear_with_vars(self: Tensor, *lst: Tensor) -> tuple[UOp, dict[str, int]]:
        """The LINEAR of CALLs realizing this tensor and ``lst`` (one schedule for all), and
        the values of the bound Variables it uses, by name. The tensors are not changed.

        >>> from fusegrad import Tensor
        >>> linear, var_vals = (Tensor([1.0, 2.0]) * 3).linear_with_vars()
        >>> len(linear.src), var_vals
        (1, {})
        """
        for t in (self, *lst):
            if t.dtype.weak:
                raise RuntimeError(f"linear_with_vars: can't realize weak dtype {t.dtype!r}")
        uops = [REALIZED.get(t.uop, t.uop) for t in (self, *lst)]
        kg = get_kernel_graph(UOp.sink(*(_with_realized(u) for u in uops)))
        var_vals = {str(v.arg[0]): int(val) for v, val in kg.var_vals.items()}
        return kg.linear, var_vals

    def schedule_linear(self: Tensor, *lst: Tensor) -> UOp:
        """The LINEAR of CALLs realizing this tensor and ``lst`` (see ``linear_with_vars``);
        RuntimeError when it depends on bound Variables (use ``linear_with_vars`` then)."""
        linear, var_vals = self.linear_with_vars(*lst)
        if var_vals:
            raise RuntimeError(
                f"schedule_linear: the schedule uses bound Variables {sorted(var_vals)}; "
                "call linear_with_vars to get their values"
            )
        return linear

    def custom_kernel(
        self: Tensor,
        *lst: Tensor,
        fxn: Callable[..., UOp],
        grad_fxn: Callable[..., Any] | None = None,
    ) -> list[Tensor]:
        """Run the kernel ``fxn(*params)`` builds over the buffers of this tensor and ``lst``
        (in place; lazy sources get a buffer first). Returns the tensors as they are after the
        kernel ran, in order. Runs on the kernel pipeline only."""
        if grad_fxn is not None:
            raise NotImplementedError(
                "custom_kernel: grad_fxn is not supported yet (no gradient rule for custom kernels)"
            )
        if not callable(fxn):
            raise TypeError(f"custom_kernel: fxn must be callable, got {type(fxn).__name__}")
        srcs = (self, *lst)
        devices = {t.device for t in srcs}
        if len(devices) > 1:
            raise RuntimeError(f"custom_kernel: all tensors must be on one device, got {devices}")
        kernel = UOp(Ops.CUSTOM_KERNEL, dtypes.void, tuple(t.uop for t in srcs), fxn)
        return [t._wrap(UOp(Ops.AFTER, t.dtype, (t.uop, kernel))) for t in srcs]
