"""Helpers of the VIZ tests: a traced small training step, served."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.nn import Linear
from fusegrad.uop.viztrace import capture
from fusegrad.viz import VizData, VizServer, export


def training_step_trace() -> VizData:
    """The VIZ data of one SGD step of a small MLP (forward, backward, update), lowered
    afresh (no program cache hits) so every kernel shows up."""
    from fusegrad.codegen.program import clear_programs

    clear_programs()
    rng = np.random.default_rng(0)
    l1, l2 = Linear(8, 16), Linear(16, 4)
    params = [l1.weight, l1.bias, l2.weight, l2.bias]
    for p in params:
        p.requires_grad = True
    x = Tensor(rng.standard_normal((5, 8), dtype=np.float32))
    y = Tensor(rng.standard_normal((5, 4), dtype=np.float32))
    with capture() as trace:
        loss = ((l2(l1(x).relu()) - y) ** 2).mean()
        loss.backward()
        for p in params:
            assert p.grad is not None
            p.assign(p - 0.1 * p.grad)
        Tensor.realize(*params)
    return VizData(export(trace))


@pytest.fixture(scope="module")
def step_viz() -> VizData:
    return training_step_trace()


@pytest.fixture(scope="module")
def server(step_viz: VizData) -> Iterator[VizServer]:
    with VizServer(step_viz) as s:
        yield s
