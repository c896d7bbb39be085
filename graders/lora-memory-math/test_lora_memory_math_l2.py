"""Hidden suite of `lora-memory-math`, level 2: training memory."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from lora_memory_math_oracle import (GIB, LLAMA2_70B, LLAMA2_7B, WEIGHT_DTYPES, cfg_of, check_int, configs,
                                     module_names, o_lora_max_rank, o_tensor_bytes, o_training, o_weight_bytes, show)

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings(30)  # built at import, after the derandomized profile is loaded


@graded(2, 1, "fp32, bf16, fp16 and int8 tensors: 4, 2, 2 and 1 byte per element")
def test_tensor_bytes_plain(impl):
    for dtype, per in (("fp32", 4), ("bf16", 2), ("fp16", 2), ("int8", 1)):
        check_int(impl.tensor_bytes(1001, dtype), 1001 * per, f"tensor_bytes(1001, {dtype!r})")


@graded(2, 2, "nf4: an odd count rounds the packed bytes up; a partial block still has its absmax")
def test_nf4_rounding(impl):
    # n=1: 1 byte of codes + one fp32 absmax = 5; n=65: 33 + 2 blocks * 4 = 41; n=128: 64 + 8 = 72
    for n, expected in ((1, 5), (2, 5), (3, 6), (63, 36), (64, 36), (65, 41), (128, 72)):
        check_int(impl.tensor_bytes(n, "nf4"), expected, f"tensor_bytes({n}, 'nf4')")


@graded(2, 2, "nf4-dq: 8-bit absmax per block plus one fp32 per started group of 256 blocks")
def test_nf4_dq_groups(impl):
    # 16384 = 256 blocks exactly: 8192 + 256 + 4 = 8452
    # 16385 = 257 blocks, the 257th block partial and in a second group: 8193 + 257 + 8 = 8458
    # 1 element: 1 + 1 + 4 = 6
    for n, expected in ((16384, 8452), (16385, 8458), (1, 6), (100, 56)):
        check_int(impl.tensor_bytes(n, "nf4-dq"), expected, f"tensor_bytes({n}, 'nf4-dq')")


@graded(2, 2, "QLoRA storage: nf4-dq is about 4.127 bits per parameter, nf4 4.5")
def test_nf4_bits_per_parameter(impl):
    n = 64 * 256 * 1000  # whole groups: 0.5 + 1/64 + 4/16384 bytes = 4.126953125 bits exactly
    got = impl.tensor_bytes(n, "nf4-dq")
    check_int(got, n // 2 + n // 64 + 4 * (n // 16384), f"tensor_bytes({n}, 'nf4-dq')")
    assert abs(got * 8 / n - 4.127) < 0.001, f"Called tensor_bytes({n}, 'nf4-dq'). {got * 8 / n} bits per parameter, expected about 4.127."
    check_int(impl.tensor_bytes(n, "nf4"), n * 9 // 16, f"tensor_bytes({n}, 'nf4')")


@graded(2, 1, "zero elements take zero bytes in every dtype")
def test_tensor_bytes_zero(impl):
    for dtype in WEIGHT_DTYPES:
        check_int(impl.tensor_bytes(0, dtype), 0, f"tensor_bytes(0, {dtype!r})")


@graded(2, 2, "tensor sizes far beyond 2**53 need integer ceilings (a float loses the odd element)")
def test_tensor_bytes_beyond_2_53(impl):
    n = 2**60 + 1
    # ceil(n/2) = 2**59 + 1; ceil(n/64) = 2**54 + 1 blocks; ceil(blocks/256) = 2**46 + 1
    check_int(impl.tensor_bytes(n, "nf4"), 2**59 + 1 + 4 * (2**54 + 1), "tensor_bytes(2**60 + 1, 'nf4')")
    check_int(impl.tensor_bytes(n, "nf4-dq"), 2**59 + 1 + 2**54 + 1 + 4 * (2**46 + 1),
              "tensor_bytes(2**60 + 1, 'nf4-dq')")
    check_int(impl.tensor_bytes(n, "bf16"), 2 * n, "tensor_bytes(2**60 + 1, 'bf16')")


@graded(2, 1, "invalid dtype or element count names the argument")
def test_tensor_bytes_invalid(impl):
    for dtype in ("BF16", "nf8", "fp8", "", None):
        check_raises(lambda: impl.tensor_bytes(10, dtype), "dtype", f"tensor_bytes(10, {dtype!r})")
    for n in (-1, 10.0, True):
        check_raises(lambda: impl.tensor_bytes(n, "bf16"), "num_elements", f"tensor_bytes({n!r}, 'bf16')")
    check_raises(lambda: impl.tensor_bytes(-1, "BF16"), "num_elements", "tensor_bytes(-1, 'BF16')")


@graded(2, 1, "model_weight_bytes rejects an unknown or miscased dtype, naming dtype")
def test_model_weight_bytes_invalid_dtype(impl):
    cfg = cfg_of(impl)
    for dtype in ("BF16", "NF4", "int4", "", None):
        check_raises(lambda: impl.model_weight_bytes(cfg, dtype), "dtype", f"model_weight_bytes(tiny, {dtype!r})")


@graded(2, 2, "quantized weights: each projection of each layer is its own tensor, with its own partial block")
def test_model_weights_quantize_each_matrix(impl):
    # h=2, i=3, 2 layers, non-gated, tied, V=1. Projections per layer: q,k,v,o 4 elements each,
    # up, down 6 each. nf4: ceil(4/2) + 4 = 6 per attention matrix, 3 + 4 = 7 per MLP matrix
    # -> 4*6 + 2*7 = 38 per layer, 76 for two. bf16 rest: embedding 2 + norms 5*2 = 12 params = 24 bytes.
    # One tensor for all 40 projection elements would be 20 + 4 = 24 bytes: far less.
    f = dict(hidden_size=2, intermediate_size=3, num_layers=2, num_heads=1, num_kv_heads=1,
             vocab_size=1, tie_embeddings=True, gated_mlp=False)
    check_int(impl.model_weight_bytes(impl.ModelConfig(**f), "nf4"), 100, f"model_weight_bytes({show(f)}, 'nf4')")


@graded(2, 2, "quantized weights: embedding, lm_head and norms stay in bf16")
def test_model_weights_rest_in_bf16(impl):
    # tiny int8: projections 2 * 46,080 = 92,160 bytes; rest (12,800 + 320) * 2 = 26,240 -> 118,400
    check_int(impl.model_weight_bytes(cfg_of(impl), "int8"), 118_400, "model_weight_bytes(tiny, 'int8')")
    check_int(impl.model_weight_bytes(cfg_of(impl), "fp32"), 421_120, "model_weight_bytes(tiny, 'fp32')")
    check_int(impl.model_weight_bytes(cfg_of(impl, tie_embeddings=True), "nf4-dq"), 73_816 - 12_800,
              "model_weight_bytes(tiny tied, 'nf4-dq')")


@graded(2, 3, "full fine-tuning: 2 + 2 + 4 + 8 = 16 bytes per parameter (Llama-2-7B by hand)")
def test_full_finetuning_llama2_7b(impl):
    p = 6_738_415_616
    got = impl.training_memory(cfg_of(impl, LLAMA2_7B), "full")
    check((got.weights, got.adapters, got.gradients, got.optimizer, got.master),
          (2 * p, 0, 2 * p, 8 * p, 4 * p), "training_memory(Llama-2-7B, 'full') fields")
    check_int(got.total, 107_814_649_856, "training_memory(Llama-2-7B, 'full').total")


@graded(2, 3, "LoRA: frozen bf16 base, gradients and optimizer states for the adapters only")
def test_lora_llama2_7b(impl):
    a = 4_194_304  # r=8 on q and v, see level 1
    got = impl.training_memory(cfg_of(impl, LLAMA2_7B), "lora")
    check((got.weights, got.adapters, got.gradients, got.optimizer, got.master),
          (13_476_831_232, 2 * a, 2 * a, 8 * a, 4 * a), "training_memory(Llama-2-7B, 'lora') fields")


@graded(2, 3, "QLoRA: nf4-dq base per matrix, adapters never quantized (Llama-2-7B by hand)")
def test_qlora_llama2_7b(impl):
    # q,k,v,o: 16,777,216 elements: 8,388,608 + 262,144 + 4*1,024 = 8,654,848 each
    # gate,up,down: 45,088,768 elements: 22,544,384 + 704,512 + 4*2,752 = 23,259,904 each
    # per layer 34,619,392 + 69,779,712 = 104,399,104; * 32 = 3,340,771,328
    # bf16 rest: (2 * 131,072,000 + 65 * 4,096) * 2 = 524,820,480 -> weights 3,865,591,808
    a = 4_194_304
    got = impl.training_memory(cfg_of(impl, LLAMA2_7B), "qlora")
    check((got.weights, got.adapters, got.gradients, got.optimizer, got.master),
          (3_865_591_808, 2 * a, 2 * a, 8 * a, 4 * a), "training_memory(Llama-2-7B, 'qlora') fields")


@graded(2, 2, "QLoRA with double_quant=False stores fp32 absmax constants")
def test_qlora_without_double_quant(impl):
    got = impl.training_memory(cfg_of(impl), "qlora", 4, ["q_proj", "k_proj"], double_quant=False)
    check_int(got.weights, 78_080, "training_memory(tiny, 'qlora', 4, ['q_proj', 'k_proj'], double_quant=False).weights")
    check_int(got.total, 78_080 + 16 * 1792, "training_memory(tiny, 'qlora', ..., double_quant=False).total")


@graded(2, 1, "full fine-tuning ignores rank and target_modules")
def test_full_ignores_lora_arguments(impl):
    got = impl.training_memory(cfg_of(impl), "full", 10**9, ["lm_head"], double_quant=False)
    check_int(got.total, 1_684_480, "training_memory(tiny, 'full', 10**9, ['lm_head'], False).total")


@graded(2, 1, "unknown method, then target_modules, then rank are validated in that order")
def test_training_memory_validation(impl):
    cfg = cfg_of(impl)
    check_raises(lambda: impl.training_memory(cfg, "Full"), "method", "training_memory(tiny, 'Full')")
    check_raises(lambda: impl.training_memory(cfg, "dora", 0, []), "method", "training_memory(tiny, 'dora', 0, [])")
    check_raises(lambda: impl.training_memory(cfg, "lora", 0, ["lm_head"]), "target_modules",
                 "training_memory(tiny, 'lora', 0, ['lm_head'])")
    check_raises(lambda: impl.training_memory(cfg, "qlora", 33, ["k_proj"]), "rank",
                 "training_memory(tiny, 'qlora', 33, ['k_proj'])")


@graded(2, 2, "fits_on_gpu: equality fits, one byte more does not")
def test_fits_equality(impl):
    check(impl.fits_on_gpu(22 * GIB, 24, 2), True, "fits_on_gpu(22 * 2**30, 24, 2)")
    check(impl.fits_on_gpu(22 * GIB + 1, 24, 2), False, "fits_on_gpu(22 * 2**30 + 1, 24, 2)")
    check(impl.fits_on_gpu(0, 1, 1), True, "fits_on_gpu(0, 1, 1)")


@graded(2, 2, "fits_on_gpu: GiB means 2**30 bytes, not 10**9")
def test_fits_gib_not_gb(impl):
    check(impl.fits_on_gpu(24 * 10**9 + 1, 24), True, "fits_on_gpu(24 * 10**9 + 1, 24)")
    check(impl.fits_on_gpu(24 * GIB - 10**9, 24, 1), False, "fits_on_gpu(24 * 2**30 - 10**9, 24, 1)")


@graded(2, 1, "fits_on_gpu: reserve_gib defaults to 0, so the whole GPU is usable")
def test_fits_default_reserve(impl):
    # reserve 0: 24 * 2**30 <= 24 * 2**30 fits; one byte more does not; 1 GiB fits a 1 GiB GPU
    check(impl.fits_on_gpu(24 * GIB, 24), True, "fits_on_gpu(24 * 2**30, 24)")
    check(impl.fits_on_gpu(24 * GIB + 1, 24), False, "fits_on_gpu(24 * 2**30 + 1, 24)")
    check(impl.fits_on_gpu(GIB, 1), True, "fits_on_gpu(2**30, 1)")


@graded(2, 1, "fits_on_gpu rejects negative bytes, a zero GPU, a negative reserve and non-ints")
def test_fits_invalid(impl):
    for args, name in (((-1, 24), "required_bytes"), ((1.5, 24), "required_bytes"), ((1, 0), "gpu_gib"),
                       ((1, 24.0), "gpu_gib"), ((1, 24, -1), "reserve_gib"), ((1, 24, True), "reserve_gib"),
                       ((-1, 0, -1), "required_bytes")):
        check_raises(lambda: impl.fits_on_gpu(*args), name, f"fits_on_gpu{args!r}")


@graded(2, 2, "Llama-2-70B QLoRA: does not fit a 24 GiB GPU, fits 48 GiB; full fine-tuning fits nothing small")
def test_70b_on_small_gpus(impl):
    cfg = cfg_of(impl, LLAMA2_70B)
    qlora = impl.training_memory(cfg, "qlora").total
    check_int(qlora, sum(o_training(LLAMA2_70B, "qlora", 8, ["q_proj", "v_proj"])),
              "training_memory(Llama-2-70B, 'qlora').total")
    check(impl.fits_on_gpu(qlora, 24, 2), False, f"fits_on_gpu({qlora}, 24, 2)")
    check(impl.fits_on_gpu(qlora, 48, 2), True, f"fits_on_gpu({qlora}, 48, 2)")
    full = impl.training_memory(cfg, "full").total
    check(impl.fits_on_gpu(full, 1024, 0), False, f"fits_on_gpu({full}, 1024, 0)")  # 1,103,626,371,072 > 2**40


@graded(2, 3, "weights in every dtype and training memory of random plans equal the oracle's")
@PROPERTY
@given(data=st.data(), f=configs())
def test_property_training_memory(impl, data, f):
    cfg = impl.ModelConfig(**f)
    dtype = data.draw(st.sampled_from(WEIGHT_DTYPES))
    check_int(impl.model_weight_bytes(cfg, dtype), o_weight_bytes(f, dtype), f"model_weight_bytes({show(f)}, {dtype!r})")
    targets = data.draw(module_names(f))
    rank = data.draw(st.integers(1, o_lora_max_rank(f, targets)))
    method = data.draw(st.sampled_from(("full", "lora", "qlora")))
    dq = data.draw(st.booleans())
    got = impl.training_memory(cfg, method, rank, targets, dq)
    check((got.weights, got.adapters, got.gradients, got.optimizer, got.master),
          o_training(f, method, rank, targets, dq),
          f"training_memory({show(f)}, {method!r}, {rank}, {targets!r}, {dq}) fields")


@graded(2, 2, "tensor_bytes of random counts in every dtype equals the oracle's")
@PROPERTY
@given(n=st.one_of(st.integers(0, 5000), st.integers(2**53, 2**70)), dtype=st.sampled_from(WEIGHT_DTYPES))
@example(n=2**53 + 1, dtype="nf4")
@example(n=2**53 + 1, dtype="nf4-dq")
@example(n=64 * 256 + 1, dtype="nf4-dq")
def test_property_tensor_bytes(impl, n, dtype):
    check_int(impl.tensor_bytes(n, dtype), o_tensor_bytes(n, dtype), f"tensor_bytes({n}, {dtype!r})")


@graded(2, 2, "training memory grows strictly with the LoRA rank")
@PROPERTY
@given(data=st.data(), f=configs())
def test_property_memory_monotonic_in_rank(impl, data, f):
    targets = data.draw(module_names(f))
    limit = o_lora_max_rank(f, targets)
    if limit < 2:
        return
    r1 = data.draw(st.integers(1, limit - 1))
    r2 = data.draw(st.integers(r1 + 1, limit))
    cfg = impl.ModelConfig(**f)
    for method in ("lora", "qlora"):
        small = impl.training_memory(cfg, method, r1, targets).total
        big = impl.training_memory(cfg, method, r2, targets).total
        assert small < big, (
            f"Called training_memory({show(f)}, {method!r}, r, {targets!r}).total with r={r1} and r={r2}. "
            f"Returned {small} and {big}, expected the first smaller."
        )


@graded(2, 2, "with 4r <= min(d, k), LoRA and QLoRA never need more than full fine-tuning")
@PROPERTY
@given(data=st.data(), f=configs())
def test_property_lora_not_more_than_full(impl, data, f):
    targets = data.draw(module_names(f))
    limit = o_lora_max_rank(f, targets) // 4
    if limit < 1:
        return
    rank = data.draw(st.integers(1, limit))
    cfg = impl.ModelConfig(**f)
    full = impl.training_memory(cfg, "full").total
    for method in ("lora", "qlora"):
        got = impl.training_memory(cfg, method, rank, targets).total
        assert got <= full, (
            f"Called training_memory({show(f)}, {method!r}, {rank}, {targets!r}).total. "
            f"Returned {got}, expected at most the full fine-tuning total {full}."
        )
