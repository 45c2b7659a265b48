"""Readers of a buffer's old value realized together with assigns to it, with multi-output
merging on: an optimizer step realized with the tensors built on the parameters before it.

Each case is a small random program over three assignable buffers and one read-only one:
readers of the current values (elementwise, flipped, shifted, summed, divided by a scalar
buffer that is assigned too) and assigns, all scheduled in one graph and checked with NumPy
(every reader's value and every buffer's final contents). The reference evaluator runs a
multi-output kernel's stores in one loop, as its lowered code does, so a load merged into a
kernel after another output's store to its buffer shows up as a wrong value.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from fusegrad.uop import Ops, UOp
from schedule_testing import Memory, T, evaluate_kernel, run_graph, schedule

N = 6
Binary = Callable[[T, T], T]
OPS: list[tuple[str, Binary]] = [
    ("mul", lambda a, b: a * b),
    ("add", lambda a, b: a + b),
    ("flip", lambda a, b: a.flip(0) + b),
    ("sum", lambda a, b: a.sum().broadcast_to((N,)) * b),
    ("shift", lambda a, b: a.shrink(((1, N),)).pad(((0, 1),)) - b),
]


def _buffer(t: T) -> UOp:
    u = t.uop
    while u.op is not Ops.BUFFER:
        u = u.src[0]
    return u


class Program:
    """Buffers ``w``, ``m``, ``v`` (assigned), ``g`` (read only) and ``s`` (a one-element
    scale assigned like an optimizer's bias correction); ``current`` holds each one's
    latest value (its buffer, or its last assign)."""

    def __init__(self, mem: Memory, rng: random.Random) -> None:
        self.rng = rng
        self.current = {k: mem.rand(N, seed=i) for i, k in enumerate("wmvg")}
        self.current["s"] = mem.buf([0.5])
        self.buffers = {k: _buffer(t) for k, t in self.current.items()}
        self.readers: list[T] = []
        self.log: list[str] = []

    def pick(self) -> tuple[str, T]:
        if self.readers and self.rng.random() < 0.5:
            i = self.rng.randrange(len(self.readers))
            return f"t{i}", self.readers[i]
        k = self.rng.choice("wmvg")
        return k, self.current[k]

    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.15:
            s = self.current["s"]
            self.current["s"] = s.assign(s * 0.9)
            self.log.append("s *= 0.9")
            return
        (a_name, a), (b_name, b) = self.pick(), self.pick()
        if roll < 0.3:
            scale = self.current["s"].reshape(()).broadcast_to((N,))
            self.readers.append(a / (scale * -1.0 + 1.0))
            self.log.append(f"t{len(self.readers) - 1} = {a_name} / (1 - s)")
            return
        name, fn = self.rng.choice(OPS)
        value = fn(a, b)
        if roll < 0.6:
            k = self.rng.choice("wmv")
            self.current[k] = self.current[k].assign(value)
            self.log.append(f"{k} = {name}({a_name}, {b_name})")
        else:
            self.readers.append(value)
            self.log.append(f"t{len(self.readers) - 1} = {name}({a_name}, {b_name})")


@pytest.mark.parametrize("seed", range(24))
def test_readers_of_old_values_and_assigns_realized_together(mem: Memory, seed: int) -> None:
    rng = random.Random(seed)
    prog = Program(mem, rng)
    for _ in range(rng.randint(3, 8)):
        prog.step()
    finals = [prog.current[k] for k in "wmvs"]
    kg = schedule(*prog.readers, *finals)
    got = dict(zip(kg.becomes, run_graph(kg, mem), strict=True))
    for i, t in enumerate(prog.readers):
        out = got[t.uop]
        np.testing.assert_allclose(out, t.np, rtol=1e-4, atol=1e-4, err_msg=f"t{i}: {prog.log}")
    for k, t in zip("wmvs", finals, strict=True):
        stored = mem.arrays[prog.buffers[k]].reshape(t.shape)
        np.testing.assert_allclose(stored, t.np, rtol=1e-4, atol=1e-4, err_msg=f"{k}: {prog.log}")


def test_optimizer_like_step_with_old_value_readers_in_one_schedule(mem: Memory) -> None:
    """An Adam-like update (``m``, ``v``, ``w`` and the scalars) with two readers of ``w``'s
    old value (a loss and an activation) realized with it."""
    w, g, m, v = (mem.rand(N, seed=i) for i in range(4))
    b1 = mem.buf([1.0])
    loss, act = (w * w).sum(), (w * g).relu()
    b1_new = b1.assign(b1 * 0.9)
    m_new = m.assign(m * 0.9 + g * 0.1)
    v_new = v.assign(v * v * 0.99 + g * g * 0.01)  # kept non-negative for the sqrt
    bias = T(b1_new.uop, b1_new.np).reshape(()).broadcast_to((N,)) * -1.0 + 1.0
    step = T(m_new.uop, m_new.np) / bias / (T(v_new.uop, v_new.np).sqrt() + 1e-8)
    w_new = w.assign(w - step * 0.01)
    kg = schedule(loss, act, w_new, m_new, v_new, b1_new)
    got = dict(zip(kg.becomes, run_graph(kg, mem), strict=True))
    np.testing.assert_allclose(got[loss.uop], loss.np, rtol=1e-5)
    np.testing.assert_allclose(got[act.uop], act.np, rtol=1e-5)
    np.testing.assert_allclose(mem.arrays[_buffer(w)], w_new.np, rtol=1e-5)
    np.testing.assert_allclose(mem.arrays[_buffer(m)], m_new.np, rtol=1e-5)


def test_reference_evaluator_sees_a_load_after_another_outputs_store(mem: Memory) -> None:
    """The reference evaluator catches the hazard the merge rules out: a kernel storing
    ``w[i]`` and, later in the same iteration, reading ``w[3 - i]``."""
    w = mem.rand(4)
    rng = UOp.range(4, 0)
    param_w, param_r = (UOp.param(i, w.dtype.ptr(4)) for i in range(2))
    store_w = param_w.index(rng).store(param_w.index(rng).load() + 1.0).end(rng)
    flipped = param_w.index(rng * -1 + 3).load()
    store_r = param_r.index(rng).store(flipped).end(rng)
    ast = UOp.sink(store_w, store_r)
    out = np.zeros(4, np.float32)
    evaluate_kernel(ast, [mem.arrays[_buffer(w)], out], {})
    assert not np.allclose(out, w.np[::-1])  # the late loads saw the new values
    np.testing.assert_allclose(out[:2], w.np[::-1][:2])
