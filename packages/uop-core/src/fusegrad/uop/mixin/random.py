"""Random numbers for ``UOp`` and ``Tensor`` alike: counter-based (threefry-2x32,
``Ops.THREEFRY``), so a seed gives the same numbers on every device and renderer. Each call
draws a fresh key (seed, call counter); the counter of element i is i.

The seed and call counter live in an ``RngState`` the class points to (``_rng``): ``UOp`` has
its own, the frontend gives ``Tensor`` its own, so ``UOp.manual_seed`` and
``Tensor.manual_seed`` seed each class's draws, and the same seed gives both the same graph.

>>> from fusegrad.uop import UOp
>>> UOp.manual_seed(7)
>>> UOp.rand(2, 3, device="CPU").shape
(2, 3)
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, ClassVar, Self

from fusegrad.uop.dtype import DType, dtypes, to_dtype
from fusegrad.uop.flags import TRAINING
from fusegrad.uop.helpers import argfix, prod
from fusegrad.uop.mixin.base import OpMixinBase
from fusegrad.uop.mixin.create import DefaultDevice, index_uop
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.uop import UOp, sint

MANTISSA = {dtypes.float16: 11, dtypes.bfloat16: 8, dtypes.float32: 24, dtypes.float64: 53}
"""The random bits a uniform float of each dtype takes (its significand width)."""


class RngState:
    """A generator's seed and call counter (the key of the next draw is
    ``seed | counter << 32``)."""

    __slots__ = ("counter", "seed")

    def __init__(self, seed: int | None = None) -> None:
        self.seed = int(time.time()) & 0xFFFFFFFF if seed is None else seed & 0xFFFFFFFF
        self.counter = 0

    def next_key(self) -> int:
        """The key of the next draw (the counter moves on)."""
        key = self.seed | (self.counter << 32)
        self.counter = (self.counter + 1) & 0xFFFFFFFF
        return key


def shape_arg(shape: tuple[Any, ...]) -> tuple[sint, ...]:
    """A creation shape (ints or symbolic sizes, given flat or as one sequence), checked."""
    from fusegrad.uop.uop import UOp

    out = argfix(*shape)
    for s in out:
        if isinstance(s, bool) or not isinstance(s, (int, UOp)):
            raise TypeError(f"shape must be ints, got {out}")
        if isinstance(s, int) and s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(out)}")
    return tuple(out)


def _dtype(dtype: Any, default: DType) -> DType:
    return to_dtype(dtype) if dtype is not None else default


class RandomMixin(OpMixinBase):
    """rand/randn/randint/normal/uniform/..., threefry, random_bits, dropout, multinomial."""

    __slots__ = ()

    _rng: ClassVar[RngState] = RngState()

    # -- primitives a class may override (the defaults are UOp's) --------------------------------
    @classmethod
    def _from_uop(cls, uop: UOp) -> Self:
        """A value of this class computing ``uop`` (a UOp: itself)."""
        return uop  # type: ignore[return-value]

    @classmethod
    def _canonical_device(cls, device: Any) -> Any:
        """``device`` as this class names it (None: the default device)."""
        return DefaultDevice.of(device)

    def _as_leaf(self, requires_grad: bool | None) -> Self:
        """A created value made a leaf (a UOp has no gradient state: True is a TypeError)."""
        if requires_grad:
            raise TypeError("requires_grad is a Tensor's: a UOp has no gradient state")
        return self

    # -- the generator ---------------------------------------------------------------------------
    @classmethod
    def manual_seed(cls, seed: int = 0) -> None:
        """Seed this class's generator: the same seed gives the same numbers everywhere."""
        cls._rng.seed = int(seed) & 0xFFFFFFFF
        cls._rng.counter = 0

    @classmethod
    def _random_bits(cls, shape: tuple[Any, ...], device: Any) -> Self:
        """uint64 random bits of ``shape`` under the next key."""
        dev = cls._canonical_device(device)
        n = int(prod(shape))
        counts = index_uop(n, dtypes.uint64, dev)
        from fusegrad.uop.uop import UOp

        keys = UOp.const(cls._rng.next_key(), dtypes.uint64, dev, (n,))
        bits = UOp(Ops.THREEFRY, dtypes.uint64, (counts, keys))
        return cls._from_uop(bits._mop(Ops.RESHAPE, tuple(shape)))

    @classmethod
    def random_bits(cls, key: Self, counter: Self, num: int) -> Self:
        """``num`` uint64 random words: threefry of the counters ``counter .. counter+num-1``
        under ``key`` (both 0-d values; uint64 after a cast)."""
        if not isinstance(num, int) or num < 0:
            raise ValueError(f"random_bits: num must be a non-negative int, got {num!r}")
        for name, v in (("key", key), ("counter", counter)):
            if not isinstance(v, OpMixinBase) or v.ndim != 0:
                raise TypeError(f"random_bits: {name} must be a 0-d value, got {v!r}")
        counts = type(key).arange(num, device=counter.device, dtype=dtypes.uint64) + counter.cast(
            dtypes.uint64
        )
        return counts.threefry(key)

    def threefry(self, seed: Self) -> Self:
        """Threefry-2x32 of each element (a uint64 counter) under ``seed`` (a uint64 key,
        broadcast): the counter-based generator behind ``rand``."""
        x = self.cast(dtypes.uint64)
        key = seed if isinstance(seed, OpMixinBase) else x._const(seed, dtypes.uint64, ())
        key = key.cast(dtypes.uint64)._broadcast_to(x.shape)
        return x._wrap(_threefry(x, key), key)

    # -- distributions ---------------------------------------------------------------------------
    @classmethod
    def rand(
        cls,
        *shape: Any,
        device: str | None = None,
        dtype: Any = None,
        contiguous: bool = True,
        **kwargs: Any,
    ) -> Self:
        """Uniform on [0, 1). ``contiguous=True`` (tinygrad's default) realizes the numbers
        into a buffer of their own when used; False leaves them fused into their users."""
        sh = shape_arg(shape)
        dt = _dtype(dtype, dtypes.default_float)
        if dt not in MANTISSA:
            raise RuntimeError(f"rand: {dt!r} is not a supported float dtype")
        m = MANTISSA[dt]
        bits = cls._random_bits(sh, device) >> (64 - m)
        out = bits.cast(dt) * (2.0**-m)
        return (out.contiguous() if contiguous else out)._as_leaf(kwargs.get("requires_grad"))

    @classmethod
    def randn(cls, *shape: Any, dtype: Any = None, **kwargs: Any) -> Self:
        """Standard normal (Box-Muller); ``device=`` among ``kwargs``."""
        sh = shape_arg(shape)
        dt = _dtype(dtype, dtypes.default_float)
        device = kwargs.pop("device", None)
        u = cls.rand(2, *sh, device=device, dtype=dtypes.float32, contiguous=False)
        u1, u2 = u[0], u[1]
        out = ((1 - u1).log() * -2).sqrt() * (u2 * (2 * math.pi)).cos()
        return out.cast(dt)._as_leaf(kwargs.get("requires_grad"))

    @classmethod
    def randint(
        cls, *shape: Any, low: int = 0, high: int = 10, dtype: Any = dtypes.int32, **kwargs: Any
    ) -> Self:
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
        dt = _dtype(dtype, dtypes.int32)
        bits = cls._random_bits(shape_arg(shape), device)
        out = (bits % (high - low)).cast(dtypes.int64) + low
        return out.cast(dt)._as_leaf(kwargs.get("requires_grad"))

    @classmethod
    def normal(cls, *shape: Any, mean: float = 0.0, std: float = 1.0, **kwargs: Any) -> Self:
        """Normal with ``mean`` and ``std``."""
        requires_grad = kwargs.pop("requires_grad", None)
        out = cls.randn(*shape, **kwargs) * std + mean
        return out._as_leaf(requires_grad)

    @classmethod
    def uniform(
        cls, *shape: Any, low: float = 0.0, high: float = 1.0, dtype: Any = None, **kwargs: Any
    ) -> Self:
        """Uniform on [low, high)."""
        requires_grad = kwargs.pop("requires_grad", None)
        dt = _dtype(dtype, dtypes.default_float)
        base = cls.rand(
            *shape, **kwargs, dtype=dt if dtypes.is_float(dt) else None, contiguous=False
        )
        out = (base * (high - low) + low).cast(dt)
        return out._as_leaf(requires_grad)

    @classmethod
    def scaled_uniform(cls, *shape: Any, **kwargs: Any) -> Self:
        """Uniform on [-1, 1) scaled by 1/sqrt(numel)."""
        sh = argfix(*shape)
        return cls.uniform(*sh, low=-1.0, high=1.0, **kwargs).mul(prod(sh) ** -0.5)

    @classmethod
    def glorot_uniform(cls, *shape: Any, **kwargs: Any) -> Self:
        """Glorot/Xavier uniform: bound sqrt(6 / (fan_in + fan_out))."""
        sh = argfix(*shape)
        bound = (6 / (sh[0] + prod(sh[1:]))) ** 0.5
        return cls.uniform(*sh, low=-bound, high=bound, **kwargs)

    @classmethod
    def kaiming_uniform(cls, *shape: Any, a: float = 0.01, **kwargs: Any) -> Self:
        """Kaiming/He uniform for leaky relu slope ``a``."""
        sh = argfix(*shape)
        bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a**2)) / math.sqrt(prod(sh[1:]))
        return cls.uniform(*sh, low=-bound, high=bound, **kwargs)

    @classmethod
    def kaiming_normal(cls, *shape: Any, a: float = 0.01, **kwargs: Any) -> Self:
        """Kaiming/He normal for leaky relu slope ``a``."""
        sh = argfix(*shape)
        std = math.sqrt(2.0 / (1 + a**2)) / math.sqrt(prod(sh[1:]))
        return cls.normal(*sh, mean=0.0, std=std, **kwargs)

    @classmethod
    def randperm(cls, n: int, device: Any = None, dtype: Any = None, **kwargs: Any) -> Self:
        """A random permutation of 0..n-1."""
        dt = _dtype(dtype, dtypes.int32)
        perm = cls.rand(n, device=device, contiguous=False).argsort().cast(dt)
        return perm._as_leaf(kwargs.get("requires_grad"))

    def rand_like(self, **kwargs: Any) -> Self:
        """rand with this shape, dtype and device."""
        kwargs.setdefault("dtype", self.dtype if dtypes.is_float(self.dtype) else None)
        kwargs.setdefault("device", self.device)
        return type(self).rand(*self.shape, **kwargs)

    def randn_like(self, dtype: Any = None, **kwargs: Any) -> Self:
        """randn with this shape, and this dtype and device unless given."""
        if dtype is None:
            dtype = self.dtype if dtypes.is_float(self.dtype) else None
        kwargs.setdefault("device", self.device)
        return type(self).randn(*self.shape, dtype=dtype, **kwargs)

    def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Self:
        """Indices sampled from the rows of this (unnormalized) probability value."""
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

    def dropout(self, p: float = 0.5) -> Self:
        """Zero elements with probability p and scale the rest by 1/(1-p), in training only
        (``TRAINING``, the state ``Tensor.training`` sets)."""
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        if not TRAINING.value or p == 0:
            return self
        if p == 1:
            return self * 0
        keep = type(self).rand(*self.shape, device=self.device, contiguous=False) >= p
        return keep.where(self, 0) * (1 / (1 - p))


def _threefry(x: Any, key: Any) -> UOp:
    from fusegrad.uop.uop import UOp

    return UOp(Ops.THREEFRY, dtypes.uint64, (x.uop, key.uop))
