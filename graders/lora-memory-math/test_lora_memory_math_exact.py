"""Hidden suite of `lora-memory-math`, every level: exact integers past 2**53, and the argument types
of every constrained parameter.

The prompt promises ints computed with integer operations, and says "an int" means an int that is
not a bool: 2.0, "2", None and True are invalid wherever an int is asked for, and the ValueError's
message begins with the argument's name. The figures here are large enough that a float division
or a float product anywhere in the chain is off by at least one; expected values come from the
oracle (lora_memory_math_oracle.py), which uses integers only.
"""

from __future__ import annotations

import pytest
from lora_memory_math_oracle import (GIB, TINY, cfg_of, check_int, o_kv_per_token, o_max_context, o_max_requests,
                                     o_min_tp, o_weight_bytes, show)

from kata.checks import check, check_raises, graded
from kata.strict import same

# --- exact integers ------------------------------------------------------------


@graded(2, 1, "fits_on_gpu is exact at 2**60 bytes: one byte over a 2**30 GiB GPU does not fit")
def test_fits_exact_beyond_2_53(impl):
    g = 2**30  # a GPU of 2**60 bytes: required / 2**30 as a float cannot see one byte
    check(impl.fits_on_gpu(g * GIB, g), True, f"fits_on_gpu({g * GIB}, {g})")
    check(impl.fits_on_gpu(g * GIB + 1, g), False, f"fits_on_gpu({g * GIB + 1}, {g})")
    check(impl.fits_on_gpu(g * GIB - GIB + 1, g, 1), False, f"fits_on_gpu({g * GIB - GIB + 1}, {g}, 1)")


@graded(3, 1, "kv_bytes_per_token and mla_kv_bytes_per_token are exact past 2**53")
def test_kv_bytes_exact_beyond_2_53(impl):
    f = dict(hidden_size=3 * (2**20 + 1), intermediate_size=7, num_layers=2**33 + 1, num_heads=3,
             num_kv_heads=3, vocab_size=5)
    expected = o_kv_per_token(f, "bf16")
    assert expected > 2**56  # (2**33 + 1) * 3 * (2**20 + 1) spans more than 53 bits
    check_int(impl.kv_bytes_per_token(impl.ModelConfig(**f)), expected, f"kv_bytes_per_token({show(f)})")
    layers, rank = 2**31 + 1, 2**22 + 2  # (rank + 1) is odd: the product has bits below 2**53's reach
    expected = layers * (rank + 1) * 2
    check_int(impl.mla_kv_bytes_per_token(layers, rank, 1, "bf16"), expected,
              f"mla_kv_bytes_per_token({layers}, {rank}, 1, 'bf16')")


@graded(3, 2, "max_concurrent_requests and max_context_len are exact on a GPU of 2**70 bytes")
@pytest.mark.timeout(5)  # a correct answer takes milliseconds; counting up to 2**60 never ends
def test_capacity_exact_beyond_2_53(impl):
    gpu = 2**40 + 3
    cfg = cfg_of(impl)
    want = o_max_requests(TINY, 3, gpu, 1, "bf16", "bf16", 1)
    assert want > 2**60
    check_int(impl.max_concurrent_requests(cfg, 3, gpu, 1, "bf16", "bf16", 1), want,
              f"max_concurrent_requests({show(TINY)}, 3, {gpu}, 1, 'bf16', 'bf16', 1)")
    want = o_max_context(TINY, 3, gpu, 1, "bf16", "bf16", 1)
    check_int(impl.max_context_len(cfg, 3, gpu, 1, "bf16", "bf16", 1), want,
              f"max_context_len({show(TINY)}, 3, {gpu}, 1, 'bf16', 'bf16', 1)")


# A request of 2**53 + 1 tokens in blocks of 2 holds 2**52 + 1 blocks; the float quotient
# (2**53 + 1) / 2 rounds to 2**52, so math.ceil of it is one block short. On a GPU of 2**52 + 1 GiB
# the tiny model's pool holds 2**73 + 2,096,740 blocks of 2 tokens: 2**21 - 1 such requests, not 2**21.
HUGE_CONTEXT, HUGE_GPU = 2**53 + 1, 2**52 + 1


@graded(3, 1, "max_concurrent_requests rounds a context past 2**53 up to whole blocks exactly (a float ceiling is one block short)")
def test_request_blocks_exact_beyond_2_53(impl):
    args = (HUGE_CONTEXT, HUGE_GPU, 0, "bf16", "bf16", 2)
    want = o_max_requests(TINY, *args)
    assert same(want, 2**21 - 1), "grader self-check: the oracle disagrees with the figure above"
    check_int(impl.max_concurrent_requests(cfg_of(impl), *args), want,
              f"max_concurrent_requests({show(TINY)}, *{args!r})")


@graded(4, 1, "min_tp_size rounds a context past 2**53 up to whole blocks exactly (a float ceiling makes t = 1 fit)")
def test_min_tp_blocks_exact_beyond_2_53(impl):
    args = (2**21, HUGE_CONTEXT, HUGE_GPU, 0, "bf16", "bf16", 2)
    want = o_min_tp(TINY, *args)
    assert same(want, 2), "grader self-check: the oracle disagrees with t = 2"
    check(impl.min_tp_size(cfg_of(impl), *args), want, f"min_tp_size({show(TINY)}, *{args!r})")


@graded(4, 1, "per_gpu_weight_bytes: a vocabulary past 2**53 gives each GPU ceil(V / t) rows exactly")
def test_vocab_shard_exact_beyond_2_53(impl):
    f = dict(TINY, vocab_size=2**53 + 1)  # (2**53 + 1) / 2 rounds to 2**52 as a float
    want = o_weight_bytes(f, "bf16", 2)
    check_int(impl.per_gpu_weight_bytes(impl.ModelConfig(**f), 2, "bf16"), want,
              f"per_gpu_weight_bytes({show(f)}, 2, 'bf16')")


# --- argument types --------------------------------------------------------------

INT_BAD = (True, 2.0, None, "2")  # True passes any `>= 1` check: only a type check rejects it
NAME_BAD = (None, 2, "BF16")


def _calls(impl):
    """name -> (function, valid positional args, {parameter: (index, bad values)})."""
    cfg = cfg_of(impl)
    cap = {"gpu_gib": (2, INT_BAD), "reserve_gib": (3, INT_BAD), "weight_dtype": (4, NAME_BAD),
           "kv_dtype": (5, NAME_BAD), "block_size": (6, INT_BAD)}
    return {
        "count_lora_parameters": (impl.count_lora_parameters, [cfg, 4, ["q_proj"]],
                                  {"rank": (1, INT_BAD)}),
        "tensor_bytes": (impl.tensor_bytes, [100, "nf4"],
                         {"num_elements": (0, INT_BAD), "dtype": (1, NAME_BAD)}),
        "fits_on_gpu": (impl.fits_on_gpu, [1, 24, 0],
                        {"required_bytes": (0, INT_BAD), "gpu_gib": (1, INT_BAD),
                         "reserve_gib": (2, INT_BAD)}),
        "model_weight_bytes": (impl.model_weight_bytes, [cfg, "bf16"], {"dtype": (1, NAME_BAD)}),
        "kv_bytes_per_token": (impl.kv_bytes_per_token, [cfg, "bf16"], {"kv_dtype": (1, NAME_BAD)}),
        "mla_kv_bytes_per_token": (impl.mla_kv_bytes_per_token, [4, 512, 64, "bf16"],
                                   {"num_layers": (0, INT_BAD), "kv_lora_rank": (1, INT_BAD),
                                    "rope_head_dim": (2, INT_BAD), "kv_dtype": (3, NAME_BAD)}),
        "blocks_for_tokens": (impl.blocks_for_tokens, [100, 16],
                              {"num_tokens": (0, INT_BAD), "block_size": (1, INT_BAD)}),
        "max_concurrent_requests": (impl.max_concurrent_requests, [cfg, 64, 1, 0, "bf16", "bf16", 16],
                                    {"context_len": (1, INT_BAD), **cap}),
        "max_context_len": (impl.max_context_len, [cfg, 2, 1, 0, "bf16", "bf16", 16],
                            {"num_requests": (1, INT_BAD), **cap}),
        "per_gpu_weight_bytes": (impl.per_gpu_weight_bytes, [cfg, 2, "bf16"],
                                 {"tp_size": (1, INT_BAD), "dtype": (2, NAME_BAD)}),
        "per_gpu_kv_bytes_per_token": (impl.per_gpu_kv_bytes_per_token, [cfg, 2, "bf16"],
                                       {"tp_size": (1, INT_BAD), "kv_dtype": (2, NAME_BAD)}),
        "min_tp_size": (impl.min_tp_size, [cfg, 1, 64, 1, 0, "bf16", "bf16", 16],
                        {"batch_size": (1, INT_BAD), "context_len": (2, INT_BAD),
                         **{k: (i + 1, bad) for k, (i, bad) in cap.items()}}),
    }


def _check_types(impl, name):
    fn, args, params = _calls(impl)[name]
    for param, (index, bad_values) in params.items():
        for bad in bad_values:
            call_args = list(args)
            call_args[index] = bad
            shown = ", ".join("cfg" if i == 0 and hasattr(a, "hidden_size") else repr(a)
                              for i, a in enumerate(call_args))
            check_raises(lambda: fn(*call_args), param, f"{name}({shown})")


@graded(1, 1, "count_lora_parameters: a rank of True, 2.0, None or '2' is a ValueError naming rank")
def test_types_level1(impl):
    _check_types(impl, "count_lora_parameters")


@graded(2, 1, "every int and dtype parameter of level 2 rejects bool, integral floats, None and strings")
@pytest.mark.parametrize("name", ["tensor_bytes", "fits_on_gpu", "model_weight_bytes"])
def test_types_level2(impl, name):
    _check_types(impl, name)


@graded(3, 1, "every int and dtype parameter of level 3 rejects bool, integral floats, None and strings")
@pytest.mark.parametrize("name", ["kv_bytes_per_token", "mla_kv_bytes_per_token", "blocks_for_tokens",
                                  "max_concurrent_requests", "max_context_len"])
def test_types_level3(impl, name):
    _check_types(impl, name)


@graded(4, 1, "every int and dtype parameter of level 4 rejects bool, integral floats, None and strings")
@pytest.mark.parametrize("name", ["per_gpu_weight_bytes", "per_gpu_kv_bytes_per_token", "min_tp_size"])
def test_types_level4(impl, name):
    _check_types(impl, name)
