"""Data types: scalars, vectors, pointers, weak literals, promotion and exact value conversion.

Every ``DType`` is interned: building the same type twice returns the same object, so ``is``
and ``==`` agree and a dtype costs one pointer compare in a UOp's identity key.

The promotion lattice follows NumPy/PyTorch with *weak* literal types in between, the way
JAX draws it: a Python int is ``weakint`` and a Python float is ``weakfloat`` until an
operation with a concrete dtype commits it, so ``int8_tensor + 1`` stays ``int8`` and
``float16_tensor * 2.5`` stays ``float16`` while ``int_tensor * 2.5`` becomes the default float.
"""

from __future__ import annotations

import builtins
import enum
import functools
import inspect
import math
import struct
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from fusegrad.uop.flags import DEFAULT_FLOAT, DEFAULT_INT

ConstType = float | int | bool


class InvalidType:
    """The poison index value: an index that must not be used (a masked-out load or store)."""

    _instance: InvalidType | None = None

    def __new__(cls) -> InvalidType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "Invalid"

    def __reduce__(self) -> tuple[type[InvalidType], tuple[()]]:
        return (InvalidType, ())

    def __hash__(self) -> int:
        return 0x1BAD

    def __eq__(self, other: object) -> bool:
        return other is self


Invalid: Final = InvalidType()


class AddrSpace(enum.Enum):
    """Where a pointer points: device memory, workgroup-shared memory, registers, or ALU
    scalars (a Variable is a 0-d buffer in the ALU space)."""

    GLOBAL = "global"
    LOCAL = "local"
    REG = "reg"
    ALU = "alu"

    def __repr__(self) -> str:
        return f"AddrSpace.{self.name}"


class DTypeMetaClass(type):
    """DTypes are interned: ``DType(...)`` with the fields of an existing type is that type
    (``DType(0, 32, "float32", "f") is dtypes.float32``), as tinygrad's metaclass makes it, so
    types compare by identity."""

    _interned: ClassVar[dict[tuple[Any, ...], Any]] = {}
    _signatures: ClassVar[dict[type, inspect.Signature]] = {}

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        sig = DTypeMetaClass._signatures.get(cls)
        if sig is None:
            init = inspect.signature(cls.__init__)  # type: ignore[misc]  # the fields, after self
            sig = init.replace(parameters=list(init.parameters.values())[1:])
            DTypeMetaClass._signatures[cls] = sig
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (cls, *bound.arguments.values())
        found = DTypeMetaClass._interned.get(key)
        if found is None:
            found = DTypeMetaClass._interned[key] = super().__call__(*bound.arguments.values())
        return found


@dataclass(frozen=True, eq=False)
class DType(metaclass=DTypeMetaClass):
    """A scalar or vector value type. ``count > 1`` is a vector of ``scalar()``.

    ``priority`` orders types for tie-breaks in promotion; ``fmt`` is the ``struct`` format
    character when Python's struct module knows the type.
    """

    priority: int
    bitsize: int
    name: str
    fmt: str | None
    count: int = 1
    base_scalar: DType | None = None
    weak: bool = False

    @staticmethod
    def new(
        priority: int,
        bitsize: int,
        name: str,
        fmt: str | None,
        count: int = 1,
        base_scalar: DType | None = None,
        weak: bool = False,
    ) -> DType:
        """The interned DType with these fields."""
        return _interned_dtype(priority, bitsize, name, fmt, count, base_scalar, weak)

    def __reduce__(self) -> tuple[Callable[..., DType], tuple[Any, ...]]:
        fields = (self.priority, self.bitsize, self.name, self.fmt, self.count)
        return (DType.new, (*fields, self.base_scalar, self.weak))

    def __repr__(self) -> str:
        if self.count > 1:
            return f"{self.scalar()!r}.vec({self.count})"
        return f"dtypes.{self.name}"

    def __lt__(self, other: DType) -> bool:
        return (self.priority, self.bitsize, self.name, self.count) < (
            other.priority,
            other.bitsize,
            other.name,
            other.count,
        )

    @property
    def itemsize(self) -> int:
        """Bytes per element (rounded up to whole bytes; bool is one byte)."""
        return (self.bitsize + 7) // 8

    def scalar(self) -> DType:
        """The element type of a vector (itself for a scalar)."""
        return self.base_scalar if self.base_scalar is not None else self

    def vec(self, count: int) -> DType:
        """This scalar as a ``count``-wide vector (``count == 1`` is the scalar itself)."""
        if count == 1:
            return self
        if self.count != 1:
            raise ValueError(f"vec: {self!r} is already a vector, can't make a vector of it")
        if count < 1:
            raise ValueError(f"vec: count must be >= 1, got {count}")
        if self is dtypes.void:
            return self
        name = f"{self.name}{count}"
        return DType.new(self.priority, self.bitsize * count, name, None, count, self, self.weak)

    def ptr(self, size: int = -1, addrspace: AddrSpace = AddrSpace.GLOBAL) -> PtrDType:
        """A pointer to ``size`` elements of this type (``-1``: unknown size)."""
        return PtrDType.new_ptr(self, addrspace, size, 1)

    @property
    def min(self) -> ConstType:
        """Smallest value of the type (``-inf`` for floats)."""
        return dtypes.min(self)

    @property
    def max(self) -> ConstType:
        """Largest value of the type (``inf`` for floats)."""
        return dtypes.max(self)


@functools.cache
def _interned_dtype(
    priority: int,
    bitsize: int,
    name: str,
    fmt: str | None,
    count: int,
    base_scalar: DType | None,
    weak: bool,
) -> DType:
    # always called with every argument positionally, so the cache key is canonical
    return DType(priority, bitsize, name, fmt, count, base_scalar, weak)


@dataclass(frozen=True, eq=False)
class PtrDType(DType):
    """A pointer: ``base`` is the pointee, ``size`` the element count (-1 unknown), ``vcount``
    the number of pointers when it is a vector of pointers."""

    base: DType = None  # type: ignore[assignment]
    addrspace: AddrSpace = AddrSpace.GLOBAL
    size: int = -1
    vcount: int = 1

    @staticmethod
    @functools.cache
    def new_ptr(base: DType, addrspace: AddrSpace, size: int, vcount: int) -> PtrDType:
        """The interned pointer type."""
        name = f"{base.name}*"
        return PtrDType(
            base.priority, 64, name, None, 1, None, False, base, addrspace, size, vcount
        )

    def __reduce__(self) -> tuple[Callable[..., DType], tuple[Any, ...]]:
        return (PtrDType.new_ptr, (self.base, self.addrspace, self.size, self.vcount))

    def __repr__(self) -> str:
        extra = "" if self.addrspace is AddrSpace.GLOBAL else f", {self.addrspace!r}"
        vec = "" if self.vcount == 1 else f".vec({self.vcount})"
        return f"{self.base!r}.ptr({self.size}{extra}){vec}"

    def vec(self, count: int) -> PtrDType:
        """A vector of ``count`` pointers."""
        if count == 1:
            return self
        if self.vcount != 1:
            raise ValueError(f"vec: {self!r} is already a vector of pointers")
        return PtrDType.new_ptr(self.base, self.addrspace, self.size, count)

    def scalar(self) -> PtrDType:
        """A single pointer of this type."""
        return PtrDType.new_ptr(self.base, self.addrspace, self.size, 1)

    def ptr(self, size: int = -1, addrspace: AddrSpace = AddrSpace.GLOBAL) -> PtrDType:
        raise TypeError(f"ptr: no pointers to pointers ({self!r})")

    @property
    def nbytes(self) -> int:
        """Bytes the pointee buffer spans (requires a known size)."""
        if self.size < 0:
            raise ValueError(f"nbytes: {self!r} has no known size")
        return self.size * self.base.itemsize


# --- exact value conversion -------------------------------------------------------------------


def _f32(x: float) -> float:
    """Round a Python float to float32 (round-to-nearest-even; overflow to inf)."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        # past float32's max: inf, unless within half an ulp of max (rounds down to max)
        limit = 3.4028235677973366e38
        if abs(x) < limit:
            return math.copysign(3.4028234663852886e38, x)
        return math.copysign(math.inf, x)


def _f16(x: float) -> float:
    """Round a Python float to float16 (round-to-nearest-even; overflow to inf)."""
    if math.isnan(x) or math.isinf(x):
        return x
    if abs(x) >= 65520.0:  # 65504 + half an ulp (16): rounds to infinity
        return math.copysign(math.inf, x)
    return float(struct.unpack("<e", struct.pack("<e", x))[0])


def _f32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", _f32(x)))[0])


def _bf16_bits(x: float) -> int:
    """float -> float32 -> bfloat16 bits with round-to-nearest-even, as hardware does."""
    bits = _f32_bits(x)
    if math.isnan(x):
        return ((bits >> 16) & 0x8000) | 0x7FC0
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


def _bf16_value(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0])


def _bf16(x: float) -> float:
    return _bf16_value(_bf16_bits(x))


@dataclass(frozen=True)
class _Fp8Format:
    """An 8-bit float: 1 sign, ``ebits`` exponent, ``mbits`` mantissa bits."""

    ebits: int
    mbits: int
    bias: int
    ieee_specials: bool  # e5m2: top exponent is inf/NaN; e4m3fn: only S.1111.111 is NaN
    fnuz: bool = False  # AMD's "fnuz": no infinities, no -0; 0x80 (the -0 code) is NaN

    def decode(self, code: int) -> float:
        if self.fnuz:
            return math.nan if code & 0xFF == 0x80 else self._magnitude(code)
        return self._magnitude(code)

    def _magnitude(self, code: int) -> float:
        sign = -1.0 if code & 0x80 else 1.0
        exp = (code >> self.mbits) & ((1 << self.ebits) - 1)
        man = code & ((1 << self.mbits) - 1)
        top = (1 << self.ebits) - 1
        if self.ieee_specials and exp == top:
            return sign * math.inf if man == 0 else math.nan
        if not (self.ieee_specials or self.fnuz) and exp == top and man == (1 << self.mbits) - 1:
            return math.nan
        if exp == 0:
            return sign * man * 2.0 ** (1 - self.bias - self.mbits)
        return sign * (1 + man / (1 << self.mbits)) * 2.0 ** (exp - self.bias)

    @functools.cached_property
    def finite_table(self) -> tuple[tuple[float, ...], tuple[int, ...]]:
        """Non-negative finite values in increasing order, with their codes."""
        pairs = sorted((self.decode(c), c) for c in range(0x80) if math.isfinite(self.decode(c)))
        return tuple(v for v, _ in pairs), tuple(c for _, c in pairs)

    def encode(self, x: float) -> int:
        """Round-to-nearest-even, saturating: finite overflow and +-inf give +-max (like
        ``cvt.rn.satfinite``); NaN gives the canonical NaN."""
        if math.isnan(x):
            return 0x80 if self.fnuz else 0x7F if not self.ieee_specials else 0x7E
        sign = 0x80 if math.copysign(1.0, x) < 0 else 0
        values, codes = self.finite_table
        mag = min(abs(x), values[-1])
        i = bisect_left(values, mag)
        if values[i] == mag:
            code = codes[i]
        else:
            lo, hi = i - 1, i
            dlo, dhi = mag - values[lo], values[hi] - mag
            code = codes[lo if dlo < dhi or (dlo == dhi and codes[lo] % 2 == 0) else hi]
        return code if self.fnuz and code == 0 else sign | code


_FP8E4M3 = _Fp8Format(4, 3, 7, ieee_specials=False)
_FP8E5M2 = _Fp8Format(5, 2, 15, ieee_specials=True)
_FP8E4M3FNUZ = _Fp8Format(4, 3, 8, ieee_specials=False, fnuz=True)
_FP8E5M2FNUZ = _Fp8Format(5, 2, 16, ieee_specials=False, fnuz=True)


def _wrap_int(bits: int, signed: bool) -> Callable[[Any], int]:
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    # x86 converts a float to these through a 32-bit integer register, to the rest through a
    # 64-bit one (uint32 needs it for its upper half)
    through = 32 if bits < 32 or (bits == 32 and signed) else 64
    unsigned64 = bits == 64 and not signed

    def convert(x: Any) -> int:
        if isinstance(x, float):
            x = _float_to_int(x, through, unsigned64)
        v = int(x) & mask
        return v - (1 << bits) if signed and v >= half else v

    return convert


def _float_to_int(x: float, through: int = 64, unsigned64: bool = False) -> int:
    """Truncate toward zero into a ``through``-bit signed integer. A value it can't hold (NaN,
    inf, out of range) gives its min, the x86 "integer indefinite" value, which then wraps to
    the target width (C leaves this undefined; this is what the hardware does). uint64 also
    takes ``[2**63, 2**64)`` exactly, as compilers convert it."""
    indefinite = -(1 << (through - 1))
    if not math.isfinite(x):
        return indefinite
    if indefinite <= x < -indefinite or (unsigned64 and 0 <= x < 2.0**64):
        return int(x)
    return indefinite


def _to_bool(x: Any) -> bool:
    return bool(x)


# --- the dtypes namespace ---------------------------------------------------------------------


class _DTypesMeta(type):
    """Makes ``dtypes.default_float`` / ``default_int`` read and write the DEFAULT_FLOAT and
    DEFAULT_INT settings, so ``Context(DEFAULT_FLOAT="float16")`` scopes them."""

    @property
    def default_float(cls) -> DType:
        return cls._by_name(DEFAULT_FLOAT.value, "DEFAULT_FLOAT", floats_only=True)

    @default_float.setter
    def default_float(cls, dt: DType) -> None:
        if not dtypes.is_float(dt) or dt.weak:
            raise TypeError(f"default_float must be a float dtype, got {dt!r}")
        DEFAULT_FLOAT.value = dt.name

    @property
    def default_int(cls) -> DType:
        return cls._by_name(DEFAULT_INT.value, "DEFAULT_INT", floats_only=False)

    @default_int.setter
    def default_int(cls, dt: DType) -> None:
        if not dtypes.is_int(dt) or dt.weak:
            raise TypeError(f"default_int must be an int dtype, got {dt!r}")
        DEFAULT_INT.value = dt.name

    def _by_name(cls, name: str, knob: str, floats_only: bool) -> DType:
        dt = getattr(cls, name.lower(), None) if isinstance(name, str) else None
        ok = isinstance(dt, DType) and (dtypes.is_float(dt) if floats_only else dtypes.is_int(dt))
        if not ok:
            raise ValueError(f"{knob}={name!r} is not a {'float' if floats_only else 'int'} dtype")
        assert isinstance(dt, DType)
        return dt


class dtypes(metaclass=_DTypesMeta):  # the public name is tinygrad's
    """The dtype namespace: ``dtypes.float32``, ``dtypes.is_int(dt)``, ``dtypes.min(dt)``...

    >>> dtypes.float32.itemsize, dtypes.int8.max, dtypes.uint8.min
    (4, 127, 0)
    >>> least_upper_dtype(dtypes.int8, dtypes.uint8)
    dtypes.int16
    """

    void: Final = DType.new(-1, 0, "void", None)
    bool: Final = DType.new(0, 1, "bool", "?")
    int8: Final = DType.new(1, 8, "int8", "b")
    uint8: Final = DType.new(2, 8, "uint8", "B")
    int16: Final = DType.new(3, 16, "int16", "h")
    uint16: Final = DType.new(4, 16, "uint16", "H")
    int32: Final = DType.new(5, 32, "int32", "i")
    uint32: Final = DType.new(6, 32, "uint32", "I")
    int64: Final = DType.new(7, 64, "int64", "q")
    uint64: Final = DType.new(8, 64, "uint64", "Q")
    fp8e4m3: Final = DType.new(9, 8, "fp8e4m3", None)
    fp8e5m2: Final = DType.new(10, 8, "fp8e5m2", None)
    # AMD's fp8 variants (no inf, no -0, 0x80 is NaN), emulated like the OCP ones
    fp8e4m3fnuz: Final = DType.new(9, 8, "fp8e4m3fnuz", None)
    fp8e5m2fnuz: Final = DType.new(10, 8, "fp8e5m2fnuz", None)
    float16: Final = DType.new(11, 16, "float16", "e")
    bfloat16: Final = DType.new(12, 16, "bfloat16", None)
    float32: Final = DType.new(13, 32, "float32", "f")
    float64: Final = DType.new(14, 64, "float64", "d")
    # weak literal types: a Python int / float not yet committed to a concrete dtype. Index
    # math lives in weakint (it is lowered to int32 or int64 once ranges are known).
    weakint: Final = DType.new(0, 64, "weakint", "q", weak=True)
    weakfloat: Final = DType.new(0, 64, "weakfloat", "d", weak=True)

    # aliases, as in tinygrad and PyTorch
    half: Final = float16
    float: Final = float32
    double: Final = float64
    char: Final = int8
    uchar: Final = uint8
    short: Final = int16
    ushort: Final = uint16
    int: Final = int32
    uint: Final = uint32
    long: Final = int64
    ulong: Final = uint64
    index: Final = weakint

    uints: Final = (uint8, uint16, uint32, uint64)
    sints: Final = (int8, int16, int32, int64, weakint)
    ints: Final = uints + sints
    fp8_ocp: Final = (fp8e4m3, fp8e5m2)
    fp8_fnuz: Final = (fp8e4m3fnuz, fp8e5m2fnuz)
    fp8s: Final = fp8_ocp + fp8_fnuz
    floats: Final = (*fp8s, float16, bfloat16, float32, float64, weakfloat)
    all: Final = (bool, *ints, *floats)
    weaks: Final = (weakint, weakfloat)
    # the integer types of each width (signed and unsigned), as tinygrad groups them
    int8s: Final = (int8, uint8)
    int16s: Final = (int16, uint16)
    int32s: Final = (int32, uint32)
    int64s: Final = (int64, uint64)

    @staticmethod
    def is_float(x: DType) -> builtins.bool:
        """True for floating-point scalars and vectors (incl. weakfloat)."""
        return x.scalar() in dtypes.floats

    @staticmethod
    def is_int(x: DType) -> builtins.bool:
        """True for signed/unsigned integer scalars and vectors (incl. weakint)."""
        return x.scalar() in dtypes.ints

    @staticmethod
    def is_unsigned(x: DType) -> builtins.bool:
        """True for unsigned integers."""
        return x.scalar() in dtypes.uints

    @staticmethod
    def is_bool(x: DType) -> builtins.bool:
        """True for bool scalars and vectors."""
        return x.scalar() is dtypes.bool

    @staticmethod
    def from_py(x: Any) -> DType:
        """The dtype a Python value gets: bool, the default int or float; for nested lists the
        promotion of their items."""
        if isinstance(x, bool):
            return dtypes.bool
        if isinstance(x, int):
            return dtypes.default_int
        if isinstance(x, float):
            return dtypes.default_float
        if isinstance(x, (list, tuple)):
            if not x:
                return dtypes.default_float
            return least_upper_dtype(*(dtypes.from_py(v) for v in x))
        raise TypeError(f"from_py: no dtype for a Python {type(x).__name__}")

    @staticmethod
    def weak_from_py(x: Any) -> DType:
        """The weak dtype of a Python scalar: bool, weakint or weakfloat."""
        if isinstance(x, bool):
            return dtypes.bool
        if isinstance(x, int):
            return dtypes.weakint
        if isinstance(x, float):
            return dtypes.weakfloat
        raise TypeError(f"weak_from_py: no dtype for a Python {type(x).__name__}")

    @staticmethod
    def min(dt: DType) -> ConstType:
        """Smallest value of ``dt``."""
        s = dt.scalar()
        if s is dtypes.bool:
            return False
        if s in dtypes.uints:
            return 0
        if s in dtypes.sints:
            return -(1 << (s.bitsize - 1))
        if s in dtypes.floats:
            return -math.inf
        raise TypeError(f"min: {dt!r} has no values")

    @staticmethod
    def max(dt: DType) -> ConstType:
        """Largest value of ``dt``."""
        s = dt.scalar()
        if s is dtypes.bool:
            return True
        if s in dtypes.uints:
            return (1 << s.bitsize) - 1
        if s in dtypes.sints:
            return (1 << (s.bitsize - 1)) - 1
        if s in dtypes.floats:
            return math.inf
        raise TypeError(f"max: {dt!r} has no values")

    @staticmethod
    def finfo(dtype: DType) -> tuple[builtins.int, builtins.int]:
        """(exponent bits, mantissa bits) of a float dtype.

        >>> dtypes.finfo(dtypes.bfloat16)
        (8, 7)
        """
        dt = dtype
        table = {
            dtypes.float16: (5, 10),
            dtypes.bfloat16: (8, 7),
            dtypes.float32: (8, 23),
            dtypes.float64: (11, 52),
            dtypes.fp8e4m3: (4, 3),
            dtypes.fp8e5m2: (5, 2),
            dtypes.fp8e4m3fnuz: (4, 3),
            dtypes.fp8e5m2fnuz: (5, 2),
            dtypes.weakfloat: (11, 52),
        }
        if dt.scalar() not in table:
            raise TypeError(f"finfo: {dt!r} is not a float dtype")
        return table[dt.scalar()]

    @staticmethod
    def as_const(x: Any, dt: DType) -> Any:
        """``x`` converted to a value of ``dt`` exactly as the hardware would store it (tuples
        for vector dtypes)."""
        if isinstance(x, tuple):
            return tuple(dtypes.as_const(v, dt) for v in x)
        if x is Invalid:
            return x
        return truncate(dt)(x)

    @staticmethod
    def fields() -> dict[str, DType]:
        """Every named dtype (aliases included), by name."""
        return {k: v for k, v in vars(dtypes).items() if isinstance(v, DType)}


def to_dtype(dtype: DType | str) -> DType:
    """A dtype given as a DType or by name (``"float32"``, ``"half"``...)."""
    if isinstance(dtype, DType):
        return dtype
    dt = dtypes.fields().get(dtype)
    if dt is None:
        raise ValueError(f"unknown dtype name {dtype!r}")
    return dt


_FLOAT_CONVERT: dict[DType, Callable[[Any], float]] = {
    dtypes.float64: float,
    dtypes.weakfloat: float,
    dtypes.float32: lambda x: _f32(float(x)),
    dtypes.float16: lambda x: _f16(float(x)),
    dtypes.bfloat16: lambda x: _bf16(float(x)),
    dtypes.fp8e4m3: lambda x: _FP8E4M3.decode(_FP8E4M3.encode(float(x))),
    dtypes.fp8e5m2: lambda x: _FP8E5M2.decode(_FP8E5M2.encode(float(x))),
    dtypes.fp8e4m3fnuz: lambda x: _FP8E4M3FNUZ.decode(_FP8E4M3FNUZ.encode(float(x))),
    dtypes.fp8e5m2fnuz: lambda x: _FP8E5M2FNUZ.decode(_FP8E5M2FNUZ.encode(float(x))),
}


def _weakint(x: Any) -> int:
    return _float_to_int(x) if isinstance(x, float) else int(x)


@functools.cache
def truncate(dt: DType) -> Callable[[Any], Any]:
    """The function converting a Python value to ``dt``'s value set exactly as hardware does:
    integers wrap around, floats round to nearest even at the type's width (overflow to inf;
    fp8 saturates to +-max), float -> int truncates toward zero."""
    s = dt.scalar()
    if s is dtypes.bool:
        return _to_bool
    if s is dtypes.weakint:
        return _weakint
    if s in dtypes.ints:
        return _wrap_int(s.bitsize, s in dtypes.sints)
    if s in _FLOAT_CONVERT:
        return _FLOAT_CONVERT[s]
    raise TypeError(f"truncate: no values of {dt!r}")


FP8_FORMATS: dict[DType, _Fp8Format] = {
    dtypes.fp8e4m3: _FP8E4M3,
    dtypes.fp8e5m2: _FP8E5M2,
    dtypes.fp8e4m3fnuz: _FP8E4M3FNUZ,
    dtypes.fp8e5m2fnuz: _FP8E5M2FNUZ,
}
"""The Python reference encode/decode of each fp8 dtype (``fp8_to_float`` / ``float_to_fp8``)."""

# --- bit-level views ---------------------------------------------------------------------------


def _to_bits(x: Any, dt: DType) -> int:
    s = dt.scalar()
    if s is dtypes.bfloat16:
        return _bf16_bits(float(x))
    if (fp8 := FP8_FORMATS.get(s)) is not None:
        return fp8.encode(float(x))
    if s.fmt is None:
        raise TypeError(f"bitcast: {dt!r} has no bit representation")
    raw = struct.pack(f"<{s.fmt}", truncate(s)(x))
    return int.from_bytes(raw, "little")


def _from_bits(bits: int, dt: DType) -> Any:
    s = dt.scalar()
    if s is dtypes.bfloat16:
        return _bf16_value(bits)
    if (fp8 := FP8_FORMATS.get(s)) is not None:
        return fp8.decode(bits & 0xFF)
    if s.fmt is None:
        raise TypeError(f"bitcast: {dt!r} has no bit representation")
    raw = bits.to_bytes(s.itemsize, "little")
    return struct.unpack(f"<{s.fmt}", raw)[0]


def bitcast(x: Any, in_dtype: DType, out_dtype: DType) -> Any:
    """Reinterpret the bits of Python value ``x`` (of ``from_dt``) as ``to_dt``.

    >>> bitcast(1.0, dtypes.float32, dtypes.uint32) == 0x3F800000
    True
    """
    if in_dtype.scalar().itemsize != out_dtype.scalar().itemsize:
        raise ValueError(f"bitcast: sizes differ, {in_dtype!r} -> {out_dtype!r}")
    return _from_bits(_to_bits(x, in_dtype), out_dtype)


def float_to_bits(x: float, dt: DType) -> int:
    """The raw bit pattern of ``x`` stored as float dtype ``dt``."""
    return _to_bits(x, dt)


def bits_to_float(bits: int, dt: DType) -> float:
    """The value of the raw bit pattern ``bits`` read as float dtype ``dt``."""
    return float(_from_bits(bits, dt))


# --- promotion ----------------------------------------------------------------------------------

# Each type's immediate supertypes. Weak literal types sit between bool and the concrete
# types, so a literal never widens a concrete operand. int64/uint64 meet at weakfloat (no
# integer holds both), which commits to the default float.
_PROMOTES_TO: dict[DType, tuple[DType, ...]] = {
    dtypes.bool: (dtypes.weakint,),
    dtypes.weakint: (dtypes.int8, dtypes.uint8),
    dtypes.int8: (dtypes.int16,),
    dtypes.int16: (dtypes.int32,),
    dtypes.int32: (dtypes.int64,),
    dtypes.int64: (dtypes.weakfloat,),
    dtypes.uint8: (dtypes.int16, dtypes.uint16),
    dtypes.uint16: (dtypes.int32, dtypes.uint32),
    dtypes.uint32: (dtypes.int64, dtypes.uint64),
    dtypes.uint64: (dtypes.weakfloat,),
    dtypes.weakfloat: dtypes.fp8s,
    dtypes.fp8e4m3: (dtypes.float16, dtypes.bfloat16),
    dtypes.fp8e5m2: (dtypes.float16, dtypes.bfloat16),
    dtypes.fp8e4m3fnuz: (dtypes.float16, dtypes.bfloat16),
    dtypes.fp8e5m2fnuz: (dtypes.float16, dtypes.bfloat16),
    dtypes.float16: (dtypes.float32,),
    dtypes.bfloat16: (dtypes.float32,),
    dtypes.float32: (dtypes.float64,),
    dtypes.float64: (),
}


@functools.cache
def _upward(dt: DType) -> frozenset[DType]:
    """``dt`` and every type it promotes to."""
    out = {dt}
    for parent in _PROMOTES_TO[dt]:
        out |= _upward(parent)
    return frozenset(out)


@functools.cache
def _least_upper(dts: frozenset[DType]) -> DType:
    common = frozenset.intersection(*(_upward(d) for d in dts))
    # the least element: every other common supertype is above it; between two incomparable
    # minimal ones (fp8e4m3 with fp8e5m2 -> float16 or bfloat16) the lower priority wins
    minimal = [c for c in common if not any(c in _upward(o) and o is not c for o in common)]
    return min(minimal, key=lambda d: d.priority)


def least_upper_dtype(*ds: DType) -> DType:
    """The smallest dtype every argument promotes to: the join of the promotion lattice
    (NumPy/PyTorch semantics, with weak literal types below every concrete type).

    It is associative and commutative. The join can be weak although an argument is not:
    int64 with uint64 (no integer holds both) and an int with ``weakfloat`` meet at
    ``weakfloat``; ``promoted_dtype`` commits such a result to the default float.

    >>> least_upper_dtype(dtypes.float16, dtypes.int64)
    dtypes.float16
    >>> least_upper_dtype(dtypes.int8, dtypes.weakint), least_upper_dtype(dtypes.int8, dtypes.uint8)
    (dtypes.int8, dtypes.int16)
    >>> least_upper_dtype(dtypes.int32, dtypes.weakfloat), least_upper_dtype(dtypes.int64, dtypes.uint64)
    (dtypes.weakfloat, dtypes.weakfloat)
    """
    if not ds:
        raise ValueError("least_upper_dtype: needs at least one dtype")
    scalars = frozenset(d.scalar() for d in ds)
    if dtypes.void in scalars or any(isinstance(d, PtrDType) for d in ds):
        raise TypeError(f"least_upper_dtype: no promotion for {ds}")
    return _least_upper(scalars)


def promoted_dtype(*ds: DType) -> DType:
    """The scalar dtype an operation on operands of dtypes ``ds`` computes in:
    ``least_upper_dtype``, except that a weak result of operands not all weak (or bool)
    commits to the default dtype. So an int tensor times a Python float is the default float
    (PyTorch), while index math on weak ints and literals stays weak.

    >>> promoted_dtype(dtypes.int32, dtypes.weakfloat), promoted_dtype(dtypes.int64, dtypes.uint64)
    (dtypes.float32, dtypes.float32)
    >>> promoted_dtype(dtypes.weakint, dtypes.weakfloat), promoted_dtype(dtypes.int8, dtypes.weakint)
    (dtypes.weakfloat, dtypes.int8)
    """
    out = least_upper_dtype(*ds)
    if out.weak and not all(d.scalar().weak or d.scalar() is dtypes.bool for d in ds):
        return commit_weak(out)
    return out


def least_upper_float(dt: DType) -> DType:
    """``dt`` if it is a float, else the default float (what true division promotes to)."""
    return dt if dtypes.is_float(dt) and not dt.weak else dtypes.default_float


def commit_weak(dt: DType) -> DType:
    """A weak dtype replaced by the concrete default it stands for (others unchanged)."""
    if dt.scalar() is dtypes.weakint:
        return dtypes.default_int.vec(dt.count)
    if dt.scalar() is dtypes.weakfloat:
        return dtypes.default_float.vec(dt.count)
    return dt


def sum_acc_dtype(dt: DType) -> DType:
    """The accumulator dtype ``sum`` uses by default: bool and small ints accumulate in at
    least int32 (uint32 for unsigned), floats in at least float32."""
    if dtypes.is_unsigned(dt):
        return least_upper_dtype(dt, dtypes.uint32)
    if dtypes.is_int(dt) or dtypes.is_bool(dt):
        return least_upper_dtype(dt, dtypes.int32)
    return least_upper_dtype(dt, dtypes.float32)
