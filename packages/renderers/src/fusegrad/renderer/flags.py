"""Knobs: every environment variable fusegrad.renderer reads is declared here, once.

Each is a ``ContextVar`` (read from the environment at import, overridable in a scope with
``Context(NAME=value)``); see docs/env_vars.md.
"""

from __future__ import annotations

from fusegrad.uop import ContextVar

CC = ContextVar("CC", "")
"""The C compiler command for the C renderer; empty: the first of gcc, clang, cc on PATH."""
CC_FLAGS = ContextVar("CC_FLAGS", "-O2 -march=native")
"""Optimization flags for the C compiler (the IEEE-preserving flags are always added)."""
LLVM_OPT = ContextVar("LLVM_OPT", 2)
"""Optimization level of the LLVM pipeline and code generator (0-3)."""
LLVM_FASTMATH = ContextVar("LLVM_FASTMATH", 0)
"""1: render float ops with LLVM's ``fast`` flags (reassociation, FMA contraction, no NaN/inf
guarantees). Off by default: results are IEEE and match the PYTHON emulator."""
LLVM_CPU = ContextVar("LLVM_CPU", "")
"""Target CPU for the LLVM compiler (e.g. ``x86-64-v3``); empty: the host CPU."""
LLVM_FEATURES = ContextVar("LLVM_FEATURES", "")
"""Target feature string for the LLVM compiler (e.g. ``+avx2,+fma``); empty: the host's."""
