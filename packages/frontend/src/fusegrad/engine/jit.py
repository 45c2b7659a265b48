"""tinygrad's ``tinygrad.engine.jit`` path: ``TinyJit``, ``JitError``, ``CapturedJit`` (a
capture ready to replay), ``graph_class`` (a device's batched submission, or None) and
``GraphException``. The implementation is ``fusegrad.jit`` (policy) over
``fusegrad.engine.plan`` (launch plans)."""

from typing import Any

from fusegrad.jit import CapturedJit, JitError, TinyJit
from fusegrad.runtime import Device


class GraphException(RuntimeError):
    """A plan a device's graph can't batch (the engine then submits it as a plain queue)."""


def graph_class(dev: str) -> Any:
    """The graph class of device ``dev`` (``Device[dev].graph``): None where the device
    offers no batched submission."""
    return Device[dev].graph


__all__ = ["CapturedJit", "GraphException", "JitError", "TinyJit", "graph_class"]
