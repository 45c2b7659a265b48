"""The reference interpreter: a NumPy evaluator of the tensor-level
graph (BUFFER/CONST/movement/ALU/REDUCE_AXIS/CAST/AFTER-STORE) with ``exec_alu``'s semantics.

conftest.py installs it as the engine's executor for every frontend test unless the test asks for
the kernel pipeline (``@pytest.mark.kernels``), so method tests compare with NumPy independently
of codegen, and serve as a cross-check of it. Also: comparison helpers for the tests.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from fusegrad.engine import (
    HOST,
    buffer_of,
    decode_floats,
    encode_floats,
    has_numpy_type,
    storage_dtype,
)
from fusegrad.uop import DType, Invalid, Ops, UOp, dtypes, sym_infer

_M32 = np.uint64(0xFFFFFFFF)
_ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry_np(x: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Vectorized threefry2x32 (20 rounds), matching fusegrad.uop.threefry2x32."""
    x = x.astype(np.uint64)
    key = np.broadcast_to(key.astype(np.uint64), x.shape)
    x0, x1 = x & _M32, x >> np.uint64(32)
    ks = [key & _M32, key >> np.uint64(32)]
    ks.append(ks[0] ^ ks[1] ^ np.uint64(0x1BD11BDA))
    x0, x1 = (x0 + ks[0]) & _M32, (x1 + ks[1]) & _M32
    for block in range(5):
        for r in range(4):
            rot = np.uint64(_ROT[(block % 2) * 4 + r])
            x0 = (x0 + x1) & _M32
            x1 = (((x1 << rot) | (x1 >> (np.uint64(32) - rot))) & _M32) ^ x0
        inj = block + 1
        x0 = (x0 + ks[inj % 3]) & _M32
        x1 = (x1 + ks[(inj + 1) % 3] + np.uint64(inj)) & _M32
    return (x1 << np.uint64(32)) | x0


def value_dtype(dt: DType) -> np.dtype:
    """NumPy dtype values of ``dt`` are computed in (float32 for bfloat16/fp8)."""
    if dt.weak:  # symbolic sizes used as values (e.g. a mean's count over a Variable dim)
        return np.dtype(np.float64 if dtypes.is_float(dt) else np.int64)
    return np.dtype(np.float32) if not has_numpy_type(dt) else storage_dtype(dt)


def fix(arr: Any, dt: DType) -> np.ndarray:
    """``arr`` as values of ``dt`` (rounded to bfloat16/fp8 where needed)."""
    out = np.asarray(arr).astype(value_dtype(dt), copy=False)
    if not has_numpy_type(dt):
        return decode_floats(encode_floats(out, dt), dt)
    return out


def cast_np(x: np.ndarray, dt: DType) -> np.ndarray:
    """CAST with exec_alu semantics (float -> int truncates; NaN/inf/huge -> int64 min, wrapped)."""
    target = value_dtype(dt)
    if dt is dtypes.bool:
        return x != 0
    if dtypes.is_int(dt) and x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(x) | (np.abs(x) >= 2.0**63)
            ints = np.where(bad, 0, np.trunc(x)).astype(np.int64)
        return np.where(bad, np.int64(-(2**63)), ints).astype(target)
    if dtypes.is_int(dt) and x.dtype.kind in "iub":
        return x.astype(np.uint64 if x.dtype.kind == "u" else np.int64).astype(target)
    with np.errstate(over="ignore", invalid="ignore"):
        return fix(x.astype(np.float64) if x.dtype.kind in "iub" else x, dt)


def _int_div(a: np.ndarray, b: np.ndarray, floor: bool) -> np.ndarray:
    zero = b == 0
    safe = np.where(zero, 1, b)
    if floor:
        q = np.floor_divide(a, safe)
    else:
        q = (np.abs(a.astype(np.int64)) // np.abs(safe.astype(np.int64))).astype(a.dtype)
        q = np.where((a < 0) != (safe < 0), -q, q).astype(a.dtype)
    return np.where(zero, 0, q).astype(a.dtype)


def _int_mod(a: np.ndarray, b: np.ndarray, floor: bool) -> np.ndarray:
    zero = b == 0
    safe = np.where(zero, 1, b)
    r = np.mod(a, safe) if floor else np.fmod(a, safe)
    return np.where(zero, 0, r).astype(a.dtype)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.power(a, b)
    neg = b < 0
    p = np.power(a, np.where(neg, 0, b))
    neg_val = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(neg, neg_val, p).astype(a.dtype)


def _shift(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    ok = (b >= 0) & (b < a.dtype.itemsize * 8)
    s = np.where(ok, b, 0).astype(a.dtype)
    out = np.left_shift(a, s) if left else np.right_shift(a, s)
    fill = 0 if left or a.dtype.kind == "u" else np.where(a < 0, -1, 0)
    return np.where(ok, out, fill).astype(a.dtype)


def _binary(op: Ops, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    isint = a.dtype.kind in "iub" and b.dtype.kind in "iub"
    table = {
        Ops.ADD: lambda: a | b if a.dtype == np.bool_ else a + b,
        Ops.SUB: lambda: a - b,
        Ops.MUL: lambda: a & b if a.dtype == np.bool_ else a * b,
        Ops.FDIV: lambda: np.divide(a, b),
        Ops.CDIV: lambda: _int_div(a, b, False) if isint else np.trunc(a / b),
        Ops.FLOORDIV: lambda: _int_div(a, b, True) if isint else np.floor(a / b),
        Ops.CMOD: lambda: _int_mod(a, b, False) if isint else np.fmod(a, b),
        Ops.FLOORMOD: lambda: _int_mod(a, b, True) if isint else np.mod(a, b),
        Ops.MAX: lambda: np.maximum(a, b),
        Ops.POW: lambda: _pow(a, b),
        Ops.SHL: lambda: _shift(a, b, True),
        Ops.SHR: lambda: _shift(a, b, False),
        Ops.AND: lambda: a & b,
        Ops.OR: lambda: a | b,
        Ops.XOR: lambda: a ^ b,
        Ops.CMPLT: lambda: a < b,
        Ops.CMPNE: lambda: a != b,
        Ops.CMPEQ: lambda: a == b,
        Ops.THREEFRY: lambda: threefry_np(a, b),
    }
    return table[op]()


_UNARY = {
    Ops.NEG: lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.negative(x),
    Ops.RECIPROCAL: np.reciprocal,
    Ops.SQRT: np.sqrt,
    Ops.EXP2: np.exp2,
    Ops.LOG2: np.log2,
    Ops.SIN: np.sin,
    Ops.TRUNC: np.trunc,
}


class RefExecutor:
    """Executor evaluating tensor graphs with NumPy (see the module docstring)."""

    name = "reference"

    def __init__(self) -> None:
        self.owned: weakref.WeakSet[UOp] = weakref.WeakSet()
        self.kernel_runs = 0

    # -- engine interface ----------------------------------------------------------------------
    def realize(self, targets: Sequence[UOp]) -> list[UOp]:
        self.kernel_runs += 1
        cache: dict[UOp, np.ndarray] = {}
        self.var_vals = _var_vals(targets)
        self._done = set()
        out = []
        for u in targets:
            value = self.eval(u, cache)
            base = u
            while base.op is Ops.AFTER:
                base = base.src[0]
            if buffer_of(base) is not None:
                out.append(base)
                continue
            dt = u.dtype
            flat = np.ascontiguousarray(value).reshape(-1)
            store = flat if has_numpy_type(dt) else encode_floats(flat, dt)
            buf = HOST.new_buffer(
                store.astype(storage_dtype(dt), copy=False), dt, u.device or "CPU"
            )
            self.owned.add(buf)
            out.append(buf.reshape(tuple(self.size(s) for s in u.shape)))
        return out

    def read(self, buf: UOp) -> np.ndarray:
        arr = HOST.get(buf)
        if arr is None:
            arr = np.zeros(buf.arg, dtype=storage_dtype(buf.dtype))
            HOST.put(buf, arr)
            self.owned.add(buf)
        return arr

    # -- evaluation ------------------------------------------------------------------------------
    def size(self, s: Any) -> int:
        return int(sym_infer(s, self.var_vals)) if isinstance(s, UOp) else int(s)

    def eval(self, root: UOp, cache: dict[UOp, np.ndarray]) -> np.ndarray:
        for u in root.toposort(gate=lambda n: n.op is not Ops.AFTER or n is root or n not in cache):
            if u not in cache:
                cache[u] = self._eval_node(u, cache)
        return cache[root]

    def _buffer_values(self, buf: UOp) -> np.ndarray:
        flat = self.read(buf)
        if has_numpy_type(buf.dtype):
            return flat
        return decode_floats(flat, buf.dtype)

    def _eval_node(self, u: UOp, cache: dict[UOp, np.ndarray]) -> np.ndarray:  # noqa: PLR0911 (one return per op family)
        op = u.op
        if op in (Ops.DEVICE, Ops.UNIQUE, Ops.STORE, Ops.DEFINE_VAR):
            return np.zeros(())
        if op is Ops.BUFFER:
            return self._buffer_values(u)
        if op is Ops.CONST:
            value = 0 if u.arg is Invalid else u.arg
            return (
                fix(np.array(value), u.dtype) if u.dtype is not dtypes.weakint else np.array(value)
            )
        if op is Ops.AFTER:
            return self._after(u, cache)
        src = [cache[s] for s in u.src]
        if op in (Ops.CONTIGUOUS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.COPY):
            return src[0].copy()
        if op in (Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP):
            return self._movement(u, src[0])
        if op is Ops.REDUCE_AXIS:
            fn = {Ops.ADD: np.add, Ops.MUL: np.multiply, Ops.MAX: np.maximum}[u.arg[0]]
            with np.errstate(all="ignore"):
                return fix(fn.reduce(src[0], axis=u.arg[1], keepdims=True), u.dtype)
        if op is Ops.CAST:
            return cast_np(src[0], u.dtype)
        if op is Ops.BITCAST:
            return self._bitcast(u, src[0])
        return self._alu(u, src)

    def _alu(self, u: UOp, src: list[np.ndarray]) -> np.ndarray:
        with np.errstate(all="ignore"):
            if u.op is Ops.WHERE:
                return fix(np.where(src[0], src[1], src[2]), u.dtype)
            if u.op is Ops.MULACC:
                return fix(src[0] * src[1] + src[2], u.dtype)
            if u.op in _UNARY:
                return fix(_UNARY[u.op](src[0]), u.dtype)
            return fix(_binary(u.op, src[0], src[1]), u.dtype)

    def _bitcast(self, u: UOp, x: np.ndarray) -> np.ndarray:
        src_dt = u.src[0].dtype
        raw = np.ascontiguousarray(x if has_numpy_type(src_dt) else encode_floats(x, src_dt))
        if raw.ndim == 0:
            raw = raw.reshape(1)
        out = raw.view(storage_dtype(u.dtype)).reshape(tuple(self.size(s) for s in u.shape))
        return out if has_numpy_type(u.dtype) else decode_floats(out, u.dtype)

    def _movement(self, u: UOp, x: np.ndarray) -> np.ndarray:
        arg = u.arg
        if u.op is Ops.RESHAPE:
            return x.reshape(tuple(self.size(s) for s in arg))
        if u.op is Ops.PERMUTE:
            return x.transpose(arg)
        if u.op is Ops.EXPAND:
            return np.broadcast_to(x, tuple(self.size(s) for s in arg))
        if u.op is Ops.PAD:
            return np.pad(x, [(self.size(b), self.size(a)) for b, a in arg])
        if u.op is Ops.SHRINK:
            return x[tuple(slice(self.size(s), self.size(e)) for s, e in arg)]
        return np.flip(x, tuple(i for i, f in enumerate(arg) if f))

    def _view(self, u: UOp, cache: dict[UOp, np.ndarray]) -> np.ndarray:
        """A writable NumPy view of the buffer under movement ops ``u``."""
        if u.op is Ops.AFTER:
            self._after(u, cache)
            return self._view(u.src[0], cache)
        if u.op is Ops.BUFFER:
            arr = self.read(u)
            if u not in self.owned:
                arr = arr.copy()
                HOST.put(u, arr)
                self.owned.add(u)
            return arr if has_numpy_type(u.dtype) else _BitsView(arr, u.dtype).values
        if u.op not in (Ops.RESHAPE, Ops.PERMUTE, Ops.SHRINK, Ops.FLIP):
            raise AssertionError(f"reference: can't store through {u.op!r}")
        base = self._view(u.src[0], cache)
        out = self._movement(u, base)
        assert np.shares_memory(out, base) or out.size == 0, f"{u.op!r} copied"
        return out

    def _after(self, u: UOp, cache: dict[UOp, np.ndarray]) -> np.ndarray:
        if u.is_bound_var:
            return np.array(u.src[1].src[1].arg)
        for dep in u.src[1:]:
            if dep.op is Ops.STORE and dep not in self._done:
                self._done.add(dep)
                value = self.eval(dep.src[1], cache)
                view = self._view(dep.src[0], cache)
                view[...] = fix(value, dep.src[1].dtype).astype(view.dtype)
                self._flush_bits(dep.src[0])
        fresh: dict[UOp, np.ndarray] = {}
        return self.eval(_strip_after(u.src[0]), fresh).copy()

    _done: set[UOp]

    def _flush_bits(self, target: UOp) -> None:
        return None


class _BitsView:
    """bfloat16/fp8 buffers can't be written through a float view; unsupported in the reference."""

    def __init__(self, arr: np.ndarray, dt: DType) -> None:
        raise AssertionError(f"reference: assigning into {dt!r} buffers is unsupported")

    values: np.ndarray


def _strip_after(u: UOp) -> UOp:
    if u.op is Ops.AFTER and not u.is_bound_var:
        return _strip_after(u.src[0])
    if u.op in (Ops.RESHAPE, Ops.PERMUTE, Ops.SHRINK, Ops.FLIP, Ops.EXPAND, Ops.PAD):
        return u.replace(src=(_strip_after(u.src[0]),))
    return u


def _var_vals(targets: Sequence[UOp]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in targets:
        for u in t.toposort():
            if u.is_bound_var:
                v, val = u.unbind()
                out[v.arg[0]] = val
    return out


# -- comparison helpers (imported by the tests as ``from conftest import ...``) -------------------

RNG = np.random.default_rng(0)


def rand_np(
    shape: tuple[int, ...], dtype: Any = np.float32, low: float = -3, high: float = 3
) -> np.ndarray:
    """Random data of ``dtype`` (ints in [low, high), bools 50/50)."""
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(int(low), int(high), shape).astype(dtype)
    return RNG.uniform(low, high, shape).astype(dtype)


def assert_close(
    got: Any, want: Any, atol: float = 1e-5, rtol: float = 1e-5, dtype: bool = True
) -> None:
    """Values, shape (and NumPy dtype when ``dtype``) match."""
    from fusegrad import Tensor

    g = got.numpy() if isinstance(got, Tensor) else np.asarray(got)
    w = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    if dtype:
        assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
    if g.dtype.kind in "fc" or w.dtype.kind in "fc":
        np.testing.assert_allclose(
            g.astype(np.float64), w.astype(np.float64), atol=atol, rtol=rtol, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(g, w)
