"""``mpiexec -n 2 python -m fusegrad.examples.train_digits --distributed`` trains the same model
as one process (each rank half of every batch): the same loss and test accuracy. NOOPT=1 as
in tests/e2e/test_train_digits.py (unoptimized kernels lower in seconds)."""

from __future__ import annotations

import re

import pytest
from fusegrad import Context
from mpi_jobs import launch, requires_mpi

pytest.importorskip("sklearn")

from fusegrad.examples import train_digits

ARGS = ["--epochs", "1", "--steps", "20", "--lr", "0.01"]


@requires_mpi
def test_distributed_example_trains_like_one_process() -> None:
    argv = ["-m", "fusegrad.examples.train_digits", *ARGS, "--distributed"]
    run = launch(2, argv, timeout=300, NOOPT="1").ok()
    line = re.search(r"epoch +1 +loss ([\d.]+) +test accuracy ([\d.]+)%", run.stdout)
    assert line is not None, run.stdout
    assert run.stdout.count("final test accuracy") == 1  # rank 0 prints, rank 1 is quiet
    with Context(NOOPT=1):
        single = train_digits.train(epochs=1, max_steps=20, lr=0.01, quiet=True)
    assert abs(float(line[1]) - single.losses[0]) < 2e-5, (line[0], single.losses)
    assert float(line[2]) == pytest.approx(100 * single.accuracies[0], abs=0.006)
    assert single.accuracies[0] > 0.4


def test_batch_must_split_over_the_ranks() -> None:
    with pytest.raises(ValueError, match="does not split"):
        train_digits.batch_part(32, 0, 3)
    assert train_digits.batch_part(32, 1, 4) == slice(8, 16)
