"""Integer ops no renderer prints, decomposed into ALU ops every target has.

* ``THREEFRY(x, key)`` (uint64; the counter-based RNG, ``fusegrad.uop.threefry2x32``): the two
  32-bit words of each operand, 20 rounds of wrapping adds, 32-bit rotations and xors with a
  key injection after every four, packed back into uint64.
* integer ``POW(x, y)``: exponentiation by squaring over the bits of ``y``, with
  ``exec_alu``'s semantics: wrapping products for ``y >= 0``; for ``y < 0`` the result is 1
  for ``x == 1``, +-1 for ``x == -1`` (by the parity of ``y``) and 0 otherwise.

Both work lane-wise on vectors (constants are splatted to the operand's lane count) and give
bit-for-bit what ``exec_alu`` gives; float POW is the transcendental stage's.
"""

from __future__ import annotations

from fusegrad.uop import DType, UOp, dtypes

_M32 = 0xFFFFFFFF
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA


def splat(dt: DType, value: int, count: int) -> UOp:
    """Constant ``value`` of scalar type ``dt`` in ``count`` lanes (a VCONST for vectors)."""
    if count == 1:
        return UOp.const(value, dt)
    return UOp.vconst((value,) * count, dt.vec(count))


def _words(v: UOp) -> tuple[UOp, UOp]:
    """(low, high) 32-bit words of uint64 ``v``."""
    n = v.dtype.count
    u32 = dtypes.uint32.vec(n)
    low = (v & splat(dtypes.uint64, _M32, n)).cast(u32)
    return low, (v >> splat(dtypes.uint64, 32, n)).cast(u32)


def _rotl(v: UOp, r: int) -> UOp:
    n = v.dtype.count
    return (v << splat(dtypes.uint32, r, n)) | (v >> splat(dtypes.uint32, 32 - r, n))


def threefry(x: UOp, key: UOp) -> UOp:
    """``threefry2x32(x, key)`` as uint32/uint64 ALU ops."""
    n = x.dtype.count
    x0, x1 = _words(x)
    k0, k1 = _words(key)
    ks = (k0, k1, k0 ^ k1 ^ splat(dtypes.uint32, _PARITY, n))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for block in range(5):
        for r in range(4):
            x0 = x0 + x1
            x1 = _rotl(x1, _ROTATIONS[(block % 2) * 4 + r]) ^ x0
        inj = block + 1
        x0 = x0 + ks[inj % 3]
        x1 = x1 + ks[(inj + 1) % 3] + splat(dtypes.uint32, inj, n)
    u64 = dtypes.uint64.vec(n)
    return (x1.cast(u64) << splat(dtypes.uint64, 32, n)) | x0.cast(u64)


def _negative_power(x: UOp, y: UOp) -> UOp:
    """``x ** y`` for ``y < 0``: 1 at x == 1, (-1)^y at x == -1, else 0."""
    dt, n = x.dtype.scalar(), x.dtype.count
    one, zero, minus_one = splat(dt, 1, n), splat(dt, 0, n), splat(dt, -1, n)
    odd = (y & splat(y.dtype.scalar(), 1, n)).ne(splat(y.dtype.scalar(), 0, n))
    at_minus_one = odd.where(minus_one, one)
    return x.eq(one).where(one, x.eq(minus_one).where(at_minus_one, zero))


def int_pow(x: UOp, y: UOp) -> UOp:
    """``x ** y`` for integers ``x``, ``y`` of one dtype (see the module docstring)."""
    dt, n = x.dtype.scalar(), x.dtype.count
    signed = not dtypes.is_unsigned(dt)
    bits = dt.itemsize * 8 - (1 if signed else 0)
    ydt = y.dtype.scalar()
    result, base = splat(dt, 1, n), x
    for i in range(bits):
        bit = (y & splat(ydt, 1 << i, n)).ne(splat(ydt, 0, n))
        result = bit.where(result * base, result)
        if i + 1 < bits:
            base = base * base
    if not signed:
        return result
    return (y < splat(ydt, 0, n)).where(_negative_power(x, y), result)
