"""Small results of a schedule-cache hit take the buffers of earlier results nobody holds
any more (issue 29's plain dispatch: no BUFFER made, no memory allocated or freed per step),
and never the buffers someone can still read: a live tensor, a pending copy to another
device, a TinyJit capture's fixed slot, a view."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from fusegrad import GlobalCounters, Tensor, TinyJit
from fusegrad.engine import synchronize
from fusegrad.engine.plan import RECYCLE_BYTES, SPARE_RESULTS

pytestmark = pytest.mark.kernels


def _identity(t: Tensor) -> object:
    """The number of the UNIQUE under ``t``'s BUFFER (never drawn twice, unlike ``id``)."""
    assert t.uop.op.name == "BUFFER", t.uop
    return t.uop.src[0].arg


def _chain(x: Tensor, steps: int) -> tuple[Tensor, set[object]]:
    seen: set[object] = set()
    for _ in range(steps):
        x = (x + 1).realize()
        seen.add(_identity(x))
    return x, seen


def test_dependent_chain_cycles_through_a_few_buffers() -> None:
    x = Tensor(np.zeros(3, np.float32)).realize()
    x, seen = _chain(x, 30)
    assert len(seen) <= SPARE_RESULTS + 2  # the miss, the first hit, then recycled ones
    np.testing.assert_array_equal(x.numpy(), [30.0, 30.0, 30.0])


def test_results_still_held_keep_their_values() -> None:
    x = Tensor(np.zeros(2, np.float32)).realize()
    kept = []
    for _ in range(12):
        x = (x + 1).realize()
        kept.append(x)
    assert len({_identity(t) for t in kept}) == 12
    for i, t in enumerate(kept):
        np.testing.assert_array_equal(t.numpy(), [i + 1.0, i + 1.0])


def test_a_result_read_by_a_pending_copy_is_not_recycled() -> None:
    x = Tensor(np.zeros(4, np.float32)).realize()
    x, _ = _chain(x, 3)
    y = (x + 1).realize()  # 4.0
    moved = y.to("CPU:1")  # lazy: the copy reads y's buffer when realized
    del y
    x, _ = _chain(x, 10)
    np.testing.assert_array_equal(moved.numpy(), [4.0] * 4)
    np.testing.assert_array_equal(x.numpy(), [13.0] * 4)


def test_a_result_copied_to_another_device_is_not_recycled_later() -> None:
    x = Tensor(np.zeros(4, np.float32)).realize()
    x, _ = _chain(x, 3)
    y = (x + 1).realize()
    moved = y.to("CPU:1").realize()  # the copy may still be queued on CPU:1
    del y
    x, _ = _chain(x, 10)
    np.testing.assert_array_equal(moved.numpy(), [4.0] * 4)


def test_a_tinyjit_weight_from_a_cache_hit_is_not_recycled() -> None:
    base = Tensor(np.zeros(5, np.float32)).realize()
    base, _ = _chain(base, 3)  # the (x + 1) template is a hit from here on
    held = [(base + 1).realize()]  # the weight, 4.0, in a recyclable result buffer
    jit = TinyJit(lambda a: (a * held[0]).realize())
    ones = Tensor(np.ones(5, np.float32)).realize()
    for _ in range(3):
        out = jit(ones)
    held.clear()  # only the capture reaches the weight's memory now
    gc.collect()
    base, _ = _chain(base, 10)  # would overwrite the weight if its buffer were recycled
    out = jit(ones)
    np.testing.assert_array_equal(out.numpy(), [4.0] * 5)


def test_a_viewed_result_is_not_recycled() -> None:
    x = Tensor(np.zeros(4, np.float32)).realize()
    x, _ = _chain(x, 3)
    y = (x + 1).realize()
    part = y[1:3]  # a view of y's buffer
    del y
    x, _ = _chain(x, 10)
    np.testing.assert_array_equal(part.numpy(), [4.0, 4.0])


def test_large_results_go_back_to_the_allocator() -> None:
    n = RECYCLE_BYTES // 4 + 1
    x = Tensor(np.zeros(n, np.float32)).realize()
    x, seen = _chain(x, 6)
    assert len(seen) == 6  # every step a new buffer
    before = GlobalCounters.mem_used
    del x
    synchronize()
    gc.collect()
    assert GlobalCounters.mem_used <= before - n * 4
