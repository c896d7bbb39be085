"""Visible checks: the prompt's examples and a few more. The hidden suite has many more edge cases."""

import pytest


def tiny(impl, **overrides):
    fields = dict(hidden_size=64, intermediate_size=176, num_layers=2, num_heads=4,
                  num_kv_heads=2, vocab_size=100)
    fields.update(overrides)
    return impl.ModelConfig(**fields)


def llama2_7b(impl):
    return impl.ModelConfig(4096, 11008, 32, 32, 32, 32000)


def llama2_70b(impl):
    return impl.ModelConfig(8192, 28672, 80, 64, 8, 32000)


# --- level 1 ----------------------------------------------------------------


@pytest.mark.level(1)
def test_tiny_parameter_count(impl):
    got = impl.count_parameters(tiny(impl))
    assert got == 105280, f"Called count_parameters(tiny). Returned {got!r}, expected 105280."


@pytest.mark.level(1)
def test_llama2_7b_parameter_count(impl):
    got = impl.count_parameters(llama2_7b(impl))
    assert got == 6_738_415_616, f"Called count_parameters(Llama-2-7B). Returned {got!r}, expected 6738415616."


@pytest.mark.level(1)
def test_lora_on_q_and_k(impl):
    got = impl.count_lora_parameters(tiny(impl), 4, ["q_proj", "k_proj"])
    assert got == 1792, f"Called count_lora_parameters(tiny, 4, ['q_proj', 'k_proj']). Returned {got!r}, expected 1792."


@pytest.mark.level(1)
def test_rank_above_narrowest_matrix_is_rejected(impl):
    with pytest.raises(ValueError) as info:
        impl.count_lora_parameters(tiny(impl), 33, ["k_proj"])
    assert str(info.value).startswith("rank"), (
        f"Called count_lora_parameters(tiny, 33, ['k_proj']). Raised ValueError({str(info.value)!r}), "
        "expected a message beginning with 'rank'."
    )


@pytest.mark.level(1)
def test_kv_heads_must_divide_heads(impl):
    with pytest.raises(ValueError) as info:
        impl.ModelConfig(4096, 11008, 32, 32, 3, 32000)
    assert str(info.value).startswith("num_kv_heads"), (
        f"Called ModelConfig(..., num_heads=32, num_kv_heads=3, ...). Raised ValueError({str(info.value)!r}), "
        "expected a message beginning with 'num_kv_heads'."
    )


# --- level 2 ----------------------------------------------------------------


@pytest.mark.level(2)
def test_nf4_tensor_bytes(impl):
    got = (impl.tensor_bytes(100, "nf4"), impl.tensor_bytes(100, "nf4-dq"))
    assert got == (58, 56), f"Called tensor_bytes(100, 'nf4'), tensor_bytes(100, 'nf4-dq'). Returned {got!r}, expected (58, 56)."


@pytest.mark.level(2)
def test_tiny_training_memory(impl):
    expected = {"full": (210_560, 1_684_480), "lora": (210_560, 239_232), "qlora": (73_816, 102_488)}
    for method, (weights, total) in expected.items():
        got = impl.training_memory(tiny(impl), method, 4, ["q_proj", "k_proj"])
        assert (got.weights, got.total) == (weights, total), (
            f"Called training_memory(tiny, {method!r}, 4, ['q_proj', 'k_proj']). "
            f"Returned weights={got.weights}, total={got.total}, expected weights={weights}, total={total}."
        )


@pytest.mark.level(2)
def test_llama2_7b_full_finetuning_is_16_bytes_per_parameter(impl):
    got = impl.training_memory(llama2_7b(impl), "full").total
    assert got == 107_814_649_856, f"Called training_memory(Llama-2-7B, 'full').total. Returned {got!r}, expected 107814649856."


@pytest.mark.level(2)
def test_fits_on_gpu_examples(impl):
    got = (impl.fits_on_gpu(13_543_940_096, 16, 2), impl.fits_on_gpu(13_543_940_096, 14, 2))
    assert got == (True, False), f"Called fits_on_gpu(13543940096, 16 or 14, 2). Returned {got!r}, expected (True, False)."


# --- level 3 ----------------------------------------------------------------


@pytest.mark.level(3)
def test_llama2_7b_kv_is_512_kib_per_token(impl):
    got = impl.kv_bytes_per_token(llama2_7b(impl))
    assert got == 512 * 1024, f"Called kv_bytes_per_token(Llama-2-7B). Returned {got!r}, expected 524288."


@pytest.mark.level(3)
def test_mla_example(impl):
    got = impl.mla_kv_bytes_per_token(61, 512, 64)
    assert got == 70272, f"Called mla_kv_bytes_per_token(61, 512, 64). Returned {got!r}, expected 70272."


@pytest.mark.level(3)
def test_llama2_7b_on_24_gib(impl):
    cfg = llama2_7b(impl)
    got = (impl.max_concurrent_requests(cfg, 4096, 24, 2), impl.max_concurrent_requests(cfg, 4000, 24, 2),
           impl.max_context_len(cfg, 4, 24, 2))
    assert got == (4, 4, 4832), (
        f"Called max_concurrent_requests(l7, 4096 / 4000, 24, 2), max_context_len(l7, 4, 24, 2). "
        f"Returned {got!r}, expected (4, 4, 4832)."
    )


@pytest.mark.level(3)
def test_blocks_round_up(impl):
    got = [impl.blocks_for_tokens(n, 16) for n in (0, 1, 16, 17)]
    assert got == [0, 1, 1, 2], f"Called blocks_for_tokens(0 / 1 / 16 / 17, 16). Returned {got!r}, expected [0, 1, 1, 2]."


# --- level 4 ----------------------------------------------------------------


@pytest.mark.level(4)
def test_llama2_70b_tp8(impl):
    cfg = llama2_70b(impl)
    got = (impl.per_gpu_weight_bytes(cfg, 8), impl.per_gpu_kv_bytes_per_token(cfg, 8))
    assert got == (17_246_470_144, 40_960), f"Called per_gpu_*(Llama-2-70B, 8). Returned {got!r}, expected (17246470144, 40960)."


@pytest.mark.level(4)
def test_llama2_70b_tp16_replicates_kv_heads(impl):
    cfg = llama2_70b(impl)
    got = (impl.per_gpu_weight_bytes(cfg, 16), impl.per_gpu_kv_bytes_per_token(cfg, 16))
    assert got == (8_792_326_144, 40_960), f"Called per_gpu_*(Llama-2-70B, 16). Returned {got!r}, expected (8792326144, 40960)."


@pytest.mark.level(4)
def test_min_tp_size_examples(impl):
    cfg = llama2_70b(impl)
    got = (impl.min_tp_size(cfg, 16, 4096, 80, 4), impl.min_tp_size(cfg, 64, 4096, 80, 4))
    assert got == (2, 4), f"Called min_tp_size(Llama-2-70B, 16 / 64, 4096, 80, 4). Returned {got!r}, expected (2, 4)."
