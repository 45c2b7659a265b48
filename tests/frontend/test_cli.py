"""The ``fusegrad`` command line."""

from __future__ import annotations

import pytest
from fusegrad.cli import main


def test_devices_lists_cpu_and_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "CPU" in out
    assert "default:" in out


def test_bench_prints_gflops_next_to_numpy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--size", "16", "--repeats", "1"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("matmul 16x16 fp32: fusegrad")
    assert "numpy" in line and "ratio" in line


def test_unknown_subcommand_exits_with_usage() -> None:
    with pytest.raises(SystemExit) as err:
        main(["frobnicate"])
    assert err.value.code == 2
