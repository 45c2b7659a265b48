"""tinygrad.uop.ops names on fusegrad.uop.ops and the UOp methods tinygrad users call
(divide_exact, gcd, topovisit, key, ended_ranges, marg, tuplize, f, cconst, placeholder,
param_like, linspace, broadcast, allclose, __getitem__(idx))."""

from __future__ import annotations

import inspect
import math

import pytest
from fusegrad.uop import Ops, UOp, dtypes, graph_rewrite
from fusegrad.uop.ops import (
    broadcast_axes,
    consumer_map_from_toposort,
    exec_alu,
    get_location,
    identity_element,
    promo_dtype,
    python_alu,
    remove_all_tags,
    safe_exp2,
    safe_pow,
    to_function_name,
    to_max_shape,
)

X, Y = UOp.variable("x", 0, 9), UOp.variable("y", 1, 9)


def test_alu_helpers() -> None:
    assert identity_element(Ops.ADD, dtypes.int32) == 0
    assert identity_element(Ops.MUL, dtypes.float32) == 1.0
    assert identity_element(Ops.MAX, dtypes.int8) == -128
    assert identity_element(Ops.MAX, dtypes.float32) == -math.inf
    assert identity_element(Ops.MAX, dtypes.uint8.vec(4)) == 0
    with pytest.raises(ValueError, match="not a reduce op"):
        identity_element(Ops.SUB, dtypes.int32)
    assert python_alu[Ops.ADD](2, 3) == 5 and python_alu[Ops.CMPLT](1, 2) is True
    assert (
        safe_exp2(3.0) == 8.0 and safe_exp2(5000.0) == math.inf and math.isnan(safe_exp2(math.nan))
    )
    assert safe_pow(2, 10) == 1024 and safe_pow(2, -1) == 0 and math.isnan(safe_pow(-8.0, 0.5))
    assert exec_alu(Ops.ADD, dtypes.int8, [100, 100]) == -56
    assert exec_alu(Ops.ADD, dtypes.int8, [100, 100], truncate_output=False) == 200
    assert exec_alu(Ops.MUL, dtypes.uint8, [16, 17], False) == 272
    with pytest.raises(NotImplementedError):
        exec_alu(Ops.CAST, dtypes.int8, [300], truncate_output=False)
    assert "truncate_output" in inspect.signature(exec_alu).parameters


def test_graph_helpers() -> None:
    assert (
        promo_dtype((UOp.const(1, dtypes.int8), UOp.const(1.0, dtypes.float16))) is dtypes.float16
    )
    assert promo_dtype(
        (UOp.const(1, dtypes.int32), UOp.const((1, 2), dtypes.int32))
    ) == dtypes.int32.vec(2)
    assert broadcast_axes((3, 1), (2, 3, 4)) == (0, 2)
    assert broadcast_axes((2, 3, 4), (2, 3, 4)) == ()
    with pytest.raises(ValueError, match="more dims"):
        broadcast_axes((1, 1, 1), (2, 2))
    n = UOp.variable("n", 1, 16)
    assert to_max_shape((n, 3)) == (16, 3)
    assert to_function_name("r_4\x1b[31m-x") == "r_42Dx"
    assert get_location() == (__file__, inspect.currentframe().f_lineno)  # type: ignore[union-attr]
    tagged = (X + 1).replace(tag="t")
    clean = graph_rewrite((tagged * 2).replace(tag="u"), remove_all_tags)
    assert all(u.tag is None for u in clean.toposort()) and clean is (X + 1) * 2
    users = consumer_map_from_toposort((X * 2 + X).toposort())
    assert list(users[X]) == [X * 2, X * 2 + X] and users[X * 2 + X] == {}


def test_divide_exact_and_gcd() -> None:
    assert (X * Y + Y * 3).divide_exact(Y) is X + 3
    assert (X * 6 + 12).divide_exact(UOp.const(3, dtypes.weakint)) is X * 2 + 4
    assert (X * 2).divide_exact(Y) is None and (X + Y).divide_exact(Y) is None
    assert Y.divide_exact(Y) is Y.const_like(1)
    assert UOp.gcd(X * Y * 4, Y * 6) is Y * 2
    assert UOp.gcd(X * 3, Y * 6) is X.const_like(3)
    assert UOp.gcd(X * Y, X * Y * 5) is X * Y
    with pytest.raises(ValueError, match="at least one"):
        UOp.gcd()


def test_walks_keys_and_structure() -> None:
    expr = X + Y * 2
    seen: dict[UOp, str] = {}
    assert expr.topovisit(lambda u: u.op.name, seen) == "ADD" and set(seen) == set(expr.toposort())
    calls: list[UOp] = []
    expr.topovisit(lambda u: calls.append(u) or "", seen)
    assert calls == []  # everything cached already
    assert isinstance(expr.key, bytes) and len(expr.key) == 32
    assert expr.key == (UOp.variable("x", 0, 9) + Y * 2).key and expr.key != (X + Y * 3).key
    assert (X + 1).tuplize < (X + 2).tuplize or (X + 2).tuplize < (X + 1).tuplize
    r = UOp.range(4, 0)
    red = UOp.const(1.0, dtypes.float32).reduce(r, arg=Ops.ADD)
    assert red.ended_ranges == (r,) and X.ended_ranges == ()
    view = UOp.new_buffer("CPU", 6, dtypes.float32).reshape(2, 3)
    assert view.marg == (2, 3) and view.permute(1, 0).marg == (1, 0)
    with pytest.raises(ValueError, match="not a movement op"):
        _ = X.marg
    assert X.f(Ops.NEG) is UOp(Ops.NEG, X.dtype, (X,))
    assert X.f(Ops.CAST, dtype=dtypes.int32).dtype is dtypes.int32
    assert UOp.cconst(3, dtypes.int8) is UOp.const(3, dtypes.int8)


def test_params_and_placeholders() -> None:
    p = UOp.placeholder((2, 3), dtypes.float32, 1)
    assert p is UOp.param(1, dtypes.float32, (2, 3))
    view = UOp.new_buffer("CPU", 6, dtypes.float32).reshape(2, 3)
    assert view.placeholder_like(1) is p
    assert view.param_like(4) is UOp.param(4, dtypes.float32, (2, 3))
    assert X.param_like(0) is UOp.param(0, X.dtype, vmin_vmax=(0, 9), name="x")
    assert X.bind(3).param_like(0) is X.param_like(0)


def test_getitem_takes_idx_and_broadcast_vectorizes() -> None:
    assert list(inspect.signature(UOp.__getitem__).parameters) == ["self", "idx"]
    v = UOp.new_buffer("CPU", 6, dtypes.float32).reshape(2, 3)
    assert v[1].shape == (3,) and v[idx_of(1)].shape == (3,)
    f = UOp.variable("f", 0, 1, dtypes.float32)
    assert f.broadcast(1) is f
    assert f.broadcast(4) is UOp(Ops.VECTORIZE, dtypes.float32.vec(4), (f,) * 4)
    with pytest.raises(ValueError, match="already a vector"):
        f.broadcast(4).broadcast(2)


def idx_of(i: int) -> int:
    return i


def test_pm_unbind_collects_bound_values() -> None:
    from fusegrad.uop.ops import do_unbind, pm_unbind

    values: dict[UOp, int] = {}
    out = graph_rewrite(X.bind(3) + Y.bind(2) * 2, pm_unbind, ctx=values)
    assert out is X + Y * 2 and values == {X: 3, Y: 2}
    assert do_unbind({}, X + 1) is None


def test_spec_tensor_accepts_custom_gradient_nodes() -> None:
    from fusegrad.uop.spec import spec_tensor, type_verify

    buf = UOp.new_buffer("CPU", 3, dtypes.float32)
    other = UOp.new_buffer("CPU", 3, dtypes.float32)
    plain = UOp(Ops.CONTIGUOUS_BACKWARD, buf.dtype, (buf * 2.0,))
    type_verify(plain.toposort(), extra_specs=(spec_tensor,))
    custom = UOp(Ops.CONTIGUOUS_BACKWARD, buf.dtype, (buf * 2.0, buf, other), arg=lambda g: g)
    type_verify(custom.toposort(), extra_specs=(spec_tensor,))
    no_rule = UOp(Ops.CONTIGUOUS_BACKWARD, buf.dtype, (buf * 2.0, buf))
    with pytest.raises(RuntimeError, match="not legal"):
        type_verify(no_rule.toposort(), extra_specs=(spec_tensor,))


def test_dtypes_are_interned_by_their_metaclass() -> None:
    import dataclasses
    import pickle

    from fusegrad.uop.dtype import DType, DTypeMetaClass, PtrDType

    f32 = dtypes.float32
    assert type(DType) is DTypeMetaClass
    same = DType(f32.priority, f32.bitsize, f32.name, f32.fmt)
    assert (
        same is f32
        and DType(**{f.name: getattr(f32, f.name) for f in dataclasses.fields(f32)}) is f32
    )
    assert dataclasses.replace(dtypes.int8) is dtypes.int8
    assert dataclasses.replace(dtypes.int8, name="other") is not dtypes.int8
    assert dataclasses.replace(dtypes.int8, name="other") is dataclasses.replace(
        dtypes.int8, name="other"
    )
    p = f32.ptr(8)
    assert PtrDType(*(getattr(p, f.name) for f in dataclasses.fields(p))) is p
    assert pickle.loads(pickle.dumps(p)) is p and pickle.loads(pickle.dumps(f32.vec(4))) is f32.vec(
        4
    )
