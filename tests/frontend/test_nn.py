# ruff: noqa: E501  (parametrize tables read best one case per line)
"""matmul/einsum, conv/pool/interpolate, norms, attention, losses vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor, dtypes
from reference import assert_close, rand_np

torch = pytest.importorskip("torch")
F = torch.nn.functional


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3))])  # fmt: skip
def test_matmul_shapes(sa: tuple, sb: tuple) -> None:
    a, b = rand_np(sa), rand_np(sb)
    assert_close(Tensor(a) @ Tensor(b), torch.tensor(a) @ torch.tensor(b), atol=1e-5)
    assert_close(
        Tensor(a).dot(Tensor(b)), torch.matmul(torch.tensor(a), torch.tensor(b)), atol=1e-5
    )


def test_matmul_dtypes_and_errors() -> None:
    a, b = rand_np((2, 3), np.int32), rand_np((3, 2), np.int32)
    assert_close(Tensor(a) @ Tensor(b), torch.tensor(a) @ torch.tensor(b))
    h = rand_np((4, 8), np.float16)
    got = Tensor(h) @ Tensor(h.T)
    assert got.dtype is dtypes.float16
    assert_close(got, torch.tensor(h) @ torch.tensor(h.T), atol=1e-2, rtol=1e-2)
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"
    ):
        Tensor(rand_np((2, 3))) @ Tensor(rand_np((2, 3)))
    with pytest.raises(RuntimeError, match="at least 1D"):
        Tensor(1.0) @ Tensor([1.0])


@pytest.mark.parametrize("formula,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
                                            ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("i,j->ij", [(2,), (3,)]),
                                            ("...ij->...ji", [(2, 3, 4)]), ("ij->", [(2, 3)]), ("ij,ij->i", [(2, 3), (2, 3)])])  # fmt: skip
def test_einsum(formula: str, shapes: list) -> None:
    arrs = [rand_np(s) for s in shapes]
    assert_close(
        Tensor.einsum(formula, *[Tensor(a) for a in arrs]),
        torch.einsum(formula, *[torch.tensor(a) for a in arrs]),
        atol=1e-5,
    )


def test_linear_sequential() -> None:
    x, w, b = rand_np((2, 3)), rand_np((3, 4)), rand_np((4,))
    assert_close(
        Tensor(x).linear(Tensor(w), Tensor(b)),
        torch.tensor(x) @ torch.tensor(w) + torch.tensor(b),
        atol=1e-5,
    )
    assert Tensor([1.0, -2.0]).sequential([lambda t: t * 2, lambda t: t.relu()]).tolist() == [
        2.0,
        0.0,
    ]


@pytest.mark.parametrize("groups,stride,dilation,padding", [(1, 1, 1, 0), (2, 2, 1, 1), (1, 1, 2, "same"), (4, 1, 1, "valid"),
                                                            (1, (2, 1), (1, 2), (1, 2)), (2, 3, 1, 2)])  # fmt: skip
def test_conv2d(groups: int, stride, dilation, padding) -> None:  # type: ignore[no-untyped-def]
    x, w, b = rand_np((2, 4, 7, 8)), rand_np((4, 4 // groups, 3, 2)), rand_np((4,))
    want = F.conv2d(
        torch.tensor(x), torch.tensor(w), torch.tensor(b), stride, padding, dilation, groups
    )
    got = Tensor(x).conv2d(
        Tensor(w), Tensor(b), groups=groups, stride=stride, dilation=dilation, padding=padding
    )
    assert_close(got, want, atol=1e-4)


def test_conv1d_and_errors() -> None:
    x, w = rand_np((1, 2, 9)), rand_np((3, 2, 4))
    assert_close(
        Tensor(x).conv2d(Tensor(w), padding=1),
        F.conv1d(torch.tensor(x), torch.tensor(w), padding=1),
        atol=1e-5,
    )
    with pytest.raises(RuntimeError, match="expected input"):
        Tensor(rand_np((1, 3, 5, 5))).conv2d(Tensor(rand_np((2, 2, 3, 3))))


@pytest.mark.parametrize(
    "groups,stride,dilation,padding,output_padding",
    [(1, 1, 1, 0, 0), (2, 2, 1, 1, 1), (1, 3, 2, 2, 0)],
)
def test_conv_transpose2d(
    groups: int, stride: int, dilation: int, padding: int, output_padding: int
) -> None:
    x, w, b = rand_np((1, 4, 5, 4)), rand_np((4, 6 // groups, 3, 3)), rand_np((6,))
    want = F.conv_transpose2d(
        torch.tensor(x),
        torch.tensor(w),
        torch.tensor(b),
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
    got = Tensor(x).conv_transpose2d(
        Tensor(w), Tensor(b), groups, stride, dilation, padding, output_padding
    )
    assert_close(got, want, atol=1e-4)


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,dilation", [((2, 2), None, 0, False, 1), ((3, 3), 2, 1, False, 1),
                                                                      ((3, 2), 2, 1, True, 1), ((2, 2), 1, 0, False, 2)])  # fmt: skip
def test_pools(kernel, stride, padding, ceil_mode: bool, dilation: int) -> None:  # type: ignore[no-untyped-def]
    x = rand_np((2, 3, 7, 6))
    tx = torch.tensor(x)
    assert_close(
        Tensor(x).max_pool2d(kernel, stride, dilation, padding, ceil_mode),
        F.max_pool2d(tx, kernel, stride, padding, dilation, ceil_mode),
    )
    if dilation == 1:
        for cip in (True, False):
            want = F.avg_pool2d(tx, kernel, stride, padding, ceil_mode, cip)
            assert_close(
                Tensor(x).avg_pool2d(kernel, stride, 1, padding, ceil_mode, cip), want, atol=1e-6
            )


def test_max_pool_indices_and_unpool() -> None:
    x = rand_np((1, 2, 4, 6))
    tv, ti = F.max_pool2d(torch.tensor(x), 2, return_indices=True)
    v, i = Tensor(x).max_pool2d(return_indices=True)
    assert_close(v, tv)
    assert_close(i, ti.int())
    assert_close(v.max_unpool2d(i), F.max_unpool2d(tv, ti, 2))


@pytest.mark.parametrize(
    "mode,align",
    [("linear", False), ("linear", True), ("nearest", False), ("nearest-exact", False)],
)
def test_interpolate(mode: str, align: bool) -> None:
    x = rand_np((1, 2, 4, 5))
    tmode = {"linear": "bilinear"}.get(mode, mode)
    kwargs = {"align_corners": align} if mode == "linear" else {}
    want = F.interpolate(torch.tensor(x), size=(7, 3), mode=tmode, **kwargs)
    assert_close(Tensor(x).interpolate((7, 3), mode=mode, align_corners=align), want, atol=1e-5)


def test_layernorm_batchnorm() -> None:
    x = rand_np((2, 3, 4))
    assert_close(Tensor(x).layernorm(), F.layer_norm(torch.tensor(x), (4,)), atol=1e-5)
    mean, var = rand_np((3,)), rand_np((3,), low=0.5, high=2)
    w, b = rand_np((3,)), rand_np((3,))
    want = F.batch_norm(
        torch.tensor(x),
        torch.tensor(mean),
        torch.tensor(var),
        torch.tensor(w),
        torch.tensor(b),
        eps=1e-5,
    )
    got = Tensor(x).batchnorm(Tensor(w), Tensor(b), Tensor(mean), (Tensor(var) + 1e-5).rsqrt())
    assert_close(got, want, atol=1e-5)


@pytest.mark.parametrize(
    "causal,mask,gqa",
    [
        (False, None, False),
        (True, None, False),
        (False, "bool", False),
        (False, "float", False),
        (True, None, True),
    ],
)
def test_scaled_dot_product_attention(causal: bool, mask, gqa: bool) -> None:  # type: ignore[no-untyped-def]
    q = rand_np((2, 4, 5, 8))
    kv_heads = 2 if gqa else 4
    k, v = rand_np((2, kv_heads, 6, 8)), rand_np((2, kv_heads, 6, 3))
    m = None
    if mask == "bool":
        m = rand_np((5, 6), np.bool_)
        m[:, 0] = True
    elif mask == "float":
        m = rand_np((5, 6))
    want = F.scaled_dot_product_attention(
        torch.tensor(q),
        torch.tensor(k),
        torch.tensor(v),
        None if m is None else torch.tensor(m),
        is_causal=causal,
        enable_gqa=gqa,
    )
    got = Tensor(q).scaled_dot_product_attention(
        Tensor(k), Tensor(v), None if m is None else Tensor(m), is_causal=causal, enable_gqa=gqa
    )
    assert_close(got, want, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(reduction: str) -> None:
    p = rand_np((4, 3), low=0.05, high=0.95)
    y = rand_np((4, 3), np.bool_).astype(np.float32)
    assert_close(
        Tensor(p).binary_crossentropy(Tensor(y), reduction),
        F.binary_cross_entropy(torch.tensor(p), torch.tensor(y), reduction=reduction),
        atol=1e-5,
    )
    logits = rand_np((4, 3))
    assert_close(
        Tensor(logits).binary_crossentropy_logits(Tensor(y), reduction),
        F.binary_cross_entropy_with_logits(
            torch.tensor(logits), torch.tensor(y), reduction=reduction
        ),
        atol=1e-5,
    )
    pw = rand_np((3,), low=0.5, high=2)
    want = F.binary_cross_entropy_with_logits(
        torch.tensor(logits), torch.tensor(y), reduction=reduction, pos_weight=torch.tensor(pw)
    )
    assert_close(
        Tensor(logits).binary_crossentropy_logits(Tensor(y), reduction, Tensor(pw)), want, atol=1e-5
    )
    cls = np.array([2, 0, 1, 1])
    assert_close(
        Tensor(logits).cross_entropy(Tensor(cls), reduction),
        F.cross_entropy(torch.tensor(logits), torch.tensor(cls), reduction=reduction),
        atol=1e-5,
    )
    assert_close(
        Tensor(logits).cross_entropy(Tensor(cls), reduction, label_smoothing=0.1),
        F.cross_entropy(
            torch.tensor(logits), torch.tensor(cls), reduction=reduction, label_smoothing=0.1
        ),
        atol=1e-5,
    )
    probs = rand_np((4, 3), low=0, high=1)
    assert_close(
        Tensor(logits).cross_entropy(Tensor(probs), reduction),
        F.cross_entropy(torch.tensor(logits), torch.tensor(probs), reduction=reduction),
        atol=1e-5,
    )
    logp = F.log_softmax(torch.tensor(logits), 1)
    w = rand_np((3,), low=0.5, high=2)
    cls2 = np.array([2, 0, -100, 1])
    want = F.nll_loss(
        logp, torch.tensor(cls2), weight=torch.tensor(w), ignore_index=-100, reduction=reduction
    )
    got = Tensor(logp.numpy()).nll_loss(
        Tensor(cls2), Tensor(w), ignore_index=-100, reduction=reduction
    )
    assert_close(got, want, atol=1e-5)


def test_sparse_categorical_crossentropy_ignore_and_smoothing() -> None:
    logits = rand_np((5, 4))
    y = np.array([1, -1, 3, 0, 2])
    want = F.cross_entropy(
        torch.tensor(logits), torch.tensor(y), ignore_index=-1, label_smoothing=0.2
    )
    assert_close(
        Tensor(logits).sparse_categorical_crossentropy(Tensor(y), label_smoothing=0.2),
        want,
        atol=1e-5,
    )
