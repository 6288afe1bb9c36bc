#!/usr/bin/env bash
# One device call that checks and measures the CUDA backend on a GPU machine:
#   the gpu-marked tests, benchmarks/gpu.py (against Triton), the launch overhead and its
#   breakdown. Run from the repository root: bash benchmarks/h200_session.sh [OUTDIR]
# OUTDIR (default: $OUT, else ./h200-out) receives gpu_tests.txt, gpu_table.txt,
# launch_overhead.txt and launch_profile.txt; the last lines of each are also printed.
# Modules the GPU machine lacks (IPython, nbformat, filecheck) only stop collecting the CPU-only
# test files that need them, hence --continue-on-collection-errors.
set -u
out="${1:-${OUT:-./h200-out}}"
mkdir -p "$out"
export PYTHONPATH=.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null || true
timeout 420 python -m pytest -q -m gpu -p no:cacheprovider --continue-on-collection-errors \
    --timeout 120 tests > "$out/gpu_tests.txt" 2>&1
grep -E "passed|failed" "$out/gpu_tests.txt" | tail -3
grep -E "^FAILED" "$out/gpu_tests.txt" | head -20
python benchmarks/gpu.py ${GPU_ARGS:-} > "$out/gpu_table.txt" 2>&1; tail -14 "$out/gpu_table.txt"
python benchmarks/launch_overhead.py --n 20000 > "$out/launch_overhead.txt" 2>&1
tail -8 "$out/launch_overhead.txt"
python benchmarks/launch_profile.py --n 20000 > "$out/launch_profile.txt" 2>&1
tail -20 "$out/launch_profile.txt"
