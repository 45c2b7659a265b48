"""The PYTHON emulator against NumPy on hand-built linear programs."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pytest
from fusegrad.codegen import verify_linear
from fusegrad.runtime.emulator import run_linear
from fusegrad.uop import AxisType, DType, Ops, UOp, dtypes


def run(prog: list[UOp], bufs: list[Any], **kw: Any) -> None:
    if not any(u.op is Ops.AFTER for u in prog):  # TODO(#9): spec_linear has no AFTER yet
        verify_linear(prog)
    run_linear(prog, bufs, **kw)


def test_elementwise_add_over_global_ids(lb: Any) -> None:
    n = 37
    a, b = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    out = np.zeros(n, np.float32)
    i = lb.special("gidx0", n)
    pa, pb, pc = (
        lb.buf(0, dtypes.float32, n),
        lb.buf(1, dtypes.float32, n),
        lb.buf(2, dtypes.float32, n),
    )
    prog = lb.linear(lb.store(pc.index(i), lb.load(pa.index(i)) + lb.load(pb.index(i))))
    run(prog, [a, b, out], global_size=(n, 1, 1))
    np.testing.assert_array_equal(out, a + b)


def test_two_dim_grid_with_loop_inside(lb: Any) -> None:
    # out[y, x] = sum_k a[y, k] * b[k, x] with y, x from the grid and k a loop: a matmul
    m, k, n = 3, 5, 4
    rs = np.random.default_rng(1)
    a = rs.integers(-9, 9, (m, k)).astype(np.int32)
    b = rs.integers(-9, 9, (k, n)).astype(np.int32)
    out = np.zeros((m, n), np.int32)
    x, y = lb.special("gidx0", n), lb.special("gidx1", m)
    pa, pb, po = (
        lb.buf(0, dtypes.int32, m * k),
        lb.buf(1, dtypes.int32, k * n),
        lb.buf(2, dtypes.int32, m * n),
    )
    acc = lb.reg("acc", dtypes.int32, 1)
    r = lb.rng(k, 0, AxisType.REDUCE)
    init = lb.store(acc.index(lb.c32(0)), lb.c32(0))
    prod_ = lb.load(pa.index(y * k + r)) * lb.load(pb.index(r * n + x))
    upd = lb.store(acc.index(lb.c32(0)), lb.load(acc.index(lb.c32(0))) + prod_)
    done = lb.end(r)
    fin = lb.store(po.index(y * n + x), lb.load(acc.after(done).index(lb.c32(0))))
    prog = lb.linear(init, r, upd, done, fin)
    run(prog, [a, b, out], global_size=(n, m, 1))
    np.testing.assert_array_equal(out, a @ b)


def test_float32_reduction_accumulates_in_order_in_float32(lb: Any) -> None:
    n = 1000
    a = (np.random.default_rng(2).standard_normal(n) * 1e3).astype(np.float32)
    out = np.zeros(1, np.float32)
    pa, po = lb.buf(0, dtypes.float32, n), lb.buf(1, dtypes.float32, 1)
    acc, zero = lb.reg("acc", dtypes.float32, 1), lb.c32(0)
    r = lb.rng(n)
    init = lb.store(acc.index(zero), UOp.const(0.0, dtypes.float32))
    upd = lb.store(acc.index(zero), lb.load(acc.index(zero)) + lb.load(pa.index(r)))
    done = lb.end(r)
    fin = lb.store(po.index(zero), lb.load(acc.after(done).index(zero)))
    run(lb.linear(init, r, upd, done, fin), [a, out])
    expect = np.float32(0)
    for v in a:
        expect = np.float32(expect + v)
    assert out[0] == expect


def test_gated_load_gives_alt_and_never_reads_out_of_bounds(lb: Any) -> None:
    # out[i] = a[i - 1] if i > 0 else -7: the masked lane's index is -1, never read
    n = 9
    a = np.arange(10, 10 + n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    i = lb.special("gidx0", n)
    pa, po = lb.buf(0, dtypes.int32, n), lb.buf(1, dtypes.int32, n)
    v = lb.load(pa.index(i - 1, gate=i > 0), alt=lb.c32(-7))
    run(lb.linear(lb.store(po.index(i), v)), [a, out], global_size=(n,))
    np.testing.assert_array_equal(out, np.concatenate([[-7], a[:-1]]))


def test_gated_store_writes_only_where_gate_holds(lb: Any) -> None:
    n = 10
    out = np.full(n, -1, np.int32)
    i = lb.special("gidx0", n)
    po = lb.buf(0, dtypes.int32, n)
    st = lb.store(po.index(i, gate=(i % 3).eq(0)), i * 2)
    run(lb.linear(st), [out], global_size=(n,))
    expect = np.where(np.arange(n) % 3 == 0, np.arange(n) * 2, -1)
    np.testing.assert_array_equal(out, expect)


def test_vector_load_alu_store(lb: Any) -> None:
    n = 16
    a = np.arange(n, dtype=np.float32) / 3
    out = np.zeros(n, np.float32)
    i = lb.special("gidx0", n // 4)
    f4 = dtypes.float32.vec(4)
    pa, po = lb.buf(0, dtypes.float32, n), lb.buf(1, dtypes.float32, n)
    x = lb.load(pa.index(i * 4), dt=f4)
    scale = UOp(Ops.VCONST, f4, (), (1.0, 2.0, 3.0, 4.0))
    y = x * scale
    swapped = UOp(Ops.GEP, f4, (y,), (1, 0, 3, 2))
    run(lb.linear(lb.store(po.index(i * 4), swapped)), [a, out], global_size=(n // 4,))
    expect = (a.reshape(-1, 4) * np.float32([1, 2, 3, 4]))[:, [1, 0, 3, 2]].reshape(-1)
    np.testing.assert_array_equal(out, expect)


def test_vectorize_and_single_lane_gep(lb: Any) -> None:
    out = np.zeros(2, np.int32)
    po = lb.buf(0, dtypes.int32, 2)
    vec = UOp(Ops.VECTORIZE, dtypes.int32.vec(3), (lb.c32(5), lb.c32(6), lb.c32(7)))
    first = UOp(Ops.GEP, dtypes.int32, (vec,), (2,))
    prog = lb.linear(lb.store(po.index(lb.c32(1)), first))
    run(prog, [out])
    assert out.tolist() == [0, 7]


def test_local_memory_with_barrier_reverses_each_workgroup(lb: Any) -> None:
    groups, size = 3, 8
    a = np.arange(groups * size, dtype=np.float32)
    out = np.zeros_like(a)
    g, t = lb.special("gidx0", groups), lb.special("lidx0", size)
    pa, po = lb.buf(0, dtypes.float32, a.size), lb.buf(1, dtypes.float32, a.size)
    tmp = lb.local("tmp", dtypes.float32, size)
    st1 = lb.store(tmp.index(t), lb.load(pa.index(g * size + t)))
    bar = UOp(Ops.BARRIER, dtypes.void, (st1,))
    st2 = lb.store(po.index(g * size + t), lb.load(tmp.index((size - 1) - t)))
    run(lb.linear(st1, bar, st2), [a, out], global_size=(groups,), local_size=(size,))
    np.testing.assert_array_equal(out, a.reshape(groups, size)[:, ::-1].reshape(-1))


def test_group_reduce_through_local_memory(lb: Any) -> None:
    # each thread stores its value, then thread 0 of each group sums the group's locals
    groups, size = 4, 16
    a = np.arange(groups * size, dtype=np.int32)
    out = np.zeros(groups, np.int32)
    g, t = lb.special("gidx0", groups), lb.special("lidx0", size)
    pa, po = lb.buf(0, dtypes.int32, a.size), lb.buf(1, dtypes.int32, groups)
    tmp, acc, zero = lb.local("tmp", dtypes.int32, size), lb.reg("acc", dtypes.int32, 1), lb.c32(0)
    st1 = lb.store(tmp.index(t), lb.load(pa.index(g * size + t)))
    bar = UOp(Ops.BARRIER, dtypes.void, (st1,))
    cond = UOp(Ops.IF, dtypes.void, (t.eq(0),))
    r = lb.rng(size)
    init = lb.store(acc.index(zero), zero)
    upd = lb.store(acc.index(zero), lb.load(acc.index(zero)) + lb.load(tmp.index(r)))
    done = lb.end(r)
    fin = lb.store(po.index(g), lb.load(acc.after(done).index(zero)))
    endif = UOp(Ops.ENDIF, dtypes.void, (cond,))
    prog = lb.linear(st1, bar, init, cond, r, upd, done, fin, endif)
    run(prog, [a, out], global_size=(groups,), local_size=(size,))
    np.testing.assert_array_equal(out, a.reshape(groups, size).sum(axis=1))


def test_divergent_loop_trip_counts_per_lane(lb: Any) -> None:
    # out[i] = sum(range(i)): lane i runs i iterations; lane 0 none
    n = 7
    out = np.full(n, 99, np.int32)
    i = lb.special("gidx0", n)
    po, acc, zero = lb.buf(0, dtypes.int32, n), lb.reg("acc", dtypes.int32, 1), lb.c32(0)
    r = lb.rng(i)
    init = lb.store(acc.index(zero), zero)
    upd = lb.store(acc.index(zero), lb.load(acc.index(zero)) + r)
    done = lb.end(r)
    fin = lb.store(po.index(i), lb.load(acc.after(done).index(zero)))
    run(lb.linear(init, r, upd, done, fin), [out], global_size=(n,))
    np.testing.assert_array_equal(out, [k * (k - 1) // 2 for k in range(n)])


def test_nested_loops_and_if_inside_a_loop(lb: Any) -> None:
    rows, cols = 4, 5
    out = np.zeros(rows * cols, np.int32)
    po = lb.buf(0, dtypes.int32, rows * cols)
    r0, r1 = lb.rng(rows, 0), lb.rng(cols, 1)
    cond = UOp(Ops.IF, dtypes.void, (((r0 + r1) % 2).eq(1),))
    st = lb.store(po.index(r0 * cols + r1), r0 * 10 + r1)
    prog = lb.linear(r0, r1, cond, st, UOp(Ops.ENDIF, dtypes.void, (cond,)), lb.end(r1), lb.end(r0))
    run(prog, [out])
    yy, xx = np.mgrid[0:rows, 0:cols]
    np.testing.assert_array_equal(out, np.where((yy + xx) % 2 == 1, yy * 10 + xx, 0).reshape(-1))


def test_variables_set_loop_bounds_and_are_range_checked(lb: Any) -> None:
    out = np.zeros(8, np.int32)
    n = lb.var("n", 1, 8)
    po = lb.buf(0, dtypes.int32, 8)
    r = lb.rng(n)
    prog = lb.linear(r, lb.store(po.index(r), n - r), lb.end(r))
    run(prog, [out], var_vals={"n": 5})
    assert out.tolist() == [5, 4, 3, 2, 1, 0, 0, 0]
    with pytest.raises(ValueError, match=r"n=9 outside \[1, 8\]"):
        run_linear(prog, [out], var_vals={"n": 9})
    with pytest.raises(ValueError, match="no value for variable 'n'"):
        run_linear(prog, [out])


def test_thread_split_kernel_runs_every_core(lb: Any) -> None:
    cores, per = 4, 6
    out = np.zeros(cores * per, np.int32)
    core = lb.special("core", cores)
    po = lb.buf(0, dtypes.int32, out.size)
    r = lb.rng(per, 0, AxisType.THREAD)
    prog = lb.linear(core, r, lb.store(po.index(core * per + r), core * 100 + r), lb.end(r))
    run(prog, [out])
    expect = (np.arange(cores)[:, None] * 100 + np.arange(per)[None, :]).reshape(-1)
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize(("groups", "cores"), [(5, 3), (2, 4), (7, 1)])
def test_core_slices_share_a_grid(lb: Any, groups: int, cores: int) -> None:
    """gidx ids and a core id together: core c runs the c-th block of ceil(groups / cores)
    workgroups, so an in-place add runs once per element and records its core."""
    acc, who = np.zeros(groups, np.int32), np.full(groups, -1, np.int32)
    g, core = lb.special("gidx0", groups), lb.special("core", cores)
    pa, pw = lb.buf(0, dtypes.int32, groups), lb.buf(1, dtypes.int32, groups)
    prog = lb.linear(
        g, core, lb.store(pa.index(g), pa.index(g).load() + 1), lb.store(pw.index(g), core)
    )
    run(prog, [acc, who], global_size=(groups,))
    block = -(-groups // cores)
    np.testing.assert_array_equal(acc, np.ones(groups))
    np.testing.assert_array_equal(who, np.arange(groups) // block)


def test_local_ids_and_flat_global_id(lb: Any) -> None:
    out = np.zeros(12, np.int32)
    idx, g, t = lb.special("idx0", 3), lb.special("gidx0", 3), lb.special("lidx0", 4)
    po = lb.buf(0, dtypes.int32, 12)
    prog = lb.linear(lb.store(po.index(g * 4 + t), idx * 100 + g * 10 + t))
    run(prog, [out], global_size=(3,), local_size=(4,))
    flat = np.arange(12)
    np.testing.assert_array_equal(out, flat * 100 + (flat // 4) * 10 + flat % 4)


# -- bounds -----------------------------------------------------------------------------------------


def test_out_of_bounds_load_names_slot_index_and_size(lb: Any) -> None:
    a, out = np.zeros(4, np.float32), np.zeros(5, np.float32)
    i = lb.special("gidx0", 5)
    pa, po = lb.buf(0, dtypes.float32, 4), lb.buf(1, dtypes.float32, 5)
    prog = lb.linear(lb.store(po.index(i), lb.load(pa.index(i))))
    with pytest.raises(IndexError, match=r"index 4 out of bounds for buffer slot 0 \(4 elements"):
        run_linear(prog, [a, out], global_size=(5,))


def test_out_of_bounds_vector_store_and_negative_index(lb: Any) -> None:
    out = np.zeros(6, np.int32)
    po = lb.buf(0, dtypes.int32, 6)
    vec = UOp(Ops.VCONST, dtypes.int32.vec(4), (), (1, 2, 3, 4))
    with pytest.raises(IndexError, match=r"indices 4\.\.7 out of bounds for buffer slot 0"):
        run_linear(lb.linear(lb.store(po.index(lb.c32(4)), vec)), [out])
    with pytest.raises(IndexError, match=r"index -1 out of bounds"):
        run_linear(lb.linear(lb.store(po.index(lb.c32(-1)), lb.c32(0))), [out])
    assert out.tolist() == [0] * 6  # nothing partially written


def test_out_of_bounds_local_and_register(lb: Any) -> None:
    tmp, acc = lb.local("tmp", dtypes.int32, 4), lb.reg("acc", dtypes.int32, 2)
    with pytest.raises(IndexError, match=r"local 'tmp' of workgroup 0"):
        run_linear(lb.linear(lb.store(tmp.index(lb.c32(4)), lb.c32(1))), [])
    with pytest.raises(IndexError, match=r"register 'acc'"):
        run_linear(lb.linear(lb.store(acc.index(lb.c32(2)), lb.c32(1))), [])


# -- dtypes -------------------------------------------------------------------------------------

NUMPY_DTYPES = {
    dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.uint8: np.uint8, dtypes.int16: np.int16,
    dtypes.uint16: np.uint16, dtypes.int32: np.int32, dtypes.uint32: np.uint32,
    dtypes.int64: np.int64, dtypes.uint64: np.uint64, dtypes.float16: np.float16,
    dtypes.float32: np.float32, dtypes.float64: np.float64,
}  # fmt: skip


def _binary(lb: Any, dt: DType, op: Ops, n: int) -> list[UOp]:
    i = lb.special("gidx0", n)
    pa, pb, po = lb.buf(0, dt, n), lb.buf(1, dt, n), lb.buf(2, dt, n)
    x, y = lb.load(pa.index(i)), lb.load(pb.index(i))
    return lb.linear(lb.store(po.index(i), UOp(op, dt, (x, y))))


def _random(dt: DType, n: int, seed: int) -> np.ndarray:
    rs = np.random.default_rng(seed)
    npdt = NUMPY_DTYPES[dt]
    if dt is dtypes.bool:
        return rs.integers(0, 2, n).astype(np.bool_)
    if dtypes.is_int(dt):
        info = np.iinfo(npdt)
        return rs.integers(info.min, info.max, n, dtype=npdt, endpoint=True)
    return (rs.standard_normal(n) * 100).astype(npdt)


@pytest.mark.parametrize("dt", list(NUMPY_DTYPES), ids=lambda d: d.name)
@pytest.mark.parametrize("op", [Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPLT])
def test_binary_ops_match_numpy_for_every_numpy_dtype(lb: Any, dt: DType, op: Ops) -> None:
    if dt is dtypes.bool and op is Ops.ADD:
        op = Ops.OR
    n = 64
    a, b = _random(dt, n, 3), _random(dt, n, 4)
    ref = {
        Ops.ADD: np.add, Ops.OR: np.logical_or, Ops.MUL: np.multiply, Ops.MAX: np.maximum,
        Ops.CMPLT: np.less,
    }[op](a, b)  # fmt: skip
    out_dt = dtypes.bool if op is Ops.CMPLT else dt
    i = lb.special("gidx0", n)
    pa, pb, po = lb.buf(0, dt, n), lb.buf(1, dt, n), lb.buf(2, out_dt, n)
    x, y = lb.load(pa.index(i)), lb.load(pb.index(i))
    if dt is dtypes.bool and op is Ops.MUL:
        op, ref = Ops.AND, np.logical_and(a, b)
    prog = lb.linear(lb.store(po.index(i), UOp(op, out_dt, (x, y))))
    out = np.zeros(n, NUMPY_DTYPES[out_dt])
    with np.errstate(over="ignore"):
        run(prog, [a, b, out], global_size=(n,))
    np.testing.assert_array_equal(out, ref.astype(out.dtype))


@pytest.mark.parametrize("dt", [dtypes.int8, dtypes.uint16, dtypes.int32, dtypes.uint64], ids=str)
def test_integer_division_truncates_and_shifts_wrap_like_c(lb: Any, dt: DType) -> None:
    n = 50
    a, b = _random(dt, n, 5), _random(dt, n, 6)
    b[b == 0] = 3
    if dtypes.is_unsigned(dt):
        expect = a // b
    else:
        b[b == -1] = 2  # min // -1 overflows; C leaves it undefined
        with np.errstate(over="ignore"):
            floor = a // b
        expect = floor + (((a % b) != 0) & ((a < 0) != (b < 0))).astype(a.dtype)
    out = np.zeros(n, NUMPY_DTYPES[dt])
    run(_binary(lb, dt, Ops.CDIV, n), [a, b, out], global_size=(n,))
    np.testing.assert_array_equal(out, expect)
    shifts = (np.arange(n) % dt.bitsize).astype(NUMPY_DTYPES[dt])
    for op, ref in ((Ops.SHL, np.left_shift), (Ops.SHR, np.right_shift)):
        run(_binary(lb, dt, op, n), [a, shifts, out], global_size=(n,))
        np.testing.assert_array_equal(out, ref(a, shifts))


def test_float_to_int_cast_truncates_and_int_cast_wraps(lb: Any) -> None:
    vals = np.array([1.9, -1.9, 300.5, -129.0, 0.0, 127.99], np.float32)
    out = np.zeros(len(vals), np.int8)
    i = lb.special("gidx0", len(vals))
    pa, po = lb.buf(0, dtypes.float32, len(vals)), lb.buf(1, dtypes.int8, len(vals))
    as_int = UOp(Ops.CAST, dtypes.int32, (lb.load(pa.index(i)),))
    prog = lb.linear(lb.store(po.index(i), UOp(Ops.CAST, dtypes.int8, (as_int,))))
    run(prog, [vals, out], global_size=(len(vals),))
    np.testing.assert_array_equal(out, vals.astype(np.int32).astype(np.int8))


def _bf16_reference_bits(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def test_bfloat16_add_rounds_to_nearest_even(lb: Any) -> None:
    n = 200
    rs = np.random.default_rng(7)
    a32, b32 = (rs.standard_normal((2, n)) * 10).astype(np.float32)
    a, b = _bf16_reference_bits(a32), _bf16_reference_bits(b32)
    out = np.zeros(n, np.uint16)
    run(_binary(lb, dtypes.bfloat16, Ops.ADD, n), [a, b, out], global_size=(n,))

    def value(bits: np.ndarray) -> np.ndarray:
        return (bits.astype(np.uint32) << 16).view(np.float32)

    exact = value(a).astype(np.float64) + value(b).astype(np.float64)
    # the float64 sum of two bfloat16s is exact; rounding it to float32 first is exact too
    np.testing.assert_array_equal(out, _bf16_reference_bits(exact.astype(np.float32)))


def _fp8_decode(code: int, ebits: int, mbits: int, bias: int, ieee: bool) -> float:
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if ieee and e == (1 << ebits) - 1:
        return sign * math.inf if m == 0 else math.nan
    if not ieee and e == (1 << ebits) - 1 and m == (1 << mbits) - 1:
        return math.nan
    frac = m / (1 << mbits)
    return sign * (frac * 2.0 ** (1 - bias) if e == 0 else (1 + frac) * 2.0 ** (e - bias))


@pytest.mark.parametrize(
    "dt,fmt", [(dtypes.fp8e4m3, (4, 3, 7, False)), (dtypes.fp8e5m2, (5, 2, 15, True))], ids=str
)
def test_fp8_loads_decode_every_code_and_casts_round(lb: Any, dt: DType, fmt: Any) -> None:
    codes = np.arange(256, dtype=np.uint8)
    out = np.zeros(256, np.float64)
    i = lb.special("gidx0", 256)
    pa, po = lb.buf(0, dt, 256), lb.buf(1, dtypes.float64, 256)
    prog = lb.linear(lb.store(po.index(i), UOp(Ops.CAST, dtypes.float64, (lb.load(pa.index(i)),))))
    run(prog, [codes, out], global_size=(256,))
    ref = np.array([_fp8_decode(c, *fmt) for c in range(256)])
    np.testing.assert_array_equal(out, ref)
    # and storing: 1.0 + a quarter ulp rounds down to 1.0; 3/8 of the way past max saturates
    vals = np.array([1.0, 1.0 + 2.0 ** -(fmt[1] + 2), 1e9, -1e9], np.float64)
    back = np.zeros(4, np.uint8)
    j = lb.special("gidx0", 4)
    pv, pb = lb.buf(0, dtypes.float64, 4), lb.buf(1, dt, 4)
    prog = lb.linear(lb.store(pb.index(j), UOp(Ops.CAST, dt, (lb.load(pv.index(j)),))))
    run(prog, [vals, back], global_size=(4,))
    finite = [c for c in range(128) if math.isfinite(ref[c])]
    top = max(finite, key=lambda c: ref[c])
    one = next(c for c in range(128) if ref[c] == 1.0)
    assert back.tolist() == [one, one, top, top | 0x80]


def test_float16_overflow_and_nan_propagation(lb: Any) -> None:
    a = np.array([60000, 1, np.nan, -0.0], np.float16)
    b = np.array([60000, 2, 5, 0.0], np.float16)
    out = np.zeros(4, np.float16)
    run(_binary(lb, dtypes.float16, Ops.ADD, 4), [a, b, out], global_size=(4,))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a + b)
    out2 = np.zeros(4, np.float16)
    run(_binary(lb, dtypes.float16, Ops.MAX, 4), [a, b, out2], global_size=(4,))
    assert math.isnan(out2[2]) and out2[3] == 0 and not np.signbit(out2[3])


def test_bitcast_scalar_and_vector_regroup(lb: Any) -> None:
    f = np.array([1.0, -2.5], np.float32)
    out = np.zeros(2, np.uint32)
    i = lb.special("gidx0", 2)
    pa, po = lb.buf(0, dtypes.float32, 2), lb.buf(1, dtypes.uint32, 2)
    prog = lb.linear(
        lb.store(po.index(i), UOp(Ops.BITCAST, dtypes.uint32, (lb.load(pa.index(i)),)))
    )
    run(prog, [f, out], global_size=(2,))
    np.testing.assert_array_equal(out, f.view(np.uint32))
    halves = np.array([1.5, -3.0, 0.25, 65504], np.float16)
    out2 = np.zeros(2, np.uint32)
    ph, po2 = lb.buf(0, dtypes.float16, 4), lb.buf(1, dtypes.uint32, 2)
    pair = lb.load(ph.index(i * 2), dt=dtypes.float16.vec(2))
    prog2 = lb.linear(lb.store(po2.index(i), UOp(Ops.BITCAST, dtypes.uint32, (pair,))))
    run(prog2, [halves, out2], global_size=(2,))
    np.testing.assert_array_equal(out2, halves.view(np.uint32))


def test_transcendentals_are_float32_rounded(lb: Any) -> None:
    a = np.array([0.5, 1.0, 2.0, 10.0, -1.0], np.float32)
    out = np.zeros((3, 5), np.float32)
    i = lb.special("gidx0", 5)
    pa, po = lb.buf(0, dtypes.float32, 5), lb.buf(1, dtypes.float32, 15)
    x = lb.load(pa.index(i))
    sts = [
        lb.store(po.index(i + 5 * k), UOp(op, dtypes.float32, (x,)))
        for k, op in enumerate((Ops.EXP2, Ops.SQRT, Ops.SIN))
    ]
    with np.errstate(invalid="ignore"):
        run(lb.linear(*sts), [a, out], global_size=(5,))
        expect = np.stack(
            [
                np.exp2(a.astype(np.float64)),
                np.sqrt(a.astype(np.float64)),
                np.sin(a.astype(np.float64)),
            ]
        )
    np.testing.assert_array_equal(out, expect.astype(np.float32))


def test_buffers_can_be_bytearrays_and_memoryviews(lb: Any) -> None:
    raw = bytearray(struct.pack("<3i", 1, 2, 3))
    out = bytearray(12)
    i = lb.special("gidx0", 3)
    pa, po = lb.buf(0, dtypes.int32, 3), lb.buf(1, dtypes.int32, 3)
    prog = lb.linear(lb.store(po.index(i), lb.load(pa.index(i)) * 3))
    run(prog, [raw, memoryview(out)], global_size=(3,))
    assert struct.unpack("<3i", out) == (3, 6, 9)


def test_illegal_op_is_reported(lb: Any) -> None:
    po = lb.buf(0, dtypes.int32, 1)
    bad = UOp(Ops.CUSTOM, dtypes.int32, (), "42")
    with pytest.raises(NotImplementedError, match="CUSTOM"):
        run_linear(lb.linear(lb.store(po.index(lb.c32(0)), bad)), [bytearray(4)])
