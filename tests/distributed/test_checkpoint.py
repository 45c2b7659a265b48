"""Checkpoints: rank 0 writes one safetensors file that every rank loads; sharded saves (each
rank its rows, plus an index) load back whole, under MPI and in a plain process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fusegrad.distributed import load_sharded
from mpi_jobs import requires_mpi, run_mpi


@requires_mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_checkpoints_round_trip_on_every_rank(ranks: int, tmp_path: Path) -> None:
    run_mpi(ranks, "checkpoint", str(tmp_path)).ok()
    # the sharded files load without MPI too, in a process of its own
    loaded = load_sharded(tmp_path / "replicated")
    np.testing.assert_array_equal(
        loaded["w"].numpy(), np.arange(30, dtype=np.float32).reshape(10, 3) / 7
    )
    assert loaded["s"].numpy() == 2.5
    assert loaded["few"].shape == (1, 4)
    rows = [np.full((q + 1, 2), q) for q in range(ranks)]
    np.testing.assert_array_equal(
        load_sharded(tmp_path / "slices")["part"].numpy(), np.concatenate(rows)
    )


def test_load_sharded_names_a_missing_index(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"load_sharded: no index.json in"):
        load_sharded(tmp_path)
    (tmp_path / "index.json").write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="is not a sharded checkpoint index"):
        load_sharded(tmp_path)
