"""A one-target realize whose template is cached runs without making a SINK or a lookup
(``engine.kernels._hit``): it is keyed as the lookup keys ``SINK(target)``, counted as one
cache hit, and anything the fast path can't take goes through ``lookup_schedule``."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.codegen.schedule import lookup_schedule, schedule_cache, structure_key
from fusegrad.codegen.schedule.cache import target_key
from fusegrad.uop import UOp

pytestmark = pytest.mark.kernels  # realizes on the kernel pipeline (the schedule cache's user)


def test_target_key_is_the_key_of_its_sink() -> None:
    a = Tensor.empty(4).realize()
    y = (a * 3 + 1).uop
    found = target_key(y)
    assert found is not None
    key, inputs, var_vals = found
    sink_key, sink_inputs, sink_vals = structure_key(UOp.sink(y))
    assert key is sink_key and inputs == sink_inputs == [a.uop] and var_vals == sink_vals == {}
    two = structure_key(UOp.sink(y, (a + 2).uop))[0]
    assert two is not key  # a SINK of two targets is another key
    assert target_key(UOp.sink(y)) is None  # a SINK as the target: keyed by its own SINK


def test_cached_one_target_realize_skips_the_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    x = Tensor([0.0]).realize()
    for _ in range(2):  # the template and its plan are made
        x = (x + 1).realize()
    calls: list[UOp] = []
    real = lookup_schedule

    def counting(sink: UOp) -> object:
        calls.append(sink)
        return real(sink)

    monkeypatch.setattr("fusegrad.engine.kernels.lookup_schedule", counting)
    hits, misses = schedule_cache.hits, schedule_cache.misses
    for _ in range(10):
        x = (x + 1).realize()
    assert x.item() == 12.0
    assert calls == []  # every step was a hit taken without the lookup
    assert (schedule_cache.hits - hits, schedule_cache.misses - misses) == (10, 0)
    y = (x * 5).realize()  # a new structure: the lookup path, one miss
    assert len(calls) == 1 and schedule_cache.misses - misses == 1
    assert y.item() == 60.0


def test_several_targets_and_new_structure_take_the_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = Tensor(np.arange(4, dtype=np.float32)).realize()
    calls: list[UOp] = []
    real = lookup_schedule

    def counting(sink: UOp) -> object:
        calls.append(sink)
        return real(sink)

    monkeypatch.setattr("fusegrad.engine.kernels.lookup_schedule", counting)
    for step in range(3):
        b, c = a + step, a * step
        Tensor.realize(b, c)
        np.testing.assert_allclose(b.numpy(), np.arange(4) + step)
        np.testing.assert_allclose(c.numpy(), np.arange(4) * step)
    assert len(calls) == 3  # two targets: one SINK and one lookup per realize
