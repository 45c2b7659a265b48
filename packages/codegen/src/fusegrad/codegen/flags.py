"""Knobs of fusegrad.codegen's caches: every environment variable the package root reads.

The optimizer's knobs (NOOPT, BEAM, ...) are declared in ``fusegrad.codegen.opt.flags``.
"""

from __future__ import annotations

from fusegrad.uop import ContextVar

CACHELEVEL = ContextVar("CACHELEVEL", 2)
"""0: no on-disk caches (compiled code, BEAM choices); >= 1: use them."""
FUSEGRAD_CACHE_DIR = ContextVar("FUSEGRAD_CACHE_DIR", "")
"""Folder of the on-disk caches (default: $XDG_CACHE_HOME/fusegrad or ~/.cache/fusegrad)."""
XDG_CACHE_HOME = ContextVar("XDG_CACHE_HOME", "")
"""The user cache folder, by the XDG convention."""
EMULATED_DTYPES = ContextVar("EMULATED_DTYPES", "")
"""Comma-separated dtype names (``bfloat16,half``, any of the float16/bfloat16/fp8 family) that
the lowering emulates in float32 even where the target supports them natively."""
