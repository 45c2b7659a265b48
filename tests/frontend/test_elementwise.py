"""Elementwise math, activations, binary ops, comparisons and bitwise ops vs NumPy/PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from fusegrad.uop import Ops
from reference import assert_close, rand_np

torch = pytest.importorskip("torch")

SHAPES = [(), (0,), (5,), (2, 3), (2, 0, 3)]

# name -> (input range, atol) for float32; the torch function has the same name
UNARY = {
    "neg": ((-3, 3), 0), "reciprocal": ((0.5, 3), 1e-6), "trunc": ((-3, 3), 0), "sqrt": ((0, 9), 1e-6),
    "rsqrt": ((0.1, 9), 1e-5), "sin": ((-6, 6), 1e-5), "cos": ((-6, 6), 1e-5), "tan": ((-1.4, 1.4), 1e-4),
    "asin": ((-1, 1), 1e-5), "acos": ((-1, 1), 1e-5), "atan": ((-5, 5), 1e-5), "sinh": ((-3, 3), 1e-4),
    "cosh": ((-3, 3), 1e-4), "atanh": ((-0.9, 0.9), 1e-5), "asinh": ((-5, 5), 1e-5), "acosh": ((1, 5), 1e-5),
    "exp": ((-5, 5), 1e-4), "exp2": ((-5, 5), 1e-4), "log": ((0.01, 5), 1e-5), "log2": ((0.01, 5), 1e-5),
    "log10": ((0.01, 5), 1e-5), "square": ((-3, 3), 1e-5), "abs": ((-3, 3), 0), "sign": ((-3, 3), 0),
    "ceil": ((-3, 3), 0), "floor": ((-3, 3), 0), "round": ((-3, 3), 0), "erf": ((-3, 3), 1e-6),
    "relu": ((-3, 3), 0), "relu6": ((-3, 9), 0), "sigmoid": ((-8, 8), 1e-6), "hardsigmoid": ((-5, 5), 1e-6),
    "hardswish": ((-5, 5), 1e-6), "hardtanh": ((-3, 3), 0), "tanh": ((-5, 5), 1e-6),
    "silu": ((-5, 5), 1e-5), "elu": ((-3, 3), 1e-6), "celu": ((-3, 3), 1e-6), "selu": ((-3, 3), 1e-5),
    "softplus": ((-30, 30), 1e-5), "mish": ((-5, 5), 1e-5), "logsigmoid": ((-30, 30), 1e-5),
    "softsign": ((-5, 5), 1e-6),
}  # fmt: skip
TORCH_NAME = {"logsigmoid": "nn.functional.logsigmoid", "softsign": "nn.functional.softsign",
              "hardsigmoid": "nn.functional.hardsigmoid", "hardswish": "nn.functional.hardswish",
              "hardtanh": "nn.functional.hardtanh", "relu6": "nn.functional.relu6", "elu": "nn.functional.elu",
              "celu": "nn.functional.celu", "selu": "nn.functional.selu", "softplus": "nn.functional.softplus",
              "mish": "nn.functional.mish", "silu": "nn.functional.silu"}  # fmt: skip


def torch_fn(name: str):  # type: ignore[no-untyped-def]
    obj = torch
    for part in TORCH_NAME.get(name, name).split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3)])
def test_unary_float32_matches_torch(name: str, shape: tuple[int, ...]) -> None:
    (lo, hi), atol = UNARY[name]
    x = rand_np(shape, np.float32, lo, hi)
    if name == "round":
        x = np.round(x * 2) / 2  # exercise the halfway cases
    got = getattr(Tensor(x), name)()
    want = torch_fn(name)(torch.tensor(x))
    assert_close(got, want, atol=atol + 1e-7, rtol=1e-5)


@pytest.mark.parametrize("name", ["sqrt", "exp", "sin", "relu", "sigmoid", "abs", "neg", "floor"])
def test_unary_float16_keeps_dtype(name: str) -> None:
    x = rand_np((9,), np.float16, 0.1, 3)
    got = getattr(Tensor(x), name)()
    assert got.dtype is dtypes.float16
    assert_close(got, torch_fn(name)(torch.tensor(x)), atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("name", ["sqrt", "exp", "sin", "log", "sigmoid", "reciprocal"])
def test_unary_int_input_gives_default_float(name: str) -> None:
    x = rand_np((6,), np.int32, 1, 5)
    got = getattr(Tensor(x), name)()
    assert got.dtype is dtypes.float32
    assert_close(got, torch_fn(name)(torch.tensor(x)), atol=1e-5)


def test_unary_special_values_match_torch() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -2.5, 2.5], dtype=np.float32)
    for name in [
        "sqrt",
        "exp",
        "log",
        "abs",
        "sign",
        "floor",
        "ceil",
        "trunc",
        "relu",
        "sigmoid",
        "tanh",
        "round",
    ]:
        assert_close(getattr(Tensor(x), name)(), torch_fn(name)(torch.tensor(x)), atol=1e-6)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "logical_not"])
def test_predicates(name: str) -> None:
    x = np.array([0.0, 1.0, np.inf, -np.inf, np.nan], dtype=np.float32)
    assert_close(getattr(Tensor(x), name)(), getattr(torch, name)(torch.tensor(x)))
    xi = np.array([0, 3, -1], dtype=np.int32)
    assert_close(getattr(Tensor(xi), name)(), getattr(torch, name)(torch.tensor(xi)))


def test_activations_with_parameters() -> None:
    x = rand_np((4, 5), np.float32, -4, 4)
    tx = torch.tensor(x)
    F = torch.nn.functional
    assert_close(Tensor(x).leaky_relu(0.2), F.leaky_relu(tx, 0.2), atol=1e-6)
    assert_close(Tensor(x).gelu(), F.gelu(tx, approximate="tanh"), atol=1e-5)
    assert_close(Tensor(x).gelu(approximate="none"), F.gelu(tx), atol=1e-5)
    assert_close(Tensor(x).quick_gelu(), tx * torch.sigmoid(1.702 * tx), atol=1e-6)
    assert_close(Tensor(x).swish(), F.silu(tx), atol=1e-6)
    assert_close(Tensor(x).elu(0.5), F.elu(tx, 0.5), atol=1e-6)
    assert_close(Tensor(x).celu(2.0), F.celu(tx, 2.0), atol=1e-6)
    assert_close(Tensor(x).softplus(2.0), F.softplus(tx, 2.0), atol=1e-5)
    assert_close(Tensor(x).hardtanh(-0.5, 2.0), F.hardtanh(tx, -0.5, 2.0), atol=0)


def test_bitwise_not_ints_and_bools() -> None:
    for arr in [
        rand_np((5,), np.int32, -9, 9),
        rand_np((5,), np.uint8, 0, 255),
        rand_np((5,), np.bool_),
    ]:
        assert_close(Tensor(arr).bitwise_not(), torch.bitwise_not(torch.tensor(arr)))
        assert_close(~Tensor(arr), ~torch.tensor(arr))
    with pytest.raises(RuntimeError, match="bitwise_not"):
        Tensor([1.0]).bitwise_not()


# -- binary ---------------------------------------------------------------------------------------

BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "pow",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]
PAIRS = [
    ((), ()),
    ((3,), ()),
    ((2, 3), (3,)),
    ((2, 1), (1, 4)),
    ((0, 3), (1, 3)),
    ((4, 1, 3), (2, 1)),
]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
@pytest.mark.parametrize("shapes", PAIRS)
def test_binary_broadcast_matches_torch(name: str, dtype: type, shapes: tuple) -> None:
    lo = 0.5 if name in ("pow", "div") else -4
    a, b = rand_np(shapes[0], dtype, lo, 4), rand_np(shapes[1], dtype, lo, 4)
    if name == "pow" and np.dtype(dtype).kind == "i":
        b = np.abs(b) % 4
    got = getattr(Tensor(a), name)(Tensor(b))
    want = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    tol = 2e-2 if dtype == np.float16 else 1e-5
    assert_close(got, want, atol=tol, rtol=tol)


@pytest.mark.parametrize(
    "name",
    ["add", "mul", "eq", "ne", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"],
)
def test_binary_bool(name: str) -> None:
    a, b = rand_np((2, 3), np.bool_), rand_np((3,), np.bool_)
    assert_close(
        getattr(Tensor(a), name)(Tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    )


def test_bool_subtraction_is_an_error_like_torch() -> None:
    with pytest.raises(RuntimeError, match="Subtraction"):
        Tensor([True]) - Tensor([False])


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_division_modes_and_remainders(dtype: type) -> None:
    a = rand_np((20,), dtype, -9, 9)
    b = rand_np((20,), dtype, -4, 4)
    b[b == 0] = 3
    ta, tb = torch.tensor(a), torch.tensor(b)
    for mode in ("trunc", "floor"):
        assert_close(
            Tensor(a).div(Tensor(b), rounding_mode=mode),
            torch.div(ta, tb, rounding_mode=mode),
            atol=1e-5,
        )
    assert_close(Tensor(a) // Tensor(b), ta // tb, atol=1e-5)
    assert_close(Tensor(a) % Tensor(b), ta % tb, atol=1e-5)
    assert_close(Tensor(a).mod(Tensor(b)), torch.remainder(ta, tb), atol=1e-5)
    assert_close(Tensor(a).fmod(Tensor(b)), torch.fmod(ta, tb), atol=1e-5)
    assert_close(Tensor(a) / Tensor(b), ta / tb, atol=1e-6)


def test_integer_division_by_zero_gives_zero() -> None:
    a = Tensor([7, -7, 0], dtype=dtypes.int32)
    assert (a // 0).tolist() == [0, 0, 0]
    assert (a % 0).tolist() == [0, 0, 0]
    assert a.div(0, rounding_mode="trunc").tolist() == [0, 0, 0]


def test_float_division_by_zero_is_ieee() -> None:
    got = (Tensor([1.0, -1.0, 0.0]) / 0).numpy()
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


@pytest.mark.parametrize(
    "value,dtype,want",
    [(2.5, dtypes.int32, dtypes.float32), (1.0, dtypes.float16, dtypes.float16), (2, dtypes.int8, dtypes.int8),
     (2, dtypes.bool, dtypes.int32), (True, dtypes.bool, dtypes.bool), (1.5, dtypes.bool, dtypes.float32),
     (3, dtypes.float16, dtypes.float16), (2, dtypes.uint8, dtypes.uint8)],
)  # fmt: skip
def test_weak_scalar_promotion(value: object, dtype, want) -> None:  # type: ignore[no-untyped-def]
    t = Tensor([1, 0], dtype=dtype)
    assert (t * value).dtype is want
    assert (value * t).dtype is want


def test_tensor_promotion_table() -> None:
    cases = [(dtypes.int8, dtypes.uint8, dtypes.int16), (dtypes.int32, dtypes.float16, dtypes.float16),
             (dtypes.bool, dtypes.int32, dtypes.int32), (dtypes.float16, dtypes.bfloat16, dtypes.float32),
             (dtypes.uint32, dtypes.int32, dtypes.int64)]  # fmt: skip
    for a, b, want in cases:
        assert (Tensor([1], dtype=a) + Tensor([1], dtype=b)).dtype is want


def test_int_true_division_gives_float() -> None:
    got = Tensor([1, 2, 3]) / 2
    assert got.dtype is dtypes.float32 and got.tolist() == [0.5, 1.0, 1.5]


def test_float16_plus_python_float_stays_float16() -> None:
    got = Tensor([1.0, 2.0], dtype=dtypes.float16) + 1.5
    assert got.dtype is dtypes.float16 and got.tolist() == [2.5, 3.5]


def test_copysign_logaddexp_lerp() -> None:
    a, b = rand_np((6,), np.float32), rand_np((6,), np.float32)
    b[0] = -0.0
    ta, tb = torch.tensor(a), torch.tensor(b)
    assert_close(Tensor(a).copysign(Tensor(b)), torch.copysign(ta, tb))
    assert_close(Tensor(a).logaddexp(Tensor(b)), torch.logaddexp(ta, tb), atol=1e-5)
    assert_close(Tensor(a).lerp(Tensor(b), 0.3), torch.lerp(ta, tb, 0.3), atol=1e-6)
    inf = np.array([-np.inf, np.inf], dtype=np.float32)
    assert_close(
        Tensor(inf).logaddexp(Tensor(inf)), torch.logaddexp(torch.tensor(inf), torch.tensor(inf))
    )


def test_where_masked_fill_clamp() -> None:
    c = rand_np((2, 3), np.bool_)
    a, b = rand_np((2, 3), np.float32), rand_np((3,), np.float32)
    assert_close(
        Tensor(c).where(Tensor(a), Tensor(b)),
        torch.where(torch.tensor(c), torch.tensor(a), torch.tensor(b)),
    )
    assert_close(Tensor(c).where(1, 2), torch.where(torch.tensor(c), 1, 2).int())
    assert Tensor(c).where(1.5, 2).dtype is dtypes.float32
    assert Tensor(c).where(Tensor([1], dtype=dtypes.int8), 2).dtype is dtypes.int8
    assert_close(
        Tensor(a).masked_fill(Tensor(c), -1.0), torch.tensor(a).masked_fill(torch.tensor(c), -1.0)
    )
    assert_close(Tensor(a).clamp(-1, 1), torch.clamp(torch.tensor(a), -1, 1))
    assert_close(Tensor(a).clip(max_=0.5), torch.clamp(torch.tensor(a), max=0.5))
    with pytest.raises(RuntimeError, match="min"):
        Tensor(a).clamp()


def test_isclose_allclose() -> None:
    a = np.array([1.0, 1.0 + 1e-7, np.inf, np.nan, 2.0], dtype=np.float32)
    b = np.array([1.0, 1.0, np.inf, np.nan, 2.1], dtype=np.float32)
    assert_close(Tensor(a).isclose(Tensor(b)), torch.isclose(torch.tensor(a), torch.tensor(b)))
    assert_close(
        Tensor(a).isclose(Tensor(b), equal_nan=True),
        torch.isclose(torch.tensor(a), torch.tensor(b), equal_nan=True),
    )
    assert Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.0 + 1e-7])) is True
    assert Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.1])) is False


def test_shifts_and_bitwise() -> None:
    a = rand_np((8,), np.int32, 0, 1000)
    assert_close(Tensor(a) << 3, torch.tensor(a) << 3)
    assert_close(Tensor(a) >> 2, torch.tensor(a) >> 2)
    assert_close(Tensor(a) & 7, torch.tensor(a) & 7)
    assert_close(Tensor(a) | 8, torch.tensor(a) | 8)
    assert_close(Tensor(a) ^ 5, torch.tensor(a) ^ 5)
    with pytest.raises(RuntimeError):
        Tensor([1.0]) & Tensor([2.0])


def test_reflected_and_inplace_operators() -> None:
    t = Tensor([1.0, 2.0, 4.0])
    assert (2 - t).tolist() == [1.0, 0.0, -2.0]
    assert (2 / t).tolist() == [2.0, 1.0, 0.5]
    assert (2**t).tolist() == [2.0, 4.0, 16.0]
    assert (7 // Tensor([2, 3])).tolist() == [3, 2]
    assert (-t).tolist() == [-1.0, -2.0, -4.0]
    u = Tensor([1.0, 2.0, 3.0])
    u += 1
    u *= 2
    u -= Tensor([1.0, 1.0, 1.0])
    u /= 2
    assert u.tolist() == [1.5, 2.5, 3.5]


def test_pow_edge_cases_match_torch() -> None:
    a = np.array([0.0, 0.0, -2.0, 2.0, -8.0], dtype=np.float32)
    b = np.array([0.0, 2.0, 3.0, -1.0, 1 / 3], dtype=np.float32)
    assert_close(Tensor(a) ** Tensor(b), torch.tensor(a) ** torch.tensor(b), atol=1e-6)
    assert (Tensor([2, 3]) ** 2).dtype is dtypes.int32
    assert (Tensor([2, 3]) ** 0.5).dtype is dtypes.float32
    assert math.isclose((Tensor([4]) ** 0.5).item(), 2.0)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, -1, 2.0, 3.0])
def test_small_integral_powers_multiply(n: float) -> None:
    """x ** n for a small integral scalar multiplies (no POW in the graph) and matches NumPy,
    incl. inf/NaN/-0.0, the dtype and the gradient."""
    x = np.array([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 0.3], dtype=np.float32)
    t = Tensor(x)
    out = t**n
    assert Ops.POW not in {u.op for u in out.uop.toposort()}
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(out.numpy(), x ** np.float32(n), rtol=1e-6)
    g = Tensor([0.5, -1.5, 2.0], requires_grad=True)
    (g**n).sum().backward()
    want = n * np.array([0.5, -1.5, 2.0], dtype=np.float32) ** (n - 1)
    assert g.grad is not None
    np.testing.assert_allclose(g.grad.numpy(), want, rtol=1e-6)


def test_powers_that_keep_pow_semantics() -> None:
    i = Tensor([2, 3, -4])
    assert (i**3).dtype is dtypes.int32 and (i**3).tolist() == [8, 27, -64]
    assert (i**2.0).dtype is dtypes.float32 and (i**2.0).tolist() == [4.0, 9.0, 16.0]
    assert (Tensor([True, False]) ** 2).dtype is dtypes.int32
    g = Tensor([0.5, 2.0], requires_grad=True)
    (g**0).sum().backward()
    assert g.grad is not None and g.grad.tolist() == [0.0, 0.0]
    x = Tensor([1.0, 2.0])
    assert x**1 is not x and (x**1).tolist() == [1.0, 2.0]
