#!/usr/bin/env bash
# The engine's GPU checks in one go, on a machine with a CUDA GPU and CUDA torch (under 8 minutes):
#   1. triton, installed if missing (pip; skipped where there is no network);
#   2. the fused decode kernel's tests and the torch backend's, compiled on the GPU (no interpreter);
#   3. benchmarks/cuda_check.py: parity, decode attention on four shapes (gather, SDPA on
#      contiguous K/V, the kernel and a small sweep of its settings), the 1B model's decode step;
#   4. a short `kata engine run` of the llama-3.2-1b preset in bfloat16 (if typer and rich are there).
#
#     bash benchmarks/gpu_session.sh 2>&1 | tee gpu-session.log      # PYTHON=... to pick the python
#
# Every step runs whatever failed before it; the exit code is 1 if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
failed=()
start=$SECONDS
step() { echo; echo "== [$((SECONDS - start)) s] $*"; }

step "environment"
if ! $PY -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "no CUDA GPU visible to torch ($PY); nothing to do here" >&2
  exit 2
fi
$PY -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, '|', torch.cuda.get_device_name())"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv 2>/dev/null || true

if ! $PY -c "import triton" 2>/dev/null; then
  step "installing triton"
  timeout 180 $PY -m pip install -q --retries 1 --timeout 15 'triton>=3' \
    || echo "triton could not be installed: the kernel's tests skip and decode uses the gather path"
fi
$PY -c "import triton; print('triton', triton.__version__)" 2>/dev/null || true

step "the kernel's tests and the torch backend's, compiled on the GPU"
# --noconftest: the engine's tests need only numpy, torch and triton, not the workbook's packages
TRITON_INTERPRET=0 timeout 300 $PY -m pytest -q -p no:cacheprovider --noconftest \
  tests/engine/test_triton_attention.py tests/engine/test_torch_backend.py || failed+=("tests")

step "benchmarks/cuda_check.py"
timeout 300 $PY benchmarks/cuda_check.py || failed+=("cuda_check")

step "kata engine run: llama-3.2-1b, bfloat16, 64 requests"
if $PY -c "import typer, rich" 2>/dev/null; then
  timeout 180 $PY -m kata engine run --model llama-3.2-1b --backend torch --device cuda \
    --dtype bfloat16 --num-requests 64 --max-tokens 64 --rate 1000 || failed+=("engine run")
else
  echo "skipped: typer and rich are not installed (pip install -e .)"
fi

step "done in $((SECONDS - start)) s; failed: ${failed[*]:-nothing}"
[ ${#failed[@]} -eq 0 ]
