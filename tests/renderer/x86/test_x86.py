"""The x86 renderer beyond the conformance corpus: register pressure (spills), accumulators
kept in registers across loops, code pages never writable and executable, clear errors, and
Tensor code under ``DEV=CPU:X86`` (the device's X86 compiler option)."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from fusegrad.codegen import CompileError
from fusegrad.renderer.conformance import check_case
from fusegrad.renderer.corpus import (
    Builder,
    Case,
    alu,
    c32,
    end,
    index,
    load,
    reduce_case,
    rng,
    store,
)
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.signature import kernel_signature
from fusegrad.renderer.x86 import X86Compiler, X86Renderer, clear_caches, x86_unavailable
from fusegrad.renderer.x86.isa import Mem
from fusegrad.renderer.x86.regalloc import linear_scan, rewrite
from fusegrad.renderer.x86.select import select
from fusegrad.runtime import run_linear
from fusegrad.uop import Context, DType, Ops, UOp, dtypes

pytestmark = pytest.mark.skipif(x86_unavailable() is not None, reason=str(x86_unavailable()))


def _run(uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]) -> None:
    linear = list(uops)
    src = X86Renderer().render(linear)
    CPUProgram(X86Compiler().compile(src), kernel_signature(linear))(bufs, var_vals)


def pressure_case(dt: DType, live: int) -> Case:
    """``live`` values loaded first, then combined in an order that keeps all of them live:
    out[i] = ((v0 * v1 + v2) * v3 + ...) with every v loaded before the first multiply."""
    p = Builder()
    n = 4
    a = p.buffer(dt, [(k * 7 % 23) - 11 for k in range(n * live)])
    out = p.output(dt, n, f"{live} live {dt.name}")
    i = p.add(rng(n))
    base = alu(Ops.MUL, i, UOp.const(live, dtypes.int32))
    vals = [
        p.add(load(index(a, alu(Ops.ADD, base, UOp.const(k, dtypes.int32))))) for k in range(live)
    ]
    acc = vals[-1]
    for k, v in enumerate(vals[-2::-1]):
        acc = alu(Ops.ADD if k % 2 else Ops.MUL, acc, v)
    p.add(store(index(out, i), acc), end(i))
    return p.case(f"pressure-{dt.name}-{live}")


@pytest.mark.parametrize(
    ("dt", "live"),
    [(dtypes.float32, 24), (dtypes.float64, 40), (dtypes.int64, 20), (dtypes.int32, 32)],
)
def test_register_pressure_spills_and_stays_correct(dt: DType, live: int) -> None:
    case = pressure_case(dt, live)
    uops = list(case.uops)
    alloc = linear_scan(select(uops, kernel_signature(uops)).code)
    assert alloc.spills, "the kernel was meant to need more registers than there are"
    assert check_case(case, _run, run_linear) == []


def bitwise_then_compare_case(dt: DType) -> Case:
    """Bitwise results used as whole registers: ~a < 0, (a & b) < b, max(a | b, a ^ b)
    (the registers must stay sign-extended after and/or/xor of negative values)."""
    vals = [-128, -1, -7, 0, 1, 5, 100, -100] if dt.itemsize == 1 else [-(2**15), -1, 7, 0, 3, -3]
    p = Builder()
    a = p.buffer(dt, vals)
    b = p.buffer(dt, vals[::-1])
    n = len(vals)
    outs = [p.output(dtypes.bool, n, "~a < 0"), p.output(dtypes.bool, n, "(a & b) < b")]
    outs.append(p.output(dt, n, "max(a | b, a ^ b)"))
    i = p.add(rng(n))
    x, y = load(index(a, i)), load(index(b, i))
    zero = UOp.const(0, dt)
    p.add(store(index(outs[0], i), alu(Ops.CMPLT, alu(Ops.XOR, x, UOp.const(-1, dt)), zero)))
    p.add(store(index(outs[1], i), alu(Ops.CMPLT, alu(Ops.AND, x, y), y)))
    p.add(store(index(outs[2], i), alu(Ops.MAX, alu(Ops.OR, x, y), alu(Ops.XOR, x, y))))
    p.add(end(i))
    return p.case(f"bitwise-compare-{dt.name}")


def mask_vector_case(dt: DType, width: int) -> Case:
    """where(mask, a, b) over ``width`` lanes with masks put together from bool lanes: all
    constants (a pool constant), one scalar compare repeated (a broadcast), and mixed
    lanes (each distinct lane negated once), and an int32 lane repeated."""
    p = Builder()
    n = 2 * width
    a = p.buffer(dt, [k + 1 for k in range(n)])
    b = p.buffer(dt, [-k - 1 for k in range(n)])
    outs = [p.output(dt, n, name) for name in ("constant", "uniform", "mixed")]
    ints = p.output(dtypes.int32, 16, "int32 broadcast")
    i = p.add(rng(2))
    at = alu(Ops.MUL, i, c32(width))
    vdt = dt.vec(width)
    x, y = load(index(a, at), vdt), load(index(b, at), vdt)
    first = alu(Ops.CMPLT, i, c32(1))
    pattern = [UOp.const(k % 3 == 0, dtypes.bool) for k in range(width)]
    masks = [
        UOp(Ops.VECTORIZE, dtypes.bool.vec(width), tuple(pattern)),
        UOp(Ops.VECTORIZE, dtypes.bool.vec(width), (first,) * width),
        UOp(
            Ops.VECTORIZE,
            dtypes.bool.vec(width),
            tuple(first if k % 2 else p_ for k, p_ in enumerate(pattern)),
        ),
    ]
    for out, mask in zip(outs, masks, strict=True):
        p.add(store(index(out, at), alu(Ops.WHERE, mask, x, y)))
    lane = alu(Ops.ADD, i, c32(7))
    p.add(
        store(
            index(ints, alu(Ops.MUL, i, c32(8))),
            UOp(Ops.VECTORIZE, dtypes.int32.vec(8), (lane,) * 8),
        )
    )
    p.add(end(i))
    return p.case(f"mask-vector-{dt.name}x{width}")


@pytest.mark.parametrize(("dt", "width"), [(dtypes.float32, 8), (dtypes.float64, 4)])
def test_mask_vectors_from_bool_lanes(dt: DType, width: int) -> None:
    case = mask_vector_case(dt, width)
    listing = X86Renderer(listing=True).render(list(case.uops))
    assert "vbroadcastss" in listing and "vbroadcast" + ("ss" if width == 8 else "sd") in listing
    assert check_case(case, _run, run_linear) == []


@pytest.mark.parametrize("dt", [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64])
def test_bitwise_results_stay_sign_extended(dt: DType) -> None:
    assert check_case(bitwise_then_compare_case(dt), _run, run_linear) == []


def _loop_body(listing: str, label: str) -> list[str]:
    lines = listing.splitlines()
    start = lines.index(f"{label}:")
    stop = next(i for i in range(start, len(lines)) if f"jmp {label}" in lines[i])
    return lines[start:stop]


def test_loop_carried_accumulator_stays_in_a_register() -> None:
    case = reduce_case(dtypes.float32, Ops.ADD)
    listing = X86Renderer(listing=True).render(list(case.uops))
    inner = [x for x in listing.splitlines() if x.startswith(".Lloop")][-1].rstrip(":")
    body = _loop_body(listing, inner)
    assert not [x for x in body if "rsp" in x], "\n".join(body)  # no stack traffic in the loop
    assert any("vaddss" in x for x in body)


@pytest.mark.parametrize("live", [4, 40])
def test_compact_and_full_listings_hold_the_same_code(live: int) -> None:
    from fusegrad.renderer.x86.assemble import code_of

    uops = list(pressure_case(dtypes.float32, live).uops)
    full = X86Renderer(listing=True).render(uops, "k")
    compact = X86Renderer().render(uops, "k")
    assert "vmovss" in full and "vmovss" not in compact
    assert len(compact.splitlines()) == 4 < len(full.splitlines())
    clear_caches()  # read both back from their text, not from the recent-listings table
    assert code_of(compact) == code_of(full)
    with Context(DEBUG=4):
        assert X86Renderer().render(uops, "k") == full


def lane_sum_case() -> Case:
    """out[i] = the sum of the 8 lanes of a[i] (a float32x8), then of b[i] * 2's: the lanes
    of each vector go through the stack slot once."""
    p = Builder()
    a = p.buffer(dtypes.float32, [k * 0.5 - 7 for k in range(32)])
    b = p.buffer(dtypes.float32, [k * 0.25 + 1 for k in range(32)])
    out = p.output(dtypes.float32, 4, "lane sums")
    i = p.add(rng(4))
    at = alu(Ops.MUL, i, c32(8))
    va = load(index(a, at), dtypes.float32.vec(8))
    vb = alu(
        Ops.MUL,
        load(index(b, at), dtypes.float32.vec(8)),
        UOp.const((2.0,) * 8, dtypes.float32.vec(8)),
    )
    total = UOp(Ops.GEP, dtypes.float32, (va,), (0,))
    for v, k in [*((va, k) for k in range(1, 8)), *((vb, k) for k in range(8))]:
        total = alu(Ops.ADD, total, UOp(Ops.GEP, dtypes.float32, (v,), (k,)))
    p.add(store(index(out, i), total), end(i))
    return p.case("lane-sums")


def test_lanes_of_a_vector_are_stored_once() -> None:
    case = lane_sum_case()
    listing = X86Renderer(listing=True).render(list(case.uops))
    stores = [x for x in listing.splitlines() if "vmovups ymmword ptr [rsp" in x]
    assert len(stores) == 2, "\n".join(stores)  # one per vector (lane 0 is a register copy)
    assert check_case(case, _run, run_linear) == []


def test_code_is_mapped_read_execute_never_writable() -> None:
    case = reduce_case(dtypes.float32, Ops.ADD)
    uops = list(case.uops)
    prog = CPUProgram(X86Compiler().compile(X86Renderer().render(uops)), kernel_signature(uops))
    address = prog.code.address
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                assert perms.startswith("r-x"), line
                break
        else:
            pytest.fail("the kernel's page is not mapped")
    assert ctypes.c_uint8.from_address(address).value in (0x53, 0x55, 0x41, 0x48, 0xC5, 0xC4)


def test_cpuid_features_agree_with_llvm() -> None:
    """Our CPUID reading (machine code from our own encoder) against LLVM's host features."""
    from fusegrad.renderer.host import host_features
    from fusegrad.renderer.x86.cpuid import FEATURE_BITS, cpu_features

    llvm = host_features()
    ours = cpu_features()
    for name in FEATURE_BITS:
        if name in llvm:
            assert ours[name] == llvm[name], name
    assert ours["avx2"] and ours["fma"]


def test_compiler_rejects_text_that_is_not_a_listing() -> None:
    with pytest.raises(CompileError, match="not an x86 listing"):
        X86Compiler().compile("define void @f() { ret void }")


def test_narrow_vector_store_writes_only_its_elements() -> None:
    """A float32x4 vector is an xmm access: 16 bytes, never the ymm's 32."""
    p = Builder()
    a = p.buffer(dtypes.float32, [1.5, -2.0, 3.25, 4.0])
    out = p.output(dtypes.float32, 4, "x4 copy")
    v4 = dtypes.float32.vec(4)
    zero = UOp.const(0, dtypes.int32)
    p.add(store(index(out, zero), alu(Ops.ADD, load(index(a, zero), v4), load(index(a, zero), v4))))
    uops = p.uops
    arena = bytearray(b"\xab" * 64)
    view = memoryview(arena)
    bufs = [bytearray(struct.pack("<4f", 1.5, -2.0, 3.25, 4.0)), view[16:32]]
    _run(uops, bufs, {})  # type: ignore[arg-type]
    assert struct.unpack("<4f", arena[16:32]) == (3.0, -4.0, 6.5, 8.0)
    assert arena[:16] == b"\xab" * 16 and arena[32:] == b"\xab" * 32


def vector_pressure_case(groups: int) -> Case:
    """``groups`` (mask, then, else) float32x8 triples computed first and blended only at
    the end: far more live vector values than registers, so the blends get three or four
    spilled operands (more than the scratch registers: some are borrowed)."""
    v8 = dtypes.float32.vec(8)
    p = Builder()
    a = p.buffer(dtypes.float32, [((k * 37) % 29) / 4 - 3 for k in range(8 * 4 * groups)])
    out = p.output(dtypes.float32, 8, f"{groups} blends of float32x8")
    triples = []
    for g in range(groups):
        w, x, y, z = (
            load(index(a, UOp.const(8 * (4 * g + k), dtypes.int32)), v8) for k in range(4)
        )
        triples.append(
            (p.add(alu(Ops.CMPLT, w, x)), p.add(alu(Ops.MUL, y, z)), p.add(alu(Ops.ADD, w, z)))
        )
    acc = UOp.vconst((0.0,) * 8, v8)
    for mask, then, other in triples:
        acc = p.add(alu(Ops.MULACC, alu(Ops.WHERE, mask, then, other), then, acc))
    p.add(store(index(out, UOp.const(0, dtypes.int32)), acc))
    return p.case(f"vector-pressure-{groups}")


def int32x8_case() -> Case:
    """Every int32x8 op the renderer does in ymm registers, on edge values: shifts by
    counts past the width and negative counts, compares, wrapping arithmetic, and the
    float32x8 conversions (NaN and overflow give x86's indefinite)."""
    v8, f8 = dtypes.int32.vec(8), dtypes.float32.vec(8)
    ints = [0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 100, 31, 32, 33, -32, 5, -100, 64, 3]
    floats = [0.5, -0.5, 3e9, -3e9, float("nan"), float("inf"), 2.5, -7.75] * 2
    p = Builder()
    a = p.buffer(dtypes.int32, ints)
    b = p.buffer(dtypes.int32, ints[::-1])
    f = p.buffer(dtypes.float32, floats)
    i = p.add(rng(2))
    at = alu(Ops.MUL, i, UOp.const(8, dtypes.int32))
    x, y, fx = load(index(a, at), v8), load(index(b, at), v8), load(index(f, at), f8)
    results = {
        "SHL by lanes": alu(Ops.SHL, x, y),
        "SHR by lanes": alu(Ops.SHR, x, y),
        "SHL by 33": alu(Ops.SHL, x, UOp.vconst((33,) * 8, v8)),
        "SHR by 40": alu(Ops.SHR, x, UOp.vconst((40,) * 8, v8)),
        "NEG": alu(Ops.NEG, x),
        "MULACC": alu(Ops.MULACC, x, y, x),
        "MAX": alu(Ops.MAX, x, y),
        "WHERE x != y": alu(Ops.WHERE, alu(Ops.CMPNE, x, y), x, y),
        "WHERE x == y": alu(Ops.WHERE, alu(Ops.CMPEQ, x, y), y, UOp.vconst((-5,) * 8, v8)),
        "CAST float32x8": UOp(Ops.CAST, v8, (fx,)),
        "BITCAST float32x8": UOp(Ops.BITCAST, v8, (alu(Ops.ADD, fx, fx),)),
    }
    for label, value in results.items():
        p.add(store(index(p.output(dtypes.int32, 16, label), at), value))
    p.add(end(i))
    return p.case("int32x8")


def test_int32x8_ops_match_the_emulator() -> None:
    case = int32x8_case()
    listing = X86Renderer(listing=True).render(list(case.uops))
    assert "vpsravd" in listing and "vcvttps2dq" in listing and "vpcmpeqd" in listing
    assert check_case(case, _run, run_linear) == []


def _is_borrow_slot(m: object) -> bool:
    return isinstance(m, Mem) and m.frame is not None and m.frame[0] == "borrow"


def test_vector_register_pressure_spills_and_stays_correct() -> None:
    case = vector_pressure_case(8)
    uops = list(case.uops)
    code = select(uops, kernel_signature(uops)).code
    alloc = linear_scan(code)
    borrowed = [i for i in rewrite(code, alloc) if any(_is_borrow_slot(m) for m in i.args)]
    assert alloc.spills and borrowed
    assert check_case(case, _run, run_linear) == []


# -- Tensor code on the X86 compiler option ---------------------------------------------------


def test_tensor_code_runs_on_x86(x86_cpu: None) -> None:
    from fusegrad.runtime import Device
    from fusegrad.tensor import Tensor

    assert Device["CPU"].renderer.suffix == "X86"
    rs = np.random.default_rng(0)
    a = rs.standard_normal((33, 65)).astype(np.float32)
    b = rs.standard_normal((65, 17)).astype(np.float32)
    ta, tb = Tensor(a), Tensor(b)
    np.testing.assert_allclose(((ta * 2 - 1).relu()).numpy(), np.maximum(a * 2 - 1, 0), rtol=1e-6)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        ta.softmax(-1).numpy(), np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5
    )
    np.testing.assert_allclose(ta.sum(0).numpy(), a.sum(0), rtol=1e-5, atol=1e-5)
    ints = rs.integers(-1000, 1000, (40,)).astype(np.int32)
    np.testing.assert_array_equal(
        (Tensor(ints) // 7 + Tensor(ints) % 5).numpy(), ints // 7 + ints % 5
    )
    half = rs.standard_normal(50).astype(np.float16)
    np.testing.assert_array_equal((Tensor(half) * 3).numpy(), half * np.float16(3))


def test_large_elementwise_kernel_splits_across_cores(x86_cpu: None) -> None:
    from fusegrad.codegen import to_program
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.runtime import Device
    from fusegrad.tensor import Tensor

    x = np.arange(1 << 22, dtype=np.float32) % 7
    total = Tensor(x) * 3 - 1
    graph = get_kernel_graph(UOp.sink(total.uop), cache=None)
    specs = [to_program(k.src[0], Device["CPU"].renderer) for k in graph.kernels]
    cores = [kernel_signature(list(s.uops)).core_count for s in specs]
    if Device["CPU"].renderer.max_threads > 1:
        assert any(c is not None and c > 1 for c in cores), cores  # a THREAD-split kernel
    np.testing.assert_array_equal(total.numpy(), x * 3 - 1)


def test_dev_selects_the_x86_renderer() -> None:
    code = "from fusegrad.runtime import Device; print(Device['CPU'].renderer.suffix)"
    env = {**os.environ, "DEV": "CPU:X86"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "X86"
