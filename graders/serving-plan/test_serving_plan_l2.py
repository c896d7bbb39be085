"""Hidden suite of `serving-plan`, level 2: 32k-token contexts, where the KV cache dominates."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from serving_plan_oracle import (H100, LLAMA_8B, check_memory_math, fields_of, judged_tests, plan_on, show_model)

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def call(model, bits, tp, block, max_seq_len, gpu=H100):
    return (f"memory_math({show_model(model)}, gpu(memory_bytes={gpu['memory_bytes']}), {bits}, "
            f"{tp}, {block}, {max_seq_len})")


@graded(2, 3, "the prompt's example: 14 sequences of 32,768 tokens on one H100")
def test_prompt_example(impl):
    got = impl.memory_math(LLAMA_8B, H100, 16, 1, 16, 32768)
    check(fields_of(got), (16060522496, 131072, 29043, 14), call(LLAMA_8B, 16, 1, 16, 32768))


@graded(2, 2, "blocks per sequence round up: 32,769 tokens need 2,049 blocks of 16, 33,185 need 2,075")
def test_blocks_per_sequence_round_up(impl):
    for max_seq_len, want in ((32769, 14), (2074 * 16, 14), (2074 * 16 + 1, 13)):
        got = impl.memory_math(LLAMA_8B, H100, 16, 1, 16, max_seq_len)
        check(fields_of(got)[3], want, call(LLAMA_8B, 16, 1, 16, max_seq_len))


@graded(2, 2, "a sequence exactly as long as the pool fits once; one token more raises 'memory'")
def test_longest_sequence_that_fits(impl):
    longest = 29043 * 16
    check(fields_of(impl.memory_math(LLAMA_8B, H100, 16, 1, 16, longest))[3], 1, call(LLAMA_8B, 16, 1, 16, longest))
    check_raises(lambda: impl.memory_math(LLAMA_8B, H100, 16, 1, 16, longest + 1), "memory",
                 call(LLAMA_8B, 16, 1, 16, longest + 1))


@graded(2, 1, "the prompt's example: 600,000 tokens do not fit one H100")
def test_too_long(impl):
    check_raises(lambda: impl.memory_math(LLAMA_8B, H100, 16, 1, 16, 600_000), "memory", call(LLAMA_8B, 16, 1, 16, 600_000))


@graded(2, 3, "memory_math on long contexts equals the prompt's formulas, fitting or raising 'memory'")
@given(max_seq_len=st.integers(8192, 500_000), block=st.sampled_from([1, 8, 16, 32, 128, 1000]),
       memory=st.integers(2 * 10**10, 2 * 10**11))
@example(max_seq_len=32768, block=16, memory=85_520_809_984)
@example(max_seq_len=464688, block=16, memory=85_520_809_984)
@PROPERTY
def test_long_contexts_match_oracle(impl, max_seq_len, block, memory):
    gpu = dict(H100, memory_bytes=memory)
    check_memory_math(impl, LLAMA_8B, gpu, 16, 1, block, max_seq_len)


globals().update(judged_tests(2, structure={  # test_plan_constraints, _memory, _slo, _cost and these:
    "uses_max_seq_len": (2, "plan sizes memory for the workload's longest request: prompt max + output max",
        {f"prompts up to {most}": dict(prompt_tokens={"median": 4096, "max": most}) for most in (16000, 60000)}),
}))


@graded(2, 1, "a one-token sequence needs one block: max_concurrent_seqs equals the pool")
def test_one_token_sequence(impl):
    check(fields_of(impl.memory_math(LLAMA_8B, H100, 16, 1, 16, 1))[2:], (29043, 29043), call(LLAMA_8B, 16, 1, 16, 1))


@graded(2, 2, "plan gives 1,600 long-context users more GPUs than 100")
def test_plan_scales_with_users(impl):
    few, _, _ = plan_on(impl, 2, users=100)
    many, _, _ = plan_on(impl, 2, users=1600)
    gpus = [p.replicas * p.tensor_parallel_size for p in (few, many)]
    assert gpus[1] > gpus[0], f"Called plan(level 2) with 100 then 1,600 users. Returned {gpus[0]} then {gpus[1]} GPUs, expected more for 1,600."
