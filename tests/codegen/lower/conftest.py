"""Lowering tests: the IR specs are checked at every stage (``SPEC=1``)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

with warnings.catch_warnings():
    # TODO(#9): fusegrad.uop's Ops enum warns on Python 3.11 (enum.auto after an alias)
    warnings.simplefilter("ignore", DeprecationWarning)
    import fusegrad.uop

fusegrad.uop.SPEC.value = 1

# the sibling helper modules (targets, corpus, npeval) import by name
sys.path.insert(0, str(Path(__file__).parent))
