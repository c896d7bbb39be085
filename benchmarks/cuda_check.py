"""The CUDA path in one command: parity with numpy, then decode-attention bandwidth on the device.

    python benchmarks/cuda_check.py                  # on the GPU torch sees (exit 2 if none)
    python benchmarks/cuda_check.py --device cpu     # the same checks on CPU torch (for CI)

1. Parity: the torch backend's paged decode attention, the tiny model's logits in float32,
   bfloat16 and float16 (each within n machine epsilons of the format times the largest logit:
   32 for float32, 8 for the half formats)
   and the on-device sampler agree with the numpy reference on the device (differences
   printed), and a short greedy run on the device generates the numpy tokens.
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


# logits within n * eps(dtype) * max|logits| of numpy's (the tests' bound: tests/engine/
# test_torch_backend.py; float32 is wider because the reference rounds in float32 too)
TOLERANCE_EPS = {"float32": 32, "bfloat16": 8, "float16": 8}


def parity(torch, tb, device: str) -> list[tuple[str, str, bool]]:
    import numpy as np

    from kata.engine.attention import AttentionMetadata, PrefillChunk, paged_decode_attention
    from kata.engine.backends.torch_model import TorchModel, sample_on_device
    from kata.engine.config import EngineConfig, ModelConfig
    from kata.engine.kv_cache import KVCache
    from kata.engine.llm_engine import LLMEngine
    from kata.engine.model import TinyModel, sample_row
    from kata.engine.sequence import SamplingParams

    rng = np.random.default_rng(0)
    k_cache, v_cache = rng.standard_normal((2, 64, 4, 2, 16)).astype(np.float32)
    q = rng.standard_normal((3, 4, 16)).astype(np.float32)
    tables, lens = [[5, 9, 2], [7], [1, 3, 8, 11]], [9, 3, 16]
    want = paged_decode_attention(q, k_cache, v_cache, tables, lens)
    t = [torch.as_tensor(a, device=device) for a in (q, k_cache, v_cache)]
    got = tb.paged_decode_attention(*t, tables, lens).cpu().numpy()
    attention_diff = float(np.abs(got - want).max())
    rows = [("paged decode attention, max |torch - numpy|", f"{attention_diff:.1e}",
             attention_diff < 1e-4)]

    model = TinyModel(ModelConfig(max_model_len=128))  # a 40-token prompt, every row's logits
    ids = rng.integers(0, 256, 40)
    meta = AttentionMetadata(slot_mapping=np.arange(40), num_prefill_tokens=40,
                             prefills=[PrefillChunk(0, 40, 0, list(range(10)))],
                             sample_rows=np.arange(40))
    ref = model.forward(ids, np.arange(40), meta, KVCache(2, 16, 4, 2, 16))
    for dtype in ("float32", "bfloat16", "float16"):
        cache = tb.TorchKVCache(2, 16, 4, 2, 16, dtype=dtype, device=device)
        got = TorchModel(model, device=device, dtype=dtype).forward(ids, np.arange(40), meta, cache)
        err = float(np.abs(got.cpu().numpy() - ref).max())
        bound = TOLERANCE_EPS[dtype] * torch.finfo(tb.DTYPES[dtype]).eps * float(np.abs(ref).max())
        rows.append((f"logits {dtype}, max |torch - numpy| (bound)", f"{err:.1e} ({bound:.0e})",
                     err <= bound))

    logits = rng.standard_normal((64, 258)) * 3
    args = (rng.choice([0.0, 0.5, 1.0], 64), rng.choice([0, 1, 5], 64),
            rng.choice([1.0, 0.9, 0.3], 64), rng.random(64))
    want_tokens = [sample_row(*a) for a in zip(logits, *args, strict=True)]
    got_tokens = sample_on_device(torch.as_tensor(logits, device=device),
                                  *(torch.as_tensor(a, device=device) for a in args)).tolist()
    rows.append(("sampling on the device == numpy's draws", str(got_tokens == want_tokens),
                 got_tokens == want_tokens))

    prompts, tokens = ["Hello, paged attention!", "KV"], {}
    for backend, dev in (("numpy", "cpu"), ("torch", device)):
        engine = LLMEngine(EngineConfig(backend=backend, device=dev))
        outs = engine.generate(prompts, SamplingParams(max_tokens=8, temperature=0))
        tokens[backend] = [o.outputs[0].token_ids for o in outs]
    rows.append(("greedy tokens, torch == numpy", str(tokens["torch"] == tokens["numpy"]),
                 tokens["torch"] == tokens["numpy"]))
    return rows


def bandwidth(torch, tb, device: str, quick: bool) -> tuple[float, int]:
    """(bytes of K and V read per second, bytes read per call) for paged decode attention."""
    batch, ctx, kv_heads, heads, head_dim, bs = (8 if quick else 64), 1024, 8, 32, 128, 16
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    blocks = batch * ctx // bs
    gen = torch.Generator().manual_seed(0)
    k_cache = torch.randn((blocks, bs, kv_heads, head_dim), generator=gen).to(device, dtype)
    v_cache = torch.randn((blocks, bs, kv_heads, head_dim), generator=gen).to(device, dtype)
    q = torch.randn((batch, heads, head_dim), generator=gen).to(device, dtype)
    perm = torch.randperm(blocks, generator=gen)
    tables = perm.view(batch, ctx // bs).to(device)  # as the engine's StepInputs hold them
    lens = torch.full((batch,), ctx, device=device)

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
    print(f"{'check':<46} {'result':>16}  ok")
    for label, value, ok in rows:
        print(f"{label:<46} {value:>16}  {'yes' if ok else 'NO'}")
    print(f"{'decode attention, K+V read (' + f'{nbytes / 2**20:,.0f} MiB' + ')':<46} "
          f"{per_s / 1e9:>12.1f} GB/s  {peak}")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
