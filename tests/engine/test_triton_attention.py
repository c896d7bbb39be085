"""The Triton paged decode kernel computes what the numpy reference computes.

On a machine without CUDA the kernel runs under Triton's interpreter (TRITON_INTERPRET=1, set
here before the kernel module is imported), on CPU tensors; on a GPU it runs compiled. Skips
where torch or triton is missing (pip install torch==2.13.0 triton).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kata.engine.attention import paged_decode_attention as reference

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
if importlib.util.find_spec("triton") is None:
    pytest.skip("triton is not installed (pip install triton)", allow_module_level=True)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("triton was imported before its interpreter could be switched on",
                    allow_module_level=True)
    # read when triton decorates its own functions and these kernels: before the first import
    os.environ["TRITON_INTERPRET"] = "1"
from kata.engine.backends import triton_attention as ta  # noqa: E402

LENS = [1, 37, 64, 5]  # ragged: one token, part blocks, whole blocks


def _case(group: int, block_size: int, dtype=torch.float32, kv_heads: int = 2, head_dim: int = 32,
          lens=LENS, seed: int = 0):
    """Random caches, a shuffled block table per sequence, and numpy's answer on the same values
    (rounded to `dtype` first)."""
    rng = np.random.default_rng(seed)
    nb = sum(-(-n // block_size) for n in lens) + 3
    k, v = rng.standard_normal((2, nb, block_size, kv_heads, head_dim)).astype(np.float32)
    q = rng.standard_normal((len(lens), kv_heads * group, head_dim)).astype(np.float32)
    perm, tables, at = rng.permutation(nb).tolist(), [], 0
    for n in lens:
        tables.append(perm[at:at + -(-n // block_size)])
        at += len(tables[-1])
    q_t, k_t, v_t = (torch.as_tensor(a).to(DEVICE, dtype) for a in (q, k, v))
    want = reference(*(t.float().cpu().numpy() for t in (q_t, k_t, v_t)), tables, lens)
    width = max(map(len, tables))
    table = torch.tensor([t + [0] * (width - len(t)) for t in tables], device=DEVICE)
    return (q_t, k_t, v_t, table, torch.tensor(lens, device=DEVICE)), want


@pytest.mark.parametrize("block_size", [8, 16, 32])
@pytest.mark.parametrize("group", [1, 4, 8])
def test_one_pass_and_split_match_numpy(group, block_size):
    """GQA ratios 1/4/8 and block sizes 8/16/32 over ragged contexts, in one pass and in three
    splits (the 1- and 5-token sequences leave splits empty: their lse is -inf in the merge)."""
    args, want = _case(group, block_size)
    for splits in (1, 3):
        got = ta.paged_decode_attention(*args, num_splits=splits, block_n=16)
        np.testing.assert_allclose(got.cpu().numpy(), want, atol=2e-5, err_msg=f"{splits} splits")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_formats_within_a_few_epsilons(dtype):
    """K, V and the probabilities enter the matmuls in the half format; the output is rounded to
    it: within 4 eps(dtype) of the float32 answer on the same (rounded) inputs."""
    dt = getattr(torch, dtype)
    args, want = _case(4, 16, dt, lens=[70, 9, 33])
    got = ta.paged_decode_attention(*args, num_splits=2, block_n=16)
    assert got.dtype == dt
    bound = 4 * torch.finfo(dt).eps * float(np.abs(want).max())
    assert float(np.abs(got.float().cpu().numpy() - want).max()) <= bound


def test_the_merge_is_the_one_pass_softmax():
    """Splitting only regroups the sum: any split count gives the one-pass output to float32
    rounding, including more splits than the longest context has tiles."""
    args, _ = _case(4, 16, lens=[96, 17], head_dim=16, seed=3)
    one = ta.paged_decode_attention(*args, num_splits=1, block_n=16).cpu().numpy()
    for splits in (2, 9):
        got = ta.paged_decode_attention(*args, num_splits=splits, block_n=16).cpu().numpy()
        np.testing.assert_allclose(got, one, atol=1e-6, err_msg=f"{splits} splits")


def test_head_dim_that_is_not_a_power_of_two():
    args, want = _case(2, 16, head_dim=24, lens=[20, 3])
    got = ta.paged_decode_attention(*args, num_splits=2, block_n=16)
    np.testing.assert_allclose(got.cpu().numpy(), want, atol=2e-5)


def test_choose_splits():
    assert ta.choose_splits(8, 8, 1024, 132) == 4  # 64 programs: split to fill 132 SMs twice
    assert ta.choose_splits(64, 8, 1024, 132) == 1  # 512 programs already do
    assert ta.choose_splits(1, 8, 128, 132) == 1  # too short to split
    assert ta.choose_splits(1, 1, 1 << 20, 132) == ta.MAX_SPLITS


@pytest.mark.skipif(DEVICE != "cuda", reason="the torch backend uses the kernel on CUDA only")
def test_the_torch_backend_uses_the_kernel_on_cuda():
    from kata.engine.backends import torch_backend as tb

    args, want = _case(4, 16)
    assert tb.fused_decode_attention() is ta.paged_decode_attention
    np.testing.assert_allclose(tb.paged_decode_attention(*args).cpu().numpy(), want, atol=2e-5)


def test_the_cpu_path_never_reaches_for_triton(monkeypatch):
    from kata.engine.backends import torch_backend as tb

    def refuse():
        raise AssertionError("the CPU path asked for the fused kernel")

    monkeypatch.setattr(tb, "fused_decode_attention", refuse)
    args, want = _case(2, 8, lens=[9, 2])
    got = tb.paged_decode_attention(*(a.cpu() for a in args))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)


def test_only_the_torch_backend_imports_the_kernel_and_only_inside_a_function():
    """`import kata.engine` and the torch backend's import never load triton: the kernel module
    is named in one place, a function body that runs on CUDA only."""
    engine = Path(ta.__file__).resolve().parents[1]
    found = []
    for path in sorted(engine.rglob("*.py")):
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else [])
            if any("triton" in name for name in names) and path.name != "triton_attention.py":
                found.append((path.name, "top" if id(node) in top else "function"))
    assert found == [("torch_backend.py", "function")]


# Compiled for Hopper (sm_90) through ptxas, with no GPU: the float16/bfloat16 tensor-core path
# that the interpreter (always float32 matmuls) never takes. Triton's ahead-of-time API, in a
# process of its own (the interpreter is on in this one).
AHEAD_OF_TIME = """
import sys, triton
from triton.backends.compiler import GPUTarget
from kata.engine.backends import triton_attention as ta
try:
    source = triton.compiler.ASTSource
except AttributeError:
    sys.exit(3)
for split in (False, True):
    part = "*fp32" if split else "*bf16"
    types = ["*bf16"] * 3 + ["*i64"] * 2 + [part] * 2 + ["fp32"] + ["i32"] * 12 + ["constexpr"] * 8
    sizes = dict(GROUP=4, HEAD_DIM=128, BLOCK_SIZE=16, BLOCK_G=16, BLOCK_D=128, BLOCK_N=64,
                 SPLIT=split, FP32=False)
    triton.compile(source(fn=ta._decode_kernel, signature=dict(zip(ta._decode_kernel.arg_names,
                   types)), constexprs=sizes), target=GPUTarget("cuda", 90, 32))
types = ["*fp32", "*fp32", "*bf16"] + ["i32"] * 8 + ["constexpr"] * 4
triton.compile(source(fn=ta._merge_kernel, signature=dict(zip(ta._merge_kernel.arg_names, types)),
               constexprs=dict(GROUP=4, HEAD_DIM=128, BLOCK_G=16, BLOCK_D=128)),
               target=GPUTarget("cuda", 90, 32))
"""


@pytest.mark.skipif(DEVICE == "cuda", reason="on a GPU the tests above compile the kernels")
def test_the_tensor_core_path_compiles_for_hopper_without_a_gpu():
    env = {**{k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"},
           "TRITON_DEFAULT_FP_FUSION": "1"}
    run = subprocess.run([sys.executable, "-c", AHEAD_OF_TIME], capture_output=True, text=True,
                         env=env, timeout=300, cwd=Path(ta.__file__).resolve().parents[3])
    if run.returncode == 3 or "unexpected keyword argument" in run.stderr:
        pytest.skip("this triton's ahead-of-time compile API differs")
    assert run.returncode == 0, run.stderr[-3000:]
