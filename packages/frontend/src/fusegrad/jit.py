"""TinyJit and ``function``: run a Python function's tensor work again without the Python.

``TinyJit(fxn)``: the first call runs ``fxn`` as usual (its kernels compile); the second
call runs it while recording every kernel the engine launches (the *capture*); from the
third call on ``fxn`` is not called: the recorded launches run again over the new call's
input buffers and Variable values, encoded into one HCQ queue and submitted once (*replay*).

What a replay substitutes:

* input buffers: those of the Tensor arguments (realized first; a view of a realized buffer,
  e.g. a slice with a bound Variable, is passed as the view over its buffer);
* bound Variables: those passed as arguments and those in the inputs' shapes;
* returned tensors get new buffers on every call (a result is never overwritten by the
  next call); a returned input (or view of one) follows the new input; everything else
  the kernels touch (weights, optimizer state, intermediates) stays the buffer it was at
  capture, and in-place updates (``assign``) happen again on every replay.

Python is not re-run: values computed in Python, tensors made from Python data, an
attribute rebound to a new tensor, and random numbers drawn inside (their key is fixed at
capture) keep their capture-time values. ``JitError`` reports what can be detected: a
changed input shape, dtype, device or view; a changed non-Tensor argument; the same buffer
passed twice; an input that aliases a buffer the captured kernels write; Tensors hidden
in containers; a function that realized nothing. ``JIT=0`` calls the function every time
(so does any executor other than the kernel pipeline, e.g. the tests' reference).

``prune=True`` drops launches whose results can't change between calls (they don't depend
on the inputs, the Variables, or state the function updates): they ran once at capture.
``optimize=True`` memory-plans the capture: buffers the captured kernels created for
intermediates (not inputs or outputs, and referenced by no live tensor once the capture
returns) are placed into one arena per device by lifetime, so intermediates that are never
alive at the same time share memory (``memory_plan`` reports the bytes before and after).

``function`` (defined in ``fusegrad.traced``, exported here too) traces ``fxn`` once per
input signature into a lazy tensor graph.
"""

from __future__ import annotations

import functools
import gc
import itertools
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from fusegrad.codegen import KernelGraph, get_kernel_graph
from fusegrad.codegen.schedule import plan_memory
from fusegrad.engine import (
    REALIZED,
    Executor,
    GlobalCounters,
    KernelExecutor,
    get_executor,
    runtime_buffer,
    set_executor,
)
from fusegrad.engine.launch import run_graph, submit_commands, timestamp_pair
from fusegrad.engine.programs import Kernel, get_kernel
from fusegrad.runtime import Buffer, Device, HWQueue
from fusegrad.tensor import Tensor
from fusegrad.tensor.core import ALL_TENSORS
from fusegrad.traced import flatten_tensors, function, rebuild_tensors
from fusegrad.uop import ContextVar, GroupOp, Ops, UOp, dtypes, prod

JIT = ContextVar("JIT", 1)
"""1: TinyJit captures and replays; 0: it calls the function every time."""

ReturnType = TypeVar("ReturnType")
Key = int | str
_BUFFER_OPS = (Ops.BUFFER, Ops.BUFFER_VIEW)


class JitError(RuntimeError):
    """A TinyJit call that can't be replayed correctly (the message says why and what to do)."""


# -- arguments --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Signature:
    """What must not change between calls: which arguments are Tensors, each one's view of
    its buffer (shape with Variables unbound), dtype and device, and every other argument."""

    names: tuple[Key, ...]
    tensors: tuple[tuple[Any, ...], ...]
    others: tuple[tuple[Key, Any], ...]


def _contains_tensor(x: Any) -> bool:
    if isinstance(x, Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_tensor(v) for v in x)
    if isinstance(x, dict):
        return any(_contains_tensor(v) for v in x.values())
    return False


def _unbind_all(u: UOp) -> tuple[UOp, dict[str, int]]:
    """``u`` with every bound Variable (also inside movement args) unbound, and their values."""
    values: dict[str, int] = {}
    mapping: dict[UOp, UOp] = {}
    for node in u.toposort():
        for a in _arg_uops(node.arg):
            for b in a.toposort():
                if b.is_bound_var:
                    var, val = b.unbind()
                    values[str(var.arg[0])] = int(val)
                    mapping[b] = var
    if not mapping:
        return u, values
    return _substitute_args(u, mapping), values


def _arg_uops(arg: Any) -> list[UOp]:
    if isinstance(arg, UOp):
        return [arg]
    if isinstance(arg, tuple):
        return [x for a in arg for x in _arg_uops(a)]
    return []


def _map_arg(arg: Any, mapping: dict[UOp, UOp]) -> Any:
    if isinstance(arg, UOp):
        return arg.substitute(mapping)
    if isinstance(arg, tuple):
        return tuple(_map_arg(a, mapping) for a in arg)
    return arg


def _substitute_args(u: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """``u`` with ``mapping`` applied to its nodes and to the UOps in movement args."""
    memo: dict[UOp, UOp] = {}
    for node in u.toposort():
        if node in mapping:
            memo[node] = mapping[node]
            continue
        src = tuple(memo[s] for s in node.src)
        arg = _map_arg(node.arg, mapping) if node.op in GroupOp.Movement else node.arg
        memo[node] = node.replace(src=src, arg=arg)
    return memo[u]


def _base_buffer(u: UOp) -> UOp | None:
    """The BUFFER under ``u`` when ``u`` is only movement ops over it."""
    while u.op in GroupOp.Movement:
        u = u.src[0]
    return u if u.op is Ops.BUFFER else None


_INPUTS: weakref.WeakKeyDictionary[UOp, tuple[UOp, tuple[Any, ...], dict[str, int]]] = (
    weakref.WeakKeyDictionary()
)


def _input(t: Tensor, name: Key) -> tuple[UOp, tuple[Any, ...], dict[str, int]]:
    """(buffer, view signature, Variable values) of Tensor argument ``t`` (realized);
    remembered per view (a tensor passed again costs a lookup)."""
    view = REALIZED.get(t.uop, t.uop)
    hit = _INPUTS.get(view)
    if hit is not None:
        return hit
    base = _base_buffer(view)
    if base is None:
        raise JitError(f"TinyJit: Tensor argument {name!r} did not realize into a buffer")
    holder = UOp(Ops.BUFFER, base.dtype, (UOp(Ops.UNIQUE, arg="jit input"), base.src[1]), base.arg)
    shaped, values = _unbind_all(_substitute_args(view, {base: holder}))
    out = _INPUTS[view] = (base, (shaped, t.dtype, t.device), values)
    return out


@dataclass
class _Call:
    """One call's arguments, digested."""

    signature: _Signature
    buffers: list[UOp]
    values: dict[str, int]


def _tensor_arguments(args: Sequence[Any]) -> _Call | None:
    """The common case of ``_arguments`` quickly: only Tensors, passed by position, each
    realized already (None: take the general path)."""
    buffers, specs, values = [], [], {}
    realized = REALIZED if len(REALIZED) else None
    for t in args:
        if type(t) is not Tensor:
            return None
        hit = _INPUTS.get(t.uop if realized is None else realized.get(t.uop, t.uop))
        if hit is None:
            return None
        buffers.append(hit[0])
        specs.append(hit[1])
        if hit[2]:
            values.update(hit[2])
    if len(set(buffers)) != len(buffers):
        return None  # the general path raises the error
    return _Call(_Signature(tuple(range(len(args))), tuple(specs), ()), buffers, values)


def _arguments(args: Sequence[Any], kwargs: dict[str, Any]) -> _Call:
    if not kwargs and (quick := _tensor_arguments(args)) is not None:
        return quick
    named: list[tuple[Key, Any]] = [*enumerate(args), *sorted(kwargs.items())]
    tensors = [(k, v) for k, v in named if isinstance(v, Tensor)]
    values: dict[str, int] = {}
    others: list[tuple[Key, Any]] = []
    for k, v in named:
        if isinstance(v, Tensor):
            continue
        if _contains_tensor(v):
            raise JitError(
                f"TinyJit: argument {k!r} holds Tensors inside a {type(v).__name__}; only "
                "Tensors passed directly as arguments are inputs (pass them one by one)"
            )
        if isinstance(v, UOp) and v.is_bound_var:
            var, val = v.unbind()
            values[str(var.arg[0])] = int(val)
            others.append((k, ("bound Variable", var)))
        else:
            others.append((k, v))
    pending = [t for _, t in tensors if _base_buffer(REALIZED.get(t.uop, t.uop)) is None]
    if pending:
        Tensor.realize(*pending)
    buffers, specs = [], []
    for k, t in tensors:
        buf, spec, vals = _input(t, k)
        buffers.append(buf)
        specs.append(spec)
        values.update(vals)
    if len(set(buffers)) != len(buffers):
        raise JitError(
            "TinyJit: two Tensor arguments are (views of) the same buffer; the captured "
            "kernels would alias them on every call (pass a .clone() of one)"
        )
    sig = _Signature(tuple(k for k, _ in tensors), tuple(specs), tuple(others))
    return _Call(sig, buffers, values)


def _same_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(a == b)
    except Exception:  # an == that doesn't give a truth value: compare identity
        return False


def _check_signature(expected: _Signature, got: _Signature) -> None:
    if (
        not expected.others
        and not got.others
        and expected.names == got.names
        and all(w is h for w, h in zip(expected.tensors, got.tensors, strict=True))
    ):
        return  # the same views (specs are remembered per view) and nothing else
    if expected.names != got.names:
        raise JitError(
            f"TinyJit: the Tensor arguments changed: captured with Tensors at {expected.names}, "
            f"called with Tensors at {got.names}"
        )
    for name, want, have in zip(expected.names, expected.tensors, got.tensors, strict=True):
        for what, w, h in zip(("dtype", "device"), want[1:], have[1:], strict=True):
            if w != h:
                raise JitError(
                    f"TinyJit: the {what} of Tensor argument {name!r} changed: captured with "
                    f"{w}, called with {h}"
                )
        if want[0] is not have[0]:
            raise JitError(
                f"TinyJit: the shape (or view) of Tensor argument {name!r} changed: captured "
                f"with {want[0].shape}, called with {have[0].shape} (Variables unbound); use "
                "a bound Variable for a size that changes, or another TinyJit"
            )
    if [k for k, _ in expected.others] != [k for k, _ in got.others]:
        raise JitError("TinyJit: the non-Tensor arguments changed (names or positions)")
    for (k, want), (_, have) in zip(expected.others, got.others, strict=True):
        if not _same_value(want, have):
            raise JitError(
                f"TinyJit: non-Tensor argument {k!r} changed from {want!r} to {have!r}; the "
                "captured kernels have the capture-time value baked in (pass a Tensor, or a "
                "bound Variable, for values that change)"
            )


# -- outputs ----------------------------------------------------------------------------------


def _output_view(t: Tensor) -> UOp:
    view = REALIZED.get(t.uop, t.uop)
    if _base_buffer(view) is None:
        raise JitError(f"TinyJit: output {t!r} was not realized into a buffer")
    return view


# -- capture ----------------------------------------------------------------------------------


def _whole_buffer(view: UOp, shape: tuple[Any, ...]) -> UOp | None:
    """``view`` as ``BUFFER.reshape(shape)`` when it is a whole BUFFER under reshapes."""
    base = view
    while base.op is Ops.RESHAPE:
        base = base.src[0]
    if base.op is not Ops.BUFFER or base.dtype != view.dtype:
        return None
    if tuple(view.shape) == shape and (view is base or view.src[0] is base):
        return view
    if not all(isinstance(s, int) for s in shape) or int(base.arg) != prod(shape):
        return None
    return base.reshape(shape)


class _Recorder:
    """An Executor that runs graphs like the kernel executor and records every call."""

    name = "kernels (capturing)"
    capturing = True  # index checks are not run while recording (tensor.checks.pending)

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.calls: list[UOp] = []
        self.allocated: set[UOp] = set()

    def _schedule(self, targets: Sequence[UOp]) -> list[UOp]:
        kg = get_kernel_graph(UOp.sink(*targets))
        self.calls.extend(kg.calls)
        self.allocated.update(kg.buffers)
        run_graph(kg)
        return [kg.becomes[t] for t in targets]

    def realize(self, targets: Sequence[UOp]) -> list[UOp]:
        """Buffer views of ``targets`` (recording the calls that computed them)."""
        out = []
        for t, view in zip(targets, self._schedule(targets), strict=True):
            whole = _whole_buffer(view, tuple(t.shape))
            if whole is None:
                (copied,) = self._schedule([UOp(Ops.CONTIGUOUS, view.dtype, (view,))])
                whole = _whole_buffer(copied, tuple(t.shape))
            if whole is None:
                raise JitError(f"TinyJit: the scheduler left {t!r} in {view!r}")
            out.append(whole)
        return out

    def read(self, buf: UOp) -> Any:
        """Contents of a buffer (through the wrapped executor)."""
        return self.inner.read(buf)


# -- the captured graph -----------------------------------------------------------------------


def _buffers(call: UOp) -> list[UOp]:
    return [s for s in call.src[1:] if s.op in _BUFFER_OPS]


def _root(b: UOp) -> UOp:
    while b.op is Ops.BUFFER_VIEW:
        b = b.src[0]
    return b


def _access(call: UOp, kernel: Kernel | None) -> tuple[set[UOp], set[UOp]]:
    """(buffers read, buffers written) by a call, as whole buffers (arena views: the arena)."""
    bufs = [_root(b) for b in _buffers(call)]
    if kernel is None:  # a copy: dst <- src
        return {bufs[1]}, {bufs[0]}
    return {bufs[i] for i in kernel.spec.ins}, {bufs[i] for i in kernel.spec.outs}


def _prune(calls: list[UOp], kernels: list[Kernel | None], dynamic: set[UOp],
           allocated: set[UOp]) -> list[int]:  # fmt: skip
    """Indices of the calls that must run again on every replay: those that use Variables,
    write state from outside the capture, write a buffer several calls write, or read
    something such a call writes or the inputs (``dynamic``); the rest ran at capture."""
    access = [_access(c, k) for c, k in zip(calls, kernels, strict=True)]
    writers: dict[UOp, int] = {}
    for _, writes in access:
        for b in writes:
            writers[b] = writers.get(b, 0) + 1
    keep = {
        i
        for i, (c, (_, writes)) in enumerate(zip(calls, access, strict=True))
        if any(s.is_bound_var for s in c.src[1:])
        or any(b not in allocated or writers[b] > 1 or b in dynamic for b in writes)
    }
    dyn = set(dynamic)
    changed = True
    while changed:
        for i in keep:
            dyn |= access[i][1]
        grown = {i for i, (reads, _) in enumerate(access) if reads & dyn} | keep
        changed, keep = grown != keep, grown
    return sorted(keep)


_ARENAS = itertools.count()


def _kernel_of(call: UOp) -> Kernel | None:
    """The loaded kernel of a captured call (None for a copy)."""
    if call.src[0].op is Ops.COPY:
        return None
    return get_kernel(call.src[0], Device[str(_root(_buffers(call)[0]).src[1].arg)])


def _swap_buffers(call: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """``call`` with its buffers (and the roots of its buffer views) replaced per ``mapping``."""

    def swap(b: UOp) -> UOp:
        if b.op is Ops.BUFFER_VIEW:
            return b.replace(src=(swap(b.src[0]),))
        return mapping.get(b, b)

    return call.replace(src=(call.src[0], *(swap(s) for s in call.src[1:])))


def _candidates(recorder: _Recorder, keep: set[UOp]) -> list[UOp]:
    """Buffers the capture created whose first use in the calls is a write (no value flows
    into a replay through them), except ``keep``."""
    seen: set[UOp] = set()
    out: list[UOp] = []
    for c in recorder.calls:
        reads, writes = _access(c, _kernel_of(c))
        fresh = writes - seen - keep
        out.extend(b for b in fresh if b in recorder.allocated and b not in reads)
        seen |= reads | writes
    return out


def _fresh_arenas(views: dict[UOp, UOp]) -> dict[UOp, UOp]:
    """``views`` over arenas of their own (the planner's arena names are reused by every
    schedule; a capture's arena must not be another graph's)."""
    arenas: dict[UOp, UOp] = {}
    for v in views.values():
        a = v.src[0]
        if a not in arenas:
            unique = UOp(Ops.UNIQUE, arg=("jit arena", next(_ARENAS)))
            arenas[a] = UOp(Ops.BUFFER, a.dtype, (unique, a.src[1]), a.arg)
    return {h: v.replace(src=(arenas[v.src[0]],)) for h, v in views.items()}


def _memory_plan(recorder: _Recorder, keep: set[UOp]) -> tuple[int, int]:
    """Place the capture's dead intermediates into arenas (rewrites the recorded calls);
    returns (their bytes unshared, the arenas' bytes)."""
    cands = _candidates(recorder, keep)
    holders = {b: UOp.new_buffer(b.src[1].arg, int(b.arg), b.dtype) for b in cands}
    pairs = [(weakref.ref(b), h) for b, h in holders.items()]
    recorder.calls = [_swap_buffers(c, holders) for c in recorder.calls]
    recorder.allocated -= holders.keys()
    del cands, holders
    gc.collect()  # only buffers a live tensor (or other live state) holds survive this
    back = {h: b for ref, h in pairs if (b := ref()) is not None}
    planned = {h for _, h in pairs if h not in back}
    uses = [{_root(b) for b in _buffers(c)} for c in recorder.calls]
    plan = plan_memory(uses, planned)
    mapping = {**back, **_fresh_arenas(plan.views)}
    recorder.calls = [_swap_buffers(c, mapping) for c in recorder.calls]
    recorder.allocated |= set(back.values()) | {_root(v) for v in mapping.values()}
    return plan.planned_bytes, plan.arena_bytes


@dataclass
class _Launch:
    """A captured kernel launch with its buffer slots resolved for replay."""

    kernel: Kernel
    handles: list[Any]  # fixed buffer handles (None where the call's buffer is substituted)
    slots: list[tuple[int, int]]  # (param position, index into the per-call handles)
    values: dict[str, int]  # capture-time Variable values of this launch
    fixed: Any = None  # (program, global size, local size) of a launch without Variables


@dataclass
class _Plan:
    """A captured function, ready to replay."""

    inputs: list[UOp]  # the capture's input buffers (slot order)
    outputs: list[UOp]  # buffers of returned tensors the capture created (new per call)
    views: list[UOp]  # the returned tensors' views over the capture's buffers
    written: set[UOp]  # buffers the kernels write
    values: dict[str, int]  # capture-time Variable values
    calls: list[UOp]  # the calls replayed (fallback path)
    device: str | None = None  # the fast path's device (None: the fallback replays calls)
    launches: list[_Launch] = field(default_factory=list)
    commands: list[Any] = field(default_factory=list)  # prebuilt (None: rebuilt per call)
    dynamic: list[int] = field(default_factory=list)  # launches rebuilt per call
    keep: list[Buffer] = field(default_factory=list)  # fixed runtime buffers (kept alive)
    work: tuple[int, int] = (0, 0)  # ALU ops and memory bytes of the fixed launches


def _bound_values(call: UOp) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in call.src[1:]:
        if s.op is Ops.AFTER and s.is_bound_var:
            var, val = s.unbind()
            out[str(var.arg[0])] = int(val)
    return out


def _make_plan(
    recorder: _Recorder, inputs: list[UOp], views: list[UOp], values: dict[str, int], prune: bool
) -> _Plan:
    out_bufs = [_base_buffer(v) for v in views]
    outputs = list(dict.fromkeys(b for b in out_bufs if b in recorder.allocated))
    calls = recorder.calls
    devices = {str(_root(_buffers(c)[0]).src[1].arg) for c in calls}
    is_copy = [c.src[0].op is Ops.COPY for c in calls]
    fast = len(devices) == 1 and not any(is_copy)
    device = Device[next(iter(devices))] if fast else None
    kernels = [None if cp or device is None else get_kernel(c.src[0], device)
               for c, cp in zip(calls, is_copy, strict=True)]  # fmt: skip
    if prune:
        kept = _prune(calls, kernels, {*inputs, *outputs}, recorder.allocated)
        calls, kernels = [calls[i] for i in kept], [kernels[i] for i in kept]
    written = {w for c, k in zip(calls, kernels, strict=True) for w in _access(c, k)[1]}
    all_values = {**{k: v for c in calls for k, v in _bound_values(c).items()}, **values}
    plan = _Plan(list(inputs), outputs, views, written, all_values, calls)
    if device is not None:
        _prepare_fast(plan, device.device, [k for k in kernels if k is not None])
    return plan


def _prepare_fast(plan: _Plan, device: str, kernels: list[Kernel]) -> None:
    """Resolve every launch's buffers; prebuild the commands of launches that never change."""
    slot_of = {b: i for i, b in enumerate([*plan.inputs, *plan.outputs])}
    ops = mem = 0
    for call, kernel in zip(plan.calls, kernels, strict=True):
        launch = _Launch(kernel, [], [], _bound_values(call))
        if not kernel.var_names:
            gs, ls = kernel.launch({})
            launch.fixed = (kernel.program, tuple(gs), None if ls is None else tuple(ls))
        for pos, b in enumerate(_buffers(call)):
            if b in slot_of:
                launch.handles.append(None)
                launch.slots.append((pos, slot_of[b]))
            else:
                rb = runtime_buffer(b)
                plan.keep.append(rb)
                launch.handles.append(rb.opaque)
        fixed = not launch.slots and not kernel.var_names
        plan.commands.append(_command(launch, {}) if fixed else None)
        if not fixed:
            plan.dynamic.append(len(plan.launches))
        if kernel.fixed is not None:
            ops, mem = ops + kernel.fixed[2], mem + kernel.fixed[3]
        plan.launches.append(launch)
    plan.device, plan.work = device, (ops, mem)


def _command(launch: _Launch, values: dict[str, int], handles: Sequence[Any] = ()) -> Any:
    """The exec command of ``launch`` over the per-call ``handles`` and Variable ``values``."""
    bufs = list(launch.handles)
    for pos, k in launch.slots:
        bufs[pos] = handles[k]
    kernel = launch.kernel
    vals = {n: values.get(n, launch.values.get(n, 0)) for n in kernel.var_names}
    gs, ls = kernel.launch(vals)
    q = HWQueue().exec(kernel.program, bufs, [vals[n] for n in kernel.var_names], gs, ls)
    return q.commands[0]


#: the runtime's exec command class (built directly on replays: no queue per launch)
_EXEC_CMD: Any = type(HWQueue().exec(None, ()).commands[0])


def _slot_command(launch: _Launch, handles: Sequence[Any]) -> Any:
    """The exec command of a launch without Variables over the per-call ``handles``."""
    bufs = list(launch.handles)
    for pos, k in launch.slots:
        bufs[pos] = handles[k]
    program, gs, ls = launch.fixed
    return _EXEC_CMD(program, tuple(bufs), (), gs, ls)


def _replay_fast(plan: _Plan, runtime: list[Buffer], values: dict[str, int]) -> None:
    """One queue with every launch, submitted once."""
    assert plan.device is not None
    handles = [r.opaque for r in runtime]
    start, end = timestamp_pair()
    head, tail = HWQueue().timestamp(start).timestamp(end).commands
    commands = [head, *plan.commands, tail]  # the launches at 1..n, between the timestamps
    ops, mem = plan.work
    for i in plan.dynamic:
        launch = plan.launches[i]
        kernel = launch.kernel
        if not kernel.var_names:
            commands[i + 1] = _slot_command(launch, handles)
            continue
        commands[i + 1] = _command(launch, values, handles)
        if kernel.fixed is None:
            o, m = kernel.work({n: values.get(n, 0) for n in kernel.var_names})
            ops, mem = ops + o, mem + m
    # the flight keeps the two lists (and so their buffers) alive: no per-call copy of them
    submit_commands(plan.device, commands, [plan.keep, runtime], [(start, end)])
    GlobalCounters.kernel_count += len(plan.launches)
    GlobalCounters.global_ops += ops
    GlobalCounters.global_mem += mem


def _replay_calls(plan: _Plan, mapping: dict[UOp, UOp], values: dict[str, int]) -> None:
    """The general path (copies, several devices): the calls rebuilt over the new buffers."""
    subst = dict(mapping)
    for c in plan.calls:
        for s in c.src[1:]:
            if s.op is Ops.AFTER and s.is_bound_var:
                var, _ = s.unbind()
                subst[s] = var.bind(values[str(var.arg[0])])
    calls = tuple(c.replace(src=tuple(subst.get(s, s) for s in c.src)) for c in plan.calls)
    linear = UOp(Ops.LINEAR, dtypes.void, calls)
    run_graph(KernelGraph(linear, {}, (), {}, 0, 0))


# -- TinyJit ----------------------------------------------------------------------------------


class TinyJit(Generic[ReturnType]):
    """Capture the kernels ``fxn`` runs (on its second call) and replay them after.

    >>> from fusegrad import Tensor, TinyJit
    >>> @TinyJit
    ... def double(x: Tensor) -> Tensor:
    ...     return (x * 2).realize()
    >>> [double(Tensor([float(i)])).item() for i in range(4)]
    [0.0, 2.0, 4.0, 6.0]
    """

    def __init__(
        self, fxn: Callable[..., ReturnType] | None, prune: bool = False, optimize: bool = False
    ) -> None:
        self.fxn = fxn
        self.prune, self.optimize = prune, optimize
        self.cnt = 0
        self.plan: _Plan | None = None
        self.signature: _Signature | None = None
        self.ret: Any = None
        self.memory_plan: tuple[int, int] = (0, 0)
        """With ``optimize``: (bytes of the planned intermediates unshared, bytes of their
        arenas) of the capture."""
        if fxn is not None:
            functools.update_wrapper(self, fxn)

    def reset(self) -> None:
        """Forget the capture: the next two calls run the function again."""
        self.cnt, self.plan, self.signature, self.ret = 0, None, None, None

    @property
    def captured(self) -> bool:
        """True once a capture exists (calls replay it)."""
        return self.plan is not None

    @property
    def kernel_count(self) -> int:
        """Launches in one replay (0 before the capture)."""
        return 0 if self.plan is None else len(self.plan.calls)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> ReturnType:
        if self.fxn is None:
            raise JitError("TinyJit: no function to run (it was made with fxn=None)")
        if not JIT.value or not isinstance(get_executor(), KernelExecutor):
            return self.fxn(*args, **kwargs)
        call = _arguments(args, kwargs)
        if self.plan is not None:
            assert self.signature is not None
            _check_signature(self.signature, call.signature)
            return self._replay(call)
        if self.cnt == 0:
            self.cnt = 1
            ret = self.fxn(*args, **kwargs)
            if outs := flatten_tensors(ret):
                Tensor.realize(*outs)
            return ret
        return self._capture(args, kwargs, call)

    def _capture(self, args: Sequence[Any], kwargs: dict[str, Any], call: _Call) -> ReturnType:
        assert self.fxn is not None
        recorder = _Recorder(get_executor())
        previous = set_executor(recorder)
        try:
            ret = self.fxn(*args, **kwargs)
            if outs := flatten_tensors(ret):
                Tensor.realize(*outs)
        finally:
            set_executor(previous)
        if not recorder.calls:
            raise JitError(
                "TinyJit: the function realized nothing (no kernel ran during the capture); "
                "return the tensors it computes, or realize them inside it"
            )
        views = [_output_view(t) for t in outs]
        if self.optimize:
            keep = {*call.buffers, *(b for v in views if (b := _base_buffer(v)) is not None)}
            self.memory_plan = _memory_plan(recorder, keep)
        self.plan = _make_plan(recorder, call.buffers, views, call.values, self.prune)
        self.signature, self.ret, self.cnt = call.signature, ret, 2
        return ret

    def _replay(self, call: _Call) -> ReturnType:
        plan = self.plan
        assert plan is not None
        for i, b in enumerate(call.buffers):
            if b in plan.written and b not in plan.inputs:
                raise JitError(
                    f"TinyJit: Tensor argument {call.signature.names[i]!r} aliases a buffer the "
                    "captured kernels write (an intermediate or state tensor from the capture); "
                    "pass a .clone()"
                )
        fresh = [UOp.new_buffer(b.src[1].arg, int(b.arg), b.dtype) for b in plan.outputs]
        values = {**plan.values, **call.values}
        mapping = dict(zip(plan.inputs, call.buffers, strict=True))
        mapping.update(zip(plan.outputs, fresh, strict=True))
        if plan.device is not None:
            _replay_fast(plan, [runtime_buffer(b) for b in (*call.buffers, *fresh)], values)
        else:
            _replay_calls(plan, mapping, values)
        for var, val in call.values.items():
            mapping.update(_rebind(plan.views, var, val))
        tensors = [_result(_rebase(v, mapping)) for v in plan.views]
        out: ReturnType = rebuild_tensors(self.ret, tensors)
        return out


def _result(view: UOp) -> Tensor:
    """A returned Tensor over a buffer view: what ``Tensor(view)`` makes (a leaf without
    grad), without the constructor's checks of arbitrary data."""
    out = Tensor.__new__(Tensor)
    out.uop, out.grad, out._leaf, out._requires_grad = view, None, True, None
    ALL_TENSORS[id(out)] = out
    return out


def _rebase(view: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """``view`` over the buffers ``mapping`` gives (the common whole-buffer views directly)."""
    if view.op is Ops.BUFFER:
        return mapping.get(view, view)
    if view.op is Ops.RESHAPE and view.src[0].op is Ops.BUFFER and not _arg_uops(view.arg):
        base = mapping.get(view.src[0], view.src[0])
        return view if base is view.src[0] else view.replace(src=(base,))
    return _substitute_args(view, mapping)


def _rebind(views: list[UOp], name: str, value: int) -> dict[UOp, UOp]:
    """Bound Variables called ``name`` in ``views`` (also in movement args) -> bound to
    ``value``."""
    out: dict[UOp, UOp] = {}
    for v in views:
        for node in v.toposort():
            for a in _arg_uops(node.arg):
                for b in a.toposort():
                    if b.is_bound_var and str(b.unbind()[0].arg[0]) == name:
                        out[b] = b.unbind()[0].bind(value)
    return out


__all__ = ["JIT", "JitError", "TinyJit", "function"]
