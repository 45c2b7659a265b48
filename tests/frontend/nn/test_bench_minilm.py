"""tools/bench/minilm.py's PyTorch reference (the same forward pass in plain torch ops over
the same weights) agrees with fusegrad's encoder on a small random BERT, so the bench compares
like with like; its token batches are deterministic and framed by [CLS]/[SEP]."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from fusegrad import Tensor
from fusegrad.examples.embed import BertConfig, SentenceEncoder
from fusegrad.nn.state import get_state_dict, safe_save

pytestmark = pytest.mark.kernels
BENCH = Path(__file__).parents[3] / "tools" / "bench" / "minilm.py"
TINY = BertConfig(vocab_size=1200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=64)  # fmt: skip


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_minilm", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_bench_minilm"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_tokens_are_deterministic_and_framed() -> None:
    bench = _bench()
    ids, mask = bench.tokens(3, 10, TINY.vocab_size, seed=5)
    again, _ = bench.tokens(3, 10, TINY.vocab_size, seed=5)
    np.testing.assert_array_equal(ids, again)
    assert (ids[:, 0] == bench.CLS).all() and (ids[:, -1] == bench.SEP).all()
    assert mask.shape == (3, 10) and mask.all() and ids.max() < TINY.vocab_size


def test_torch_reference_matches_fusegrad(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    bench = _bench()
    model = SentenceEncoder(TINY)
    safe_save(get_state_dict(model), tmp_path / "model.safetensors")
    weights = bench.read_safetensors(tmp_path / "model.safetensors")
    assert weights.keys() == get_state_dict(model).keys()
    forward = bench.torch_model(weights, TINY.num_attention_heads, TINY.num_hidden_layers,
                                TINY.layer_norm_eps)  # fmt: skip
    ids, mask = bench.tokens(2, 9, TINY.vocab_size, seed=1)
    mask[1, 6:] = 0  # padding in the second row
    got = forward(ids, mask)
    want = model(Tensor(ids), Tensor(mask)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
