"""A plan's kernels compile in worker threads (``COMPILE_THREADS``) while the next one lowers:
the same kernels, results and errors as compiling each in turn, one disk-cache entry each."""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad import Device, Tensor
from fusegrad.codegen import clear_programs
from fusegrad.codegen.renderer import CompileError, Compiler, DiskCache
from fusegrad.codegen.schedule.pipeline import schedule_cache
from fusegrad.engine import programs
from fusegrad.helpers import Context

pytestmark = pytest.mark.kernels  # the kernel pipeline, not the reference interpreter


def _forget() -> None:
    """Nothing compiled or scheduled is remembered: loaded kernels, lowered programs and the
    schedule cache's templates (whose plans hold loaded kernels: a test earlier in the same
    worker that scheduled the same shapes would otherwise make a run compile nothing)."""
    programs.clear_kernels()
    clear_programs()
    schedule_cache.clear()


@pytest.fixture
def compiler() -> Iterator[Compiler]:
    """The default device's compiler (one that may compile in threads), with nothing loaded
    before or after the test."""
    comp = Device[Device.DEFAULT].compiler
    if not comp.threaded:
        pytest.skip(f"{type(comp).__name__} compiles in the caller's thread")
    _forget()
    yield comp
    _forget()


def _net(seed: int) -> list[np.ndarray]:
    """A few kernels' worth of work (shapes seeded per test, so no other test loaded them)."""
    rng = np.random.default_rng(seed)
    n = 8 + seed
    a, b = (
        rng.standard_normal((n, 12), dtype=np.float32),
        rng.standard_normal((12, 5), dtype=np.float32),
    )
    x, w = Tensor(a), Tensor(b)
    h = (x @ w).relu()
    out = [h.sum(axis=1), (h.exp() - 1).max(axis=0), x.sum() * w.mean()]
    Tensor.realize(*out)
    return [o.numpy() for o in out]


def _compiles(monkeypatch: pytest.MonkeyPatch, comp: Compiler) -> list[tuple[str, str]]:
    """(thread name, source) of every ``compile`` of ``comp``'s class from now on."""
    seen: list[tuple[str, str]] = []
    real = type(comp).compile

    def compile(self: Compiler, src: str) -> bytes:
        if "HCQ worker loop" not in src:  # the CPU device's own loop, compiled on first use
            seen.append((threading.current_thread().name, src))
        return real(self, src)

    monkeypatch.setattr(type(comp), "compile", compile)
    return seen


def test_threads_compile_the_same_kernels_with_the_same_results(
    compiler: Compiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _compiles(monkeypatch, compiler)
    with Context(CACHELEVEL=0, COMPILE_THREADS=0):
        want = _net(1)
    in_turn = list(seen)
    assert in_turn and all(not name.startswith("fusegrad-compile") for name, _ in in_turn)
    _forget()
    seen.clear()
    switch = sys.getswitchinterval()
    with Context(CACHELEVEL=0, COMPILE_THREADS=2):
        got = _net(1)
    assert sys.getswitchinterval() == switch  # shortened while the plan compiled, not after
    assert all(name.startswith("fusegrad-compile") for name, _ in seen)
    assert [src for _, src in seen] == [src for _, src in in_turn]  # same kernels, same order
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_a_workers_compile_error_is_raised_in_the_caller(
    compiler: Compiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = type(compiler).compile
    bad: list[str] = []

    def compile(self: Compiler, src: str) -> bytes:
        if len(bad) < 2:  # the second kernel's first compile fails (and only that one)
            bad.append(src)
            if len(bad) == 2:
                raise CompileError("kernel_two", "no such instruction", src, [1])
        return real(self, src)

    monkeypatch.setattr(type(compiler), "compile", compile)
    errors: dict[int, BaseException] = {}
    for threads in (0, 2):
        bad.clear()
        _forget()
        with Context(CACHELEVEL=0, COMPILE_THREADS=threads), pytest.raises(CompileError) as err:
            _net(2)
        errors[threads] = err.value
    assert str(errors[2]) == str(errors[0])
    assert "compiling kernel_two failed" in str(errors[2])
    # the kernel before the failing one loaded either way; after the error, all compile
    with Context(CACHELEVEL=0, COMPILE_THREADS=2):
        _net(2)


def test_the_disk_cache_gets_each_kernel_once(
    compiler: Compiler, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(compiler, "disk", DiskCache("compile", tmp_path / "cache.db"))
    puts: Counter[str] = Counter()
    real = DiskCache.put

    def put(self: DiskCache, key: str, val: bytes) -> None:
        puts[key] += 1
        real(self, key, val)

    monkeypatch.setattr(DiskCache, "put", put)
    seen = _compiles(monkeypatch, compiler)
    with Context(CACHELEVEL=2, COMPILE_THREADS=2):
        got = _net(3)
    assert puts and set(puts.values()) == {1}
    assert len(puts) == len({src for _, src in seen})
    # a second process (here: a cleared program cache) compiles nothing
    _forget()
    seen.clear()
    with Context(CACHELEVEL=2, COMPILE_THREADS=2):
        again = _net(3)
    assert seen == [] and set(puts.values()) == {1}
    for g, w in zip(again, got, strict=True):
        np.testing.assert_array_equal(g, w)


def test_debug_compiles_each_kernel_in_turn(compiler: Compiler, monkeypatch: pytest.MonkeyPatch,
                                            capsys: Any) -> None:  # fmt: skip
    seen = _compiles(monkeypatch, compiler)
    with Context(CACHELEVEL=0, COMPILE_THREADS=2, DEBUG=1):
        _net(4)
    assert seen and all(not name.startswith("fusegrad-compile") for name, _ in seen)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_compiles_in_threads_of_its_own(compiler: Compiler) -> None:
    with Context(CACHELEVEL=0, COMPILE_THREADS=2):
        _net(5)  # the parent's pool exists now
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: a new kernel, for compile threads of the child's own
            try:
                try:
                    value = (Tensor(np.arange(11, dtype=np.float32)).exp() + 1).max().item()
                    os.write(write, repr(value).encode())
                except RuntimeError as e:  # compiled; the launch is refused (RingForked)
                    os.write(write, type(e).__name__.encode())
            finally:
                os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 60)
    got = os.read(read, 100) if ready else b""
    os.close(read)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    # it finished compiling (with the parent's pool it waited forever); its launch is then
    # refused: the parent's device rings have no worker thread in the child
    assert got == b"RingForked", got or "the forked child never finished compiling"
