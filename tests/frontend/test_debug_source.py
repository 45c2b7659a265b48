"""``DEBUG=4`` prints every new kernel's generated source (whatever the renderer prints: LLVM
IR, C, ...), checked against reviewed golden files for a small Tensor kernel (``NOOPT=1``: a
plain loop, the same on every host). Refresh after an intended change with
``FUSEGRAD_UPDATE_GOLDEN=1`` and review the diff."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fusegrad import Context, Tensor
from fusegrad.codegen import clear_programs
from fusegrad.engine import programs
from fusegrad.runtime import Device

pytestmark = pytest.mark.kernels

GOLDEN = Path(__file__).parent / "golden" / "debug4"
UPDATE = os.environ.get("FUSEGRAD_UPDATE_GOLDEN") == "1"


@pytest.fixture
def fresh() -> Iterator[None]:
    """No kernel compiled yet (so the next realize builds and prints its program)."""
    before = Device["CPU"].renderer.suffix
    programs.clear_kernels()
    clear_programs()
    yield
    Device["CPU"].select_compiler(before)
    programs.clear_kernels()
    clear_programs()


@pytest.mark.parametrize("renderer", ["LLVM", "C"])
def test_debug_4_prints_each_kernels_source(
    renderer: str, fresh: None, capsys: pytest.CaptureFixture[str]
) -> None:
    cpu = Device["CPU"]
    if dict(cpu.compiler_status()).get(renderer) != "ok":
        pytest.skip(f"no {renderer} compiler here")
    cpu.select_compiler(renderer)
    x = Tensor(np.arange(6, dtype=np.float32)).realize()
    capsys.readouterr()
    with Context(DEBUG=4, NOOPT=1):
        out = (x * 3 + 1).numpy()
    np.testing.assert_array_equal(out, np.arange(6, dtype=np.float32) * 3 + 1)
    printed = capsys.readouterr().out
    (kernel,) = [k for key, k in programs._KERNELS.items() if key[1] is cpu.renderer]
    source = kernel.spec.src if isinstance(kernel.spec.src, str) else kernel.spec.src.decode()
    path = GOLDEN / f"{renderer.lower()}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    want = path.read_text()
    assert source == want, f"{path.name} changed: FUSEGRAD_UPDATE_GOLDEN=1 to refresh"
    assert want in printed  # DEBUG=4 printed it, whole


def test_without_debug_4_no_source_is_printed(
    fresh: None, capsys: pytest.CaptureFixture[str]
) -> None:
    x = Tensor(np.arange(6, dtype=np.float32)).realize()
    capsys.readouterr()
    with Context(DEBUG=3, NOOPT=1):
        (x * 3 + 1).numpy()
    (kernel,) = programs._KERNELS.values()
    source = kernel.spec.src if isinstance(kernel.spec.src, str) else kernel.spec.src.decode()
    assert source.splitlines()[0] not in capsys.readouterr().out
