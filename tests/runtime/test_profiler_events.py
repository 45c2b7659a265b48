"""PROFILE=1's typed records (tinygrad's Profile*Event): a device event the first time a device
reports, a program event per loaded program, a graph event per watched batch of launches."""

from __future__ import annotations

import decimal
import itertools
from typing import Any

import pytest
from fusegrad.runtime import Compiled, CPUDevice, ExecCmd
from fusegrad.runtime.profiler import (
    ProfileDeviceEvent,
    ProfileGraphEntry,
    ProfileGraphEvent,
    ProfileProgramEvent,
    device_events,
    watch_graph,
)
from fusegrad.uop import Context, dtypes


def _square_spec(dev: CPUDevice, rt: Any, lb: Any) -> Any:
    renderer, _ = dev.select_compiler("LLVM")
    pa, po = lb.buf(0, dtypes.float32, 16), lb.buf(1, dtypes.float32, 16)
    r = lb.rng(16, 0)
    x = lb.load(pa.index(r))
    prog = lb.linear(r, lb.store(po.index(r), x * x), lb.end(r))
    return rt.spec_for("profiled_square", prog, src=renderer.render(prog, "profiled_square"),
                       device="CPU")  # fmt: skip


def test_loading_under_profile_keeps_device_and_program_events(rt: Any, lb: Any) -> None:
    dev = CPUDevice("CPU")
    if dict(dev.compiler_status())["LLVM"] != "ok":
        pytest.skip("LLVM unavailable")
    try:
        spec = _square_spec(dev, rt, lb)
        lib = dev.compile(spec.src)
        before = len(device_events)
        dev.load(spec, lib)  # PROFILE off: nothing kept
        assert len(device_events) == before
        with Context(PROFILE=1):
            prg = dev.load(spec, lib)
    finally:
        dev.close()
    assert Compiled.profile_events is device_events
    devices = [e for e in device_events if isinstance(e, ProfileDeviceEvent) and e.device == "CPU"]
    assert len(devices) == 1 and devices[0].tdiff == decimal.Decimal(0)
    programs = [e for e in device_events[before:] if isinstance(e, ProfileProgramEvent)]
    assert [(p.device, p.name, p.lib, p.base) for p in programs] == [
        ("CPU", "profiled_square", lib, prg.address)
    ]
    assert programs[0].tag is not None


def test_a_watched_batch_becomes_one_graph_event(pydev: Any, rt: Any) -> None:
    order: list[str] = []
    programs = [rt.FnProgram(f"g{i}", lambda b, v, c, i=i: order.append(f"g{i}")) for i in range(3)]
    cmds = [ExecCmd(p, (), (), (1,), None) for p in programs]
    before = len(device_events)
    with Context(PROFILE=1):
        watch_graph("PYTHON", cmds)
        pydev.ring().submit(list(cmds))
        pydev.synchronize()
    graphs = [e for e in device_events[before:] if isinstance(e, ProfileGraphEvent)]
    assert order == ["g0", "g1", "g2"] and len(graphs) == 1
    g = graphs[0]
    assert [(e.device, e.name) for e in g.ents] == [("PYTHON", f"g{i}") for i in range(3)]
    assert all(isinstance(e, ProfileGraphEntry) for e in g.ents)
    assert g.deps == [[], [0], [1]]
    spans = [(g.sigs[e.st_id], g.sigs[e.en_id]) for e in g.ents]
    assert all(st <= en for st, en in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))  # in order


def test_each_submission_of_the_same_commands_is_its_own_graph_event(pydev: Any, rt: Any) -> None:
    cmds = [ExecCmd(rt.FnProgram("again", lambda b, v, c: None), (), (), (1,), None)]
    before = len(device_events)
    with Context(PROFILE=1):
        for _ in range(2):
            watch_graph("PYTHON", cmds)
            pydev.ring().submit(list(cmds))
        pydev.synchronize()
    graphs = [e for e in device_events[before:] if isinstance(e, ProfileGraphEvent)]
    assert len(graphs) == 2 and graphs[0].sigs != graphs[1].sigs
