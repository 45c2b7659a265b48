"""A store in a loop over nothing never runs, also when its index does not use that loop (the
empty axis simplified out of it); a reduce over an empty range still stores its identity."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor


@pytest.mark.parametrize(
    "index",
    [(0, slice(None, 0), None, slice(None)), (slice(None), slice(2, 2)), (1, slice(3, 1))],
)
def test_setitem_of_an_empty_selection_writes_nothing(index: tuple) -> None:
    base = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    x = Tensor(base.copy()).realize()
    x[index] = 7
    want = base.copy()
    want[index] = 7
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), base)


def test_reductions_over_empty_axes_still_store() -> None:
    assert Tensor.zeros(3, 0).sum(1).tolist() == [0.0, 0.0, 0.0]
    assert Tensor.ones(2, 0, dtype="int32").prod(1).tolist() == [1, 1]
