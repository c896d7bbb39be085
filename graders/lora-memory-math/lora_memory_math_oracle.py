"""Shared helpers of the hidden suite of `lora-memory-math`: configs, int checks, the oracle, strategies.

The oracle is a slow, literal model of the prompt's rules, written independently of the reference:
it lists every tensor of every layer one by one, and searches capacities against the fits rule.
conftest.py loads this file as `lora_memory_math_oracle` before the tests import from it.
A test's expected figures are computed by hand in the comments beside it, or by this oracle.
"""

from __future__ import annotations

from hypothesis import strategies as st

GIB = 2**30


# --- helpers: calls and messages --------------------------------------------

LLAMA2_7B = dict(hidden_size=4096, intermediate_size=11008, num_layers=32, num_heads=32,
                 num_kv_heads=32, vocab_size=32000)
LLAMA2_70B = dict(hidden_size=8192, intermediate_size=28672, num_layers=80, num_heads=64,
                  num_kv_heads=8, vocab_size=32000)
TINY = dict(hidden_size=64, intermediate_size=176, num_layers=2, num_heads=4, num_kv_heads=2,
            vocab_size=100)
ALL_PROJ = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def cfg_of(impl, base=TINY, **overrides):
    return impl.ModelConfig(**{**base, **overrides})


def show(fields) -> str:
    return "ModelConfig(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"


def check_int(got, expected, call: str) -> None:
    """Also insist on an int: 5.0 == 5 in Python, but the prompt promises ints."""
    __tracebackhide__ = True
    ok = type(got) is int and got == expected
    assert ok, f"Called {call}. Returned {got!r} ({type(got).__name__}), expected the int {expected!r}."


# --- the oracle: a literal reading of the prompt -----------------------------

O_FIELDS = ("hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads", "vocab_size")


def o_is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def o_config_error(f: dict) -> str | None:
    """The field a valid implementation must name first, or None when the config is valid."""
    for name in O_FIELDS:
        v = f[name]
        if not o_is_int(v) or v < 1:
            return name
        if name == "num_heads" and f["hidden_size"] % v != 0:
            return name
        if name == "num_kv_heads" and f["num_heads"] % v != 0:
            return name
    for name in ("tie_embeddings", "gated_mlp"):
        if name in f and not isinstance(f[name], bool):
            return name
    return None


def o_tp_valid(f: dict, t: int) -> bool:
    if t < 1 or f["num_heads"] % t or f["intermediate_size"] % t:
        return False
    kv = f["num_kv_heads"]
    if kv >= t:
        return kv % t == 0
    return t % kv == 0


def o_tensors(f: dict, t: int = 1) -> list[tuple[str, str, int, int]]:
    """Every tensor one of t GPUs holds, one entry each: (kind, name, rows, cols)."""
    h = f["hidden_size"]
    head_dim = h // f["num_heads"]
    q_heads_here = f["num_heads"] // t
    kv_heads_here = f["num_kv_heads"] // t if f["num_kv_heads"] >= t else 1  # replicated
    inter_here = f["intermediate_size"] // t
    vocab_rows = o_started(f["vocab_size"], t)
    gated = f.get("gated_mlp", True)
    out = [("embed", "embed_tokens", vocab_rows, h)]
    for _layer in range(f["num_layers"]):
        out.append(("norm", "input_layernorm", 1, h))
        out.append(("proj", "q_proj", h, q_heads_here * head_dim))
        out.append(("proj", "k_proj", h, kv_heads_here * head_dim))
        out.append(("proj", "v_proj", h, kv_heads_here * head_dim))
        out.append(("proj", "o_proj", q_heads_here * head_dim, h))
        out.append(("norm", "post_attention_layernorm", 1, h))
        if gated:
            out.append(("proj", "gate_proj", h, inter_here))
        out.append(("proj", "up_proj", h, inter_here))
        out.append(("proj", "down_proj", inter_here, h))
    out.append(("norm", "final_norm", 1, h))
    if not f.get("tie_embeddings", False):
        out.append(("embed", "lm_head", vocab_rows, h))
    return out


def o_params(f: dict, t: int = 1) -> int:
    return sum(rows * cols for _, _, rows, cols in o_tensors(f, t))


O_PLAIN = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1}
O_KV = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def o_started(n: int, size: int) -> int:
    """How many groups of `size` items n items start: full groups, plus one for a remainder."""
    full, rest = divmod(n, size)
    return full + (1 if rest else 0)


def o_tensor_bytes(n: int, dtype: str) -> int:
    if dtype in O_PLAIN:
        return n * O_PLAIN[dtype]
    packed = o_started(n, 2)  # one byte per started pair of codes
    blocks = o_started(n, 64)  # one constant per started block of 64
    if dtype == "nf4":
        return packed + 4 * blocks
    groups = o_started(blocks, 256)  # one fp32 per started group of 256 constants
    return packed + blocks + 4 * groups


def o_weight_bytes(f: dict, dtype: str, t: int = 1) -> int:
    total = 0
    for kind, _, rows, cols in o_tensors(f, t):
        if dtype in ("int8", "nf4", "nf4-dq"):
            total += o_tensor_bytes(rows * cols, dtype) if kind == "proj" else 2 * rows * cols
        else:
            total += O_PLAIN[dtype] * rows * cols
    return total


def o_lora(f: dict, rank: int, targets) -> int:
    names = set(targets)
    total = 0
    for _, name, rows, cols in o_tensors(f):
        if name in names:
            total += rank * (rows + cols)
    return total


def o_lora_max_rank(f: dict, targets) -> int:
    return min(min(rows, cols) for _, name, rows, cols in o_tensors(f) if name in set(targets))


def o_training(f: dict, method: str, rank: int, targets, dq: bool = True) -> tuple[int, ...]:
    """(weights, adapters, gradients, optimizer, master)."""
    if method == "full":
        n = o_params(f)
        return (2 * n, 0, 2 * n, 8 * n, 4 * n)
    n = o_lora(f, rank, targets)
    base = "bf16" if method == "lora" else ("nf4-dq" if dq else "nf4")
    return (o_weight_bytes(f, base), 2 * n, 2 * n, 8 * n, 4 * n)


def o_kv_per_token(f: dict, kv_dtype: str, t: int = 1) -> int:
    head_dim = f["hidden_size"] // f["num_heads"]
    kv_here = f["num_kv_heads"] // t if f["num_kv_heads"] >= t else 1
    per_layer = 0
    for _kv_or_v in ("K", "V"):
        per_layer += kv_here * head_dim * O_KV[kv_dtype]
    return f["num_layers"] * per_layer


def o_pool_fits(f, t, gpu_gib, reserve_gib, wd, kd, bs, requests, tokens) -> bool:
    """Do `requests` requests of `tokens` tokens each fit on every one of t GPUs?"""
    blocks_each = o_started(tokens, bs)
    room = gpu_gib * GIB - reserve_gib * GIB - o_weight_bytes(f, wd, t)
    return requests * blocks_each * bs * o_kv_per_token(f, kd, t) <= room


def o_largest(pred, start: int = 0) -> int:
    """Largest n >= start with pred(n) true, given pred(start) and pred monotone decreasing."""
    lo, step = start, 1
    while pred(lo + step):
        lo += step
        step *= 2
    while step > 1:  # pred(lo) true, pred(lo + step) false
        step //= 2
        if pred(lo + step):
            lo += step
    return lo


def o_max_requests(f, context_len, gpu_gib, reserve_gib=0, wd="bf16", kd="bf16", bs=16) -> int:
    if not o_pool_fits(f, 1, gpu_gib, reserve_gib, wd, kd, bs, 1, context_len):
        return 0
    return o_largest(lambda n: o_pool_fits(f, 1, gpu_gib, reserve_gib, wd, kd, bs, n, context_len), 1)


def o_max_context(f, num_requests, gpu_gib, reserve_gib=0, wd="bf16", kd="bf16", bs=16) -> int:
    # search in whole blocks: a context of k blocks is k * bs tokens
    def fits(k):
        return o_pool_fits(f, 1, gpu_gib, reserve_gib, wd, kd, bs, num_requests, k * bs)
    if not fits(1):
        return 0
    return o_largest(fits, 1) * bs


def o_min_tp(f, batch, context_len, gpu_gib, reserve_gib=0, wd="bf16", kd="bf16", bs=16):
    for t in range(1, f["num_heads"] + 1):
        if o_tp_valid(f, t) and o_pool_fits(f, t, gpu_gib, reserve_gib, wd, kd, bs, batch, context_len):
            return t
    return None


# --- strategies -------------------------------------------------------------


@st.composite
def configs(draw, max_layers: int = 3, max_heads_per_kv: int = 4):
    kv = draw(st.integers(1, 4))
    heads = kv * draw(st.integers(1, max_heads_per_kv))
    head_dim = draw(st.integers(1, 12))
    return dict(
        hidden_size=heads * head_dim,
        intermediate_size=draw(st.integers(1, 80)),
        num_layers=draw(st.integers(1, max_layers)),
        num_heads=heads,
        num_kv_heads=kv,
        vocab_size=draw(st.integers(1, 300)),
        tie_embeddings=draw(st.booleans()),
        gated_mlp=draw(st.booleans()),
    )


def module_names(f: dict):
    names = [n for n in ALL_PROJ if f["gated_mlp"] or n != "gate_proj"]
    return st.lists(st.sampled_from(names), min_size=1, max_size=5)


WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "int8", "nf4", "nf4-dq")
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8")


@st.composite
def tp_configs(draw):
    kv = draw(st.sampled_from((1, 2, 3, 4, 6, 8)))
    heads = kv * draw(st.sampled_from((1, 2, 3, 4)))
    head_dim = draw(st.integers(1, 8))
    return dict(
        hidden_size=heads * head_dim,
        intermediate_size=draw(st.sampled_from((1, 2, 4, 6, 12, 24, 30, 48))),
        num_layers=draw(st.integers(1, 3)),
        num_heads=heads,
        num_kv_heads=kv,
        vocab_size=draw(st.integers(1, 200)),
        tie_embeddings=draw(st.booleans()),
        gated_mlp=draw(st.booleans()),
    )
