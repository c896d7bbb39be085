"""The `lora-memory-math` reference's formulas, checked against real PyTorch modules.

The kata's arithmetic is only worth teaching if it matches what a framework allocates. These tests
build a small Llama-style decoder in PyTorch, attach LoRA adapters, quantize projections into packed
NF4 storage, shard the weights the way tensor parallelism does, and run a mixed-precision Adam step,
then count `numel()` and `element_size()` (and, on a GPU, `torch.cuda.max_memory_allocated()`) and
compare with the reference solution.

Skipped when torch is not installed; the CUDA check is skipped without a GPU. The reference is loaded
by path, since its file name has a hyphen.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

REFERENCE = Path(__file__).resolve().parents[1] / "solutions" / "lora-memory-math.py"
PROJ = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def _load_reference():
    name = "lora_memory_math_reference_for_torch"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REFERENCE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


ref = _load_reference()

CONFIGS = {
    "gqa": dict(hidden_size=64, intermediate_size=176, num_layers=2, num_heads=4, num_kv_heads=2, vocab_size=100),
    "mha-tied": dict(hidden_size=48, intermediate_size=96, num_layers=3, num_heads=3, num_kv_heads=3,
                     vocab_size=37, tie_embeddings=True),
    "mqa-plain-mlp": dict(hidden_size=32, intermediate_size=50, num_layers=2, num_heads=4, num_kv_heads=1,
                          vocab_size=65, gated_mlp=False),
}


# --- a small Llama-style decoder ---------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, h: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class LoRALinear(nn.Module):
    """A frozen base Linear plus a trainable rank-r update B(A(x))."""

    def __init__(self, base: nn.Linear, rank: int):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        d, k = base.in_features, base.out_features
        self.lora_A = nn.Linear(d, rank, bias=False)  # weight (r, d)
        self.lora_B = nn.Linear(rank, k, bias=False)  # weight (k, r)
        nn.init.zeros_(self.lora_B.weight)
        self.lora_A.to(device=base.weight.device, dtype=base.weight.dtype)
        self.lora_B.to(device=base.weight.device, dtype=base.weight.dtype)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class Attention(nn.Module):
    record_kv = False  # keep the last forward's K and V (only the KV cache test wants them)

    def __init__(self, c: dict):
        super().__init__()
        h, heads, kv = c["hidden_size"], c["num_heads"], c["num_kv_heads"]
        self.heads, self.kv_heads, self.head_dim = heads, kv, h // heads
        self.q_proj = nn.Linear(h, h, bias=False)
        self.k_proj = nn.Linear(h, kv * self.head_dim, bias=False)
        self.v_proj = nn.Linear(h, kv * self.head_dim, bias=False)
        self.o_proj = nn.Linear(h, h, bias=False)
        self.kv_cache: list = []  # (k, v) of the last forward, each (batch, kv_heads, seq, head_dim)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.record_kv:
            self.kv_cache = [k.detach(), v.detach()]
        groups = self.heads // self.kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (b, heads, t, head_dim)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        self.gated = c.get("gated_mlp", True)
        if self.gated:
            self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        if self.gated:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.silu(self.up_proj(x)))


class Layer(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden_size"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["hidden_size"])
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_layers"]))
        self.norm = RMSNorm(c["hidden_size"])
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c.get("tie_embeddings", False):
            self.lm_head.weight = self.embed_tokens.weight  # one matrix, two uses

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def projections(model: Decoder):
    """(layer index, name, parent module) of every projection Linear."""
    for i, layer in enumerate(model.layers):
        for parent in (layer.self_attn, layer.mlp):
            for name in PROJ:
                if isinstance(getattr(parent, name, None), nn.Linear):
                    yield i, name, parent


def add_lora(model: Decoder, rank: int, targets) -> Decoder:
    """Freeze every base weight, wrap each targeted projection with an adapter."""
    for p in model.parameters():
        p.requires_grad_(False)
    for _, name, parent in list(projections(model)):
        if name in targets:
            setattr(parent, name, LoRALinear(getattr(parent, name), rank))
    return model


def unique_params(model):
    return list(model.parameters())  # parameters() yields a shared (tied) tensor once


def cfg(c: dict):
    return ref.ModelConfig(**c)


# --- parameter counts ---------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
def test_parameter_count_matches_numel(name):
    c = CONFIGS[name]
    model = Decoder(c)
    assert sum(p.numel() for p in unique_params(model)) == ref.count_parameters(cfg(c))


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("targets", [("q_proj", "v_proj"), ("k_proj", "down_proj", "up_proj"), PROJ])
def test_lora_count_matches_trainable_numel(name, targets):
    c = CONFIGS[name]
    if not c.get("gated_mlp", True):
        targets = tuple(t for t in targets if t != "gate_proj")
    model = add_lora(Decoder(c), 4, targets)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    assert trainable == ref.count_lora_parameters(cfg(c), 4, targets)
    assert frozen == ref.count_parameters(cfg(c))


def test_lora_at_max_rank_builds():
    c = CONFIGS["mqa-plain-mlp"]  # k_proj is 32 x 8: rank 8 is the bound
    model = add_lora(Decoder(c), 8, ["k_proj"])
    out = model(torch.randint(0, c["vocab_size"], (1, 5)))
    assert out.shape == (1, 5, c["vocab_size"])
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert trainable == ref.count_lora_parameters(cfg(c), 8, ["k_proj"])
    with pytest.raises(ValueError):
        ref.count_lora_parameters(cfg(c), 9, ["k_proj"])


# --- weight storage -----------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("dtype, torch_dtype", [("fp32", torch.float32), ("bf16", torch.bfloat16),
                                                ("fp16", torch.float16)])
def test_weight_bytes_match_element_size(name, dtype, torch_dtype):
    c = CONFIGS[name]
    model = Decoder(c).to(torch_dtype)
    stored = sum(p.numel() * p.element_size() for p in unique_params(model))
    assert stored == ref.model_weight_bytes(cfg(c), dtype)


NF4_LEVELS = torch.tensor([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171638489, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0,
])


def nf4_quantize(weight, double_quant: bool) -> dict:
    """Blockwise NF4 storage of one tensor: the tensors a 4-bit layer would keep in memory.

    codes: uint8, two 4-bit codes per byte; absmax: fp32 per block of 64, or with double
    quantization uint8 codes per block plus an fp32 scale per group of 256 blocks.
    """
    flat = weight.detach().float().flatten()
    n = flat.numel()
    blocks = math.ceil(n / 64)
    padded = torch.zeros(blocks * 64)
    padded[:n] = flat
    absmax = padded.view(blocks, 64).abs().amax(dim=1).clamp_min(1e-12)  # (blocks,)
    normalized = padded.view(blocks, 64) / absmax[:, None]
    codes = (normalized.flatten()[:n, None] - NF4_LEVELS[None, :]).abs().argmin(dim=1).to(torch.uint8)
    if n % 2:
        codes = torch.cat([codes, torch.zeros(1, dtype=torch.uint8)])
    packed = (codes[0::2] << 4) | codes[1::2]  # (ceil(n / 2),)
    stored = {"codes": packed}
    if not double_quant:
        stored["absmax"] = absmax  # fp32
        return stored
    groups = math.ceil(blocks / 256)
    padded_absmax = torch.zeros(groups * 256)
    padded_absmax[:blocks] = absmax
    scale = padded_absmax.view(groups, 256).amax(dim=1) / 255  # fp32, (groups,)
    q = torch.round(padded_absmax.view(groups, 256) / scale[:, None]).flatten()[:blocks]
    stored["absmax_codes"] = q.to(torch.uint8)
    stored["absmax_scale"] = scale
    return stored


def nf4_dequantize(stored: dict, n: int):
    packed = stored["codes"]
    codes = torch.stack([packed >> 4, packed & 0xF], dim=1).flatten()[:n].long()
    if "absmax" in stored:
        absmax = stored["absmax"]
    else:
        absmax = stored["absmax_codes"].float() * stored["absmax_scale"].repeat_interleave(256)[: stored["absmax_codes"].numel()]
    values = NF4_LEVELS[codes]
    return values * absmax.repeat_interleave(64)[:n]


def storage_bytes(stored: dict) -> int:
    return sum(t.numel() * t.element_size() for t in stored.values())


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 100, 64 * 256, 64 * 256 + 1, 64 * 257 + 3])
@pytest.mark.parametrize("dtype", ["nf4", "nf4-dq"])
def test_nf4_storage_matches_tensor_bytes(n, dtype):
    torch.manual_seed(n)
    weight = torch.randn(n)
    stored = nf4_quantize(weight, double_quant=(dtype == "nf4-dq"))
    assert storage_bytes(stored) == ref.tensor_bytes(n, dtype)
    # and the storage really holds the weights: 4-bit error stays within a block's scale
    error = (nf4_dequantize(stored, n) - weight).abs().max().item()
    assert error <= 0.3 * weight.abs().max().item() + 1e-6


def test_int8_storage_matches_tensor_bytes():
    weight = torch.randn(1000)
    scale = weight.abs().max() / 127
    q = torch.round(weight / scale).to(torch.int8)
    assert q.numel() * q.element_size() == ref.tensor_bytes(1000, "int8")  # the kata counts no scales


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("dtype", ["nf4", "nf4-dq"])
def test_quantized_model_storage(name, dtype):
    """Quantize each projection on its own, keep the rest in bf16, count every stored byte."""
    c = CONFIGS[name]
    model = Decoder(c)
    quantized = {id(getattr(parent, proj).weight) for _, proj, parent in projections(model)}
    total = 0
    for p in unique_params(model):
        if id(p) in quantized:
            total += storage_bytes(nf4_quantize(p, double_quant=(dtype == "nf4-dq")))
        else:
            total += p.numel() * p.to(torch.bfloat16).element_size()
    assert total == ref.model_weight_bytes(cfg(c), dtype)


# --- KV cache -----------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("dtype, torch_dtype", [("fp32", torch.float32), ("bf16", torch.bfloat16)])
def test_kv_cache_bytes_per_token(name, dtype, torch_dtype):
    """Run a forward pass and measure the K and V tensors each layer produced."""
    c = CONFIGS[name]
    model = Decoder(c).to(torch_dtype)
    for layer in model.layers:
        layer.self_attn.record_kv = True
    tokens = 7
    with torch.no_grad():
        model(torch.randint(0, c["vocab_size"], (1, tokens)))
    cached = sum(t.numel() * t.element_size() for layer in model.layers for t in layer.self_attn.kv_cache)
    assert cached == tokens * ref.kv_bytes_per_token(cfg(c), dtype)


def test_paged_cache_tensor():
    """A paged pool shaped like an engine's: (blocks, K/V, layers, block_size, kv_heads, head_dim)."""
    c = CONFIGS["gqa"]
    block_size, context = 16, 40
    blocks = ref.blocks_for_tokens(context, block_size)
    pool = torch.empty(blocks, 2, c["num_layers"], block_size, c["num_kv_heads"], 16, dtype=torch.bfloat16)
    assert blocks == 3
    assert pool.numel() * pool.element_size() == blocks * block_size * ref.kv_bytes_per_token(cfg(c))


# --- tensor parallelism -------------------------------------------------------


def shard_model(model: Decoder, c: dict, t: int, rank: int) -> list:
    """(name, tensor) of every weight GPU `rank` of `t` holds, following the prompt's sharding rules.

    torch stores a Linear's weight as (out_features, in_features): a split by output columns of the
    prompt's d x k matrix is a split of dim 0 here, a split by input rows one of dim 1.
    """
    heads, kv, h = c["num_heads"], c["num_kv_heads"], c["hidden_size"]
    head_dim = h // heads
    vocab_rows = math.ceil(c["vocab_size"] / t)
    out = []

    def vocab_shard(w):  # pad the vocabulary to t equal shards
        padded = torch.zeros(vocab_rows * t, w.shape[1], dtype=w.dtype)
        padded[: w.shape[0]] = w
        return padded.chunk(t, dim=0)[rank]

    out.append(("embed_tokens", vocab_shard(model.embed_tokens.weight)))
    if not c.get("tie_embeddings", False):
        out.append(("lm_head", vocab_shard(model.lm_head.weight)))
    out.append(("norm", model.norm.weight))  # replicated
    for layer in model.layers:
        a, m = layer.self_attn, layer.mlp
        out.append(("input_layernorm", layer.input_layernorm.weight))
        out.append(("post_attention_layernorm", layer.post_attention_layernorm.weight))
        out.append(("q_proj", a.q_proj.weight.chunk(t, dim=0)[rank]))  # (h / t, h)
        out.append(("o_proj", a.o_proj.weight.chunk(t, dim=1)[rank]))  # (h, h / t)
        for name in ("k_proj", "v_proj"):
            per_head = getattr(a, name).weight.view(kv, head_dim, h)
            if kv >= t:
                out.append((name, per_head.chunk(t, dim=0)[rank].reshape(-1, h)))
            else:  # replicated: GPU rank keeps whole head rank // (t / kv)
                out.append((name, per_head[rank // (t // kv)]))
        for name in ("gate_proj", "up_proj"):
            if hasattr(m, name):
                out.append((name, getattr(m, name).weight.chunk(t, dim=0)[rank]))
        out.append(("down_proj", m.down_proj.weight.chunk(t, dim=1)[rank]))
    return out


@pytest.mark.parametrize("name, sizes", [("gqa", (1, 2, 4)), ("mha-tied", (1, 3)), ("mqa-plain-mlp", (1, 2))])
def test_tensor_parallel_shards(name, sizes):
    c = CONFIGS[name]
    model = Decoder(c).to(torch.bfloat16)
    for t in sizes:
        shards = [shard_model(model, c, t, r) for r in range(t)]
        per_rank = [sum(w.numel() * w.element_size() for _, w in shard) for shard in shards]
        assert per_rank == [ref.per_gpu_weight_bytes(cfg(c), t)] * t
        # KV per token on one GPU: the output width of its k_proj and v_proj shards, every layer
        kv_bytes = [sum(w.shape[0] * w.element_size() for n, w in shard if n in ("k_proj", "v_proj"))
                    for shard in shards]
        assert kv_bytes == [ref.per_gpu_kv_bytes_per_token(cfg(c), t)] * t


def test_tensor_parallel_shards_rebuild_q_and_down():
    """The sharding is a real split: concatenating the shards gives the full matrices back."""
    c = CONFIGS["gqa"]
    model = Decoder(c)
    t = 2
    q = torch.cat([model.layers[0].self_attn.q_proj.weight.chunk(t, dim=0)[r] for r in range(t)], dim=0)
    down = torch.cat([model.layers[0].mlp.down_proj.weight.chunk(t, dim=1)[r] for r in range(t)], dim=1)
    assert torch.equal(q, model.layers[0].self_attn.q_proj.weight)
    assert torch.equal(down, model.layers[0].mlp.down_proj.weight)


# --- one mixed-precision training step ----------------------------------------


def mixed_precision_step(model: Decoder, c: dict, device) -> dict:
    """bf16 weights and gradients, fp32 master copy and Adam moments for the trainable parameters.

    Returns the bytes of each kind of state held after the step, counted tensor by tensor.
    """
    trainable = [p for p in model.parameters() if p.requires_grad]
    master = [p.detach().float().clone().requires_grad_(True) for p in trainable]
    optimizer = torch.optim.Adam(master, lr=1e-3)
    ids = torch.randint(0, c["vocab_size"], (2, 8), device=device)
    loss = F.cross_entropy(model(ids).float().flatten(0, 1), ids.flatten())
    loss.backward()
    for m, p in zip(master, trainable, strict=True):
        m.grad = p.grad.float()  # fp32 gradient for the update only; dropped right after
    optimizer.step()
    for m, p in zip(master, trainable, strict=True):
        p.data.copy_(m.data)  # bf16 weights follow the master copy
        m.grad = None

    def nbytes(tensors):
        return sum(x.numel() * x.element_size() for x in tensors)

    moments = [s[key] for s in optimizer.state.values() for key in ("exp_avg", "exp_avg_sq")]
    frozen = [p for p in model.parameters() if not p.requires_grad]
    return {
        "bf16_trainable": nbytes(trainable),
        "frozen": nbytes(frozen),
        "gradients": nbytes(p.grad for p in trainable),
        "master": nbytes(master),
        "optimizer": nbytes(moments),
        "tensors": len(trainable) * 5 + len(frozen),
        "keep": (master, optimizer),
    }


@pytest.mark.parametrize("method", ["full", "lora"])
def test_training_step_state_bytes_cpu(method):
    c = CONFIGS["gqa"]
    torch.manual_seed(0)
    model = Decoder(c).to(torch.bfloat16)
    if method == "lora":
        add_lora(model, 4, ["q_proj", "k_proj"])
    got = mixed_precision_step(model, c, "cpu")
    want = ref.training_memory(cfg(c), method, 4, ["q_proj", "k_proj"])
    if method == "full":
        assert got["bf16_trainable"] == want.weights and got["frozen"] == 0
    else:
        assert got["frozen"] == want.weights and got["bf16_trainable"] == want.adapters
    assert (got["gradients"], got["master"], got["optimizer"]) == (want.gradients, want.master, want.optimizer)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: compares against torch.cuda.max_memory_allocated()")
@pytest.mark.parametrize("method", ["full", "lora"])
def test_training_step_cuda_memory(method):
    """Predicted bytes vs the CUDA caching allocator, for one step of a small model.

    After the step, the allocated memory is exactly the persistent states (weights, gradients,
    master copy, moments) up to the allocator's 512-byte rounding per tensor; the peak also holds
    activations, so it is at least the prediction.
    """
    c = dict(hidden_size=512, intermediate_size=1376, num_layers=4, num_heads=8, num_kv_heads=2, vocab_size=1000)
    device = torch.device("cuda")
    torch.manual_seed(0)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    # warm up first: cuBLAS keeps its workspaces in the caching allocator from the first matmul on,
    # and they must count as the baseline, not as the model's
    warm = Decoder(c).to(device=device, dtype=torch.bfloat16)
    mixed_precision_step(warm, c, device)
    del warm
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    model = Decoder(c).to(device=device, dtype=torch.bfloat16)
    if method == "lora":
        add_lora(model, 16, ["q_proj", "v_proj"])
    got = mixed_precision_step(model, c, device)
    torch.cuda.synchronize()
    held = torch.cuda.memory_allocated() - before
    peak = torch.cuda.max_memory_allocated() - before
    predicted = ref.training_memory(cfg(c), method, 16, ["q_proj", "v_proj"]).total
    slack = 512 * got["tensors"] + 2**20  # 512-byte rounding per tensor, plus 1 MiB of runtime residue
    assert predicted <= held <= predicted + slack, (
        f"{method}: predicted {predicted} bytes of state, the allocator holds {held} (slack {slack})"
    )
    assert peak >= predicted, f"{method}: peak {peak} bytes is below the predicted {predicted}"
