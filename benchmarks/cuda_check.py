"""The CUDA path in one command: parity with numpy, then decode attention and a decode step.

    python benchmarks/cuda_check.py                  # on the GPU torch sees (exit 2 if none)
    python benchmarks/cuda_check.py --device cpu     # the checks on CPU torch (for CI); the GPU
                                                     # parts are skipped, with a line saying so

1. Parity: the torch backend's paged decode attention (on CUDA with triton installed, the fused
   kernel of kata/engine/backends/triton_attention.py), the tiny model's logits in float32,
   bfloat16 and float16 (each within n machine epsilons of the format times the largest logit:
   32 for float32, 8 for the half formats) and the on-device sampler agree with the numpy
   reference on the device (differences printed), and a short greedy run on the device
   generates the numpy tokens.
2. Decode attention bandwidth. On CPU: the gather path over a batch of 1,024-token contexts,
   float32. On a GPU, for four shapes (batch x context 64x1024, 8x1024, 64x4096, 256x2048; 8 KV
   heads of 32 query heads, head dim 128, block 16, bfloat16, blocks shuffled through the pool):
   the gather path (every block copied into a padded tensor, then SDPA), SDPA on contiguous K/V
   (no paging at all: the floor of an unfused kernel) and the fused kernel (its split count in
   brackets), then the best of a small sweep of the kernel's tile and warps; each as K+V bytes
   read per second and as a share of the HBM peak of the engine's hardware profile whose name
   is in torch's device name (A10G, A100, H100, H200). A call reads buffers the previous calls
   did not, so no K/V comes from L2.
3. On a GPU, a decode step of the llama-3.2-1b preset (its real shape, seeded weights, bfloat16,
   1,024-token contexts) at batch 1 and 64, beside its roofline: the bytes the step must read
   (every weight but the embedding, and the batch's K/V) over the HBM peak.

Prints tables; exits 1 if parity fails, 2 if the device is not there.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere

from kata.engine.arith import cdiv  # noqa: E402

# logits within n * eps(dtype) * max|logits| of numpy's (the tests' bound: tests/engine/
# test_torch_backend.py; float32 is wider because the reference rounds in float32 too)
TOLERANCE_EPS = {"float32": 32, "bfloat16": 8, "float16": 8}
SHAPES = [(64, 1024), (8, 1024), (64, 4096), (256, 2048)]  # (batch, context)
KV_HEADS, HEADS, HEAD_DIM, BLOCK = 8, 32, 128, 16
SWEEP = [(n, w) for n in (32, 64, 128) for w in (4, 8)]  # the kernel's (block_n, num_warps)


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


def cpu_bandwidth(torch, tb, quick: bool) -> tuple[float, int]:
    """(bytes of K and V read per second, bytes per call): the gather path on CPU, float32."""
    batch, ctx = (8 if quick else 64), 1024
    blocks = batch * ctx // BLOCK
    gen = torch.Generator().manual_seed(0)
    k_cache, v_cache = torch.randn((2, blocks, BLOCK, KV_HEADS, HEAD_DIM), generator=gen)
    q = torch.randn((batch, HEADS, HEAD_DIM), generator=gen)
    tables = torch.randperm(blocks, generator=gen).view(batch, ctx // BLOCK)
    lens = torch.full((batch,), ctx)
    tb.paged_decode_attention(q, k_cache, v_cache, tables, lens)  # warm up
    best = float("inf")
    for _ in range(3 if quick else 10):
        start = time.perf_counter()
        tb.paged_decode_attention(q, k_cache, v_cache, tables, lens)
        best = min(best, time.perf_counter() - start)
    nbytes = 2 * batch * ctx * KV_HEADS * HEAD_DIM * k_cache.element_size()
    return nbytes / best, nbytes


def gpu_seconds(torch, fn, calls: int, rounds: int = 5) -> float:
    """Seconds per call of fn(i), i in range(calls) (each call on its own buffers), the best of
    `rounds` rounds timed with CUDA events, after one call to compile and warm up."""
    fn(0)
    best = float("inf")
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(calls):
            fn(i)
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / calls)
    return best


def attention_inputs(torch, batch: int, ctx: int, device: str):
    """q, K/V caches holding `copies` disjoint sets of the batch's blocks (shuffled), a block
    table per copy, the lengths, and contiguous (batch, KH, ctx, D) K/V per copy. Enough copies
    that one round of calls reads 4x the L2 cache."""
    props = torch.cuda.get_device_properties(device)
    per_call = 2 * batch * ctx * KV_HEADS * HEAD_DIM * 2
    copies = min(16, max(1, cdiv(4 * getattr(props, "L2_cache_size", 64 << 20), per_call)))
    nb = batch * ctx // BLOCK
    gen = torch.Generator(device).manual_seed(0)
    shape = (copies * nb, BLOCK, KV_HEADS, HEAD_DIM)
    k_cache = torch.randn(shape, generator=gen, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(shape, generator=gen, device=device, dtype=torch.bfloat16)
    q = torch.randn((batch, HEADS, HEAD_DIM), generator=gen, device=device, dtype=torch.bfloat16)
    perm = torch.randperm(copies * nb, generator=gen, device=device)
    tables = [perm[c * nb:(c + 1) * nb].view(batch, ctx // BLOCK) for c in range(copies)]
    lens = torch.full((batch,), ctx, device=device)
    contiguous = [tuple(cache[t].view(batch, ctx, KV_HEADS, HEAD_DIM).transpose(1, 2).contiguous()
                        for cache in (k_cache, v_cache)) for t in tables]
    return q, k_cache, v_cache, tables, lens, contiguous, per_call


def attention_row(torch, tb, ta, batch: int, ctx: int, device: str, peak: float | None) -> str:
    """One shape's line: gather + SDPA, SDPA on contiguous K/V, the kernel, the sweep's best."""
    import torch.nn.functional as F

    q, k_cache, v_cache, tables, lens, contiguous, nbytes = attention_inputs(torch, batch, ctx, device)
    copies = len(tables)

    def rate(seconds: float) -> str:
        share = f" {nbytes / seconds / peak:4.0%}" if peak else ""
        return f"{nbytes / seconds / 1e9:6,.0f} GB/s{share}"

    gather = gpu_seconds(torch, lambda i: tb.gather_decode_attention(
        q, k_cache, v_cache, tables[i], lens), copies)
    q4 = q[:, :, None, :]
    floor = gpu_seconds(torch, lambda i: F.scaled_dot_product_attention(
        q4, *contiguous[i], enable_gqa=True), copies)
    cells = [rate(gather), rate(floor)]
    head = f"{batch:>4} x {ctx:<6} {nbytes / 2**20:8,.0f}  "
    if ta is None:
        return head + "  ".join(cells) + "  (triton is not installed: no fused kernel)"
    splits = ta.choose_splits(batch, KV_HEADS, ctx,
                              torch.cuda.get_device_properties(device).multi_processor_count)
    fused = gpu_seconds(torch, lambda i: ta.paged_decode_attention(
        q, k_cache, v_cache, tables[i], lens), copies)
    sweep = {(n, w): gpu_seconds(torch, lambda i, n=n, w=w: ta.paged_decode_attention(
        q, k_cache, v_cache, tables[i], lens, block_n=n, num_warps=w), copies, rounds=3)
        for n, w in SWEEP}
    (n, w), best = min(sweep.items(), key=lambda kv: kv[1])
    diff = (ta.paged_decode_attention(q, k_cache, v_cache, tables[0], lens).float()
            - tb.gather_decode_attention(q, k_cache, v_cache, tables[0], lens).float()).abs().max()
    cells += [f"{rate(fused)} ({splits})".ljust(21), f"{rate(best)} (n{n} w{w})".ljust(27),
              f"{float(diff):.0e}"]
    return head + "  ".join(cells)


def attention_table(torch, tb, device: str, profile) -> None:
    try:
        from kata.engine.backends import triton_attention as ta
    except ImportError:
        ta = None
    peak = profile.hbm_bandwidth if profile is not None else None
    where = f"share of {profile.name} HBM, {peak / 1e12:.2f} TB/s" if peak else "no HBM peak known"
    print(f"\ndecode attention, bfloat16, {KV_HEADS} KV / {HEADS} query heads, head dim {HEAD_DIM}, "
          f"block {BLOCK}: K+V bytes read per second ({where})")
    print(f"{'batch x ctx':<13} {'K+V MiB':>8}  {'gather + SDPA':<16}  {'SDPA, contiguous':<16}  "
          f"{'fused kernel (splits)':<21}  {'best of sweep (tile, warps)':<27}  |fused - gather|")
    for batch, ctx in SHAPES:
        print(attention_row(torch, tb, ta, batch, ctx, device, peak), flush=True)
        torch.cuda.empty_cache()


def model_steps(torch, device: str, profile, context: int = 1024) -> None:
    """llama-3.2-1b decode steps (forward only) at batch 1 and 64 beside the roofline."""
    from dataclasses import replace

    import numpy as np

    from kata.engine.attention import AttentionMetadata
    from kata.engine.backends.torch_backend import TorchKVCache
    from kata.engine.backends.torch_model import TorchModel
    from kata.engine.config import MODEL_PRESETS

    cfg = replace(MODEL_PRESETS["llama-3.2-1b"], max_model_len=4096)
    model = TorchModel.for_config(cfg, device=device, dtype="bfloat16")
    per_seq, batches = cdiv(context, BLOCK), (1, 64)
    cache = TorchKVCache(cfg.num_layers, max(batches) * per_seq, BLOCK, cfg.num_kv_heads,
                         cfg.head_dim, dtype="bfloat16", device=device)
    print(f"\nllama-3.2-1b decode step, bfloat16, {context:,}-token contexts (forward, no "
          f"sampling; {model.bytes_per_step / 1e9:.2f} GB of weights read per step)")
    for b in batches:
        tables = [list(range(i * per_seq, (i + 1) * per_seq)) for i in range(b)]
        meta = AttentionMetadata(
            slot_mapping=np.array([t[-1] * BLOCK + (context - 1) % BLOCK for t in tables]),
            decode_block_tables=tables, decode_context_lens=[context] * b,
            sample_rows=np.arange(b))
        ids, pos = np.full(b, 65), np.full(b, context - 1)
        seconds = gpu_seconds(torch, lambda i, ids=ids, pos=pos, meta=meta: model.forward(
            ids, pos, meta, cache), 10, rounds=3)
        kv = b * context * cfg.kv_bytes_per_token
        line = f"  batch {b:>3}: {seconds * 1e3:7.2f} ms"
        if profile is not None:
            roof = (model.bytes_per_step + kv) / profile.hbm_bandwidth
            line += (f"   roofline {roof * 1e3:6.2f} ms ({model.bytes_per_step / 1e9:.2f} GB weights"
                     f" + {kv / 1e9:.2f} GB KV at {profile.hbm_bandwidth / 1e12:.2f} TB/s): "
                     f"{roof / seconds:.0%} of it")
        print(line, flush=True)


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

    gpu = args.device != "cpu"
    name = torch.cuda.get_device_name(args.device) if gpu else "CPU"
    profile = next((h for key, h in HARDWARE.items() if key in name), None) if gpu else None
    fused = "fused kernel" if gpu and tb.fused_decode_attention() else "gather + SDPA"
    print(f"device: {name} ({args.device}), torch {torch.__version__}; decode attention: {fused}")
    rows = parity(torch, tb, args.device)
    print(f"{'check':<46} {'result':>16}  ok")
    for label, value, ok in rows:
        print(f"{label:<46} {value:>16}  {'yes' if ok else 'NO'}")
    if not gpu:
        per_s, nbytes = cpu_bandwidth(torch, tb, args.quick)
        print(f"{'decode attention, K+V read (' + f'{nbytes / 2**20:,.0f} MiB' + ')':<46} "
              f"{per_s / 1e9:>12.1f} GB/s  n/a")
        print("GPU parts skipped (no CUDA device): the fused kernel against gather and SDPA on "
              "four shapes, and llama-3.2-1b's decode step against its roofline")
    else:
        attention_table(torch, tb, args.device, profile)
        model_steps(torch, args.device, profile)
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
