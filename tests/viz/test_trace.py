"""The stage trace behind VIZ (fusegrad.uop.viztrace): every graph_rewrite, hand walk,
scheduler stage and lowering stage is recorded with its input, output and rules fired."""

from __future__ import annotations

from pathlib import Path

import pytest
from fusegrad import Tensor
from fusegrad.codegen.lower.walk import rebuild
from fusegrad.uop import Ops, PatternMatcher, UOp, UPat, dtypes, graph_rewrite
from fusegrad.uop.viztrace import ACTIVE, capture


def _double_to_add() -> PatternMatcher:
    return PatternMatcher([(UPat(Ops.MUL, name="m"), lambda m: m.src[0] + m.src[0])])


def test_graph_rewrite_is_a_stage_with_rules_and_source_lines() -> None:
    x = UOp.variable("x", 0, 10)
    two = UOp.const(dtype=dtypes.int32, b=2)
    sink = UOp.sink(x * two)
    pm = _double_to_add()
    with capture() as trace:
        out = graph_rewrite(sink, pm, name="double")
    [group] = trace.groups
    [stage] = group.stages
    assert (stage.name, stage.input, stage.output) == ("double", sink, out)
    assert out is not sink and len(stage.steps) == 1
    step = stage.steps[0]
    assert step.before.op is Ops.MUL and step.after.op is Ops.ADD
    path, _, line = step.source.rpartition(":")
    assert Path(path) == Path(__file__) and "m.src[0] + m.src[0]" in Path(path).read_text(
    ).splitlines()[int(line) - 1]  # fmt: skip


def test_off_records_nothing() -> None:
    with capture() as trace:
        pass
    assert trace not in ACTIVE
    x = UOp.variable("x", 0, 10)
    graph_rewrite(UOp.sink(x * 2), _double_to_add())
    assert trace.groups == []


def test_nested_rewrite_gives_its_firings_to_the_outer_stage() -> None:
    x = UOp.variable("x", 0, 10)
    pm = _double_to_add()

    def inner(u: UOp) -> UOp | None:
        return graph_rewrite(u, pm, name="inner") if u.op is Ops.SINK else None

    sink = UOp.sink(x * 3)
    with capture() as trace:
        out = rebuild(sink, inner)
    [stage] = trace.groups[0].stages
    assert stage.kind == "walk" and stage.name.endswith("inner")
    assert stage.output is out
    assert [s.rewrite for s in stage.steps] == ["inner", stage.name]


def test_tensor_run_records_schedule_and_every_lowering_stage() -> None:
    from fusegrad.codegen.program import clear_programs

    clear_programs()
    a = Tensor([1.0, 2.0, 3.0, 4.0])
    with capture() as trace:
        assert float(((a * 2 + 1).exp()).sum().numpy()) > 0
    kinds = [g.kind for g in trace.groups]
    assert "schedule" in kinds and "kernel" in kinds
    sched = next(g for g in trace.groups if g.kind == "schedule")
    assert [s.name for s in sched.stages][:2] == ["schedule: prepare", "schedule: layout"]
    kernel = next(g for g in trace.groups if g.kind == "kernel")
    names = [s.name for s in kernel.stages]
    assert names[-2:] == ["linearize", "if blocks"] and "lower index dtype" in names
    assert kernel.info["source"] and kernel.name in kernel.info["source"]
    assert "PARAM" in kernel.info["linear"]
    # each stage's input is the previous stage's output
    for prev, cur in zip(kernel.stages, kernel.stages[1:], strict=False):
        assert cur.input is prev.output
    assert sum(len(s.steps) for s in kernel.stages) > 0


def test_kernel_group_starts_with_the_opts_applied() -> None:
    import numpy as np
    from fusegrad.codegen.program import clear_programs

    clear_programs()
    a = Tensor(np.ones((64, 64), dtype=np.float32))
    with capture() as trace:
        (a @ a).realize()
    kernel = next(g for g in trace.groups if g.kind == "kernel")
    first, second = kernel.stages[:2]
    assert first.kind == "opts" and first.name.startswith("apply opts: Opt(")
    assert first.input is not first.output and second.input is first.output
    assert first.input.op is Ops.SINK


def test_graph_rewrite_map_is_a_stage_and_a_failing_stage_closes() -> None:
    from fusegrad.uop import graph_rewrite_map

    x = UOp.variable("x", 0, 10)
    sink = UOp.sink(x * 2)

    def boom(m: UOp) -> UOp:
        raise RuntimeError("rule failed")

    with capture() as trace:
        mapping = graph_rewrite_map(sink, _double_to_add(), name="mapped")
        with pytest.raises(RuntimeError, match="rule failed"):
            graph_rewrite(sink, PatternMatcher([(UPat(Ops.MUL, name="m"), boom)]), name="bad")
        graph_rewrite(sink, _double_to_add(), name="after")
    assert [s.name for s in trace.groups[0].stages] == ["mapped", "bad", "after"]
    assert trace.groups[0].stages[0].output is mapping[sink] and not trace.open_stages
