"""TinyJit: run a Python function's tensor work again without the Python.

``TinyJit(fxn)``: the first call runs ``fxn`` as usual (its kernels compile); the second
call runs it while recording every launch plan the engine runs (the *capture*) and joins
them into one ``LaunchPlan``; from the third call on ``fxn`` is not called: the joined plan
is launched over the new call's input buffers and Variable values (*replay*: one HCQ
submission on one device). TinyJit is policy over plans: what becomes a per-call slot,
what stays fixed, what may share memory, and what a call may pass.

What a replay substitutes:

* input buffers: those of the Tensor arguments (realized first; a view of a realized buffer,
  e.g. a slice with a bound Variable, is passed as the view over its buffer; a MultiTensor
  passes each shard);
* bound Variables: those passed as arguments and those in the inputs' shapes;
* returned tensors get new buffers on every call (a result is never overwritten by the
  next call, so it may be passed back in: ``x = step(x)``); a returned input (or view of
  one) follows the new input; everything else the kernels touch (weights, optimizer state,
  intermediates) stays the buffer it was at capture, and in-place updates (``assign``)
  happen again on every replay.

Python is not re-run: values computed in Python, tensors made from Python data, an
attribute rebound to a new tensor, and random numbers drawn inside (their key is fixed at
capture) keep their capture-time values. ``JitError`` reports what can be detected: a
changed input shape, dtype, device or view; a changed non-Tensor argument; the same buffer
passed twice; an input that aliases a buffer the captured kernels write (naming it);
Tensors hidden in containers; a function that realized nothing; reading a tensor computed
inside the capture on the host (``.item()``, ``.tolist()``, ``.numpy()``: its capture-time
value would be baked in). Index tensors are checked on every replay: an out-of-range value
raises ``IndexError`` as without the JIT. ``JIT=0`` calls the function every time (so does
any executor other than the kernel pipeline, e.g. the tests' reference).

``prune=True`` drops launches whose results can't change between calls (they don't depend
on the inputs, the Variables, or state the function updates): they ran once at capture.
``optimize=True`` memory-plans the capture: buffers the captured plans created for
intermediates (not inputs or outputs, and referenced by nothing once the capture returns)
are placed into one arena per device by lifetime, so intermediates that are never alive at
the same time share memory (``memory_plan`` reports the bytes before and after);
``NO_MEMORY_PLANNER=1`` (tinygrad's switch) turns that off.

``TinyJit(captured=CapturedJit(ret, linear, names, input_info))`` replays a LINEAR of CALLs
built elsewhere (tinygrad's constructor), or another TinyJit's ``captured_plan``.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from fusegrad.codegen.schedule import plan_memory
from fusegrad.engine import REALIZED, KernelExecutor, get_executor, set_executor
from fusegrad.engine.plan import (
    RECORDERS,
    LaunchPlan,
    PlanJoiner,
    bound_values,
    calls_plan,
    run_plan,
)
from fusegrad.function import flatten_tensors, function, rebuild_tensors
from fusegrad.runtime import Buffer
from fusegrad.tensor import Tensor
from fusegrad.tensor.core import ALL_TENSORS
from fusegrad.tensor.multi import MultiTensor
from fusegrad.uop import ContextVar, GroupOp, Ops, UOp, dtypes

JIT = ContextVar("JIT", 1)
"""1: TinyJit captures and replays; 0: it calls the function every time."""
NO_MEMORY_PLANNER = ContextVar("NO_MEMORY_PLANNER", 0)
"""1: ``TinyJit(optimize=True)`` captures without memory-planning the intermediates."""

ReturnType = TypeVar("ReturnType")
Key = int | str


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
    if isinstance(x, (Tensor, MultiTensor)):
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


def _expand_multi(named: list[tuple[Key, Any]]) -> list[tuple[Key, Any]]:
    """The arguments with every MultiTensor replaced by its shards (named ``"k[i]"``) and a
    marker of its layout (a non-Tensor argument that must stay the same)."""
    out: list[tuple[Key, Any]] = []
    for k, v in named:
        if isinstance(v, MultiTensor):
            out.append((k, ("MultiTensor", v.axis, v.devices)))
            out.extend((f"{k}[{i}]", s) for i, s in enumerate(v.shards))
        else:
            out.append((k, v))
    return out


def _arguments(args: Sequence[Any], kwargs: dict[str, Any]) -> _Call:
    if not kwargs and (quick := _tensor_arguments(args)) is not None:
        return quick
    named = _expand_multi([*enumerate(args), *sorted(kwargs.items())])
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
        names = [k for (k, _), b in zip(tensors, buffers, strict=True) if buffers.count(b) > 1]
        raise JitError(
            f"TinyJit: Tensor arguments {names[0]!r} and {names[1]!r} are (views of) the same "
            "buffer; the captured kernels would alias them on every call (pass a .clone() of one)"
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


# -- results --------------------------------------------------------------------------------------


def _output_view(t: Tensor) -> UOp:
    view = REALIZED.get(t.uop, t.uop)
    if _base_buffer(view) is None:
        raise JitError(f"TinyJit: output {t!r} was not realized into a buffer")
    return view


# -- capture --------------------------------------------------------------------------------------


class _Capture(KernelExecutor):
    """The kernel executor while a capture records: every plan launched (by this executor,
    or by a nested TinyJit's replay) is joined; index checks are deferred to the end of the
    capture (then captured too); host reads of buffers the capture wrote raise."""

    name = "kernels (capturing)"
    capturing = True

    def __init__(self) -> None:
        self.joiner = PlanJoiner()
        self.checks: list[Any] = []

    def defer_checks(self, checks: Sequence[Any]) -> None:
        """Index checks of tensors realized during the capture (run at its end)."""
        self.checks.extend(c for c in checks if all(c is not o for o in self.checks))

    def read(self, buf: UOp) -> np.ndarray[Any, Any]:
        """Refuse to read what the capture computed (its value would be baked in)."""
        slot = self.joiner.slot_of(buf)
        if slot is not None and self.joiner.roots()[slot] in self.joiner.written():
            raise JitError(
                "TinyJit: .item()/.tolist()/.numpy() of a tensor computed inside the captured "
                "function; a replay would reuse the capture-time value (return the tensor and "
                "read it after the call)"
            )
        return super().read(buf)


def _run_checks(capture: _Capture) -> tuple[list[Any], list[Tensor]]:
    """The deferred index checks and their (min, max) tensors, realized inside the capture."""
    from fusegrad.tensor.checks import stats_uops

    if not capture.checks:
        return [], []
    stats = [Tensor(u) for u in stats_uops(capture.checks, Tensor)]
    Tensor.realize(*stats)
    return capture.checks, stats


def _verify(checks: Sequence[Any], stats: Sequence[Tensor]) -> None:
    from fusegrad.tensor.checks import verify_all

    verify_all(checks, [s.numpy() for s in stats])


# -- the captured plan ----------------------------------------------------------------------------


@dataclass
class Replay:
    """What a replay launches: the joined plan over its per-call and fixed buffers."""

    plan: LaunchPlan
    inputs: list[UOp]  # the capture's input buffers
    used: list[int]  # which inputs the plan takes (the others no kernel touched)
    outputs: list[UOp]  # buffers of returned tensors the capture created (new per call)
    views: list[UOp]  # the returned tensors' views over the capture's buffers
    written: weakref.WeakSet[UOp]  # fixed buffers the kernels write
    values: dict[str, int]  # capture-time Variable values
    checks: list[Any] = field(default_factory=list)  # deferred index checks
    stats: int = 0  # the last ``stats`` outputs are the checks' (min, max) pairs


InputInfo = tuple[UOp, tuple[UOp, ...], Any, str]
"""A Tensor argument of a capture: (its view of its buffer, its Variables, dtype, device)."""


def _input_spec(view: UOp, dtype: Any, device: str) -> tuple[UOp, tuple[Any, ...]]:
    """(the BUFFER under ``view``, the argument's signature entry: ``_input``'s)."""
    base = _base_buffer(view)
    if base is None:
        raise JitError(f"CapturedJit: an input view must be movement ops over a BUFFER, got {view}")
    holder = UOp(Ops.BUFFER, base.dtype, (UOp(Ops.UNIQUE, arg="jit input"), base.src[1]), base.arg)
    shaped, _ = _unbind_all(_substitute_args(view, {base: holder}))
    return base, (shaped, dtype, device)


def _linear_replay(ret: Any, linear: UOp, inputs: list[UOp]) -> Replay:
    """The replay of a LINEAR: ``inputs`` (its BUFFERs the Tensor arguments replace) and the
    buffers of ``ret``'s Tensors the LINEAR makes (first use a write) bound per call, the
    rest fixed to their buffers."""
    from fusegrad.engine.linear import bound_plan, first_written, flatten_graph_calls

    if linear.op is not Ops.LINEAR:
        raise TypeError(f"CapturedJit: _linear must be a LINEAR of CALLs, got {linear.op!r}")
    if len(set(inputs)) != len(inputs):
        raise ValueError("CapturedJit: two inputs stand for the same buffer of the LINEAR")
    plan, bufs = calls_plan(flatten_graph_calls(linear.src))
    known = set(bufs)
    used = [i for i, b in enumerate(inputs) if b in known]
    made = first_written(plan, bufs)
    views = [_output_view(t) for t in flatten_tensors(ret)]
    bases = dict.fromkeys(b for v in views if (b := _base_buffer(v)) is not None)
    outputs = [b for b in bases if b not in inputs and b in made]
    joined, written = bound_plan(plan, bufs, [*(inputs[i] for i in used), *outputs])
    return Replay(joined, list(inputs), used, outputs, views, written, bound_values(linear.src))


class CapturedJit:
    """A capture, ready to replay with ``TinyJit(captured=...)`` (tinygrad's constructor):
    the LINEAR of CALLs ``_linear`` (``Tensor.linear_with_vars``, graph calls included)
    launched over the buffers of the Tensor arguments named ``expected_names`` (positions
    and keywords), each described by ``expected_input_info``: (its view of the LINEAR's
    BUFFER it replaces, its Variables, dtype, device). ``ret`` is what a call returns: its
    Tensors are views of the LINEAR's buffers; those the LINEAR makes are new buffers on
    every call (fusegrad's replay), the others (weights, state) stay the LINEAR's.

    fusegrad's own captures (``TinyJit``'s second call) come from ``CapturedJit.of``: a
    joined launch plan, ``_linear`` None.
    """

    def __init__(
        self,
        ret: Any,
        _linear: UOp,
        expected_names: list[int | str],
        expected_input_info: list[InputInfo],
    ) -> None:
        if len(expected_names) != len(expected_input_info):
            raise ValueError(
                f"CapturedJit: {len(expected_names)} names for {len(expected_input_info)} inputs"
            )
        specs = [_input_spec(v, dtype, device) for v, _, dtype, device in expected_input_info]
        self.ret = ret
        self._linear: UOp | None = _linear
        self.expected_names = list(expected_names)
        self.expected_input_info = list(expected_input_info)
        self.signature = _Signature(tuple(expected_names), tuple(s for _, s in specs), ())
        self.replay = _linear_replay(ret, _linear, [b for b, _ in specs])

    @classmethod
    def of(cls, ret: Any, signature: _Signature, replay: Replay) -> CapturedJit:
        """fusegrad's capture: the joined plan ``replay`` of a call with ``signature``."""
        out = cls.__new__(cls)
        out.ret, out._linear, out.signature, out.replay = ret, None, signature, replay
        out.expected_names = list(signature.names)
        out.expected_input_info = [
            (view, tuple(n for n in view.toposort() if n.op is Ops.DEFINE_VAR), dtype, device)
            for view, dtype, device in signature.tensors
        ]
        return out

    @property
    def plan(self) -> LaunchPlan:
        """The launch plan a replay runs."""
        return self.replay.plan


def _prune(joiner: PlanJoiner, dynamic: set[int]) -> None:
    """Keep the steps that must run on every replay: those that use Variables, write state
    from before the capture, write a buffer several steps write, or read something such a
    step writes or the per-call buffers (``dynamic``); the rest ran at capture."""
    roots = joiner.roots()
    access: list[tuple[set[int], set[int]]] = []
    for step in joiner.steps:
        read, written = step.access()
        access.append(({roots[i] for i in read}, {roots[i] for i in written}))
    writers: dict[int, int] = {}
    for _, writes in access:
        for b in writes:
            writers[b] = writers.get(b, 0) + 1
    keep = {
        i
        for i, (s, (_, writes)) in enumerate(zip(joiner.steps, access, strict=True))
        if (s.kernel is not None and s.kernel.var_names)
        or any(not joiner.slots[b].fresh or writers[b] > 1 or b in dynamic for b in writes)
    }
    dyn = set(dynamic)
    changed = True
    while changed:
        for i in keep:
            dyn |= access[i][1]
        grown = {i for i, (reads, _) in enumerate(access) if reads & dyn} | keep
        changed, keep = grown != keep, grown
    joiner.steps = [s for i, s in enumerate(joiner.steps) if i in keep]


def _memory_plan(joiner: PlanJoiner, given: set[int]) -> tuple[int, int]:
    """Place the capture's dead intermediates into arenas: buffers a captured plan created
    whose first use is a write, that no live tensor references once the capture returned
    (their weak reference is dead), and that are not per-call slots. Returns (their bytes
    unshared, the arenas' bytes)."""
    roots = joiner.roots()
    seen: set[int] = set()
    holders: dict[int, UOp] = {}
    uses: list[set[UOp]] = []
    for s in joiner.steps:
        read, written = s.access()
        reads = {roots[i] for i in read}
        for b in {roots[i] for i in written} - seen - reads - given:
            slot = joiner.slots[b]
            if slot.fresh and slot.ref is not None and slot.ref() is None:  # dead: no tensor
                rt = slot.runtime
                holders[b] = UOp.new_buffer(rt.device, rt.size, rt.dtype)
        seen |= reads | {roots[i] for i in written}
        uses.append({holders[roots[i]] for i in s.slots if roots[i] in holders})
    if not holders:
        return 0, 0
    plan = plan_memory(uses, set(holders.values()))
    arenas: dict[UOp, Buffer] = {}
    for b, holder in holders.items():
        view = plan.views[holder]
        arena = view.src[0]
        if arena not in arenas:
            arenas[arena] = Buffer(str(arena.src[1].arg), int(arena.arg), dtypes.uint8)
        size, offset = view.arg
        rt = arenas[arena].view(int(size), view.dtype, int(offset) * view.dtype.itemsize)
        joiner.slots[b].runtime = rt
    for i, v in sorted(joiner.views.items()):  # views of planned buffers follow them
        if roots[i] in holders:
            base = joiner.slots[v.base].runtime
            joiner.slots[i].runtime = base.view(v.size, v.dtype, v.offset)
    return plan.planned_bytes, plan.arena_bytes


def _written(joiner: PlanJoiner, given: set[int]) -> weakref.WeakSet[UOp]:
    roots = joiner.roots()
    out: weakref.WeakSet[UOp] = weakref.WeakSet()
    for i in joiner.written():
        slot = joiner.slots[roots[i]]
        buf = None if slot.ref is None else slot.ref()
        if buf is not None and roots[i] not in given:
            out.add(buf)
    return out


def _options(
    fxn: Callable[..., Any] | None = None,
    captured: CapturedJit | None = None,
    prune: bool = False,
    optimize: bool = False,
) -> tuple[Callable[..., Any] | None, CapturedJit | None, bool, bool]:
    """TinyJit's arguments (tinygrad's: ``TinyJit(fxn=None, **kwargs)``)."""
    if captured is not None and not isinstance(captured, CapturedJit):
        raise TypeError(f"captured must be a CapturedJit, got {type(captured).__name__}")
    return fxn, captured, prune, optimize


class _ClassSignature:
    """TinyJit's signature as tinygrad spells it (``fxn=None, **kwargs``) on the class; on
    an instance, the wrapped function's (so tools see the decorated function's parameters)."""

    def __get__(self, obj: Any, objtype: Any = None) -> inspect.Signature | None:
        if obj is None:
            return inspect.Signature(
                [
                    inspect.Parameter("fxn", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
                    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
                ]
            )
        fxn = obj.__dict__.get("fxn")
        return None if fxn is None else inspect.signature(fxn)


# -- TinyJit --------------------------------------------------------------------------------------


class TinyJit(Generic[ReturnType]):
    """Capture the kernels ``fxn`` runs (on its second call) and replay them after.

    >>> from fusegrad import Tensor, TinyJit
    >>> @TinyJit
    ... def double(x: Tensor) -> Tensor:
    ...     return (x * 2).realize()
    >>> [double(Tensor([float(i)])).item() for i in range(4)]
    [0.0, 2.0, 4.0, 6.0]
    """

    __signature__ = _ClassSignature()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            fxn, captured, prune, optimize = _options(*args, **kwargs)
        except TypeError as e:  # a wrong argument: say whose
            raise TypeError(f"TinyJit: {e} (takes fxn=None, prune=False, optimize=False)") from None
        self.fxn: Callable[..., ReturnType] | None = fxn
        self.prune, self.optimize = prune, optimize
        self.cnt = 0
        self.captured_plan: CapturedJit | None = captured
        self.signature: _Signature | None = None if captured is None else captured.signature
        self.ret: Any = None if captured is None else captured.ret
        if captured is not None:
            self.cnt = 2
        self.memory_plan: tuple[int, int] = (0, 0)
        """With ``optimize``: (bytes of the planned intermediates unshared, bytes of their
        arenas) of the capture."""
        if fxn is not None:
            functools.update_wrapper(self, fxn)

    def reset(self) -> None:
        """Forget the capture: the next two calls run the function again."""
        self.cnt, self.captured_plan, self.signature, self.ret = 0, None, None, None

    @property
    def captured(self) -> bool:
        """True once a capture exists (calls replay it)."""
        return self.captured_plan is not None

    @property
    def plan(self) -> LaunchPlan | None:
        """The launch plan a replay runs (None before the capture)."""
        return None if self.captured_plan is None else self.captured_plan.plan

    @property
    def kernel_count(self) -> int:
        """Launches (kernels and copies) in one replay (0 before the capture)."""
        return 0 if self.captured_plan is None else len(self.captured_plan.plan.steps)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> ReturnType:
        executor = get_executor()
        replays = self.captured_plan is not None and isinstance(executor, KernelExecutor)
        if self.fxn is None and not replays:
            raise JitError("TinyJit: no function to run (it was made with fxn=None)")
        if self.fxn is not None and (not JIT.value or not isinstance(executor, KernelExecutor)):
            return self.fxn(*args, **kwargs)
        call = _arguments(args, kwargs)
        if self.captured_plan is not None:
            assert self.signature is not None
            _check_signature(self.signature, call.signature)
            return self._replay(call)
        assert self.fxn is not None  # no capture: the function runs
        if self.cnt == 0 or _capturing(executor):
            self.cnt = 1
            ret = self.fxn(*args, **kwargs)
            if outs := flatten_tensors(ret):
                Tensor.realize(*outs)
            return ret
        return self._capture(args, kwargs, call)

    def _capture(self, args: Sequence[Any], kwargs: dict[str, Any], call: _Call) -> ReturnType:
        assert self.fxn is not None
        capture = _Capture()
        previous = set_executor(capture)
        RECORDERS.append(capture.joiner.add)
        try:
            ret = self.fxn(*args, **kwargs)
            outs = flatten_tensors(ret)
            if outs:
                Tensor.realize(*outs)
            checks, stats = _run_checks(capture)
        finally:
            RECORDERS.remove(capture.joiner.add)
            set_executor(previous)
        if not capture.joiner.steps:
            raise JitError(
                "TinyJit: the function realized nothing (no kernel ran during the capture); "
                "return the tensors it computes, or realize them inside it"
            )
        if checks:
            _verify(checks, stats)
        views = [_output_view(t) for t in [*outs, *stats]]
        replay = self._plan(capture.joiner, call, views, checks)
        self.captured_plan = CapturedJit.of(ret, call.signature, replay)
        self.signature, self.ret, self.cnt = call.signature, ret, 2
        return ret

    def _plan(self, joiner: PlanJoiner, call: _Call, views: list[UOp], checks: list[Any]) -> Replay:
        used = [i for i, b in enumerate(call.buffers) if joiner.slot_of(b) is not None]
        inputs = set(call.buffers)
        bases = dict.fromkeys(b for v in views if (b := _base_buffer(v)) is not None)
        outputs = []
        for b in bases:
            slot = joiner.slot_of(b)
            if b not in inputs and slot is not None and joiner.slots[slot].fresh:
                outputs.append(b)
        given = [joiner.slot_of(call.buffers[i]) for i in used]
        given += [joiner.slot_of(b) for b in outputs]
        slots = [g for g in given if g is not None]
        if self.prune:
            _prune(joiner, set(slots))
        if self.optimize and not NO_MEMORY_PLANNER.value:
            self.memory_plan = _memory_plan(joiner, set(slots))
        written = _written(joiner, set(slots))
        plan = joiner.build(slots)
        stats = len(checks)
        return Replay(
            plan, list(call.buffers), used, outputs, views, written, dict(joiner.values),
            checks, stats,
        )  # fmt: skip

    def _replay(self, call: _Call) -> ReturnType:
        assert self.captured_plan is not None
        cap = self.captured_plan.replay
        for i, b in enumerate(call.buffers):
            if b in cap.written:
                raise JitError(
                    f"TinyJit: Tensor argument {call.signature.names[i]!r} aliases a buffer the "
                    "captured kernels write (an intermediate or state tensor from the capture); "
                    "pass a .clone()"
                )
        fresh = [UOp.new_buffer(b.src[1].arg, int(b.arg), b.dtype) for b in cap.outputs]
        values = {**cap.values, **call.values}
        run_plan(cap.plan, [*(call.buffers[i] for i in cap.used), *fresh], values)
        mapping = dict(zip(cap.inputs, call.buffers, strict=True))
        mapping.update(zip(cap.outputs, fresh, strict=True))
        for var, val in call.values.items():
            mapping.update(_rebind(cap.views, var, val))
        tensors = [_result(_rebase(v, mapping)) for v in cap.views]
        if cap.stats:
            _verify(cap.checks, tensors[-cap.stats :])
            del tensors[-cap.stats :]
        out: ReturnType = rebuild_tensors(self.ret, tensors)
        return out


def _capturing(executor: Any) -> bool:
    """Whether ``executor`` is a capture (a TinyJit called inside another's capture replays
    its own plan, which the outer capture records, or runs its function)."""
    return isinstance(executor, _Capture)


def _result(view: UOp) -> Tensor:
    """A returned Tensor over a buffer view: what ``Tensor(view)`` makes (a leaf without
    grad), without the constructor's checks of arbitrary data."""
    out = Tensor.__new__(Tensor)
    out.uop, out.grad, out._leaf, out._requires_grad = view, None, True, None
    ALL_TENSORS[id(out)] = weakref.ref(out)
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


__all__ = ["JIT", "CapturedJit", "JitError", "TinyJit", "function"]
