"""Hidden suite of `serving-plan`, level 1: the arithmetic at 16 bits on one GPU, and the plan for
1,000 chat users on H100s."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from serving_plan_oracle import (H100, LLAMA_70B, LLAMA_8B, check_memory_math, expect_check, fields_of, judged_tests,
                                 memory_call, memory_raises, plan_on, show_model)

from kata.checks import check, graded, property_settings

PROPERTY = property_settings()


def math(impl, model, gpu, bits, tp, block, max_seq_len):
    return impl.memory_math(model, gpu, bits, tp, block, max_seq_len)


def small(num_params=1000, layers=2, kv_heads=2, head_dim=4):
    return {"name": "small", "num_params": num_params, "num_layers": layers, "num_heads": kv_heads,
            "num_kv_heads": kv_heads, "head_dim": head_dim, "hidden_size": kv_heads * head_dim}


# --- weight_bytes and kv_bytes_per_token ------------------------------------------------------


@graded(1, 2, "weight_bytes at 16 bits is two bytes per parameter, an exact int")
def test_weight_bytes_16_bits(impl):
    for model, want in ((LLAMA_8B, 16060522496), (LLAMA_70B, 141107412992), (small(7), 14)):
        check(impl.weight_bytes(model, 16), want, f"weight_bytes({show_model(model)}, 16)")


@graded(1, 2, "kv_bytes_per_token: K and V, every layer, every KV head, 2 bytes")
def test_kv_bytes_per_token(impl):
    for model, want in ((LLAMA_8B, 131072), (LLAMA_70B, 327680), (small(layers=3, kv_heads=5, head_dim=6), 360)):
        check(impl.kv_bytes_per_token(model), want, f"kv_bytes_per_token({show_model(model)})")


@graded(1, 1, "kv_bytes_per_token counts KV heads, not query heads")
def test_kv_bytes_uses_kv_heads(impl):
    model = dict(small(layers=1, kv_heads=2, head_dim=8), num_heads=16)
    check(impl.kv_bytes_per_token(model), 64, "kv_bytes_per_token(1 layer, 16 heads, 2 KV heads, head_dim 8)")


# --- memory_math --------------------------------------------------------------------------------


@graded(1, 3, "the prompt's example: llama-3-8b on one H100, block 16, 2,560 tokens")
def test_prompt_example(impl):
    got = math(impl, LLAMA_8B, H100, 16, 1, 16, 2560)
    check(fields_of(got), (16060522496, 131072, 29043, 181), memory_call(LLAMA_8B, H100, 16, 1, 16, 2560))


@graded(1, 1, "memory_math returns a MemoryMath")
def test_returns_memory_math(impl):
    got = math(impl, LLAMA_8B, H100, 16, 1, 16, 2560)
    assert type(got) is impl.MemoryMath, f"Called {memory_call(LLAMA_8B, H100, 16, 1, 16, 2560)}. Returned {got!r}, expected a MemoryMath."


@graded(1, 2, "90% of the memory is floored in integers, never rounded through a float")
def test_usable_is_floored(impl):
    gpu = dict(H100, memory_bytes=1009)  # 908.1 usable -> 908
    model = small(num_params=4)  # 8 bytes of weights; 64 bytes per token: 900 // 64 = 14 blocks
    got = math(impl, model, gpu, 16, 1, 1, 1)
    check(fields_of(got), (8, 64, 14, 14), memory_call(model, gpu, 16, 1, 1, 1))


@graded(1, 2, "a pool of exactly one sequence's blocks holds one sequence: it fits")
def test_exactly_one_sequence_fits(impl):
    gpu = dict(H100, memory_bytes=100)  # usable 90; 10 bytes of weights leave 80 = 2.5 blocks
    model = small(num_params=5, layers=1, kv_heads=1, head_dim=8)  # 32 bytes per token
    check(fields_of(math(impl, model, gpu, 16, 1, 1, 2)), (10, 32, 2, 1), memory_call(model, gpu, 16, 1, 1, 2))


@graded(1, 2, "one block short of one sequence raises ValueError beginning 'memory'")
def test_one_block_short(impl):
    gpu = dict(H100, memory_bytes=100)
    model = small(num_params=5, layers=1, kv_heads=1, head_dim=8)
    memory_raises(impl, "memory", model, gpu, 16, 1, 1, 3)


@graded(1, 2, "weights larger than the usable memory: no blocks, and ValueError beginning 'memory' (not a negative pool)")
def test_weights_larger_than_memory(impl):
    memory_raises(impl, "memory", LLAMA_70B, H100, 16, 1, 16, 2560)


@graded(1, 2, "the block size changes the pool and the blocks per sequence")
def test_block_sizes(impl):
    for block, want in ((8, (58086, 181)), (32, (14521, 181)), (1, (464692, 181)), (2560, (181, 181))):
        got = math(impl, LLAMA_8B, H100, 16, 1, block, 2560)
        check(fields_of(got)[2:], want, memory_call(LLAMA_8B, H100, 16, 1, block, 2560))


@graded(1, 3, "memory_math at 16 bits on one GPU equals the prompt's formulas on generated models, GPUs, blocks and lengths")
@given(params=st.integers(1, 10**10), layers=st.integers(1, 96), kv_heads=st.sampled_from([1, 2, 4, 8]),
       head_dim=st.sampled_from([32, 64, 128, 256]), memory=st.integers(10**6, 2 * 10**11),
       block=st.integers(1, 64), max_seq_len=st.integers(1, 40000))
@example(params=8030261248, layers=32, kv_heads=8, head_dim=128, memory=85_520_809_984, block=16, max_seq_len=2560)
@example(params=10, layers=1, kv_heads=1, head_dim=32, memory=10**6, block=3, max_seq_len=7)
@PROPERTY
def test_matches_oracle(impl, params, layers, kv_heads, head_dim, memory, block, max_seq_len):
    model, gpu = small(params, layers, kv_heads, head_dim), dict(H100, memory_bytes=memory)
    check_memory_math(impl, model, gpu, 16, 1, block, max_seq_len)


# --- invalid arguments ---------------------------------------------------------------------------


@graded(1, 2, "block_size must be an int >= 1: 0, negative, bool, float, None and str raise, naming block_size")
def test_bad_block_size(impl):
    for bad in (0, -16, True, 16.0, None, "16"):
        memory_raises(impl, "block_size", LLAMA_8B, H100, 16, 1, bad, 2560)


@graded(1, 2, "max_seq_len must be an int >= 1: 0, negative, bool, float, None and str raise, naming max_seq_len")
def test_bad_max_seq_len(impl):
    for bad in (0, -1, True, 2560.0, None, "2560"):
        memory_raises(impl, "max_seq_len", LLAMA_8B, H100, 16, 1, 16, bad)


@graded(1, 1, "block_size is checked before max_seq_len")
def test_block_size_before_max_seq_len(impl):
    memory_raises(impl, "block_size", LLAMA_8B, H100, 16, 1, 0, 0)


@graded(1, 1, "an invalid argument wins over a plan that does not fit memory")
def test_argument_before_memory(impl):
    memory_raises(impl, "max_seq_len", LLAMA_70B, H100, 16, 1, 16, 0)


@graded(1, 1, "memory_math answers without modifying the model or gpu dicts")
def test_inputs_untouched(impl):
    model, gpu = dict(LLAMA_8B), dict(H100)
    got = fields_of(math(impl, model, gpu, 16, 1, 16, 2560))
    check((got, model, gpu), ((16060522496, 131072, 29043, 181), LLAMA_8B, H100),
          "memory_math(llama-3-8b, H100, 16, 1, 16, 2560), then (result, the model and gpu dicts)")


# --- the plan, judged by the engine ----------------------------------------------------------------


globals().update(judged_tests(1, structure={  # test_plan_constraints, _memory, _slo, _cost and these:
    "other_user_counts": (2, "plan follows other workloads: 250 and 3,000 users keep the constraints and exact arithmetic",
        {f"{users} users": dict(users=users) for users in (250, 3000)}),
    "short_requests": (2, "short requests (prompts and answers of at most 64 tokens): max_num_batched_tokens still >= max_num_seqs",
        {f"{users} users, prompts and answers of at most 64 tokens":
         dict(users=users, prompt_tokens={"median": 32, "max": 64}, output_tokens={"median": 16, "max": 64})
         for users in (1000, 3000)}),
}))


@graded(1, 2, "plan scales with the load: 3,000 users get more GPUs than 250")
def test_plan_scales_with_users(impl):
    few, _, _ = plan_on(impl, 1, users=250)
    many, _, _ = plan_on(impl, 1, users=3000)
    gpus = [p.replicas * p.tensor_parallel_size for p in (few, many)]
    assert gpus[1] > gpus[0], f"Called plan(level 1) with 250 then 3,000 users. Returned {gpus[0]} then {gpus[1]} GPUs, expected more for 3,000."


@graded(1, 1, "plan's memory field is a MemoryMath of ints")
def test_plan_memory_type(impl):
    plan, _, _ = plan_on(impl, 1)
    got = plan.memory
    assert type(got) is impl.MemoryMath and all(type(v) is int for v in fields_of(got)), (
        f"Called plan(level 1). Its memory field is {got!r}, expected a MemoryMath of four ints.")


@graded(1, 2, "judged in full on level 1 with 250 users: one GPU is enough, so two cost too much")
def test_plan_few_users_judged(impl, verdicts):
    expect_check(verdicts, "few users", "constraints", "memory arithmetic", "SLO", "cost")


@graded(1, 2, "judged in full on a prefill-heavy workload (2k-token prompts, 16-token answers): compute sets the GPU count")
def test_plan_prefill_heavy_judged(impl, verdicts):
    expect_check(verdicts, "prefill-heavy", "constraints", "memory arithmetic", "SLO", "cost")
