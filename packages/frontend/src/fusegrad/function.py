"""``function``: a Python function over Tensors traced once per input signature.

``function(fxn)`` traces ``fxn`` over placeholder inputs into a tensor graph; later calls
with the same signature substitute their inputs into that graph and return lazy tensors
(nothing realized: composable with other work and differentiable). ``grad_fxn=`` gives the
body a custom gradient; ``precompile_backward=True`` runs the body's backward as one
precompiled call. Also the Tensor-level function bodies ``Tensor.as_param``/``call``/
``callify`` use (parameter placeholders and their substitution), and the helpers TinyJit
shares for walking the Tensors in arguments and results.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fusegrad.tensor import Tensor
from fusegrad.tensor.autograd import CustomGradient, with_gradient
from fusegrad.tensor.core import ALL_TENSORS
from fusegrad.tensor.multi import MultiTensor
from fusegrad.uop import DType, Ops, UOp, dtypes, sint

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


# -- parameter placeholders ---------------------------------------------------------------------


def placeholder(dtype: DType, shape: tuple[sint, ...], device: str) -> UOp:
    """A fresh stand-in for an input of ``shape``: one element of a new buffer broadcast
    and copied (a graph the scheduler can take, substituted away before it runs)."""
    buf = UOp.new_buffer(device, 1, dtype)
    return UOp(Ops.CONTIGUOUS, dtype, (buf.reshape((1,) * len(shape)).expand(shape),))


_PARAMS: dict[tuple[int, DType, tuple[sint, ...], str], UOp] = {}
_SLOTS: dict[UOp, int] = {}


def param(slot: int, dtype: DType, shape: tuple[sint, ...], device: str) -> UOp:
    """Parameter ``slot`` of a Tensor-level function body (``Tensor.as_param``): one node per
    (slot, dtype, shape, device), like tinygrad's hash-consed PARAM, so equal bodies built
    twice are one graph."""
    if isinstance(slot, bool) or not isinstance(slot, int) or slot < 0:
        raise ValueError(f"as_param: slot must be an int >= 0, got {slot!r}")
    key = (slot, dtype, tuple(shape), device)
    found = _PARAMS.get(key)
    if found is None:
        found = _PARAMS[key] = placeholder(dtype, tuple(shape), device)
        _SLOTS[found] = slot
    return found


def param_slot(u: UOp) -> int | None:
    """The slot of a parameter node (None: not one)."""
    return _SLOTS.get(u) if u.op is Ops.CONTIGUOUS else None


def add_to_ctx(ctx: list[UOp], x: UOp) -> UOp:
    """Make ``x`` (a tensor-level UOp: a buffer or a graph the body reads) an input of the
    function body being built: appended to ``ctx`` (the call's arguments in parameter order)
    unless it is there already, and the placeholder standing for it in the body returned
    (parameter slot = its index in ``ctx``). A body built with it is applied back by
    ``Tensor.call`` with ``ctx`` as arguments, as ``callify`` does for the buffers it reads.

    >>> from fusegrad import Tensor
    >>> a, b = Tensor([1.0, 2.0]), Tensor([3.0, 4.0])
    >>> ctx: list = []
    >>> pa, pb = Tensor(add_to_ctx(ctx, a.uop)), Tensor(add_to_ctx(ctx, b.uop))
    >>> body = pa * pb + Tensor(add_to_ctx(ctx, a.uop))  # a again: the same parameter
    >>> len(ctx), Tensor(ctx[0]).call(Tensor(ctx[1]), fxn=body).tolist()
    (2, [4.0, 10.0])
    """
    if not isinstance(x, UOp):
        raise TypeError(f"add_to_ctx: x must be a UOp, got {type(x).__name__}")
    if x.device is None:
        raise ValueError(f"add_to_ctx: {x.op!r} is not a tensor-level node (it has no device)")
    slot = next((i for i, u in enumerate(ctx) if u is x), None)
    if slot is None:
        slot = len(ctx)
        ctx.append(x)
    return param(slot, x.dtype, tuple(x.shape), str(x.device))


def params_of(body: UOp) -> dict[int, UOp]:
    """The parameters a body reads, by slot."""
    found: dict[int, UOp] = {}
    for u in body.toposort():
        slot = param_slot(u)
        if slot is not None:
            if slot in found:
                raise ValueError(
                    f"call: the body has two parameters in slot {slot} "
                    f"({found[slot].dtype!r} {found[slot].shape}, {u.dtype!r} {u.shape})"
                )
            found[slot] = u
    return found


def apply_body(body: UOp, args: Sequence[Tensor]) -> UOp:
    """``body`` with parameter ``i`` replaced by ``args[i]`` (shape, dtype and device must
    match; ``Tensor.call``)."""
    slots = params_of(body)
    mapping: dict[UOp, UOp] = {}
    for slot, holder in sorted(slots.items()):
        if slot >= len(args):
            raise ValueError(f"call: the body reads parameter {slot}, given {len(args)} tensors")
        arg = args[slot]
        if not isinstance(arg, Tensor):
            raise TypeError(f"call: argument {slot} must be a Tensor, got {type(arg).__name__}")
        want = (tuple(holder.shape), holder.dtype, str(holder.device))
        have = (tuple(arg.shape), arg.dtype, arg.device)
        if want != have:
            raise ValueError(
                f"call: parameter {slot} is {want[1]!r} {want[0]} on {want[2]}, "
                f"argument {slot} is {have[1]!r} {have[0]} on {have[2]}"
            )
        mapping[holder] = arg.uop
    return body.substitute(mapping) if mapping else body


def _user_gradient(grad_fxn: Callable[..., Any], name: str, explicit: int) -> CustomGradient:
    """A CustomGradient calling ``grad_fxn(grad, *args)`` with Tensors: one gradient (Tensor
    or None) per Tensor argument; inputs past ``explicit`` get none."""

    def rule(
        grad: UOp, value: UOp, inputs: tuple[UOp, ...], wanted: tuple[bool, ...]
    ) -> list[UOp | None]:
        got = grad_fxn(Tensor(grad), *(Tensor(x) for x in inputs[:explicit]))
        grads = [got] if isinstance(got, Tensor) or got is None else list(got)
        if len(grads) != explicit:
            raise ValueError(
                f"{name}: grad_fxn returned {len(grads)} gradients for {explicit} Tensor arguments"
            )
        for i, g in enumerate(grads):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"{name}: gradient {i} must be a Tensor or None, got {g!r}")
        out: list[UOp | None] = [None if g is None else g.uop for g in grads]
        return out + [None] * (len(inputs) - explicit)

    return CustomGradient(rule, name)


_CALL_GRADIENTS: weakref.WeakKeyDictionary[Any, dict[int, CustomGradient]] = (
    weakref.WeakKeyDictionary()
)


def call_gradient(grad_fxn: Callable[..., Any], count: int) -> CustomGradient:
    """The CustomGradient of ``Tensor.call(..., grad_fxn=grad_fxn)`` over ``count`` tensors,
    made once per function (the schedule cache sees the same node arg every call)."""
    try:
        per_count = _CALL_GRADIENTS.setdefault(grad_fxn, {})
    except TypeError:  # not weak-referenceable: a fresh rule each call
        return _user_gradient(grad_fxn, "call", count)
    rule = per_count.get(count)
    if rule is None:
        rule = per_count[count] = _user_gradient(grad_fxn, "call", count)
    return rule


# -- function ------------------------------------------------------------------------------------


@dataclass
class _Trace:
    holders: list[UOp]
    ret: Any
    outs: list[UOp]
    grads: list[bool | None]
    implicit: list[UOp] = field(default_factory=list)
    """Float tensors the body reads from outside its arguments: inputs of its backward."""
    gradients: list[CustomGradient | None] = field(default_factory=list)
    """Per output: the custom gradient (grad_fxn / the precompiled backward), or None."""


class function(Generic[ReturnType]):
    """Trace ``fxn`` once per input signature into a graph over placeholder inputs; later
    calls substitute their inputs into it and return lazy tensors (the Python in ``fxn``
    runs once per signature; it must not realize or read its inputs).

    ``precompile=True``: the body is also scheduled and compiled once per signature (a
    TinyJit capture of it) and every call runs it as one launch over its (realized) inputs;
    the results carry their computed values and still their graphs (differentiable).
    ``allow_implicit=False`` (tinygrad's default): the body may read only tensors passed as
    arguments (or made inside it), or tensors marked ``is_param_()``; another weight it reads
    from outside raises ``ValueError``.
    ``grad_fxn(grad, *args)``: the body's gradient, given the gradient of its (one) output and
    its Tensor arguments (a MultiTensor's shards one by one), returns one gradient (Tensor or
    None) per Tensor argument; autograd
    uses it instead of differentiating the body (tensors the body reads from outside get no
    gradient through it).
    ``precompile_backward=True``: the backward of each output (the gradients of all its
    inputs, those read from outside included, given the output's gradient; ``grad_fxn``'s
    when given) is itself a ``function(precompile=True)``: traced and compiled once per
    signature, run as one launch when ``backward()`` reaches the output.
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
        if grad_fxn is not None and not callable(grad_fxn):
            raise TypeError(f"function: grad_fxn must be callable, got {grad_fxn!r}")
        self.fxn = fxn
        self.precompile, self.allow_implicit = precompile, allow_implicit
        self.precompile_backward, self.grad_fxn = precompile_backward, grad_fxn
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
        if any(trace.gradients):
            inputs = [*(t.uop for _, t in tensors), *trace.implicit]
            for o, rule in zip(outs, trace.gradients, strict=True):
                if rule is not None:
                    o.uop = with_gradient(o.uop, inputs, rule)
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
            holder = placeholder(t.dtype, tuple(t.shape), t.device)
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
        name = getattr(self.fxn, "__name__", "fxn")
        marked = _marked_params(trace)
        if not self.allow_implicit:
            _check_implicit(trace, before, name, marked)
        if self.grad_fxn is not None or self.precompile_backward:
            self._gradients(trace, name)
        return trace

    def _gradients(self, trace: _Trace, name: str) -> None:
        """Fill ``trace.gradients``: the rule autograd uses for each float output."""
        floats = [dtypes.is_float(u.dtype) for u in trace.outs]
        if self.grad_fxn is not None:
            if len(trace.outs) != 1:
                raise ValueError(
                    f"function: grad_fxn needs {name} to return one Tensor, it returned "
                    f"{len(trace.outs)}"
                )
            explicit = len(trace.holders)
            rule = _user_gradient(self.grad_fxn, name, explicit)
            if self.precompile_backward:
                rule = _precompiled(rule, name)
            trace.gradients = [rule if floats[0] else None]
            return
        trace.implicit = _implicit_floats(trace)
        trace.gradients = [
            _precompiled(_vjp_rule(trace, i, name), name) if is_float else None
            for i, is_float in enumerate(floats)
        ]


def _outside(trace: _Trace) -> list[UOp]:
    """The nodes of the traced graph that don't depend on an argument's placeholder."""
    if not trace.outs:
        return []
    holders = set(trace.holders)
    inside: set[UOp] = set()
    order = UOp.sink(*trace.outs).toposort()
    for u in order:
        if u in holders or any(s in inside for s in u.src):
            inside.add(u)
    return [u for u in order if u not in inside]


def _implicit_floats(trace: _Trace) -> list[UOp]:
    """Live float tensors (not ``requires_grad=False``) the body reads from outside its
    arguments: their gradients flow through the precompiled backward as extra inputs."""
    outside = set(_outside(trace))
    found: dict[UOp, None] = {}
    for t in list(ALL_TENSORS.values()):
        u = t.uop
        if u in outside and t.requires_grad is not False and dtypes.is_float(t.dtype):
            found[u] = None
    return list(found)


def _marked_params(trace: _Trace) -> set[UOp]:
    """Buffers of tensors marked ``is_param_()`` that the body reads (allowed implicitly)."""
    marked = {t.uop for t in list(ALL_TENSORS.values()) if getattr(t, "is_param", False)}
    outside = [u for u in _outside(trace) if u in marked]
    return {n for u in outside for n in u.toposort() if n.op is Ops.BUFFER}


def _vjp_rule(trace: _Trace, index: int, name: str) -> CustomGradient:
    """The gradient rule of output ``index``: the vector-Jacobian product of the body w.r.t.
    every input (arguments and implicit floats), each input a leaf of its own; None for the
    inputs whose gradient backward doesn't use."""
    leaves = [*trace.holders, *trace.implicit]

    def rule(
        grad: UOp, value: UOp, inputs: tuple[UOp, ...], wanted: tuple[bool, ...]
    ) -> list[UOp | None]:
        xs = [Tensor(u) for u in inputs]
        mapping = {leaf: x.uop for leaf, x in zip(leaves, xs, strict=True)}
        out = Tensor(trace.outs[index].substitute(mapping))
        targets = [x for x, w in zip(xs, wanted, strict=True) if w]
        found = iter(out.gradient(*targets, gradient=Tensor(grad)) if targets else [])
        return [next(found).uop if w else None for w in wanted]

    return CustomGradient(rule, f"{name} backward")


def _precompiled(rule: CustomGradient, name: str) -> CustomGradient:
    """``rule`` run as a ``function(precompile=True)`` of (grad, *inputs): traced and compiled
    once per signature (which gradients are wanted is part of it), one launch per backward."""

    def backward(grad: Tensor, *xs: Tensor, wanted: tuple[bool, ...]) -> list[Tensor | None]:
        # the rules here read only grad, inputs and wanted: grad stands in for the value
        got = rule.rule(grad.uop, grad.uop, tuple(x.uop for x in xs), wanted)
        return [None if g is None else Tensor(g) for g in got]

    compiled: function[list[Tensor | None]] = function(
        backward, precompile=True, allow_implicit=True
    )

    def run(
        grad: UOp, value: UOp, inputs: tuple[UOp, ...], wanted: tuple[bool, ...]
    ) -> list[UOp | None]:
        got = compiled(Tensor(grad), *(Tensor(x) for x in inputs), wanted=wanted)
        return [None if g is None else g.uop for g in got]

    return CustomGradient(run, rule.name)


def _check_implicit(trace: _Trace, before: int, name: str, allowed: set[UOp]) -> None:
    """Raise when the traced graph reads a buffer that existed before the trace and is not
    an argument's placeholder (or a marked parameter's)."""
    holders = {u for h in trace.holders for u in h.toposort() if u.op is Ops.BUFFER} | allowed
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


__all__ = [
    "add_to_ctx",
    "apply_body",
    "call_gradient",
    "flatten_tensors",
    "function",
    "param",
    "param_slot",
    "params_of",
    "placeholder",
    "rebuild_tensors",
]
