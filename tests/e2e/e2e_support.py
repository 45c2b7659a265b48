"""Helpers for the end-to-end tests (``from e2e_support import ...``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from fusegrad.engine import GlobalCounters, KernelExecutor, get_executor


def kernels_run(fn: Any) -> int:
    """How many kernels ``fn()`` launched."""
    GlobalCounters.reset()
    fn()
    return GlobalCounters.kernel_count


def assert_close(got: Any, want: Any, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """``got`` (a Tensor or array) equals ``want`` in shape, NumPy dtype and value."""
    g = got.numpy() if hasattr(got, "numpy") and not isinstance(got, np.ndarray) else got
    w = np.asarray(want)
    assert isinstance(get_executor(), KernelExecutor)
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
    if g.dtype.kind == "f":
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)
