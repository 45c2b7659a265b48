"""PROFILE=1's trace against the trace-event format (every event's fields, the nesting of
spans per thread), for a script that exits right after ``.realize()``; ``fusegrad profile``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fusegrad.cli import kernel_table

SCRIPT = """
import numpy as np
from fusegrad import Tensor
from fusegrad.nn import Linear
rng = np.random.default_rng(0)
lin = Linear(16, 8)
for p in (lin.weight, lin.bias):
    p.requires_grad = True
x = Tensor(rng.standard_normal((4, 16), dtype=np.float32))
loss = lin(x).relu().square().mean()
loss.backward()
for p in (lin.weight, lin.bias):
    p.assign(p - 0.1 * p.grad)
Tensor.realize(lin.weight, lin.bias)
"""

HOST_STEPS = {"schedule", "lower", "compile", "launch"}


def validate_trace(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Check ``trace`` is a JSON-object trace of the trace-event format as fusegrad writes
    it; returns its complete ("X") events. Raises AssertionError naming the first bad event."""
    assert set(trace) == {"traceEvents", "displayTimeUnit"}
    assert trace["displayTimeUnit"] in ("ms", "ns")
    named: set[Any] = set()
    spans = []
    for e in trace["traceEvents"]:
        assert isinstance(e.get("name"), str) and e["name"], e
        assert isinstance(e.get("pid"), (str, int)) and isinstance(e.get("tid"), (str, int)), e
        if e["ph"] == "M":
            assert e["name"] == "process_name" and isinstance(e["args"]["name"], str), e
            named.add(e["pid"])
            continue
        assert e["ph"] == "X", e
        assert set(e) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}, e
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        assert e["cat"] in ("host", "kernel", "copy", "slice") and isinstance(e["args"], dict), e
        if e["cat"] == "host":
            assert e["pid"] == "host" and e["name"] in HOST_STEPS, e
        if e["cat"] == "kernel":
            assert {"global", "local", "vals", "ops", "mem"} <= set(e["args"]), e
        if e["cat"] == "slice":
            assert set(e["args"]) == {"launch", "slice", "slices"}, e
            assert isinstance(e["tid"], str) and " core " in e["tid"], e
        spans.append(e)
    assert {e["pid"] for e in spans} <= named, "every process has its process_name"
    _check_slices(spans)
    # nesting: on one thread, spans are disjoint or one contains the other
    lanes: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for e in spans:
        lanes.setdefault((e["pid"], e["tid"]), []).append(e)
    eps = 1e-3  # the microsecond floats' rounding
    for lane, evs in lanes.items():
        stack: list[float] = []
        for e in sorted(evs, key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1] <= e["ts"] + eps:
                stack.pop()
            end = e["ts"] + e["dur"]
            assert not stack or end <= stack[-1] + eps, f"{lane}: {e} overlaps its parent"
            stack.append(end)
    return spans


def _check_slices(spans: list[dict[str, Any]]) -> None:
    """A split kernel's slices: each within its kernel's span (same device and launch), on
    that device, numbered 0..n-1 once each."""
    kernels = {(e["pid"], e["args"]["launch"]): e for e in spans
               if e["cat"] == "kernel" and "launch" in e["args"]}  # fmt: skip
    seen: dict[tuple[Any, Any], list[int]] = {}
    eps = 1e-3
    for e in spans:
        if e["cat"] != "slice":
            continue
        key = (e["pid"], e["args"]["launch"])
        k = kernels.get(key)
        assert k is not None, f"{e}: no kernel span of its launch"
        assert k["name"] == e["name"], e
        assert k["ts"] - eps <= e["ts"] and e["ts"] + e["dur"] <= k["ts"] + k["dur"] + eps, (
            f"{e} lies outside its kernel {k}"
        )
        assert e["tid"].startswith(f"{k['tid']} core "), e
        seen.setdefault(key, []).append(e["args"]["slice"])
        assert e["args"]["slices"] >= 1, e
    for key, idx in seen.items():
        n = next(e["args"]["slices"] for e in spans if e["cat"] == "slice"
                 and (e["pid"], e["args"]["launch"]) == key)  # fmt: skip
        assert sorted(idx) == list(range(n)), f"{key}: slices {sorted(idx)} of {n}"


def _run(args: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, timeout=300, check=False, cwd=tmp,
        env={**os.environ, **env},
    )  # fmt: skip


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "step.py"
    path.write_text(SCRIPT)
    return path


def test_profile_trace_of_a_script_ending_in_realize(script: Path) -> None:
    out = script.parent / "trace.json"
    run = _run([sys.executable, str(script)], script.parent, PROFILE="1", PROFILE_PATH=str(out))
    assert run.returncode == 0, run.stderr
    spans = validate_trace(json.loads(out.read_text()))
    host = {e["name"] for e in spans if e["cat"] == "host"}
    assert host == HOST_STEPS
    kernels = [e for e in spans if e["cat"] == "kernel"]
    compiled = {e["args"]["kernel"] for e in spans if e["name"] == "compile"}
    assert kernels and {e["name"] for e in kernels} == compiled
    assert all(e["pid"] != "host" for e in kernels)


def test_validator_rejects_overlaps_and_missing_fields() -> None:
    meta = {"name": "process_name", "ph": "M", "pid": "CPU", "tid": 0, "args": {"name": "CPU"}}

    def span(ts: float, dur: float) -> dict[str, Any]:
        return {"name": "k", "cat": "kernel", "ph": "X", "ts": ts, "dur": dur, "pid": "CPU",
                "tid": "compute", "args": {"global": [1], "local": None, "vals": [], "ops": 0,
                                           "mem": 0}}  # fmt: skip

    good = {"traceEvents": [meta, span(0, 10), span(2, 3), span(10, 1)], "displayTimeUnit": "ns"}
    assert len(validate_trace(good)) == 3
    with pytest.raises(AssertionError, match="overlaps"):
        validate_trace({**good, "traceEvents": [meta, span(0, 10), span(5, 10)]})
    bad = span(0, 1)
    del bad["dur"]
    with pytest.raises(AssertionError):
        validate_trace({**good, "traceEvents": [meta, bad]})
    with pytest.raises(AssertionError, match="process_name"):
        validate_trace({**good, "traceEvents": [span(0, 1)]})


def test_fusegrad_profile_prints_top_kernels(script: Path) -> None:
    out = script.parent / "cli.json"
    run = _run(
        [sys.executable, "-m", "fusegrad.cli", "profile", "--top", "3", "--out", str(out),
         str(script)], script.parent,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("kernel "))
    assert lines[head].split() == ["kernel", "launches", "time", "GFLOP/s", "GB/s", "share"]
    rows = lines[head + 1 : head + 4]
    trace = json.loads(out.read_text())
    assert kernel_table(trace, 3) == lines[head : head + 5]
    shares = [float(r.split()[-1].rstrip("%")) for r in rows]
    assert shares == sorted(shares, reverse=True) and 0 < sum(shares) <= 100.05
    missing = _run([sys.executable, "-m", "fusegrad.cli", "profile", "nope.py"], script.parent)
    assert missing.returncode == 2 and "no script" in missing.stderr
