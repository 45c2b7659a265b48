"""MiniLM sentence embeddings (all-MiniLM-L6-v2): fusegrad next to PyTorch and JAX in the same
run.

    .venv/bin/python tools/bench/minilm.py [--quick] [--repeats 5] [--no-torch] [--no-jax]
                                           [--json FILE]

Two workloads (issue #11): **latency** at batch 1 x 16 tokens (ms per call) and
**throughput** at batch 32 x 128 tokens (sentences/s). For each shape, fusegrad runs through
``fusegrad.examples.embed.Embedder`` (a TinyJit per bucket): the *first call* (graph
building, scheduling, compiling, running; the on-disk compile cache is used as configured by
``CACHELEVEL``) is reported on its own, then the *capture* (TinyJit's second call), then the
*steady state*. PyTorch (``torch.inference_mode``, its default thread count) runs the same
forward pass written with plain torch ops over the same safetensors weights, and JAX (when
installed; ``jax.jit``, one thread per core) the same in ``jax.numpy``; their first calls
(JAX's: trace + compile + first run) are timed the same way. The steady state of all three
comes from the same rounds (``jaxref.rounds``: called round-robin ``--repeats`` times, each
timed call after a pause and 50 ms of untimed calls): the median (best in parentheses).
Ratios are the reference's time / fusegrad's (above 1: fusegrad is faster).

Token ids are deterministic random WordPiece ids framed by [CLS]/[SEP] with every position
attended (the full length: the worst case). The first calls' embeddings are compared before
the timing: fusegrad's and PyTorch's differing by more than 1e-3 (max abs), or JAX's and
PyTorch's by more than 1e-4, makes the run exit with status 1.

``--quick`` (CI-sized): 1 x 16 and 4 x 32, two replays. Run with ``tools/dev bench minilm``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import os
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

FULL_SHAPES = ((1, 16), (32, 128))
QUICK_SHAPES = ((1, 16), (4, 32))
CLS, SEP = 101, 102
TOLERANCE = 1e-3
#: JAX's embeddings against PyTorch's (max abs): the same float32 graph, summed in other orders
JAX_TOLERANCE = 1e-4


@functools.cache
def _jaxref() -> Any:
    sys.path.insert(0, str(Path(__file__).parent))  # the sibling module tools/bench/jaxref.py
    return importlib.import_module("jaxref")


# -- the PyTorch reference -------------------------------------------------------------------


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as NumPy arrays (F32/F16/I64), read independently
    of fusegrad's loader."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        data = np.frombuffer(raw[8 + n + begin : 8 + n + end], dtype=kinds[info["dtype"]])
        out[key] = data.reshape(info["shape"])
    return out


def torch_model(weights: dict[str, np.ndarray], heads: int, layers: int, eps: float) -> Any:
    """A function (ids, mask) -> embeddings: the BERT encoder, masked mean pooling and L2
    normalization in plain torch ops over ``weights`` (Hugging Face BERT key names)."""
    import torch
    import torch.nn.functional as F

    w = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()
         if v.dtype != np.int64}  # fmt: skip

    def ln(x: Any, p: str) -> Any:
        return F.layer_norm(x, x.shape[-1:], w[p + ".weight"], w[p + ".bias"], eps)

    def dense(x: Any, p: str) -> Any:
        return F.linear(x, w[p + ".weight"], w[p + ".bias"])

    def layer(x: Any, key_mask: Any, p: str) -> Any:
        b, n, h = x.shape
        q, k, v = (dense(x, f"{p}attention.self.{m}").view(b, n, heads, h // heads).transpose(1, 2)
                   for m in ("query", "key", "value"))  # fmt: skip
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask)
        ctx = ctx.transpose(1, 2).reshape(b, n, h)
        x = ln(dense(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        inner = F.gelu(dense(x, p + "intermediate.dense"))
        return ln(dense(inner, p + "output.dense") + x, p + "output.LayerNorm")

    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            tid, tmask = torch.from_numpy(ids).long(), torch.from_numpy(mask)
            e = "embeddings."
            x = (
                w[e + "word_embeddings.weight"][tid]
                + w[e + "position_embeddings.weight"][: ids.shape[1]]
            )
            x = ln(x + w[e + "token_type_embeddings.weight"][0], e + "LayerNorm")
            key_mask = tmask.bool()[:, None, None, :]
            for i in range(layers):
                x = layer(x, key_mask, f"encoder.layer.{i}.")
            m = tmask.float().unsqueeze(-1)
            pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return F.normalize(pooled, p=2.0, dim=1, eps=1e-12).numpy()

    return forward


# -- the JAX reference -----------------------------------------------------------------------


def jax_model(weights: dict[str, np.ndarray], heads: int, layers: int, eps: float) -> Any:
    """``torch_model``'s forward pass in ``jax.numpy``, jitted (the weights are an argument,
    put on the device once, not constants folded into the program); None without JAX."""
    jax, jnp = _jaxref().jax, _jaxref().jnp
    if jax is None:
        return None
    params = jax.device_put({k: np.asarray(v, dtype=np.float32) for k, v in weights.items()
                             if v.dtype != np.int64})  # fmt: skip

    def ln(w: Any, x: Any, p: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def dense(w: Any, x: Any, p: str) -> Any:
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    def attention(q: Any, k: Any, v: Any, key_mask: Any) -> Any:
        scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
        scores = jnp.where(key_mask, scores, -jnp.inf)  # as SDPA's boolean mask
        return jax.nn.softmax(scores, axis=-1) @ v

    def layer(w: Any, x: Any, key_mask: Any, p: str) -> Any:
        b, n, h = x.shape
        q, k, v = (dense(w, x, f"{p}attention.self.{m}").reshape(b, n, heads, h // heads)
                   .transpose(0, 2, 1, 3) for m in ("query", "key", "value"))  # fmt: skip
        ctx = attention(q, k, v, key_mask).transpose(0, 2, 1, 3).reshape(b, n, h)
        x = ln(w, dense(w, ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        inner = jax.nn.gelu(dense(w, x, p + "intermediate.dense"), approximate=False)
        return ln(w, dense(w, inner, p + "output.dense") + x, p + "output.LayerNorm")

    def embed(w: Any, ids: Any, mask: Any) -> Any:
        e = "embeddings."
        x = (
            w[e + "word_embeddings.weight"][ids]
            + w[e + "position_embeddings.weight"][: ids.shape[1]]
        )
        x = ln(w, x + w[e + "token_type_embeddings.weight"][0], e + "LayerNorm")
        key_mask = (mask != 0)[:, None, None, :]
        for i in range(layers):
            x = layer(w, x, key_mask, f"encoder.layer.{i}.")
        m = mask.astype(jnp.float32)[..., None]
        pooled = (x * m).sum(1) / jnp.maximum(m.sum(1), 1e-9)
        norm = jnp.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / jnp.maximum(norm, 1e-12)

    jitted = jax.jit(embed)

    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.asarray(jitted(params, ids, mask))  # waits for the result

    return forward


# -- timing ----------------------------------------------------------------------------------


def tokens(batch: int, length: int, vocab: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random token ids framed by [CLS] ... [SEP], every position attended."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, vocab, size=(batch, length)).astype(np.int32)
    ids[:, 0], ids[:, -1] = CLS, SEP
    return ids, np.ones((batch, length), dtype=np.int32)


def _timed(fn: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f} ms" if seconds < 10 else f"{seconds:9.2f} s "


def _row(name: str, r: dict[str, Any], batch: int) -> str:
    rate = batch / r["median"]
    return (f"  {name:<9} first {_fmt(r['first'])}  steady {_fmt(r['median'])} "
            f"(best {_fmt(r['best']).strip()})  {rate:8.1f} sentences/s")  # fmt: skip


#: the pairs of embeddings compared ("a-b"), and the max abs difference allowed
TOLERANCES = {"fusegrad-pytorch": TOLERANCE, "jax-pytorch": JAX_TOLERANCE,
              "jax-fusegrad": TOLERANCE}  # fmt: skip


def compare(outs: dict[str, np.ndarray]) -> dict[str, float]:
    """Max abs differences of the pairs in ``TOLERANCES`` present in ``outs`` (JAX against
    fusegrad only without PyTorch)."""
    pairs = [tuple(key.split("-")) for key in TOLERANCES]
    present = [(a, b) for a, b in pairs if a in outs and b in outs]
    if "pytorch" in outs:
        present = [p for p in present if p != ("jax", "fusegrad")]
    return {f"{a}-{b}": float(np.abs(outs[a] - outs[b]).max()) for a, b in present}


def bench_shape(
    ours: Any, refs: dict[str, Any], batch: int, length: int, vocab: int, repeats: int
) -> dict[str, Any]:
    """Time fusegrad and the references (name -> forward) at one shape, the steady state in
    the same rounds; print and return the numbers."""
    ids, mask = tokens(batch, length, vocab, seed=batch * 1000 + length)
    print(f"batch {batch} x {length} tokens")
    fns: dict[str, Callable[[], np.ndarray]] = {"fusegrad": lambda: ours(ids, mask)}
    fns |= {name: functools.partial(f, ids, mask) for name, f in refs.items()}
    firsts = {name: _timed(fn) for name, fn in fns.items()}
    warmups = {name: _timed(fn)[0] for name, fn in fns.items()}  # fusegrad's: the JIT capture
    diffs = compare({name: out for name, (_, out) in firsts.items()})  # before the timing
    secs = _jaxref().rounds(fns, repeats)
    result: dict[str, Any] = {"batch": batch, "length": length, "diffs": diffs}
    for name in fns:
        result[name] = {"first": firsts[name][0], "warmup": [warmups[name]],
                        "median": statistics.median(secs[name]), "best": min(secs[name])}  # fmt: skip
        capture = f"  (capture {_fmt(warmups[name]).strip()})" if name == "fusegrad" else ""
        print(_row(name, result[name], batch) + capture)
    mine = result["fusegrad"]
    for name in refs:
        speed = result[name]["median"] / mine["median"]
        first = result[name]["first"] / mine["first"]
        print(f"  ratio {name}/fusegrad: steady {speed:.3f}x, first call {first:.3f}x")
        prefix = "" if name == "pytorch" else f"{name}_"
        result.update({f"{prefix}ratio_steady": speed, f"{prefix}ratio_first": first})
    if diffs:
        print("  max abs diff: " + ", ".join(f"{k} {v:.2e}" for k, v in diffs.items()))
    if "fusegrad-pytorch" in diffs:
        result["max_abs_diff"] = diffs["fusegrad-pytorch"]
    return result


def _load_torch(folder: Path, config: Any, enabled: bool, threads: int) -> Any:
    if not enabled:
        return None
    try:
        import torch
    except ImportError:
        print("pytorch: not installed (pip install torch==2.13.0), no PyTorch rows")
        return None
    if threads > 0:
        torch.set_num_threads(threads)
    print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads")
    weights = read_safetensors(folder / "model.safetensors")
    heads, layers = config.num_attention_heads, config.num_hidden_layers
    return torch_model(weights, heads, layers, config.layer_norm_eps)


def _load_jax(folder: Path, config: Any, enabled: bool) -> Any:
    if not enabled:
        return None
    line = _jaxref().configure()
    if line is None:
        print("jax: not installed (pip install jax jaxlib), no JAX rows")
        return None
    print(line)
    weights = read_safetensors(folder / "model.safetensors")
    heads, layers = config.num_attention_heads, config.num_hidden_layers
    return jax_model(weights, heads, layers, config.layer_norm_eps)


def _failures(results: list[dict[str, Any]]) -> list[str]:
    """The comparisons past their tolerance (or not finite), as lines to print."""
    out = []
    for r in results:
        for pair, diff in r["diffs"].items():
            limit = TOLERANCES[pair]
            if not math.isfinite(diff) or diff > limit:
                shape = f"{r['batch']}x{r['length']}"
                out.append(f"FAIL: {shape}: {pair} differ by {diff:.2e} (> {limit})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI-sized: 1x16 and 4x32")
    parser.add_argument("--repeats", type=int, default=None, help="timed steady-state calls")
    parser.add_argument("--no-torch", action="store_true", help="no PyTorch rows")
    parser.add_argument("--no-jax", action="store_true", help="no JAX rows")
    parser.add_argument(
        "--torch-threads", type=int, default=0, help="PyTorch threads (0: its default)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    args = parser.parse_args(argv)
    from fusegrad.examples.embed import BertConfig, Embedder, load_model, model_dir
    from fusegrad.runtime import Device

    repeats = args.repeats or (2 if args.quick else 5)
    folder = model_dir()
    config = BertConfig.from_json(folder / "config.json")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"MiniLM-L6 bench on {Device.DEFAULT}, {os.cpu_count()} cores, load {load:.2f}, "
          f"CACHELEVEL={os.environ.get('CACHELEVEL', 'default')}")  # fmt: skip
    start = time.perf_counter()
    ours = Embedder(load_model(folder))
    print(f"fusegrad: model loaded in {time.perf_counter() - start:.2f} s")
    refs = {"pytorch": _load_torch(folder, config, not args.no_torch, args.torch_threads),
            "jax": _load_jax(folder, config, not args.no_jax)}  # fmt: skip
    refs = {name: f for name, f in refs.items() if f is not None}
    shapes = QUICK_SHAPES if args.quick else FULL_SHAPES
    results = [bench_shape(ours, refs, b, n, config.vocab_size, repeats) for b, n in shapes]
    if args.json is not None:
        args.json.write_text(json.dumps({"load": load, "shapes": results}, indent=1))
    failures = _failures(results)
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
