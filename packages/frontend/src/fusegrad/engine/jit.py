"""tinygrad's ``tinygrad.engine.jit`` path: ``TinyJit``, ``JitError``, ``CapturedJit`` (a
capture ready to replay), ``graph_class`` (a device's batched submission, or None),
``GraphException``, the graph runners: ``GraphRunner`` (a LINEAR of CALLs on one device
launched as one device graph submission: one ring write and one signal for all its kernels)
and ``MultiGraphRunner`` (the same over several devices or with copies: one queue per run of
steps on a device, each waiting for the one before; each graph call its own submission), and
the LINEAR rewrites of ``fusegrad.engine.linear``: ``create_graph_call``,
``graph_split_rewrite`` and ``prune_linear``. The implementation is ``fusegrad.jit``
(policy) over ``fusegrad.engine.plan`` (launch plans)."""

from __future__ import annotations

from typing import Any

from fusegrad.device import DepsTracker
from fusegrad.engine.linear import (
    LinearLaunch,
    create_graph_call,
    flatten_graph_calls,
    graph_split_rewrite,
    plan_access,
    prune_linear,
)
from fusegrad.engine.plan import LaunchPlan, bound_values
from fusegrad.jit import CapturedJit, JitError, TinyJit
from fusegrad.runtime import Device, Signal
from fusegrad.uop import Ops, UOp


class GraphException(RuntimeError):
    """A plan a device's graph can't batch (the engine then submits it as a plain queue)."""


def graph_class(dev: str) -> Any:
    """The graph class of device ``dev`` (``Device[dev].graph``): None where the device
    offers no batched submission."""
    return Device[dev].graph


class MultiGraphRunner:
    """The launch plans of a LINEAR of CALLs (``Tensor.linear_with_vars``, graph calls
    included: ``graph_split_rewrite``), compiled once and launched on every call: steps on
    several devices and copies go one queue per run of steps on a device, each queue waiting
    for the one before (``launch.launch_plan``); each graph call is one device-graph
    submission.

    ``input_uops``: BUFFERs of the LINEAR that a call may replace with other BUFFERs of the
    same device, size and dtype (``runner(new_a, new_b)``); the rest are the LINEAR's own.
    ``deps``: per plan (``launch.plans``), the earlier plans on other devices whose
    completion it needs (``DepsTracker`` over the buffers they read and write; a device's
    own earlier plans are ordered by its ring).
    """

    def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()) -> None:
        if linear.op is not Ops.LINEAR:
            raise TypeError(f"{type(self).__name__}: expected a LINEAR of CALLs, got {linear.op!r}")
        self.linear = linear
        self.input_uops = tuple(input_uops)
        self.launch = LinearLaunch.of(self._runnable(linear), reused=True)
        self.buffers: list[UOp] = list(
            dict.fromkeys(b for _, bufs in self.launch.segments for b in bufs)
        )
        known = set(self.buffers)
        missing = [u for u in self.input_uops if u not in known]
        if missing:
            raise ValueError(
                f"{type(self).__name__}: input {missing[0]!r} is no buffer of the LINEAR"
            )
        self.var_vals: dict[str, int] = bound_values(linear.src)
        self.deps: list[list[int]] = plan_deps(self.launch)

    def _runnable(self, linear: UOp) -> UOp:
        """The LINEAR this runner launches."""
        return linear

    @property
    def plan(self) -> LaunchPlan | None:
        """The launch plan of a LINEAR without graph calls (None: it has several, one per
        graph call and per run between them: ``launch.plans``)."""
        plans = self.launch.plans
        return plans[0] if len(plans) == 1 else None

    @property
    def kernels(self) -> int:
        """Kernel launches per call."""
        return sum(p.kernels for p in self.launch.plans)

    def __call__(self, *inputs: UOp, var_vals: dict[str, int] | None = None) -> None:
        """Launch the plans over ``inputs`` (BUFFERs standing for ``input_uops``, in order;
        none: the LINEAR's own) with the bound Variables' values (``var_vals`` overrides them
        by name). Returns once submitted; reading a buffer waits for it."""
        swap: dict[UOp, UOp] = {}
        if inputs:
            if len(inputs) != len(self.input_uops):
                raise TypeError(
                    f"{type(self).__name__}: {len(inputs)} inputs given, the runner takes "
                    f"{len(self.input_uops)}"
                )
            for old, new in zip(self.input_uops, inputs, strict=True):
                _check_input(old, new)
                swap[old] = new
        self.launch({**self.var_vals, **(var_vals or {})}, swap)


class GraphRunner(MultiGraphRunner):
    """A ``MultiGraphRunner`` whose kernels all run on one device that has a graph and that
    has no copies: every call is one submission of the device graph (one ring write and one
    signal for all the kernels; graph calls of the LINEAR are opened into it). Raises
    ``GraphException`` for a LINEAR that isn't that."""

    def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()) -> None:
        super().__init__(linear, input_uops)
        plan = self.plan
        assert plan is not None, "a GraphRunner's LINEAR has its graph calls opened"
        if any(s.kernel is None for s in plan.steps):
            raise GraphException(
                "GraphRunner: the LINEAR copies between buffers (MultiGraphRunner)"
            )
        devices = plan.devices
        if len(devices) != 1:
            raise GraphException(f"GraphRunner: kernels on {sorted(devices)} (MultiGraphRunner)")
        (self.device,) = devices
        if graph_class(self.device) is None:
            raise GraphException(f"GraphRunner: {self.device} offers no graph")

    def _runnable(self, linear: UOp) -> UOp:
        return linear.replace(src=tuple(flatten_graph_calls(linear.src)))


def plan_deps(launch: LinearLaunch) -> list[list[int]]:
    """Per plan of ``launch``, the earlier plans on other devices it must wait for: each
    device a timeline signal (its n-th plan sets it to n), a ``DepsTracker`` over the plans'
    base BUFFERs says which values each plan needs."""
    tracker = DepsTracker()
    timelines: dict[str, tuple[Signal, list[int]]] = {}
    plan_at: dict[tuple[Signal, int], int] = {}
    out: list[list[int]] = []
    for i, (plan, bufs) in enumerate(launch.segments):
        reads, writes = plan_access(plan, bufs)
        name = plan.steps[-1].device  # the plan is done when its last queue is
        signal, done = timelines.setdefault(name, (Signal(name=f"plan deps {name}"), []))
        done.append(i)
        value = len(done)
        needs = tracker.wait_for(reads, writes, signal, value)
        out.append(sorted(plan_at[(s, v)] for s, v in needs if s is not signal))
        plan_at[(signal, value)] = i
    return out


def _check_input(old: UOp, new: UOp) -> None:
    if new.op is not Ops.BUFFER:
        raise TypeError(f"graph runner: an input must be a BUFFER, got {new.op!r}")
    if (new.arg, new.dtype, new.src[1].arg) != (old.arg, old.dtype, old.src[1].arg):
        raise ValueError(
            f"graph runner: input {new.arg} x {new.dtype!r} on {new.src[1].arg} stands for "
            f"{old.arg} x {old.dtype!r} on {old.src[1].arg}"
        )


__all__ = [
    "CapturedJit",
    "GraphException",
    "GraphRunner",
    "JitError",
    "MultiGraphRunner",
    "TinyJit",
    "create_graph_call",
    "graph_class",
    "graph_split_rewrite",
    "plan_deps",
    "prune_linear",
]
