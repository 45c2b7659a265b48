"""The op mixin works from uop-core alone: no NumPy, no frontend (a child process whose
import path has only ``packages/uop-core/src`` and where importing NumPy fails)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

UOP_CORE = Path(__file__).resolve().parents[2] / "packages" / "uop-core" / "src"

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["numpy"] = None  # any import of numpy fails
    from fusegrad.uop import UOp, Ops, dtypes
    from fusegrad.uop.mixin import OpMixin
    import fusegrad.uop.mixin.indexing, fusegrad.uop.mixin.random

    x = UOp.new_buffer("CPU", 24, dtypes.float32).reshape(2, 3, 4)
    idx = UOp.new_buffer("CPU", 2, dtypes.int32)
    assert x[1, ::-1, None, 1:3].shape == (3, 1, 2)
    assert x[:, idx].shape == (2, 2, 4) and x[[1, 0], 2].shape == (2, 4)
    assert x[[[True, False, True], [False, False, True]]].shape == (3, 4)
    assert x.gather(2, x.cast(dtypes.int32)).shape == (2, 3, 4)
    assert x.scatter_reduce(0, x.cast(dtypes.int32)[:1], 1.0, "amax").shape == (2, 3, 4)
    assert idx.one_hot(5).shape == (2, 5)
    assert x.masked_select(x > 0, size=7).shape == (7,)
    assert x.nonzero(size=4).shape == (4, 3)
    assert x.interpolate((5, 6)).shape == (2, 5, 6)
    q, r = x[0, :, :3].qr()
    assert (q.shape, r.shape) == ((3, 3), (3, 3))
    assert x[0].cross_entropy(idx.pad(((0, 1),))).shape == ()
    UOp.manual_seed(3)
    a = UOp.rand(3, 4, device="CPU")
    UOp.manual_seed(3)
    assert UOp.rand(3, 4, device="CPU") is a
    assert any(u.op is Ops.THREEFRY for u in a.toposort())
    assert UOp.randn(5, device="CPU").shape == (5,)
    assert UOp.randperm(6, device="CPU").dtype == dtypes.int32
    assert UOp.kaiming_uniform(4, 3, device="CPU").shape == (4, 3)
    try:
        x.nonzero()
    except ValueError as e:
        assert "size=" in str(e)
    else:
        raise AssertionError("nonzero without size on a UOp must raise")
    try:
        UOp.rand(2)
    except ValueError as e:
        assert "default device" in str(e)
    else:
        raise AssertionError("no default device in uop-core alone")
    print("ok")
    """
)


def test_indexing_and_random_build_graphs_from_uop_core_alone() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-S",
            "-I",
            "-c",
            f"import sys; sys.path[:0] = [{str(UOP_CORE)!r}]\n" + SCRIPT,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
