"""Every buffer slot and Variable of a kernel AST stays a parameter of its program, also when
the lowering folds away every use of it: the CPU calling convention passes buffers, then
Variables, by position, so a dropped one would shift the ones after it (a silent wrong
result before this was enforced)."""

from __future__ import annotations

import numpy as np
from fusegrad.codegen.lower import to_program
from fusegrad.codegen.spec import KernelInfo
from fusegrad.uop import Ops, UOp, dtypes


def _ast() -> UOp:
    """out[i] = a[i]*0 + b[i] + v_dead*0 + v_live for int32 buffers a (slot 1), b (slot 2)."""
    r = UOp.range(4, 0)
    ptr = dtypes.int32.ptr(4)
    out, a, b = (UOp.param(i, ptr) for i in range(3))
    dead = UOp.variable("a_dead", 1, 9).cast(dtypes.int32)
    live = UOp.variable("b_live", 1, 9).cast(dtypes.int32)
    value = a.index(r).load() * 0 + b.index(r).load() + dead * 0 + live
    return UOp.sink(out.index(r).store(value).end(r), arg=KernelInfo(name="params_kept"))


def test_dead_buffer_and_variable_stay_parameters() -> None:
    from fusegrad.renderer.llvm import LLVMRenderer

    spec = to_program(_ast(), LLVMRenderer())
    params = [u for u in spec.uops if u.op is Ops.PARAM]
    assert [u.arg for u in params if isinstance(u.arg, int)] == [0, 1, 2]
    assert [u.arg[0] for u in params if not isinstance(u.arg, int)] == ["a_dead", "b_live"]
    assert [u.op for u in spec.uops[: len(params)]] == [Ops.PARAM] * len(params)
    assert [v.arg[0] for v in spec.variables] == ["a_dead", "b_live"]


def test_folded_loads_do_not_shift_later_buffers() -> None:
    from fusegrad import Tensor

    a, b, c = (Tensor(np.arange(4, dtype=np.int32) + k).realize() for k in (0, 10, 100))
    assert (a * 0 + b * 0 + c).tolist() == [100, 101, 102, 103]
    assert (a * 0 + c - b * 0 + b).tolist() == [110, 112, 114, 116]
