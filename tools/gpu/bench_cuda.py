"""fusegrad on CUDA next to PyTorch CUDA: 4096^2 matmul (fp32, fp16) and MiniLM-shaped inference.

    python tools/gpu/bench_cuda.py [--size 4096] [--repeats 5] [--json FILE] [--no-torch]
                                   [--device CUDA] [--quick]

``--device`` runs fusegrad elsewhere (PyTorch then stays off: a dry run of the script);
``--quick``: 256^2 matmuls and MiniLM 2 x 16.

**matmul**: ``a @ b`` on device CUDA, inputs realized first; the median of ``--repeats``
timed calls after two warm-ups, each call synchronized (TFLOP/s = 2 n^3 / time). The result
is compared with PyTorch's on the same inputs (max relative error printed).

**tensor cores**: the same n x n product with float16 inputs and float32 accumulation on
``mma.sync`` m16n8k16 (``tools/gpu/tensor_cores.py``: explicit TC opts; 1 or 4 warps per
block, 1, 4 or 8 mmas per warp and K step), timed the same way; the result is compared with
NumPy's float32 matmul of the same inputs (max relative error 1e-3). Skipped where the
device's renderer declares no tensor cores.

**MiniLM 32 x 128**: the all-MiniLM-L6-v2 architecture (``fusegrad.examples.embed``) with
random weights (no download needed), batch 32 x 128 tokens through its TinyJit ``Embedder``
with ``DEV=CUDA``; PyTorch runs the same forward pass on the GPU over the same weights. Max
abs difference of the embeddings printed.

Ratios are PyTorch time / fusegrad time (above 1: fusegrad is faster). Exits 1 when results
differ beyond tolerance (matmul fp32 1e-3 relative, fp16 2e-2; embeddings 1e-3).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _median_time(fn: Callable[[], Any], sync: Callable[[], None], repeats: int) -> float:
    for _ in range(2):
        fn()
        sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def bench_matmul(n: int, dtype: str, repeats: int, torch: Any, device: str) -> dict[str, Any]:
    """fusegrad (and PyTorch) ``a @ b`` at n x n."""
    from fusegrad import Tensor
    from fusegrad.runtime import Device

    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((n, n)).astype(dtype)
    b_np = rng.standard_normal((n, n)).astype(dtype)
    a, b = Tensor(a_np, device=device).realize(), Tensor(b_np, device=device).realize()
    dev = Device[device]
    out: dict[str, Any] = {"n": n, "dtype": dtype}
    result: list[Any] = []

    def ours() -> None:
        result[:] = [(a @ b).realize()]

    seconds = _median_time(ours, dev.synchronize, repeats)
    out["fusegrad_s"], out["fusegrad_tflops"] = seconds, 2 * n**3 / seconds / 1e12
    print(
        f"matmul {n} {dtype}: fusegrad {seconds * 1e3:8.2f} ms {out['fusegrad_tflops']:7.2f} TFLOP/s"
    )
    if torch is None:
        return out
    ta, tb = torch.from_numpy(a_np).cuda(), torch.from_numpy(b_np).cuda()
    t_seconds = _median_time(lambda: ta @ tb, torch.cuda.synchronize, repeats)
    out["torch_s"], out["ratio"] = t_seconds, t_seconds / seconds
    want = (ta @ tb).float().cpu().numpy()
    got = result[0].float().numpy()
    out["max_rel_err"] = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"matmul {n} {dtype}: pytorch  {t_seconds * 1e3:8.2f} ms  ratio pytorch/fusegrad "
          f"{out['ratio']:.3f}x  max rel err {out['max_rel_err']:.2e}")  # fmt: skip
    return out


def bench_tc_matmul(n: int, repeats: int, device: str) -> list[dict[str, Any]]:
    """float16 x float16 -> float32 ``n x n`` matmuls on tensor cores (mma.sync)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from fusegrad import Tensor
    from fusegrad.runtime import Device
    from fusegrad.uop import dtypes
    from tensor_cores import BLOCKED, tc_matmul, tc_source  # type: ignore[import-not-found]

    rng = np.random.default_rng(3)
    a_np = rng.standard_normal((n, n)).astype(np.float16)
    b_np = rng.standard_normal((n, n)).astype(np.float16)
    a, b = Tensor(a_np, device=device).realize(), Tensor(b_np, device=device).realize()
    want = a_np.astype(np.float32) @ b_np.astype(np.float32)
    dev, found = Device[device], []
    blocked8 = (("UPCAST", 0, 4), ("UPCAST", 1, 2), ("LOCAL", 0, 2), ("LOCAL", 1, 2))
    variants = ((), (("LOCAL", 0, 2), ("LOCAL", 1, 2)), BLOCKED, blocked8)
    for extra in variants:
        run = tc_matmul(a, b, device, extra)
        seconds = _median_time(run, dev.synchronize, repeats)
        got = run().numpy()
        err = float(np.abs(got - want).max() / np.abs(want).max())
        mma = "mma.sync" in tc_source(n, n, n, dtypes.float16, device, extra)
        out = {"n": n, "opts": [list(x) for x in extra], "fusegrad_s": seconds}
        out.update(fusegrad_tflops=2 * n**3 / seconds / 1e12, max_rel_err=err, mma=mma)
        found.append(out)
        print(f"tc matmul {n} f16->f32 opts {list(extra)}: {seconds * 1e3:8.2f} ms "
              f"{out['fusegrad_tflops']:7.2f} TFLOP/s  mma.sync {mma}  max rel err {err:.2e}")  # fmt: skip
    return found


# -- MiniLM-shaped inference -------------------------------------------------------------------


def _random_weights(model: Any) -> dict[str, np.ndarray]:
    from fusegrad.nn.state import get_state_dict

    rng = np.random.default_rng(1)
    out = {}
    for name, t in get_state_dict(model).items():
        shape = tuple(int(x) for x in t.shape)
        if name.endswith("LayerNorm.weight"):
            out[name] = (1 + 0.05 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[name] = (0.05 * rng.standard_normal(shape)).astype(np.float32)
    return out


def _torch_forward(torch: Any, w: dict[str, np.ndarray], heads: int, layers: int) -> Any:
    import torch.nn.functional as F

    t = {k: torch.from_numpy(v).cuda() for k, v in w.items()}

    def ln(x: Any, p: str) -> Any:
        return F.layer_norm(x, x.shape[-1:], t[p + ".weight"], t[p + ".bias"], 1e-12)

    def dense(x: Any, p: str) -> Any:
        return F.linear(x, t[p + ".weight"], t[p + ".bias"])

    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            tid, tmask = torch.from_numpy(ids).long().cuda(), torch.from_numpy(mask).cuda()
            e = "embeddings."
            x = (
                t[e + "word_embeddings.weight"][tid]
                + t[e + "position_embeddings.weight"][: ids.shape[1]]
            )
            x = ln(x + t[e + "token_type_embeddings.weight"][0], e + "LayerNorm")
            key_mask = tmask.bool()[:, None, None, :]
            for i in range(layers):
                p = f"encoder.layer.{i}."
                b, n, h = x.shape
                q, k, v = (
                    dense(x, f"{p}attention.self.{m}").view(b, n, heads, h // heads).transpose(1, 2)
                    for m in ("query", "key", "value")
                )
                ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask)
                ctx = ctx.transpose(1, 2).reshape(b, n, h)
                x = ln(
                    dense(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm"
                )
                inner = F.gelu(dense(x, p + "intermediate.dense"))
                x = ln(dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
            m = tmask.float().unsqueeze(-1)
            pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
            out = F.normalize(pooled, p=2.0, dim=1, eps=1e-12)
            torch.cuda.synchronize()
            return out.cpu().numpy()

    return forward


def bench_minilm(batch: int, length: int, repeats: int, torch: Any, device: str) -> dict[str, Any]:
    """MiniLM-L6-shaped encoder, random weights, on CUDA (and PyTorch CUDA)."""
    from fusegrad import Tensor
    from fusegrad.examples.embed import BertConfig, Embedder, SentenceEncoder
    from fusegrad.nn.state import load_state_dict

    config = BertConfig()
    model = SentenceEncoder(config)
    weights = _random_weights(model)
    load_state_dict(model, {k: Tensor(v, device=device) for k, v in weights.items()})
    ours = Embedder(model)
    rng = np.random.default_rng(2)
    ids = rng.integers(1000, config.vocab_size, size=(batch, length)).astype(np.int32)
    mask = np.ones((batch, length), dtype=np.int32)
    start = time.perf_counter()
    mine = ours(ids, mask)
    first = time.perf_counter() - start
    seconds = _median_time(lambda: ours(ids, mask), lambda: None, repeats)
    out: dict[str, Any] = {"batch": batch, "length": length, "first_s": first}
    out["fusegrad_s"], out["fusegrad_per_s"] = seconds, batch / seconds
    print(f"minilm {batch}x{length}: fusegrad first {first:.2f} s, steady {seconds * 1e3:8.2f} ms "
          f"({batch / seconds:8.1f} sentences/s)")  # fmt: skip
    if torch is None:
        return out
    theirs = _torch_forward(torch, weights, config.num_attention_heads, config.num_hidden_layers)
    t_seconds = _median_time(lambda: theirs(ids, mask), lambda: None, repeats)
    out["torch_s"], out["ratio"] = t_seconds, t_seconds / seconds
    out["max_abs_diff"] = float(np.abs(mine - theirs(ids, mask)).max())
    print(f"minilm {batch}x{length}: pytorch  {t_seconds * 1e3:8.2f} ms  ratio pytorch/fusegrad "
          f"{out['ratio']:.3f}x  max abs diff {out['max_abs_diff']:.2e}")  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--device", default="CUDA")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    os.environ["DEV"] = args.device  # the Embedder's inputs go to the default device
    from fusegrad.runtime import Device

    dev = Device[args.device]
    print(f"device: {dev!r}")
    use_torch = not args.no_torch and args.device.upper().startswith("CUDA")
    torch = _torch() if use_torch else None
    size, (batch, length) = (256, (2, 16)) if args.quick else (args.size, (32, 128))
    print(f"pytorch: {torch.__version__ if torch else 'not available'}")
    results: dict[str, Any] = {"device": repr(dev), "matmul": [], "minilm": None}
    ok = True
    for dtype, tol in (("float32", 1e-3), ("float16", 2e-2)):
        r = bench_matmul(size, dtype, args.repeats, torch, args.device)
        results["matmul"].append(r)
        ok &= r.get("max_rel_err", 0.0) <= tol
    results["tensor_cores"] = []
    if getattr(dev.renderer, "tensor_cores", ()):
        for r in bench_tc_matmul(size, args.repeats, args.device):
            results["tensor_cores"].append(r)
            ok &= r["mma"] and r["max_rel_err"] <= 1e-3
    else:
        print(f"tensor cores: none on {dev.renderer!r}, skipped")
    r = bench_minilm(batch, length, args.repeats, torch, args.device)
    results["minilm"] = r
    ok &= r.get("max_abs_diff", 0.0) <= 1e-3
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    print("OK" if ok else "FAIL: results differ beyond tolerance")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
