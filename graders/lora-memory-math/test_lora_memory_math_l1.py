"""Hidden suite of `lora-memory-math`, level 1: parameter counts."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from lora_memory_math_oracle import (LLAMA2_70B, LLAMA2_7B, O_FIELDS, TINY, cfg_of, check_int, configs, module_names,
                                     o_config_error, o_lora, o_lora_max_rank, o_params, show)

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings(30)  # built at import, after the derandomized profile is loaded


@graded(1, 3, "published Llama-2-7B parameter count, checked by hand")
def test_llama2_7b_parameter_count(impl):
    # embedding 32000*4096 = 131,072,000, lm_head the same (untied)
    # per layer: q,k,v,o 4 * 4096^2 = 67,108,864; gate,up,down 3 * 4096*11008 = 135,266,304;
    #            two norms 8,192  -> 202,383,360; times 32 layers = 6,476,267,520
    # final norm 4,096: total 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616
    check_int(impl.count_parameters(cfg_of(impl, LLAMA2_7B)), 6_738_415_616, "count_parameters(Llama-2-7B)")


@graded(1, 3, "published Llama-2-70B parameter count: GQA with 8 KV heads narrows k_proj and v_proj")
def test_llama2_70b_parameter_count(impl):
    # kv width 8 * 128 = 1024. per layer: q,o 2 * 8192^2 = 134,217,728; k,v 2 * 8192*1024 = 16,777,216;
    # gate,up,down 3 * 8192*28672 = 704,643,072; norms 16,384 -> 855,654,400; * 80 = 68,452,352,000
    # + embedding and lm_head 2 * 32000*8192 = 524,288,000 + final norm 8,192 = 68,976,648,192
    check_int(impl.count_parameters(cfg_of(impl, LLAMA2_70B)), 68_976_648_192, "count_parameters(Llama-2-70B)")


@graded(1, 2, "tied embeddings: the lm_head is the embedding matrix, counted once")
def test_tied_embeddings_counted_once(impl):
    untied = impl.count_parameters(cfg_of(impl, LLAMA2_7B))
    tied = impl.count_parameters(cfg_of(impl, LLAMA2_7B, tie_embeddings=True))
    check(untied - tied, 32000 * 4096, "count_parameters(untied) - count_parameters(tied) on Llama-2-7B")


@graded(1, 2, "gated_mlp=False: no gate_proj, two MLP matrices per layer")
def test_non_gated_mlp(impl):
    f = dict(TINY, gated_mlp=False)
    # 105,280 - 2 layers * 64*176 = 105,280 - 22,528 = 82,752
    check_int(impl.count_parameters(cfg_of(impl, f)), 82_752, f"count_parameters({show(f)})")


@graded(1, 2, "multi-query attention: one KV head, k_proj and v_proj are h x head_dim")
def test_mqa_parameter_count(impl):
    f = dict(TINY, num_kv_heads=1)
    # k and v shrink from 64x32 to 64x16: 2 layers * 2 * 64*16 = 4,096 fewer than 105,280
    check_int(impl.count_parameters(cfg_of(impl, f)), 101_184, f"count_parameters({show(f)})")


@graded(1, 2, "norms: two per layer plus the final one, all counted")
def test_norms_counted(impl):
    f = dict(hidden_size=2, intermediate_size=1, num_layers=3, num_heads=1, num_kv_heads=1,
             vocab_size=1, tie_embeddings=True, gated_mlp=False)
    # per layer: q,k,v,o 4 * 2*2 = 16; up, down 2 * 2*1 = 4; norms 2*2 = 4 -> 24; * 3 = 72
    # embedding 1*2 = 2; final norm 2: 76
    check_int(impl.count_parameters(cfg_of(impl, f)), 76, f"count_parameters({show(f)})")


@graded(1, 2, "LoRA adds r(d + k) per adapted matrix in every layer")
def test_lora_every_layer(impl):
    # Llama-2-7B, r=8, q and v: 32 layers * 2 * 8 * (4096 + 4096) = 4,194,304
    got = impl.count_lora_parameters(cfg_of(impl, LLAMA2_7B), 8, ["q_proj", "v_proj"])
    check_int(got, 4_194_304, "count_lora_parameters(Llama-2-7B, 8, ['q_proj', 'v_proj'])")


@graded(1, 2, "LoRA on a GQA k_proj and on down_proj uses their own d x k")
def test_lora_rectangular_matrices(impl):
    # Llama-2-70B r=16: k_proj 8192x1024 -> 16*9216 = 147,456; down_proj 28672x8192 -> 16*36864 = 589,824
    # 80 layers * 737,280 = 58,982,400
    got = impl.count_lora_parameters(cfg_of(impl, LLAMA2_70B), 16, ("k_proj", "down_proj"))
    check_int(got, 58_982_400, "count_lora_parameters(Llama-2-70B, 16, ('k_proj', 'down_proj'))")


@graded(1, 1, "duplicate target names count once; any iterable is accepted")
def test_lora_duplicates_and_iterables(impl):
    cfg = cfg_of(impl)
    expected = 1792
    for targets in (["q_proj", "k_proj", "q_proj"], {"k_proj", "q_proj"}, iter(["k_proj", "q_proj"])):
        got = impl.count_lora_parameters(cfg, 4, targets)
        check_int(got, expected, f"count_lora_parameters(tiny, 4, {type(targets).__name__} of q_proj, k_proj)")


@graded(1, 2, "rank equal to min(d, k) of the narrowest adapted matrix is allowed")
def test_lora_rank_at_upper_bound(impl):
    # MQA: k_proj is 64 x 16, so r = 16 is the largest allowed; 2 layers * 16 * (64 + 16) = 2,560
    cfg = cfg_of(impl, num_kv_heads=1)
    check_int(impl.count_lora_parameters(cfg, 16, ["k_proj"]), 2560, "count_lora_parameters(tiny MQA, 16, ['k_proj'])")
    # down_proj of a model with intermediate 1: d x k = 1 x 64, so r = 1 is the bound
    cfg1 = cfg_of(impl, intermediate_size=1)
    check_int(impl.count_lora_parameters(cfg1, 1, ["down_proj"]), 130, "count_lora_parameters(intermediate 1, 1, ['down_proj'])")


@graded(1, 2, "rank one above the narrowest adapted matrix is rejected, naming rank")
def test_lora_rank_above_bound(impl):
    cfg = cfg_of(impl, num_kv_heads=1)
    check_raises(lambda: impl.count_lora_parameters(cfg, 17, ["q_proj", "k_proj"]), "rank",
                 "count_lora_parameters(tiny MQA, 17, ['q_proj', 'k_proj'])")
    cfg1 = cfg_of(impl, intermediate_size=1)
    check_raises(lambda: impl.count_lora_parameters(cfg1, 2, ["up_proj"]), "rank",
                 "count_lora_parameters(intermediate 1, 2, ['up_proj'])")


@graded(1, 1, "rank 0, negative, bool or float is rejected; rank 1 is allowed")
def test_lora_rank_lower_bound_and_types(impl):
    cfg = cfg_of(impl)
    for bad in (0, -1, True, 2.0, "2"):
        check_raises(lambda: impl.count_lora_parameters(cfg, bad, ["q_proj"]), "rank",
                     f"count_lora_parameters(tiny, {bad!r}, ['q_proj'])")
    check_int(impl.count_lora_parameters(cfg, 1, ["q_proj"]), 256, "count_lora_parameters(tiny, 1, ['q_proj'])")


@graded(1, 2, "target_modules: empty, unknown, lm_head, bare str, non-iterable all rejected")
def test_lora_bad_targets(impl):
    cfg = cfg_of(impl)
    for bad in ([], ["q_proj", "qkv_proj"], ["lm_head"], ["embed_tokens"], "q_proj", None, 7, ["q_proj", 5], ("q_proj", None)):
        check_raises(lambda: impl.count_lora_parameters(cfg, 4, bad), "target_modules",
                     f"count_lora_parameters(tiny, 4, {bad!r})")


@graded(1, 2, "gate_proj is unknown on a model without a gated MLP")
def test_lora_gate_proj_without_gate(impl):
    cfg = cfg_of(impl, gated_mlp=False)
    check_raises(lambda: impl.count_lora_parameters(cfg, 4, ["up_proj", "gate_proj"]), "target_modules",
                 "count_lora_parameters(tiny non-gated, 4, ['up_proj', 'gate_proj'])")


@graded(1, 1, "target_modules is checked before rank")
def test_lora_targets_checked_before_rank(impl):
    cfg = cfg_of(impl)
    check_raises(lambda: impl.count_lora_parameters(cfg, 0, ["lm_head"]), "target_modules",
                 "count_lora_parameters(tiny, 0, ['lm_head'])")


@graded(1, 2, "num_heads must divide hidden_size; num_kv_heads must divide num_heads")
def test_config_divisibility(impl):
    f = dict(LLAMA2_7B, num_heads=30)
    check_raises(lambda: impl.ModelConfig(**f), "num_heads", show(f))
    f = dict(LLAMA2_70B, num_kv_heads=6)
    check_raises(lambda: impl.ModelConfig(**f), "num_kv_heads", show(f))
    f = dict(LLAMA2_70B, num_kv_heads=128)  # more KV heads than heads
    check_raises(lambda: impl.ModelConfig(**f), "num_kv_heads", show(f))


@graded(1, 2, "every int field must be >= 1, named in the message")
@pytest.mark.parametrize("field", O_FIELDS)
def test_config_non_positive_field(impl, field):
    for bad in (0, -4):
        f = dict(TINY, **{field: bad})
        check_raises(lambda: impl.ModelConfig(**f), field, show(f))


@graded(1, 1, "bool, float or str where an int is expected, and a non-bool flag, are rejected")
def test_config_wrong_types(impl):
    for field, bad in (("hidden_size", True), ("vocab_size", 100.0), ("num_layers", "2"),
                       ("tie_embeddings", 1), ("gated_mlp", None)):
        f = dict(TINY, **{field: bad})
        check_raises(lambda: impl.ModelConfig(**f), field, show(f))


@graded(1, 1, "several invalid fields: the first in declaration order is named")
def test_config_first_invalid_field(impl):
    f = dict(TINY, num_layers=0, vocab_size=0, num_kv_heads=3)
    check_raises(lambda: impl.ModelConfig(**f), "num_layers", show(f))
    f = dict(TINY, num_kv_heads=3, vocab_size=0)
    check_raises(lambda: impl.ModelConfig(**f), "num_kv_heads", show(f))


# one invalid value per field, in declaration order (a head count that does not divide is invalid too)
BAD_FIELDS = (("hidden_size", 0), ("intermediate_size", -1), ("num_layers", True), ("num_heads", 0),
              ("num_kv_heads", 0), ("vocab_size", 2.0), ("tie_embeddings", 1), ("gated_mlp", None))


@graded(1, 2, "two invalid fields at once: the earlier in declaration order is named (every pair)")
def test_config_every_pair_of_invalid_fields(impl):
    for i, (first, bad_first) in enumerate(BAD_FIELDS):
        for second, bad_second in BAD_FIELDS[i + 1:]:
            f = dict(TINY, **{first: bad_first, second: bad_second})
            check_raises(lambda: impl.ModelConfig(**f), first, show(f))


@graded(1, 3, "parameter count of random configs (GQA, MQA, tied, non-gated) equals the oracle's")
@PROPERTY
@given(f=configs())
@example(f=dict(hidden_size=1, intermediate_size=1, num_layers=1, num_heads=1, num_kv_heads=1,
                vocab_size=1, tie_embeddings=True, gated_mlp=False))
@example(f=dict(hidden_size=12, intermediate_size=7, num_layers=2, num_heads=4, num_kv_heads=1,
                vocab_size=9, tie_embeddings=False, gated_mlp=True))
def test_property_parameter_count(impl, f):
    check_int(impl.count_parameters(impl.ModelConfig(**f)), o_params(f), f"count_parameters({show(f)})")


@graded(1, 3, "LoRA count and rank bound of random plans equal the oracle's")
@PROPERTY
@given(data=st.data(), f=configs())
def test_property_lora_count(impl, data, f):
    targets = data.draw(module_names(f))
    limit = o_lora_max_rank(f, targets)
    rank = data.draw(st.integers(1, limit + 2))
    cfg = impl.ModelConfig(**f)
    call = f"count_lora_parameters({show(f)}, {rank}, {targets!r})"
    if rank > limit:
        check_raises(lambda: impl.count_lora_parameters(cfg, rank, targets), "rank", call)
    else:
        check_int(impl.count_lora_parameters(cfg, rank, targets), o_lora(f, rank, targets), call)


@graded(1, 2, "random, possibly invalid configs: valid ones construct, invalid ones name the first bad field")
@PROPERTY
@given(vals=st.tuples(*[st.integers(-1, 6) for _ in O_FIELDS]))
@example(vals=(6, 1, 1, 4, 2, 1))  # 4 does not divide 6
@example(vals=(6, 1, 1, 6, 4, 1))  # 4 does not divide 6 heads
def test_property_config_validation(impl, vals):
    f = dict(zip(O_FIELDS, vals))
    expected = o_config_error(f)
    if expected is None:
        impl.ModelConfig(**f)
    else:
        check_raises(lambda: impl.ModelConfig(**f), expected, show(f))


@graded(1, 2, "counts far beyond 2**53 stay exact")
def test_huge_parameter_count(impl):
    f = dict(hidden_size=100_000_001, intermediate_size=300_000_007, num_layers=7, num_heads=1,
             num_kv_heads=1, vocab_size=1_000_000_007)
    expected = o_params(f)
    assert expected > 2**59  # far beyond 2**53
    check_int(impl.count_parameters(impl.ModelConfig(**f)), expected, f"count_parameters({show(f)})")
    targets = ["q_proj", "down_proj"]
    check_int(impl.count_lora_parameters(impl.ModelConfig(**f), 99_999_999, targets),
              o_lora(f, 99_999_999, targets), f"count_lora_parameters({show(f)}, 99999999, {targets})")
