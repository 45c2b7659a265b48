"""The Tensor's knobs (``ContextVar``s, settable with ``Context(NAME=value)``).

``DEV`` is the runtime's knob, declared again here by name (a ContextVar declared twice is
one object): the frontend reads it for every tensor created without a device, so a
``Context(DEV=...)`` scope or a ``Device.DEFAULT = ...`` assignment takes effect at once.
"""

from __future__ import annotations

from fusegrad.uop import ContextVar

DEV = ContextVar("DEV", "")
"""The default device (``CPU``, ``PYTHON``, ``CPU:LLVM``...); empty: the runtime probes."""

CHECK_INDEX = ContextVar("CHECK_INDEX", 1)
"""1: out-of-range Tensor indices (advanced indexing, gather, scatter, one_hot) raise
IndexError when the result is realized; 0: no check (an out-of-range index selects nothing:
zeros, and scatter writes nowhere). ``CHECK_OOB`` (tinygrad's name) is the same setting."""
CHECK_INDEX.alias("CHECK_OOB")
FUSE_OPTIM = ContextVar("FUSE_OPTIM", 0)
"""1: optimizers default to ``fused=True`` (the whole update as one kernel, see ``nn.optim``)."""
