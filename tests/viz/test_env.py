"""VIZ the documented way: ``VIZ=-1`` saves the trace at exit, ``VIZ=1`` also serves it on
127.0.0.1 (the address on stderr) until stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from fusegrad.viz import VizData, load

SCRIPT = "from fusegrad import Tensor\nprint((Tensor([1.0, 2.0]) * 3).sum().item())\n"


def _env(tmp_path: Path, viz: str) -> dict[str, str]:
    return {**os.environ, "VIZ": viz, "VIZ_PATH": str(tmp_path / "viz.pkl")}


def test_viz_minus_one_saves_the_trace(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=_env(tmp_path, "-1"), capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0 and run.stdout.strip() == "9.0", run.stderr
    assert f"trace saved to {tmp_path / 'viz.pkl'}" in run.stderr
    viz = VizData(load(tmp_path / "viz.pkl"))
    kinds = {g["kind"] for g in viz.groups}
    assert {"schedule", "kernel"} <= kinds
    kernel = next(g for g in viz.groups if g["kind"] == "kernel")
    assert kernel["info"]["source"] and kernel["stages"]


def test_viz_one_serves_at_exit(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", SCRIPT], env=_env(tmp_path, "1"), stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL, text=True,
    ) as proc:  # fmt: skip
        try:
            assert proc.stderr is not None
            lines = [proc.stderr.readline() for _ in range(2)]
            assert "trace saved" in lines[0], lines
            url = lines[1].split()[2]
            assert url.startswith("http://127.0.0.1:")
            with urllib.request.urlopen(url + "api/groups", timeout=30) as r:
                groups = json.loads(r.read())
            assert any(g["kind"] == "kernel" for g in groups)
            assert proc.poll() is None  # still serving
        finally:
            proc.terminate()
            proc.wait(timeout=30)
