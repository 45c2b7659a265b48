"""Launching MPI jobs from tests: ``run_mpi(n, worker)`` runs ``mpiexec -n n python
workers/<worker>.py`` under a timeout, so a hang is a failure; ``requires_mpi`` skips a test
module without mpi4py or mpiexec."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"
ROOT = Path(__file__).parents[2]


def mpiexec() -> str | None:
    """The mpiexec next to this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


requires_mpi = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or mpiexec() is None,
    reason="mpi4py / mpiexec not installed (pip install mpi4py mpich)",
)


@dataclass(frozen=True)
class Run:
    """What an mpiexec job did."""

    returncode: int
    stdout: str
    stderr: str

    def ok(self) -> Run:
        """Assert every rank exited 0; return self."""
        assert self.returncode == 0, f"rc={self.returncode}\n{self.stdout}\n{self.stderr}"
        return self


def run_mpi(n: int, worker: str, *args: str, timeout: float = 120) -> Run:
    """Run ``workers/<worker>.py args`` on ``n`` ranks; fails the test after ``timeout`` s."""
    return launch(n, [str(WORKERS / f"{worker}.py"), *args], timeout)


def launch(n: int, argv: list[str], timeout: float = 120, **env: str) -> Run:
    """Run ``python argv`` on ``n`` ranks (``env`` added to the environment; one CPU worker
    thread per rank); fails the test after ``timeout`` seconds."""
    exe = mpiexec()
    assert exe is not None
    path = os.pathsep.join(p for p in (str(WORKERS), os.environ.get("PYTHONPATH", "")) if p)
    full_env = dict(os.environ, PYTHONPATH=path, CPU_THREADS="1", PYTHONUNBUFFERED="1")
    full_env.update(env)
    cmd = [exe, "-n", str(n), sys.executable, *argv]
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=full_env, check=False
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpiexec -n {n} {argv} hung for {timeout} s:\n{e.stdout}\n{e.stderr}")
    return Run(done.returncode, done.stdout, done.stderr)
