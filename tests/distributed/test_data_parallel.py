"""Data-parallel training over MPI equals single-process training on the concatenated batch
(SGD with momentum and Adam, 20 steps, float32, to 1e-6), eagerly and under TinyJit."""

from __future__ import annotations

import pytest
from fusegrad import Tensor
from fusegrad.distributed import plan_buckets
from mpi_jobs import requires_mpi, run_mpi


@requires_mpi
@pytest.mark.parametrize(
    ("ranks", "optimizer", "mode"),
    [(2, "sgd", "eager"), (2, "adam", "jit"), (4, "sgd", "jit")],
)
def test_training_equals_one_process_on_the_whole_batch(
    ranks: int, optimizer: str, mode: str
) -> None:
    run = run_mpi(ranks, "training", optimizer, mode, timeout=240).ok()
    assert "max |distributed - single|" in run.stdout
    for r in range(ranks):
        assert f"rank {r}: training {optimizer} ok" in run.stdout


def test_buckets_follow_backward_order_and_split_by_size_and_dtype() -> None:
    a, b, c = Tensor.empty(100), Tensor.empty(50), Tensor.empty(300)  # 400, 200, 1200 bytes
    h = Tensor.empty(10).half()
    buckets = plan_buckets([a, b, h, c], bucket_bytes=700)
    assert [[id(p) for p in k.params] for k in buckets] == [[id(c)], [id(h)], [id(b), id(a)]]
    assert [k.offsets for k in buckets] == [[0], [0], [0, 50]]
    assert [k.size for k in buckets] == [300, 10, 150]
    with pytest.raises(ValueError, match="bucket_bytes must be > 0"):
        plan_buckets([a], bucket_bytes=0)
