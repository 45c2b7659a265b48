"""The JAX references of tools/bench (jaxref.py, and its use in train.py and minilm.py): the
round-robin timer times every function once a round in turn; without JAX they step aside; with
JAX (and PyTorch) installed, JAX's MLP steps follow PyTorch's loss curve and its MiniLM forward
pass gives PyTorch's embeddings, so the benchmarks compare like with like. JAX is optional
(not in the test requirements): those tests skip without it."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from fusegrad.examples.embed import BertConfig, SentenceEncoder
from fusegrad.nn.state import get_state_dict, safe_save

BENCH = Path(__file__).parents[3] / "tools" / "bench"
TINY = BertConfig(vocab_size=1200, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=64)  # fmt: skip


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"_bench_{name}"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_rounds_times_each_function_once_a_round_in_turn() -> None:
    jaxref = _load("jaxref")
    calls: list[str] = []
    ticks = itertools.count()
    fns = {name: (lambda name=name: calls.append(name)) for name in ("a", "b", "c")}
    secs = jaxref.rounds(fns, 3, clock=lambda: float(next(ticks)), pause=0.0, warm=0.0)
    # one untimed call (warm=0 still warms once), then the timed one, each in turn
    assert calls == ["a", "a", "b", "b", "c", "c"] * 3
    assert secs == {"a": [1.0] * 3, "b": [1.0] * 3, "c": [1.0] * 3}


def test_without_jax_the_references_step_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    jaxref = _load("jaxref")
    monkeypatch.setattr(jaxref, "jax", None)
    assert jaxref.configure() is None
    assert jaxref.jit_call(lambda x: x, np.ones(3, np.float32)) is None


def test_minilm_compares_jax_with_pytorch_when_both_ran() -> None:
    minilm = _load("minilm")
    one, two = np.zeros((1, 4), np.float32), np.full((1, 4), 1e-5, np.float32)
    with_torch = minilm.compare({"fusegrad": one, "pytorch": one, "jax": two})
    assert with_torch == pytest.approx({"fusegrad-pytorch": 0.0, "jax-pytorch": 1e-5})
    assert minilm.compare({"fusegrad": one, "jax": two}) == pytest.approx({"jax-fusegrad": 1e-5})


def test_jit_call_binds_its_arguments_and_reports_the_first_call() -> None:
    pytest.importorskip("jax")
    jaxref = _load("jaxref")
    jaxref.configure()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    call = jaxref.jit_call(lambda x, y: x @ y, a, a.T)
    assert call is not None and call.first > 0
    np.testing.assert_allclose(call.out, a @ a.T)
    np.testing.assert_allclose(np.asarray(call()), a @ a.T)


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_jax_training_steps_follow_torch_loss_curve(opt: str) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("torch")
    train = _load("train")
    train._jaxref().configure()
    sizes = (784, 32, 10)
    theirs, ours = train.torch_step(opt, sizes), train.jax_step(opt, sizes)
    want = [theirs() for _ in range(6)]
    got = [ours() for _ in range(6)]
    assert want[-1] < want[0]  # it trains: the curve says something
    np.testing.assert_allclose(got, want, rtol=train.CURVE_RTOL)


@pytest.mark.kernels
def test_jax_minilm_forward_matches_torch(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("torch")
    minilm = _load("minilm")
    minilm._jaxref().configure()
    safe_save(get_state_dict(SentenceEncoder(TINY)), tmp_path / "model.safetensors")
    weights = minilm.read_safetensors(tmp_path / "model.safetensors")
    config = (TINY.num_attention_heads, TINY.num_hidden_layers, TINY.layer_norm_eps)
    theirs, ours = minilm.torch_model(weights, *config), minilm.jax_model(weights, *config)
    ids, mask = minilm.tokens(2, 9, TINY.vocab_size, seed=1)
    mask[1, 6:] = 0  # padding in the second row
    np.testing.assert_allclose(ours(ids, mask), theirs(ids, mask), rtol=1e-5, atol=1e-5)
