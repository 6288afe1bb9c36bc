#!/usr/bin/env bash
# One short device call (under 4 minutes on an H200): matmul and attention, ours against
# Triton 3.6 (benchmarks/gpu.py --few: fp16/bf16 square, LLM-shaped 4096x11008x4096, the
# tutorial form, attention with head dims 64/128, causal or not), then the GPU tests of the
# wgmma code generation (register operand A, causal attention, head dim 128).
#   bash benchmarks/speed_probe.sh [OUTDIR]     (from the repository root; OUTDIR default $OUT)
set -u
out="${1:-${OUT:-./h200-out}}"
mkdir -p "$out"
export PYTHONPATH=.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1 2>/dev/null
timeout 165 python -u benchmarks/gpu.py --few --only attention,matmul > "$out/gpu.txt" 2>&1
echo "[gpu.py rc=$?]"
# the per-configuration lines (printed as they run, so a timeout keeps them), then the table
grep -E "config|refused" "$out/gpu.txt" | head -80
sed -n '/^kernel /,$p' "$out/gpu.txt"
timeout 60 python -m pytest -q -m gpu -p no:cacheprovider -o addopts= -x \
    tests/backends/test_cuda_wgmma.py -k "attention or against_mma_sync" \
    > "$out/tests.txt" 2>&1
echo "[gpu tests rc=$?] $(grep -E '[0-9]+ (passed|failed)' "$out/tests.txt" | tail -1)"
grep -E "^FAILED|^ERROR|^E  " "$out/tests.txt" | head -12
