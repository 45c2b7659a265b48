# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Creation: empty, zeros, ones, full, arange, linspace, eye, the *_like family, from_blob.

``arange`` is built from constants and movement ops only (no data from the host): the index
``i`` of a length-2**k range is the sum over bits j of ``2**j`` placed on axis j of a
``(2,)*k`` view, so a kernel computes it with k selects instead of reading memory."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

import numpy as np

from fusegrad.engine import storage_dtype
from fusegrad.tensor.convert import canonical_device
from fusegrad.uop import Invalid, UOp, argfix, dtypes, prod, to_dtype
from fusegrad.uop.mixin import arange_uop, shape_arg
from fusegrad.uop.mixin import index_uop as index_uop  # noqa: PLC0414 (random.py imports it from here)

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor


def as_leaf(t: Tensor, requires_grad: bool | None) -> Tensor:
    """``t`` (the result of a creation method) made a leaf with ``requires_grad``."""
    t._leaf = True
    t._requires_grad = None
    t.requires_grad = requires_grad
    return t


class CreateMixin:
    """Creation classmethods and *_like methods (mixed into Tensor)."""

    @classmethod
    def empty(
        cls: type[Tensor], *shape: Any, device: str | None = None, dtype: Any = None, **kwargs: Any
    ) -> Tensor:
        """An uninitialized tensor (a fresh buffer)."""
        sh = shape_arg(shape)
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        size = prod(int(s.vmax) if isinstance(s, UOp) else s for s in sh)
        buf = UOp.new_buffer(canonical_device(device), int(size), dt)
        view = buf.reshape(tuple(int(s.vmax) if isinstance(s, UOp) else s for s in sh))
        if any(isinstance(s, UOp) for s in sh):
            view = view.shrink(tuple((0, s) for s in sh))
        return cls(view, **kwargs)

    @classmethod
    def full(
        cls: type[Tensor],
        shape: Any,
        fill_value: Any,
        dtype: Any = None,
        device: str | None = None,
        buffer: bool = True,
        **kwargs: Any,
    ) -> Tensor:
        """A tensor of ``fill_value`` (dtype inferred from it like PyTorch). ``buffer`` is
        tinygrad's (whether the constant gets a buffer); here constants always fold into the
        kernels that read them, so it changes nothing."""
        sh = shape_arg(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
        dt = to_dtype(dtype) if dtype is not None else dtypes.from_py(fill_value)
        uop = UOp.const(fill_value, dt, canonical_device(device), sh)
        return cls(uop, **kwargs)

    @classmethod
    def zeros(cls: type[Tensor], *shape: Any, **kwargs: Any) -> Tensor:
        """A tensor of zeros (default float)."""
        return cls.full(argfix(*shape), 0.0, **kwargs)

    @classmethod
    def ones(cls: type[Tensor], *shape: Any, **kwargs: Any) -> Tensor:
        """A tensor of ones (default float)."""
        return cls.full(argfix(*shape), 1.0, **kwargs)

    @classmethod
    def invalids(
        cls: type[Tensor], *shape: Any, device: str | None = None, dtype: Any = None, **kwargs: Any
    ) -> Tensor:
        """A tensor whose values are never defined (a placeholder to be assigned into)."""
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        return cls(UOp.const(Invalid, dt, canonical_device(device), shape_arg(shape)), **kwargs)

    @classmethod
    def arange(
        cls: type[Tensor],
        start: Any,
        stop: Any = None,
        step: Any = 1,
        dtype: Any = None,
        device: str | None = None,
        **kwargs: Any,
    ) -> Tensor:
        """start, start+step, ... below stop (ints give the default int, floats the default float)."""
        dt = to_dtype(dtype) if dtype is not None else None
        requires_grad = kwargs.pop("requires_grad", None)
        uop = arange_uop(start, stop, step, dt, canonical_device(device))
        return as_leaf(cls(uop, **kwargs), requires_grad)

    @classmethod
    def linspace(
        cls: type[Tensor],
        start: float,
        stop: float,
        steps: int,
        dtype: Any = None,
        device: str | None = None,
        **kwargs: Any,
    ) -> Tensor:
        """``steps`` evenly spaced values from start to stop inclusive."""
        if steps < 0:
            raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        if steps <= 1:
            return cls.full((steps,), start, device=device, dtype=dt, **kwargs)
        delta = (stop - start) / (steps - 1)
        requires_grad = kwargs.pop("requires_grad", None)
        i = cls.arange(steps, device=device, **kwargs).cast(
            dtypes.float32 if dt is not dtypes.float64 else dt
        )
        front = i * delta + start
        back = stop - (steps - 1 - i) * delta
        return as_leaf((i < steps // 2).where(front, back).cast(dt), requires_grad)

    @classmethod
    def eye(
        cls: type[Tensor],
        n: int,
        m: int | None = None,
        dtype: Any = None,
        device: str | None = None,
        **kwargs: Any,
    ) -> Tensor:
        """The n x m identity matrix."""
        if n < 0 or (m is not None and m < 0):
            raise RuntimeError(f"eye: n and m must be non-negative, got {n}, {m}")
        cols = n if m is None else m
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        rows_t = cls.arange(n, device=device).reshape(n, 1)
        cols_t = cls.arange(cols, device=device).reshape(1, cols)
        out = rows_t.eq(cols_t).cast(dt)
        return as_leaf(out, kwargs.get("requires_grad"))

    @classmethod
    def from_blob(cls: type[Tensor], ptr: int, shape: Any, **kwargs: Any) -> Tensor:
        """A tensor over ``prod(shape)`` elements of host memory at address ``ptr`` (no copy);
        ``dtype=``, ``device=`` and the constructor's other keywords in ``kwargs``."""
        dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        sh = shape_arg(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
        nbytes = int(prod(sh)) * dt.itemsize
        raw = (ctypes.c_char * nbytes).from_address(ptr)
        arr = np.frombuffer(memoryview(raw), dtype=storage_dtype(dt)).reshape(
            tuple(int(d) for d in sh)
        )
        return cls(arr, device=device, dtype=dt, **kwargs)

    def full_like(
        self: Tensor,
        fill_value: Any,
        dtype: Any = None,
        device: str | None = None,
        buffer: bool = True,
        **kwargs: Any,
    ) -> Tensor:
        """A tensor of ``fill_value`` with this shape (and dtype/device unless given).

        ``buffer`` is tinygrad's; fusegrad's constants fold into the kernels that read them
        and get storage when realized either way, so it changes nothing here."""
        dt = self.dtype if dtype is None else dtype
        dev = self.device if device is None else device
        return type(self).full(self.shape, fill_value, dtype=dt, device=dev, **kwargs)

    def zeros_like(self: Tensor, **kwargs: Any) -> Tensor:
        """Zeros with this shape, dtype and device."""
        return self.full_like(0, **kwargs)

    def ones_like(self: Tensor, **kwargs: Any) -> Tensor:
        """Ones with this shape, dtype and device."""
        return self.full_like(1, **kwargs)

    def empty_like(
        self: Tensor, dtype: Any = None, device: str | None = None, **kwargs: Any
    ) -> Tensor:
        """An uninitialized tensor with this shape (and dtype/device unless given)."""
        dt = self.dtype if dtype is None else dtype
        dev = self.device if device is None else device
        return type(self).empty(self.shape, dtype=dt, device=dev, **kwargs)
