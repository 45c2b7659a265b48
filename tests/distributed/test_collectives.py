"""Collectives across processes: every collective and dtype on 2 and 4 ranks (4 oversubscribe
the 2-core CI machine), and the faults: a raising rank, mismatched calls, a dead peer."""

from __future__ import annotations

import time

import pytest
from mpi_jobs import requires_mpi, run_mpi

pytestmark = requires_mpi


@pytest.mark.parametrize("ranks", [2, 4])
def test_every_collective_and_dtype_matches_numpy(ranks: int) -> None:
    run = run_mpi(ranks, "collectives").ok()
    for r in range(ranks):
        assert f"rank {r}: collectives ok" in run.stdout


@pytest.mark.parametrize("ranks", [2, 4])
def test_a_raising_rank_aborts_the_job_with_its_message(ranks: int) -> None:
    start = time.monotonic()
    run = run_mpi(ranks, "faults", "raise", timeout=60)
    assert run.returncode != 0
    assert f"rank 1 of {ranks} failed" in run.stderr
    assert "ValueError: boom from rank 1" in run.stderr
    assert time.monotonic() - start < 50  # the others sat in a barrier: the abort ended them


@pytest.mark.parametrize("ranks", [2, 4])
def test_mismatched_calls_raise_on_every_rank_naming_both(ranks: int) -> None:
    run = run_mpi(ranks, "faults", "mismatch").ok()
    for r in range(ranks):
        assert f"rank {r}: mismatch ok" in run.stdout
    # counted over the whole output: mpiexec forwards each rank's output in chunks, and on a
    # busy machine one rank's chunk can land inside another's line
    out = run.stdout
    shapes = "rank 0 called all_reduce(dtype=dtypes.float32, shape=(4, 4), op='sum'), rank 1 "
    shapes += "called all_reduce(dtype=dtypes.float32, shape=(4, 5), op='sum')"
    assert out.count(shapes) == ranks, out
    # every rank names rank 0's float16 call and rank 1's float32 one
    assert out.count("rank 0 called all_reduce(dtype=dtypes.float16, shape=(3,)") == ranks, out
    assert out.count("rank 1 called all_reduce(dtype=dtypes.float32, shape=(3,)") == ranks, out
    assert out.count("called broadcast(") == ranks and out.count("called all_gather(") == ranks, out


def test_a_dead_peer_times_out_and_aborts_the_job() -> None:
    start = time.monotonic()
    run = run_mpi(2, "faults", "timeout", timeout=60)
    assert run.returncode != 0
    assert "DistributedTimeoutError: all_reduce: rank 0 waited 1 s" in run.stderr
    assert time.monotonic() - start < 50  # rank 1 sleeps 300 s: the abort ended it
