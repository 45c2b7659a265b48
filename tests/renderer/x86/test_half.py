"""float16 on the x86 renderer through F16C (vcvtph2ps / vcvtps2ph), not the lowering's
integer emulation: every float16 bit pattern through the rounding ops, float64 -> float16
near ties (one rounding, not two), bit-exact against NumPy and the PYTHON emulator; Tensor
code under the X86 compiler option; without F16C the lowering emulates float16 again."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pytest
from fusegrad.renderer.conformance import check_case
from fusegrad.renderer.corpus import Builder, Case, alu, c32, end, index, load, rng, store
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.signature import kernel_signature
from fusegrad.renderer.x86 import X86Compiler, X86Renderer, x86_unavailable
from fusegrad.renderer.x86.cpuid import cpu_features
from fusegrad.runtime import run_linear
from fusegrad.uop import Ops, UOp, dtypes

pytestmark = [
    pytest.mark.skipif(x86_unavailable() is not None, reason=str(x86_unavailable())),
    pytest.mark.skipif(
        not cpu_features().get("f16c"), reason="this CPU has no F16C (float16 is emulated)"
    ),
]
F16, F32, F64 = dtypes.float16, dtypes.float32, dtypes.float64
ALL_HALVES = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _run(uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]) -> None:
    linear = list(uops)
    src = X86Renderer().render(linear)
    CPUProgram(X86Compiler().compile(src), kernel_signature(linear))(bufs, var_vals)


def _same_bits(want: np.ndarray, got: np.ndarray) -> None:
    """Equal float16 bit patterns; NaNs only need to be NaN (payloads are not specified)."""
    both_nan = np.isnan(want) & np.isnan(got)
    bad = np.flatnonzero((want.view(np.uint16) != got.view(np.uint16)) & ~both_nan)
    assert bad.size == 0, [(want[k], got[k], hex(want.view(np.uint16)[k])) for k in bad[:8]]


def _half_kernel(n: int, b: float, width: int = 1) -> Case:
    """out_op[i] = a[i] op b for + - * / MULACC (a*b+a), and sqrt(a[i]), all float16;
    ``width`` lanes at a time (float16 vectors)."""
    p = Builder()
    a = p.buffer(F16, [0.0] * n)
    outs = {name: p.output(F16, n, name) for name in ("add", "sub", "mul", "div", "fma", "sqrt")}
    i = p.add(rng(n // width))
    vdt = F16.vec(width) if width > 1 else F16
    y = UOp.vconst((b,) * width, vdt) if width > 1 else UOp.const(b, vdt)
    if width > 1:
        i = alu(Ops.MUL, i, c32(width))
    x = p.add(load(index(a, i), vdt))
    values = {
        "add": alu(Ops.ADD, x, y),
        "sub": alu(Ops.SUB, x, y),
        "mul": alu(Ops.MUL, x, y),
        "div": alu(Ops.FDIV, x, y),
        "fma": alu(Ops.MULACC, x, y, x),
        "sqrt": alu(Ops.SQRT, x),
    }
    for name, value in values.items():
        p.add(store(index(outs[name], i), value))
    p.add(end(i.src[0] if width > 1 else i))
    return p.case(f"half-ops-{b}-x{width}")


def _buffers(case: Case, first: bytes) -> list[bytearray]:
    return [bytearray(first)] + [bytearray(2 * len(v)) for _, v in case.buffers[1:]]


@pytest.mark.parametrize("width", [1, 8, 4])
@pytest.mark.parametrize("b", [3.0, -0.0999755859375, 1.0009765625, 6.103515625e-05, 65504.0])
def test_every_half_through_the_rounding_ops_matches_numpy(b: float, width: int) -> None:
    case = _half_kernel(len(ALL_HALVES), b, width)
    bufs = _buffers(case, ALL_HALVES.tobytes())
    _run(list(case.uops), bufs, {})
    got = [np.frombuffer(bytes(buf), np.float16) for buf in bufs[1:]]
    x, y = ALL_HALVES, np.float16(b)
    with np.errstate(all="ignore"):
        want = [x + y, x - y, x * y, x / y, (x * y) + x, np.sqrt(x)]
    for w, g in zip(want, got, strict=True):
        _same_bits(w, g)


def _tie_neighbours() -> Iterator[float]:
    """float64 values just off the midpoints of float16 neighbours (float32 rounding would
    land on the midpoint and round to even: the wrong way), normal and subnormal."""
    halves = ALL_HALVES[np.isfinite(ALL_HALVES)].astype(np.float64)
    halves = np.unique(np.abs(halves))
    mids = (halves[:-1] + halves[1:]) / 2
    for m in mids[:: max(1, len(mids) // 700)]:
        for eps in (2.0**-40, -(2.0**-40)):
            yield float(m * (1 + eps))
            yield -float(m * (1 + eps))


def test_float64_to_half_rounds_once() -> None:
    vals = [*_tie_neighbours(), 65519.99, 65520.0, 1e300, -1e-300, 2.0**-25, 2.0**-25 * (1 + 1e-12)]
    vals += [float("inf"), float("nan"), -0.0]
    p = Builder()
    a = p.buffer(F64, vals)
    out = p.output(F16, len(vals), "CAST float64 -> float16")
    i = p.add(rng(len(vals)))
    p.add(store(index(out, i), UOp(Ops.CAST, F16, (p.add(load(index(a, i))),))), end(i))
    case = p.case("f64-to-half-ties")
    bufs = [bytearray(struct.pack(f"<{len(vals)}d", *vals)), bytearray(2 * len(vals))]
    _run(list(case.uops), bufs, {})
    with np.errstate(over="ignore"):
        want = np.array(vals).astype(np.float16)
        twice = np.array(vals).astype(np.float32).astype(np.float16)
    assert (twice != want).sum() > 100  # the values do catch rounding through float32
    _same_bits(want, np.frombuffer(bytes(bufs[1]), np.float16))
    assert check_case(case, _run, run_linear) == []


def test_half_conversions_and_bitcasts_match_the_emulator() -> None:
    sources = [0.0, -0.0, 1.5, -2.75, 65504.0, 6e-8, 1e-5, 70000.0, 1e30, -1e30, float("nan")]
    sources += [float("inf"), 2049.0, 2051.0, 0.1, 1.0 / 3]
    p = Builder()
    f32, f64 = p.buffer(F32, sources), p.buffer(F64, sources)
    ints = p.buffer(dtypes.int64, [0, 1, -1, 2049, 2051, 65519, 65520, -(2**40), 2**62, 7, -7])
    bits = p.buffer(dtypes.uint16, [0, 0x8000, 0x3C00, 0x7BFF, 0x0001, 0x7C00, 0xFC00, 0x7E00])
    i = p.add(rng(8))
    half_of = {
        "f32": p.add(UOp(Ops.CAST, F16, (load(index(f32, i)),))),
        "f64": p.add(UOp(Ops.CAST, F16, (load(index(f64, i)),))),
        "int64": p.add(UOp(Ops.CAST, F16, (load(index(ints, i)),))),
        "bits": p.add(UOp(Ops.BITCAST, F16, (load(index(bits, i)),))),
    }
    for name, h in half_of.items():
        p.add(store(index(p.output(F16, 8, f"{name} -> half"), i), h))
        p.add(store(index(p.output(F64, 8, f"{name} -> half -> f64"), i), h.cast(F64)))
        p.add(
            store(
                index(p.output(dtypes.int32, 8, f"{name} -> half -> int32"), i),
                h.cast(dtypes.int32),
            )
        )
        back = UOp(Ops.BITCAST, dtypes.int16, (h,))
        p.add(store(index(p.output(dtypes.int16, 8, f"{name} -> half bits"), i), back))
    p.add(end(i))
    assert check_case(p.case("half-conversions"), _run, run_linear) == []


def _half_vector_case(width: int) -> Case:
    """float16 vectors: max, where(a < b), neg, trunc, casts to and from float32, and a
    MULACC accumulated in a register across a loop."""
    vals = [0.0, -0.0, 1.5, -2.75, 65504.0, 6e-8, 1e-5, 0.1, -7.5, 2049.0, float("inf"), 3.25]
    vals += [float("nan"), -65504.0, 0.333, 1.0 / 3]
    p = Builder()
    n = 2 * width
    a = p.buffer(F16, (vals * 2)[:n])
    b = p.buffer(F16, (vals[::-1] * 2)[:n])
    wide = p.buffer(F32, [v * 1.0001 for v in (vals * 2)[:n]])
    outs = [p.output(F16, n, name) for name in ("max", "where a < b", "neg", "trunc", "f32 -> f16")]
    to_f32 = p.output(F32, n, "f16 -> f32")
    i = p.add(rng(2))
    at = alu(Ops.MUL, i, c32(width))
    hdt, fdt = F16.vec(width), F32.vec(width)
    x, y = load(index(a, at), hdt), load(index(b, at), hdt)
    values = [
        alu(Ops.MAX, x, y),
        alu(Ops.WHERE, alu(Ops.CMPLT, x, y), x, y),
        alu(Ops.NEG, x),
        alu(Ops.TRUNC, y),
        UOp(Ops.CAST, hdt, (load(index(wide, at), fdt),)),
    ]
    for out, value in zip(outs, values, strict=True):
        p.add(store(index(out, at), value))
    p.add(store(index(to_f32, at), UOp(Ops.CAST, fdt, (x,))))
    p.add(end(i))
    return p.case(f"half-vectors-x{width}")


@pytest.mark.parametrize("width", [8, 4])
def test_half_vectors_are_converted_whole(width: int) -> None:
    case = _half_vector_case(width)
    listing = X86Renderer(listing=True).render(list(case.uops))
    register = "ymm" if width == 8 else "xmm"
    memory = "xmmword" if width == 8 else "qword"
    assert f"vcvtph2ps {register}" in listing and f"{memory} ptr" in listing
    assert f"vcvtps2ph {memory} ptr" in listing
    if width == 8:  # no lane by lane (a 4-lane where is: its mask has 8-byte lanes)
        assert "vpextrw" not in listing and "vpbroadcastw" not in listing
    assert check_case(case, _run, run_linear) == []
    vec = _half_kernel(64, 3.0, width)
    assert "vpextrw" not in X86Renderer(listing=True).render(list(vec.uops))


def test_listing_converts_with_f16c_not_integer_emulation() -> None:
    case = _half_kernel(16, 3.0)
    listing = X86Renderer(listing=True).render(list(case.uops))
    assert "vcvtph2ps" in listing and "vcvtps2ph" in listing and "vpextrw" in listing
    assert "shr" not in listing  # the emulation's bit shifts are gone


def test_without_f16c_float16_is_left_to_the_emulation() -> None:
    from fusegrad.codegen import to_program
    from fusegrad.codegen.schedule import get_kernel_graph
    from fusegrad.tensor import Tensor

    r = X86Renderer(features=("osxsave", "avx", "avx2", "fma"), listing=True)
    assert F16 not in r.supported_dtypes and F16 in X86Renderer().supported_dtypes
    t = Tensor(np.ones(4, np.float16), device="CPU") * 3
    (kernel,) = get_kernel_graph(UOp.sink(t.uop), cache=None).kernels
    listing = r.render(list(to_program(kernel.src[0], r).uops))
    assert "vcvtph2ps" not in listing
    with pytest.raises(ValueError, match="unknown CPU features"):
        X86Renderer(features=("avx9000",))


def test_tensor_float16_is_bit_exact_on_x86(x86_cpu: None) -> None:
    from fusegrad.tensor import Tensor

    rs = np.random.default_rng(1)
    a = rs.standard_normal(1000).astype(np.float16)
    b = (rs.standard_normal(1000) * 100).astype(np.float16)
    ta, tb = Tensor(a), Tensor(b)
    _same_bits(a * b + a, (ta * tb + ta).numpy())
    _same_bits(a / b - b, (ta / tb - tb).numpy())
    _same_bits(np.sqrt(np.abs(a)), ta.abs().sqrt().numpy())
    wide = rs.standard_normal(1000) * 1000
    _same_bits(wide.astype(np.float16), Tensor(wide).cast(dtypes.float16).numpy())
    np.testing.assert_array_equal(ta.cast(dtypes.float64).numpy(), a.astype(np.float64))
