"""Creation, construction, properties and movement ops vs NumPy/PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from reference import assert_close, rand_np

torch = pytest.importorskip("torch")


# -- construction -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data,dtype",
    [(1, dtypes.int32), (2.5, dtypes.float32), (True, dtypes.bool), ([1, 2], dtypes.int32),
     ([1, 2.0], dtypes.float32), ([True, False], dtypes.bool), ([[1], [2]], dtypes.int32), ([], dtypes.float32),
     ([True, 2], dtypes.int32)],
)  # fmt: skip
def test_python_data_dtype_inference(data, dtype) -> None:  # type: ignore[no-untyped-def]
    t = Tensor(data)
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.numpy(), np.array(data, dtype=t.numpy().dtype))


@pytest.mark.parametrize("npdt", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                  np.int64, np.uint64, np.float16, np.float32, np.float64])  # fmt: skip
def test_numpy_roundtrip_every_dtype(npdt: type) -> None:
    x = rand_np((3, 4), npdt, 0, 100)
    t = Tensor(x)
    assert t.shape == (3, 4) and t.numpy().dtype == x.dtype
    np.testing.assert_array_equal(t.numpy(), x)
    np.testing.assert_array_equal(Tensor(x.T).numpy(), x.T)  # non-contiguous
    np.testing.assert_array_equal(Tensor(x[:, ::2]).numpy(), x[:, ::2])


def test_numpy_zero_copy_and_user_array_untouched() -> None:
    x = np.arange(4, dtype=np.float32)
    t = Tensor(x)
    t[1:3] = 9.0
    assert t.tolist() == [0.0, 9.0, 9.0, 3.0]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_bytes_bfloat16_and_explicit_dtype() -> None:
    assert Tensor(b"\x01\x02\xff").tolist() == [1, 2, 255]
    b = Tensor([1.0, 2.5, 3.140625], dtype=dtypes.bfloat16)
    assert b.dtype is dtypes.bfloat16 and b.tolist() == [1.0, 2.5, 3.140625]
    assert Tensor([1.7, -1.7], dtype=dtypes.int32).tolist() == [1, -1]
    assert Tensor(np.array([1, 2]), dtype=dtypes.float16).dtype is dtypes.float16
    assert Tensor(Tensor([1, 2]), dtype=dtypes.float32).tolist() == [1.0, 2.0]


def test_ragged_list_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="expected sequence"):
        Tensor([[1, 2], [3]])


def test_properties() -> None:
    t = Tensor(np.zeros((2, 3, 4), dtype=np.float16))
    assert (
        t.shape == (2, 3, 4)
        and t.ndim == 3
        and t.numel() == 24
        and t.size(1) == 3
        and t.size() == (2, 3, 4)
    )
    assert t.element_size() == 2 and t.nbytes() == 48 and t.device == "CPU"
    assert t.T.shape == (4, 3, 2) and t.is_floating_point() and not Tensor([1]).is_floating_point()
    assert len(t) == 2 and t.size(-1) == 4
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(3)
    assert Tensor(5).item() == 5 and float(Tensor(2.5)) == 2.5 and int(Tensor(3)) == 3
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        Tensor([1, 2]).item()


def test_casts() -> None:
    x = np.array([-1.5, 0.0, 2.7, 300.0], dtype=np.float32)
    t = Tensor(x)
    assert t.int().tolist() == [-1, 0, 2, 300]
    assert t.bool().tolist() == [True, False, True, True]
    assert t.half().dtype is dtypes.float16 and t.double().dtype is dtypes.float64
    assert t.long().dtype is dtypes.int64 and t.short().dtype is dtypes.int16
    assert t.bfloat16().float().tolist() == [-1.5, 0.0, 2.703125, 300.0]
    assert Tensor([1.0]).bitcast(dtypes.uint32).item() == 0x3F800000
    assert Tensor(np.array([1, 2], np.int32)).bitcast(dtypes.int16).shape == (4,)


# -- creation -----------------------------------------------------------------------------------------
def test_creation() -> None:
    assert Tensor.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert Tensor.ones((2,), dtype=dtypes.int32).tolist() == [1, 1]
    assert Tensor.full((2, 2), 7).dtype is dtypes.int32 and Tensor.full((2,), 1.5).tolist() == [
        1.5,
        1.5,
    ]
    assert Tensor.empty(3, 2).shape == (3, 2)
    assert Tensor.zeros(0, 4).shape == (0, 4)
    x = Tensor([[1, 2]], dtype=dtypes.int8)
    assert x.zeros_like().dtype is dtypes.int8 and x.ones_like().tolist() == [[1, 1]]
    assert x.full_like(5).tolist() == [[5, 5]] and x.empty_like().shape == (1, 2)
    assert Tensor.invalids(2, 2).shape == (2, 2)
    with pytest.raises(RuntimeError, match="negative dimension"):
        Tensor.zeros(-1)


@pytest.mark.parametrize(
    "args", [(5,), (2, 9), (0, 10, 3), (10, 0, -2), (0.5, 3.0, 0.5), (1, 1), (-3, 3), (0, 1000)]
)
def test_arange(args: tuple) -> None:
    assert_close(
        Tensor.arange(*args),
        torch.arange(*args).to(
            torch.int32 if all(isinstance(a, int) for a in args) else torch.float32
        ),
    )


def test_linspace_eye() -> None:
    assert_close(Tensor.linspace(0, 1, 5), torch.linspace(0, 1, 5))
    assert_close(Tensor.linspace(-2, 7, 10), torch.linspace(-2, 7, 10), atol=1e-6)
    assert_close(Tensor.linspace(3, 3, 1), torch.linspace(3, 3, 1))
    assert_close(Tensor.eye(3), torch.eye(3))
    assert_close(Tensor.eye(2, 4, dtype=dtypes.int32), torch.eye(2, 4, dtype=torch.int32))


def test_from_blob() -> None:
    x = np.arange(6, dtype=np.float32)
    t = Tensor.from_blob(x.ctypes.data, (2, 3), dtype=dtypes.float32)
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


# -- movement -----------------------------------------------------------------------------------------
def test_reshape_view_expand_permute() -> None:
    x = rand_np((2, 3, 4))
    t, tt = Tensor(x), torch.tensor(x)
    assert_close(t.reshape(6, -1), tt.reshape(6, -1))
    assert_close(t.view((4, 6)), tt.view(4, 6))
    assert_close(t.reshape(2, None, 4), x)
    assert_close(t[:, :1].expand(2, 3, 4), tt[:, :1].expand(2, 3, 4))
    assert_close(t[:, :1].expand(5, -1, 3, -1), tt[:, :1].expand(5, -1, 3, -1))
    assert_close(t.permute(2, 0, 1), tt.permute(2, 0, 1))
    assert_close(t.permute((-1, 0, 1)), tt.permute(-1, 0, 1))
    assert_close(t.transpose(0, 2), tt.transpose(0, 2))
    assert_close(t.flip(0, 2), tt.flip((0, 2)))
    assert_close(t.flatten(1), tt.flatten(1))
    assert_close(t.unflatten(2, (2, 2)), tt.unflatten(2, (2, 2)))
    assert_close(t[:, :1].squeeze(), tt[:, :1].squeeze())
    assert_close(t.unsqueeze(-1), tt.unsqueeze(-1))
    assert_close(t.squeeze(0), tt.squeeze(0))


def test_movement_errors_name_shapes() -> None:
    t = Tensor(rand_np((2, 3)))
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        t.reshape(4, 2)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        t.reshape(-1, -1)
    with pytest.raises(RuntimeError, match="expanded size"):
        t.expand(4, 3)
    with pytest.raises(RuntimeError, match="permute"):
        t.permute(0, 1, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.transpose(0, 5)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes(mode: str) -> None:
    x = rand_np((1, 2, 4, 5))
    pads = (1, 2, 2, 1)
    want = torch.nn.functional.pad(
        torch.tensor(x), pads, mode=mode, **({"value": 3.0} if mode == "constant" else {})
    )
    got = Tensor(x).pad(pads, mode=mode, **({"value": 3.0} if mode == "constant" else {}))
    assert_close(got, want)


def test_pad_pairs_negative_and_shrink() -> None:
    x = rand_np((3, 4))
    assert_close(Tensor(x).pad(((1, 0), None)), np.pad(x, ((1, 0), (0, 0))))
    assert_close(Tensor(x).pad((-1, 2)), torch.nn.functional.pad(torch.tensor(x), (-1, 2)))
    assert_close(Tensor(x).shrink(((1, 3), None)), x[1:3])
    assert_close(Tensor(x).pad_to(4, 6), np.pad(x, ((0, 1), (0, 2))))
    assert_close(Tensor(x).shrink_to(2, None), x[:2])
    with pytest.raises(RuntimeError, match="reflect"):
        Tensor(x).pad((4, 0), mode="reflect")


def test_cat_stack_split_chunk() -> None:
    a, b = rand_np((2, 3)), rand_np((2, 1))
    ta, tb = torch.tensor(a), torch.tensor(b)
    assert_close(Tensor(a).cat(Tensor(b), dim=1), torch.cat([ta, tb], 1))
    assert_close(Tensor(a).cat(Tensor(a), Tensor(a)), torch.cat([ta, ta, ta]))
    assert Tensor([1]).cat(Tensor([1.5])).dtype is dtypes.float32
    assert_close(Tensor(a).stack(Tensor(a), dim=1), torch.stack([ta, ta], 1))
    assert_close(Tensor(a).stack(Tensor(a), dim=-1), torch.stack([ta, ta], -1))
    for got, want in zip(Tensor(a).split(2, 1), torch.split(ta, 2, 1), strict=True):
        assert_close(got, want)
    for got, want in zip(Tensor(a).split([1, 2], 1), torch.split(ta, [1, 2], 1), strict=True):
        assert_close(got, want)
    for got, want in zip(
        Tensor(rand_np((7,))).chunk(3), torch.chunk(torch.tensor(rand_np((7,))), 3), strict=True
    ):
        assert got.shape == want.shape
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        Tensor(a).cat(Tensor(rand_np((3, 1))), dim=1)
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        Tensor(a).split([1, 1], 1)
    with pytest.raises(RuntimeError, match="stack expects"):
        Tensor(a).stack(Tensor(b))


def test_repeat_roll_unfold_meshgrid() -> None:
    x = rand_np((2, 3))
    t, tt = Tensor(x), torch.tensor(x)
    assert_close(t.repeat(2, 1, 3), tt.repeat(2, 1, 3))
    assert_close(t.repeat_interleave(2, 1), tt.repeat_interleave(2, 1))
    assert_close(t.repeat_interleave(3), tt.repeat_interleave(3))
    assert_close(t.roll(1, 1), tt.roll(1, 1))
    assert_close(t.roll((1, -2), (0, 1)), tt.roll((1, -2), (0, 1)))
    assert_close(t.roll(2), tt.roll(2))
    y = rand_np((2, 7))
    assert_close(Tensor(y).unfold(1, 3, 2), torch.tensor(y).unfold(1, 3, 2))
    a, b = Tensor([1, 2, 3]), Tensor([4, 5])
    for got, want in zip(
        a.meshgrid(b),
        torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="ij"),
        strict=True,
    ):
        assert_close(got, want.int())
    for got, want in zip(
        a.meshgrid(b, indexing="xy"),
        torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="xy"),
        strict=True,
    ):
        assert_close(got, want.int())


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_triu_tril_diagonal_diag(k: int) -> None:
    x = rand_np((2, 4, 5))
    tt = torch.tensor(x)
    assert_close(Tensor(x).triu(k), torch.triu(tt, k))
    assert_close(Tensor(x).tril(k), torch.tril(tt, k))
    assert_close(Tensor(x).diagonal(k, 1, 2), torch.diagonal(tt, k, 1, 2))
    v = rand_np((3,))
    assert_close(Tensor(v).diag(k), torch.diag(torch.tensor(v), k))
    assert_close(Tensor(x[0]).diag(k), torch.diag(tt[0], k))


@pytest.mark.parametrize(
    "formula,sizes",
    [("b c h w -> b h w c", {}), ("b c (h w) -> b (c h) w", {"h": 2}), ("b ... -> (b ...)", {}),
     ("b c h w -> b 1 (c h w)", {}), ("(a b) c h w -> a b c (h w)", {"a": 1})],
)  # fmt: skip
def test_rearrange(formula: str, sizes: dict) -> None:
    x = (
        rand_np((2, 3, 4, 2))
        if "(h w)" not in formula.split("->", maxsplit=1)[0]
        else rand_np((2, 3, 4))
    )
    got = Tensor(x).rearrange(formula, **sizes)
    ref = {
        "b c h w -> b h w c": lambda a: a.transpose(0, 2, 3, 1),
        "b c (h w) -> b (c h) w": lambda a: a.reshape(2, 3, 2, 2).reshape(2, 6, 2),
        "b ... -> (b ...)": lambda a: a.reshape(-1),
        "b c h w -> b 1 (c h w)": lambda a: a.reshape(2, 1, -1),
        "(a b) c h w -> a b c (h w)": lambda a: a.reshape(1, 2, 3, 8),
    }[formula](x)
    assert_close(got, ref)
