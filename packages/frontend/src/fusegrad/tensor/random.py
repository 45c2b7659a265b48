# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Random numbers: counter-based (threefry-2x32, Ops.THREEFRY), so a seed gives the same
numbers on every device and renderer. Each call draws a fresh key (seed, call counter); the
counter of element i is i."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, ClassVar

from fusegrad.tensor.convert import canonical_device
from fusegrad.tensor.create import _shape_arg, as_leaf, index_uop
from fusegrad.uop import Ops, UOp, argfix, dtypes, prod, to_dtype

if TYPE_CHECKING:
    from fusegrad.tensor.tensor import Tensor

_MANTISSA = {dtypes.float16: 11, dtypes.bfloat16: 8, dtypes.float32: 24, dtypes.float64: 53}


class _RngState:
    seed: ClassVar[int] = int(time.time())
    counter: ClassVar[int] = 0


class RandomMixin:
    """RNG methods (mixed into Tensor)."""

    @staticmethod
    def manual_seed(seed: int = 0) -> None:
        """Seed the generator: the same seed gives the same numbers everywhere."""
        _RngState.seed = int(seed) & 0xFFFFFFFF
        _RngState.counter = 0

    @classmethod
    def _random_bits(cls: type[Tensor], shape: tuple[Any, ...], device: str | None) -> Tensor:
        """uint64 random bits of ``shape``."""
        dev = canonical_device(device)
        n = int(prod(shape))
        key = _RngState.seed | (_RngState.counter << 32)
        _RngState.counter = (_RngState.counter + 1) & 0xFFFFFFFF
        counts = index_uop(n, dtypes.uint64, dev)
        keys = UOp.const(key, dtypes.uint64, dev, (n,))
        bits = UOp(Ops.THREEFRY, dtypes.uint64, (counts, keys))
        return cls(bits.reshape(shape))

    @classmethod
    def rand(
        cls: type[Tensor],
        *shape: Any,
        device: str | None = None,
        dtype: Any = None,
        contiguous: bool = True,
        **kwargs: Any,
    ) -> Tensor:
        """Uniform on [0, 1). ``contiguous=True`` (tinygrad's default) realizes the numbers
        into a buffer of their own when used; False leaves them fused into their users."""
        sh = _shape_arg(shape)
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        if dt not in _MANTISSA:
            raise RuntimeError(f"rand: {dt!r} is not a supported float dtype")
        m = _MANTISSA[dt]
        bits = cls._random_bits(sh, device) >> (64 - m)
        out = bits.cast(dt) * (2.0**-m)
        return _finish(out.contiguous() if contiguous else out, kwargs)

    @classmethod
    def randn(cls: type[Tensor], *shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        """Standard normal (Box-Muller); ``device=`` among ``kwargs``."""
        sh = _shape_arg(shape)
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        device = kwargs.pop("device", None)
        u = cls.rand(2, *sh, device=device, dtype=dtypes.float32, contiguous=False)
        u1, u2 = u[0], u[1]
        out = ((1 - u1).log() * -2).sqrt() * (u2 * (2 * math.pi)).cos()
        return _finish(out.cast(dt), kwargs)

    @classmethod
    def randint(
        cls: type[Tensor],
        *shape: Any,
        low: int = 0,
        high: int = 10,
        dtype: Any = dtypes.int32,
        **kwargs: Any,
    ) -> Tensor:
        """Uniform integers in [low, high) of an int ``dtype``; ``device=`` among ``kwargs``.
        TypeError for non-int bounds or dtype (tinygrad's and PyTorch's error)."""
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in (low, high)):
            raise TypeError(f"randint: low and high must be ints, got low={low!r}, high={high!r}")
        if dtype is not None and not dtypes.is_int(to_dtype(dtype)):
            raise TypeError(f"randint: dtype must be an int dtype, got {to_dtype(dtype)!r}")
        device = kwargs.pop("device", None)
        if high <= low:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        dt = to_dtype(dtype) if dtype is not None else dtypes.int32
        bits = cls._random_bits(_shape_arg(shape), device)
        out = (bits % (high - low)).cast(dtypes.int64) + low
        return _finish(out.cast(dt), kwargs)

    @classmethod
    def normal(
        cls: type[Tensor], *shape: Any, mean: float = 0.0, std: float = 1.0, **kwargs: Any
    ) -> Tensor:
        """Normal with ``mean`` and ``std``."""
        requires_grad = kwargs.pop("requires_grad", None)
        out = cls.randn(*shape, **kwargs) * std + mean
        return _finish(out, {"requires_grad": requires_grad})

    @classmethod
    def uniform(
        cls: type[Tensor],
        *shape: Any,
        low: float = 0.0,
        high: float = 1.0,
        dtype: Any = None,
        **kwargs: Any,
    ) -> Tensor:
        """Uniform on [low, high)."""
        requires_grad = kwargs.pop("requires_grad", None)
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        base = cls.rand(
            *shape, **kwargs, dtype=dt if dtypes.is_float(dt) else None, contiguous=False
        )
        out = (base * (high - low) + low).cast(dt)
        return _finish(out, {"requires_grad": requires_grad})

    @classmethod
    def scaled_uniform(cls: type[Tensor], *shape: Any, **kwargs: Any) -> Tensor:
        """Uniform on [-1, 1) scaled by 1/sqrt(numel)."""
        sh = argfix(*shape)
        return cls.uniform(*sh, low=-1.0, high=1.0, **kwargs).mul(prod(sh) ** -0.5)

    @classmethod
    def glorot_uniform(cls: type[Tensor], *shape: Any, **kwargs: Any) -> Tensor:
        """Glorot/Xavier uniform: bound sqrt(6 / (fan_in + fan_out))."""
        sh = argfix(*shape)
        bound = (6 / (sh[0] + prod(sh[1:]))) ** 0.5
        return cls.uniform(*sh, low=-bound, high=bound, **kwargs)

    @classmethod
    def kaiming_uniform(cls: type[Tensor], *shape: Any, a: float = 0.01, **kwargs: Any) -> Tensor:
        """Kaiming/He uniform for leaky relu slope ``a``."""
        sh = argfix(*shape)
        bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a**2)) / math.sqrt(prod(sh[1:]))
        return cls.uniform(*sh, low=-bound, high=bound, **kwargs)

    @classmethod
    def kaiming_normal(cls: type[Tensor], *shape: Any, a: float = 0.01, **kwargs: Any) -> Tensor:
        """Kaiming/He normal for leaky relu slope ``a``."""
        sh = argfix(*shape)
        std = math.sqrt(2.0 / (1 + a**2)) / math.sqrt(prod(sh[1:]))
        return cls.normal(*sh, mean=0.0, std=std, **kwargs)

    @classmethod
    def randperm(
        cls: type[Tensor], n: int, device: str | None = None, dtype: Any = None, **kwargs: Any
    ) -> Tensor:
        """A random permutation of 0..n-1."""
        dt = to_dtype(dtype) if dtype is not None else dtypes.int32
        return _finish(cls.rand(n, device=device, contiguous=False).argsort().cast(dt), kwargs)

    def rand_like(self: Tensor, **kwargs: Any) -> Tensor:
        """rand with this shape, dtype and device."""
        kwargs.setdefault("dtype", self.dtype if dtypes.is_float(self.dtype) else None)
        kwargs.setdefault("device", self.device)
        return type(self).rand(*self.shape, **kwargs)

    def randn_like(self: Tensor, dtype: Any = None, **kwargs: Any) -> Tensor:
        """randn with this shape, and this dtype and device unless given."""
        if dtype is None:
            dtype = self.dtype if dtypes.is_float(self.dtype) else None
        kwargs.setdefault("device", self.device)
        return type(self).randn(*self.shape, dtype=dtype, **kwargs)

    def threefry(self: Tensor, seed: Tensor) -> Tensor:
        """Threefry-2x32 of each element (a uint64 counter) under ``seed`` (a uint64 key,
        broadcast): the counter-based generator behind ``rand``."""
        x = self.cast(dtypes.uint64)
        key = seed if isinstance(seed, type(self)) else type(self)(seed, device=self.device)
        key = key.cast(dtypes.uint64)._broadcast_to(x.shape)
        return x._wrap(UOp(Ops.THREEFRY, dtypes.uint64, (x.uop, key.uop)), key)

    def multinomial(self: Tensor, num_samples: int = 1, replacement: bool = False) -> Tensor:
        """Indices sampled from the rows of this (unnormalized) probability tensor."""
        if self.ndim not in (1, 2):
            raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {self.ndim}")
        if num_samples <= 0:
            raise RuntimeError(f"cannot sample n_sample <= 0 samples, got {num_samples}")
        probs = self.unsqueeze(0) if self.ndim == 1 else self
        k = int(probs.shape[-1])
        if not replacement and num_samples > k:
            raise RuntimeError(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
            )
        rows = int(probs.shape[0])
        if replacement:
            cdf = probs.cumsum(1) / probs.sum(1, keepdim=True)
            u = type(self).rand(rows, num_samples, 1, device=self.device, contiguous=False)
            out = (u >= cdf.unsqueeze(1)).sum(2).minimum(k - 1).cast(dtypes.int32)
        else:
            u = type(self).rand(rows, k, device=self.device, contiguous=False)
            keys = probs.log() - (-(u.maximum(1e-12)).log()).log()
            out = keys.topk(num_samples, dim=1)[1].cast(dtypes.int32)
        return out.squeeze(0) if self.ndim == 1 else out

    def dropout(self: Tensor, p: float = 0.5) -> Tensor:
        """Zero elements with probability p and scale the rest by 1/(1-p) (training only)."""
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        if not type(self).training or p == 0:
            return self
        if p == 1:
            return self * 0
        keep = type(self).rand(*self.shape, device=self.device, contiguous=False) >= p
        return keep.where(self, 0) * (1 / (1 - p))


def _finish(t: Tensor, kwargs: dict[str, Any]) -> Tensor:
    return as_leaf(t, kwargs.get("requires_grad"))
