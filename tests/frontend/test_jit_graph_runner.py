"""``fusegrad.engine.jit.GraphRunner`` / ``MultiGraphRunner``: a LINEAR of CALLs compiled
once into a launch plan and launched per call (one device graph submission on one device;
a queue per device run with copies), over the LINEAR's buffers or replacement inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.engine import synchronize
from fusegrad.engine.jit import GraphException, GraphRunner, MultiGraphRunner
from fusegrad.engine.realize import buffer_of, read_buffer
from fusegrad.runtime import Device
from fusegrad.uop import Ops, UOp

pytestmark = pytest.mark.kernels


def _output(linear: UOp) -> UOp:
    """The buffer the last CALL writes (its first buffer argument)."""
    return next(s for s in linear.src[-1].src[1:] if s.op is Ops.BUFFER)


def _values(buf: UOp) -> list[float]:
    synchronize()
    return [float(v) for v in read_buffer(buf)]


def test_graph_runner_runs_the_linear_and_takes_new_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = Device["CPU"]
    if cpu.graph is None:
        pytest.skip("the CPU device runs Python rings here: no graph")
    a = Tensor(np.array([1.0, 2.0, 3.0], np.float32)).realize()
    linear, _ = ((a * 2).contiguous() + 1).linear_with_vars()
    source = buffer_of(a.uop)
    assert source is not None
    submits: list[int] = []
    real = cpu.graph.submit_timed

    def counting(self: Any, *args: Any) -> None:
        submits.append(len(self))
        real(self, *args)

    monkeypatch.setattr(cpu.graph, "submit_timed", counting)
    runner = GraphRunner(linear, (source,))
    assert runner.device == "CPU" and runner.kernels == len(linear.src)
    out = _output(linear)
    for _ in range(3):
        runner()
    assert _values(out) == [3.0, 5.0, 7.0]
    other = Tensor(np.array([10.0, 20.0, 30.0], np.float32)).realize()
    other_buf = buffer_of(other.uop)
    assert other_buf is not None
    runner(other_buf)
    assert _values(out) == [21.0, 41.0, 61.0]
    runner()  # back to the LINEAR's own input
    assert _values(out) == [3.0, 5.0, 7.0]
    # every call (the first fills the graph) is one graph submission of all the kernels
    assert submits == [runner.kernels] * 5


def test_graph_runner_checks_its_inputs() -> None:
    a = Tensor(np.array([1.0, 2.0], np.float32)).realize()
    linear, _ = (a + 1).linear_with_vars()
    source = buffer_of(a.uop)
    assert source is not None
    runner = MultiGraphRunner(linear, (source,))
    wrong = buffer_of(Tensor(np.zeros(3, np.float32)).realize().uop)
    assert wrong is not None
    with pytest.raises(ValueError, match="stands for"):
        runner(wrong)
    with pytest.raises(TypeError, match="1 inputs"):
        MultiGraphRunner(linear)(source)
    with pytest.raises(ValueError, match="no buffer of the LINEAR"):
        MultiGraphRunner(linear, (wrong,))
    with pytest.raises(TypeError, match="LINEAR"):
        GraphRunner(source)


def test_multi_graph_runner_copies_across_devices() -> None:
    a = Tensor(np.array([1.0, 2.0], np.float32), device="CPU:1").realize()
    linear, _ = (a.to("CPU") * 3).linear_with_vars()
    with pytest.raises(GraphException, match="MultiGraphRunner"):
        GraphRunner(linear)
    runner = MultiGraphRunner(linear)
    runner()
    assert _values(_output(linear)) == [3.0, 6.0]
