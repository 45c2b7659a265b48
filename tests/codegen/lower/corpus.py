"""The corpus of kernel ASTs the lowering tests run: each case builds a realistic kernel AST
(what the scheduler emits), its inputs, and the NumPy reference of what it writes; optional
per-target "opts" split and retype its ranges (UPCAST/UNROLL/THREAD on the CPU-like target,
GLOBAL/LOCAL/GROUP_REDUCE on the GPU-like one), standing in for the kernel optimizer."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if str(Path(__file__).parent) not in sys.path:  # loaded by path from another test folder
    sys.path.insert(0, str(Path(__file__).parent))
import targets as _targets
from fusegrad.uop import AxisType, Ops, UOp, dtypes

buf, kernel, retype, rng, split = (
    _targets.buf,
    _targets.kernel,
    _targets.retype,
    _targets.rng,
    _targets.split,
)

L, R, U, UR = AxisType.LOOP, AxisType.REDUCE, AxisType.UPCAST, AxisType.UNROLL
G, LO, GR, T = AxisType.GLOBAL, AxisType.LOCAL, AxisType.GROUP_REDUCE, AxisType.THREAD
ADD, MUL, MAX = Ops.ADD, Ops.MUL, Ops.MAX

Opt = Callable[[UOp], UOp]


@dataclass
class Case:
    """One kernel: ``ast``, input arrays per slot, expected arrays of the written slots."""

    name: str
    ast: UOp
    inputs: list[np.ndarray]
    expected: dict[int, np.ndarray]
    opts: dict[str, Opt] = field(default_factory=dict)
    var_vals: dict[str, int] = field(default_factory=dict)
    tol: float = 1e-5
    exact: bool = False


CASES: list[Case] = []
_rs = np.random.default_rng(0)


def case(
    name: str,
    ast: UOp,
    inputs: list[Any],
    expected: dict[int, Any],
    **kw: Any,
) -> None:
    """Add a case to the corpus."""
    CASES.append(
        Case(
            name,
            ast,
            [np.asarray(x) for x in inputs],
            {k: np.asarray(v) for k, v in expected.items()},
            **kw,
        )
    )


def rand(*shape: int, dt: Any = np.float32) -> np.ndarray:
    """Random test data of ``dt`` (ints in [-8, 8), floats in [-2, 2))."""
    if np.issubdtype(dt, np.integer):
        lo = 0 if np.issubdtype(dt, np.unsignedinteger) else -8
        return _rs.integers(lo, 8, size=shape).astype(dt)
    if dt is np.bool_:
        return _rs.integers(0, 2, size=shape).astype(np.bool_)
    return (_rs.random(shape) * 4 - 2).astype(dt)


def zeros(n: int, dt: Any = np.float32) -> np.ndarray:
    """An output buffer."""
    return np.zeros(n, dt)


def chain(*opts: Opt) -> Opt:
    """Apply ``opts`` in order."""

    def run(ast: UOp) -> UOp:
        for o in opts:
            ast = o(ast)
        return ast

    return run


def up(axis: int, n: int, kind: AxisType = U, outer: AxisType | None = None) -> Opt:
    """Split ``axis`` by ``n`` into an inner range of ``kind``."""
    return lambda a: split(a, axis, n, kind, outer)


def typ(axis: int, kind: AxisType) -> Opt:
    """Retype ``axis``."""
    return lambda a: retype(a, axis, kind)


def ld(b: UOp, idx: UOp) -> UOp:
    """Load ``b[idx]``."""
    return b.index(idx).load()


def st(b: UOp, idx: UOp, v: UOp) -> UOp:
    """Store ``v`` into ``b[idx]``."""
    return b.index(idx).store(v)


# -- elementwise ---------------------------------------------------------------------------------


def _elementwise() -> None:
    n, m = 4, 8
    a, b = rand(n, m), rand(n, m)
    out, x, y = (
        buf(0, dtypes.float32, n * m),
        buf(1, dtypes.float32, n * m),
        buf(2, dtypes.float32, n * m),
    )
    i, j = rng(n, 0), rng(m, 1)
    idx = i * m + j
    ops = {
        "add": (lambda p, q: p + q, a + b),
        "mul": (lambda p, q: p * q, a * b),
        "sub": (lambda p, q: p - q, a - b),
        "div": (lambda p, q: p / q, a / b),
        "max": (lambda p, q: p.maximum(q), np.maximum(a, b)),
        "where": (lambda p, q: (p < q).where(p, q), np.where(a < b, a, b)),
        "mulacc": (lambda p, q: p.mulacc(q, p), a * b + a),
        "neg_recip": (lambda p, q: -(p.reciprocal()) + q, -(1 / a) + b),
    }
    cpu = chain(up(1, 4), typ(0, T))
    gpu = chain(typ(0, G), up(1, 4, LO, G))
    for name, (fn, ref) in ops.items():
        ast = kernel(st(out, idx, fn(ld(x, idx), ld(y, idx))).end(i, j))
        case(f"ew_{name}", ast, [zeros(n * m), a, b], {0: ref}, opts={"cpu": cpu, "gpu": gpu})


def _unary_math() -> None:
    n = 32
    a = rand(n) * 3
    pos = np.abs(a) + 0.1
    out, x = buf(0, dtypes.float32, n), buf(1, dtypes.float32, n)
    i = rng(n, 0)
    ops = {
        "exp2": (lambda p: p.exp2(), a, np.exp2(a)),
        "log2": (lambda p: p.log2(), pos, np.log2(pos)),
        "sin": (lambda p: p.sin(), a, np.sin(a)),
        "sqrt": (lambda p: p.sqrt(), pos, np.sqrt(pos)),
        "trunc": (lambda p: p.trunc(), a, np.trunc(a)),
        "pow": (lambda p: p**1.5, pos, pos**1.5),
    }
    for name, (fn, data, ref) in ops.items():
        ast = kernel(st(out, i, fn(ld(x, i))).end(i))
        case(
            f"math_{name}",
            ast,
            [zeros(n), data],
            {0: ref.astype(np.float32)},
            opts={"cpu": up(0, 8), "gpu": chain(up(0, 8, LO, G))},
            tol=1e-5,
        )


def _broadcasts() -> None:
    n, m = 4, 6
    a, row, col = rand(n, m), rand(m), rand(n)
    out = buf(0, dtypes.float32, n * m)
    x, r, c = buf(1, dtypes.float32, n * m), buf(2, dtypes.float32, m), buf(3, dtypes.float32, n)
    i, j = rng(n, 0), rng(m, 1)
    v = ld(x, i * m + j) * ld(r, j) + ld(c, i)
    ast = kernel(st(out, i * m + j, v).end(i, j))
    case(
        "broadcast_row_col",
        ast,
        [zeros(n * m), a, row, col],
        {0: (a * row + col[:, None])},
        opts={"cpu": up(1, 2), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    # scalar broadcast + const
    c1 = buf(1, dtypes.float32, n)
    ast = kernel(st(out, i * m + j, ld(c1, i) * 2.0 + 1.0).end(i, j))
    case("broadcast_expand", ast, [zeros(n * m), col], {0: np.repeat(col * 2 + 1, m)})
    # transpose
    out2, x2 = buf(0, dtypes.float32, n * m), buf(1, dtypes.float32, n * m)
    ast = kernel(st(out2, j * n + i, ld(x2, i * m + j)).end(i, j))
    case("transpose", ast, [zeros(n * m), a], {0: a.T}, opts={"cpu": up(0, 4), "gpu": typ(1, G)})


def _reductions() -> None:
    n, m = 4, 8
    a = rand(n, m)
    x = buf(1, dtypes.float32, n * m)
    for op, fn in ((ADD, np.sum), (MUL, np.prod), (MAX, np.max)):
        out = buf(0, dtypes.float32, n)
        i, k = rng(n, 0), rng(m, 1, R)
        ast = kernel(st(out, i, ld(x, i * m + k).reduce(k, arg=op)).end(i))
        case(
            f"reduce_{op.name.lower()}_last",
            ast,
            [zeros(n), a],
            {0: fn(a, axis=1)},
            opts={"cpu": up(1, 4, UR), "gpu": chain(typ(0, G), up(1, 4, GR))},
        )
        out = buf(0, dtypes.float32, m)
        j, k = rng(m, 0), rng(n, 1, R)
        ast = kernel(st(out, j, ld(x, k * m + j).reduce(k, arg=op)).end(j))
        case(
            f"reduce_{op.name.lower()}_first",
            ast,
            [zeros(m), a],
            {0: fn(a, axis=0)},
            opts={"cpu": chain(up(0, 4), up(1, 2, UR)), "gpu": chain(typ(0, G), up(1, 2, GR))},
        )
    # full reduce to a scalar
    out = buf(0, dtypes.float32, 1)
    k1, k2 = rng(n, 0, R), rng(m, 1, R)
    ast = kernel(st(out, UOp.const(0, dtypes.weakint), ld(x, k1 * m + k2).reduce(k1, k2, arg=ADD)))
    case(
        "reduce_all",
        ast,
        [zeros(1), a],
        {0: [a.sum()]},
        opts={"cpu": up(1, 8, UR), "gpu": up(1, 4, GR)},
    )


def _matmul() -> None:
    n, k_, m = 4, 8, 8
    a, b = rand(n, k_), rand(k_, m)
    out, x, y = (
        buf(0, dtypes.float32, n * m),
        buf(1, dtypes.float32, n * k_),
        buf(2, dtypes.float32, k_ * m),
    )
    i, j, k = rng(n, 0), rng(m, 1), rng(k_, 2, R)
    val = (ld(x, i * k_ + k) * ld(y, k * m + j)).reduce(k, arg=ADD)
    ast = kernel(st(out, i * m + j, val).end(i, j))
    case(
        "matmul",
        ast,
        [zeros(n * m), a, b],
        {0: a @ b},
        opts={
            "cpu": chain(up(1, 4), up(0, 2), up(2, 4, UR), typ(0, T)),
            "gpu": chain(typ(0, G), up(1, 4, LO, G), up(2, 2, GR)),
        },
        tol=1e-4,
    )


def build() -> list[Case]:
    """Every case of the corpus."""
    if not CASES:
        for part in (
            _elementwise, _unary_math, _broadcasts, _reductions, _matmul, _dtype_cases, _pads,
            _gathers, _one_hot_gathers, _convolution, _symbolic, _multi, _composites,
            _integer_ops, _grouped_in_loops, _gated_stores, _cpu_reduce_opts,
        ):  # fmt: skip
            part()
    return CASES


def _kernel_opts(*opts: tuple[str, int, int]) -> Opt:
    """The optimizer's own opts (``opt.kernel.apply_opts`` on the CPU-like target), for kernel
    forms the range helpers do not build (PARTIALS, TILE)."""
    from fusegrad.codegen.opt import Opt as KOpt
    from fusegrad.codegen.opt import OptOps, apply_opts

    chosen = [KOpt(OptOps[op], axis, n) for op, axis, n in opts]
    return lambda a: apply_opts(a, chosen, _targets.RENDERERS["cpu"])


def _cpu_reduce_opts() -> None:
    """The CPU heuristics' reduction forms (opt/heuristics.py): vector partial sums along a
    contiguous reduce axis (PARTIALS, threaded rows), a wide output UPCAST with the rows of an
    ADD reduce tiled through the output buffer (TILE), and softmax's sum of exp2(x - max[i])."""
    n, m = 4, 64
    a = rand(n, m)
    out, x = buf(0, dtypes.float32, n), buf(1, dtypes.float32, n * m)
    i, k = rng(n, 0), rng(m, 1, R)
    for op, fn in ((ADD, np.sum), (MAX, np.max)):
        ast = kernel(st(out, i, ld(x, i * m + k).reduce(k, arg=op)).end(i))
        want = {0: fn(a, axis=1)}
        opts = _kernel_opts(("PARTIALS", 1, 32), ("THREAD", 0, 2))
        case(f"partials_{op.name.lower()}_last", ast, [zeros(n), a], want, opts={"cpu": opts})
    rows, cols = 24, 32
    b = rand(rows, cols)
    out, x = buf(0, dtypes.float32, cols), buf(1, dtypes.float32, rows * cols)
    j, k = rng(cols, 0), rng(rows, 1, R)
    ast = kernel(st(out, j, ld(x, k * cols + j).reduce(k, arg=ADD)).end(j))
    opts = _kernel_opts(("UPCAST", 0, 32), ("TILE", 1, 8))
    case("tiled_sum_first", ast, [zeros(cols), b], {0: b.sum(0)}, opts={"cpu": opts})
    out, x, mx = buf(0, dtypes.float32, n), buf(1, dtypes.float32, n * m), buf(2, dtypes.float32, n)
    i, k = rng(n, 0), rng(m, 1, R)
    ast = kernel(st(out, i, (ld(x, i * m + k) - ld(mx, i)).exp2().reduce(k, arg=ADD)).end(i))
    top = a.max(1)
    want = {0: np.exp2(a - top[:, None]).sum(1)}
    opts = _kernel_opts(("PARTIALS", 1, 32))
    case("partials_softmax_den", ast, [zeros(n), a, top], want, tol=1e-5, opts={"cpu": opts})
    _row_softmax()


def _row_softmax() -> None:
    """Softmax over rows in one kernel (the scheduler keeps row-uniform reductions in their
    consumer): per row, a max loop, a sum-of-exp2 loop reading the max, and the output loop
    reading both, with the LLVM heuristics' opts on AVX-512 (PARTIALS on both reduce axes, the
    output axis upcast to 16 lanes: the row's max and sum broadcast into a zmm, rows split
    over threads)."""
    n, m = 4, 64
    a = rand(n, m)
    out, x = buf(0, dtypes.float32, n * m), buf(1, dtypes.float32, n * m)
    i, j, k1, k2 = rng(n, 0), rng(m, 1), rng(m, 2, R), rng(m, 3, R)
    top = ld(x, i * m + k1).reduce(k1, arg=MAX)
    den = (ld(x, i * m + k2) - top).exp2().reduce(k2, arg=ADD)
    ast = kernel(st(out, i * m + j, (ld(x, i * m + j) - top).exp2() / den).end(i, j))
    e = np.exp2(a - a.max(1, keepdims=True))
    want = {0: e / e.sum(1, keepdims=True)}
    opts = _kernel_opts(
        ("PARTIALS", 2, 32), ("PARTIALS", 3, 32), ("UPCAST", 1, 16), ("THREAD", 0, 2)
    )
    gpu = typ(0, G)  # a thread per row, looping over it (``opt.kernel.finish``)
    case("row_softmax", ast, [zeros(n * m), a], want, tol=1e-5, opts={"cpu": opts, "gpu": gpu})


# -- dtypes ---------------------------------------------------------------------------------------


def _dtype_cases() -> None:
    with np.errstate(all="ignore"):
        _dtype_cases_inner()
        _conversion_cases()
        _integer_cases()


def _dtype_cases_inner() -> None:
    n = 16
    i = rng(n, 0)
    cpu, gpu = up(0, 4), chain(up(0, 4, LO, G))
    for dt, npdt in ((dtypes.float16, np.float16), (dtypes.float64, np.float64)):
        a, b = rand(n, dt=npdt), rand(n, dt=npdt)
        out, x, y = buf(0, dt, n), buf(1, dt, n), buf(2, dt, n)
        ast = kernel(st(out, i, ld(x, i) * ld(y, i) + ld(x, i)).end(i))
        case(
            f"dtype_{dt.name}_mul_add",
            ast,
            [zeros(n, npdt), a, b],
            {0: a * b + a},
            opts={"cpu": cpu, "gpu": gpu},
            tol=2e-3 if npdt is np.float16 else 1e-12,
        )
    # bfloat16 in, float32 compute, bfloat16 out (data exact in bf16)
    a32 = np.round(rand(n) * 8) / 8
    out, x = buf(0, dtypes.bfloat16, n), buf(1, dtypes.bfloat16, n)
    v = (ld(x, i).cast(dtypes.float32) * 3.0 + 0.5).cast(dtypes.bfloat16)
    ast = kernel(st(out, i, v).end(i))
    want = _targets.bf16_values(_targets.bf16_bits(a32 * 3 + 0.5))
    case(
        "dtype_bf16_scale",
        ast,
        [zeros(n, np.uint16), _targets.bf16_bits(a32)],
        {0: want},
        opts={"cpu": cpu, "gpu": gpu},
        exact=True,
    )


def _conversion_cases() -> None:
    i = rng(16, 0)
    cpu = up(0, 4)
    # half -> float cast, rounding float -> half on store, half max/overflow
    src = np.array([1e-8, 6e-8, 65504, 65519, 65520, -70000, 0.1, -0.0, np.inf, np.nan, 1 / 3, 3e-5,
                    2.0**-24, 2.0**-25, 1.5 * 2.0**-24, 1000.5], np.float32)  # fmt: skip
    out, x = buf(0, dtypes.float16, 16), buf(1, dtypes.float32, 16)
    ast = kernel(st(out, i, ld(x, i).cast(dtypes.float16)).end(i))
    case(
        "dtype_f32_to_f16_rounding",
        ast,
        [zeros(16, np.float16), src],
        {0: src.astype(np.float16)},
        opts={"cpu": cpu},
        exact=True,
    )
    out, x = buf(0, dtypes.bfloat16, 16), buf(1, dtypes.float32, 16)
    ast = kernel(st(out, i, ld(x, i).cast(dtypes.bfloat16)).end(i))
    want = _targets.bf16_values(_targets.bf16_bits(src))
    case("dtype_f32_to_bf16_rounding", ast, [zeros(16, np.uint16), src], {0: want}, exact=True)
    out, x = buf(0, dtypes.float32, 16), buf(1, dtypes.float16, 16)
    h = src.astype(np.float16)
    ast = kernel(st(out, i, ld(x, i).cast(dtypes.float32)).end(i))
    case("dtype_f16_to_f32", ast, [zeros(16), h], {0: h.astype(np.float32)}, exact=True)


def _integer_cases() -> None:
    n = 16
    i = rng(n, 0)
    cpu, gpu = up(0, 4), chain(up(0, 4, LO, G))
    # integer kernels
    for dt, npdt in ((dtypes.int32, np.int32), (dtypes.int8, np.int8), (dtypes.uint32, np.uint32),
                     (dtypes.int64, np.int64)):  # fmt: skip
        a, b = rand(n, dt=npdt), rand(n, dt=npdt)
        b = np.where(b == 0, 3, b).astype(npdt)
        out, x, y = buf(0, dt, n), buf(1, dt, n), buf(2, dt, n)
        v = (ld(x, i) * ld(y, i) + (ld(x, i) // ld(y, i))) ^ (ld(x, i) % ld(y, i))
        want = (a * b + (a // b)) ^ (a % b)
        case(
            f"dtype_{dt.name}_arith",
            ast := kernel(st(out, i, v).end(i)),
            [zeros(n, npdt), a, b],
            {0: want},
            opts={"cpu": cpu, "gpu": gpu},
            exact=True,
        )
        del ast
    # bool: compare and logic, stored as bool
    a, b = rand(n), rand(n)
    out, x, y = buf(0, dtypes.bool, n), buf(1, dtypes.float32, n), buf(2, dtypes.float32, n)
    p, q = ld(x, i), ld(y, i)
    v = (p < q) & (p.ne(0.5)) | (q < -1.0)
    case(
        "dtype_bool_logic",
        kernel(st(out, i, v).end(i)),
        [zeros(n, np.bool_), a, b],
        {0: ((a < b) & (a != 0.5)) | (b < -1)},
        opts={"cpu": cpu, "gpu": gpu},
        exact=True,
    )
    # int division by constants (multiply-shift), negative dividends (floor semantics)
    a = np.arange(-n * 8, n * 8, 16, dtype=np.int32) + 3
    out, x = buf(0, dtypes.int32, n), buf(1, dtypes.int32, n)
    v = ld(x, i) // 7 + ld(x, i) % 5 * 100
    case(
        "int_floordiv_const",
        kernel(st(out, i, v).end(i)),
        [zeros(n, np.int32), a],
        {0: a // 7 + a % 5 * 100},
        opts={"cpu": cpu},
        exact=True,
    )
    # arange-like: index math stored as data (weakint -> int32 casts), divisions by consts
    out = buf(0, dtypes.int32, 4 * 24)
    r0, r1 = rng(4, 0), rng(24, 1)
    flat = r0 * 24 + r1
    v = (flat // 5 * 3 + flat % 7).cast(dtypes.int32)
    want = (np.arange(96) // 5 * 3 + np.arange(96) % 7).astype(np.int32)
    case(
        "int_index_as_data",
        kernel(st(out, flat, v).end(r0, r1)),
        [zeros(96, np.int32)],
        {0: want},
        opts={"cpu": up(1, 8), "gpu": chain(typ(0, G), up(1, 8, LO, G))},
        exact=True,
    )


# -- pads, gathers, convolutions, symbolic shapes, multiple outputs ---------------------------------


def _pads() -> None:
    n, p = 8, 2
    a = rand(n)
    out, x = buf(0, dtypes.float32, n + 2 * p), buf(1, dtypes.float32, n)
    i = rng(n + 2 * p, 0)
    src = i - p
    masked = src.valid((i >= p) & (i < n + p))
    ast = kernel(st(out, i, x.index(masked).load() + 1.0).end(i))
    case(
        "pad_1d",
        ast,
        [zeros(n + 2 * p), a],
        {0: np.pad(a, p) + 1},
        opts={"cpu": up(0, 4), "gpu": up(0, 4, LO, G)},
    )
    # 2-D pad on both axes with a reduction over the padded row (sum of a padded window)
    h, w = 4, 6
    a2 = rand(h, w)
    out = buf(0, dtypes.float32, h * w)
    x2 = buf(1, dtypes.float32, h * w)
    r, c, k = rng(h, 0), rng(w, 1), rng(3, 2, R)
    cc = c + k - 1
    tap = x2.index((r * w + cc).valid((cc >= 0) & (cc < w))).load()
    ast = kernel(st(out, r * w + c, tap.reduce(k, arg=ADD)).end(r, c))
    padded = np.pad(a2, ((0, 0), (1, 1)))
    want = padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]
    case(
        "pad_window_sum",
        ast,
        [zeros(h * w), a2],
        {0: want},
        opts={"cpu": chain(up(1, 2), up(2, 3, UR)), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    # shrink + flip (negative strides)
    out, x = buf(0, dtypes.float32, 4), buf(1, dtypes.float32, n)
    j = rng(4, 0)
    ast = kernel(st(out, j, ld(x, 6 - j)).end(j))
    case("shrink_flip", ast, [zeros(4), a], {0: a[6:2:-1]}, opts={"cpu": up(0, 4)})


def _gathers() -> None:
    n, v = 8, 10
    table, ids = rand(v), _rs.integers(0, v, n).astype(np.int32)
    out, t, ix = buf(0, dtypes.float32, n), buf(1, dtypes.float32, v), buf(2, dtypes.int32, n)
    i = rng(n, 0)
    ast = kernel(st(out, i, t.index(ld(ix, i).cast(dtypes.weakint)).load()).end(i))
    case(
        "gather_embedding",
        ast,
        [zeros(n), table, ids],
        {0: table[ids]},
        opts={"cpu": up(0, 4), "gpu": up(0, 4, LO, G)},
    )
    # embedding rows: out[i, d] = table[ids[i], d]
    d = 4
    table2 = rand(v, d)
    out, t = buf(0, dtypes.float32, n * d), buf(1, dtypes.float32, v * d)
    i, j = rng(n, 0), rng(d, 1)
    row = ld(ix, i).cast(dtypes.weakint)
    ast = kernel(st(out, i * d + j, t.index(row * d + j).load()).end(i, j))
    case(
        "gather_rows",
        ast,
        [zeros(n * d), table2, ids],
        {0: table2[ids]},
        opts={"cpu": up(1, 4), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    # masked gather: ids out of range read 0 (where-gated)
    ids2 = _rs.integers(-2, v + 2, n).astype(np.int32)
    out, t = buf(0, dtypes.float32, n), buf(1, dtypes.float32, v)
    i = rng(n, 0)
    k = ld(ix, i).cast(dtypes.weakint)
    ast = kernel(st(out, i, t.index(k.valid((k >= 0) & (k < v))).load()).end(i))
    want = np.where((ids2 >= 0) & (ids2 < v), table[np.clip(ids2, 0, v - 1)], 0)
    case("gather_masked", ast, [zeros(n), table, ids2], {0: want}, opts={"cpu": up(0, 2)})
    # one-hot via compare of an index range with loaded ids (arange == ids)
    out, ix1 = buf(0, dtypes.float32, n * v), buf(1, dtypes.int32, n)
    i, c = rng(n, 0), rng(v, 1)
    hot = ld(ix1, i).eq(c.cast(dtypes.int32)).where(1.0, 0.0)
    ast = kernel(st(out, i * v + c, hot.cast(dtypes.float32)).end(i, c))
    case(
        "one_hot", ast, [zeros(n * v), ids], {0: np.eye(v)[ids]}, opts={"cpu": up(1, 2)}, exact=True
    )


def arange_bits(r: UOp, n: int, dt: Any = dtypes.int32) -> UOp:
    """``arange(n)[r]`` the way the frontend builds it: a sum of padded bit constants,
    ``where(!((r // 2^j) % 2 < 1), 2^j, 0)`` (the top bit without the ``% 2``)."""
    bits = max(1, int(np.ceil(np.log2(n))))
    total: UOp | None = None
    for j in range(bits):
        digit = r // 2**j if j == bits - 1 else (r // 2**j) % 2
        term = (digit < 1).logical_not().where(UOp.const(2**j, dt), UOp.const(0, dt))
        total = term if total is None else total + term
    assert total is not None
    return total


def wrap_negative(e: UOp, n: int) -> UOp:
    """``e + n`` where ``e < 0`` (how Tensor indexing wraps negative indices)."""
    return (e < 0).where(e + n, e)


def gathered(table: np.ndarray, ids: np.ndarray, axis: int = 0) -> np.ndarray:
    """``table`` indexed by ``ids`` along ``axis`` (negatives wrapped once), 0 out of range."""
    n = table.shape[axis]
    w = np.where(ids < 0, ids + n, ids)
    ok = (w >= 0) & (w < n)
    picked = np.take(table, np.clip(w, 0, n - 1), axis=axis)
    shape = [1] * picked.ndim
    shape[axis] = ids.size
    return np.where(ok.reshape(shape), picked, 0).astype(table.dtype)


def _one_hot_gathers() -> None:
    """Gathers the way the frontend writes them: a sum over the indexed axis of a one-hot
    select (the lowering collapses them to one gated read)."""
    n, v, d = 6, 10, 4
    ids = _rs.integers(-v - 2, v + 2, n).astype(np.int32)
    table = rand(v, d)
    out, t, ix = (
        buf(0, dtypes.float32, n * d),
        buf(1, dtypes.float32, v * d),
        buf(2, dtypes.int32, n),
    )
    i, j, r = rng(n, 0), rng(d, 1), rng(v, 2, R)
    hot = arange_bits(r, v).eq(wrap_negative(ld(ix, i), v))
    val = hot.where(ld(t, r * d + j), 0.0).reduce(r, arg=ADD)
    ast = kernel(st(out, i * d + j, val).end(i, j))
    case(
        "gather_one_hot_sum",
        ast,
        [zeros(n * d), table, ids],
        {0: gathered(table.T, ids, 1).T},
        opts={"cpu": up(1, 4), "gpu": chain(typ(0, G), typ(1, LO))},
        exact=True,
    )
    # cast(r == e) * x[r]: the multiply form, the compare on a cast of the range
    out, t1 = buf(0, dtypes.float32, n), buf(1, dtypes.float32, v)
    i, r = rng(n, 0), rng(v, 1, R)
    hot = r.cast(dtypes.int32).eq(ld(ix, i))
    val = (hot.cast(dtypes.float32) * ld(t1, r)).reduce(r, arg=ADD)
    ids_pos = np.where(ids < 0, v + 5, ids).astype(np.int32)
    want = np.where(ids_pos < v, table[:, 0][np.clip(ids_pos, 0, v - 1)], 0)
    ast = kernel(st(out, i, val).end(i))
    inputs = [zeros(n), table[:, 0], ids_pos]
    case("gather_one_hot_mul", ast, inputs, {0: want}, opts={"cpu": up(0, 2)}, exact=True)
    # x[a, b + 1] with a mask on the second axis, int values, two reduce ranges
    h, w, n = 5, 7, 24
    grid = rand(h, w, dt=np.int32)
    keep = rand(w, dt=np.int32)
    a_ids = _rs.integers(-1, h + 1, n).astype(np.int32)
    b_ids = _rs.integers(0, w + 2, n).astype(np.int32)
    out = buf(0, dtypes.int32, n)
    g, k = buf(1, dtypes.int32, h * w), buf(2, dtypes.int32, w)
    ia, ib = buf(3, dtypes.int32, n), buf(4, dtypes.int32, n)
    i, r1, r2 = rng(n, 0), rng(h, 1, R), rng(w, 2, R)
    cond = r1.cast(dtypes.int32).eq(ld(ia, i)) & (ld(k, r2) > 0)
    cond = cond & (r2 + 1).cast(dtypes.int32).eq(ld(ib, i))
    one = cond.where(UOp.const(1, dtypes.int32), UOp.const(0, dtypes.int32))
    val = (one * ld(g, r1 * w + r2)).reduce(r1, r2, arg=ADD)
    col = b_ids - 1
    ok = (a_ids >= 0) & (a_ids < h) & (col >= 0) & (col < w)
    ca, cb = np.clip(a_ids, 0, h - 1), np.clip(col, 0, w - 1)
    want = np.where(ok & (keep[cb] > 0), grid[ca, cb], 0).astype(np.int32)
    ast = kernel(st(out, i, val).end(i))
    inputs = [zeros(n, np.int32), grid, keep, a_ids, b_ids]
    case("gather_two_axes", ast, inputs, {0: want}, opts={"gpu": typ(0, G)}, exact=True)


def _integer_ops() -> None:
    """THREEFRY and integer POW, which targets without them get decomposed."""
    from fusegrad.uop import exec_alu, threefry2x32

    n = 16
    xs = _rs.integers(0, 2**64, n, dtype=np.uint64)
    keys = _rs.integers(0, 2**64, n, dtype=np.uint64)
    out, x, k = (buf(s, dtypes.uint64, n) for s in range(3))
    i = rng(n, 0)
    ast = kernel(st(out, i, UOp(Ops.THREEFRY, dtypes.uint64, (ld(x, i), ld(k, i)))).end(i))
    want = np.array(
        [threefry2x32(int(a), int(b)) for a, b in zip(xs, keys, strict=True)], np.uint64
    )
    case(
        "threefry",
        ast,
        [zeros(n, np.uint64), xs, keys],
        {0: want},
        opts={"cpu": up(0, 4)},
        exact=True,
    )
    for dt, npdt in ((dtypes.int32, np.int32), (dtypes.uint8, np.uint8)):
        lo = -3 if npdt is np.int32 else 0
        a = _rs.integers(lo, 4, 32).astype(npdt)
        b = _rs.integers(lo, 12, 32).astype(npdt)
        b[:4] = [0, 1, 7, 11] if npdt is np.uint8 else [0, -1, -2, -3]
        a[:4] = [2, 1, 3, 255] if npdt is np.uint8 else [-1, -1, 1, 2]
        out, x, y = (buf(s, dt, 32) for s in range(3))
        i = rng(32, 0)
        ast = kernel(st(out, i, ld(x, i) ** ld(y, i)).end(i))
        want = np.array(
            [exec_alu(Ops.POW, dt, (int(p), int(q))) for p, q in zip(a, b, strict=True)], npdt
        )
        case(f"int_pow_{dt.name}", ast, [zeros(32, npdt), a, b], {0: want}, exact=True)


def _convolution() -> None:
    cin, cout, h, w, kh = 2, 3, 5, 5, 3
    oh, ow = h - kh + 1, w - kh + 1
    img, wt = rand(cin, h, w), rand(cout, cin, kh, kh)
    out = buf(0, dtypes.float32, cout * oh * ow)
    x, f = buf(1, dtypes.float32, cin * h * w), buf(2, dtypes.float32, cout * cin * kh * kh)
    co, y, xx = rng(cout, 0), rng(oh, 1), rng(ow, 2)
    ci, ky, kx = rng(cin, 3, R), rng(kh, 4, R), rng(kh, 5, R)
    pix = ld(x, ci * h * w + (y + ky) * w + (xx + kx))
    tap = ld(f, co * cin * kh * kh + ci * kh * kh + ky * kh + kx)
    ast = kernel(
        st(out, co * oh * ow + y * ow + xx, (pix * tap).reduce(ci, ky, kx, arg=ADD)).end(co, y, xx)
    )
    want = np.zeros((cout, oh, ow), np.float32)
    for o in range(cout):
        for p in range(oh):
            for q in range(ow):
                want[o, p, q] = (img[:, p : p + kh, q : q + kh] * wt[o]).sum()
    case(
        "conv2d",
        ast,
        [zeros(cout * oh * ow), img, wt],
        {0: want},
        tol=1e-4,
        opts={
            "cpu": chain(up(5, 3, UR), typ(0, T)),
            "gpu": chain(typ(0, G), typ(1, G), typ(2, LO)),
        },
    )
    # padded 1-D convolution (masked loads inside a reduce)
    n, k_ = 8, 3
    sig, ker = rand(n), rand(k_)
    out, x, f = buf(0, dtypes.float32, n), buf(1, dtypes.float32, n), buf(2, dtypes.float32, k_)
    i, k = rng(n, 0), rng(k_, 1, R)
    pos = i + k - 1
    val = x.index(pos.valid((pos >= 0) & (pos < n))).load() * ld(f, k)
    ast = kernel(st(out, i, val.reduce(k, arg=ADD)).end(i))
    want = np.convolve(np.pad(sig, 1), ker[::-1], mode="valid")
    case(
        "conv1d_padded",
        ast,
        [zeros(n), sig, ker],
        {0: want},
        opts={"cpu": chain(up(0, 4), up(1, 3, UR)), "gpu": chain(up(0, 4, LO, G), up(1, 3, GR))},
    )


def _symbolic() -> None:
    from fusegrad.uop import UOp as _UOp

    nv = _UOp.variable("n", 1, 16)
    a = rand(16)
    out, x = buf(0, dtypes.float32, 16), buf(1, dtypes.float32, 16)
    i = rng(nv, 0)
    ast = kernel(st(out, i, ld(x, i) * 2.0).end(i))
    want = np.concatenate([a[:5] * 2, np.zeros(11, np.float32)])
    case("symbolic_elementwise", ast, [zeros(16), a], {0: want}, var_vals={"n": 5})
    # symbolic reduction length and a Variable used as a value
    out = buf(0, dtypes.float32, 1)
    k = rng(nv, 0, R)
    s = (ld(x, k) + nv.cast(dtypes.float32)).reduce(k, arg=ADD)
    ast = kernel(st(out, UOp.const(0, dtypes.weakint), s))
    case("symbolic_reduce", ast, [zeros(1), a], {0: [(a[:7] + 7).sum()]}, var_vals={"n": 7})
    # symbolic 2-D: rows of length n, stride n
    out = buf(0, dtypes.float32, 16)
    r, c = rng(2, 0), rng(nv, 1)
    ast = kernel(st(out, r * nv + c, ld(x, r * nv + c) + 1.0).end(r, c))
    want = np.concatenate([a[:8] + 1, np.zeros(8, np.float32)])
    case("symbolic_2d", ast, [zeros(16), a], {0: want}, var_vals={"n": 4}, opts={"gpu": typ(0, G)})


def _multi() -> None:
    n, m = 4, 6
    a = rand(n, m)
    o1, o2, x = (
        buf(0, dtypes.float32, n * m),
        buf(1, dtypes.float32, n),
        buf(2, dtypes.float32, n * m),
    )
    i, j, k = rng(n, 0), rng(m, 1), rng(m, 2, R)
    s1 = st(o1, i * m + j, ld(x, i * m + j) * 2.0).end(i, j)
    s2 = st(o2, i, ld(x, i * m + k).reduce(k, arg=MAX)).end(i)
    case(
        "two_outputs",
        kernel(s1, s2),
        [zeros(n * m), zeros(n), a],
        {0: a * 2, 1: a.max(1)},
        opts={"cpu": up(1, 2)},
    )
    # softmax numerator: exp2(x - max) / sum(exp2(x - max)) over rows
    out, x1 = buf(0, dtypes.float32, n * m), buf(1, dtypes.float32, n * m)
    i, j, k1, k2 = rng(n, 0), rng(m, 1), rng(m, 2, R), rng(m, 3, R)
    mx = ld(x1, i * m + k1).reduce(k1, arg=MAX)
    den = (ld(x1, i * m + k2) - mx).exp2().reduce(k2, arg=ADD)
    ast = kernel(st(out, i * m + j, (ld(x1, i * m + j) - mx).exp2() / den).end(i, j))
    e = np.exp2(a - a.max(1, keepdims=True))
    case(
        "softmax2",
        ast,
        [zeros(n * m), a],
        {0: e / e.sum(1, keepdims=True)},
        tol=1e-5,
        opts={"cpu": chain(up(1, 2), up(2, 2, UR)), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    # reductions along each axis of a 3-D tensor
    d0, d1, d2 = 2, 3, 4
    t3 = rand(d0, d1, d2)
    x3 = buf(1, dtypes.float32, d0 * d1 * d2)
    sizes = (d0, d1, d2)
    for ax in range(3):
        keep = [q for q in range(3) if q != ax]
        rs = {q: rng(sizes[q], q, R if q == ax else L) for q in range(3)}
        idx = (rs[0] * d1 + rs[1]) * d2 + rs[2]
        oidx = rs[keep[0]] * sizes[keep[1]] + rs[keep[1]]
        o = buf(0, dtypes.float32, sizes[keep[0]] * sizes[keep[1]])
        ast = kernel(st(o, oidx, ld(x3, idx).reduce(rs[ax], arg=ADD)).end(rs[keep[0]], rs[keep[1]]))
        case(
            f"reduce_3d_axis{ax}",
            ast,
            [zeros(sizes[keep[0]] * sizes[keep[1]]), t3],
            {0: t3.sum(ax)},
            opts={"cpu": up(ax, sizes[ax], UR), "gpu": typ(keep[0], G)},
        )


def _composites() -> None:
    n, m = 4, 8
    a = rand(n, m)
    x = buf(1, dtypes.float32, n * m)
    i, j, k = rng(n, 0), rng(m, 1), rng(m, 2, R)
    # mean and variance (layernorm statistics), two reductions over the same row
    out = buf(0, dtypes.float32, n * m)
    mean = ld(x, i * m + k).reduce(k, arg=ADD) * (1 / m)
    k2 = rng(m, 3, R)
    var = ((ld(x, i * m + k2) - mean) * (ld(x, i * m + k2) - mean)).reduce(k2, arg=ADD) * (1 / m)
    ast = kernel(
        st(out, i * m + j, (ld(x, i * m + j) - mean) * (var + 1e-5).sqrt().reciprocal()).end(i, j)
    )
    want = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)
    case(
        "layernorm",
        ast,
        [zeros(n * m), a],
        {0: want},
        tol=1e-4,
        opts={"cpu": chain(up(1, 4), up(2, 4, UR)), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    # cumulative sum along a row: a triangular masked reduction
    out = buf(0, dtypes.float32, n * m)
    kk = rng(m, 4, R)
    tri = (kk < j + 1).where(ld(x, i * m + kk), UOp.const(0.0, dtypes.float32))
    ast = kernel(st(out, i * m + j, tri.reduce(kk, arg=ADD)).end(i, j))
    case(
        "cumsum", ast, [zeros(n * m), a], {0: np.cumsum(a, 1)}, tol=1e-5, opts={"cpu": up(4, 4, UR)}
    )
    # 2x2 max pool
    h, w = 4, 6
    img = rand(h, w)
    out, xi = buf(0, dtypes.float32, (h // 2) * (w // 2)), buf(1, dtypes.float32, h * w)
    r, c, dy, dx = rng(h // 2, 0), rng(w // 2, 1), rng(2, 2, R), rng(2, 3, R)
    ast = kernel(
        st(
            out, r * (w // 2) + c, ld(xi, (r * 2 + dy) * w + c * 2 + dx).reduce(dy, dx, arg=MAX)
        ).end(r, c)
    )
    want = img.reshape(h // 2, 2, w // 2, 2).max((1, 3))
    case(
        "maxpool2x2",
        ast,
        [zeros((h // 2) * (w // 2)), img],
        {0: want},
        opts={"cpu": chain(up(2, 2, UR), up(3, 2, UR)), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    _mixed_cases()


def _mixed_cases() -> None:
    n, m = 4, 8
    a = rand(n, m)
    x = buf(1, dtypes.float32, n * m)
    i, j, k = rng(n, 0), rng(m, 1), rng(m, 2, R)
    # int8 sum accumulated in int32
    bi = rand(n, m, dt=np.int8)
    out, xb = buf(0, dtypes.int32, n), buf(1, dtypes.int8, n * m)
    ast = kernel(st(out, i, ld(xb, i * m + k).cast(dtypes.int32).reduce(k, arg=ADD)).end(i))
    case(
        "sum_int8_to_int32",
        ast,
        [zeros(n, np.int32), bi],
        {0: bi.astype(np.int32).sum(1)},
        exact=True,
        opts={"cpu": up(2, 8, UR), "gpu": chain(typ(0, G), up(2, 4, GR))},
    )
    # half matmul accumulating in float32
    ah, bh = rand(n, m, dt=np.float16), rand(m, n, dt=np.float16)
    out, xh, yh = (
        buf(0, dtypes.float16, n * n),
        buf(1, dtypes.float16, n * m),
        buf(2, dtypes.float16, m * n),
    )
    jj = rng(n, 1)
    prod = ld(xh, i * m + k).cast(dtypes.float32) * ld(yh, k * n + jj).cast(dtypes.float32)
    ast = kernel(st(out, i * n + jj, prod.reduce(k, arg=ADD).cast(dtypes.float16)).end(i, jj))
    want = (ah.astype(np.float32) @ bh.astype(np.float32)).astype(np.float16)
    case(
        "matmul_half",
        ast,
        [zeros(n * n, np.float16), ah, bh],
        {0: want},
        tol=2e-3,
        opts={
            "cpu": chain(up(1, 4), up(2, 4, UR)),
            "gpu": chain(typ(0, G), typ(1, LO), up(2, 2, GR)),
        },
    )
    # exp and log as the frontend builds them (exp2(x/ln2), log2(x)*ln2), and sigmoid
    out = buf(0, dtypes.float32, n * m)
    v = ld(x, i * m + j)
    expo = (v * (1 / np.log(2))).exp2()
    sig = (expo.reciprocal() + 1.0).reciprocal()
    logp = ((v * v + 1.0).log2() * np.log(2)) + sig
    ast = kernel(st(out, i * m + j, logp).end(i, j))
    want = np.log(a * a + 1) + 1 / (1 + np.exp(-a))
    case(
        "exp_log_sigmoid",
        ast,
        [zeros(n * m), a],
        {0: want},
        tol=1e-5,
        opts={"cpu": up(1, 8), "gpu": chain(typ(0, G), typ(1, LO))},
    )
    # where with broadcast scalar + clamp (max/min as the frontend builds min)
    out = buf(0, dtypes.float32, n * m)
    clamped = v.maximum(-0.5).minimum(0.5)
    ast = kernel(st(out, i * m + j, clamped).end(i, j))
    case(
        "clamp",
        ast,
        [zeros(n * m), a],
        {0: np.clip(a, -0.5, 0.5)},
        exact=True,
        opts={"cpu": up(1, 8), "gpu": chain(typ(0, G), up(1, 2, LO, G))},
    )


# -- grouped (local-memory) reductions inside loops ---------------------------------------------


def _grouped_in_loops() -> None:
    """A GROUP_REDUCE nested in a reduce loop: the local buffer of partials is refilled every
    iteration of the outer loop (the barrier placement test_local_barriers checks)."""
    n, a_, b_ = 3, 5, 16
    data = rand(n, a_, b_)
    out, x = buf(0, dtypes.float32, n), buf(1, dtypes.float32, n * a_ * b_)
    i, k1, k2 = rng(n, 0), rng(a_, 1, R), rng(b_, 2, R)
    row_max = ld(x, i * a_ * b_ + k1 * b_ + k2).reduce(k2, arg=MAX)
    ast = kernel(st(out, i, row_max.reduce(k1, arg=ADD)).end(i))
    case(
        "grouped_max_in_sum",
        ast,
        [zeros(n), data],
        {0: data.max(2).sum(1)},
        opts={"cpu": up(2, 4, UR), "gpu": chain(typ(0, G), up(2, 8, GR))},
        tol=1e-5,
    )
    # the same partials buffer shape in a sum of sums, vectors of 2 per thread
    y = buf(1, dtypes.float32, n * a_ * b_)
    inner = (ld(y, i * a_ * b_ + k1 * b_ + k2) * 2.0).reduce(k2, arg=ADD)
    ast = kernel(st(out, i, (inner * inner).reduce(k1, arg=ADD)).end(i))
    want = ((data * 2).sum(2) ** 2).sum(1)
    case(
        "grouped_sum_in_sum",
        ast,
        [zeros(n), data],
        {0: want},
        opts={"cpu": up(2, 8, UR), "gpu": chain(typ(0, G), up(2, 4, GR))},
        tol=1e-4,
    )


# -- stores under a mask (the optimizer's PADTO pads an axis and masks what it added) --------


def _gated_stores() -> None:
    n, pad, k_, m = 6, 8, 8, 8
    a, b = rand(n, k_), rand(k_, m)
    out, x, y = (
        buf(0, dtypes.float32, n * m),
        buf(1, dtypes.float32, n * k_),
        buf(2, dtypes.float32, k_ * m),
    )
    i, j, k = rng(pad, 0), rng(m, 1), rng(k_, 2, R)
    ok = i < n
    val = (ld(x, (i * k_ + k).valid(ok)) * ld(y, k * m + j)).reduce(k, arg=ADD)
    ast = kernel(st(out, (i * m + j).valid(ok), val).end(i, j))
    case(
        "padded_matmul",
        ast,
        [zeros(n * m), a, b],
        {0: a @ b},
        opts={"cpu": up(1, 4), "gpu": chain(typ(0, G), up(1, 4, LO, G))},
        tol=1e-4,
    )
    # a grouped reduction whose row is masked: the barrier stays outside the IF
    out = buf(0, dtypes.float32, n)
    i, k = rng(pad, 0), rng(k_, 1, R)
    ok = i < n
    ast = kernel(st(out, i.valid(ok), ld(x, (i * k_ + k).valid(ok)).reduce(k, arg=MAX)).end(i))
    case(
        "padded_rows_max",
        ast,
        [zeros(n), a],
        {0: a.max(1)},
        opts={"cpu": up(1, 4, UR), "gpu": chain(typ(0, G), up(1, 4, GR))},
    )
    # two outputs under one mask
    o1, o2, xs = buf(0, dtypes.float32, n), buf(1, dtypes.float32, n), buf(2, dtypes.float32, n)
    v = rand(n)
    i = rng(pad, 0)
    ok = i < n
    xv = ld(xs, i.valid(ok))
    ast = kernel(st(o1, i.valid(ok), xv * 2.0).end(i), st(o2, i.valid(ok), xv + 1.0).end(i))
    case(
        "masked_two_outputs",
        ast,
        [zeros(n), zeros(n), v],
        {0: v * 2, 1: v + 1},
        opts={"cpu": up(0, 4), "gpu": up(0, 4, LO, G)},
    )
