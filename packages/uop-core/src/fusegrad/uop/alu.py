"""The executable definition of every ALU op on Python values, with exact dtype semantics.

``exec_alu(op, dtype, operands)`` is what constant folding, ``sym_infer`` and the PYTHON
emulator device all use, so the three can't disagree. Results are converted to ``dtype``
exactly as hardware stores them (``truncate``): integers wrap around, floats round to nearest
even at the dtype's width. Float arithmetic is IEEE: division by zero gives inf/NaN, NaN
propagates through MAX (PyTorch's ``maximum``). Integer division and remainder by zero give
0 (NumPy's result) instead of trapping; float division by zero follows IEEE (inf or NaN) for
FDIV, FLOORDIV, FLOORMOD, CDIV and CMOD alike. On floats, CDIV is the truncated quotient and
CMOD is C's ``fmod``.
MULACC (``a * b + c``) is fused on float32 and float64: the exact value rounded once, C's
``fma``; on the narrow floats it rounds the product and the sum; on integers it wraps.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from typing import Any

from fusegrad.uop.dtype import ConstType, DType, bitcast, dtypes, truncate
from fusegrad.uop.opcodes import Ops

AluFn = Callable[..., Any]


def _fdiv(x: float, y: float) -> float:
    if y == 0:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def _trunc_div(x: Any, y: Any) -> Any:
    if isinstance(x, float) or isinstance(y, float):
        return _trunc(_fdiv(float(x), float(y)))
    if y == 0:
        return 0
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def _trunc_mod(x: Any, y: Any) -> Any:
    if isinstance(x, float) or isinstance(y, float):
        return _float_mod(float(x), float(y), math.fmod)
    return 0 if y == 0 else x - y * _trunc_div(x, y)


def _floor_div(x: Any, y: Any) -> Any:
    if isinstance(x, float) or isinstance(y, float):
        if y == 0 or not math.isfinite(x):
            return _fdiv(float(x), float(y)) if y == 0 else math.nan
        return x // y  # Python's float floor division is NumPy's floor_divide
    return 0 if y == 0 else x // y


def _floor_mod(x: Any, y: Any) -> Any:
    if isinstance(x, float) or isinstance(y, float):
        return _float_mod(float(x), float(y), lambda a, b: a % b)
    return 0 if y == 0 else x % y


def _float_mod(x: float, y: float, mod: Callable[[float, float], float]) -> float:
    # IEEE: x % 0 and inf % y are NaN; Python raises or returns NaN, NumPy gives NaN
    if y == 0 or not math.isfinite(x) or math.isnan(y):
        return math.nan
    return mod(x, y)


def _max(x: Any, y: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return x
    if isinstance(y, float) and math.isnan(y):
        return y
    if x == y == 0 and isinstance(x, float):
        return x if math.copysign(1.0, x) > 0 else y  # max(-0.0, 0.0) is 0.0
    return x if x > y else y


def _float_pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except OverflowError:
        odd = float(y).is_integer() and int(y) % 2 == 1
        return math.copysign(math.inf, x) if odd else math.inf
    except ValueError:
        if x == 0 and y < 0:
            odd = float(y).is_integer() and int(y) % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def _int_pow(x: int, y: int) -> int:
    if y >= 0:
        return int(pow(x, y))
    if x == 1:
        return 1
    if x == -1:
        return 1 if y % 2 == 0 else -1
    return 0  # |x| > 1: 1/x**|y| truncates to 0; x == 0 has no value, 0 like x // 0


def _pow(x: Any, y: Any) -> Any:
    if isinstance(x, float) or isinstance(y, float):
        return _float_pow(float(x), float(y))
    return _int_pow(x, y)


def _sqrt(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    return math.sqrt(x)


def _exp2(x: float) -> float:
    if math.isnan(x):
        return x
    try:
        return math.pow(2.0, x)
    except OverflowError:
        return math.inf


def _log2(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.log2(x) if x != math.inf else math.inf


def _sin(x: float) -> float:
    return math.nan if math.isinf(x) or math.isnan(x) else math.sin(x)


def _reciprocal(x: float) -> float:
    return _fdiv(1.0, x)


def _trunc(x: Any) -> Any:
    if isinstance(x, float) and math.isfinite(x):
        return math.copysign(float(math.trunc(x)), x)  # trunc(-0.5) is -0.0
    return x


def _shift_left(x: int, s: int) -> int:
    return x << s if 0 <= s < 4096 else 0


def _shift_right(x: int, s: int) -> int:
    return x >> s if 0 <= s < 4096 else (-1 if x < 0 else 0)


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


_THREEFRY_ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry2x32(x: int, key: int) -> int:
    """Threefry-2x32 with 20 rounds (Random123). ``x`` and ``key`` are uint64 values whose low
    and high 32-bit halves are the two words; the result packs the two output words the same
    way."""
    m = 0xFFFFFFFF
    x0, x1 = x & m, (x >> 32) & m
    ks = [key & m, (key >> 32) & m]
    ks.append(ks[0] ^ ks[1] ^ 0x1BD11BDA)
    x0, x1 = (x0 + ks[0]) & m, (x1 + ks[1]) & m
    for block in range(5):
        for r in range(4):
            x0 = (x0 + x1) & m
            x1 = _rotl32(x1, _THREEFRY_ROT[(block % 2) * 4 + r]) ^ x0
        inj = block + 1
        x0 = (x0 + ks[inj % 3]) & m
        x1 = (x1 + ks[(inj + 1) % 3] + inj) & m
    return (x1 << 32) | x0


# -- MULACC: fused multiply-add -------------------------------------------------------------------

_F64, _I64 = struct.Struct("<d"), struct.Struct("<q")


def _parts(x: float) -> tuple[int, int]:
    """Finite ``x`` as ``m * 2**e`` with an integer ``m``."""
    m, e = math.frexp(x)
    return int(m * (1 << 53)), e - 53


def _round_scaled(n: int, e: int, precision: int, min_exp: int) -> float:
    """``n * 2**e`` (``n != 0``) rounded once to nearest even with ``precision`` significant
    bits and no finer step than ``2**min_exp`` (subnormals); inf past the double range."""
    mag = abs(n)
    step = max(mag.bit_length() + e - precision, min_exp)
    if step > e:
        shift = step - e
        rest, mag = mag & ((1 << shift) - 1), mag >> shift
        half = 1 << (shift - 1)
        mag += rest > half or (rest == half and mag & 1)
        e = step
    try:
        out = math.ldexp(float(mag), e)  # mag has at most precision + 1 bits: exact
    except OverflowError:
        out = math.inf
    return -out if n < 0 else out


def _fma64(x: float, y: float, z: float) -> float:
    """``x * y + z`` on doubles, computed exactly in integers and rounded once (IEEE 754
    fusedMultiplyAdd)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y + z  # inf/NaN operands: the unfused expression has the same result
    if not math.isfinite(z):
        return z  # a finite product plus inf or NaN
    (mx, ex), (my, ey), (mz, ez) = _parts(x), _parts(y), _parts(z)
    low = min(ex + ey, ez)
    total = ((mx * my) << (ex + ey - low)) + (mz << (ez - low))
    if total == 0:  # an exact zero: -0.0 only when both terms are -0.0 (round to nearest)
        product_negative = math.copysign(1.0, x) * math.copysign(1.0, y) < 0
        return -0.0 if product_negative and math.copysign(1.0, z) < 0 else 0.0
    return _round_scaled(total, low, 53, -1074)


def _fma32_odd(x: float, y: float, z: float) -> float:
    """``x * y + z`` for float32 operands as a double rounded to odd: converting it to float32
    rounds the exact value correctly (the product of two float32 values is exact in double;
    the sum's rounding error is exact too, TwoSum; round-to-odd keeps enough bits, 53 >= 24 +
    2, that the second rounding cannot double-round)."""
    p = x * y
    s = p + z
    if not math.isfinite(s):
        return s  # inf/NaN: no rounding involved (float32 products cannot overflow a double)
    v = s - p
    err = (p - (s - v)) + (z - v)
    if err != 0 and not _I64.unpack(_F64.pack(s))[0] & 1:
        s = math.nextafter(s, math.copysign(math.inf, err))
    return s


def _mulacc_float(dtype: DType, x: float, y: float, z: float) -> float:
    """MULACC on floats: float32 and float64 fuse (``x * y + z`` rounded once, C's ``fma``);
    the narrow floats (float16, bfloat16, fp8) round the product and then the sum, as a MUL
    followed by an ADD does (the lowering never forms MULACC for them)."""
    scalar, conv = dtype.scalar(), truncate(dtype)
    if scalar is dtypes.float32:
        return float(conv(_fma32_odd(x, y, z)))
    if scalar in (dtypes.float64, dtypes.weakfloat):
        return _fma64(x, y, z)
    return float(conv(conv(x * y) + z))


ALU_FNS: dict[Ops, AluFn] = {
    Ops.ADD: lambda x, y: x + y,
    Ops.SUB: lambda x, y: x - y,
    Ops.MUL: lambda x, y: x * y,
    Ops.FDIV: _fdiv,
    Ops.CDIV: _trunc_div,
    Ops.CMOD: _trunc_mod,
    Ops.FLOORDIV: _floor_div,
    Ops.FLOORMOD: _floor_mod,
    Ops.MAX: _max,
    Ops.POW: _pow,
    Ops.SHL: _shift_left,
    Ops.SHR: _shift_right,
    Ops.AND: lambda x, y: x & y,
    Ops.OR: lambda x, y: x | y,
    Ops.XOR: lambda x, y: x ^ y,
    Ops.CMPLT: lambda x, y: x < y,
    Ops.CMPNE: lambda x, y: x != y,
    Ops.CMPEQ: lambda x, y: x == y,
    Ops.THREEFRY: threefry2x32,
    Ops.NEG: lambda x: (not x) if isinstance(x, bool) else -x,
    Ops.RECIPROCAL: _reciprocal,
    Ops.SQRT: _sqrt,
    Ops.EXP2: _exp2,
    Ops.LOG2: _log2,
    Ops.SIN: _sin,
    Ops.TRUNC: _trunc,
    Ops.WHERE: lambda c, x, y: x if c else y,
    Ops.MULACC: lambda x, y, z: x * y + z,
}


python_alu = ALU_FNS
"""tinygrad's name of the table: each ALU op as a function of Python values (no dtype)."""

safe_exp2 = _exp2
"""2**x of a Python float: inf on overflow, NaN stays NaN."""

safe_pow = _pow
"""x**y of Python values: floats as IEEE pow (inf/NaN, no exception), ints exactly (a negative
exponent truncates toward zero, as integer division does)."""


def identity_element(op: Ops, dt: DType) -> ConstType:
    """The value ``e`` with ``op(e, y) == y`` for every ``y`` of ``dt``: 0 for ADD (False for a
    bool OR-sum), 1 for MUL, the lowest value for MAX (-inf for floats).

    >>> identity_element(Ops.MAX, dtypes.int8), identity_element(Ops.MUL, dtypes.float32)
    (-128, 1.0)
    """
    values: dict[Ops, ConstType] = {Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: dtypes.min(dt.scalar())}
    if op not in values:
        raise ValueError(f"identity_element: {op!r} is not a reduce op (ADD, MUL, MAX)")
    out: ConstType = dtypes.as_const(values[op], dt.scalar())
    return out


def exec_alu(op: Ops, dtype: DType, operands: Sequence[Any], truncate_output: bool = True) -> Any:
    """``op`` applied to Python values, the result stored as ``dtype`` would store it
    (``truncate_output=False``: the exact Python result, not wrapped or rounded to ``dtype``).

    Float operands of float ops are taken as given (already values of their dtype); the
    result is computed in double precision and rounded once to ``dtype``, which is exact for
    + - * / and sqrt at every width up to float32.

    >>> exec_alu(Ops.ADD, dtypes.int8, [100, 100])
    -56
    >>> exec_alu(Ops.CDIV, dtypes.int32, [-7, 2]), exec_alu(Ops.FLOORDIV, dtypes.int32, [-7, 2])
    (-3, -4)
    """
    if not truncate_output:
        if op in (Ops.CAST, Ops.BITCAST) or op not in ALU_FNS:
            raise NotImplementedError(f"exec_alu: {op!r} has no untruncated result")
        return ALU_FNS[op](*operands)
    if op is Ops.CAST:
        return truncate(dtype)(operands[0])
    if op is Ops.BITCAST:
        raise TypeError("exec_alu: BITCAST needs the source dtype, use bitcast()")
    fn = ALU_FNS.get(op)
    if fn is None:
        raise NotImplementedError(f"exec_alu: {op!r} is not an ALU op")
    if op in (Ops.MUL, Ops.ADD, Ops.SUB) and dtypes.is_float(dtype):
        operands = [float(x) for x in operands]
    if op is Ops.MULACC and dtypes.is_float(dtype):
        return _mulacc_float(dtype, float(operands[0]), float(operands[1]), float(operands[2]))
    return truncate(dtype)(fn(*operands))


def exec_bitcast(value: Any, from_dt: DType, to_dt: DType) -> Any:
    """BITCAST of a Python value."""
    return bitcast(value, from_dt, to_dt)
