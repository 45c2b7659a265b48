"""fusegrad.codegen.opt: the kernel optimizer.

* opts as data: ``Opt``, ``OptOps``, ``KernelOptError``; ``apply_opts(ast, opts, renderer)``
  rewrites a kernel AST's ranges (axis numbering: ``kernel_axes``, see ``kernel.py``); besides
  tinygrad's opts, TILE (K-blocking for caches) and PARTIALS (vector partial sums along a
  reduce axis), see ``tiling.py``;
* ``hand_coded_optimizations(ast, renderer)``: opts without searching;
* ``beam_search(ast, renderer, width, timer)``: timed search with an on-disk cache; ``Timer``
  is the protocol of the timing callback the runtime supplies (``register_beam_timer``
  makes ``BEAM=n`` use it for a device);
* ``optimize``: the lowering pipeline's opts hook (installed on import of fusegrad.codegen);
* knobs: ``NOOPT``, ``BEAM``, ``IGNORE_BEAM_CACHE`` and the ``BEAM_*`` limits (``flags.py``).
"""

from fusegrad.codegen.opt.analysis import MatmulShape, matmul_shape, stride
from fusegrad.codegen.opt.applier import choose_opts, install, optimize, register_beam_timer
from fusegrad.codegen.opt.flags import BEAM, IGNORE_BEAM_CACHE, NOOPT
from fusegrad.codegen.opt.heuristics import hand_coded_optimizations
from fusegrad.codegen.opt.kernel import (
    MAX_LANES,
    MAX_UPCAST,
    KernelOptError,
    Opt,
    OptOps,
    apply_opt,
    apply_opts,
    kernel_axes,
)
from fusegrad.codegen.opt.search import Timer, actions, beam_search, cache_key

install()

__all__ = [
    "BEAM",
    "IGNORE_BEAM_CACHE",
    "MAX_LANES",
    "MAX_UPCAST",
    "NOOPT",
    "KernelOptError",
    "MatmulShape",
    "Opt",
    "OptOps",
    "Timer",
    "actions",
    "apply_opt",
    "apply_opts",
    "beam_search",
    "cache_key",
    "choose_opts",
    "hand_coded_optimizations",
    "install",
    "kernel_axes",
    "matmul_shape",
    "optimize",
    "register_beam_timer",
    "stride",
]
