"""``fusegrad.uop.validate``: z3 checks of UOp expressions at tinygrad's import path
(``uops_to_z3``), re-exported from ``fusegrad.uop.prove`` (z3 optional)."""

from __future__ import annotations

from fusegrad.uop.prove import Proof, prove_equal, prove_simplify, uops_to_z3, validate_index

__all__ = ["Proof", "prove_equal", "prove_simplify", "uops_to_z3", "validate_index"]
