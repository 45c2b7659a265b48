"""Python operators on UOps: the ALU node each builds and its dtype (promotion with weak
literals), including the fast path for operands that need no promotion."""

from __future__ import annotations

import math

import pytest
from fusegrad.uop import DType, Invalid, Ops, UOp, dtypes, promoted_dtype, sym_infer
from hypothesis import given, settings
from hypothesis import strategies as st

x = UOp.variable("x", 0, 10)  # weakint
i32 = UOp.variable("i32", -5, 5, dtypes.int32)
f32 = UOp.variable("f32", -1.0, 1.0, dtypes.float32)
f16 = UOp.variable("f16", -1.0, 1.0, dtypes.float16)
u8 = UOp.variable("u8", 0, 255, dtypes.uint8)
flag = UOp.variable("flag", False, True, dtypes.bool)


def c(dt: DType, v: object) -> UOp:
    return UOp.const(v, dt)


@pytest.mark.parametrize(
    ("build", "op", "srcs"),
    [
        (lambda: x + 1, Ops.ADD, (x, c(dtypes.weakint, 1))),
        (lambda: 1 + x, Ops.ADD, (c(dtypes.weakint, 1), x)),
        (lambda: x - 1, Ops.SUB, (x, c(dtypes.weakint, 1))),
        (lambda: 1 - x, Ops.SUB, (c(dtypes.weakint, 1), x)),
        (lambda: x * 2, Ops.MUL, (x, c(dtypes.weakint, 2))),
        (lambda: 2 * x, Ops.MUL, (c(dtypes.weakint, 2), x)),
        (lambda: x // 3, Ops.FLOORDIV, (x, c(dtypes.weakint, 3))),
        (lambda: 3 // x, Ops.FLOORDIV, (c(dtypes.weakint, 3), x)),
        (lambda: x % 3, Ops.FLOORMOD, (x, c(dtypes.weakint, 3))),
        (lambda: 3 % x, Ops.FLOORMOD, (c(dtypes.weakint, 3), x)),
        (lambda: x.cdiv(3), Ops.CDIV, (x, c(dtypes.weakint, 3))),
        (lambda: x.cmod(3), Ops.CMOD, (x, c(dtypes.weakint, 3))),
        (lambda: x & 3, Ops.AND, (x, c(dtypes.weakint, 3))),
        (lambda: 3 & x, Ops.AND, (c(dtypes.weakint, 3), x)),
        (lambda: x | 3, Ops.OR, (x, c(dtypes.weakint, 3))),
        (lambda: 3 | x, Ops.OR, (c(dtypes.weakint, 3), x)),
        (lambda: x ^ 3, Ops.XOR, (x, c(dtypes.weakint, 3))),
        (lambda: 3 ^ x, Ops.XOR, (c(dtypes.weakint, 3), x)),
        (lambda: x << 2, Ops.SHL, (x, c(dtypes.weakint, 2))),
        (lambda: 2 << x, Ops.SHL, (c(dtypes.weakint, 2), x)),
        (lambda: x >> 2, Ops.SHR, (x, c(dtypes.weakint, 2))),
        (lambda: 2 >> x, Ops.SHR, (c(dtypes.weakint, 2), x)),
        (lambda: x**2, Ops.POW, (x, c(dtypes.weakint, 2))),
        (lambda: 2**x, Ops.POW, (c(dtypes.weakint, 2), x)),
        (lambda: x.maximum(4), Ops.MAX, (x, c(dtypes.weakint, 4))),
        (lambda: -x, Ops.NEG, (x,)),
        (lambda: ~x, Ops.XOR, (x, c(dtypes.weakint, -1))),
        (lambda: ~u8, Ops.XOR, (u8, c(dtypes.uint8, 255))),
        (lambda: x.mulacc(2, 3), Ops.MULACC, (x, c(dtypes.weakint, 2), c(dtypes.weakint, 3))),
    ],
)
def test_operator_builds_the_alu_node(build, op: Ops, srcs: tuple[UOp, ...]) -> None:  # type: ignore[no-untyped-def]
    node = build()
    assert node.op is op
    assert node.src == srcs
    assert node.dtype is srcs[0].dtype


@pytest.mark.parametrize(
    ("build", "op", "srcs"),
    [
        (lambda: x < 3, Ops.CMPLT, (x, c(dtypes.weakint, 3))),
        (lambda: x > 3, Ops.CMPLT, (c(dtypes.weakint, 3), x)),
        (lambda: x.eq(3), Ops.CMPEQ, (x, c(dtypes.weakint, 3))),
        (lambda: x.ne(3), Ops.CMPNE, (x, c(dtypes.weakint, 3))),
        (flag.logical_not, Ops.CMPNE, (flag, c(dtypes.bool, True))),
        (lambda: -flag, Ops.CMPNE, (flag, c(dtypes.bool, True))),
        (lambda: ~flag, Ops.CMPNE, (flag, c(dtypes.bool, True))),
    ],
)
def test_comparisons_are_bool(build, op: Ops, srcs: tuple[UOp, ...]) -> None:  # type: ignore[no-untyped-def]
    node = build()
    assert (node.op, node.src, node.dtype) == (op, srcs, dtypes.bool)


def test_le_ge_on_ints_negate_a_less_than() -> None:
    assert (x <= 3) is (c(dtypes.weakint, 3) < x).logical_not()
    assert (x >= 3) is (x < 3).logical_not()


def test_le_on_floats_keeps_nan_false() -> None:
    # not (y < x) would be True for NaN; (x < y) | (x == y) is False
    le = f32 <= 0.5
    assert le.op is Ops.OR
    nan = float("nan")
    assert sym_infer(le, {"f32": nan}) is False
    assert sym_infer(f32 >= 0.5, {"f32": nan}) is False
    assert sym_infer(le, {"f32": 0.5}) is True


def test_eq_is_identity_and_hash_is_usable() -> None:
    same = x
    assert (x == same) is True
    assert (x == x + 0) is False
    assert x != x + 0


@pytest.mark.parametrize(
    ("a", "b", "dtype"),
    [
        (i32, 1, dtypes.int32),
        (i32, 1.5, dtypes.float32),  # int tensor * Python float: the default float
        (x, 1.5, dtypes.weakfloat),  # index math stays weak
        (f16, 2, dtypes.float16),
        (f16, 2.5, dtypes.float16),
        (u8, -1, dtypes.uint8),  # a literal takes the operand's dtype (and wraps)
        (flag, 1, dtypes.weakint),
        (flag, True, dtypes.bool),
        (i32, f16, dtypes.float16),
        (u8, i32, dtypes.int32),
        (f16, UOp.variable("bf", 0.0, 1.0, dtypes.bfloat16), dtypes.float32),
        (
            UOp.variable("a64", 0, 1, dtypes.int64),
            UOp.variable("b64", 0, 1, dtypes.uint64),
            dtypes.float32,
        ),
    ],
)
def test_promotion_of_operands(a: UOp, b: object, dtype: DType) -> None:
    node = a + b
    assert node.dtype is dtype
    assert all(s.dtype is dtype for s in node.src)


def test_literal_is_converted_to_the_operand_dtype() -> None:
    assert (u8 + -1).src[1] is c(dtypes.uint8, 255)
    assert (f16 * 0.1).src[1].arg == 0.0999755859375


def test_vector_operands_broadcast_scalars() -> None:
    v = f32.cast(dtypes.float32.vec(4))
    s = v * 2
    assert s.dtype is dtypes.float32.vec(4) and s.src[1].dtype is dtypes.float32.vec(4)
    w = v + f32
    assert w.src[1].op is Ops.CAST or w.src[1].op is Ops.VECTORIZE
    assert w.dtype is dtypes.float32.vec(4)
    assert (v < 1.0).dtype is dtypes.bool.vec(4)
    with pytest.raises(ValueError, match="vectors of 2 and 4"):
        v + f32.cast(dtypes.float32.vec(2))


def test_true_division_computes_in_a_float() -> None:
    assert (i32 / 2).dtype is dtypes.float32
    assert (i32 / 2).src[0] is i32.cast(dtypes.float32)
    assert (x / 2).dtype is dtypes.weakfloat
    assert (2 / i32).dtype is dtypes.float32
    assert (f16 / 2).dtype is dtypes.float16
    # regression: a vector operand was cast to the scalar float dtype
    v = i32.cast(dtypes.int32.vec(4))
    assert (v / 2).dtype is dtypes.float32.vec(4)


def test_shifts_keep_the_left_dtype() -> None:
    s = u8 << i32
    assert s.dtype is dtypes.uint8 and s.src[1] is i32.cast(dtypes.uint8)


def test_where_promotes_the_branches() -> None:
    w = (x < 3).where(i32, 1.5)
    assert w.op is Ops.WHERE and w.dtype is dtypes.float32
    assert w.src[1] is i32.cast(dtypes.float32)
    assert flag.where(1, 2).dtype is dtypes.weakint


def test_unary_float_ops_cast_ints_to_a_float() -> None:
    for node in (i32.exp2(), i32.log2(), i32.sin(), i32.sqrt(), i32.reciprocal()):
        assert node.dtype is dtypes.float32 and node.src[0] is i32.cast(dtypes.float32)
    assert x.sqrt().dtype is dtypes.weakfloat
    assert f16.sqrt().src[0] is f16
    assert f32.trunc().op is Ops.TRUNC


def test_invalid_operand() -> None:
    node = x + Invalid
    assert node.src[1].arg is Invalid and node.dtype is dtypes.weakint


def test_no_promotion_for_pointers_or_void() -> None:
    p = UOp.param(0, dtypes.float32.ptr())
    with pytest.raises(TypeError, match="no promotion"):
        p + p
    with pytest.raises(TypeError, match="no promotion"):
        p + 1
    with pytest.raises(TypeError, match="can't use a str in UOp arithmetic"):
        x + "1"  # type: ignore[operator]


# -- minimum ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dt", "a", "b"),
    [
        (dtypes.uint8, 0, 5),  # regression: -max(-0, -5) = -251 = 5 in uint8
        (dtypes.uint8, 255, 3),
        (dtypes.int8, -128, 5),  # regression: -(-128) wraps to -128
        (dtypes.int8, 127, -128),
        (dtypes.int32, -7, 3),
        (dtypes.weakint, -(2**70), 3),
        (dtypes.bool, False, True),
        (dtypes.float32, -0.5, 2.0),
    ],
)
def test_minimum_is_exact_at_the_edges_of_every_dtype(dt: DType, a: object, b: object) -> None:
    va, vb = UOp.variable("ma", dt.min, dt.max, dt), UOp.variable("mb", dt.min, dt.max, dt)
    got = sym_infer(va.minimum(vb), {"ma": a, "mb": b})
    assert got == min(a, b)  # type: ignore[type-var]
    assert sym_infer(va.maximum(vb), {"ma": a, "mb": b}) == max(a, b)  # type: ignore[type-var]


def test_minimum_propagates_nan() -> None:
    got = sym_infer(f32.minimum(1.0), {"f32": float("nan")})
    assert math.isnan(got)


# -- the fast path agrees with the promotion rules ----------------------------------------------------------

OPERAND_DTYPES = [
    dtypes.bool,
    dtypes.int8,
    dtypes.uint8,
    dtypes.int32,
    dtypes.uint64,
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.weakint,
    dtypes.weakfloat,
]
BINARY = [Ops.ADD, Ops.MUL, Ops.SUB, Ops.MAX, Ops.CMPLT, Ops.CMPNE, Ops.FLOORDIV, Ops.XOR]


@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(
    st.sampled_from(OPERAND_DTYPES),
    st.sampled_from(BINARY),
    st.one_of(
        st.booleans(), st.integers(-300, 300), st.floats(-1e3, 1e3), st.sampled_from(OPERAND_DTYPES)
    ),
)
def test_alu_result_dtype_is_the_promotion(dt: DType, op: Ops, other: object) -> None:
    a = UOp.variable("pa", 0, 1, dt)
    b = UOp.variable("pb", 0, 1, other) if isinstance(other, DType) else other
    node = a.alu(op, b)  # type: ignore[arg-type]
    other_dt = other if isinstance(other, DType) else dtypes.weak_from_py(other)
    common = promoted_dtype(dt, other_dt)
    assert node.src[0].dtype is common and node.src[1].dtype is common
    assert node.dtype is (dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE) else common)
    if not isinstance(other, DType):  # a literal became a constant of the common dtype
        assert node.src[1].op is Ops.CONST
        assert node.src[1].arg == dtypes.as_const(other, common)
