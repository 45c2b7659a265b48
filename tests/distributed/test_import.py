"""fusegrad.distributed imports without mpi4py; using it then says what to install."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
sys.modules['mpi4py'] = None  # as if not installed
from fusegrad import distributed as dist
assert not dist.is_initialized()
try:
    dist.init()
except ImportError as e:
    print('ImportError:', e)
try:
    dist.rank()
except RuntimeError as e:
    print('RuntimeError:', e)
"""


def test_imports_without_mpi4py_and_names_the_package_when_used() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "ImportError: fusegrad.distributed needs mpi4py" in out
    assert "pip install 'fusegrad[mpi]'" in out
    assert "RuntimeError: fusegrad.distributed: call distributed.init() first" in out
