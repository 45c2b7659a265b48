"""UPat carries the op mixin (as tinygrad's does): the methods build patterns, and a pattern
built with a method matches the UOp the same method builds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fusegrad.uop import Ops, PatternMatcher, UOp, UPat, dtypes
from fusegrad.uop.mixin import OpMixin

F = UOp.variable("f", 0, 1, dtypes.float32)
BUF = UOp.new_buffer("CPU", 6, dtypes.float32)

Build = Callable[[Any], Any]

CASES: list[tuple[str, Build, Any]] = [
    ("exp2", lambda x: x.exp2(), F),
    ("log2", lambda x: x.log2(), F),
    ("sqrt", lambda x: x.sqrt(), F),
    ("rsqrt", lambda x: x.rsqrt(), F),
    ("sin", lambda x: x.sin(), F),
    ("reciprocal", lambda x: x.reciprocal(), F),
    ("trunc", lambda x: x.trunc(), F),
    ("add_const", lambda x: x + 1, F),
    ("radd_const", lambda x: 2 + x, F),
    ("sub", lambda x: x.sub(3), F),
    ("mul_add", lambda x: x * 2 + x, F),
    ("lt", lambda x: x < 5, F),
    ("maximum", lambda x: x.maximum(0), F),
    ("float", lambda x: x.float(), F.cast(dtypes.int32)),
    ("cast", lambda x: x.cast(dtypes.float16), F),
    ("where", lambda x: (x < 1).where(x, 0), F),
    ("reshape", lambda x: x.reshape(2, 3), BUF),
    ("permute", lambda x: x.reshape(2, 3).permute(1, 0), BUF),
    ("expand", lambda x: x.reshape(2, 1, 3).expand(2, 4, 3), BUF),
    ("shrink", lambda x: x.reshape(2, 3).shrink(((0, 1), (1, 3))), BUF),
    ("pad", lambda x: x.reshape(2, 3).pad(((0, 1), (2, 0))), BUF),
]


@pytest.mark.parametrize(("name", "build", "value"), CASES, ids=[c[0] for c in CASES])
def test_a_pattern_built_by_a_method_matches_what_the_method_builds(
    name: str, build: Build, value: UOp
) -> None:
    pat = build(UPat.var("x"))
    assert isinstance(pat, UPat)
    node = build(value)
    stores = pat.match(node, {})
    assert stores and stores[0]["x"] is value
    pm = PatternMatcher([(pat, lambda x: x)])
    assert pm.rewrite(node) is value
    assert pat.match(value, {}) == []  # the pattern is that graph, not any node


IX, IY = UOp.variable("ix", 0, 9), UOp.variable("iy", 1, 9)
INT_CASES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("minimum", lambda a, b: a.minimum(b)),
    ("bitwise_and", lambda a, b: a.bitwise_and(b)),
    ("bitwise_or", lambda a, b: a.bitwise_or(b)),
    ("bitwise_xor", lambda a, b: a.bitwise_xor(b)),
    ("lshift", lambda a, b: a.lshift(b)),
    ("rshift", lambda a, b: a.rshift(b)),
    ("idiv", lambda a, b: a.idiv(b)),
    ("mod", lambda a, b: a.mod(b)),
    ("le", lambda a, b: a <= b),
    ("ge", lambda a, b: a >= b),
    ("pow", lambda a, b: a**b),
    ("rsub", lambda a, b: 1 - a + b),
    ("rfloordiv", lambda a, b: 7 // a),
    ("rmod", lambda a, b: 7 % a),
    ("rpow", lambda a, b: 2**a),
]


@pytest.mark.parametrize(("name", "build"), INT_CASES, ids=[c[0] for c in INT_CASES])
def test_int_and_comparison_patterns_match_the_ir_the_methods_build(
    name: str, build: Callable[[Any, Any], Any]
) -> None:
    pat = build(UPat.var("x"), UPat.var("y"))
    stores = pat.match(build(IX, IY), {})
    assert stores and stores[0]["x"] is IX
    assert pat.match(IX + IY, {}) == []


def test_upat_has_the_whole_mixin() -> None:
    missing = [n for n in dir(OpMixin) if not n.startswith("_") and not hasattr(UPat, n)]
    assert missing == []
    assert isinstance(UPat.var("x"), OpMixin)


def test_methods_that_need_a_shape_or_dtype_raise_clearly_on_a_pattern() -> None:
    x = UPat.var("x")
    with pytest.raises(TypeError, match=r"UPat\.abs needs a shape, device or dtype"):
        x.abs()
    with pytest.raises(TypeError, match=r"UPat\.sum needs"):
        x.sum()
    with pytest.raises(TypeError, match=r"UPat\.T needs"):
        _ = x.T
    with pytest.raises(TypeError, match=r"UPat\.rand creates a tensor value"):
        UPat.rand(3)
    with pytest.raises(TypeError, match=r"UPat\.__getitem__ needs"):
        x[0]
    with pytest.raises(TypeError, match="pads with zeros"):
        x.pad((1, 1))
    with pytest.raises(TypeError, match="has no shape"):
        _ = x.shape


def test_pattern_identity_semantics_survive_the_mixin() -> None:
    a, b = UPat.var("a"), UPat.var("a")
    assert (a != b) is True and (a == b) is False  # identity, not elementwise ==/!=
    assert len({a, b}) == 2 and a in [a]
    assert UPat.var("x").var is UPat.var  # tinygrad's constructors, not variance/any reduce
    assert UPat.any(UPat(Ops.ADD), UPat(Ops.MUL)).op == frozenset({Ops.ADD, Ops.MUL})


def test_ir_builders_and_helpers_of_upat() -> None:
    buf = UOp.new_buffer("CPU", 4, dtypes.float32)
    v = UOp.variable("i", 0, 3)
    x = UPat.var("x")
    assert x.or_casted("y").match(F.cast(dtypes.int32), {})[0]["y"] is F.cast(dtypes.int32)
    assert x.or_casted().match(F, {})[0]["x"] is F
    assert x.or_after().is_any and not x.is_any
    idx = buf.index(v)
    assert UPat.var("b").index(UPat.var("i")).match(idx, {})[0]["i"] is v
    assert UPat.var("b").index(UPat.var("i")).load().match(idx.load(), {})
    assert UPat.var("b").index(UPat.var("i")).store(x).match(idx.store(F), {})[0]["x"] is F
    assert x.broadcast().match(F.broadcast(4), {})[0]["x"] is F
    assert x.f(Ops.SQRT).match(F.sqrt(), {})
    assert x.contiguous().match(UOp(Ops.CONTIGUOUS, F.dtype, (F,)), {})
    assert UPat.var("x", dtypes.float32).match_dtype(F) and not UPat.var(
        "x", dtypes.int32
    ).match_dtype(F)
    assert x.match_tag(F) and not UPat(tag="t").match_tag(F)
    with pytest.raises(TypeError, match=r"UPat\.item reads values"):
        x.item()
    with pytest.raises(TypeError, match=r"UPat\.zeros creates"):
        UPat.zeros(3)
    assert F.usum(F, 1) is F + F + 1 and F.uprod(F) is F * F
