"""fusegrad: a tensor library that is one small compiler, from lazy tensors to machine code.

The top-level package belongs to the ``fusegrad`` distribution (the frontend). The layer
packages ``fusegrad.uop``, ``fusegrad.codegen``, ``fusegrad.renderer`` and
``fusegrad.runtime`` are separate distributions that install into the same ``fusegrad``
folder as namespace portions. ``extend_path`` below makes them importable when the
distributions live in different folders (editable installs from the checkout).
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from fusegrad.version import __version__ as __version__  # first: mismatched sets fail here

# isort: split

# tinygrad's module paths (thin re-export modules) are attributes of the package, as there
from fusegrad import (
    codegen,
    device,
    dtype,
    engine,
    helpers,
    mixin,
    nn,
    renderer,
    runtime,
    schedule,
    tensor,
    uop,
)
from fusegrad.engine import GlobalCounters
from fusegrad.helpers import fetch  # tinygrad's fetch (gunzip=, sha256=, extract=, headers=)
from fusegrad.jit import TinyJit, function
from fusegrad.runtime import Device
from fusegrad.tensor import Tensor
from fusegrad.uop import Context, DType, UOp, Variable, dtypes, getenv

__all__ = [
    "Context",
    "DType",
    "Device",
    "GlobalCounters",
    "Tensor",
    "TinyJit",
    "UOp",
    "Variable",
    "codegen",
    "device",
    "dtype",
    "dtypes",
    "engine",
    "fetch",
    "function",
    "getenv",
    "helpers",
    "mixin",
    "nn",
    "renderer",
    "runtime",
    "schedule",
    "tensor",
    "uop",
]
