"""A schedule-cache hit launches through the device graph's ``submit_timed`` (the compiled
ring packs timestamps, launches and the engine's signal as slots): the kernels run, their
times are counted, and reading a result waits for the signal."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import GlobalCounters, Tensor
from fusegrad.engine import synchronize
from fusegrad.runtime import Device, HCQGraph

pytestmark = pytest.mark.kernels


def test_cache_hits_go_through_the_graph_and_are_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    graph_class = Device["CPU"].graph
    if graph_class is None:
        pytest.skip("the CPU device runs Python rings here: no graph")
    calls: list[int] = []
    real = graph_class.submit_timed

    def counting(self: HCQGraph, *args: object) -> None:
        calls.append(len(self))
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(graph_class, "submit_timed", counting)
    x = Tensor(np.zeros(3, np.float32)).realize()
    x = (x + 2).realize()  # the miss
    synchronize()
    GlobalCounters.reset()
    for _ in range(6):
        x = (x + 2).realize()
    synchronize()
    assert calls == [1] * 6  # every hit: one graph submission of its one kernel
    assert GlobalCounters.kernel_count == 6
    assert GlobalCounters.time_sum_s > 0  # both timestamps were written
    np.testing.assert_array_equal(x.numpy(), [14.0, 14.0, 14.0])
