"""The CPU device's LVP option (``DEV=CPU:LVP``): Mesa NIR shaders run by llvmpipe, with the
CPU device's buffers, copies, HCQ rings and core split; and the reasons it gives when Mesa or
its LLVM is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fusegrad.renderer.conformance import compare, fresh_buffers
from fusegrad.renderer.nir import mesa as nir_mesa
from fusegrad.renderer.nir import mesa_unavailable
from fusegrad.runtime import Buffer, CPUDevice, run_linear

needs_mesa = pytest.mark.skipif(mesa_unavailable() is not None, reason=str(mesa_unavailable()))

TENSOR_SCRIPT = """
import numpy as np
from fusegrad import Device, Tensor
assert type(Device["CPU"].renderer).__name__ == "NIRRenderer", Device["CPU"].renderer
a = np.arange(-6, 18, dtype=np.float32).reshape(4, 6) / 4
b = np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)
ta, tb = Tensor(a), Tensor(b)
out = {
    "matmul": ((ta @ tb).relu().numpy(), np.maximum(a @ b, 0)),
    "softmax": (ta.softmax(1).numpy(), np.exp(a) / np.exp(a).sum(1, keepdims=True)),
    "int": ((Tensor(np.arange(12, dtype=np.int32)) * 7 // 3 % 5).numpy(), np.arange(12) * 7 // 3 % 5),
    "max": (ta.max(0).numpy(), a.max(0)),
    "where": ((ta > 1).where(ta, -ta).sum().numpy(), np.where(a > 1, a, -a).sum()),
}
for name, (got, want) in out.items():
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
print("ok", len(out))
"""


@needs_mesa
def test_tensor_code_runs_on_the_lvp_option() -> None:
    done = subprocess.run(
        [sys.executable, "-c", TENSOR_SCRIPT],
        capture_output=True, text=True, timeout=300, check=False, env={**_env(), "DEV": "CPU:LVP"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok 5"


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("DEV", "DEBUG", "BEAM")}


@needs_mesa
def test_lvp_option_compiles_and_runs_through_the_device_queue() -> None:
    from fusegrad.codegen import ProgramSpec
    from fusegrad.renderer.corpus import multicore_case

    dev = CPUDevice("CPU")
    try:
        renderer, _ = dev.select_compiler("LVP")
        case = multicore_case()
        src = renderer.render(list(case.uops))
        spec = ProgramSpec("kernel", src, "CPU", case.uops[-1], uops=tuple(case.uops))
        prog = dev.load(spec)
        assert prog.slices(()) == 4  # the core split: one workgroup per core
        bufs = [Buffer("CPU", len(values), dt).allocate() for dt, values in case.buffers]
        for buf, raw in zip(bufs, fresh_buffers(case), strict=True):
            buf.copyin(memoryview(raw))
        dev.exec(prog, [b.opaque for b in bufs], wait=True)
        got = [bytearray(b.copyout(memoryview(bytearray(b.nbytes)))) for b in bufs]
        want = fresh_buffers(case)
        run_linear(case.uops, want, {})
        assert compare(case, want, got) == []
        assert got != fresh_buffers(case)  # the kernel wrote its output
    finally:
        dev.close()


def test_missing_llvm_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nir_mesa, "_LLVM_DIST", "fusegrad-no-such-distribution")
    with pytest.raises(
        nir_mesa.MesaUnavailable, match=r"pip install 'fusegrad-no-such-distribution==20\.1\.8'"
    ):
        nir_mesa._find_llvm_runtime()


def test_missing_tinymesa_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tinymesa", None)
    with pytest.raises(nir_mesa.MesaUnavailable, match=r"pip install 'tinymesa==25\.2\.7\.2'"):
        nir_mesa._tinymesa_path()


def test_the_cpu_device_lists_the_lvp_option() -> None:
    dev = CPUDevice("CPU")
    try:
        status = dict(dev.compiler_status())
    finally:
        dev.close()
    reason = mesa_unavailable()
    if reason is None:
        assert status["LVP"] == "ok"
    else:  # the option stays listed, saying why it can't run
        assert status["LVP"].startswith("unavailable") and "pip install" in status["LVP"]
