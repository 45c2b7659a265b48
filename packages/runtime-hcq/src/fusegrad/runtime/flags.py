"""Knobs: every environment variable fusegrad.runtime reads is declared here, once.

``DEBUG`` is shared with every package (declared in ``fusegrad.uop``): at 2 the runtime prints
one line per kernel launch.
"""

from __future__ import annotations

from fusegrad.uop import ContextVar

DEV = ContextVar("DEV", "")
"""The default device, optionally with its renderer: ``CPU``, ``CPU:LLVM``, ``CPU:C``,
``PYTHON``, ``NULL:LLVM`` (compile only). Empty: the first available of CPU, PYTHON."""
CPU_THREADS = ContextVar("CPU_THREADS", 0)
"""Worker threads of the CPU device (THREAD-split kernels run on this many cores); 0: one per
core this process may use."""
PROFILE = ContextVar("PROFILE", 0)
"""1: record every command's device time and write a Chrome/Perfetto trace at exit."""
PROFILE_PATH = ContextVar("PROFILE_PATH", "")
"""Where ``PROFILE=1`` writes its trace (default: ``fusegrad_trace.json`` in the temp folder)."""
HCQ_COMPILED = ContextVar("HCQ_COMPILED", 1)
"""1: the CPU device's rings run in a compiled worker loop (commands cost about a microsecond);
0: in Python threads (the reference implementation, and the fallback where the loop can't be
built)."""
