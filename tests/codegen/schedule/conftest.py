"""Helpers for the scheduler tests.

* ``T``: a tiny tensor that builds the tensor-level UOp graph the way a frontend would
  (buffers, RESHAPE/EXPAND broadcasting, explicit casts, REDUCE_AXIS) and computes the same
  program with NumPy alongside, as the reference.
* ``eval_kernel``: a reference evaluator of kernel ASTs (spec.py form): it iterates the
  ranges in Python and evaluates every node with ``exec_alu`` over NumPy buffers, raising
  on out-of-bounds loads and stores.
* ``run_graph``: runs a whole KernelGraph (kernels, copies, arena views) over NumPy memory
  and reads each output through its ``becomes`` view.
* ``reuse_is_exact`` (autouse): every kernel reused from an earlier one of the same
  structure is checked against rangeifying it afresh.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from fusegrad.codegen import to_program, verify_kernel_ast
from fusegrad.codegen.schedule import KernelGraph, get_kernel_graph
from fusegrad.codegen.schedule.kernelize import Kernelizer, output_ranges
from fusegrad.codegen.schedule.rangeify import KernelContext
from fusegrad.codegen.schedule.reuse import region_key
from fusegrad.uop import DType, Invalid, Ops, UOp, dtypes, exec_alu, sym_infer
from fusegrad.uop import bitcast as bitcast_value

NP_DTYPES: dict[DType, Any] = {
    dtypes.float32: np.float32,
    dtypes.int32: np.int32,
    dtypes.bool: np.bool_,
    dtypes.uint8: np.uint8,
    dtypes.float16: np.float16,
    dtypes.int64: np.int64,
    dtypes.uint32: np.uint32,
}
LOG2E = 1.4426950408889634


class Memory:
    """NumPy arrays standing for the device memory of BUFFER UOps."""

    def __init__(self) -> None:
        self.arrays: dict[UOp, np.ndarray] = {}

    def buf(self, data: Any, dtype: DType = dtypes.float32, device: str = "CPU") -> T:
        """A realized tensor holding ``data``."""
        arr = np.asarray(data, dtype=NP_DTYPES[dtype])
        buf = UOp.new_buffer(device, int(arr.size), dtype)
        self.arrays[buf] = arr.reshape(-1).copy()
        return T(buf.reshape(arr.shape), arr.copy())

    def rand(self, *shape: int, seed: int = 0, dtype: DType = dtypes.float32) -> T:
        """A realized tensor of random values."""
        rng = np.random.default_rng(seed + 17 * len(self.arrays))
        if dtype is dtypes.int32:
            return self.buf(rng.integers(-5, 6, shape), dtype)
        return self.buf(rng.standard_normal(shape).astype(np.float32), dtype)


class T:
    """A tensor under construction: its UOp and the NumPy value it must have."""

    def __init__(self, uop: UOp, value: np.ndarray) -> None:
        self.uop = uop
        self.np = np.asarray(value)
        assert tuple(self.np.shape) == tuple(uop.shape), (self.np.shape, uop.shape)

    # -- construction ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.uop.shape)

    @property
    def dtype(self) -> DType:
        return self.uop.dtype

    def const(self, value: Any, shape: tuple[int, ...] | None = None) -> T:
        shape = self.shape if shape is None else shape
        uop = UOp.const(value, self.dtype, self.uop.device, shape)
        return T(uop, np.full(shape, value, dtype=NP_DTYPES[self.dtype]))

    def _other(self, x: T | float | int) -> T:
        return x if isinstance(x, T) else self.const(x)

    def _bcast(self, x: T | float | int) -> tuple[T, T]:
        y = self._other(x)
        shape = np.broadcast_shapes(self.shape, y.shape)
        return self.broadcast_to(shape), y.broadcast_to(shape)

    def broadcast_to(self, shape: tuple[int, ...]) -> T:
        if self.shape == tuple(shape):
            return self
        t = self.reshape((1,) * (len(shape) - self.ndim) + self.shape)
        return t.expand(tuple(shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _binary(self, x: T | float | int, op: Ops, fn: Any) -> T:
        a, b = self._bcast(x)
        return T(a.uop.alu(op, b.uop), fn(a.np, b.np))

    # -- elementwise ----------------------------------------------------------------------------
    def __add__(self, x: T | float) -> T:
        return self._binary(x, Ops.ADD, np.add)

    def __sub__(self, x: T | float) -> T:
        return self._binary(x, Ops.SUB, np.subtract)

    def __mul__(self, x: T | float) -> T:
        return self._binary(x, Ops.MUL, np.multiply)

    def __truediv__(self, x: T | float) -> T:
        return self._binary(x, Ops.FDIV, np.divide)

    def __lt__(self, x: T | float) -> T:
        return self._binary(x, Ops.CMPLT, np.less)

    def maximum(self, x: T | float) -> T:
        return self._binary(x, Ops.MAX, np.maximum)

    def relu(self) -> T:
        return self.maximum(0.0)

    def __neg__(self) -> T:
        return T(-self.uop, -self.np)

    def square(self) -> T:
        return self * self

    def exp(self) -> T:
        return T((self.uop * LOG2E).exp2(), np.exp(self.np).astype(self.np.dtype))

    def sqrt(self) -> T:
        return T(self.uop.sqrt(), np.sqrt(self.np))

    def rsqrt(self) -> T:
        return T(self.uop.sqrt().reciprocal(), (1 / np.sqrt(self.np)).astype(self.np.dtype))

    def cast(self, dtype: DType) -> T:
        return T(self.uop.cast(dtype), self.np.astype(NP_DTYPES[dtype]))

    def bitcast(self, dtype: DType) -> T:
        return T(self.uop.bitcast(dtype), self.np.view(NP_DTYPES[dtype]))

    def where(self, x: T | float, y: T | float) -> T:
        a, b = self._other(x)._bcast(y)
        return T(self.uop.where(a.uop, b.uop), np.where(self.np, a.np, b.np))

    # -- movement -------------------------------------------------------------------------------
    def reshape(self, shape: tuple[int, ...]) -> T:
        return T(self.uop.reshape(shape), self.np.reshape(shape))

    def permute(self, *order: int) -> T:
        return T(self.uop.permute(order), np.transpose(self.np, order))

    @property
    def T(self) -> T:
        return self.permute(1, 0)

    def expand(self, shape: tuple[int, ...]) -> T:
        return T(self.uop.expand(shape), np.broadcast_to(self.np, shape).copy())

    def pad(self, padding: Sequence[tuple[int, int]]) -> T:
        return T(self.uop.pad(padding), np.pad(self.np, padding))

    def shrink(self, bounds: Sequence[tuple[int, int]]) -> T:
        window = tuple(slice(s, e) for s, e in bounds)
        return T(self.uop.shrink(bounds), self.np[window])

    def flip(self, *axes: int) -> T:
        return T(self.uop.flip(axes), np.flip(self.np, axes).copy())

    def contiguous(self) -> T:
        return T(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,)), self.np)

    def to(self, device: str) -> T:
        return T(UOp(Ops.COPY, self.dtype, (self.uop, UOp(Ops.DEVICE, arg=device))), self.np)

    # -- reductions -----------------------------------------------------------------------------
    def _reduce(self, op: Ops, fn: Any, axis: int | tuple[int, ...] | None, keepdim: bool) -> T:
        axes = tuple(range(self.ndim)) if axis is None else axis
        axes = (axes,) if isinstance(axes, int) else axes
        kept = T(self.uop.r(op, axes), fn(self.np, axis=axes, keepdims=True))
        if keepdim:
            return kept
        return kept.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdim: bool = False) -> T:
        return self._reduce(Ops.ADD, np.sum, axis, keepdim)

    def max(self, axis: int | tuple[int, ...] | None = None, keepdim: bool = False) -> T:
        return self._reduce(Ops.MAX, np.max, axis, keepdim)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdim: bool = False) -> T:
        s = self.sum(axis, keepdim)
        return s / float(self.np.size // max(s.np.size, 1))

    # -- composites -----------------------------------------------------------------------------
    def __matmul__(self, w: T) -> T:
        (m, k), (_, n) = self.shape, w.shape
        a = self.reshape((m, 1, k)).expand((m, n, k))
        b = w.T.reshape((1, n, k)).expand((m, n, k))
        return (a * b).sum(2)

    def softmax(self) -> T:
        e = (self - self.max(-1 % self.ndim, keepdim=True)).exp()
        return e / e.sum(self.ndim - 1, keepdim=True)

    def layernorm(self, eps: float = 1e-5) -> T:
        ax = self.ndim - 1
        x = self - self.mean(ax, keepdim=True)
        return x * (x.square().mean(ax, keepdim=True) + eps).rsqrt()

    def repeat(self, repeats: Sequence[int]) -> T:
        new_shape = tuple(x for s in self.shape for x in (1, s))
        expand_shape = tuple(x for r, s in zip(repeats, self.shape, strict=True) for x in (r, s))
        final = tuple(r * s for r, s in zip(repeats, self.shape, strict=True))
        return self.reshape(new_shape).expand(expand_shape).reshape(final)

    def pool(self, k: tuple[int, int]) -> T:
        """Sliding windows (stride 1): (..., H, W) -> (..., OH, OW, KH, KW), tinygrad's way."""
        lead, i_ = self.shape[:-2], self.shape[-2:]
        n = len(lead)
        o_ = [i - kk + 1 for i, kk in zip(i_, k, strict=True)]
        reps = [math.ceil(kk * (i + 1) / i) for kk, i in zip(k, i_, strict=True)]
        x = self.repeat([1] * n + reps)
        x = x.shrink(
            [(0, s) for s in lead] + [(0, kk * (i + 1)) for kk, i in zip(k, i_, strict=True)]
        )
        x = x.reshape((*lead, k[0], i_[0] + 1, k[1], i_[1] + 1))
        x = x.shrink([(0, s) for s in lead] + [(0, k[0]), (0, o_[0]), (0, k[1]), (0, o_[1])])
        return x.permute(*range(n), n + 1, n + 3, n, n + 2)

    def conv2d(self, w: T) -> T:
        (b, cin, _, _), (cout, _, kh, kw) = self.shape, w.shape
        p = self.pool((kh, kw))  # (b, cin, oh, ow, kh, kw)
        oh, ow = p.shape[2:4]
        x = p.reshape((b, 1, cin, oh, ow, kh, kw)).expand((b, cout, cin, oh, ow, kh, kw))
        ww = w.reshape((1, cout, cin, 1, 1, kh, kw)).expand(x.shape)
        return (x * ww).sum((2, 5, 6)).reshape((b, cout, oh, ow))

    def assign(self, value: T) -> T:
        after = self.uop.after(self.uop.store(value.uop))
        return T(after, value.np)


def cat(*xs: T) -> T:
    """Concatenation along axis 0 as pads and adds."""
    total = sum(x.shape[0] for x in xs)
    out: T | None = None
    start = 0
    for x in xs:
        padding = [(start, total - start - x.shape[0])] + [(0, 0)] * (x.ndim - 1)
        p = x.pad(padding)
        out = p if out is None else out + p
        start += x.shape[0]
    assert out is not None
    return out


# -- the kernel AST evaluator ---------------------------------------------------------------------


def _zero(dt: DType) -> Any:
    return False if dt is dtypes.bool else 0.0 if dtypes.is_float(dt) else 0


REDUCE_INIT: dict[Ops, Any] = {Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: -math.inf}


class KernelEvaluator:
    """Evaluates one kernel AST over NumPy buffers (one per PARAM slot)."""

    def __init__(self, bufs: Sequence[np.ndarray], var_vals: dict[UOp, int]) -> None:
        self.bufs = bufs
        self.var_vals = var_vals
        self.env: dict[UOp, int] = {}
        self.memo: dict[tuple[UOp, tuple[int, ...]], Any] = {}

    def run(self, ast: UOp) -> None:
        for u in ast.toposort():  # warm the recursive caches sources-first
            _ = u.ranges
        # stores over the same ranges share one loop, as in the lowered code (a multi-output
        # kernel): each iteration stores every output in turn, and a value is computed once
        # per iteration, at its first use, so a load that runs after another output's store
        # sees the stored value
        loops: dict[tuple[UOp, ...], list[UOp]] = {}
        for effect in ast.src:
            store, ranges = (
                (effect.src[0], effect.src[1:]) if effect.op is Ops.END else (effect, ())
            )
            loops.setdefault(tuple(ranges), []).append(store)
        for ranges, stores in loops.items():
            self.loop(list(ranges), lambda stores=stores: self.store_all(stores))

    def store_all(self, stores: list[UOp]) -> None:
        for st in stores:
            self.store(st)

    def loop(self, ranges: list[UOp], body: Any) -> None:
        ends = [int(sym_infer(r.src[0], self.var_vals)) for r in ranges]
        for vals in itertools.product(*(range(e) for e in ends)):
            self.env.update(zip(ranges, vals, strict=True))
            body()

    def store(self, st: UOp) -> None:
        idx = self.ev(st.src[0].src[1])
        if idx is Invalid:
            return
        buf = self.bufs[st.src[0].src[0].arg]
        if not 0 <= idx < buf.size:
            raise IndexError(f"store out of bounds: {idx} of {buf.size}")
        buf[idx] = self.ev(st.src[1])

    def ev(self, u: UOp) -> Any:
        key = (u, tuple(self.env[r] for r in u.ranges))
        if key not in self.memo:
            self.memo[key] = self._ev(u)
        return self.memo[key]

    def _ev(self, u: UOp) -> Any:
        leaf = {
            Ops.CONST: lambda: u.arg,
            Ops.RANGE: lambda: self.env[u],
            Ops.DEFINE_VAR: lambda: self.var_vals[u],
            Ops.LOAD: lambda: self.load(u),
            Ops.REDUCE: lambda: self.reduce(u),
        }.get(u.op)
        if leaf is not None:
            return leaf()
        if u.op is Ops.WHERE:
            return self.ev(u.src[1]) if self.ev(u.src[0]) else self.ev(u.src[2])
        vals = [self.ev(s) for s in u.src]
        if any(v is Invalid for v in vals):
            return Invalid
        if u.op is Ops.BITCAST:
            return bitcast_value(vals[0], u.src[0].dtype, u.dtype)
        return exec_alu(u.op, u.dtype, vals)

    def load(self, u: UOp) -> Any:
        idx = self.ev(u.src[0].src[1])
        if idx is Invalid:
            return _zero(u.dtype)
        buf = self.bufs[u.src[0].src[0].arg]
        if not 0 <= idx < buf.size:
            raise IndexError(f"load out of bounds: {idx} of {buf.size}")
        return buf[idx].item()

    def reduce(self, u: UOp) -> Any:
        acc = REDUCE_INIT[u.arg]
        if u.arg is Ops.MAX and not dtypes.is_float(u.dtype):
            acc = dtypes.min(u.dtype)
        saved = dict(self.env)
        ranges = list(u.src[1:])

        def step() -> None:
            nonlocal acc
            acc = exec_alu(u.arg, u.dtype, [acc, self.ev(u.src[0])])

        self.loop(ranges, step)
        self.env = saved
        return exec_alu(Ops.CAST, u.dtype, [acc])


# -- running a kernel graph -------------------------------------------------------------------------


def _garbage(buf: UOp) -> np.ndarray:
    dt = NP_DTYPES[buf.dtype]
    if np.issubdtype(dt, np.floating):
        return np.full(buf.arg, np.nan, dtype=dt)
    return np.full(buf.arg, 0x5A, dtype=np.uint8).view(np.uint8).astype(dt)


def eval_view(view: UOp, mem: dict[UOp, np.ndarray], var_vals: dict[UOp, int]) -> np.ndarray:
    """A buffer view (movement ops / BITCAST over a BUFFER) read from NumPy memory."""
    chain = []
    while view.op is not Ops.BUFFER:
        chain.append(view)
        view = view.src[0]
    arr = mem[view]
    for u in reversed(chain):
        arr = _apply_view_op(u, arr, var_vals)
    return arr


def _apply_view_op(u: UOp, arr: np.ndarray, var_vals: dict[UOp, int]) -> np.ndarray:
    def val(x: Any) -> int:
        return int(sym_infer(x, var_vals))

    if u.op is Ops.RESHAPE:
        return arr.reshape(tuple(val(s) for s in u.arg))
    if u.op is Ops.SHRINK:
        return arr[tuple(slice(val(s), val(e)) for s, e in u.arg)]
    if u.op is Ops.PERMUTE:
        return np.transpose(arr, u.arg)
    if u.op is Ops.EXPAND:
        return np.broadcast_to(arr, tuple(val(s) for s in u.arg))
    if u.op is Ops.FLIP:
        return np.flip(arr, [i for i, f in enumerate(u.arg) if f])
    if u.op is Ops.BITCAST:
        return arr.view(NP_DTYPES[u.dtype])
    raise AssertionError(f"not a view op: {u.op}")


Executor = Callable[[UOp, list[np.ndarray], dict[UOp, int]], None]


def evaluate_kernel(ast: UOp, bufs: list[np.ndarray], var_vals: dict[UOp, int]) -> None:
    """Run a kernel AST with the reference evaluator."""
    KernelEvaluator(bufs, var_vals).run(ast)


def run_on_emulator(ast: UOp, bufs: list[np.ndarray], var_vals: dict[UOp, int]) -> None:
    """Lower ``ast`` with ``to_program`` for the PYTHON renderer, run it on the emulator."""
    runtime = pytest.importorskip("fusegrad.runtime")
    spec = to_program(ast, runtime.PythonRenderer())
    values = {v.arg[0]: val for v, val in var_vals.items()}
    global_size, local_size = spec.launch_dims(values)
    runtime.run_linear(spec.uops, bufs, values, global_size, local_size)


def run_graph(
    kg: KernelGraph, mem: Memory, execute: Executor = evaluate_kernel
) -> list[np.ndarray]:
    """Run every call of ``kg`` over ``mem``; the outputs, in ``kg.becomes`` order."""
    arrays = mem.arrays
    var_vals = {v: val for v, val in kg.var_vals.items()}
    for b in kg.buffers:
        assert b not in arrays, "a buffer to allocate already exists"
        arrays[b] = _garbage(b)

    def resolve(b: UOp) -> np.ndarray:
        if b.op is Ops.BUFFER:
            return arrays[b]
        assert b.op is Ops.BUFFER_VIEW  # into an arena, or a bitcast's view of a buffer
        size, offset = b.arg
        nbytes = b.dtype.itemsize
        raw = resolve(b.src[0]).view(np.uint8)[offset * nbytes : (offset + size) * nbytes]
        assert raw.size == size * nbytes, "a view runs past its buffer"
        return raw.view(NP_DTYPES[b.dtype])

    for call in kg.calls:
        head = call.src[0]
        bufs = [resolve(b) for b in call.src[1:] if b.op in (Ops.BUFFER, Ops.BUFFER_VIEW)]
        if head.op is Ops.COPY:
            bufs[0].view(np.uint8)[: head.arg] = bufs[1].view(np.uint8)[: head.arg]
            continue
        verify_kernel_ast(head)
        params = sorted({u.arg for u in head.toposort() if u.op is Ops.PARAM})
        assert params == list(range(len(bufs))), "PARAM slots and CALL buffers disagree"
        execute(head, bufs, var_vals)
    return [eval_view(v, arrays, var_vals).copy() for v in kg.becomes.values()]


def schedule(*outs: T, **kwargs: Any) -> KernelGraph:
    """Schedule the tensors ``outs`` realized together (no schedule cache)."""
    return get_kernel_graph(UOp.sink(*(o.uop for o in outs)), cache=None, **kwargs)


def check(mem: Memory, *outs: T, execute: Executor = evaluate_kernel, **kwargs: Any) -> KernelGraph:
    """Schedule ``outs``, run the kernel graph, compare every output with NumPy."""
    kg = schedule(*outs, **kwargs)
    results = run_graph(kg, mem, execute)
    expected = {o.uop: o.np for o in outs}
    for (node, _), got in zip(kg.becomes.items(), results, strict=True):
        want = expected[node]
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return kg


@pytest.fixture(autouse=True)
def reuse_is_exact(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every kernel the scheduler reuses (``reuse.py``) is checked against rangeifying it
    afresh: the same AST and the same context records. The list counts the reuses."""
    reused: list[int] = []
    fresh_rangeify = Kernelizer.rangeify

    def checked(
        kz: Kernelizer, roots: list[UOp], snapshots: dict[UOp, UOp] | None = None
    ) -> tuple[UOp, KernelContext]:
        stores = [kz.stored(r) for r in roots]
        hit = not snapshots and region_key(stores, roots, kz.views).key in kz.rangeified
        ast, ctx = fresh_rangeify(kz, roots, snapshots)
        if hit:
            reused.append(1)
            idx, ranges = output_ranges(stores[0][0].shape)
            want_ctx = KernelContext(kz.views, frozenset(roots), len(idx))
            want, want_ctx = kz._rangeify(stores, idx, ranges, want_ctx)
            assert ast is want
            assert list(ctx.params.items()) == list(want_ctx.params.items())
            assert list(ctx.deps) == list(want_ctx.deps)
            assert list(ctx.raw_reads) == list(want_ctx.raw_reads)
            assert ctx.root_reads == want_ctx.root_reads
            assert ctx.inline_failed == want_ctx.inline_failed
        return ast, ctx

    monkeypatch.setattr(Kernelizer, "rangeify", checked)
    return reused


@pytest.fixture
def mem() -> Memory:
    """Fresh NumPy memory for one test."""
    return Memory()


# the test modules import these helpers as ``schedule_testing`` (pytest's importlib mode puts
# no test folder on sys.path)
sys.modules.setdefault("schedule_testing", sys.modules[__name__])
