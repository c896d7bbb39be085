"""Visible checks: the prompt's examples and a few more. The hidden suite has many more, and runs
your plan in the engine (`kata engine plan workspace/serving_plan.py --level N` shows how)."""

import pytest

LLAMA_8B = {"name": "llama-3-8b", "num_params": 8030261248, "num_layers": 32, "num_heads": 32,
            "num_kv_heads": 8, "head_dim": 128, "hidden_size": 4096}
LLAMA_70B = {"name": "llama-3-70b", "num_params": 70553706496, "num_layers": 80, "num_heads": 64,
             "num_kv_heads": 8, "head_dim": 128, "hidden_size": 8192}
H100 = {"memory_bytes": 85_520_809_984, "hbm_bandwidth": 3_350_000_000_000,
        "peak_flops": 989_000_000_000_000, "price_per_hour": 4.0, "gpu_link": "nvlink"}
A10G = {"memory_bytes": 24_000_000_000, "hbm_bandwidth": 600_000_000_000,
        "peak_flops": 70_000_000_000_000, "price_per_hour": 1.0, "gpu_link": "pcie"}


def math(impl, *args):
    return impl.memory_math(*args)


@pytest.mark.level(1)
def test_prompt_arithmetic(impl):
    assert impl.weight_bytes(LLAMA_8B, 16) == 16060522496
    assert impl.kv_bytes_per_token(LLAMA_8B) == 131072
    got = math(impl, LLAMA_8B, H100, 16, 1, 16, 2560)
    assert got == impl.MemoryMath(16060522496, 131072, 29043, 181), f"memory_math returned {got!r}."


@pytest.mark.level(1)
def test_bad_block_size(impl):
    with pytest.raises(ValueError, match="^block_size"):
        math(impl, LLAMA_8B, H100, 16, 1, 0, 2560)


@pytest.mark.level(1)
def test_plan_shape(impl):
    from kata.engine.design import LEVELS

    lv = LEVELS[1]
    got = impl.plan(lv.workload(), lv.constraints())
    assert isinstance(got, impl.ServingPlan), f"plan returned {got!r}."
    assert got.hardware == "H100" and got.model == "llama-3-8b"


@pytest.mark.level(2)
def test_prompt_long_context(impl):
    got = math(impl, LLAMA_8B, H100, 16, 1, 16, 32768)
    assert got == impl.MemoryMath(16060522496, 131072, 29043, 14), f"memory_math returned {got!r}."
    with pytest.raises(ValueError, match="^memory"):
        math(impl, LLAMA_8B, H100, 16, 1, 16, 600_000)


@pytest.mark.level(3)
def test_prompt_70b(impl):
    assert impl.weight_bytes(LLAMA_70B, 4) == 35276853248
    assert impl.weight_bytes(dict(LLAMA_70B, num_params=3), 4) == 2
    got = math(impl, LLAMA_70B, A10G, 8, 4, 16, 1536)
    assert got == impl.MemoryMath(70553706496, 327680, 3022, 31), f"memory_math returned {got!r}."
    for tp, name in ((2, "memory"), (3, "tensor_parallel_size")):
        with pytest.raises(ValueError, match=f"^{name}"):
            math(impl, LLAMA_70B, A10G, 8, tp, 16, 1536)


@pytest.mark.level(4)
def test_plan_level4_is_for_h100(impl):
    from kata.engine.design import LEVELS

    lv = LEVELS[4]
    got = impl.plan(lv.workload(), lv.constraints())
    assert got.hardware == "H100" and got.weight_bits == 16
