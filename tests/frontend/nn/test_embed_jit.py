"""The embed example's steady state: ``Embedder`` pads to (batch, length) buckets and replays
a TinyJit per bucket; its embeddings equal the model's direct (unpadded, non-JIT) results.
A small random BERT keeps this fast; the real weights run in test_minilm.py."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.examples.embed import (
    BertConfig,
    Embedder,
    SentenceEncoder,
    batch_bucket,
    bucket,
    pad_tokens,
    qkv_projection,
)

pytestmark = pytest.mark.kernels
TINY = BertConfig(
    vocab_size=50,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=64,
)


def _batch(rng: np.random.Generator, rows: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    ids = rng.integers(1, TINY.vocab_size, size=(rows, length)).astype(np.int32)
    lengths = rng.integers(2, length + 1, size=rows)
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype(np.int32)
    return ids * mask, mask


def test_buckets_round_up() -> None:
    assert [bucket(n, (8, 16, 32)) for n in (1, 8, 9, 32, 40)] == [8, 8, 16, 32, 40]
    assert [batch_bucket(n) for n in (1, 2, 3, 5, 32, 33, 500)] == [1, 2, 4, 8, 32, 64, 64]
    with pytest.raises(ValueError, match="empty"):
        batch_bucket(0)


def test_pad_tokens_masks_the_padding() -> None:
    ids, mask = np.array([[5, 6, 7]], np.int32), np.array([[1, 1, 0]], np.int32)
    pids, pmask = pad_tokens(ids, mask, 2, 4)
    np.testing.assert_array_equal(pids, [[5, 6, 7, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(pmask, [[1, 1, 0, 0], [1, 0, 0, 0]])
    with pytest.raises(ValueError, match="fit"):
        pad_tokens(ids, mask, 1, 2)


def test_jit_embeddings_equal_the_direct_model() -> None:
    rng = np.random.default_rng(3)
    model = SentenceEncoder(TINY)
    embedder = Embedder(model, length_buckets=(8, 16))
    for call in range(4):  # eager, capture, two replays with new tokens
        ids, mask = _batch(rng, 3, 7)
        want = model(Tensor(ids), Tensor(mask)).numpy()
        got = embedder(ids, mask)
        assert got.shape == (3, TINY.hidden_size)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"call {call}")
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    assert list(embedder.jits) == [(4, 8)]
    assert embedder.jits[(4, 8)].captured


def test_jit_off_pads_but_runs_directly() -> None:
    rng = np.random.default_rng(4)
    model = SentenceEncoder(TINY)
    ids, mask = _batch(rng, 2, 9)
    got = Embedder(model, jit=False, length_buckets=(8, 16))(ids, mask)
    want = model(Tensor(ids), Tensor(mask)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_fused_qkv_follows_new_weights_and_keeps_gradients() -> None:
    model = SentenceEncoder(TINY)
    attn = model.encoder.layer[0].attention.self  # type: ignore[attr-defined]
    weight, _ = qkv_projection(attn)
    assert qkv_projection(attn)[0] is weight  # realized once, reused
    h = TINY.hidden_size
    np.testing.assert_array_equal(weight.numpy()[h : 2 * h], attn.key.weight.numpy())
    new = np.full((h, h), 0.5, np.float32)
    attn.query.weight = Tensor(new)
    np.testing.assert_array_equal(qkv_projection(attn)[0].numpy()[:h], new)
    attn.value.weight.requires_grad = True
    ids, mask = _batch(np.random.default_rng(5), 2, 8)
    model(Tensor(ids), Tensor(mask)).square().sum().backward()
    grad = attn.value.weight.grad
    assert grad is not None and float(np.abs(grad.numpy()).sum()) > 0
