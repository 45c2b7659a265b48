"""tinygrad's ``tinygrad.engine.jit`` path: ``TinyJit``, ``JitError``, ``CapturedJit`` (a
capture ready to replay), ``graph_class`` (a device's batched submission, or None),
``GraphException``, and the graph runners: ``GraphRunner`` (a LINEAR of CALLs on one device
launched as one device graph submission: one ring write and one signal for all its kernels)
and ``MultiGraphRunner`` (the same over several devices or with copies: one queue per run of
steps on a device, each waiting for the one before). The implementation is ``fusegrad.jit``
(policy) over ``fusegrad.engine.plan`` (launch plans)."""

from __future__ import annotations

from typing import Any

from fusegrad.engine.plan import LaunchPlan, bound_values, calls_plan, run_plan
from fusegrad.jit import CapturedJit, JitError, TinyJit
from fusegrad.runtime import Device
from fusegrad.uop import Ops, UOp


class GraphException(RuntimeError):
    """A plan a device's graph can't batch (the engine then submits it as a plain queue)."""


def graph_class(dev: str) -> Any:
    """The graph class of device ``dev`` (``Device[dev].graph``): None where the device
    offers no batched submission."""
    return Device[dev].graph


class MultiGraphRunner:
    """The launch plan of a LINEAR of CALLs (``Tensor.linear_with_vars``), compiled once and
    launched on every call: steps on several devices and copies go one queue per run of
    steps on a device, each queue waiting for the one before (``launch.launch_plan``).

    ``input_uops``: BUFFERs of the LINEAR that a call may replace with other BUFFERs of the
    same device, size and dtype (``runner(new_a, new_b)``); the rest are the LINEAR's own.
    """

    def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()) -> None:
        if linear.op is not Ops.LINEAR:
            raise TypeError(f"{type(self).__name__}: expected a LINEAR of CALLs, got {linear.op!r}")
        self.linear = linear
        self.input_uops = tuple(input_uops)
        plan, buffers = calls_plan(linear.src)
        slot_of = {b: i for i, b in enumerate(buffers)}
        missing = [u for u in self.input_uops if u not in slot_of]
        if missing:
            raise ValueError(
                f"{type(self).__name__}: input {missing[0]!r} is no buffer of the LINEAR"
            )
        plan.reused = True  # launched again and again: a device graph where one can take it
        self.plan: LaunchPlan = plan
        self.buffers: list[UOp] = buffers
        self.input_slots = tuple(slot_of[u] for u in self.input_uops)
        self.var_vals: dict[str, int] = bound_values(linear.src)

    @property
    def kernels(self) -> int:
        """Kernel launches per call."""
        return self.plan.kernels

    def __call__(self, *inputs: UOp, var_vals: dict[str, int] | None = None) -> None:
        """Launch the plan over ``inputs`` (BUFFERs standing for ``input_uops``, in order; none:
        the LINEAR's own) with the bound Variables' values (``var_vals`` overrides them by
        name). Returns once submitted; reading a buffer waits for it."""
        bufs = self.buffers
        if inputs:
            if len(inputs) != len(self.input_uops):
                raise TypeError(
                    f"{type(self).__name__}: {len(inputs)} inputs given, the runner takes "
                    f"{len(self.input_uops)}"
                )
            bufs = list(bufs)
            for slot, old, new in zip(self.input_slots, self.input_uops, inputs, strict=True):
                _check_input(old, new)
                bufs[slot] = new
        run_plan(self.plan, bufs, {**self.var_vals, **(var_vals or {})})


class GraphRunner(MultiGraphRunner):
    """A ``MultiGraphRunner`` whose kernels all run on one device that has a graph and that
    has no copies: every call is one submission of the device graph (one ring write and one
    signal for all the kernels). Raises ``GraphException`` for a LINEAR that isn't that."""

    def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()) -> None:
        super().__init__(linear, input_uops)
        if any(s.kernel is None for s in self.plan.steps):
            raise GraphException(
                "GraphRunner: the LINEAR copies between buffers (MultiGraphRunner)"
            )
        devices = self.plan.devices
        if len(devices) != 1:
            raise GraphException(f"GraphRunner: kernels on {sorted(devices)} (MultiGraphRunner)")
        (self.device,) = devices
        if graph_class(self.device) is None:
            raise GraphException(f"GraphRunner: {self.device} offers no graph")


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
    "graph_class",
]
