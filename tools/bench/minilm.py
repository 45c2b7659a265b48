"""MiniLM sentence embeddings (all-MiniLM-L6-v2): fusegrad next to PyTorch in the same run.

    .venv/bin/python tools/bench/minilm.py [--quick] [--repeats 5] [--no-torch] [--json FILE]

Two workloads (issue #11): **latency** at batch 1 x 16 tokens (ms per call) and
**throughput** at batch 32 x 128 tokens (sentences/s). For each shape, fusegrad runs through
``fusegrad.examples.embed.Embedder`` (a TinyJit per bucket): the *first call* (graph
building, scheduling, compiling, running; the on-disk compile cache is used as configured by
``CACHELEVEL``) is reported on its own, then the *capture* (TinyJit's second call), then the
*steady state*: the median over ``--repeats`` replays (best in parentheses). PyTorch
(``torch.inference_mode``, its default thread count) runs the same forward pass written with
plain torch ops over the same safetensors weights; its first call and steady state are timed
the same way. Ratios are PyTorch time / fusegrad time (above 1: fusegrad is faster).

Token ids are deterministic random WordPiece ids framed by [CLS]/[SEP] with every position
attended (the full length: the worst case). The embeddings of both are compared; a max abs
difference above 1e-3 makes the run exit with status 1.

``--quick`` (CI-sized): 1 x 16 and 4 x 32, two replays. Run with ``tools/dev bench minilm``.
"""

from __future__ import annotations

import argparse
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


def measure(fn: Callable[[], np.ndarray], repeats: int, warmup: int) -> dict[str, Any]:
    """First call, ``warmup`` more untimed-for-steady calls, then ``repeats`` timed ones."""
    first, out = _timed(fn)
    warm = [_timed(fn)[0] for _ in range(warmup)]
    times = [_timed(fn)[0] for _ in range(repeats)]
    return {"first": first, "warmup": warm, "median": statistics.median(times),
            "best": min(times), "out": out}  # fmt: skip


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f} ms" if seconds < 10 else f"{seconds:9.2f} s "


def _row(name: str, r: dict[str, Any], batch: int) -> str:
    rate = batch / r["median"]
    return (f"  {name:<9} first {_fmt(r['first'])}  steady {_fmt(r['median'])} "
            f"(best {_fmt(r['best']).strip()})  {rate:8.1f} sentences/s")  # fmt: skip


def bench_shape(
    ours: Any, theirs: Any, batch: int, length: int, vocab: int, repeats: int
) -> dict[str, Any]:
    """Time both at one shape; print and return the numbers."""
    ids, mask = tokens(batch, length, vocab, seed=batch * 1000 + length)
    print(f"batch {batch} x {length} tokens")
    result: dict[str, Any] = {"batch": batch, "length": length}
    mine = measure(lambda: ours(ids, mask), repeats, warmup=1)  # warmup = the JIT capture
    print(_row("fusegrad", mine, batch) + f"  (capture {_fmt(mine['warmup'][0]).strip()})")
    result["fusegrad"] = {k: v for k, v in mine.items() if k != "out"}
    if theirs is None:
        return result
    ref = measure(lambda: theirs(ids, mask), repeats, warmup=1)
    print(_row("pytorch", ref, batch))
    diff = float(np.abs(mine["out"] - ref["out"]).max())
    speed, first = ref["median"] / mine["median"], ref["first"] / mine["first"]
    print(f"  ratio pytorch/fusegrad: steady {speed:.3f}x, first call {first:.3f}x; "
          f"max abs diff {diff:.2e}")  # fmt: skip
    result["pytorch"] = {k: v for k, v in ref.items() if k != "out"}
    result.update(ratio_steady=speed, ratio_first=first, max_abs_diff=diff)
    return result


def _load_torch(folder: Path, config: Any, enabled: bool, threads: int) -> Any:
    if not enabled:
        return None
    try:
        import torch
    except ImportError:
        print("pytorch: not installed (pip install torch==2.13.0), fusegrad only")
        return None
    if threads > 0:
        torch.set_num_threads(threads)
    print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads")
    weights = read_safetensors(folder / "model.safetensors")
    heads, layers = config.num_attention_heads, config.num_hidden_layers
    return torch_model(weights, heads, layers, config.layer_norm_eps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI-sized: 1x16 and 4x32")
    parser.add_argument("--repeats", type=int, default=None, help="timed steady-state calls")
    parser.add_argument("--no-torch", action="store_true", help="fusegrad only")
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
    theirs = _load_torch(folder, config, not args.no_torch, args.torch_threads)
    shapes = QUICK_SHAPES if args.quick else FULL_SHAPES
    results = [bench_shape(ours, theirs, b, n, config.vocab_size, repeats) for b, n in shapes]
    if args.json is not None:
        args.json.write_text(json.dumps({"load": load, "shapes": results}, indent=1))
    worst = max((r.get("max_abs_diff", 0.0) for r in results), default=0.0)
    if not math.isfinite(worst) or worst > TOLERANCE:
        print(f"FAIL: fusegrad and pytorch differ by {worst:.2e} (> {TOLERANCE})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
