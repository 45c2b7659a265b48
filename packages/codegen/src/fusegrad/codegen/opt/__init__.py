"""fusegrad.codegen.opt: the kernel optimizer.

* opts as data: ``Opt``, ``OptOps``, ``KernelOptError``; ``apply_opts(ast, opts, renderer)``
  rewrites a kernel AST's ranges (axis numbering: ``kernel_axes``, see ``kernel.py``); besides
  tinygrad's opts, TILE (K-blocking for caches) and PARTIALS (vector partial sums along a
  reduce axis), see ``tiling.py``;
* ``hand_coded_optimizations(ast, renderer)``: opts without searching;
* ``beam_search(ast, renderer, width, timer)``: timed search with an on-disk cache, its
  candidates built in worker processes (``parallel.py``); ``Timer`` is the protocol of the
  timing callback every runtime device supplies (``Compiled.timer``); ``SearchStats``;
* ``optimize(ast, renderer, opts, timer)``: the first step of ``to_program``
  (``fusegrad.codegen.program``) — which opts a kernel gets, applied; ``optimizer_key``
  names that choice for the program cache;
* knobs: ``NOOPT``, ``BEAM``, ``IGNORE_BEAM_CACHE``, ``PARALLEL`` and the ``BEAM_*`` limits
  (``flags.py``).
"""

from fusegrad.codegen.opt.analysis import MatmulShape, matmul_shape, stride
from fusegrad.codegen.opt.applier import choose_opts, optimize, optimizer_key
from fusegrad.codegen.opt.flags import BEAM, BEAM_TIMEOUT_S, IGNORE_BEAM_CACHE, NOOPT, PARALLEL
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
from fusegrad.codegen.opt.search import SearchStats, Timer, actions, beam_search, cache_key

__all__ = [
    "BEAM",
    "BEAM_TIMEOUT_S",
    "IGNORE_BEAM_CACHE",
    "MAX_LANES",
    "MAX_UPCAST",
    "NOOPT",
    "PARALLEL",
    "KernelOptError",
    "MatmulShape",
    "Opt",
    "OptOps",
    "SearchStats",
    "Timer",
    "actions",
    "apply_opt",
    "apply_opts",
    "beam_search",
    "cache_key",
    "choose_opts",
    "hand_coded_optimizations",
    "kernel_axes",
    "matmul_shape",
    "optimize",
    "optimizer_key",
    "stride",
]
