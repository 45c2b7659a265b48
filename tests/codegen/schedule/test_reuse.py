"""Kernels of one structure over other buffers are rangeified once per schedule
(``schedule/reuse.py``); the autouse ``reuse_is_exact`` fixture checks every reuse against a
fresh rangeify, and each test here checks values with NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.codegen.schedule.kernelize import Kernelizer
from fusegrad.uop import Ops, UOp, dtypes
from schedule_testing import Memory, T, check, run_graph, schedule


@pytest.fixture
def rangeified(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the kernels actually rangeified (those reused once more each: the check)."""
    count: list[int] = []
    real = Kernelizer._rangeify

    def counting(kz: Kernelizer, *args: object) -> tuple[UOp, object]:
        count.append(1)
        return real(kz, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Kernelizer, "_rangeify", counting)
    return count


def _layers(mem: Memory, x: T, n: int) -> T:
    for i in range(n):
        w, b = mem.rand(8, 8, seed=10 + i), mem.rand(8, seed=20 + i)
        x = ((x @ w) + b).relu().contiguous()
    return x


def test_repeated_layers_are_rangeified_once(
    mem: Memory, rangeified: list[int], reuse_is_exact: list[int]
) -> None:
    x = mem.rand(4, 8)
    kg = check(mem, _layers(mem, x, 4))
    assert len(kg.kernels) == 4
    # the first layer reads a buffer, the others the layer before: two structures
    assert len(reuse_is_exact) == 2
    assert len(rangeified) - len(reuse_is_exact) == 2


def test_one_buffer_read_twice_is_not_two_buffers(mem: Memory, reuse_is_exact: list[int]) -> None:
    a, b, c = mem.rand(6), mem.rand(6), mem.rand(6)
    check(mem, (a * a).contiguous(), (b * c).contiguous(), (c * c).contiguous())
    assert len(reuse_is_exact) == 1  # c*c reuses a*a, b*c is another structure


def test_reused_kernels_keep_their_own_dependencies(mem: Memory) -> None:
    x, y = mem.rand(4, 8), mem.rand(4, 8)
    hx, hy = _layers(mem, x, 2), _layers(mem, y, 2)
    check(mem, hx + hy)


def test_readers_and_assigns_of_one_structure(mem: Memory, reuse_is_exact: list[int]) -> None:
    ws, gs = [mem.rand(5, seed=i) for i in range(3)], [mem.rand(5, seed=9 + i) for i in range(3)]
    readers = [(w * 2.0).sum() for w in ws]
    news = [w.assign(w - g * 0.1) for w, g in zip(ws, gs, strict=True)]
    want = [w.np - g.np * np.float32(0.1) for w, g in zip(ws, gs, strict=True)]
    kg = schedule(*readers, *news)
    got = dict(zip(kg.becomes, run_graph(kg, mem), strict=True))
    for r in readers:
        np.testing.assert_allclose(got[r.uop], r.np, rtol=1e-5)
    for w, value in zip(ws, want, strict=True):
        buf = w.uop
        while buf.op is not Ops.BUFFER:
            buf = buf.src[0]
        np.testing.assert_allclose(mem.arrays[buf], value, rtol=1e-6)
    assert reuse_is_exact


def test_bitcast_views_are_rebuilt_over_the_new_buffer(
    mem: Memory, reuse_is_exact: list[int]
) -> None:
    xs = [mem.rand(2, 4, seed=i) for i in range(3)]
    outs = [(x.bitcast(dtypes.float16).cast(dtypes.float32) * 2.0).contiguous() for x in xs]
    kg = check(mem, *outs)
    views = [b for k in kg.kernels for b in k.src[1:] if b.op is Ops.BUFFER_VIEW]
    assert len({v.src[0] for v in views}) == 3  # a float16 view of each input
    assert len(reuse_is_exact) == 2
