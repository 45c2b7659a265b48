"""A realize rewrites the graphs of the live lazy tensors only (``LAZY_TENSORS``), not of every
live tensor; the tensors it must rewrite are all found."""

from __future__ import annotations

import gc

import numpy as np
from fusegrad import Tensor
from fusegrad.tensor.core import LAZY_TENSORS


def test_a_realized_assign_is_not_run_again_by_a_later_reader() -> None:
    w = Tensor(np.ones(3, np.float32)).realize()
    w.assign(w + 1.0)
    y = w * 2.0  # reads the assign's value: its graph holds the AFTER/STORE
    z = Tensor(w)  # a tensor made from a lazy one is tracked too
    w.realize()
    np.testing.assert_array_equal(y.numpy(), [4, 4, 4])
    np.testing.assert_array_equal(z.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(w.numpy(), [2, 2, 2])  # stored once


def test_readers_get_the_realized_buffer() -> None:
    a = Tensor(np.arange(4, dtype=np.float32)) + 1.0
    b = a * 2.0
    a.realize()
    assert a.uop in b.uop.src or a.uop in b.uop.toposort()
    np.testing.assert_array_equal(b.numpy(), (np.arange(4) + 1.0) * 2)


def test_realized_tensors_leave_the_registry() -> None:
    gc.collect()
    before = len(LAZY_TENSORS)
    keep = [Tensor(np.ones(2, np.float32)).realize() for _ in range(50)]
    x = Tensor([0.0]).realize()
    for _ in range(20):
        x = (x + 1.0).realize()
    gc.collect()
    # the next realize drops every tensor realized before it (the newest result stays until then)
    assert not any(id(t) in LAZY_TENSORS for t in keep)
    assert len(LAZY_TENSORS) <= before + 2
    assert x.item() == 20.0
