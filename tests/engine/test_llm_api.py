"""The vLLM-shaped front door: LLM, SamplingParams, RequestOutput, streaming from step()."""

from __future__ import annotations

import pytest

from kata.engine import LLM, RequestOutput, SamplingParams
from kata.engine.config import EOS_TOKEN_ID
from kata.engine.llm_engine import LLMEngine
from kata.engine.llm import engine_config


def test_generate_takes_one_sampling_params_per_prompt():
    llm = LLM(model="tiny", max_num_seqs=8)
    outs = llm.generate(["Hello", "KV cache"], [SamplingParams(max_tokens=4, ignore_eos=True),
                                                SamplingParams(max_tokens=2, ignore_eos=True)])
    assert all(isinstance(o, RequestOutput) and o.finished for o in outs)
    assert [len(o.outputs[0].token_ids) for o in outs] == [4, 2]
    assert [o.prompt for o in outs] == ["Hello", "KV cache"]
    assert outs[0].prompt_token_ids[1:] == list(b"Hello")
    assert outs[0].outputs[0].finish_reason == "length" and outs[0].metrics.ttft > 0
    one = llm.generate("Hello", SamplingParams(max_tokens=3, temperature=0))  # one prompt
    ids = llm.generate({"prompt_token_ids": outs[0].prompt_token_ids},
                       SamplingParams(max_tokens=3, temperature=0))
    assert len(one) == 1 and one[0].outputs[0].token_ids == ids[0].outputs[0].token_ids


def test_vllm_defaults_and_seeded_sampling():
    p = SamplingParams()
    assert (p.max_tokens, p.temperature, p.top_p, p.top_k, p.seed) == (16, 1.0, 1.0, 0, None)
    llm = LLM(model="tiny")
    a = llm.generate("Hi", SamplingParams(seed=5, ignore_eos=True))[0].outputs[0].token_ids
    b = llm.generate("Hi", SamplingParams(seed=5, ignore_eos=True))[0].outputs[0].token_ids
    c = llm.generate("Hi", SamplingParams(seed=6, ignore_eos=True))[0].outputs[0].token_ids
    assert a == b != c and len(a) == 16


def test_top_p_and_top_k_cut_the_distribution():
    llm = LLM(model="tiny")
    greedy = llm.generate("Hi", SamplingParams(max_tokens=8, temperature=0))[0]
    for params in (SamplingParams(max_tokens=8, top_k=1, seed=1),
                   SamplingParams(max_tokens=8, top_p=1e-6, seed=1)):
        assert llm.generate("Hi", params)[0].outputs[0].token_ids == greedy.outputs[0].token_ids


def test_stop_token_ids_end_a_request_with_reason_stop():
    llm = LLM(model="tiny")
    free = llm.generate("Hi", SamplingParams(max_tokens=8, temperature=0, ignore_eos=True))[0]
    stop = free.outputs[0].token_ids[2]
    first = free.outputs[0].token_ids.index(stop)
    out = llm.generate("Hi", SamplingParams(max_tokens=8, temperature=0, ignore_eos=True,
                                            stop_token_ids=[stop]))[0].outputs[0]
    assert out.token_ids == free.outputs[0].token_ids[:first + 1]
    assert (out.finish_reason, out.stop_reason) == ("stop", stop) and stop != EOS_TOKEN_ID


def test_step_streams_partial_outputs():
    engine = LLMEngine(engine_config("tiny", max_num_seqs=4))
    engine.add_request("a", SamplingParams(max_tokens=3, temperature=0), request_id="short")
    engine.add_request("b", SamplingParams(max_tokens=5, temperature=0), request_id="long")
    seen: dict[str, list[list[int]]] = {"short": [], "long": []}
    while engine.has_unfinished():
        for out in engine.step():
            seen[out.request_id].append(list(out.outputs[0].token_ids))
            assert out.finished == (out.outputs[0].finish_reason is not None)
    assert [len(t) for t in seen["short"]] == [1, 2, 3]
    assert [len(t) for t in seen["long"]] == [1, 2, 3, 4, 5]
    assert seen["long"][2] == seen["long"][4][:3]  # cumulative, as vLLM's default


def test_bad_engine_arguments_and_params_are_refused_by_name():
    with pytest.raises(TypeError, match="gpu_memory_utilisation"):
        LLM(model="tiny", gpu_memory_utilisation=0.9)
    with pytest.raises(ValueError, match="llama-3-8b.*cannot be computed"):
        LLM(model="llama-3-8b")
    with pytest.raises(ValueError, match="2 SamplingParams for 3 prompts"):
        LLM().generate(["a", "b", "c"], [SamplingParams(), SamplingParams()])
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0)
    with pytest.raises(ValueError, match="dtype='bfloat16' needs backend='torch'"):
        LLM(dtype="bfloat16")


def test_an_aborted_request_is_reported_once_with_reason_abort():
    engine = LLMEngine(engine_config("tiny"))
    engine.add_request("a", SamplingParams(max_tokens=6, temperature=0), request_id="keep")
    engine.add_request("b", SamplingParams(max_tokens=6, temperature=0), request_id="drop")
    engine.step()
    assert engine.abort_request("drop")
    outs = engine.step()
    reasons = {o.request_id: o.outputs[0].finish_reason for o in outs}
    assert reasons == {"drop": "abort", "keep": None}
    assert next(o for o in outs if o.request_id == "drop").finished
    later = [o.request_id for _ in range(8) if engine.has_unfinished_requests()
             for o in engine.step()]
    assert "drop" not in later and later[-1] == "keep"
    with pytest.raises(ValueError, match="SamplingParams.n must be 1"):
        SamplingParams(n=2)
