"""``function``: a Python function over Tensors traced once per input signature.

``function(fxn)`` traces ``fxn`` over placeholder inputs into a tensor graph; later calls
with the same signature substitute their inputs into that graph and return lazy tensors
(nothing realized: composable with other work and differentiable). Also the helpers TinyJit
shares for walking the Tensors in arguments and results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fusegrad.tensor import Tensor
from fusegrad.uop import Ops, UOp

ReturnType = TypeVar("ReturnType")
Key = int | str


def flatten_tensors(ret: Any) -> list[Tensor]:
    """The Tensors in ``ret`` (nested lists, tuples and dict values), in order."""
    if isinstance(ret, Tensor):
        return [ret]
    if isinstance(ret, (list, tuple)):
        return [t for x in ret for t in flatten_tensors(x)]
    if isinstance(ret, dict):
        return [t for x in ret.values() for t in flatten_tensors(x)]
    return []


def rebuild_tensors(ret: Any, tensors: list[Tensor]) -> Any:
    """``ret`` with its Tensors replaced, in order, by ``tensors`` (consumed from the front)."""
    if isinstance(ret, Tensor):
        return tensors.pop(0)
    if isinstance(ret, (list, tuple)):
        items = [rebuild_tensors(x, tensors) for x in ret]
        return items if isinstance(ret, list) else tuple(items)
    if isinstance(ret, dict):
        return {k: rebuild_tensors(v, tensors) for k, v in ret.items()}
    return ret


@dataclass
class _Trace:
    holders: list[UOp]
    ret: Any
    outs: list[UOp]
    grads: list[bool | None]


class function(Generic[ReturnType]):
    """Trace ``fxn`` once per input signature into a graph over placeholder inputs; later
    calls substitute their inputs into it and return lazy tensors (the Python in ``fxn``
    runs once per signature; it must not realize or read its inputs).

    >>> from fusegrad import Tensor, function
    >>> @function
    ... def axpy(a: Tensor, x: Tensor, y: Tensor) -> Tensor:
    ...     return a * x + y
    >>> axpy(Tensor([2.0]), Tensor([3.0]), Tensor([1.0])).item()
    7.0
    """

    def __init__(self, fxn: Callable[..., ReturnType]) -> None:
        self.fxn = fxn
        self.traces: dict[Any, _Trace] = {}
        functools.update_wrapper(self, fxn)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> ReturnType:
        named: list[tuple[Key, Any]] = [*enumerate(args), *sorted(kwargs.items())]
        tensors = [(k, v) for k, v in named if isinstance(v, Tensor)]
        key = (
            tuple((k, tuple(t.shape), t.dtype, t.device, bool(t.requires_grad))
                  for k, t in tensors),
            tuple((k, _hashable(v)) for k, v in named if not isinstance(v, Tensor)),
        )  # fmt: skip
        trace = self.traces.get(key)
        if trace is None:
            trace = self.traces[key] = self._trace(args, kwargs, tensors)
        mapping = {h: t.uop for h, (_, t) in zip(trace.holders, tensors, strict=True)}
        outs = [Tensor(u.substitute(mapping)) for u in trace.outs]
        needs = any(t.requires_grad for _, t in tensors)
        for o, g in zip(outs, trace.grads, strict=True):
            o.requires_grad = True if g and needs else g
            o._leaf = False
        out: ReturnType = rebuild_tensors(trace.ret, outs)
        return out

    def _trace(
        self, args: Sequence[Any], kwargs: dict[str, Any], tensors: list[tuple[Key, Tensor]]
    ) -> _Trace:
        holders = []
        swap: dict[Key, Tensor] = {}
        for k, t in tensors:
            buf = UOp.new_buffer(t.device, 1, t.dtype)
            shape = tuple(t.shape)
            holder = UOp(Ops.CONTIGUOUS, t.dtype, (buf.reshape((1,) * len(shape)).expand(shape),))
            h = Tensor(holder)
            h.requires_grad = t.requires_grad
            holders.append(holder)
            swap[k] = h
        new_args = [swap.get(i, a) for i, a in enumerate(args)]
        new_kwargs = {k: swap.get(k, v) for k, v in kwargs.items()}
        ret = self.fxn(*new_args, **new_kwargs)
        outs = flatten_tensors(ret)
        return _Trace(holders, ret, [t.uop for t in outs], [t.requires_grad for t in outs])


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return v


__all__ = ["flatten_tensors", "function", "rebuild_tensors"]
