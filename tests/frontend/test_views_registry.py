"""The live-tensor registries (``ALL_TENSORS``, ``LAZY_TENSORS``): plain dicts of weak
references without callbacks. Dead entries are skipped and dropped, an id reused by a new
tensor never finds the old one, and the registries stay bounded."""

from __future__ import annotations

import gc
import weakref

import numpy as np
from fusegrad import Tensor
from fusegrad.tensor.core import ALL_TENSORS, LAZY_TENSORS, TensorRegistry


class _Thing:
    pass


def test_dead_entries_are_skipped_and_dropped() -> None:
    reg = TensorRegistry()
    keep = [_Thing() for _ in range(3)]
    gone = [_Thing() for _ in range(5)]
    for t in [*keep, *gone]:
        reg[id(t)] = weakref.ref(t)
    ids = [id(t) for t in gone]
    del gone, t
    gc.collect()
    assert all(i not in reg for i in ids)  # dead: not "in" though still stored
    live = reg.values()
    assert sorted(map(id, live)) == sorted(map(id, keep))
    assert len(reg) == 3  # values() dropped the dead entries


def test_a_reused_id_never_finds_the_dead_tensor() -> None:
    reg = TensorRegistry()
    old = _Thing()
    reg[id(old)] = weakref.ref(old)
    key = id(old)
    del old
    gc.collect()
    assert key not in reg
    assert reg.values() == []
    new = _Thing()
    if id(new) == key:  # the allocator may hand the address out again
        assert key not in reg  # not registered: the stale entry is gone or dead
    reg[id(new)] = weakref.ref(new)
    assert id(new) in reg and reg.values() == [new]


def test_lazy_tensors_dropped_without_realize_leave_no_live_entries() -> None:
    x = Tensor(np.ones(3, np.float32)).realize()
    made = [x * float(i) for i in range(50)]
    ids = [id(t) for t in made]
    assert all(i in LAZY_TENSORS for i in ids)
    del made
    gc.collect()
    assert all(i not in LAZY_TENSORS for i in ids)
    y = (x + 1).realize()  # a realize walks the lazy registry: the dead entries go
    stale = [i for i in ids if (r := dict.get(LAZY_TENSORS, i)) is not None and r() is None]
    assert stale == []
    np.testing.assert_array_equal(y.numpy(), [2, 2, 2])


def test_all_tensors_stays_bounded_and_backward_finds_its_leaves() -> None:
    w = Tensor(np.ones(4, np.float32), requires_grad=True)
    for _ in range(2):
        junk = [Tensor(np.zeros(1, np.float32)) + i for i in range(2500)]
        del junk
        Tensor(np.zeros(1, np.float32)).realize()  # a realize purges past the threshold
    gc.collect()
    Tensor(np.zeros(1, np.float32)).realize()
    assert len(ALL_TENSORS) <= max(ALL_TENSORS.purge_at, 4096) + 16
    (w * 3).sum().backward()
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), [3, 3, 3, 3])
    assert any(t is w for t in ALL_TENSORS.values())
