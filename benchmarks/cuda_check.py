"""The CUDA path in one command: parity with numpy, then decode-attention bandwidth on the device.

    python benchmarks/cuda_check.py                  # on the GPU torch sees (exit 2 if none)
    python benchmarks/cuda_check.py --device cpu     # the same checks on CPU torch (for CI)

1. Parity: the torch backend's paged decode attention and the tiny model's logits agree with the
   numpy reference on the device (max abs difference printed), and a short greedy run on the
   device generates the numpy tokens.
2. Bandwidth: paged decode attention over a batch of 1,024-token contexts (8 KV heads of 32 query
   heads, head dim 128, bf16 on a GPU, float32 on CPU), timed with the device synchronised;
   the K and V bytes read per second, and on a GPU that figure as a fraction of the HBM peak of
   the engine's hardware profile whose name appears in torch's device name (A10G, A100, H100,
   H200), if any.

Prints a table; exits 1 if parity fails, 2 if the device is not there.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere


def parity(torch, tb, device: str) -> list[tuple[str, str, bool]]:
    import numpy as np

    from kata.engine.attention import paged_decode_attention
    from kata.engine.config import EngineConfig
    from kata.engine.llm_engine import LLMEngine
    from kata.engine.sequence import SamplingParams

    rng = np.random.default_rng(0)
    k_cache, v_cache = rng.standard_normal((2, 64, 4, 2, 16)).astype(np.float32)
    q = rng.standard_normal((3, 4, 16)).astype(np.float32)
    tables, lens = [[5, 9, 2], [7], [1, 3, 8, 11]], [9, 3, 16]
    want = paged_decode_attention(q, k_cache, v_cache, tables, lens)
    t = [torch.as_tensor(a, device=device) for a in (q, k_cache, v_cache)]
    got = tb.paged_decode_attention(*t, tables, lens).cpu().numpy()
    attention_diff = float(np.abs(got - want).max())

    prompts, tokens = ["Hello, paged attention!", "KV"], {}
    for backend, dev in (("numpy", "cpu"), ("torch", device)):
        engine = LLMEngine(EngineConfig(backend=backend, device=dev))
        tokens[backend] = engine.generate(prompts, SamplingParams(max_tokens=8))
    return [
        ("paged decode attention, max |torch - numpy|", f"{attention_diff:.1e}", attention_diff < 1e-4),
        ("greedy tokens, torch == numpy", str(tokens["torch"] == tokens["numpy"]),
         tokens["torch"] == tokens["numpy"]),
    ]


def bandwidth(torch, tb, device: str, quick: bool) -> tuple[float, int]:
    """(bytes of K and V read per second, bytes read per call) for paged decode attention."""
    batch, ctx, kv_heads, heads, head_dim, bs = (8 if quick else 64), 1024, 8, 32, 128, 16
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    blocks = batch * ctx // bs
    gen = torch.Generator().manual_seed(0)
    k_cache = torch.randn((blocks, bs, kv_heads, head_dim), generator=gen).to(device, dtype)
    v_cache = torch.randn((blocks, bs, kv_heads, head_dim), generator=gen).to(device, dtype)
    q = torch.randn((batch, heads, head_dim), generator=gen).to(device, dtype)
    perm = torch.randperm(blocks, generator=gen).tolist()
    tables = [perm[i * (ctx // bs):(i + 1) * (ctx // bs)] for i in range(batch)]
    lens = [ctx] * batch

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()

    tb.paged_decode_attention(q, k_cache, v_cache, tables, lens)  # warm up
    sync()
    best = float("inf")
    for _ in range(3 if quick else 10):
        start = time.perf_counter()
        tb.paged_decode_attention(q, k_cache, v_cache, tables, lens)
        sync()
        best = min(best, time.perf_counter() - start)
    nbytes = 2 * batch * ctx * kv_heads * head_dim * k_cache.element_size()
    return nbytes / best, nbytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    parser.add_argument("--quick", action="store_true", help="a small batch (seconds, not minutes)")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: torch is not installed (CPU build: pip install torch==2.13.0)", file=sys.stderr)
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"error: --device {args.device}: torch sees no CUDA GPU here; "
              "run it on a GPU machine, or pass --device cpu", file=sys.stderr)
        return 2
    from kata.engine.backends import torch_backend as tb
    from kata.engine.hardware import HARDWARE

    name = torch.cuda.get_device_name(args.device) if args.device != "cpu" else "CPU"
    rows = parity(torch, tb, args.device)
    per_s, nbytes = bandwidth(torch, tb, args.device, args.quick)
    profile = next((h for key, h in HARDWARE.items() if key in name), None)
    peak = (f"{per_s / profile.hbm_bandwidth:.0%} of {profile.name} HBM"
            if profile is not None and args.device != "cpu" else "n/a")
    print(f"device: {name} ({args.device}), torch {torch.__version__}")
    print(f"{'check':<46} {'result':>12}  ok")
    for label, value, ok in rows:
        print(f"{label:<46} {value:>12}  {'yes' if ok else 'NO'}")
    print(f"{'decode attention, K+V read (' + f'{nbytes / 2**20:,.0f} MiB' + ')':<46} "
          f"{per_s / 1e9:>8.1f} GB/s  {peak}")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
