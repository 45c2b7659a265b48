"""IF blocks: stores under one mask, with the work only they use, go under one ``IF(mask)``.

The optimizer's PADTO pads an output axis and masks the rows it added; without an IF every
padded row would still run its whole reduction and then store nothing. Checked here: the
block's shape (what moves in, gates dropped inside), vector stores, that no BARRIER ever
sits inside an IF, that an IF is not formed when it would reorder conflicting memory
accesses, and the numbers in the PYTHON emulator and compiled by the CPU renderers."""

from __future__ import annotations

from typing import Any

import corpus as C
import numpy as np
import pytest
import targets as T
from barriers import races
from fusegrad.codegen.lower import to_program
from fusegrad.codegen.lower.control_flow import add_if_blocks
from fusegrad.codegen.spec import verify_linear
from fusegrad.runtime import run_linear
from fusegrad.uop import AxisType, Ops, UOp, dtypes


def _case(name: str) -> Any:
    return next(c for c in C.build() if c.name == name)


def _program(name: str, target: str, variant: str) -> list[UOp]:
    c = _case(name)
    ast = c.opts[target](c.ast) if variant == "opt" else c.ast
    return list(to_program(ast, T.RENDERERS[target]).uops)


def _spans(uops: list[UOp]) -> list[tuple[int, int]]:
    pos = {u: n for n, u in enumerate(uops)}
    return [(pos[u.src[0]], n) for n, u in enumerate(uops) if u.op is Ops.ENDIF]


@pytest.mark.parametrize(
    ("target", "variant"), [("scalar", "plain"), ("cpu", "plain"), ("cpu", "opt"), ("gpu", "opt")]
)
def test_padded_rows_skip_their_reduction(target: str, variant: str) -> None:
    uops = _program("padded_matmul", target, variant)
    ((start, stop),) = _spans(uops)
    inside = uops[start + 1 : stop]
    assert uops[start].src[0].op is Ops.CMPLT  # the row mask
    assert any(u.op is Ops.RANGE and u.arg[1] is AxisType.REDUCE for u in inside)
    stores = [u for u in inside if u.op is Ops.STORE and u.src[0].src[0].op is Ops.PARAM]
    assert len(stores) == 1 and len(stores[0].src[0].src) == 2  # no gate left inside
    loads = [u for u in inside if u.op is Ops.LOAD and u.src[0].src[0].op is Ops.PARAM]
    assert loads and all(len(ld.src) == 1 for ld in loads)  # the masked loads lost theirs
    c = _case("padded_matmul")
    spec = to_program(c.opts[target](c.ast) if variant == "opt" else c.ast, T.RENDERERS[target])
    got = T.run_program(spec, c.inputs)[0]
    np.testing.assert_allclose(got, c.expected[0].reshape(-1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", ["scalar", "cpu"])
def test_a_loop_whose_stores_are_all_masked_goes_under_the_if(target: str) -> None:
    """The row mask ``i < 6`` does not depend on the column loop: the IF goes around the
    whole column loop (once per row), not inside it (once per element)."""
    uops = _program("padded_matmul", target, "plain")
    ((start, stop),) = _spans(uops)
    loops = [u.arg[0] for u in uops[start:stop] if u.op is Ops.RANGE]
    outer = [u.arg[0] for u in uops[:start] if u.op is Ops.RANGE]
    assert outer == [0] and loops == [1, 2]


def test_vector_store_inside() -> None:
    uops = _program("padded_matmul", "cpu", "opt")
    ((start, stop),) = _spans(uops)
    stores = [u for u in uops[start:stop] if u.op is Ops.STORE and u.src[1].dtype.count == 4]
    assert any(s.src[0].src[0].op is Ops.PARAM for s in stores)


@pytest.mark.parametrize("name", ["padded_rows_max", "padded_matmul", "masked_two_outputs"])
def test_no_barrier_inside_an_if(name: str) -> None:
    uops = _program(name, "gpu", "opt")
    barriers = [n for n, u in enumerate(uops) if u.op is Ops.BARRIER]
    assert not any(a < b < z for a, z in _spans(uops) for b in barriers)
    assert races(uops) == []


def test_grouped_reduce_with_masked_row_keeps_barrier_outside() -> None:
    uops = _program("padded_rows_max", "gpu", "opt")
    ((start, _),) = _spans(uops)
    barrier = next(n for n, u in enumerate(uops) if u.op is Ops.BARRIER)
    assert barrier < start  # partials for the local buffer before, the rest of the work inside


def test_two_outputs_share_one_if() -> None:
    uops = _program("masked_two_outputs", "gpu", "opt")
    ((start, stop),) = _spans(uops)
    assert sum(u.op is Ops.STORE for u in uops[start:stop]) == 2


def _hand_program(second_slot: int) -> list[UOp]:
    """for i < 8: v = p1[i]; p{second_slot}[i] = 0; if i < 5: p0[i] = v * 2 (gated store)."""
    p0, p1, p2 = (UOp.param(s, dtypes.float32.ptr(8)) for s in range(3))
    eight, five = UOp.const(8, dtypes.int32), UOp.const(5, dtypes.int32)
    zero, two = UOp.const(0.0, dtypes.float32), UOp.const(2.0, dtypes.float32)
    i = UOp.range(eight, 0).replace(dtype=dtypes.int32)
    gate = i < five
    load = p1.index(i).load()
    other = (p1 if second_slot == 1 else p2).index(i)
    store_other = other.store(zero)
    mul = load * two
    target = p0.index(i, gate=gate)
    store = target.store(mul)
    end = UOp(Ops.END, dtypes.void, (i,))
    return [
        p0, p1, p2, eight, five, zero, two, i, gate, p1.index(i), load, other, store_other,
        mul, target, store, end,
    ]  # fmt: skip


@pytest.mark.parametrize(("slot", "formed"), [(1, False), (2, True)])
def test_no_if_across_a_conflicting_store(slot: int, formed: bool) -> None:
    """Moving the load of p1 into the IF would put it after the store to p1: not formed."""
    uops = _hand_program(slot)
    verify_linear(uops)
    out = add_if_blocks(uops)
    verify_linear(out)
    assert any(u.op is Ops.IF for u in out) is formed
    data = np.arange(8, dtype=np.float32) + 1
    for prog in (uops, out):
        bufs = [np.zeros(8, np.float32), data.copy(), np.zeros(8, np.float32)]
        run_linear(prog, bufs, {})
        want = np.where(np.arange(8) < 5, data * 2, 0)  # the load runs before the store
        np.testing.assert_array_equal(bufs[0], want)


@pytest.mark.parametrize("backend", ["llvm", "c"])
@pytest.mark.parametrize("name", ["padded_matmul", "padded_rows_max", "masked_two_outputs"])
def test_compiled_if_blocks_match_numpy(backend: str, name: str) -> None:
    renderer, compiler = T.cpu_backend(backend)
    c = _case(name)
    for ast in (c.ast, c.opts["cpu"](c.ast)):
        spec = to_program(ast, renderer)
        assert any(u.op is Ops.IF for u in spec.uops)
        bufs = [np.array(a, copy=True).reshape(-1) for a in c.inputs]
        T.run_compiled(spec, renderer, compiler, bufs)
        for slot, want in c.expected.items():
            np.testing.assert_allclose(bufs[slot], want.reshape(-1), rtol=1e-4, atol=1e-5)
