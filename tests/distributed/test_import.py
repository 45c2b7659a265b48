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


def test_each_rank_gets_a_device_unit_and_a_share_of_the_cores() -> None:
    from fusegrad.distributed import rank_device, threads_per_rank

    assert rank_device("CUDA", 3) == "CUDA:3"  # one GPU per rank on the host
    assert rank_device("CUDA:1", 3) == "CUDA:1"  # a named unit stays
    assert rank_device("CPU", 3) == "CPU" and rank_device("CPU:LLVM", 0) == "CPU:LLVM"
    assert threads_per_rank(16, 4) == 4
    assert threads_per_rank(2, 4) == 1  # oversubscribed: still one thread each
