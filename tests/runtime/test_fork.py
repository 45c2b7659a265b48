"""A process forked after fusegrad started a device's rings: the rings' worker threads do not
survive ``os.fork()``, so work submitted in the child would never run (a read then returned
stale memory: the parent's earlier result). The child gets a clear ``RingForked`` instead;
the parent keeps working."""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable

import numpy as np
import pytest
from fusegrad import Tensor

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _in_child(work: Callable[[], object]) -> bytes:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            try:
                os.write(write, repr(work()).encode())
            except BaseException as e:  # reported to the parent
                os.write(write, f"{type(e).__name__}: {e}".encode())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 60)
    got = os.read(read, 4096) if ready else b""
    os.close(read)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return got


def test_a_forked_child_gets_a_clear_error_not_the_parents_memory() -> None:
    assert (Tensor(np.arange(5, dtype=np.float32)) + 1).max().item() == 5.0
    got = _in_child(lambda: (Tensor(np.arange(7, dtype=np.float32)).exp() + 1).max().item())
    assert got.startswith(b"RingForked: "), got
    assert b"os.fork()" in got and b"spawn" in got
    # the parent's rings still run
    want = float(np.exp(np.float32(6)) + 1)
    assert (Tensor(np.arange(7, dtype=np.float32)).exp() + 1).max().item() == pytest.approx(want)
