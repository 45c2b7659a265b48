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
from fusegrad.tensor.multi import MultiTensor
from fusegrad.uop import Ops, UOp

ReturnType = TypeVar("ReturnType")
Key = int | str | tuple[int | str, int]


def _tensor_arguments(named: list[tuple[Any, Any]]) -> list[tuple[Key, Tensor]]:
    """The Tensor arguments, a MultiTensor's shards as ``(key, i)``."""
    out: list[tuple[Key, Tensor]] = []
    for k, v in named:
        if isinstance(v, MultiTensor):
            out.extend(((k, i), s) for i, s in enumerate(v.shards))
        elif isinstance(v, Tensor):
            out.append((k, v))
    return out


def _layout(v: Any) -> Any:
    """A non-Tensor argument's part of the signature (a MultiTensor: its layout)."""
    return ("MultiTensor", v.axis, v.devices) if isinstance(v, MultiTensor) else _hashable(v)


def flatten_tensors(ret: Any) -> list[Tensor]:
    """The Tensors in ``ret`` (nested lists, tuples and dict values; a MultiTensor's
    shards), in order."""
    if isinstance(ret, Tensor):
        return [ret]
    if isinstance(ret, MultiTensor):
        return list(ret.shards)
    if isinstance(ret, (list, tuple)):
        return [t for x in ret for t in flatten_tensors(x)]
    if isinstance(ret, dict):
        return [t for x in ret.values() for t in flatten_tensors(x)]
    return []


def rebuild_tensors(ret: Any, tensors: list[Tensor]) -> Any:
    """``ret`` with its Tensors replaced, in order, by ``tensors`` (consumed from the front)."""
    if isinstance(ret, Tensor):
        return tensors.pop(0)
    if isinstance(ret, MultiTensor):
        return MultiTensor([tensors.pop(0) for _ in ret.shards], ret.axis)
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

    ``precompile=True``: the body is also scheduled and compiled once per signature (a
    TinyJit capture of it) and every call runs it as one launch over its (realized) inputs;
    the results carry their computed values and still their graphs (differentiable).
    ``allow_implicit=False`` (tinygrad's default): the body may read only tensors passed as
    arguments (or made inside it); a weight it reads from outside raises ``ValueError``.
    Usable as ``@function`` and as ``@function(precompile=True)``; on methods too.

    >>> from fusegrad import Tensor
    >>> from fusegrad.function import function
    >>> @function
    ... def axpy(a: Tensor, x: Tensor, y: Tensor) -> Tensor:
    ...     return a * x + y
    >>> axpy(Tensor([2.0]), Tensor([3.0]), Tensor([1.0])).item()
    7.0
    """

    def __init__(
        self,
        fxn: Callable[..., ReturnType] | None = None,
        *,
        precompile: bool = False,
        precompile_backward: bool = False,
        allow_implicit: bool = False,
        grad_fxn: Callable[..., Any] | None = None,
    ) -> None:
        if grad_fxn is not None:
            raise NotImplementedError("function: grad_fxn= (a custom gradient) is not supported")
        if precompile_backward:
            raise NotImplementedError(
                "function: precompile_backward=True is not supported (the backward graph "
                "is scheduled with the rest)"
            )
        self.fxn = fxn
        self.precompile, self.allow_implicit = precompile, allow_implicit
        self.traces: dict[Any, _Trace] = {}
        self.plans: dict[Any, Any] = {}  # signature -> the TinyJit running the body
        if fxn is not None:
            functools.update_wrapper(self, fxn)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fxn is None:  # @function(precompile=True): the function comes now
            if len(args) != 1 or kwargs or not callable(args[0]) or isinstance(args[0], Tensor):
                raise TypeError("function: made without fxn, so call it with the function")
            self.fxn = args[0]
            functools.update_wrapper(self, args[0])
            return self
        named: list[tuple[Any, Any]] = [*enumerate(args), *sorted(kwargs.items())]
        tensors = _tensor_arguments(named)
        key = (
            tuple((k, tuple(t.shape), t.dtype, t.device, bool(t.requires_grad))
                  for k, t in tensors),
            tuple((k, _layout(v)) for k, v in named if not isinstance(v, Tensor)),
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
        if self.precompile and outs:
            self._run_precompiled(key, trace, [t for _, t in tensors], outs)
        return rebuild_tensors(trace.ret, outs)

    def _run_precompiled(
        self, key: Any, trace: _Trace, inputs: list[Tensor], outs: list[Tensor]
    ) -> None:
        """Compute ``outs`` with the signature's captured plan (captured on its first call)."""
        from fusegrad.engine import REALIZED
        from fusegrad.jit import TinyJit

        jit = self.plans.get(key)
        if jit is None:
            holders = trace.holders

            def body(*xs: Tensor) -> list[Tensor]:
                swap = {h: x.uop for h, x in zip(holders, xs, strict=True)}
                results = [Tensor(u.substitute(swap)).contiguous() for u in trace.outs]
                Tensor.realize(*results)
                return results

            jit = self.plans[key] = TinyJit(body)
            jit.cnt = 1  # the first call captures: scheduled and compiled once, right away
        results = jit(*inputs)
        for o, r in zip(outs, results, strict=True):
            REALIZED[o.uop] = r.uop  # the value is computed; the graph stays for autograd

    def _trace(
        self, args: Sequence[Any], kwargs: dict[str, Any], tensors: list[tuple[Key, Tensor]]
    ) -> _Trace:
        holders = []
        swap: dict[Any, Any] = {}
        for k, t in tensors:
            buf = UOp.new_buffer(t.device, 1, t.dtype)
            shape = tuple(t.shape)
            holder = UOp(Ops.CONTIGUOUS, t.dtype, (buf.reshape((1,) * len(shape)).expand(shape),))
            h = Tensor(holder)
            h.requires_grad = t.requires_grad
            holders.append(holder)
            swap[k] = h
        arguments: list[tuple[Any, Any]] = [*enumerate(args), *kwargs.items()]
        for name, v in arguments:
            if isinstance(v, MultiTensor):  # its placeholder: a MultiTensor of shard holders
                shards = [swap.pop((name, i)) for i in range(len(v.shards))]
                swap[name] = MultiTensor(shards, v.axis)
        new_args = [swap.get(i, a) for i, a in enumerate(args)]
        new_kwargs = {k: swap.get(k, v) for k, v in kwargs.items()}
        before = UOp.unique().arg  # buffers numbered after this one were made by the body
        assert self.fxn is not None
        ret = self.fxn(*new_args, **new_kwargs)
        outs = flatten_tensors(ret)
        trace = _Trace(holders, ret, [t.uop for t in outs], [t.requires_grad for t in outs])
        if not self.allow_implicit:
            _check_implicit(trace, before, getattr(self.fxn, "__name__", "fxn"))
        return trace


def _check_implicit(trace: _Trace, before: int, name: str) -> None:
    """Raise when the traced graph reads a buffer that existed before the trace and is not
    an argument's placeholder."""
    holders = {u for h in trace.holders for u in h.toposort() if u.op is Ops.BUFFER}
    for u in UOp.sink(*trace.outs).toposort() if trace.outs else []:
        if u.op is not Ops.BUFFER or u in holders:
            continue
        number = u.src[0].arg
        if isinstance(number, int) and number <= before:
            raise ValueError(
                f"function: {name} reads a tensor that is not one of its arguments (a "
                f"{u.dtype.name} buffer of {u.arg} elements); pass it as an argument, or "
                "use function(..., allow_implicit=True)"
            )


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return v


__all__ = ["flatten_tensors", "function", "rebuild_tensors"]
