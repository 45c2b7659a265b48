"""int64/uint64 on a target without a 64-bit integer ALU (``Renderer.no_int64_alu``): lowered
to pairs of uint32 words, executed in the PYTHON emulator, bit-exact against NumPy (with its
wrap-around) and against the same kernel with native int64 (the emulator's ``exec_alu``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import corpus as C
import numpy as np
import pytest
import targets as T
from fusegrad.codegen.lower import to_program
from fusegrad.uop import DType, Ops, UOp, dtypes

R32, R64 = T.Scalar32TestRenderer(), T.RENDERERS["scalar"]
WIDE = (dtypes.int64, dtypes.uint64)
IDS = [d.name for d in WIDE]
NP = {dtypes.int64: np.int64, dtypes.uint64: np.uint64}
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def values(dt: DType, n: int = 160, seed: int = 0) -> np.ndarray:
    """Edge values (0, +-1, INT64_MIN/MAX, carries across bits 31/32, 16-bit halves) then
    random 64-bit patterns and small numbers."""
    edges = [0, 1, -1, 2, -2, I64_MIN, I64_MAX, I64_MIN + 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
             2**32 + 1, -(2**31), -(2**32), 0xFFFF, 0x10000, 0xFFFFFFFF0000, 0x7FFFFFFF80000000,
             3, 7, -7, 1000003, -(10**12), 10**15 + 7]  # fmt: skip
    rs = np.random.default_rng(seed)
    bits = rs.integers(0, 2**64, n - len(edges), dtype=np.uint64)
    small = rs.integers(-300, 300, n - len(edges), dtype=np.int64).view(np.uint64)
    mixed = np.where(rs.random(n - len(edges)) < 0.3, small, bits)
    out = np.concatenate([np.array(edges, np.int64).view(np.uint64), mixed])
    return out.view(NP[dt])


def ld(b: UOp, i: UOp) -> UOp:
    return b.index(i).load()


def run(ast: UOp, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """``ast`` on the 32-bit target and natively (64-bit scalar target), both in the PYTHON
    emulator; they must agree bit for bit; the 32-bit run's arrays."""
    spec = to_program(ast, R32)
    wide = [u for u in spec.uops if u.dtype.scalar() in WIDE and u.op is not Ops.PARAM]
    assert not wide, wide[:3]
    got = T.run_program(spec, arrays)
    native = T.run_program(to_program(ast, R64), arrays)
    for g, n in zip(got, native, strict=True):
        np.testing.assert_array_equal(g, n)
    return got


def binary_kernel(op: Ops, dt: DType, out_dt: DType, n: int) -> UOp:
    i = T.rng(n, 0)
    out, x, y = T.buf(0, out_dt, n), T.buf(1, dt, n), T.buf(2, dt, n)
    return T.kernel(out.index(i).store(UOp(op, out_dt, (ld(x, i), ld(y, i)))).end(i))


def _wrap(f: Callable[[Any, Any], Any]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def g(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(f(a, b))

    return g


_NUMPY: dict[Ops, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    Ops.ADD: _wrap(np.add), Ops.SUB: _wrap(np.subtract), Ops.MUL: _wrap(np.multiply),
    Ops.AND: _wrap(np.bitwise_and), Ops.OR: _wrap(np.bitwise_or), Ops.XOR: _wrap(np.bitwise_xor),
    Ops.MAX: _wrap(np.maximum), Ops.CMPLT: _wrap(np.less), Ops.CMPNE: _wrap(np.not_equal),
}  # fmt: skip


@pytest.mark.parametrize("op", list(_NUMPY), ids=[o.name for o in _NUMPY])
@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_binary_op_matches_numpy(op: Ops, dt: DType) -> None:
    a, b = values(dt), np.roll(values(dt, seed=1), 7)
    a, b = np.concatenate([a, a[:40]]), np.concatenate([b, a[:40]])  # equal pairs too
    out_dt = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE) else dt
    n = len(a)
    got = run(binary_kernel(op, dt, out_dt, n), [np.zeros(n, T._NP[out_dt]), a, b])[0]
    np.testing.assert_array_equal(got, _NUMPY[op](a, b))


def _c_div(a: np.ndarray, b: np.ndarray, mod: bool) -> np.ndarray:
    """C-truncating division, 0 for a zero divisor, wrapped (INT64_MIN / -1)."""
    out = []
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        q = 0 if y == 0 else abs(x) // abs(y) * (1 if (x >= 0) == (y > 0) else -1)
        out.append((0 if y == 0 else x - y * q) if mod else q)
    return np.array([v & (2**64 - 1) for v in out], np.uint64).view(a.dtype)


@pytest.mark.parametrize("op", [Ops.CDIV, Ops.CMOD], ids=["cdiv", "cmod"])
@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_division_by_variables(op: Ops, dt: DType) -> None:
    a = values(dt, 96)
    divisors = [0, 1, -1, 3, 7, 2**32, -5, 2**33 + 1, 10, 0, 1, -(2**40), 65537, 1 << 62, -9,
                13, 100, 255, 256, -1, 2, 4, 2**31, -(2**31), 11, 12, 17, 19, 23, 29, 31, 37,
                41, 43, 47, 53]  # fmt: skip
    b = np.concatenate([values(dt, 96, seed=2)[:60], np.array(divisors, np.int64).view(NP[dt])])
    n = len(a)
    got = run(binary_kernel(op, dt, dt, n), [np.zeros(n, NP[dt]), a, b])[0]
    np.testing.assert_array_equal(got, _c_div(a, b, op is Ops.CMOD))
    if dt is dtypes.int64:  # NumPy agrees where it is defined (no zero, no INT64_MIN / -1)
        ok = (b != 0) & ~((a == I64_MIN) & (b == -1))
        with np.errstate(all="ignore"):
            want = np.fmod(a, b) if op is Ops.CMOD else (a - np.fmod(a, b)) // np.where(ok, b, 1)
        np.testing.assert_array_equal(got[ok], want[ok])


_DIVISORS = [1, 2, 8, 2**31, 2**32, 2**62, 3, 10, -4, 1000000007, -1, -3, 7, 641, 2**32 + 1,
             2**63 - 1, -(2**63), 2**63 + 5, 2**64 - 1, 0x123456789ABCDEF, -(10**15) - 37]  # fmt: skip


@pytest.mark.parametrize("divisor", _DIVISORS)
@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_division_by_constants(dt: DType, divisor: int) -> None:
    """Powers of two as shifts, other constants by a magic multiply-high (both signs, the
    extremes of both dtypes)."""
    divisor = divisor % 2**64 if dt is dtypes.uint64 else (divisor + 2**63) % 2**64 - 2**63
    a = values(dt, 64)
    n = len(a)
    i = T.rng(n, 0)
    q, r, x = T.buf(0, dt, n), T.buf(1, dt, n), T.buf(2, dt, n)
    d = UOp.const(divisor, dt)
    ast = T.kernel(
        q.index(i).store(ld(x, i).cdiv(d)).end(i),
        r.index(i).store(ld(x, i).cmod(d)).end(i),
    )
    got = run(ast, [np.zeros(n, NP[dt]), np.zeros(n, NP[dt]), a])
    b = np.full(n, divisor, NP[dt])
    np.testing.assert_array_equal(got[0], _c_div(a, b, False))
    np.testing.assert_array_equal(got[1], _c_div(a, b, True))


@pytest.mark.parametrize("right", [False, True], ids=["shl", "shr"])
@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_shifts_by_variables_and_constants(dt: DType, right: bool) -> None:
    a = values(dt, 128)
    s = np.arange(128) % 64
    n = len(a)
    i = T.rng(n, 0)
    out, consts, x, y = T.buf(0, dt, n), T.buf(1, dt, n), T.buf(2, dt, n), T.buf(3, dt, n)
    op = Ops.SHR if right else Ops.SHL
    v = ld(x, i)
    by_const = UOp.const(0, dt)
    for k in (0, 1, 13, 31, 32, 33, 47, 63):
        by_const = by_const ^ UOp(op, dt, (v, UOp.const(k, dt)))
    ast = T.kernel(
        out.index(i).store(UOp(op, dt, (v, ld(y, i)))).end(i),
        consts.index(i).store(by_const).end(i),
    )
    got = run(ast, [np.zeros(n, NP[dt]), np.zeros(n, NP[dt]), a, s.astype(NP[dt])])
    sh = s.astype(NP[dt])
    want = (a >> sh) if right else (a << sh)
    np.testing.assert_array_equal(got[0], want)
    acc = np.zeros(n, NP[dt])
    for k in (0, 1, 13, 31, 32, 33, 47, 63):
        acc ^= (a >> NP[dt](k)) if right else (a << NP[dt](k))
    np.testing.assert_array_equal(got[1], acc)


@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_neg_where_and_accumulated_sum(dt: DType) -> None:
    """-x, where(x < y, x, y), and a reduction over a register accumulator of int64."""
    a, b = values(dt, 64), values(dt, 64, seed=5)
    n = len(a)
    i = T.rng(n, 0)
    out, sel, x, y = T.buf(0, dt, n), T.buf(1, dt, n), T.buf(2, dt, n), T.buf(3, dt, n)
    va, vb = ld(x, i), ld(y, i)
    ast = T.kernel(
        out.index(i).store(-va).end(i),
        sel.index(i).store(UOp(Ops.CMPLT, dtypes.bool, (va, vb)).where(va, vb)).end(i),
    )
    got = run(ast, [np.zeros(n, NP[dt]), np.zeros(n, NP[dt]), a, b])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[0], (np.zeros(n, NP[dt]) - a))
    np.testing.assert_array_equal(got[1], np.where(a < b, a, b))
    r = T.rng(n, 0, C.R)
    total = T.buf(0, dt, 1)
    ast = T.kernel(
        total.index(UOp.const(0, dtypes.weakint)).store(
            ld(T.buf(1, dt, n), r).reduce(r, arg=Ops.ADD)
        )
    )
    got = run(ast, [np.zeros(1, NP[dt]), a])[0]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, np.array([a.sum()], NP[dt]))


_NARROW = [
    dtypes.int32,
    dtypes.uint32,
    dtypes.int8,
    dtypes.uint16,
    dtypes.bool,
    dtypes.float32,
    dtypes.float64,
]


@pytest.mark.parametrize("other", _NARROW, ids=[d.name for d in _NARROW])
@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_casts_both_ways(dt: DType, other: DType) -> None:
    a = values(dt, 96)
    n = len(a)
    i = T.rng(n, 0)
    down, x = T.buf(0, other, n), T.buf(1, dt, n)
    got = run(
        T.kernel(down.index(i).store(ld(x, i).cast(other)).end(i)), [np.zeros(n, T._NP[other]), a]
    )[0]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            got,
            a.astype(T._NP[other])
            if other is not dtypes.float32
            else a.astype(np.float64).astype(np.float32),
        )
    src = _sources(other)
    m = len(src)
    j = T.rng(m, 0)
    up, y = T.buf(0, dt, m), T.buf(1, other, m)
    got = run(T.kernel(up.index(j).store(ld(y, j).cast(dt)).end(j)), [np.zeros(m, NP[dt]), src])[0]
    if not dtypes.is_float(other):
        np.testing.assert_array_equal(got, src.astype(NP[dt]))


def _sources(dt: DType) -> np.ndarray:
    if dt is dtypes.bool:
        return np.array([0, 1, 1, 0], np.bool_)
    if dtypes.is_int(dt):
        lo, hi = dtypes.min(dt), dtypes.max(dt)
        return np.array([lo, hi, 0, 1, lo + 1, hi - 1, (lo + hi) // 2], T._NP[dt])
    v = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.0**31, 2.0**32 + 3, -(2.0**40) - 0.75, 2.0**52 + 1, 2.0**62,
         2.0**63, -(2.0**63), 2.0**64, 1.8e19, -1e19, 1e30, np.inf, -np.inf, np.nan, 123456789.9]  # fmt: skip
    return np.array(v, T._NP[dt])


def test_int64_corpus_kernels() -> None:
    """The corpus kernels that compute in int64/uint64 (mixed arithmetic with floor division,
    threefry's uint64 words) on the 32-bit target."""
    cases = [c for c in C.build() if any(u.dtype.scalar() in WIDE for u in c.ast.toposort())]
    assert len(cases) >= 2
    for c in cases:
        out = run(c.ast, c.inputs)
        for slot, want in c.expected.items():
            np.testing.assert_array_equal(out[slot], want.reshape(-1))


@pytest.mark.parametrize("c", C.build(), ids=lambda c: c.name)
def test_every_corpus_kernel_on_the_32bit_target(c: Any) -> None:
    """The stage leaves kernels without 64-bit integers working (index math included)."""
    spec = to_program(c.ast, R32)
    out = T.run_program(spec, c.inputs, c.var_vals)
    for slot, want in c.expected.items():
        got = out[slot]
        if spec.buffers[slot].dtype is dtypes.bfloat16:
            got = T.bf16_values(got)
        if c.exact:
            np.testing.assert_array_equal(got, want.reshape(-1))
        else:
            np.testing.assert_allclose(
                got, want.reshape(-1).astype(got.dtype), rtol=c.tol, atol=c.tol
            )


def test_unsupported_op_names_itself() -> None:
    n = 4
    i = T.rng(n, 0)
    out, x = T.buf(0, dtypes.float64, n), T.buf(1, dtypes.int64, n)
    ast = T.kernel(out.index(i).store(ld(x, i).bitcast(dtypes.float64)).end(i))
    with pytest.raises(
        NotImplementedError, match=r"int64 emulation: BITCAST dtypes.int64 -> dtypes.float64"
    ):
        to_program(ast, R32)


def test_gather_by_int64_indices() -> None:
    """An int64 index loaded from memory, masked to the buffer: the index math and its
    validity gate are 64-bit, the address is the low word."""
    n, m = 24, 10
    i = T.rng(n, 0)
    out, x, idx = (
        T.buf(0, dtypes.float32, n),
        T.buf(1, dtypes.float32, m),
        T.buf(2, dtypes.int64, n),
    )
    e = ld(idx, i).cast(dtypes.weakint)
    ok = (e >= 0) & (e < m)
    ast = T.kernel(out.index(i).store(x.index(e.valid(ok)).load()).end(i))
    picks = np.array([0, 9, 10, -1, 2**32 + 3, -(2**32) + 1, 5, I64_MIN, I64_MAX, 3] * 3, np.int64)[
        :n
    ]
    data = np.arange(m, dtype=np.float32) + 0.5
    got = run(ast, [np.zeros(n, np.float32), data, picks])[0]
    inside = (picks >= 0) & (picks < m)
    np.testing.assert_array_equal(got, np.where(inside, data[np.clip(picks, 0, m - 1)], 0))


# -- on the CPU: the 32-bit code through the LLVM and C renderers, compiled and run ------------


def _native_targets() -> list[Any]:
    from fusegrad.renderer import CCompiler, CRenderer, LLVMCompiler, LLVMRenderer
    from fusegrad.renderer.conformance import conformance_targets

    class LLVM32(LLVMRenderer):  # type: ignore[misc]
        no_int64_alu = True

    class C32(CRenderer):  # type: ignore[misc]
        no_int64_alu = True

    out = []
    for t in conformance_targets():
        if t.name not in ("LLVM", "C-gcc"):
            continue
        pair = (
            (LLVM32(fast_math=False), LLVMCompiler())
            if t.name == "LLVM"
            else (C32(), CCompiler("gcc"))
        )
        marks = [] if t.unavailable() is None else [pytest.mark.skip(reason=t.unavailable())]
        out.append(pytest.param(pair, id=t.name, marks=marks))
    return out


def _native_kernels() -> list[tuple[UOp, list[np.ndarray]]]:
    n = 96
    a, b = values(dtypes.int64, n), np.roll(values(dtypes.int64, n, seed=4), 5)
    b = np.where(np.arange(n) % 3 == 0, np.arange(n) - 40, b).astype(np.int64)
    i = T.rng(n, 0)
    outs = [T.buf(k, dtypes.int64, n) for k in range(6)]
    f = T.buf(6, dtypes.float64, n)
    x, y = T.buf(7, dtypes.int64, n), T.buf(8, dtypes.int64, n)
    va, vb = ld(x, i), ld(y, i)
    exprs = [va * vb + va, va.cdiv(vb), va.cmod(vb), va << (vb & 63), va >> (vb & 63),
             UOp(Ops.CMPLT, dtypes.bool, (va, vb)).where(va ^ vb, va - vb)]  # fmt: skip
    effects = [o.index(i).store(v).end(i) for o, v in zip(outs, exprs, strict=True)]
    effects.append(
        f.index(i)
        .store(va.cast(dtypes.float64) + vb.cast(dtypes.float32).cast(dtypes.float64))
        .end(i)
    )
    arrays = [np.zeros(n, np.int64)] * 6 + [np.zeros(n, np.float64), a, b]
    return [(T.kernel(*effects), arrays)]


@pytest.mark.parametrize("pair", _native_targets())
def test_32bit_code_runs_on_the_cpu(pair: Any) -> None:
    renderer, compiler = pair
    for ast, arrays in _native_kernels():
        spec = to_program(ast, renderer)
        assert not [u for u in spec.uops if u.dtype.scalar() in WIDE and u.op is not Ops.PARAM]
        want = T.run_program(to_program(ast, R64), arrays)
        got = [np.array(x).copy() for x in arrays]
        T.run_compiled(spec, renderer, compiler, got)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


class Half32Renderer(T.Scalar32TestRenderer):  # type: ignore[misc,name-defined]
    """32-bit integers only, but float16/bfloat16 native."""

    suffix = "TESTHALF32"
    supported_dtypes = frozenset(dtypes.all) - {dtypes.weakint, dtypes.weakfloat}


@pytest.mark.parametrize("half", [dtypes.float16, dtypes.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("dt", WIDE, ids=IDS)
def test_cast_to_native_half_floats(dt: DType, half: DType) -> None:
    """int64 -> float16/bfloat16 rounds as ``truncate`` does (bfloat16 through float32)."""
    ties = [2**24 + 2**16 + 1, 2**40 + 2**32 + 1, 3 * 2**30 + 2**22 + 7]  # bf16 double rounding
    a = np.concatenate([values(dt, 64), np.array(ties, NP[dt])])
    n = len(a)
    i = T.rng(n, 0)
    out, x = T.buf(0, half, n), T.buf(1, dt, n)
    ast = T.kernel(out.index(i).store(ld(x, i).cast(half)).end(i))
    spec = to_program(ast, Half32Renderer())
    assert not [u for u in spec.uops if u.dtype.scalar() in WIDE and u.op is not Ops.PARAM]
    got = T.run_program(spec, [np.zeros(n, T._NP[half]), a])[0]
    want = T.run_program(to_program(ast, T.RENDERERS["cpu"]), [np.zeros(n, T._NP[half]), a])[0]
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
