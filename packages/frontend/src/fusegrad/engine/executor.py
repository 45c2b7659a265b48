"""The contract between the engine and whatever runs a tensor graph.

An ``Executor`` takes tensor-level UOps (with every already-realized part replaced by its
buffer) and returns, for each, a contiguous buffer view ``BUFFER.reshape(shape)`` holding its
value. ``read`` copies a buffer's contents out as a flat host array in the storage dtype.
An executor that records what runs for a later replay (TinyJit's capture) sets a class
attribute ``capturing = True``: work that must not be recorded (index-range checks) is
skipped while it is installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from fusegrad.uop import UOp


class Executor(Protocol):
    """Runs tensor graphs: the kernel pipeline, or a reference interpreter in tests."""

    name: str

    def realize(self, targets: Sequence[UOp]) -> list[UOp]:
        """Buffer views holding the values of ``targets`` (performing their assigns)."""
        ...

    def read(self, buf: UOp) -> np.ndarray[Any, Any]:
        """The flat contents of BUFFER ``buf`` (storage dtype), current after every realize."""
        ...


class _Slot:
    executor: Executor | None = None


def set_executor(executor: Executor | None) -> Executor | None:
    """Install ``executor`` (None: back to the default); returns the previous one."""
    previous = _Slot.executor
    _Slot.executor = executor
    return previous


def get_executor() -> Executor:
    """The executor in use: the one installed, else the kernel pipeline."""
    if _Slot.executor is None:
        from fusegrad.engine.kernels import KernelExecutor

        _Slot.executor = KernelExecutor()
    return _Slot.executor
