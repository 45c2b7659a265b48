"""The LVP option (``DEV=CPU:LVP``) splits a GPU-style kernel's grid over the CPU's cores: the
NIR renderer's lowering rule adds a ``SPECIAL core`` (``split_over_cores``), the kernel
takes the core id last, and slice c runs workgroups c, c + n, ... Checked on the rule itself
and through the Tensor API (elementwise, a GROUP reduction, a matmul with LOCAL ids, a
symbolic grid) against NumPy, with the Python rings (every slice seen) and the compiled
ones."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fusegrad.codegen import host_cpu_count
from fusegrad.renderer.nir import mesa_unavailable
from fusegrad.renderer.nir.renderer import SPLIT_MIN_WORK, split_over_cores
from fusegrad.uop import AxisType, Ops, UOp, dtypes

needs_mesa = pytest.mark.skipif(mesa_unavailable() is not None, reason=str(mesa_unavailable()))


def _i32(x: int) -> UOp:
    return UOp(Ops.CONST, dtypes.int32, arg=x)


def _kernel(groups: UOp, lanes: int = 8, loop: int = 1) -> UOp:
    g = UOp(Ops.SPECIAL, dtypes.int32, (groups,), "gidx0")
    lidx = UOp(Ops.SPECIAL, dtypes.int32, (_i32(lanes),), "lidx0")
    rng = UOp(Ops.RANGE, dtypes.int32, (_i32(loop),), (0, AxisType.REDUCE))
    return UOp(Ops.SINK, dtypes.void, (g * lanes + lidx + rng,))


def _core(sink: UOp | None) -> UOp:
    assert sink is not None
    cores = [u for u in sink.src if u.op is Ops.SPECIAL and u.arg == "core"]
    assert len(cores) == 1
    return cores[0]


def test_a_big_grid_is_split_into_one_slice_per_core() -> None:
    split = split_over_cores(_kernel(_i32(4096)), 6)
    core = _core(split)
    assert core.dtype == dtypes.int32
    assert core.src[0].op is Ops.CONST and core.src[0].arg == 6
    assert split is not None and split_over_cores(split, 6) is None  # once only


def test_no_more_slices_than_workgroups() -> None:
    sink = _kernel(_i32(3), loop=SPLIT_MIN_WORK)
    assert _core(split_over_cores(sink, 16)).src[0].arg == 3
    assert split_over_cores(_kernel(_i32(1), loop=SPLIT_MIN_WORK), 16) is None


def test_small_work_and_one_core_stay_unsplit() -> None:
    assert split_over_cores(_kernel(_i32(64)), 8) is None  # 64 x 8 invocations
    assert split_over_cores(_kernel(_i32(4096)), 1) is None
    no_grid = UOp(Ops.SINK, dtypes.void, (UOp(Ops.RANGE, dtypes.int32, (_i32(1 << 20),), (0, 0)),))
    assert split_over_cores(no_grid, 8) is None  # a CPU-style program: nothing to split


def test_a_symbolic_grid_gets_every_core_when_it_can_be_big() -> None:
    n = UOp.variable("n", 1, 1 << 20, dtypes.int32)
    assert _core(split_over_cores(_kernel(n), 5)).src[0].arg == 5
    small = UOp.variable("m", 1, 4, dtypes.int32)
    assert split_over_cores(_kernel(small), 5) is None  # at most 4 x 8 invocations


TENSOR_SCRIPT = """
import numpy as np
from fusegrad import Device, Tensor, Variable
from fusegrad.codegen.opt.kernel import OptOps
from fusegrad.runtime.device_cpu import CPUProgram

dev = Device["CPU"]
assert type(dev.renderer).__name__ == "NIRRenderer", dev.renderer
loaded, seen = {}, {}  # kernel -> its program; kernel -> (slices of a launch, core ids run)
init, call = CPUProgram.__init__, CPUProgram.__call__

def spy_init(self, *args, **kwargs):
    init(self, *args, **kwargs)
    loaded[self.name] = self

def spy_call(self, bufs, vals, global_size, local_size, core=0):
    seen.setdefault(self.name, (self.slices(vals), set()))[1].add(core)
    return call(self, bufs, vals, global_size, local_size, core)

CPUProgram.__init__, CPUProgram.__call__ = spy_init, spy_call
rs = np.random.default_rng(0)
a, b, c = (rs.standard_normal((512, 512), dtype=np.float32) for _ in range(3))
wide = rs.standard_normal((64, 8192), dtype=np.float32)
n = Variable("n", 1, 512).bind(300)
cases = {
    "elementwise": ((Tensor(a) * Tensor(b) + Tensor(c)).relu(), np.maximum(a * b + c, 0), None),
    "group": (Tensor(wide).sum(1), wide.sum(1), OptOps.GROUP),
    "matmul": (Tensor(a[:256]) @ Tensor(b[:, :128]), a[:256] @ b[:, :128], OptOps.LOCAL),
    "symbolic": ((Tensor(a)[:n] * 2 + 1), a[:300] * 2 + 1, None),
}
for name, (t, want, opt) in cases.items():
    loaded.clear()
    seen.clear()
    got = t.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
    split = {k: p for k, p in loaded.items() if p.core_size is not None}
    assert split, (name, list(loaded))
    for kernel, prg in split.items():
        assert any(u.op.name == "SPECIAL" and u.arg == "core" for u in prg.spec.uops)
        gs = prg.spec.global_size  # one slice per core, no more than the workgroups
        want = min(dev.threads, int(np.prod(gs))) if all(isinstance(g, int) for g in gs) else dev.threads
        assert prg.slices([300] if prg.spec.variables else []) == want, kernel
        if MODE == "python":  # the Python rings call every slice through CPUProgram
            assert seen[kernel] == (want, set(range(want))), (kernel, seen)
    if opt is not None:
        opts = [o.op for p in split.values() for o in p.spec.applied_opts]
        assert opt in opts, (name, opts)
print("ok", len(cases))
"""


def _env() -> dict[str, str]:
    import os

    drop = ("DEV", "DEBUG", "BEAM", "CPU_THREADS", "HCQ_COMPILED")
    return {k: v for k, v in os.environ.items() if k not in drop}


@needs_mesa
@pytest.mark.skipif(host_cpu_count() < 2, reason="one core: nothing to split")
@pytest.mark.parametrize("mode", ["python", "native"])
def test_tensor_kernels_run_one_slice_per_core(mode: str) -> None:
    env = {**_env(), "DEV": "CPU:LVP", "HCQ_COMPILED": "0" if mode == "python" else "1"}
    done = subprocess.run(
        [sys.executable, "-c", f"MODE = {mode!r}\n" + TENSOR_SCRIPT],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok 4")
