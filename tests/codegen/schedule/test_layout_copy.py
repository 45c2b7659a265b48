"""Layout copies (codegen/schedule/layout.py): a large matmul reads B from panels and A
from row-padded copies when its rows alias in L1; small, unsuitable or unamortised operands
are left alone."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.codegen import to_program
from fusegrad.codegen.schedule import layout
from fusegrad.uop import Context, Ops, UOp
from schedule_testing import Memory, T, run_graph, schedule


class _HostBuffer:
    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr
        self.address = arr.ctypes.data


def run_on_cpu(ast: UOp, bufs: list[np.ndarray], var_vals: dict[UOp, int]) -> None:
    """Compile ``ast`` for the CPU device and run it over ``bufs``."""
    runtime = pytest.importorskip("fusegrad.runtime")
    dev = runtime.Device["CPU"]
    spec = to_program(ast, dev.renderer)
    prg = dev.load(spec)
    gs, ls = spec.launch_dims({})
    dev.exec(prg, [_HostBuffer(b) for b in bufs], [], gs, ls, wait=True)


def _index_exprs(ast: UOp, slot: int) -> list[str]:
    return [
        u.src[1].render()
        for u in ast.toposort()
        if u.op is Ops.INDEX and u.src[0].op is Ops.PARAM and u.src[0].arg == slot
    ]


def _matmul(
    mem: Memory, m: int, k: int, n: int, a_transposed: bool = False, b_transposed: bool = False
) -> T:
    """``a @ b`` as the frontend builds it (a stored (k, m) when ``a_transposed``, b stored
    (n, k) when ``b_transposed``: ``x @ W.T``); the reference by NumPy's matmul (T's
    broadcast reference would take m*n*k floats)."""
    a = mem.rand(k, m) if a_transposed else mem.rand(m, k)
    b = mem.rand(n, k, seed=1) if b_transposed else mem.rand(k, n, seed=1)
    x = a.uop.permute((1, 0)) if a_transposed else a.uop
    y = b.uop if b_transposed else b.uop.permute((1, 0))
    prod = x.reshape((m, 1, k)).expand((m, n, k)) * y.reshape((1, n, k)).expand((m, n, k))
    want = (a.np.T if a_transposed else a.np) @ (b.np.T if b_transposed else b.np)
    return T(prod.r(Ops.ADD, (2,)).reshape((m, n)), want)


def test_1024_matmul_reads_b_from_panels(mem: Memory) -> None:
    kg = schedule(_matmul(mem, 1024, 1024, 1024))
    assert len(kg.kernels) == 2
    panels_b, mm = (c.src[0] for c in kg.kernels)
    # B stored as 64 panels of 16 columns: (column block, row, column in block)
    assert _index_exprs(panels_b, 0) == ["r0*16384+r1*16+r2"]
    assert _index_exprs(panels_b, 1) == ["r0*16+r1*1024+r2"]
    (read_a,) = _index_exprs(mm, 1)
    (read_b,) = _index_exprs(mm, 2)
    assert "*1024" in read_a, read_a  # A as it is: with B in panels, no padded copy
    assert "//16*16384" in read_b and "%16" in read_b, read_b  # row k of panel j // 16
    assert kg.planned_bytes == 1024 * 1024 * 4


def test_1024_matmul_matches_numpy(mem: Memory) -> None:
    out = _matmul(mem, 1024, 1024, 1024)
    kg = schedule(out)
    assert len(kg.kernels) == 2
    (packed,) = run_graph(kg, mem, execute=run_on_cpu)
    np.testing.assert_allclose(packed, out.np, rtol=1e-4, atol=1e-3)


def test_x_at_w_t_reads_w_from_transposed_panels(mem: Memory) -> None:
    # W stored (1536, 384) as a Linear layer keeps it: panels of 16 rows, transposed
    out = _matmul(mem, 256, 384, 1536, b_transposed=True)
    kg = schedule(out)
    copy, mm = (c.src[0] for c in kg.kernels)
    assert (copy.arg.name, mm.arg.name) == ("E_96_384_16", "r_256_1536_384")
    assert _index_exprs(copy, 0) == ["r0*6144+r1*16+r2"]  # (row block, column, row in block)
    assert _index_exprs(copy, 1) == ["r0*6144+r1+r2*384"]
    assert kg.planned_bytes == 1536 * 384 * 4
    (got,) = run_graph(kg, mem, execute=run_on_cpu)  # with the heuristics' opts
    np.testing.assert_allclose(got, out.np, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    ("n", "b_transposed", "copy"),
    [(256, False, "E_16_1024_16"), (256, True, "E_16_1024_16"), (264, False, "E_256_1040")],
    ids=["b_panels", "w_t_panels", "a_padded"],  # 264 columns: no whole panels
)
def test_the_copies_are_exact(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, n: int, b_transposed: bool, copy: str
) -> None:
    # unoptimized kernels add in the same order: the packed and the plain graph give the
    # same bits
    out = _matmul(mem, 256, 1024, n, b_transposed=b_transposed)
    kg = schedule(out)
    assert [c.src[0].arg.name for c in kg.kernels] == [copy, f"r_256_{n}_1024"]
    with Context(NOOPT=1):
        (packed,) = run_graph(kg, mem, execute=run_on_cpu)
        monkeypatch.setattr(layout, "LAYOUT_MIN_BYTES", 1 << 40)
        plain_kg = schedule(out)
        assert len(plain_kg.kernels) == 1
        (plain,) = run_graph(plain_kg, mem, execute=run_on_cpu)
    np.testing.assert_array_equal(packed, plain)
    np.testing.assert_allclose(packed, out.np, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [
        (3, 4, 5),  # tiny
        (64, 64, 64),  # B under LAYOUT_MIN_BYTES
        (1040, 1040, 1000),  # rows of 4160 and 4000 bytes: no aliasing, no whole panels
        (4, 1024, 1024),  # B re-read by 4 rows only: the copy is not amortised
        (2048, 32, 2048),  # B has only 32 rows; A's rows are 128 bytes
    ],
)
def test_unaliased_or_small_matmuls_are_not_packed(mem: Memory, m: int, k: int, n: int) -> None:
    assert len(schedule(_matmul(mem, m, k, n)).kernels) == 1


def test_b_goes_to_panels_without_aliasing(mem: Memory) -> None:
    # rows of 4160 bytes do not alias (A stays), but B is walked along K: panels
    kg = schedule(_matmul(mem, 1040, 1040, 1040))
    assert [c.src[0].arg.name for c in kg.kernels] == ["E_65_1040_16", "r_1040_1040_1040"]
    assert kg.planned_bytes == 1040 * 1040 * 4


def test_size_threshold(mem: Memory) -> None:
    # B is (k, 1024) float32: 4 KiB rows, k * 4 KiB bytes; packed from LAYOUT_MIN_BYTES on
    assert layout.LAYOUT_MIN_BYTES == 64 * 4096
    assert len(schedule(_matmul(mem, 256, 63, 1024)).kernels) == 1  # 252 KiB
    assert len(schedule(_matmul(mem, 256, 64, 1024)).kernels) == 2  # 256 KiB


def test_reuse_threshold(mem: Memory) -> None:
    # B is re-read once per row of A: packed from LAYOUT_MIN_REUSE rows on
    assert layout.LAYOUT_MIN_REUSE == 256
    # (m = 64: measured no faster with B copied); below, A (64 or more rows of 4 KiB,
    # re-read by all 1024 columns) is padded instead; with B in panels it is not
    for m, panels in ((64, False), (255, False), (256, True)):
        kg = schedule(_matmul(mem, m, 1024, 1024))
        assert len(kg.kernels) == 2
        assert kg.planned_bytes == (1024 * 1024 if panels else m * 1040) * 4, m


@pytest.mark.parametrize(
    ("n", "planned"),
    [(1000, 64 * 1040 * 4), (1024, 64 * 1024 * 4)],
    ids=["a_padded", "b_paneled"],
)
def test_a_transposed_operand(mem: Memory, n: int, planned: int) -> None:
    # a.T @ b with a stored (64, 1024): walked along K with 4 KiB strides. A's contiguous
    # axis is the block's rows, not its lanes: it never goes to panels. With b (64, 1000)
    # (small, rows not whole panels) A is padded; with b (64, 1024) only B goes to panels
    out = _matmul(mem, 1024, 64, n, a_transposed=True)
    kg = schedule(out)
    assert len(kg.kernels) == 2
    assert kg.planned_bytes == planned
    (got,) = run_graph(kg, mem, execute=run_on_cpu)
    np.testing.assert_allclose(got, out.np, rtol=1e-4, atol=1e-3)


def test_assigning_graphs_are_left_alone(mem: Memory) -> None:
    target = mem.rand(1024, 1024, seed=2)
    kg = schedule(target.assign(_matmul(mem, 1024, 1024, 1024)))
    assert len(kg.kernels) == 1
