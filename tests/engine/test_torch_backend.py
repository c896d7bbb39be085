"""The torch backend computes what the numpy reference computes (CPU here; CUDA if present)."""

from __future__ import annotations

import numpy as np
import pytest

from kata.engine.attention import paged_decode_attention
from kata.engine.config import ModelConfig
from kata.engine.llm_engine import LLMEngine
from kata.engine.model import TinyModel
from kata.engine.sequence import SamplingParams

from .helpers import tiny_config


torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
from kata.engine.backends import torch_backend as tb  # noqa: E402
from kata.engine.backends.torch_model import TorchModel  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA GPU visible to torch"))]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: threads only add contention
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("device", DEVICES)
def test_paged_decode_attention_parity(device):
    rng = np.random.default_rng(0)
    k_cache, v_cache = rng.standard_normal((2, 32, 4, 2, 16)).astype(np.float32)
    q = rng.standard_normal((3, 4, 16)).astype(np.float32)
    tables, lens = [[5, 9, 1], [30], [2, 3, 4, 6, 7]], [10, 3, 17]
    want = paged_decode_attention(q, k_cache, v_cache, tables, lens)
    t = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
    got = tb.paged_decode_attention(t(q), t(k_cache), t(v_cache), tables, lens).cpu().numpy()
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_model_logits_parity(device):
    """One mixed step (a prompt chunk and a decode) through both backends."""
    numpy_model = TinyModel(ModelConfig(max_model_len=128))
    torch_model = TorchModel(numpy_model, device=device)
    from kata.engine.attention import AttentionMetadata, PrefillChunk
    from kata.engine.kv_cache import KVCache

    rng = np.random.default_rng(1)
    ids = rng.integers(0, 256, 12)
    meta = AttentionMetadata(slot_mapping=np.array([*range(8, 19), 40]), num_prefill_tokens=11,
                             prefills=[PrefillChunk(0, 11, 0, [2, 3, 4])],
                             decode_block_tables=[[9, 10]], decode_context_lens=[5],
                             sample_rows=np.array([10, 11]))
    positions = np.array([*range(11), 4])
    np_cache = KVCache(2, 16, 4, 2, 16)
    th_cache = tb.TorchKVCache(2, 16, 4, 2, 16, device=device)
    for layer in range(2):  # the decode sequence's 4 earlier tokens, in blocks 9 and 10
        kv = rng.standard_normal((2, 4, 2, 16)).astype(np.float32)
        np_cache.write(layer, [36, 37, 38, 39], *kv)
        th_cache.write(layer, [36, 37, 38, 39], *(torch.as_tensor(x, device=device) for x in kv))
    want = numpy_model.forward(ids, positions, meta, np_cache)
    got = torch_model.forward(ids, positions, meta, th_cache).cpu().numpy()
    np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_allclose(th_cache.k.cpu().numpy(), np_cache.k, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_engine_on_torch_generates_the_numpy_tokens(device):
    prompts = ["Hello, paged attention!", "KV", "fox"]
    params = SamplingParams(max_tokens=24, temperature=0, ignore_eos=True)
    outs = {}
    for backend in ("numpy", "torch"):
        cfg = tiny_config(num_blocks=20, max_model_len=80, preemption_mode="swap",
                          num_host_blocks=32)
        cfg.backend, cfg.device = backend, device if backend == "torch" else "cpu"
        engine = LLMEngine(cfg)
        ids = [engine.add_request(p, params) for p in prompts]
        by_id = {o.request_id: o.outputs[0].token_ids for o in engine.run().outputs}
        outs[backend] = [by_id[i] for i in ids]
    assert outs["torch"] == outs["numpy"]


def test_cuda_asked_for_without_a_gpu_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        tb.TorchKVCache(1, 2, 4, 1, 8, device="cuda")


def test_the_prepared_cuda_check_runs_on_cpu_and_refuses_a_missing_gpu():
    """benchmarks/cuda_check.py is what a GPU session runs; here it runs its checks on CPU torch."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "cuda_check.py"
    run = subprocess.run([sys.executable, str(script), "--device", "cpu", "--quick"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert any(line.startswith("greedy tokens, torch == numpy") and line.endswith("yes") for line in lines)
    assert any(line.startswith("decode attention, K+V read") and "GB/s" in line for line in lines)
    if not torch.cuda.is_available():
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and run.stderr.startswith("error: --device cuda: torch sees no CUDA GPU")
        assert len(run.stderr.strip().splitlines()) == 1


# Tolerance per dtype from the format's precision: atol = n * eps * max|logits|, eps the format's
# machine epsilon (2**-7 bfloat16, 2**-10 float16, 2**-23 float32). Measured on CPU torch: 0.8 eps
# for the half formats, 2.6 eps for float32 (where the numpy reference, itself float32, rounds as
# much as torch does and the order of summation differs by device: hence the larger n).
TOLERANCE_EPS = {"float32": 32, "bfloat16": 8, "float16": 8}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_logits_match_numpy_within_the_formats_precision(dtype):
    from kata.engine.attention import AttentionMetadata, PrefillChunk
    from kata.engine.kv_cache import KVCache

    numpy_model = TinyModel(ModelConfig(max_model_len=128))
    ids = np.random.default_rng(1).integers(0, 256, 40)
    meta = AttentionMetadata(slot_mapping=np.arange(40), num_prefill_tokens=40,
                             prefills=[PrefillChunk(0, 40, 0, list(range(10)))],
                             sample_rows=np.arange(40))
    want = numpy_model.forward(ids, np.arange(40), meta, KVCache(2, 16, 4, 2, 16))
    cache = tb.TorchKVCache(2, 16, 4, 2, 16, dtype=dtype)
    got = TorchModel(numpy_model, dtype=dtype).forward(ids, np.arange(40), meta, cache)
    assert cache.k.dtype == tb.DTYPES[dtype] and got.dtype == torch.float32
    atol = TOLERANCE_EPS[dtype] * torch.finfo(tb.DTYPES[dtype]).eps * np.abs(want).max()
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=atol)


def test_sampling_on_the_device_draws_what_numpy_draws():
    from kata.engine.backends.torch_model import sample_on_device
    from kata.engine.model import sample_row

    rng = np.random.default_rng(2)
    logits = rng.standard_normal((64, 258)).astype(np.float32) * 3
    temps = rng.choice([0.0, 0.5, 1.0, 2.0], 64)
    top_ks = rng.choice([0, 1, 5, 300], 64)
    top_ps = rng.choice([1.0, 0.9, 0.3, 1e-6], 64)
    uniforms = rng.random(64)
    want = [sample_row(*args) for args in zip(logits, temps, top_ks, top_ps, uniforms, strict=True)]
    got = sample_on_device(torch.as_tensor(logits), *(torch.as_tensor(a) for a in (
        temps, top_ks, top_ps, uniforms))).tolist()
    assert got == want


def test_an_engine_in_bfloat16_runs_and_swaps():
    cfg = tiny_config(num_blocks=20, max_model_len=80, preemption_mode="swap", num_host_blocks=32)
    cfg.backend, cfg.dtype = "torch", "bfloat16"
    engine = LLMEngine(cfg)
    for p in ["Hello, paged attention!", "KV", "fox"]:
        engine.add_request(p, SamplingParams(max_tokens=24, temperature=0, ignore_eos=True))
    outs = engine.run().outputs
    assert [len(o.outputs[0].token_ids) for o in outs] == [24, 24, 24]
    assert engine.kv_cache.k.dtype == torch.bfloat16 and engine.scheduler.num_swapped_out > 0


def test_each_step_moves_its_inputs_once_and_brings_back_only_token_ids(monkeypatch):
    """One host-to-device copy for the step's integer inputs, one for the sampling parameters;
    the logits never leave the device (only the sampled ids do)."""
    from kata.engine.backends import torch_model

    cfg = tiny_config()
    cfg.backend = "torch"
    engine = LLMEngine(cfg)
    for p in ["Hello, paged attention!", "KV", "fox"]:
        engine.add_request(p, SamplingParams(max_tokens=4, seed=1))
    moved = []
    real = tb.to_device
    for module in (tb, torch_model):
        monkeypatch.setattr(module, "to_device", lambda a, d: moved.append(a.shape) or real(a, d))
    monkeypatch.setattr(torch.Tensor, "numpy", lambda self: pytest.fail("logits copied to host"))
    steps = 0
    while engine.has_unfinished():
        engine.step()
        steps += 1
    assert len(moved) == 2 * steps and all(len(shape) == 1 for shape in moved[::2])


def test_a_real_sized_shape_draws_its_weights_on_the_device(monkeypatch):
    """Over HOST_DRAW_PARAMS parameters the weights come from torch's generator on the device
    (the tiny shape stands in for llama-3.2-1b here): TinyModel's names, shapes and dtypes, the
    same numbers for the same seed, and a forward that runs."""
    from kata.engine.attention import AttentionMetadata
    from kata.engine.backends import torch_model

    config = ModelConfig(max_model_len=64)
    from_numpy = TorchModel.for_config(config)
    monkeypatch.setattr(torch_model, "HOST_DRAW_PARAMS", 0)
    drawn, again = TorchModel.for_config(config), TorchModel.for_config(config)
    for name in ("embed", "lm_head", "final_norm", "rope_cos"):
        a, b = getattr(from_numpy, name), getattr(drawn, name)
        assert a.shape == b.shape and a.dtype == b.dtype, name
        assert torch.equal(b, getattr(again, name))
    assert {k: v.shape for k, v in drawn.layers[0].items()} == {
        k: v.shape for k, v in from_numpy.layers[0].items()}
    assert not torch.equal(drawn.embed, from_numpy.embed)  # another stream of numbers
    meta = AttentionMetadata(slot_mapping=np.array([3]), decode_block_tables=[[0]],
                             decode_context_lens=[4], sample_rows=np.array([0]))
    logits = drawn.forward(np.array([65]), np.array([3]), meta, tb.TorchKVCache(2, 4, 16, 2, 16))
    assert logits.shape == (1, config.vocab_size) and bool(torch.isfinite(logits).all())
    assert drawn.bytes_per_step == 4 * (config.num_params - config.vocab_size * config.hidden_size)
