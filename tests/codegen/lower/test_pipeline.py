"""The pipeline's behaviour beyond "the numbers come out right": stage list, caching, debug
views, explicit opts, index widths, loop placement, estimates, names, division magic."""

from __future__ import annotations

import random

import pytest
import targets as T
from fusegrad.codegen import to_program
from fusegrad.codegen.lower import STAGES, kernel_name
from fusegrad.codegen.lower.decompose import magic_divisor
from fusegrad.codegen.opt import Opt, OptOps
from fusegrad.uop import AxisType, Context, Ops, UOp, dtypes

CPU = T.RENDERERS["cpu"]


def _matmul(n: int = 4, k_: int = 6, m: int = 8, name: str | None = None) -> UOp:
    c, a, b = (
        T.buf(0, dtypes.float32, n * m),
        T.buf(1, dtypes.float32, n * k_),
        T.buf(2, dtypes.float32, k_ * m),
    )
    i, j, k = T.rng(n, 0), T.rng(m, 1), T.rng(k_, 2, AxisType.REDUCE)
    val = (a.index(i * k_ + k).load() * b.index(k * m + j).load()).reduce(k, arg=Ops.ADD)
    return T.kernel(c.index(i * m + j).store(val).end(i, j), name=name)


def test_stage_names_in_order() -> None:
    """The core stages in their order (other stages may sit between them), names unique."""
    names = [s.name for s in STAGES]
    core = [
        "collapse gathers", "number axes", "simplify ranges", "expand upcasts",
        "lower reduces", "add local buffers", "map hardware ids", "devectorize",
        "index validity", "lower index dtype", "emulate dtypes", "transcendentals",
        "decompose ops", "target rules", "control flow", "linearize", "if blocks",
    ]  # fmt: skip
    assert [n for n in names if n in core] == core
    assert len(set(names)) == len(names) and names[-2:] == ["linearize", "if blocks"]


def test_to_program_is_cached_by_ast_and_renderer() -> None:
    ast = _matmul()
    assert to_program(ast, CPU) is to_program(ast, CPU)
    assert to_program(ast, CPU) is not to_program(ast, T.RENDERERS["gpu"])


def test_debug_views(capsys: pytest.CaptureFixture[str]) -> None:
    ast = _matmul(3, 5, 7)
    with Context(DEBUG=7):
        spec = to_program(ast, T.RENDERERS["scalar"])
    out = capsys.readouterr().out
    assert "Ops.SINK" in out  # DEBUG>=5: the AST
    for stage in STAGES:
        assert f"lower: {stage.name}" in out  # DEBUG>=7: every stage by name
    assert f"{len(spec.uops) - 1:4d} END" in out  # DEBUG>=6: one line per linear uop


def test_explicit_opts_are_applied_recorded_and_keyed() -> None:
    ast = _matmul(name="given")
    opts = (Opt(OptOps.UPCAST, 1, 4),)
    spec = to_program(ast, CPU, opts=opts)
    assert spec.applied_opts == opts and spec.name == "given"
    loops = [u.src[0].arg for u in spec.uops if u.op is Ops.RANGE]
    assert loops == [4, 2, 6]  # j's 8 iterations: 2 x 4 lanes
    assert to_program(ast, CPU, opts=opts) is spec  # cached by (AST, renderer, opts)
    plain = to_program(ast, CPU, opts=())
    assert plain is not spec and plain.applied_opts == ()
    assert [u.src[0].arg for u in plain.uops if u.op is Ops.RANGE] == [4, 8, 6]


def test_names_from_shape() -> None:
    assert kernel_name(_matmul()) == "r_4_8_6"
    out, x = T.buf(0, dtypes.float32, 12), T.buf(1, dtypes.float32, 12)
    i = T.rng(12, 0)
    assert kernel_name(T.kernel(out.index(i).store(x.index(i).load()).end(i))) == "E_12"


def test_estimates_are_exact_and_symbolic() -> None:
    spec = to_program(_matmul(4, 6, 8), CPU)
    assert spec.estimates.ops == 4 * 8 * 6 * 2
    assert spec.estimates.lds == 4 * 8 * 6 * 2 * 4 + 4 * 8 * 4
    n = UOp.variable("n", 1, 100)
    out, x = T.buf(0, dtypes.float32, 100), T.buf(1, dtypes.float32, 100)
    i = T.rng(n, 0)
    spec = to_program(T.kernel(out.index(i).store(x.index(i).load() * 2.0).end(i)), CPU)
    assert spec.estimates.at({"n": 10}).ops == 10
    assert spec.estimates.at({"n": 10}).lds == 80
    assert [v.arg[0] for v in spec.variables] == ["n"]


def test_index_math_is_int64_only_when_needed() -> None:
    big = 3_000_000_000
    out = T.buf(0, dtypes.float32, 16)
    x = UOp.param(1, dtypes.float32.ptr(big))
    i = T.rng(16, 0)
    ast = T.kernel(out.index(i).store(x.index(i * 150_000_000).load()).end(i))
    uops = to_program(ast, CPU).uops
    idx = next(u for u in uops if u.op is Ops.INDEX and u.src[0].arg == 1)
    assert idx.src[1].dtype is dtypes.int64
    store_idx = next(u for u in uops if u.op is Ops.INDEX and u.src[0].arg == 0)
    assert store_idx.src[1].dtype is dtypes.int32


def test_loop_invariant_code_is_hoisted() -> None:
    """a[i, k] * c[i] inside the k loop: the load of c[i] sits outside the reduce loop."""
    out, a, c = (
        T.buf(0, dtypes.float32, 4),
        T.buf(1, dtypes.float32, 24),
        T.buf(2, dtypes.float32, 4),
    )
    i, k = T.rng(4, 0), T.rng(6, 1, AxisType.REDUCE)
    val = (a.index(i * 6 + k).load() * c.index(i).load()).reduce(k, arg=Ops.ADD)
    uops = list(to_program(T.kernel(out.index(i).store(val).end(i)), CPU).uops)
    pos = {u: n for n, u in enumerate(uops)}
    k_range = next(u for u in uops if u.op is Ops.RANGE and u.arg[1] is AxisType.REDUCE)
    c_load = next(u for u in uops if u.op is Ops.LOAD and u.src[0].src[0].arg == 2)
    k_end = next(u for u in uops if u.op is Ops.END and u.src[0] is k_range)
    assert pos[c_load] < pos[k_range] < pos[k_end]


def test_masked_store_is_gated() -> None:
    """A store alone under its mask is a gated store; with a load only it uses, both go
    under one IF on the mask (and lose the gate there)."""
    out, x = T.buf(0, dtypes.float32, 8), T.buf(1, dtypes.float32, 8)
    i = T.rng(8, 0)
    ast = T.kernel(out.index(i.valid(i < 5)).store(UOp.const(1.0, dtypes.float32)).end(i))
    uops = to_program(ast, CPU).uops
    store = next(u for u in uops if u.op is Ops.STORE)
    assert len(store.src[0].src) == 3 and store.src[0].src[2].dtype is dtypes.bool
    assert not any(u.op is Ops.IF for u in uops)
    ast = T.kernel(out.index(i.valid(i < 5)).store(x.index(i).load()).end(i))
    uops = to_program(ast, CPU).uops
    ops = [u.op for u in uops]
    store = next(u for u in uops if u.op is Ops.STORE)
    assert ops.index(Ops.IF) < ops.index(Ops.LOAD) < ops.index(Ops.STORE) < ops.index(Ops.ENDIF)
    assert len(store.src[0].src) == 2


@pytest.mark.parametrize("seed", range(5))
def test_magic_division_is_exact(seed: int) -> None:
    rs = random.Random(seed)
    for _ in range(200):
        d, vmax = rs.randint(2, 10_000), rs.randint(1, 2**31 - 1)
        m, s = magic_divisor(d, vmax)
        for x in (0, 1, d - 1, d, vmax, vmax - 1, rs.randint(0, vmax), (vmax // d) * d - 1):
            if 0 <= x <= vmax:
                assert (x * m) >> s == x // d, (x, d, vmax)


def test_estimates_of_a_grid_split_over_cores_count_each_workgroup_once() -> None:
    from fusegrad.codegen.lower.estimates import estimate

    out = UOp(Ops.PARAM, dtypes.float32.ptr(12), (), 0)
    g = UOp(Ops.SPECIAL, dtypes.int32, (UOp.const(12, dtypes.int32),), "gidx0")
    core = UOp(Ops.SPECIAL, dtypes.int32, (UOp.const(3, dtypes.int32),), "core")
    store = out.index(g).store(g.cast(dtypes.float32) + 1.0)
    split = estimate([out, g, core, store], ())
    plain = estimate([out, g, store], ())
    assert split.lds == plain.lds == 12 * 4  # the core slices share the 12 workgroups' stores
    thread = UOp(Ops.SPECIAL, dtypes.int32, (UOp.const(3, dtypes.int32),), "core")
    assert estimate([out, thread, out.index(thread).store(1.0)], ()).lds == 3 * 4  # THREAD
