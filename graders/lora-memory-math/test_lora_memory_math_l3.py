"""Hidden suite of `lora-memory-math`, level 3: inference memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lora_memory_math_oracle import (KV_DTYPES, LLAMA2_70B, LLAMA2_7B, WEIGHT_DTYPES, cfg_of, check_int, configs,
                                     o_kv_per_token, o_max_context, o_max_requests, o_weight_bytes, show)

from kata.checks import check_raises, compare_speed, graded, load_reference, property_settings

PROPERTY = property_settings(30)  # built at import, after the derandomized profile is loaded


@graded(3, 3, "published: Llama-2-7B caches 512 KiB per token in bf16")
def test_kv_llama2_7b(impl):
    # 2 (K, V) * 32 layers * 32 heads * 128 dims * 2 bytes = 524,288 = 512 * 1024
    check_int(impl.kv_bytes_per_token(cfg_of(impl, LLAMA2_7B)), 512 * 1024, "kv_bytes_per_token(Llama-2-7B)")


@graded(3, 3, "published: Llama-2-70B with 8 KV heads caches 320 KiB per token in bf16")
def test_kv_llama2_70b(impl):
    # 2 * 80 layers * 8 kv heads * 128 dims * 2 bytes = 327,680 = 320 * 1024 (64 heads would be 2.5 MiB)
    check_int(impl.kv_bytes_per_token(cfg_of(impl, LLAMA2_70B)), 320 * 1024, "kv_bytes_per_token(Llama-2-70B)")


@graded(3, 2, "multi-query attention: one KV head")
def test_kv_mqa(impl):
    # 2 * 32 layers * 1 head * 128 * 2 = 16,384
    check_int(impl.kv_bytes_per_token(cfg_of(impl, LLAMA2_7B, num_kv_heads=1)), 16_384,
              "kv_bytes_per_token(Llama-2-7B with num_kv_heads=1)")


@graded(3, 1, "KV dtypes: fp32 4, fp16 2, fp8 and int8 1 byte; nf4 and unknown names rejected")
def test_kv_dtypes(impl):
    cfg = cfg_of(impl, LLAMA2_7B)
    for dtype, expected in (("fp32", 1_048_576), ("fp16", 524_288), ("fp8", 262_144), ("int8", 262_144)):
        check_int(impl.kv_bytes_per_token(cfg, dtype), expected, f"kv_bytes_per_token(Llama-2-7B, {dtype!r})")
    for bad in ("nf4", "nf4-dq", "FP8", "e4m3"):
        check_raises(lambda: impl.kv_bytes_per_token(cfg, bad), "kv_dtype", f"kv_bytes_per_token(Llama-2-7B, {bad!r})")


@graded(3, 2, "MLA caches a latent plus a rotary key per layer, no factor of 2; rotary part may be 0")
def test_mla(impl):
    # 61 * (512 + 64) * 2 = 70,272; 27 * (512 + 64) * 1 = 15,552; 2 * (3 + 0) * 4 = 24
    for args, expected in (((61, 512, 64), 70_272), ((27, 512, 64, "fp8"), 15_552), ((2, 3, 0, "fp32"), 24)):
        check_int(impl.mla_kv_bytes_per_token(*args), expected, f"mla_kv_bytes_per_token{args!r}")


@graded(3, 1, "MLA lower bounds are valid: one layer, a latent of one element")
def test_mla_lower_bounds(impl):
    # 1 * (512 + 64) * 2 = 1,152; 61 * (1 + 64) * 2 = 7,930; 1 * (1 + 0) * 2 = 2
    for args, expected in (((1, 512, 64), 1_152), ((61, 1, 64), 7_930), ((1, 1, 0), 2)):
        try:
            got = impl.mla_kv_bytes_per_token(*args)
        except ValueError as exc:
            pytest.fail(f"Called mla_kv_bytes_per_token{args!r}. Raised ValueError({str(exc)!r}), "
                        f"expected the int {expected!r}.", pytrace=False)
        check_int(got, expected, f"mla_kv_bytes_per_token{args!r}")


@graded(3, 1, "MLA rejects no layers, an empty latent, a negative rotary part and bad dtypes")
def test_mla_invalid(impl):
    for args, name in (((0, 512, 64), "num_layers"), ((61, 0, 64), "kv_lora_rank"),
                       ((61, 512, -1), "rope_head_dim"), ((61, 512, 64, "nf4"), "kv_dtype"),
                       ((61.0, 512, 64), "num_layers")):
        check_raises(lambda: impl.mla_kv_bytes_per_token(*args), name, f"mla_kv_bytes_per_token{args!r}")


@graded(3, 2, "blocks per request round up; 0 tokens need 0 blocks; block_size 1")
def test_blocks_for_tokens(impl):
    for args, expected in (((0, 16), 0), ((1, 16), 1), ((16, 16), 1), ((17, 16), 2), ((4096, 16), 256),
                           ((4097, 16), 257), ((5, 1), 5), ((2**60 + 1, 2**4), 2**56 + 1)):
        check_int(impl.blocks_for_tokens(*args), expected, f"blocks_for_tokens{args!r}")


@graded(3, 1, "blocks_for_tokens rejects negative tokens and block_size < 1")
def test_blocks_invalid(impl):
    for args, name in (((-1, 16), "num_tokens"), ((10, 0), "block_size"), ((10, 16.0), "block_size"),
                       ((-1, 0), "num_tokens")):
        check_raises(lambda: impl.blocks_for_tokens(*args), name, f"blocks_for_tokens{args!r}")


@graded(3, 3, "Llama-2-7B on 80 GiB with 4 GiB reserve: whole blocks, a partial block costs a whole one")
def test_max_concurrent_llama2_7b(impl):
    cfg = cfg_of(impl, LLAMA2_7B)
    # free = 76 * 2**30 - 13,476,831,232 = 68,127,547,392; block 16 * 524,288 = 8,388,608 -> 8,121 blocks
    # 4096 tokens = 256 blocks -> 31 requests; 4097 tokens = 257 blocks -> 31; 4352 = 272 blocks -> 29
    for ctx, expected in ((4096, 31), (4097, 31), (4352, 29), (1, 8121), (8121 * 16, 1), (8121 * 16 + 1, 0)):
        check_int(impl.max_concurrent_requests(cfg, ctx, 80, 4), expected,
                  f"max_concurrent_requests(Llama-2-7B, {ctx}, 80, 4)")


@graded(3, 2, "a pool exactly the size of the requests' blocks fits them (equality fits)")
def test_capacity_equality(impl):
    # h=4, 1 layer, 1 head, V=1, tied, non-gated, i=4: params 4*16 + 2*16 + 3*4 + 4 = 112 -> bf16 224 bytes
    # KV per token 2 * 1 * 1 * 4 * 2 = 16 bytes; block_size 16 -> 256-byte blocks
    # reserve 0, 1 GiB: free = 2**30 - 224 = 4,194,303 blocks + 32 bytes: 4,194,303 blocks exactly
    f = dict(hidden_size=4, intermediate_size=4, num_layers=1, num_heads=1, num_kv_heads=1,
             vocab_size=1, tie_embeddings=True, gated_mlp=False)
    cfg = impl.ModelConfig(**f)
    # 4,194,303 = 3 * 1,398,101: requests of 3 blocks (48 tokens) fill the pool exactly
    check_int(impl.max_concurrent_requests(cfg, 48, 1), 1_398_101, f"max_concurrent_requests({show(f)}, 48, 1)")
    check_int(impl.max_context_len(cfg, 1_398_101, 1), 48, f"max_context_len({show(f)}, 1398101, 1)")
    check_int(impl.max_context_len(cfg, 1_398_102, 1), 32, f"max_context_len({show(f)}, 1398102, 1)")


@graded(3, 2, "weights plus reserve larger than the GPU: 0 requests and 0 tokens, not negative")
def test_capacity_zero_when_weights_do_not_fit(impl):
    cfg = cfg_of(impl, LLAMA2_70B)
    check_int(impl.max_concurrent_requests(cfg, 1, 80), 0, "max_concurrent_requests(Llama-2-70B, 1, 80)")
    check_int(impl.max_context_len(cfg, 1, 80), 0, "max_context_len(Llama-2-70B, 1, 80)")
    small = cfg_of(impl)
    check_int(impl.max_concurrent_requests(small, 1, 4, 4), 0, "max_concurrent_requests(tiny, 1, 4, reserve_gib=4)")


@graded(3, 2, "max_context_len is a whole number of blocks; 0 when not one block per request")
def test_max_context_len(impl):
    cfg = cfg_of(impl, LLAMA2_7B)
    # 8,121 blocks (see above): 1 request -> 129,936 tokens; 31 -> 261 blocks = 4,176; 8,121 -> 16; 8,122 -> 0
    for n, expected in ((1, 129_936), (31, 4_176), (8_121, 16), (8_122, 0)):
        check_int(impl.max_context_len(cfg, n, 80, 4), expected, f"max_context_len(Llama-2-7B, {n}, 80, 4)")
    # block_size 1: the pool is 68,127,547,392 // 524,288 = 129,942 one-token blocks -> 43,314 each
    check_int(impl.max_context_len(cfg, 3, 80, 4, block_size=1), 43_314,
              "max_context_len(Llama-2-7B, 3, 80, 4, block_size=1)")


@graded(3, 2, "capacity with quantized weights and an fp8 cache")
def test_capacity_quantized(impl):
    f = LLAMA2_70B
    cfg = cfg_of(impl, f)
    got = impl.max_concurrent_requests(cfg, 8192, 80, 6, "nf4-dq", "fp8", 32)
    check_int(got, o_max_requests(f, 8192, 80, 6, "nf4-dq", "fp8", 32),
              "max_concurrent_requests(Llama-2-70B, 8192, 80, 6, 'nf4-dq', 'fp8', 32)")
    got = impl.max_context_len(cfg, 10, 48, 2, "nf4", "fp16", 64)
    check_int(got, o_max_context(f, 10, 48, 2, "nf4", "fp16", 64),
              "max_context_len(Llama-2-70B, 10, 48, 2, 'nf4', 'fp16', 64)")


@graded(3, 1, "capacity functions validate every argument in signature order")
def test_capacity_invalid(impl):
    cfg = cfg_of(impl)
    for fn in (impl.max_concurrent_requests, impl.max_context_len):
        first = "context_len" if fn is impl.max_concurrent_requests else "num_requests"
        for args, name in (((0, 24), first), ((1, 0), "gpu_gib"), ((1, 24, -1), "reserve_gib"),
                           ((1, 24, 0, "int4"), "weight_dtype"), ((1, 24, 0, "bf16", "nf4"), "kv_dtype"),
                           ((1, 24, 0, "bf16", "bf16", 0), "block_size"), ((1.0, 24), first),
                           ((1, 24, 0, "bf16", "nf4", 0), "kv_dtype")):
            check_raises(lambda: fn(cfg, *args), name, f"{fn.__name__}(tiny, *{args!r})")


@graded(3, 2, "capacities far beyond 2**53 bytes stay exact")
def test_capacity_beyond_2_53(impl):
    # a model of about 6.2e15 parameters (1.2e16 bytes in bf16) caching about 1.3 GB per token,
    # on a GPU of about 2**60 bytes: every byte figure is far beyond 2**53, the answers are modest
    f = dict(hidden_size=786_432, intermediate_size=12_000_001, num_layers=201, num_heads=3,
             num_kv_heads=3, vocab_size=1_000_003)
    assert o_weight_bytes(f, "bf16") > 2**53
    cfg = impl.ModelConfig(**f)
    gpu = 2**30 + 12_345
    for args in ((10**6, gpu, 5, "bf16", "fp32", 1000), (3 * 10**6 + 1, gpu, 0, "nf4", "bf16", 7)):
        check_int(impl.max_concurrent_requests(cfg, *args), o_max_requests(f, *args),
                  f"max_concurrent_requests({show(f)}, *{args!r})")
    for args in ((10**4, gpu, 5, "nf4-dq", "fp32", 1000), (99_999, gpu, 1, "int8", "fp8", 3)):
        check_int(impl.max_context_len(cfg, *args), o_max_context(f, *args),
                  f"max_context_len({show(f)}, *{args!r})")


@graded(3, 3, "capacities of random models, GPUs and block sizes equal the oracle's search")
@PROPERTY
@given(data=st.data(), f=configs())
def test_property_capacity(impl, data, f):
    cfg = impl.ModelConfig(**f)
    gpu = data.draw(st.integers(1, 3))
    reserve = data.draw(st.integers(0, gpu))
    wd = data.draw(st.sampled_from(WEIGHT_DTYPES))
    kd = data.draw(st.sampled_from(KV_DTYPES))
    bs = data.draw(st.integers(1, 64))
    args = (gpu, reserve, wd, kd, bs)
    # keep every answer under about 10**5 (longer contexts or more requests when the pool is big),
    # so a solution that searches instead of dividing costs seconds here, not minutes; the
    # complexity test is the one that names that mistake
    floor = o_max_context(f, 1, *args) // 10**5
    ctx = max(data.draw(st.integers(1, 10**7)), floor)
    n = max(data.draw(st.integers(1, 10**6)), floor)
    check_int(impl.kv_bytes_per_token(cfg, kd), o_kv_per_token(f, kd), f"kv_bytes_per_token({show(f)}, {kd!r})")
    check_int(impl.max_concurrent_requests(cfg, ctx, *args), o_max_requests(f, ctx, *args),
              f"max_concurrent_requests({show(f)}, {ctx}, *{args!r})")
    check_int(impl.max_context_len(cfg, n, *args), o_max_context(f, n, *args),
              f"max_context_len({show(f)}, {n}, *{args!r})")


@graded(3, 2, "more context never admits more requests; more requests never get longer contexts")
@PROPERTY
@given(f=configs(), c1=st.integers(1, 10**5), c2=st.integers(1, 10**5), bs=st.integers(1, 32))
def test_property_capacity_monotonic(impl, f, c1, c2, bs):
    cfg = impl.ModelConfig(**f)
    floor = o_max_context(f, 1, 1, 0, "bf16", "bf16", bs) // 10**5  # answers under about 10**5, as above
    lo, hi = sorted((max(c1, floor), max(c2, floor)))
    a = impl.max_concurrent_requests(cfg, lo, 1, 0, "bf16", "bf16", bs)
    b = impl.max_concurrent_requests(cfg, hi, 1, 0, "bf16", "bf16", bs)
    assert a >= b, f"Called max_concurrent_requests({show(f)}, {lo} then {hi}, 1, block_size={bs}). Returned {a} then {b}, expected non-increasing."
    x = impl.max_context_len(cfg, lo, 1, 0, "bf16", "bf16", bs)
    y = impl.max_context_len(cfg, hi, 1, 0, "bf16", "bf16", bs)
    assert x >= y, f"Called max_context_len({show(f)}, {lo} then {hi} requests, 1, block_size={bs}). Returned {x} then {y}, expected non-increasing."
    if x:  # lo requests of the longest context do fit
        got = impl.max_concurrent_requests(cfg, x, 1, 0, "bf16", "bf16", bs)
        assert got >= lo, f"Called max_concurrent_requests({show(f)}, {x}, 1, block_size={bs}). Returned {got}, expected at least {lo}."


SOLUTION = Path(__file__).resolve().parents[2] / "solutions" / "lora-memory-math.py"
REPEATS = 50


def _reference():
    """The reference solution, loaded under its own module name; None where it is not shipped."""
    return load_reference(SOLUTION, "lora_memory_math_reference") if SOLUTION.is_file() else None


def _repeated(fn, cfg, args):
    """REPEATS calls of fn(cfg, *args), as one timed run."""
    return lambda: [fn(cfg, *args) for _ in range(REPEATS)]


@pytest.mark.complexity
@graded(3, 2, "capacity is arithmetic, not a search over tokens or requests (timed against the reference)")
def test_capacity_complexity(impl):
    # a 2-layer model caching 2 KiB per token: 1 GiB holds about half a million tokens; a search
    # over tokens or requests takes that many steps per call, arithmetic a handful
    f = dict(hidden_size=256, intermediate_size=256, num_layers=2, num_heads=4, num_kv_heads=4,
             vocab_size=16)
    calls = [
        ("max_context_len", (1, 1, 0, "bf16", "bf16", 1)),
        ("max_context_len", (3, 1, 0, "bf16", "bf16", 16)),
        ("max_concurrent_requests", (1, 1, 0, "bf16", "bf16", 1)),
        ("max_concurrent_requests", (16, 1, 0, "bf16", "bf16", 16)),
    ]
    imp_cfg = impl.ModelConfig(**f)
    for name, args in calls:
        imp_fn = getattr(impl, name)
        oracle = o_max_context if name == "max_context_len" else o_max_requests
        # fast and wrong earns nothing: the answer first, then the time
        check_int(imp_fn(imp_cfg, *args), oracle(f, *args), f"{name}(cfg, *{args!r})")

        def reference_run(name=name, args=args, oracle=oracle):
            reference = _reference()
            if reference is not None:
                return _repeated(getattr(reference, name), reference.ModelConfig(**f), args)
            # the oracle's binary search is slower than the reference: a looser, still-sharp budget
            return _repeated(oracle, f, args)
        # 10x the reference's best of three, plus 50 ms so that timer noise on a busy machine never
        # fails a fast solution; a failure is measured twice, so one noisy moment fails nobody
        compare_speed(f"{name}(cfg, *{args!r}) {REPEATS} times", _repeated(imp_fn, imp_cfg, args),
                      lambda run: run(), ref_setup=reference_run, floor=0.0, slack=0.05, runs=3, confirm=True,
                      hint="compute the capacity, do not search it")
