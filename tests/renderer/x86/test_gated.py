"""Gated (masked) loads and stores on the x86 renderer, selected without branches: the
address is picked by a cmov (the real one, or a safe one holding the alternative value /
taking the dropped store), so a masked-off access never touches its own address. Checked
on the listing (no conditional jump but the loops'), against a guard page right after the
buffer (a stray access would fault), and on Tensor edge shapes (pads, odd tails) under
the X86 compiler option, equal to NumPy."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest
from fusegrad.renderer.conformance import check_case
from fusegrad.renderer.corpus import (
    Builder,
    Case,
    alu,
    c32,
    end,
    gated_case,
    index,
    load,
    rng,
    store,
    vector_gated_case,
)
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.signature import kernel_signature
from fusegrad.renderer.x86 import X86Compiler, X86Renderer, x86_unavailable
from fusegrad.runtime import run_linear
from fusegrad.uop import DType, Ops, UOp, dtypes

pytestmark = pytest.mark.skipif(x86_unavailable() is not None, reason=str(x86_unavailable()))


def _run(uops: Sequence[UOp], bufs: list[bytearray], var_vals: Mapping[str, int]) -> None:
    linear = list(uops)
    src = X86Renderer().render(linear)
    CPUProgram(X86Compiler().compile(src), kernel_signature(linear))(bufs, var_vals)


_JUMP = re.compile(r"\s(j[a-z]+) (\.L[a-z]+)\d+$")


def _branches(listing: str) -> list[str]:
    """Conditional jumps that are not a loop's exit test."""
    out = []
    for line in listing.splitlines():
        m = _JUMP.search(line)
        if m and m.group(1) != "jmp" and m.group(2) != ".Lexit":
            out.append(line)
    return out


@pytest.mark.parametrize(
    "case",
    [
        *(gated_case(dt) for dt in (dtypes.float32, dtypes.int8, dtypes.float16)),
        *(vector_gated_case(w) for w in (4, 8)),
    ],
    ids=lambda c: c.name,
)
def test_gated_accesses_have_no_branches(case: object) -> None:
    listing = X86Renderer(listing=True).render(list(case.uops))  # type: ignore[attr-defined]
    assert "cmove" in listing
    assert _branches(listing) == []


_GUARD_SCRIPT = """
import ctypes, mmap, struct, sys
from fusegrad.renderer.corpus import Builder, alu, c32, end, index, load, rng, store
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.signature import kernel_signature
from fusegrad.renderer.x86 import X86Compiler, X86Renderer
from fusegrad.uop import Ops, UOp, dtypes

dt = getattr(dtypes, sys.argv[1])
width = int(sys.argv[2])
n = 13  # elements of the guarded buffer (not a multiple of 8)
page = mmap.PAGESIZE
area = mmap.mmap(-1, 2 * page)
libc = ctypes.CDLL(None)
base = ctypes.addressof(ctypes.c_char.from_buffer(area))
assert libc.mprotect(ctypes.c_void_p(base + page), page, 0) == 0  # PROT_NONE after page 1
size = n * dt.itemsize
buf = memoryview(area)[page - size : page]
fmt = "<%d%s" % (n, dt.fmt)
buf[:] = struct.pack(fmt, *[k + 1 for k in range(n)])

p = Builder()
a = p.buffer(dt, [0] * n)
out = p.output(dt, 16 * width, "gated load past the end")
i = p.add(rng(16))
at = alu(Ops.MUL, i, c32(width))
ok = alu(Ops.CMPLT, alu(Ops.ADD, at, c32(width - 1)), c32(n))
vdt = dt.vec(width) if width > 1 else dt
alt = UOp.vconst((-2,) * width, vdt) if width > 1 else UOp.const(-2, dt)
p.add(store(index(out, at), load(index(a, at, ok), vdt, alt=alt)))
p.add(store(index(a, at, ok), load(index(a, at, ok), vdt, alt=alt)))  # in place, gated
p.add(end(i))
uops = list(p.uops)
src = X86Renderer().render(uops)
res = bytearray(16 * width * dt.itemsize)
CPUProgram(X86Compiler().compile(src), kernel_signature(uops))([buf, res], {})
print(struct.unpack("<%d%s" % (16 * width, dt.fmt), bytes(res)))
"""


@pytest.mark.parametrize(
    ("dt", "width"), [("float32", 1), ("float32", 8), ("float64", 4), ("int8", 4), ("float16", 1)]
)
def test_masked_off_accesses_never_touch_the_page_after_the_buffer(
    dt: str, width: int, tmp_path: Path
) -> None:
    script = tmp_path / "guard.py"
    script.write_text(textwrap.dedent(_GUARD_SCRIPT))
    run = subprocess.run(
        [sys.executable, str(script), dt, str(width)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = [float(v) for v in run.stdout.strip().strip("()").split(",") if v.strip()]
    n, groups = 13, 16
    want = []
    for g in range(groups):
        inside = g * width + width - 1 < n
        want += [float(g * width + k + 1) if inside else -2.0 for k in range(width)]
    assert got == want


def lane_gated_case(dt: DType, width: int, n: int, alt: float) -> Case:
    """out[i*w + k] = a[i*w + k] where i*w + k < n else ``alt``: ``width`` scalar loads, each
    gated by its own lane of one mask, put together as a vector (the lowering's form of a
    padded window's loads): selected as one masked vector load."""
    p = Builder()
    a = p.buffer(dt, [k + 1 for k in range(n)])
    groups = -(-n // width) + 1
    out = p.output(dt, groups * width, f"lane-gated {dt.name}x{width}")
    i = p.add(rng(groups))
    at = alu(Ops.MUL, i, c32(width))
    start = alu(Ops.ADD, alu(Ops.MUL, c32(width), i), c32(0))  # (= at; only lanes read it)
    ats = [alu(Ops.ADD, start, c32(k)) for k in range(width)]
    mask = UOp(  # (from other nodes: only the loads read the lane addresses)
        Ops.VECTORIZE,
        dtypes.bool.vec(width),
        tuple(alu(Ops.CMPLT, alu(Ops.ADD, at, c32(k)), c32(n)) for k in range(width)),
    )
    gates = [UOp(Ops.GEP, dtypes.bool, (mask,), (k,)) for k in range(width)]
    lanes = [
        load(index(a, x, g), dt, alt=UOp.const(alt, dt)) for x, g in zip(ats, gates, strict=True)
    ]
    p.add(store(index(out, at), UOp(Ops.VECTORIZE, dt.vec(width), tuple(lanes))), end(i))
    return p.case(f"lane-gated-{dt.name}x{width}-{alt}")


@pytest.mark.parametrize(("dt", "width"), [(dtypes.float32, 8), (dtypes.float64, 4)])
@pytest.mark.parametrize("alt", [0.0, -2.5])
def test_lane_gated_loads_become_one_masked_load(dt: DType, width: int, alt: float) -> None:
    case = lane_gated_case(dt, width, 13, alt)
    listing = X86Renderer(listing=True).render(list(case.uops))
    assert "vmaskmovp" in listing and "cmove" not in listing
    assert ("vblendvp" in listing) == (alt != 0.0)
    assert check_case(case, _run, run_linear) == []


_LANE_GUARD_SCRIPT = """
import ctypes, mmap, struct, sys
sys.path.insert(0, sys.argv[3])
from test_gated import lane_gated_case
from fusegrad.renderer.launch import CPUProgram
from fusegrad.renderer.signature import kernel_signature
from fusegrad.renderer.x86 import X86Compiler, X86Renderer
from fusegrad.uop import dtypes

dt, width, n = getattr(dtypes, sys.argv[1]), int(sys.argv[2]), 13
page = mmap.PAGESIZE
area = mmap.mmap(-1, 2 * page)
base = ctypes.addressof(ctypes.c_char.from_buffer(area))
assert ctypes.CDLL(None).mprotect(ctypes.c_void_p(base + page), page, 0) == 0
buf = memoryview(area)[page - n * dt.itemsize : page]
buf[:] = struct.pack("<%d%s" % (n, dt.fmt), *[k + 1 for k in range(n)])
case = lane_gated_case(dt, width, n, -2.0)
uops = list(case.uops)
size = len(case.buffers[1][1])
res = bytearray(size * dt.itemsize)
CPUProgram(X86Compiler().compile(X86Renderer().render(uops)), kernel_signature(uops))([buf, res], {})
print(struct.unpack("<%d%s" % (size, dt.fmt), bytes(res)))
"""


@pytest.mark.parametrize(("dt", "width"), [("float32", 8), ("float64", 4)])
def test_masked_load_lanes_never_touch_the_page_after_the_buffer(
    dt: str, width: int, tmp_path: Path
) -> None:
    script = tmp_path / "lane_guard.py"
    script.write_text(textwrap.dedent(_LANE_GUARD_SCRIPT))
    run = subprocess.run(
        [sys.executable, str(script), dt, str(width), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = [float(v) for v in run.stdout.strip().strip("()").split(",") if v.strip()]
    assert got == [float(k + 1) if k < 13 else -2.0 for k in range(len(got))]
    assert len(got) > 13 + width  # a whole group past the end, and one straddling it


# -- Tensor edge shapes ------------------------------------------------------------------------


def test_pads_and_odd_tails_match_numpy(x86_cpu: None) -> None:
    from fusegrad.tensor import Tensor

    rs = np.random.default_rng(3)
    a = rs.standard_normal((13, 17)).astype(np.float32)
    ta = Tensor(a)
    np.testing.assert_array_equal(
        (ta.pad(((1, 2), (3, 0))) * 2 + 1).numpy(), np.pad(a, ((1, 2), (3, 0))) * 2 + 1
    )
    np.testing.assert_array_equal(
        ta.pad(((0, 0), (0, 7)), value=-1.5).numpy(),
        np.pad(a, ((0, 0), (0, 7)), constant_values=-1.5),
    )
    np.testing.assert_allclose(
        ta.pad(((2, 2), (2, 2))).sum(1).numpy(), np.pad(a, 2).sum(1), rtol=1e-5, atol=1e-5
    )
    b = rs.standard_normal(1021).astype(np.float32)  # 127 * 8 + 5: a tail of 5
    tb = Tensor(b)
    np.testing.assert_array_equal((tb * 3 - 1).numpy(), b * 3 - 1)
    np.testing.assert_array_equal(
        Tensor.cat(tb[:500], tb[500:]).numpy(), np.concatenate([b[:500], b[500:]])
    )
    np.testing.assert_array_equal(tb[3:-2].pad(((5, 0),)).numpy(), np.pad(b[3:-2], (5, 0)))
    ints = rs.integers(-100, 100, (9, 11)).astype(np.int32)
    np.testing.assert_array_equal(
        Tensor(ints).pad(((1, 0), (0, 3)), value=7).numpy(),
        np.pad(ints, ((1, 0), (0, 3)), constant_values=7),
    )
    half = rs.standard_normal((5, 7)).astype(np.float16)
    np.testing.assert_array_equal(
        Tensor(half).pad(((1, 1), (2, 0))).numpy(), np.pad(half, ((1, 1), (2, 0)))
    )


def test_convolution_with_padding_matches_numpy(x86_cpu: None) -> None:
    from fusegrad.tensor import Tensor

    rs = np.random.default_rng(4)
    x = rs.standard_normal((1, 3, 11, 13)).astype(np.float32)
    w = rs.standard_normal((5, 3, 3, 3)).astype(np.float32)
    got = Tensor(x).conv2d(Tensor(w), padding=1).numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 5, 11, 13), np.float32)
    for i in range(11):
        for j in range(13):
            want[0, :, i, j] = np.einsum("chw,ochw->o", xp[0, :, i : i + 3, j : j + 3], w)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
