"""``fusegrad.dtype``: tinygrad's ``tinygrad.dtype`` module path.

One implementation (``fusegrad.uop.dtype``), another door: the dtypes, promotion and exact
value conversion are re-exported; tinygrad's conversion helpers that take a dtype argument
(``fp8_to_float``, ``float_to_fp8``, the storage-scalar pair) and the NumPy/PyTorch dtype
maps are defined here.

>>> from fusegrad.dtype import dtypes, least_upper_dtype, fp8_to_float, float_to_fp8
>>> least_upper_dtype(dtypes.int8, dtypes.uint8)
dtypes.int16
>>> fp8_to_float(float_to_fp8(1.5, dtypes.fp8e4m3), dtypes.fp8e4m3)
1.5
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fusegrad.engine.host import has_numpy_type, storage_dtype
from fusegrad.uop import (
    DEFAULT_FLOAT,
    DEFAULT_INT,
    AddrSpace,
    ConstType,
    DType,
    Invalid,
    InvalidType,
    PtrDType,
    bitcast,
    commit_weak,
    dtypes,
    getenv,
    least_upper_dtype,
    least_upper_float,
    sum_acc_dtype,
    to_dtype,
)
from fusegrad.uop import truncate as _truncate

DTypeLike = str | DType
"""A dtype or its name (``"float32"``, ``"half"``)."""
PyConst = float | int | bool
"""The Python values a constant can hold."""
DTypeMetaClass = type(DType)
"""The metaclass of ``DType`` (dtypes are interned by their fields)."""
DTypes = dtypes
"""The class of the ``dtypes`` namespace (in fusegrad the namespace is the class itself)."""
ImageDType = PtrDType
"""tinygrad's image pointer type: fusegrad has no image dtypes (``IMAGE`` is accepted and
ignored), so an image pointer is an ordinary ``PtrDType``."""

DTYPES_DICT: dict[str, DType] = {
    name: dt
    for name, dt in dtypes.fields().items()
    if not dt.weak and dt is not dtypes.void and name == dt.name
}
"""Every concrete dtype by its canonical name (no aliases, no void or weak types)."""
INVERSE_DTYPES_DICT: dict[str, str] = {
    **{dt.name: name for name, dt in DTYPES_DICT.items()},
    "void": "void",
    "weakint": "weakint",
    "weakfloat": "weakfloat",
}
"""dtype name -> the ``dtypes`` attribute naming it."""


def _immediate_supertypes() -> dict[DType, list[DType]]:
    """The promotion lattice's edges, read off ``least_upper_dtype``: ``b`` is above ``a``
    when their join is ``b``, immediately so when no third type lies between them."""
    kinds = [d for d in dtypes.all if d is not dtypes.void]
    above = {a: [b for b in kinds if b is not a and least_upper_dtype(a, b) is b] for a in kinds}
    return {
        a: [b for b in ups if not any(b in above[c] for c in ups if c is not b)]
        for a, ups in above.items()
    }


promo_lattice: dict[DType, list[DType]] = _immediate_supertypes()
"""Each dtype's immediate supertypes in the promotion lattice (``least_upper_dtype`` joins)."""


@dataclass(frozen=True)
class ConstFloat:
    """A float constant compared by its bits: ``0.0`` and ``-0.0`` differ, NaN equals NaN
    (what a hash-consed constant needs)."""

    v: float

    def _bits(self) -> bytes:
        return struct.pack("<d", self.v)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConstFloat) and self._bits() == other._bits()

    def __hash__(self) -> int:
        return hash(self._bits())


class _TruncateTable(Mapping[DType, Callable[[Any], Any]]):
    """``truncate[dtype](x)``: ``x`` converted to ``dtype``'s values as hardware does."""

    def __getitem__(self, dt: DType) -> Callable[[Any], Any]:
        try:
            return _truncate(dt)
        except TypeError:
            raise KeyError(dt) from None

    def __iter__(self) -> Iterator[DType]:
        return iter(d for d in dtypes.all if d is not dtypes.void)

    def __len__(self) -> int:
        return len(tuple(iter(self)))

    def __call__(self, dt: DType) -> Callable[[Any], Any]:
        return _truncate(dt)


truncate = _TruncateTable()
"""dtype -> the function rounding/wrapping a Python value to that dtype (also callable)."""


def strong_dtype(dtype: DType) -> DType:
    """A weak literal dtype committed to the default it stands for (others unchanged).

    >>> strong_dtype(dtypes.weakint), strong_dtype(dtypes.int8)
    (dtypes.int32, dtypes.int8)
    """
    return commit_weak(dtype)


def weak_dtype(dtype: DType) -> DType:
    """The weak literal dtype of a dtype's kind: ints -> weakint, floats -> weakfloat (bool
    and weak dtypes unchanged).

    >>> weak_dtype(dtypes.int16), weak_dtype(dtypes.float32)
    (dtypes.weakint, dtypes.weakfloat)
    """
    if dtype.weak or dtypes.is_bool(dtype):
        return dtype
    if dtypes.is_int(dtype):
        return dtypes.weakint.vec(dtype.count)
    if dtypes.is_float(dtype):
        return dtypes.weakfloat.vec(dtype.count)
    raise TypeError(f"weak_dtype: {dtype!r} has no weak form")


def _range(dt: DType) -> tuple[int, int] | None:
    return (int(dtypes.min(dt)), int(dtypes.max(dt))) if dtypes.is_int(dt) else None


def can_lossless_cast(dt0: DType, dt1: DType) -> bool:
    """Whether every value of ``dt0`` is exactly a value of ``dt1``.

    >>> can_lossless_cast(dtypes.uint8, dtypes.int16), can_lossless_cast(dtypes.int32, dtypes.float32)
    (True, False)
    """
    if dt0 is dt1 or dtypes.is_bool(dt0):
        return True
    if dtypes.is_bool(dt1) or dt0.weak or dt1.weak:
        return dt0 is dt1
    r0, r1 = _range(dt0), _range(dt1)
    if r0 is not None and r1 is not None:
        return r1[0] <= r0[0] and r0[1] <= r1[1]
    if r0 is not None:  # int -> float: the mantissa must hold every integer of dt0
        return max(abs(r0[0]), r0[1]).bit_length() <= dtypes.finfo(dt1)[1] + 1
    if r1 is not None:
        return False
    if dt1.scalar() in dtypes.fp8s:  # another fp8 (other bias, specials): never all values
        return False
    e0, m0 = dtypes.finfo(dt0)
    e1, m1 = dtypes.finfo(dt1)
    return e0 <= e1 and m0 <= m1


def fp8_to_float(x: int, dtype: DType) -> float:
    """The value of fp8 code ``x`` (0..255) of fp8 ``dtype``."""
    return float(bitcast(int(x) & 0xFF, dtypes.uint8, _fp8(dtype)))


def float_to_fp8(x: float, dtype: DType) -> int:
    """The fp8 code of ``x`` rounded to nearest even (saturating) in fp8 ``dtype``."""
    return int(bitcast(float(x), _fp8(dtype), dtypes.uint8))


def _fp8(dtype: DType) -> DType:
    if dtype.scalar() not in dtypes.fp8s:
        raise TypeError(
            f"expected an fp8 dtype ({', '.join(map(str, dtypes.fp8s))}), got {dtype!r}"
        )
    return dtype.scalar()


def float_to_fp16(x: float) -> float:
    """``x`` rounded to float16 (overflow to inf)."""
    return float(_truncate(dtypes.float16)(x))


def float_to_bf16(x: float) -> float:
    """``x`` rounded to bfloat16 (through float32, round to nearest even)."""
    return float(_truncate(dtypes.bfloat16)(x))


def storage_fmt_for_dtype(dtype: DType) -> str:
    """The ``struct`` format of the integer or float holding a dtype's storage: its own
    format, or the unsigned int of its width for bfloat16 and the fp8s."""
    s = dtype.scalar()
    if s.fmt is not None:
        return s.fmt
    if s is dtypes.bfloat16:
        return "H"
    if s in dtypes.fp8s:
        return "B"
    raise TypeError(f"storage_fmt_for_dtype: {dtype!r} has no storage")


def to_storage_scalar(x: Any, dtype: DType) -> Any:
    """A Python value of ``dtype`` as the scalar its storage holds (bits for bf16/fp8)."""
    s = dtype.scalar()
    if s.fmt is not None:
        return _truncate(s)(x)
    storage = dtypes.uint16 if s is dtypes.bfloat16 else dtypes.uint8
    return bitcast(x, s, storage)


def from_storage_scalar(x: Any, dtype: DType) -> Any:
    """The inverse of ``to_storage_scalar``: the value stored as ``x``."""
    s = dtype.scalar()
    if s.fmt is not None:
        return x
    storage = dtypes.uint16 if s is dtypes.bfloat16 else dtypes.uint8
    return bitcast(int(x), storage, s)


def _to_np_dtype(dtype: DType) -> type | None:
    """The NumPy scalar type of ``dtype``; None for dtypes NumPy lacks (bfloat16, fp8)."""
    dt = dtype.scalar()
    if dt.weak or not has_numpy_type(dt):
        return None
    try:
        found: type = storage_dtype(dt).type
    except TypeError:  # no buffer storage (void, index types)
        return None
    return found


def _to_torch_dtype(dtype: DType) -> Any:
    """The ``torch.dtype`` of ``dtype`` (PyTorch must be installed); None if it has none."""
    import torch

    names = {"fp8e4m3": "float8_e4m3fn", "fp8e5m2": "float8_e5m2"}
    names |= {"fp8e4m3fnuz": "float8_e4m3fnuz", "fp8e5m2fnuz": "float8_e5m2fnuz"}
    name = names.get(dtype.scalar().name, dtype.scalar().name)
    found = getattr(torch, name, None)
    return found if isinstance(found, torch.dtype) else None


__all__ = [
    "DEFAULT_FLOAT",
    "DEFAULT_INT",
    "DTYPES_DICT",
    "INVERSE_DTYPES_DICT",
    "AddrSpace",
    "ConstFloat",
    "ConstType",
    "DType",
    "DTypeLike",
    "DTypeMetaClass",
    "DTypes",
    "ImageDType",
    "Invalid",
    "InvalidType",
    "PtrDType",
    "PyConst",
    "_to_np_dtype",
    "_to_torch_dtype",
    "bitcast",
    "can_lossless_cast",
    "dtypes",
    "float_to_bf16",
    "float_to_fp8",
    "float_to_fp16",
    "fp8_to_float",
    "from_storage_scalar",
    "getenv",
    "least_upper_dtype",
    "least_upper_float",
    "promo_lattice",
    "storage_fmt_for_dtype",
    "strong_dtype",
    "sum_acc_dtype",
    "to_dtype",
    "to_storage_scalar",
    "truncate",
    "weak_dtype",
]
