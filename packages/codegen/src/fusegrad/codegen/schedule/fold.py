"""Reductions of a constant fold to arithmetic before any kernel is built.

``Tensor.ones(2**40).sum()`` is a REDUCE_AXIS over an expanded CONST: as a kernel it is a loop
of 2**40 steps that reads nothing. The value is known: sum = c·n, prod = cⁿ, max = c (n the
number of reduced elements), so the reduction becomes a constant of the reduced shape.
Integers wrap as the kernel's accumulator would; floats are computed exactly and rounded once
(the kernel's running sum would stall at 2**24 in float32).
"""

from __future__ import annotations

import math

from fusegrad.uop import ConstType, DType, GroupOp, Ops, UOp, dtypes, exec_alu, prod


def _expanded_const(x: UOp) -> UOp | None:
    """The CONST under a chain of RESHAPE/EXPAND (a broadcast constant), else None."""
    while x.op in (Ops.RESHAPE, Ops.EXPAND):
        x = x.src[0]
    if x.op is not Ops.CONST or isinstance(x.arg, UOp) or not x.src:
        return None
    return x


def _const_value(x: UOp, depth: int = 0) -> tuple[ConstType, str] | None:
    """(value, device) of a broadcast constant, or of elementwise ALU over broadcast
    constants (``min`` is ``-max(-x)``), else None."""
    if x.op in GroupOp.ALU and depth < 8:
        parts = [_const_value(s, depth + 1) for s in x.src]
        if any(p is None for p in parts):
            return None
        values = [p[0] for p in parts if p is not None]
        try:
            return exec_alu(x.op, x.dtype, values), str(parts[0][1])  # type: ignore[index]
        except (ArithmeticError, ValueError, TypeError):
            return None
    base = _expanded_const(x)
    if base is None or base.src[0].op is not Ops.DEVICE or not isinstance(base.src[0].arg, str):
        return None
    return base.arg, base.src[0].arg


def _wrap_int(value: int, dtype: DType) -> int:
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if not dtypes.is_unsigned(dtype) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _float_power(c: float, n: int) -> float:
    try:
        return math.pow(c, n)
    except OverflowError:  # |c| > 1: the product overflows to ±inf (negative c: sign of n)
        return math.copysign(math.inf, c if n % 2 else 1.0)


def _reduced_value(op: Ops, c: ConstType, n: int, dtype: DType) -> ConstType | None:
    if op is Ops.MAX:
        return c
    if dtypes.is_float(dtype):
        c = float(c)
        return c * n if op is Ops.ADD else _float_power(c, n) if op is Ops.MUL else None
    if dtype is dtypes.bool or not dtypes.is_int(dtype):
        return None
    c = int(c)
    if op is Ops.ADD:
        return _wrap_int(c * n, dtype)
    if op is Ops.MUL:
        return _wrap_int(pow(c, n, 1 << (dtype.itemsize * 8)), dtype)
    return None


def fold_const_reduce(r: UOp) -> UOp | None:
    """REDUCE_AXIS(op, axes) of an expanded constant -> the constant it evaluates to."""
    found = _const_value(r.src[0])
    if found is None:
        return None
    op, axes = r.arg[0], r.arg[1]
    sizes = [r.src[0].shape[a] for a in axes]
    if not all(isinstance(s, int) for s in sizes) or not all(isinstance(s, int) for s in r.shape):
        return None  # symbolic sizes: the kernel counts them
    n = int(prod(sizes))
    if n == 0:
        return None  # an empty reduction is its identity: the kernel path knows them
    value = _reduced_value(op, found[0], n, r.dtype)
    if value is None:
        return None
    return UOp.const(value, r.dtype, found[1], r.shape)
