"""Knobs of the kernel optimizer: every environment variable ``fusegrad.codegen.opt`` reads.

``DEBUG`` (declared in ``fusegrad.uop``) is shared: at 1 BEAM shows a progress bar (tqdm, on
stderr) per search, at 2 it prints the opts it picked and what it dropped, at 3 every kernel
prints its applied opts, at 4 every new program its source.
``CACHELEVEL`` (0: no on-disk caches) is read by ``DiskCache``, which the BEAM cache uses.
"""

from __future__ import annotations

from fusegrad.uop import ContextVar

NOOPT = ContextVar("NOOPT", 0)
"""1: apply no kernel optimizations (neither heuristics nor BEAM); explicit
``KernelInfo.opts_to_apply`` still apply."""
BEAM = ContextVar("BEAM", 0)
"""Beam width of the opt search for every kernel (0: hand-coded heuristics). Needs a timer
for the kernel's device: the engine passes every ``Compiled`` device's own ``timer``."""
IGNORE_BEAM_CACHE = ContextVar("IGNORE_BEAM_CACHE", 0)
"""1: search again even when the on-disk BEAM cache has opts for the kernel (the new result
is still stored)."""
BEAM_UPCAST_MAX = ContextVar("BEAM_UPCAST_MAX", 128)
"""BEAM skips candidates with more UPCAST/UNROLL lanes than this (128: a matmul's 6 x 16
register block, which the heuristics start from, has 96)."""
BEAM_MARGIN = ContextVar("BEAM_MARGIN", 0.02)
"""A BEAM round must be this much faster (fraction) than the best so far to continue."""
BEAM_MAX_UOPS = ContextVar("BEAM_MAX_UOPS", 4000)
"""BEAM skips candidates whose linear program is longer than this."""
PARALLEL = ContextVar("PARALLEL", -1)
"""Worker processes BEAM lowers, renders and compiles candidates in (-1: one per usable core;
0 or 1: in the searching process itself)."""
BEAM_TIMEOUT_S = ContextVar("BEAM_TIMEOUT_S", 0.0)
"""A BEAM candidate whose first run takes longer than this many seconds is dropped (0: ten
times the fastest candidate so far)."""
